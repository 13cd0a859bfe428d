# tests/where.sh runs this.
import json, sys
want = json.load(open(sys.argv[1]))
dev = json.load(open(sys.argv[2]))["devices"][0]
def check(ok, desc, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + desc + ("" if ok else "\t" + str(detail)))
check(dev["live_at_peak_by"] == "module_and_line", "grouped by module and line", dev["live_at_peak_by"])
check(dev["locations_recorded"] is True and dev["live_at_peak_placed"] is True, "frames recorded and placed")
cats = dev["live_at_peak_groups"]
check([c["category"] for c in cats] == ["unknown"], "one category, unknown (not categorized)", cats)
got = {}
for c in cats:
    for m in c["modules"]:
        for l in m["lines"]:
            got[(m["module"], l["where"])] = [l["bytes"], l["count"]]
        check(m["lines_more"] is None, "no line summed away", m)
        check(m["bytes"] == sum(l["bytes"] for l in m["lines"]), "module %s: its lines sum to it" % m["module"])
    check(c["modules_more"] is None, "no module summed away (at most 5)", c)
w = {tuple(k): v for k, v in want}
check(got == w, "the groups and their totals are the oracle's", "got %s want %s" % (got, w))
tb = sum(v[0] for v in w.values())
check(dev["live_at_peak_grouped_bytes"] == tb, "the grouped total is what was live", (dev["live_at_peak_grouped_bytes"], tb))
check(dev["live_at_peak_grouped_count"] == sum(v[1] for v in w.values()), "the grouped count")
check(cats[0]["bytes"] == tb, "the category's total")
order = [m["bytes"] for m in cats[0]["modules"]]
check(order == sorted(order, reverse=True), "modules largest first", order)
top = dev["top_allocations"][0]
check(top["where"] == "train.py:1 in <module>" and top["module"] is None,
      "the top allocation's where: the script's frame, no module", top)
wheres = {(t["where"], t["module"]) for t in dev["top_allocations"]}
check(("model.py:30 in forward", "Net_0.Sequential_0.Linear_0") in wheres,
      "a top allocation inside nested modules", wheres)
check((None, None) in wheres, "a top allocation without a frame (autograd's thread)", wheres)
