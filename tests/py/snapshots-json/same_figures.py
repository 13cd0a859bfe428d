# tests/snapshots-json.sh runs this.
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def figures(d):
    # A device's figures; the paths of the files naturally differ.
    return [{k: v for k, v in dev.items() if k not in ("sources", "source_path")}
            for dev in d["devices"]]
fa, fb = figures(a), figures(b)
print("same" if fa == fb and fa else "differ: %r" % [
    (k, da[k], db.get(k)) for da, db in zip(fa, fb) for k in da if da[k] != db.get(k)][:3])
