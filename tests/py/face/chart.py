# tests/face.sh runs this.
import json, re, sys
import xml.etree.ElementTree as ET
html = open(sys.argv[1], encoding="utf-8").read()
truth = json.load(open("truth.json"))
def say(ok, what, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + what + ("\t" + str(detail) if not ok else ""))
m = re.search(r'<figure class="chart"><svg[^>]*class="vr-chart".*?</svg>', html, re.S)
say(m, "the memory chart is the first figure.chart svg.vr-chart")
svg = m.group(0)[len('<figure class="chart">'):] if m else "<svg/>"
try:
    ET.fromstring(svg)
    say(True, "the memory chart is well-formed SVG")
except ET.ParseError as e:
    say(False, "the memory chart is well-formed SVG", e)
# The x of a time, from the chart's own tick labels ("1 ms" at x=...).
axis = re.search(r'<g class="vr-axis vr-axis-x".*?</g>', svg, re.S)
ticks = [(float(x), float(v) * {"s": 1e9, "ms": 1e6}[u]) for x, v, u in
         re.findall(r'<text x="([0-9.]+)"[^>]*>([0-9.]+) (m?s)</text>', axis.group(0) if axis else "")]
say(len(ticks) >= 2, "the x axis has at least two tick labels", ticks)
if len(ticks) < 2:
    sys.exit(0)
(x0, t0), (x1, t1) = ticks[0], ticks[-1]
x_of = lambda t_ns: x0 + (t_ns - t0) * (x1 - x0) / (t1 - t0)
def vline_x(d):
    return float(re.match(r"M([0-9.]+) ", d).group(1))
oom = re.findall(r'<g class="vr-oom" data-t-ns="(\d+)" data-requested-bytes="(\d+)"[^>]*>\s*<title>([^<]*)</title>\s*<path d="([^"]+)"', svg)
say(len(oom) == 1, "one OOM mark on the chart", oom)
want_t = (truth["oom_us"] - truth["start_us"]) * 1000
if oom:
    t_ns, req, title, d = oom[0]
    say(int(t_ns) == want_t, "the OOM mark's time is the [OutOfMemory] event's (%d ns)" % want_t, t_ns)
    say(abs(vline_x(d) - x_of(want_t)) <= 0.6,
        "the OOM line stands at the x of %.1f ms (%.1f)" % (want_t / 1e6, x_of(want_t)), d)
    say(int(req) == truth["requested"], "the mark carries the request's bytes", req)
    free_bound = truth["capacity"] - truth["oom_reserved"]
    cached = truth["oom_reserved"] - truth["oom_allocated"]
    for what, b in (("request", truth["requested"]), ("free bound (capacity less reserved)", free_bound),
                    ("cached but free", cached)):
        say("{:,} bytes".format(b) in title, "the OOM's <title> gives the %s exactly (%d)" % (what, b), title)
    say(re.search(r">OOM: asked 2(\.00)? GiB<", svg), "the OOM is labelled with its request")
steps = re.findall(r'<path class="vr-step" data-t-ns="(\d+)" d="([^"]+)"', svg)
want = [(s, (t - truth["start_us"]) * 1000) for s, t in truth["steps"]]
# The plot's edges: the x axis line.
edge = re.search(r'class="vr-axis-line" d="M([0-9.]+) [0-9.]+H([0-9.]+)"', svg)
left, right = (float(edge.group(1)), float(edge.group(2))) if edge else (0, 560)
shown = {int(t): d for t, d in steps}
for s, t in want:
    x = x_of(t)
    if x < left or x > right:
        say(t not in shown, "step %d starts before the chart's range: no line" % s, steps)
        continue
    ok = t in shown and abs(vline_x(shown[t]) - x) <= 0.6
    say(ok, "step %d's start is a line at the x of %.2f ms" % (s, t / 1e6), steps)
say(len(steps) >= 4, "at least four step lines (the steps starting inside the range)", steps)
say(re.search(r">step 3</text>", svg), "a step line is labelled with its number")
