# tests/where.sh runs this.
import json, sys
want = {tuple(k): v for k, v in json.load(open(sys.argv[1]))}
dev = json.load(open(sys.argv[2]))["devices"][0]
cat = dev["live_at_peak_groups"][0]
mods = {}
for k, v in want.items():
    m = mods.setdefault(k[0], [0, 0])
    m[0] += v[0]; m[1] += v[1]
ranked = sorted(mods.items(), key=lambda kv: -kv[1][0])
shown = [[m["module"], m["bytes"], m["count"]] for m in cat["modules"]]
print(("PASS" if len(shown) == 5 else "FAIL") + "\tfive modules shown\t%s" % shown)
print(("PASS" if [s[1] for s in shown] == [v[0] for _, v in ranked[:5]] else "FAIL") +
      "\tthe five largest\t%s %s" % (shown, ranked[:5]))
rest = ranked[5:]
more = cat["modules_more"]
ok = more == {"groups": len(rest), "bytes": sum(v[0] for _, v in rest), "count": sum(v[1] for _, v in rest)}
print(("PASS" if ok else "FAIL") + "\tthe rest summed as modules_more\t%s" % more)
print(("PASS" if cat["bytes"] == sum(v[0] for v in mods.values()) else "FAIL") + "\tthe category's total covers the rest")
