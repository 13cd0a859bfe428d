# tests/many-report.sh runs this.
import json, re, sys

def result(ok, desc, detail=""):
    print(("PASS\t" + desc) if ok else ("FAIL\t" + desc + "\t" + str(detail)[:600]))

d = json.load(open(sys.argv[1]))
devs = {x["db_id"]: x for x in d.get("devices", []) + d.get("more_devices", [])}
rows = d.get("ranks", [])
result(len(rows) == 80 and sorted({r["rank"] for r in rows}) == list(range(40)),
       "JSON: ranks[] has a row for each of the 80 devices of the 40 ranks", len(rows))
bad = [r for r in rows if r.get("peak_allocated_ts_ns") is None or
       r["peak_allocated_ts_ns"] != devs.get(r["device_db_id"], {}).get("peak_allocated_ts_ns")]
result(rows and not bad, "JSON: each rank row peaks when its device does", bad[:2])
s = d.get("ranks_summary") or {}
result(s.get("first_rank") == 0 and s.get("next_rank") == 1 and s.get("largest_rank") == 39,
       "JSON: rank 0 peaked first, rank 1 next, rank 39 highest", s)
full = {(x["rank"], x["id"]) for x in d.get("devices", [])}
result((0, "cuda:0") not in full and (1, "cuda:0") not in full,
       "rank 0's and rank 1's device 0 are not shown in full", sorted(full))

h = open(sys.argv[2], encoding="utf-8").read()
i = h.find('class="chart ranks"')
fig = h[i:h.find("</figure>", i)] if i >= 0 else ""
charts = fig.split('<ul class="vr-legend">')[0].split("<svg")[1:]  # not the legend's swatches
titles = [re.search(r"<title>([^<]*)</title>", c).group(1) for c in charts]
result(len(charts) == 16, "HTML: 16 ranks charted", titles)
def drawn(title):
    for c in charts:
        if ("<title>" + title) in c:
            m = re.search(r'class="vr-series vr-series-0 allocated" d="([^"]*)"', c)
            return m is not None and m.group(1).count("V") >= 2
    return False
result(all(drawn("rank %d \u00b7 cuda:%d" % (r, k)) for r in (0, 1) for k in (0, 1)),
       "HTML: ranks 0 and 1 charted, each device's allocations drawn", titles)
