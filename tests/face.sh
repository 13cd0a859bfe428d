#!/usr/bin/env bash
# tests/face.sh: the HTML report's face. Every figure is
# computed here, independently, from the inputs this script writes:
#   - the page's CSS: a dark scheme, a print stylesheet, no min-width that
#     would make a phone scroll sideways;
#   - a trace that runs out of memory after five steps: the chart's OOM
#     mark and step lines at the x the chart's own tick labels give for
#     the trace's times; the request and the free figures in the mark's
#     <title>;
#   - the device at the peak as one bar: its parts (categories, cached but
#     free, free) sum to the capacity, each with its exact bytes in its
#     <title>;
#   - long paths: a short name in the inputs table, the full path in
#     title= (HTML) or a last column (Markdown);
#   - op names holding "@user", "#12", URLs and an e-mail address stay
#     inert in the Markdown (no mention, issue link or autolink on GitHub
#     or GitLab) and read the same;
#   - the HTML of every real input in tests/data/realdata, in one report,
#     stays under 2 MB.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

cd "$TMP"
check "python3 runs" "$PYTHON" -c 'import json, re'

# ---- inputs -----------------------------------------------------------------
cat >gen.py <<'PYEOF'
"""A training loop of 5 steps (ProfilerStep#N) that keeps 1 GiB a step,
then an [OutOfMemory] asking for 2 GiB; truth.json holds what it means."""
import json, sys
GiB = 1 << 30
path, opname, capacity = sys.argv[1], sys.argv[2], 16 * GiB
ev, alloc, reserved = [], 8 * GiB, 12 * GiB
series = []  # (ts_us, allocated, reserved)
def mem(ts, nbytes, addr):
    global alloc, reserved
    alloc += nbytes
    reserved = max(reserved, alloc + GiB)
    series.append((ts, alloc, reserved))
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
               "pid": 1, "tid": 1, "ts": ts,
               "args": {"Total Reserved": reserved, "Total Allocated": alloc, "Bytes": nbytes,
                        "Addr": addr, "Device Id": 0, "Device Type": 1}})
steps = []
for s in range(1, 6):
    t0 = s * 1000
    steps.append((s, t0))
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s,
               "pid": 1, "tid": 1, "ts": t0, "dur": 1000, "args": {}})
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
               "ts": t0 + 100, "dur": 300, "args": {}})
    mem(t0 + 150, 2 * GiB, 1 << 41)
    mem(t0 + 350, -2 * GiB, 1 << 41)
    ev.append({"ph": "X", "cat": "cpu_op", "name": opname, "pid": 1, "tid": 1,
               "ts": t0 + 500, "dur": 300, "args": {}})
    mem(t0 + 550, GiB, (1 << 40) + s * GiB)
oom_ts = 6000 - 10
ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[OutOfMemory]",
           "pid": 1, "tid": 1, "ts": oom_ts,
           "args": {"Device Type": 1, "Device Id": 0, "Bytes": 2 * GiB,
                    "Total Allocated": alloc, "Total Reserved": reserved}})
json.dump({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
           "deviceProperties": [{"id": 0, "name": "A100", "totalGlobalMem": capacity}],
           "traceEvents": ev}, open(path, "w"))
start = min(e["ts"] for e in ev)
peak = max(series, key=lambda p: p[1])  # the first highest allocated
json.dump({"start_us": start, "oom_us": oom_ts, "steps": steps, "capacity": capacity,
           "requested": 2 * GiB, "oom_allocated": alloc, "oom_reserved": reserved,
           "peak_allocated": peak[1], "peak_reserved": peak[2]}, open("truth.json", "w"))
PYEOF
OPNAME='@octocat ping #12 see http://evil.example/x www.evil.example and a@b.example'
"$PYTHON" gen.py oom.json "$OPNAME" || fail "python3 wrote the OOM trace"
vr_run html oom.json -o oom.html
[ "$rc" -eq 0 ] && pass "OOM trace: HTML written" || fail "OOM trace: HTML written" "$(cat html.err)"
vr_run md oom.json -o oom.md
[ "$rc" -eq 0 ] && pass "OOM trace: Markdown written" || fail "OOM trace: Markdown written" "$(cat md.err)"

