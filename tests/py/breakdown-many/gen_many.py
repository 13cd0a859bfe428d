# tests/breakdown-many.sh runs this.
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[3])
out = []
for e in d["traceEvents"]:
    if e.get("name") != "[memory]":
        out.append(e)
        continue
    for k in range(n):
        f = json.loads(json.dumps(e))
        f["args"]["Device Id"] = k
        if f["args"].get("Addr") is not None:
            f["args"]["Addr"] += k << 40
        out.append(f)
d["traceEvents"] = out
json.dump(d, open(sys.argv[2], "w"))
