# tests/gpustat.sh runs this.
import gzip, json, sys
import oracle
g = oracle.read(sys.argv[1])["gpus"]["0"]
trace = json.load(gzip.open(sys.argv[2]))
cap = [p["totalGlobalMem"] for p in trace["deviceProperties"] if p["id"] == 0][0]
name = [p["name"] for p in trace["deviceProperties"] if p["id"] == 0][0]
print([(name, cap, g["samples"], max(g["used"]), max(g["util"]), "index")])