# ---- the page's CSS ---------------------------------------------------------
cat >css.py <<'PYEOF'
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
css = "".join(re.findall(r"<style>(.*?)</style>", html, re.S))
def say(ok, what, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + what + ("\t" + detail if detail and not ok else ""))
say(re.search(r"@media[^{]*prefers-color-scheme:\s*dark", css), "CSS: a prefers-color-scheme: dark block")
say(re.search(r"@media\s+print\s*\{", css), "CSS: a print stylesheet")
# A min-width as a property (not a media query's condition) keeps content
# wider than a phone.
props = re.findall(r"[{;]\s*min-width\s*:\s*([^;}]+)", css)
say(not props, "CSS: no min-width property that forces sideways scrolling", repr(props))
say(re.search(r"table\s*\{[^}]*overflow-x:\s*auto", css), "CSS: tables scroll inside themselves")
# Every chart's SVG fills its figure and scales (a viewBox, width 100%).
svgs = re.findall(r"<svg [^>]*>", html)
say(svgs and all('viewBox="' in s and 'width="100%"' in s for s in svgs),
    "SVG: every chart has a viewBox and width 100%%", repr([s[:80] for s in svgs]))
say(re.search(r'<meta name="viewport" content="width=device-width', html), "HTML: a viewport meta")
say(not re.search(r'(src|href)="(https?:)?//', html), "HTML: no network request (src/href)")
PYEOF
"$PYTHON" css.py oom.html >css.tap 2>&1 || true
tap_lines css.tap

# ---- the chart: OOM mark and step lines at the right x ---------------------
cat >chart.py <<'PYEOF'
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
PYEOF
"$PYTHON" chart.py oom.html >chart.tap 2>&1 || true
tap_lines chart.tap

# ---- the device at the peak, as one bar -----------------------------------
cat >bar.py <<'PYEOF'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
truth = json.load(open("truth.json"))
def say(ok, what, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + what + ("\t" + str(detail) if not ok else ""))
m = re.search(r'<svg[^>]*class="vr-chart vr-composition".*?</svg>', html, re.S)
say(m, "the composition bar is drawn")
svg = m.group(0) if m else ""
parts = re.findall(r'<rect class="vr-part ([a-z_ -]+)" data-bytes="(\d+)"[^>]*><title>([^<]*)</title>', svg)
total = sum(int(b) for _, b, _ in parts)
say(total == truth["capacity"], "the bar's parts sum to the capacity (%d)" % truth["capacity"], (total, parts))
cats = sum(int(b) for c, b, _ in parts if c.startswith("vr-cat-"))
say(cats == truth["peak_allocated"], "its categories sum to the allocated peak (%d)" % truth["peak_allocated"], cats)
# With nvidia-smi's used memory at the peak (argv[2]), the part outside
# PyTorch is used less reserved and free is the capacity less used.
used = int(sys.argv[2]) if len(sys.argv) > 2 else truth["peak_reserved"]
want = {"vr-dev-cached": truth["peak_reserved"] - truth["peak_allocated"],
        "vr-dev-free": truth["capacity"] - used}
if used > truth["peak_reserved"]:
    want["vr-dev-outside"] = used - truth["peak_reserved"]
else:
    say(not [p for p in parts if p[0] == "vr-dev-outside"], "no part outside PyTorch without nvidia-smi")
for c, b in want.items():
    got = [p for p in parts if p[0] == c]
    say(len(got) == 1 and int(got[0][1]) == b, "%s is %d bytes" % (c, b), got)
for c, b, title in parts:
    say("{:,} B".format(int(b)) in title, "%s's <title> has its exact bytes" % c, title)
say(all(re.search(r'<g class="vr-legend vr-dev-%s" data-bytes="%d"' % (c[7:], b), svg) for c, b in want.items()),
    "the legend names %s with their bytes" % ", ".join(c[7:] for c in want))
PYEOF
"$PYTHON" bar.py oom.html >bar.tap 2>&1 || true
tap_lines bar.tap

# nvidia-smi beside the trace (matched to cuda:0 by index, on the trace's
# clock: base 1700000000 s is 22:13:20 UTC): its reading in force at the
# peak, 15.5 GiB used against 15 GiB reserved, puts 0.5 GiB outside
# PyTorch and leaves 0.5 GiB free.
cat >smi.csv <<'EOF'
timestamp, index, pci.bus_id, memory.used [MiB], memory.total [MiB]
2023/11/14 22:13:19.500, 0, 00000000:18:00.0, 15872 MiB, 16384 MiB
2023/11/14 22:13:21.500, 0, 00000000:18:00.0, 15872 MiB, 16384 MiB
EOF
vr_run smi oom.json smi.csv -o smi.html -q
"$PYTHON" bar.py smi.html $((15872 << 20)) >smi.tap 2>&1 || true
sed 's/\t/\tnvidia-smi: /' smi.tap >smi2.tap
tap_lines smi2.tap

