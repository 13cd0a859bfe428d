# tests/breakdown.sh runs this.
import gzip, json, sys
rows = json.load(gzip.open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
cats = json.loads(sys.argv[3])
pytorch_cats = json.loads(sys.argv[4])  # what a row's index means
rows = sorted(enumerate(rows), key=lambda r: (r[1][0], r[1][1], r[0]))
total, best, at = 0, None, -1
for i, (_, r) in enumerate(rows):
    total += r[2]
    if best is None or total > best:
        best, at = total, i
want = dict.fromkeys(cats, 0)
for _, r in rows[:at + 1]:
    want[pytorch_cats[r[3]]] += r[2]
dev = report["devices"][0]
got = dev["peak_breakdown"]
print(("PASS" if dev["peak_allocated_bytes"] == best else "FAIL") +
      "\tmemory timeline: peak = the highest running total (%d)\t%r" % (best, dev["peak_allocated_bytes"]))
print(("PASS" if list(got) == cats else "FAIL") + "\tmemory timeline: nine categories in order\t%r" % list(got))
for c in cats:
    print(("PASS" if got.get(c) == want[c] else "FAIL") +
          "\tmemory timeline: %s at the peak = its running sum (%d)\tgot %r" % (c, want[c], got.get(c)))
print(("PASS" if dev.get("categories_stated") is True else "FAIL") + "\tmemory timeline: categories stated")
