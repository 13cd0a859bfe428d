# tests/memprints-chart.sh runs this.
import json, re, subprocess, sys
import xml.etree.ElementTree as ET
from decimal import Decimal, ROUND_HALF_UP

vr = sys.argv[1]
GiB = 1 << 30
BASE_S = 1700000000  # 2023-11-14 22:13:20 UTC

def result(ok, desc, detail=""):
    print(("PASS\t" + desc) if ok else ("FAIL\t" + desc + "\t" + str(detail).replace("\n", " | ")[:1500]))

def run(*args):
    p = subprocess.run([vr] + list(args), capture_output=True)
    return p.returncode, p.stderr.decode("utf-8", "replace")

def mib(n):  # "8100 MB" as the job printed it: 1024-based
    return int((Decimal(n) * (1 << 20)).to_integral_value(rounding=ROUND_HALF_UP))

def trace(path, keep):
    """5 steps from 1000 us; each takes 1 GiB and frees it, or keeps it."""
    ev, alloc = [], 8 * GiB
    for s in range(1, 6):
        t0 = s * 1000
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s,
                   "pid": 1, "tid": 1, "ts": t0, "dur": 1000, "args": {}})
        for k, b in ((100, GiB), (600, 0 if keep else -GiB)):
            if not b:
                continue
            alloc += b
            ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                       "pid": 1, "tid": 1, "ts": t0 + k,
                       "args": {"Total Reserved": 16 * GiB, "Total Allocated": alloc, "Bytes": b,
                                "Addr": (1 << 41) + s * GiB * 2 + k, "Device Id": 0, "Device Type": 1}})
    json.dump({"schemaVersion": 1, "baseTimeNanoseconds": BASE_S * 10**9,
               "deviceProperties": [{"id": 0, "name": "A100", "totalGlobalMem": 24 * GiB}],
               "traceEvents": ev}, open(path, "w"))
    return min(e["ts"] for e in ev)

# The prints: (ms after BASE_S, device, allocated MB, reserved MB or None)
PRINTS = [(2, 0, 8100, 11000), (3, 0, 8200, 11000), (4, 0, 8300, None), (5, 0, 8400, 11000),
          (5, 1, 4000, 5000)]
with open("job.log", "w") as f:
    for ms, dev, a, r in PRINTS:
        f.write("2023-11-14 22:13:20,%03d INFO cuda:%d allocated: %d MB%s\n"
                % (ms, dev, a, ", reserved: %d MB" % r if r is not None else ""))

start_us = trace("flat.json", keep=False)
rc, err = run("flat.json", "job.log", "-o", "flat.html")
html = open("flat.html", encoding="utf-8").read() if rc == 0 else ""
m = re.search(r'<figure class="chart"><svg[^>]*class="vr-chart".*?</svg>', html, re.S)
result(m, "the device's memory chart is there", err)
svg = m.group(0)[len('<figure class="chart">'):] if m else "<svg/>"
try:
    ET.fromstring(svg)
    result(True, "the chart with prints is well-formed SVG")
except ET.ParseError as e:
    result(False, "the chart with prints is well-formed SVG", e)

axis = re.search(r'<g class="vr-axis vr-axis-x".*?</g>', svg, re.S)
ticks = [(float(x), float(v) * {"s": 1e9, "ms": 1e6}[u]) for x, v, u in
         re.findall(r'<text x="([0-9.]+)"[^>]*>([0-9.]+) (m?s)</text>', axis.group(0) if axis else "")]
result(len(ticks) >= 2, "the x axis has at least two tick labels", ticks)
(x0, t0), (x1, t1) = (ticks[0], ticks[-1]) if len(ticks) >= 2 else ((0, 0), (1, 1))
x_of = lambda t_ns: x0 + (t_ns - t0) * (x1 - x0) / (t1 - t0)

marks = re.findall(r'<g class="vr-print" data-t-ns="(\d+)" data-allocated-bytes="(\d+)"'
                   r'( data-reserved-bytes="(\d+)")?><title>([^<]*)</title>(.*?)</g>', svg)
mine = [p for p in PRINTS if p[1] == 0]
result(len(marks) == len(mine), "one marker per print of cuda:0 (%d), none for cuda:1" % len(mine),
       [m_[:2] for m_ in marks])
