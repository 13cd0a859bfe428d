#!/usr/bin/env bash
# tests/breakdown.sh: where the memory went. The peak's nine
# categories (devices[].peak_breakdown: PyTorch's eight and kv_cache,
# after activation) are checked against figures this
# script computes on its own from the inputs (python3's json, gzip and
# sqlite3 modules):
#   - the real export_memory_timeline file: each category at the peak is
#     the running sum of its rows, in PyTorch's order, up to the peak of
#     the total;
#   - every real Kineto trace: nine keys, in order, summing exactly to
#     the device's peak_allocated_bytes;
#   - a synthetic trace whose allocations live at the peak are known, the
#     rest of the peak being memory allocated before the trace (unknown);
#   - the HTML: both charts, each category's exact bytes in the <title>s
#     and the legend, well-formed SVG.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/breakdown

K=$VR_SRCDIR/tests/data/realdata/kineto
MT=$K/hta-memory-timeline.raw.json.gz
CATS='["parameter", "optimizer_state", "input", "temporary", "activation", "kv_cache", "gradient", "autograd_detail", "unknown"]'
# PyTorch's _CATEGORY_TO_INDEX (torch/profiler/_memory_profiler.py): the
# memory timeline's rows give these indices.
PT_CATS='["parameter", "optimizer_state", "input", "temporary", "activation", "gradient", "autograd_detail", "unknown"]'
cd "$TMP"

check "python3 runs, with json, gzip and sqlite3" "$PYTHON" -c 'import json, gzip, sqlite3'

# (a) The memory timeline: PyTorch sorts its timeline by (time, action)
# with the pre-existing tensors (t = -1) first; the raw export writes the
# rows in that order, an increment of version as two rows (minus, plus).
vr_run mt "$MT" --format json -o mt.json
[ "$rc" -eq 0 ] && pass "memory timeline: report written" || fail "memory timeline: report written" "$(cat mt.err)"
"$PYTHON" "$PY/mt.py" "$MT" mt.json "$CATS" "$PT_CATS" >mt.tap 2>&1 || true
tap_lines mt.tap

# (b) Every real trace: the breakdown is there and exact.
for f in "$K"/*; do
    n=$(basename "$f")
    vr_run one "$f" --format json -o "$n.json"
    [ "$rc" -eq 0 ] || { fail "$n: report written" "$(cat one.err)"; continue; }
    "$PYTHON" "$PY/sums.py" "$n.json" "$n" "$CATS" >sums.tap 2>&1 || true
    tap_lines sums.tap
done

# (c) A synthetic trace: 1 MB allocated before it began; allocations and
# frees, two of them at the peak's timestamp (the first makes the peak).
"$PYTHON" "$PY/mk.py" || fail "python3 wrote the synthetic trace"
vr_run syn synthetic.json --db syn.db --format json -o syn.json
[ "$rc" -eq 0 ] && pass "synthetic: report written" || fail "synthetic: report written" "$(cat syn.err)"
"$PYTHON" "$PY/synth.py" synthetic.json syn.json syn.db "$CATS" >syn.tap 2>&1 || true
tap_lines syn.tap

# (c') The allocator's total below what the trace holds live (an event
# lost): the breakdown still sums exactly to the peak.
"$PYTHON" "$PY/over.py" || fail "python3 wrote the over-full trace"
vr_run over over.json --format json -o over.report.json
got=$(json_get over.report.json 'sum(d["devices"][0]["peak_breakdown"].values()) == d["devices"][0]["peak_allocated_bytes"] == 5120')
[ "$got" = True ] && pass "live above the allocator's total: the breakdown sums to the peak" ||
    fail "live above the allocator's total: the breakdown sums to the peak" "$got"

# (d) The HTML of the memory timeline: both charts, exact figures.
vr_run html "$MT" -o mt.html
[ "$rc" -eq 0 ] && pass "memory timeline: HTML written" || fail "memory timeline: HTML written" "$(cat html.err)"
"$PYTHON" "$PY/html.py" mt.html mt.json >html.tap 2>&1 || true
tap_lines html.tap
grep -q "PyTorch before 1.10" mt.html && fail "HTML: no 'before 1.10' sentence for a memory timeline" ||
    pass "HTML: no 'before 1.10' sentence for a memory timeline"

# The Markdown has the table, without the charts.
vr_run md "$MT" -o mt.md
"$PYTHON" "$PY/md.py" mt.md mt.json >md.tap 2>&1 || true
tap_lines md.tap
grep -q '<svg' mt.md && fail "Markdown: no SVG" || pass "Markdown: no SVG"

# No run crashed or tripped a sanitizer.
bad=$(grep -l -e 'AddressSanitizer' -e 'runtime error' -e 'LeakSanitizer' ./*.err 2>/dev/null || true)
[ -z "$bad" ] && pass "no crash or sanitizer report" || fail "no crash or sanitizer report" "$(cat $bad | head -20)"

finish
