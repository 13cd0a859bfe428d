# tests/breakdown.sh runs this.
import json, sys
d = json.load(open(sys.argv[1]))
cats = json.loads(sys.argv[3])
name = sys.argv[2]
if not d["devices"]:
    print("FAIL\t%s: has devices" % name)
for dev in d["devices"]:
    b, peak = dev.get("peak_breakdown", "absent"), dev.get("peak_allocated_bytes")
    what = "%s %s" % (name, dev["id"])
    if peak is None:
        print(("PASS" if b is None else "FAIL") + "\t%s: no peak, null breakdown\t%r" % (what, b))
        continue
    ok = isinstance(b, dict) and list(b) == cats and all(isinstance(v, int) and v >= 0 for v in b.values())
    print(("PASS" if ok else "FAIL") + "\t%s: nine categories, in order, sizes\t%r" % (what, b))
    print(("PASS" if ok and sum(b.values()) == peak else "FAIL") +
          "\t%s: they sum to peak_allocated_bytes %d\t%r" % (what, peak, b))
