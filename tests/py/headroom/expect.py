# tests/headroom.sh runs this.
import json, sys
d = json.load(open(sys.argv[1]))
dv = d["devices"][0]
x = json.load(open(sys.argv[3])) if sys.argv[3] else {}
g = json.load(open("gen.json"))
def ops(dv):
    return {o["name"]: o for o in dv.get("operators") or []}
try:
    ok = eval(sys.argv[2])
except Exception as e:
    ok = "error: %r" % e
print(ok)
