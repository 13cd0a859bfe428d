# tests/bandwidth.sh runs this.
import json, sys
d = json.load(open(sys.argv[1]))
out = {}
for b in d["bandwidth_or_capacity"]:
    if b["gpu"] is None:
        continue
    share = b["memory_full_share"]
    out[b["gpu"].split()[1]] = {
        "verdict": b["verdict"], "readings": b["readings"], "full": b["memory_full_readings"],
        "share": round(float(share), 4) if share is not None else None,
        "median": float(b["util_median_pct"]) if b["util_median_pct"] is not None else None,
        "ooms": b["ooms"]}
print(json.dumps(out, sort_keys=True))
