# tests/inputs.sh runs this.
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1], "rt"))
print(max(e["args"]["Total Allocated"] for e in d["traceEvents"]
          if e.get("name") == "[memory]" and e["args"].get("Device Type") == 1))
