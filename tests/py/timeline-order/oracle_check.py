# tests/timeline-order.sh runs this.
import json, sys
got = json.load(open(sys.argv[1] + ".dump"))
exp = json.load(open("expect.json"))[sys.argv[2]]
ok = True
for dev, e in exp.items():
    g = got["counts"].get(dev, {})
    if g.get("rows") != e["rows"] or g.get("closed") != e["closed"] or got["peaks"].get(dev) != e["peak"]:
        print("device %s: got %s, peak %s; expected %s" % (dev, g, got["peaks"].get(dev), e))
        ok = False
sys.exit(0 if ok else 1)
