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

# The ranks side by side: one bar a rank, its peak the rank's highest
# device's, the ranks 20 % or more off the median in
# the other colour, as many as ranks_summary counts.
peaks = {}
for r in rows:
    if r.get("peak_allocated_bytes") is not None:
        peaks[r["rank"]] = max(peaks.get(r["rank"], 0), r["peak_allocated_bytes"])
vals = sorted(peaks.values())
med = vals[len(vals) // 2] if len(vals) % 2 else (vals[len(vals) // 2 - 1] // 2 + vals[len(vals) // 2] // 2
                                                  + (vals[len(vals) // 2 - 1] % 2 + vals[len(vals) // 2] % 2) // 2)
off = sorted(r for r, p in peaks.items() if abs(p - med) * 1000 >= med * 200)
low = min(peaks, key=lambda r: (peaks[r], r))
result(len(peaks) == 40 and s.get("median_peak_allocated_bytes") == med
       and s.get("smallest_rank") == low and s.get("smallest_peak_allocated_bytes") == peaks[low]
       and s.get("off_median_ranks") == len(off),
       "JSON: the ranks' median, the lowest rank and the count off the median (%d)" % len(off),
       {k: s.get(k) for k in ("median_peak_allocated_bytes", "smallest_rank", "off_median_ranks")})
i = h.find('class="chart rank-peaks"')
fig = h[i:h.find("</figure>", i)] if i >= 0 else ""
bars = re.findall(r'<rect [^>]*fill="(#[0-9a-f]+)"><title>rank (\d+): ([^<]*)</title>', fig)
result(len(bars) == 40 and [int(b[1]) for b in bars] == list(range(40)),
       "HTML: one bar per rank, in rank order (40)", len(bars))
coloured = sorted(int(b[1]) for b in bars if b[0] == "#d55e00")
result(coloured == off and all(b[0] in ("#d55e00", "#0072b2") for b in bars),
       "HTML: the bars off the median are the ranks 20 % or more from it", (coloured, off))
result('<ul class="vr-legend">' in fig and ("(%d)" % (40 - len(off))) in fig
       and (not off or ("(%d)" % len(off)) in fig),
       "HTML: the chart's legend counts the ranks in and off the band")
