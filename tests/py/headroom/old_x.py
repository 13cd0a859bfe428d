# tests/headroom.sh runs this.
import json, sys
doc = json.load(open(sys.argv[1]))
run = peak = 0
for e in sorted((e for e in doc["traceEvents"] if e["name"] == "[memory]"), key=lambda e: e["ts"]):
    run += e["args"]["Bytes"]
    peak = max(peak, run)
cap = doc["deviceProperties"][0]["totalGlobalMem"]
print(json.dumps({"peak": peak, "pct": "%.1f%%" % (100.0 * peak / cap)}))
