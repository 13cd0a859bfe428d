# tests/sources.sh runs this.
import json, sys
d = json.load(open(sys.argv[1]))
x = json.load(open("expect.json"))
def dev(rank):
    found = [v for v in d["devices"] if v.get("rank") == rank]
    return found[0] if len(found) == 1 else {}
def src(dv, path):
    found = [s for s in dv.get("sources") or [] if s.get("path") == path]
    return found[0] if len(found) == 1 else {}
def ops(dv):
    return {o["name"]: o for o in dv.get("operators") or []}
try:
    ok = eval(sys.argv[2])
except Exception as e:
    ok = "error: %r" % e
print(ok)
