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
PY=$VR_SRCDIR/tests/py/face

cd "$TMP"
check "python3 runs" "$PYTHON" -c 'import json, re'

# ---- inputs -----------------------------------------------------------------
OPNAME='@octocat ping #12 see http://evil.example/x www.evil.example and a@b.example'
"$PYTHON" "$PY/gen.py" oom.json "$OPNAME" || fail "python3 wrote the OOM trace"
vr_run html oom.json -o oom.html
[ "$rc" -eq 0 ] && pass "OOM trace: HTML written" || fail "OOM trace: HTML written" "$(cat html.err)"
vr_run md oom.json -o oom.md
[ "$rc" -eq 0 ] && pass "OOM trace: Markdown written" || fail "OOM trace: Markdown written" "$(cat md.err)"

# ---- the page's CSS ---------------------------------------------------------
"$PYTHON" "$PY/css.py" oom.html >css.tap 2>&1 || true
tap_lines css.tap

# ---- the chart: OOM mark and step lines at the right x ---------------------
"$PYTHON" "$PY/chart.py" oom.html >chart.tap 2>&1 || true
tap_lines chart.tap

# ---- the device at the peak, as one bar -----------------------------------
"$PYTHON" "$PY/bar.py" oom.html >bar.tap 2>&1 || true
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
"$PYTHON" "$PY/bar.py" smi.html $((15872 << 20)) >smi.tap 2>&1 || true
sed 's/\t/\tnvidia-smi: /' smi.tap >smi2.tap
tap_lines smi2.tap

# ---- long paths ---------------------------------------------------------
LONG=runs/2026-11-30/a-very-long-experiment-directory-name-that-goes-on/and-on
mkdir -p "$LONG"
cp oom.json "$LONG/rank0-training-run-with-a-long-descriptive-name.pt.trace.json"
vr_run longh "$LONG" -o long.html
vr_run longm "$LONG" -o long.md
"$PYTHON" "$PY/long.py" "$LONG/rank0-training-run-with-a-long-descriptive-name.pt.trace.json" >long.tap 2>&1 || true
tap_lines long.tap

# ---- op names stay inert in the Markdown ----------------------------------
"$PYTHON" "$PY/inert.py" oom.md "$OPNAME" >inert.tap 2>&1 || true
tap_lines inert.tap
grep -q 'evil\.example' oom.html && ! grep -q '<a ' oom.html && pass "HTML: the op name is shown, no link made" ||
    fail "HTML: the op name is shown, no link made" "$(grep -o '<a [^>]*>' oom.html | head -3)"

# ---- size on the real inputs -----------------------------------------------
vr_run real "$VR_SRCDIR/tests/data/realdata" -o real.html -q
size=$(wc -c <real.html | tr -d ' ')
[ "$rc" -eq 0 ] && [ "$size" -gt 100000 ] && [ "$size" -lt 2000000 ] &&
    pass "every real input in one HTML report: $size bytes, under 2 MB" ||
    fail "every real input in one HTML report: under 2 MB" "exit $rc, $size bytes" "$(head -c 300 real.err)"
"$PYTHON" "$PY/css.py" real.html >real.tap 2>&1 || true
grep -F 'viewBox' real.tap >real-svg.tap || true
tap_lines real-svg.tap

finish
