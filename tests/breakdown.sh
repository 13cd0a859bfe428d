#!/usr/bin/env bash
# tests/breakdown.sh: where the memory went. The peak's eight
# categories (devices[].peak_breakdown) are checked against figures this
# script computes on its own from the inputs (python3's json, gzip and
# sqlite3 modules):
#   - the real export_memory_timeline file: each category at the peak is
#     the running sum of its rows, in PyTorch's order, up to the peak of
#     the total;
#   - every real Kineto trace: eight keys, in order, summing exactly to
#     the device's peak_allocated_bytes;
#   - a synthetic trace whose allocations live at the peak are known, the
#     rest of the peak being memory allocated before the trace (unknown);
#   - the HTML: both charts, each category's exact bytes in the <title>s
#     and the legend, well-formed SVG.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

K=$VR_SRCDIR/tests/data/realdata/kineto
MT=$K/hta-memory-timeline.raw.json.gz
CATS='["parameter", "optimizer_state", "input", "temporary", "activation", "gradient", "autograd_detail", "unknown"]'
cd "$TMP"

check "python3 runs, with json, gzip and sqlite3" "$PYTHON" -c 'import json, gzip, sqlite3'

# (a) The memory timeline: PyTorch sorts its timeline by (time, action)
# with the pre-existing tensors (t = -1) first; the raw export writes the
# rows in that order, an increment of version as two rows (minus, plus).
cat >mt.py <<'PYEOF'
import gzip, json, sys
rows = json.load(gzip.open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
cats = json.loads(sys.argv[3])
rows = sorted(enumerate(rows), key=lambda r: (r[1][0], r[1][1], r[0]))
total, best, at = 0, None, -1
for i, (_, r) in enumerate(rows):
    total += r[2]
    if best is None or total > best:
        best, at = total, i
want = dict.fromkeys(cats, 0)
for _, r in rows[:at + 1]:
    want[cats[r[3]]] += r[2]
dev = report["devices"][0]
got = dev["peak_breakdown"]
print(("PASS" if dev["peak_allocated_bytes"] == best else "FAIL") +
      "\tmemory timeline: peak = the highest running total (%d)\t%r" % (best, dev["peak_allocated_bytes"]))
print(("PASS" if list(got) == cats else "FAIL") + "\tmemory timeline: eight categories in order\t%r" % list(got))
for c in cats:
    print(("PASS" if got.get(c) == want[c] else "FAIL") +
          "\tmemory timeline: %s at the peak = its running sum (%d)\tgot %r" % (c, want[c], got.get(c)))
print(("PASS" if dev.get("categories_stated") is True else "FAIL") + "\tmemory timeline: categories stated")
PYEOF
vr_run mt "$MT" --format json -o mt.json
[ "$rc" -eq 0 ] && pass "memory timeline: report written" || fail "memory timeline: report written" "$(cat mt.err)"
"$PYTHON" mt.py "$MT" mt.json "$CATS" >mt.tap 2>&1 || true
tap_lines mt.tap

# (b) Every real trace: the breakdown is there and exact.
cat >sums.py <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
cats = json.loads(sys.argv[3])
name = sys.argv[2]
if not d["devices"]:
    print("FAIL\t%s: has devices" % name)
for dev in d["devices"]:
    b, peak = dev.get("peak_breakdown", "absent"), dev.get("peak_allocated_bytes")
    what = "%s %s" % (name, dev["id"])
    if peak is None:
        print(("PASS" if b is None else "FAIL") + "\t%s: no peak, null breakdown\t%r" % (what, b))
        continue
    ok = isinstance(b, dict) and list(b) == cats and all(isinstance(v, int) and v >= 0 for v in b.values())
    print(("PASS" if ok else "FAIL") + "\t%s: eight categories, in order, sizes\t%r" % (what, b))
    print(("PASS" if ok and sum(b.values()) == peak else "FAIL") +
          "\t%s: they sum to peak_allocated_bytes %d\t%r" % (what, peak, b))
PYEOF
for f in "$K"/*; do
    n=$(basename "$f")
    vr_run one "$f" --format json -o "$n.json"
    [ "$rc" -eq 0 ] || { fail "$n: report written" "$(cat one.err)"; continue; }
    "$PYTHON" sums.py "$n.json" "$n" "$CATS" >sums.tap 2>&1 || true
    tap_lines sums.tap
done

# (c) A synthetic trace: 1 MB allocated before it began; allocations and
# frees, two of them at the peak's timestamp (the first makes the peak).
cat >mk.py <<'PYEOF'
import json
pre = 1000000
ops = [(100, 0xa00, 4096), (110, 0xb00, 8192), (120, 0x999, -2048), (130, 0xd00, 65536),
       (140, 0xa00, -4096), (150, 0xe00, 1024), (150, 0xd00, -65536), (160, 0xf00, 131072),
       (160, 0xb00, -8192), (170, 0xf00, -131072)]
ev, total = [], pre
for ts, addr, b in ops:
    total += b
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10,
               "tid": 10, "ts": ts,
               "args": {"Total Reserved": 8388608, "Total Allocated": total, "Bytes": b,
                        "Addr": addr, "Device Id": 0, "Device Type": 1}})
json.dump({"schemaVersion": 1, "traceEvents": ev}, open("synthetic.json", "w"))
PYEOF
cat >synth.py <<'PYEOF'
import json, sqlite3, sys
trace = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))
db = sqlite3.connect(sys.argv[3])
cats = json.loads(sys.argv[4])
live, best, best_live = {}, None, None
for e in sorted(trace["traceEvents"], key=lambda e: e["ts"]):
    a = e["args"]
    if a["Bytes"] > 0:
        live[a["Addr"]] = a["Bytes"]
    else:
        live.pop(a["Addr"], None)
    if best is None or a["Total Allocated"] > best:
        best, best_live = a["Total Allocated"], dict(live)
# Each live allocation's category as the analysis gave it (NULL: unknown).
cat_of = {addr: c or "unknown" for addr, c in db.execute("SELECT addr, category FROM allocation")}
want = dict.fromkeys(cats, 0)
for addr, b in best_live.items():
    want[cat_of.get(addr, "unknown")] += b
want["unknown"] += best - sum(best_live.values())
dev = d["devices"][0]
got = dev["peak_breakdown"]
print(("PASS" if dev["peak_allocated_bytes"] == best else "FAIL") + "\tsynthetic: the peak\t%r" % dev["peak_allocated_bytes"])
print(("PASS" if got == want and list(got) == cats else "FAIL") +
      "\tsynthetic: live at the peak by category, the rest unknown\tgot %r want %r" % (got, want))
print(("PASS" if best_live and set(best_live) == {0xb00, 0xe00, 0xf00} else "FAIL") +
      "\tsynthetic: the oracle sees three allocations live at the peak\t%r" % best_live)
counts = dict(db.execute("SELECT category, count FROM peak_category"))
print(("PASS" if sum(counts.values()) == len(best_live) else "FAIL") +
      "\tsynthetic: peak_category counts the live allocations\t%r" % counts)
samples = db.execute("SELECT count(DISTINCT ts_ns), count(*) FROM category_sample").fetchone()
print(("PASS" if 0 < samples[0] <= 400 and samples[1] == 8 * samples[0] else "FAIL") +
      "\tsynthetic: category samples, eight rows each, at most 400\t%r" % (samples,))
peak_sample = dict(db.execute("SELECT category, bytes FROM category_sample WHERE ts_ns = "
                              "(SELECT peak_allocated_ts_ns FROM device_summary)"))
print(("PASS" if peak_sample == want else "FAIL") +
      "\tsynthetic: the sample at the peak is the breakdown\t%r" % peak_sample)
PYEOF
"$PYTHON" mk.py || fail "python3 wrote the synthetic trace"
vr_run syn synthetic.json --db syn.db --format json -o syn.json
[ "$rc" -eq 0 ] && pass "synthetic: report written" || fail "synthetic: report written" "$(cat syn.err)"
"$PYTHON" synth.py synthetic.json syn.json syn.db "$CATS" >syn.tap 2>&1 || true
tap_lines syn.tap

# (c') The allocator's total below what the trace holds live (an event
# lost): the breakdown still sums exactly to the peak.
cat >over.py <<'PYEOF'
import json
ev = []
for ts, addr, b, total in [(100, 0xa00, 4096, 1024), (110, 0xb00, 8192, 5120), (120, 0xa00, -4096, 1024)]:
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10,
               "tid": 10, "ts": ts,
               "args": {"Total Reserved": 8388608, "Total Allocated": total, "Bytes": b,
                        "Addr": addr, "Device Id": 0, "Device Type": 1}})
json.dump({"schemaVersion": 1, "traceEvents": ev}, open("over.json", "w"))
PYEOF
"$PYTHON" over.py || fail "python3 wrote the over-full trace"
vr_run over over.json --format json -o over.report.json
got=$(json_get over.report.json 'sum(d["devices"][0]["peak_breakdown"].values()) == d["devices"][0]["peak_allocated_bytes"] == 5120')
[ "$got" = True ] && pass "live above the allocator's total: the breakdown sums to the peak" ||
    fail "live above the allocator's total: the breakdown sums to the peak" "$got"

# (d) The HTML of the memory timeline: both charts, exact figures.
cat >html.py <<'PYEOF'
import json, re, sys
import xml.etree.ElementTree as ET
html = open(sys.argv[1], encoding="utf-8").read()
got = json.load(open(sys.argv[2]))["devices"][0]["peak_breakdown"]
for cls in ("vr-categories", "vr-composition"):
    m = re.search(r'<svg[^>]*class="vr-chart %s".*?</svg>' % cls, html, re.S)
    if not m:
        print("FAIL\tHTML: the %s chart" % cls)
        continue
    svg = m.group(0)
    try:
        ET.fromstring(svg)
        print("PASS\tHTML: the %s chart is well-formed SVG" % cls)
    except ET.ParseError as e:
        print("FAIL\tHTML: the %s chart is well-formed SVG\t%s" % (cls, e))
    titles = re.findall(r"<title>([^<]*)</title>", svg)
    legend = re.findall(r'<g class="vr-legend vr-cat-([a-z_]+)" data-bytes="(\d+)">.*?<text[^>]*>([^<]*)</text>', svg)
    for c, b in got.items():
        exact = "{:,} B".format(b)
        has_title = any(t.startswith(c + ":") and exact in t for t in titles)
        if b > 0:
            print(("PASS" if has_title else "FAIL") + "\tHTML %s: %s titled with %s\t%r" % (cls, c, exact, titles))
        item = [x for x in legend if x[0] == c]
        if cls == "vr-composition" and b == 0:
            # the bar's legend names the categories that hold bytes; the
            # table under it lists all eight
            print(("PASS" if not item else "FAIL") + "\tHTML %s: no legend for empty %s\t%r" % (cls, c, item))
            continue
        ok = len(item) == 1 and int(item[0][1]) == b and exact in item[0][2]
        print(("PASS" if ok else "FAIL") + "\tHTML %s: legend says %s %s\t%r" % (cls, c, exact, item))
# The categories over time share the memory chart's time axis: the same
# tick labels at the same x.
mem = re.search(r'<g class="vr-axis vr-axis-x".*?</g>', html, re.S)
cat = re.search(r'<svg[^>]*class="vr-chart vr-categories".*?</svg>', html, re.S)
ticks = lambda text: [(round(float(x), 1), label) for x, label in
                      re.findall(r'<text[^>]* x="([0-9.]+)"[^>]*>([0-9.]+ m?s)</text>', text)]
a, b = ticks(mem.group(0)) if mem else [], ticks(cat.group(0)) if cat else []
print(("PASS" if a and a == b else "FAIL") + "\tHTML: both charts put the same times at the same x\t%r / %r" % (a, b))
PYEOF
vr_run html "$MT" -o mt.html
[ "$rc" -eq 0 ] && pass "memory timeline: HTML written" || fail "memory timeline: HTML written" "$(cat html.err)"
"$PYTHON" html.py mt.html mt.json >html.tap 2>&1 || true
tap_lines html.tap
grep -q "PyTorch before 1.10" mt.html && fail "HTML: no 'before 1.10' sentence for a memory timeline" ||
    pass "HTML: no 'before 1.10' sentence for a memory timeline"

# The Markdown has the table, without the charts.
vr_run md "$MT" -o mt.md
cat >md.py <<'PYEOF'
import json, sys
from vrtest import human_bytes
md = open(sys.argv[1], encoding="utf-8").read().splitlines()
dev = json.load(open(sys.argv[2]))["devices"][0]
for c, b in dev["peak_breakdown"].items():
    row = "| %s | %s | %.1f%% |" % (c.replace("_", "\\_"), human_bytes(b), 100.0 * b / dev["peak_allocated_bytes"])
    print(("PASS" if row in md else "FAIL") + "\tMarkdown: the table's row %s" % row)
PYEOF
"$PYTHON" md.py mt.md mt.json >md.tap 2>&1 || true
tap_lines md.tap
grep -q '<svg' mt.md && fail "Markdown: no SVG" || pass "Markdown: no SVG"

# No run crashed or tripped a sanitizer.
bad=$(grep -l -e 'AddressSanitizer' -e 'runtime error' -e 'LeakSanitizer' ./*.err 2>/dev/null || true)
[ -z "$bad" ] && pass "no crash or sanitizer report" || fail "no crash or sanitizer report" "$(cat $bad | head -20)"

finish
