# tests/ranks.sh runs this.
import decimal, json, sys
from decimal import Decimal

GPU_TYPES = (1, 6)


def text_of(path):
    return open(path, "rb").read().decode("latin-1")


def member(text, key):
    """A top-level member's value, read where it stands (None if absent or
    cut off)."""
    i = text.find('"%s"' % key)
    if i < 0:
        return None
    i = text.index(":", i) + 1
    while text[i] in " \t\r\n":
        i += 1
    try:
        return json.JSONDecoder(parse_float=str).raw_decode(text, i)[0]
    except ValueError:
        return None


def events(text):
    """The complete elements of traceEvents, in order; stops at a cut."""
    dec = json.JSONDecoder(parse_float=str)
    i = text.index("[", text.index('"traceEvents"')) + 1
    n = len(text)
    while True:
        while i < n and text[i] in " \t\r\n,":
            i += 1
        if i >= n or text[i] == "]":
            return
        try:
            e, i = dec.raw_decode(text, i)
        except ValueError:
            return
        yield e


def ns(ts):
    return int((Decimal(ts) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def expect_rank(path):
    """One rank's device: its peak allocated (max Total Allocated), when
    first reached, its peak reserved, capacity, first and last event."""
    text = text_of(path)
    rank = member(text, "distributedInfo")["rank"]
    base = int(member(text, "baseTimeNanoseconds") or 0)
    props = {p["id"]: p for p in member(text, "deviceProperties") or []}
    mem = []
    for e in events(text):
        if not isinstance(e, dict) or e.get("name") != "[memory]":
            continue
        a = e.get("args") or {}
        if a.get("Device Type") in GPU_TYPES:
            mem.append((ns(e["ts"]) + base, int(a["Total Allocated"]),
                        int(a["Total Reserved"]), a["Device Id"]))
    peak = max(m[1] for m in mem)
    idx = mem[0][3]
    cap = props.get(idx, {}).get("totalGlobalMem")
    return {"rank": rank, "device": "cuda:%d" % idx,
            "peak_allocated_bytes": peak,
            "peak_allocated_ts_ns": min(m[0] for m in mem if m[1] == peak),
            "peak_reserved_bytes": max(m[2] for m in mem),
            "capacity_bytes": cap,
            "peak_allocated_share": round(peak / cap, 4) if cap else None,
            "start": min(m[0] for m in mem), "end": max(m[0] for m in mem)}


def expect_summary(rows):
    peaks = sorted(r["peak_allocated_bytes"] for r in rows)
    n = len(peaks)
    median = peaks[n // 2] if n % 2 else (peaks[n // 2 - 1] + peaks[n // 2]) // 2
    largest = max(rows, key=lambda r: (r["peak_allocated_bytes"], -r["rank"]))
    order = sorted(rows, key=lambda r: (r["peak_allocated_ts_ns"], r["rank"]))
    return {"count": n, "median_peak_allocated_bytes": median,
            "largest_peak_allocated_bytes": largest["peak_allocated_bytes"],
            "largest_rank": largest["rank"],
            "imbalance": round(largest["peak_allocated_bytes"] / median, 4),
            "first_rank": order[0]["rank"],
            "first_peak_ts_ns": order[0]["peak_allocated_ts_ns"],
            "next_rank": order[1]["rank"],
            "first_lead_ns": order[1]["peak_allocated_ts_ns"] - order[0]["peak_allocated_ts_ns"]}


import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import human_bytes


def say(desc, ok, detail=""):
    print(("PASS\t%s" % desc) if ok else ("FAIL\t%s\t%s" % (desc, detail)))


def eq(desc, got, want):
    say(desc, got == want, "got %r, want %r" % (got, want))


def cmd_check(report, md_path, html_path, *traces):
    rep = json.load(open(report))
    rows = sorted((expect_rank(p) for p in traces), key=lambda r: r["rank"])
    got = rep.get("ranks") or []
    eq("one ranks[] row per rank", len(got), len(rows))
    devs = {d["db_id"]: d for d in rep.get("devices") or []}
    for g, x in zip(got, rows):
        tag = "rank %d" % x["rank"]
        for k in ("rank", "device", "peak_allocated_bytes", "peak_allocated_ts_ns",
                  "peak_reserved_bytes", "capacity_bytes", "peak_allocated_share"):
            eq("%s: %s" % (tag, k), g.get(k), x[k])
        d = devs.get(g.get("device_db_id"), {})
        for k in ("peak_allocated_step", "peak_allocated_op", "peak_allocated_ts_ns"):
            eq("%s: %s as its device's" % (tag, k), g.get(k), d.get(k))
    want = expect_summary(rows)
    summ = rep.get("ranks_summary") or {}
    for k, v in want.items():
        eq("ranks_summary.%s" % k, summ.get(k), v)

    md = open(md_path, encoding="utf-8").read()
    heads = [l for l in md.splitlines() if l.startswith("## ")]
    # The details follow the verdict, breakdown and findings.
    heads = heads[heads.index("## Inputs"):] if "## Inputs" in heads else heads
    say("Markdown: Ranks after Inputs, before the first device",
        heads[:3] == ["## Inputs", "## Ranks", heads[2]] and heads[2].startswith("## cuda:"),
        repr(heads[:3]))
    for x in rows:
        cell = "| %d | %s | %s |" % (x["rank"], x["device"], human_bytes(x["peak_allocated_bytes"]))
        say("Markdown: row of rank %d starts %r" % (x["rank"], cell), cell in md)
    largest = "Rank %d peaked highest, at %s: %.2fx the median of %s." % (
        want["largest_rank"], human_bytes(want["largest_peak_allocated_bytes"]),
        want["imbalance"], human_bytes(want["median_peak_allocated_bytes"]))
    say("Markdown: %r" % largest, largest in md)
    first = "Rank %d peaked first, at " % want["first_rank"]
    say("Markdown: %r ... (rank %d)" % (first, want["next_rank"]),
        first in md and "before the next (rank %d)." % want["next_rank"] in md)

    html = open(html_path, encoding="utf-8").read()
    fig = html.split('<figure class="chart ranks">', 1)[-1].split("</figure>", 1)[0]
    # the charts, then their legend: one HTML list under the stack
    charts, _, legend = fig.partition('<ul class="vr-legend">')
    svgs = charts.split("<svg ")[1:]
    eq("HTML: one small chart per rank", len(svgs), len(rows))
    say("HTML: one legend (an HTML list) under the ranks' charts, naming allocated",
        legend and '<ul class="vr-legend">' not in legend and "<span>allocated</span>" in legend
        and "vr-legend" not in charts)
    t0 = min(s["start_ts_ns"] for s in rep["sources"])
    xr = "%d %d" % (min(x["start"] for x in rows) - t0, max(x["end"] for x in rows) - t0)
    for i, s in enumerate(svgs):
        say("HTML: chart %d is rank %d's" % (i, rows[i]["rank"]),
            'aria-label="rank %d ' % rows[i]["rank"] in s)
        say("HTML: chart %d spans the ranks' range, %s ns after the start" % (i, xr),
            'data-x-range="%s"' % xr in s, s[:400])

    def part(s, start, end="</g>"):
        return s.split(start, 1)[-1].split(end, 1)[0]
    say("HTML: the charts share one y top",
        len({part(s, 'data-y-top="', '"') for s in svgs}) == 1)
    say("HTML: the charts' x axes are identical",
        len({part(s, '<g class="vr-axis vr-axis-x"') for s in svgs}) == 1)
    say("HTML: the charts' y axes are identical",
        len({part(s, '<g class="vr-axis vr-axis-y"') for s in svgs}) == 1)
    low = html.lower()
    for bad in ("<script", "href=\"http", "url(", "@import"):
        say("HTML is self-contained (no %s)" % bad, bad not in low)


def cmd_variant(src, dst, rank, fraction):
    """src with distributedInfo's rank set to `rank`, cut at `fraction` of
    its bytes."""
    data = open(src, "rb").read()
    key = b'"distributedInfo": {"backend": "nccl", "rank": '
    i = data.index(key) + len(key)
    j = data.index(b",", i)
    data = data[:i] + rank.encode() + data[j:]
    open(dst, "wb").write(data[:int(len(data) * float(fraction))])


if __name__ == "__main__":
    globals()["cmd_" + sys.argv[1]](*sys.argv[2:])
