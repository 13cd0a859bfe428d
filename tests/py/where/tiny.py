# tests/where.sh runs this.
import json, sys
want = {k[0]: v for k, v in json.load(open(sys.argv[1]))}
dev = json.load(open(sys.argv[2]))["devices"][0]
def check(ok, desc, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + desc + ("" if ok else "\t" + str(detail)))
check(dev["live_at_peak_by"] == "operator", "no frames: grouped by operator", dev["live_at_peak_by"])
check(dev["locations_recorded"] is False, "no frames recorded")
got = {o["operator"]: [o["bytes"], o["count"]] for c in dev["live_at_peak_groups"] for o in c["operators"]}
check(got == want, "the operator groups are the oracle's", "got %s want %s" % (got, want))
check(all(t["where"] is None and t["module"] is None for t in dev["top_allocations"]),
      "top allocations have no where")