# ---- long paths ---------------------------------------------------------
LONG=runs/2026-11-30/a-very-long-experiment-directory-name-that-goes-on/and-on
mkdir -p "$LONG"
cp oom.json "$LONG/rank0-training-run-with-a-long-descriptive-name.pt.trace.json"
vr_run longh "$LONG" -o long.html
vr_run longm "$LONG" -o long.md
cat >long.py <<'PYEOF'
import html as H, re, sys
full = sys.argv[1]
page = open("long.html", encoding="utf-8").read()
md = open("long.md", encoding="utf-8").read()
def say(ok, what, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + what + ("\t" + str(detail) if not ok else ""))
inputs = page[page.find("<h2>Inputs</h2>"):]
inputs = inputs[:inputs.find("</table>")]
cell = re.search(r'<td><span title="([^"]*)">([^<]*)</span></td>', inputs)
say(cell and H.unescape(cell.group(1)) == full, "HTML: the full path is the file cell's title=", cell and cell.groups())
short = H.unescape(cell.group(2)) if cell else ""
say(0 < len(short) <= 40 and short.endswith(".json") and "/" not in short,
    "HTML: the cell shows a short name (<= 40 characters, the extension kept)", short)
say(full not in re.sub(r'title="[^"]*"', "", inputs), "HTML: the full path is not in the table's text")
rows = [l for l in md.splitlines() if l.startswith("| " + short + " |")]
say(len(rows) == 1 and rows[0].split(" | ")[0] == "| " + short and rows[0].rstrip().endswith(full.replace("_", "\\_") + " |"),
    "Markdown: the short name first, the full path in the last column", rows)
say(re.search(r"^\| File \| Format \| Records \| Size \| Notes \| Full path \|$", md, re.M),
    "Markdown: the Notes come before the full path")
PYEOF
"$PYTHON" long.py "$LONG/rank0-training-run-with-a-long-descriptive-name.pt.trace.json" >long.tap 2>&1 || true
tap_lines long.tap

# ---- op names stay inert in the Markdown ----------------------------------
cat >inert.py <<'PYEOF'
import re, sys
md = open(sys.argv[1], encoding="utf-8").read()
name = sys.argv[2]
def say(ok, what, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + what + ("\t" + str(detail) if not ok else ""))
# GitHub's and GitLab's patterns, on the rendered text (a backslash escape
# is gone by then): a mention, an issue reference, the autolinks.
patterns = {"an @mention": r"(?<![\w`])@[A-Za-z0-9]", "an issue reference": r"#\d",
            "a URL autolink": r"(?i)\b(https?|ftp)://", "a www. autolink": r"(?i)\bwww\.",
            "an e-mail autolink": r"[\w.+-]@[\w-]+\.[\w]"}
rendered = md.replace("\\", "")
for what, p in patterns.items():
    hits = re.findall(p, rendered)
    say(not hits, "Markdown: no %s from the op name" % what, hits)
visible = rendered.replace("\u2060", "")
say(md.count("octocat") >= 1 and name in visible, "Markdown: the op name reads the same (the joiners are invisible)")
PYEOF
"$PYTHON" inert.py oom.md "$OPNAME" >inert.tap 2>&1 || true
tap_lines inert.tap
grep -q 'evil\.example' oom.html && ! grep -q '<a ' oom.html && pass "HTML: the op name is shown, no link made" ||
    fail "HTML: the op name is shown, no link made" "$(grep -o '<a [^>]*>' oom.html | head -3)"

# ---- size on the real inputs -----------------------------------------------
vr_run real "$VR_SRCDIR/tests/data/realdata" -o real.html -q
size=$(wc -c <real.html | tr -d ' ')
[ "$rc" -eq 0 ] && [ "$size" -gt 100000 ] && [ "$size" -lt 2000000 ] &&
    pass "every real input in one HTML report: $size bytes, under 2 MB" ||
    fail "every real input in one HTML report: under 2 MB" "exit $rc, $size bytes" "$(head -c 300 real.err)"
"$PYTHON" css.py real.html >real.tap 2>&1 || true
grep -F 'viewBox' real.tap >real-svg.tap || true
tap_lines real-svg.tap

finish