for (ms, dev, a, r), mk in zip(mine, marks):
    t_ns, alloc, _, res, title, body = mk
    want_t = ms * 10**6 - start_us * 1000  # from the report's start, the trace's first event
    result(int(t_ns) == want_t, "print at %d ms: its time is the line's stamp (%d ns)" % (ms, want_t), t_ns)
    cx = re.search(r'<circle class="vr-print-allocated" cx="([0-9.]+)" cy="([0-9.]+)"', body)
    result(cx and abs(float(cx.group(1)) - x_of(want_t)) <= 0.6,
           "print at %d ms: the dot stands at x %.1f" % (ms, x_of(want_t)), body)
    result(int(alloc) == mib(a) and "{:,} bytes".format(mib(a)) in title,
           "print at %d ms: allocated %d bytes exactly (data- and <title>)" % (ms, mib(a)), (alloc, title))
    if r is None:
        result(not res and "vr-print-reserved" not in body,
               "print at %d ms: no reserved printed, no square" % ms, body)
    else:
        result(res and int(res) == mib(r) and "{:,} bytes".format(mib(r)) in title and
               "vr-print-reserved" in body, "print at %d ms: reserved %d bytes, a square" % (ms, mib(r)),
               (res, title))
ys = [float(re.search(r'cy="([0-9.]+)"', mk[5]).group(1)) for mk in marks]
result(all(a > b for a, b in zip(ys, ys[1:])), "a larger print stands higher", ys)
# The legend: an HTML list under the chart, in its figure.
legend = re.search(r'<figure class="chart"><svg.*?</svg>\s*<ul class="vr-legend">(.*?)</ul></figure>', html, re.S)
result(legend and "<span>printed by the job</span>" in legend.group(1), "the legend names the prints",
       legend.group(0)[-500:] if legend else html[:500])

# the prints no device chart shows (cuda:1 has no timeline): a small chart
# of their own, one marker; cuda:0's prints are not drawn twice
own = re.findall(r'<figure class="chart prints">(.*?)</figure>', html, re.S)
result(len(own) == 1 and len(re.findall(r'<g class="vr-print" ', own[0])) == 1 and
       'data-allocated-bytes="%d"' % mib(4000) in own[0],
       "cuda:1's print (no timeline): its own small chart, one marker", [o[:300] for o in own])

# a log alone (no device timeline): its prints' own chart, one marker each
with open("alone.log", "w") as f:
    for s in range(1, 7):
        f.write("2026-11-30 10:%02d:00,000 INFO allocated: %d MB, reserved: 12000 MB\n" % (s, 8000 + 10 * s))
rc, err = run("alone.log", "-o", "alone.html")
html = open("alone.html", encoding="utf-8").read() if rc == 0 else ""
own = re.findall(r'<figure class="chart prints">(.*?)</figure>', html, re.S)
ts = [int(t) for t in re.findall(r'<g class="vr-print" data-t-ns="(\d+)"', own[0])] if own else []
result(len(own) == 1 and ts == [k * 60 * 10**9 for k in range(6)] and "<span>printed by the job</span>" in own[0],
       "a log alone: a chart of its 6 prints, a minute apart, 'printed by the job'", [o[:300] for o in own] + [err])
try:
    ET.fromstring(re.search(r"<svg.*?</svg>", own[0], re.S).group(0) if own else "")
    result(True, "the prints' own chart is well-formed SVG")
except ET.ParseError as e:
    result(False, "the prints' own chart is well-formed SVG", e)

# no OOM, rising prints on cuda:0 (8100 .. 8400 MB, 4 prints): the log's leak
rc, err = run("flat.json", "job.log", "-o", "flat.json.out.json")
d = json.load(open("flat.json.out.json", encoding="utf-8")) if rc == 0 else {}
leaks = [f for f in d.get("findings", []) if f.get("kind") == "leak"]
vals = [mib(a) for ms, dev, a, r in mine]
want = (vals[-1] - vals[0]) // (len(vals) - 1)
ev = leaks[0].get("evidence", {}) if leaks else {}
result(len(leaks) == 1 and leaks[0].get("severity") == "warning" and
       ev.get("leak_per_step_bytes") == {"value": want, "source": "log"} and
       ev.get("leak_steps") == {"value": len(vals) - 1, "source": "log"} and
       leaks[0].get("device") == "cuda:0",
       "rising prints, no OOM: one leak warning on cuda:0, %d bytes a print, from the log" % want,
       json.dumps(leaks)[:800] + err)

# the timeline's own leak beside the same prints: one finding, the timeline's
trace("keep.json", keep=True)
rc, err = run("keep.json", "job.log", "-o", "keep.out.json")
d = json.load(open("keep.out.json", encoding="utf-8")) if rc == 0 else {}
leaks = [f for f in d.get("findings", []) if f.get("kind") == "leak"]
src = [f.get("evidence", {}).get("leak_per_step_bytes", {}).get("source") for f in leaks]
result(len(leaks) == 1 and src == ["timeline"] and
       leaks[0].get("evidence", {}).get("leak_per_step_bytes", {}).get("value") == GiB,
       "a leak the timeline finds (1 GiB a step) is not found twice from the prints", json.dumps(leaks)[:800] + err)
