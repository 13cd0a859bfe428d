# tests/breakdown.sh runs this.
import json, sqlite3, sys
trace = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))
db = sqlite3.connect(sys.argv[3])
cats = json.loads(sys.argv[4])
live, best, best_live = {}, None, None
for e in sorted(trace["traceEvents"], key=lambda e: e["ts"]):
    a = e["args"]
    if a["Bytes"] > 0:
        live[a["Addr"]] = a["Bytes"]
    else:
        live.pop(a["Addr"], None)
    if best is None or a["Total Allocated"] > best:
        best, best_live = a["Total Allocated"], dict(live)
# Each live allocation's category as the analysis gave it (NULL: unknown).
cat_of = {addr: c or "unknown" for addr, c in db.execute("SELECT addr, category FROM allocation")}
want = dict.fromkeys(cats, 0)
for addr, b in best_live.items():
    want[cat_of.get(addr, "unknown")] += b
want["unknown"] += best - sum(best_live.values())
dev = d["devices"][0]
got = dev["peak_breakdown"]
print(("PASS" if dev["peak_allocated_bytes"] == best else "FAIL") + "\tsynthetic: the peak\t%r" % dev["peak_allocated_bytes"])
print(("PASS" if got == want and list(got) == cats else "FAIL") +
      "\tsynthetic: live at the peak by category, the rest unknown\tgot %r want %r" % (got, want))
print(("PASS" if best_live and set(best_live) == {0xb00, 0xe00, 0xf00} else "FAIL") +
      "\tsynthetic: the oracle sees three allocations live at the peak\t%r" % best_live)
counts = dict(db.execute("SELECT category, count FROM peak_category"))
print(("PASS" if sum(counts.values()) == len(best_live) else "FAIL") +
      "\tsynthetic: peak_category counts the live allocations\t%r" % counts)
samples = db.execute("SELECT count(DISTINCT ts_ns), count(*) FROM category_sample").fetchone()
print(("PASS" if 0 < samples[0] <= 400 and samples[1] == 9 * samples[0] else "FAIL") +
      "\tsynthetic: category samples, nine rows each, at most 400\t%r" % (samples,))
peak_sample = dict(db.execute("SELECT category, bytes FROM category_sample WHERE ts_ns = "
                              "(SELECT peak_allocated_ts_ns FROM device_summary)"))
print(("PASS" if peak_sample == want else "FAIL") +
      "\tsynthetic: the sample at the peak is the breakdown\t%r" % peak_sample)
