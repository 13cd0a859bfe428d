# tests/segmap.sh runs this.
import json, sys
name, want, page, rep = sys.argv[1], *(json.load(open(f)) for f in sys.argv[2:5])
def say(desc, got, exp):
    print(("PASS\t%s: %s" % (name, desc)) if got == exp else
          ("FAIL\t%s: %s\tgot %r, want %r" % (name, desc, got, exp)))
snap = [d for d in rep["devices"] if "final_reserved_bytes" in d]
say("one segment map per device with a snapshot", len(page["maps"]), len(snap))
for (dev, w), m in zip(sorted(want.items()), page["maps"]):
    say("cuda:%s: the map counts every segment" % dev, m["segments"], w["segments"])
    say("cuda:%s: one row per segment, largest first (bytes per state)" % dev, m["rows"], w["rows"])
    say("cuda:%s: the rows' colours add up to their segments" % dev,
        all(r["allocated"] + r["pending"] + r["free"] + r["other"] == r["bytes"] for r in m["rows"]),
        True)
    say("cuda:%s: the last row sums the other segments" % dev, m["rest"], w["rest"])
say("one <details> per top site",
    page["details"], sum(len(d["top_sites"]) for d in rep["devices"]))
pre = [w["pre_existing"] for _, w in sorted(want.items()) if w["pre_existing"]]
say("the chart marks the memory live before the record", page["baselines"], pre)
say("no script, iframe or image in the page",
    [t for t in page["tags"] if t in ("script", "iframe", "img", "object", "embed")], [])
