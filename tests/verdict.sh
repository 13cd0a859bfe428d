#!/usr/bin/env bash
# tests/verdict.sh: the verdict at the top of the report,
# --summary, the terminal's success line, the estimate beside the
# measured breakdown.
#
# Three inputs, their numbers computed here from the input itself: a real
# OOM message (tests/data/logs/oom-05.log: failed; the request, the free
# memory, the capacity and what was outside PyTorch read from its text), a
# synthetic training trace (tests/gen-scenarios.py) whose capacity is set
# so that its peak reserved is 95 % of it (at risk), and the same trace on
# its H100 (OK). Checked: the banner's state and numbers in JSON,
# Markdown and HTML (id="verdict", styled by state), the verdict before
# the breakdown, the findings' order on a log with three hundred OOMs, the
# estimate beside the breakdown (the trace's parameter bytes known from
# the generator's ground truth), --summary within 4,000 characters on the
# biggest real inputs and on the three hundred OOMs, no advice heading
# without advice, and the one line a terminal gets (through `script`).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/verdict

GEN=$VR_SRCDIR/tests/gen-scenarios.py
LOGS=$VR_SRCDIR/tests/data/logs
REAL=$VR_SRCDIR/tests/data/realdata
cd "$TMP"
need python3 || true

"$PYTHON" "$PY/checks.py" "$VRAMREPORT" "$GEN" "$LOGS" "$REAL" >results.txt 2>&1 || true
tap_lines results.txt

# ---- 5. the terminal's line ---------------------------------------------------
need script || true
OOM=$LOGS/oom-05.log
script -qec "'$VRAMREPORT' '$OOM' -o tty.md" /dev/null </dev/null >tty.txt 2>&1 || true
size=$("$PYTHON" -c "import os, sys; from vrtest import human_bytes; print(human_bytes(os.path.getsize('tty.md')))")
line=$(tr '\r' '\n' <tty.txt | grep '^vramreport: wrote' || true)
case $line in
"vramreport: wrote tty.md ($size): FAILED: cuda:0 ran out of memory asking for 74.0 MiB"*)
    pass "on a terminal: one line with the output, its size ($size) and the verdict" ;;
*) fail "on a terminal: one line with the output, its size ($size) and the verdict" "$(cat tty.txt)" ;;
esac
script -qec "'$VRAMREPORT' '$OOM' -q -o tty2.md" /dev/null </dev/null >tty2.txt 2>&1 || true
if [ -s tty2.md ] && ! grep -q 'wrote' tty2.txt; then
    pass "on a terminal with --quiet: no line"
else
    fail "on a terminal with --quiet: no line" "$(cat tty2.txt)"
fi
vr_run piped "$OOM" -o piped.md
if [ "$rc" = 0 ] && ! grep -q 'wrote' piped.err; then
    pass "stderr not a terminal: no line"
else
    fail "stderr not a terminal: no line" "$(cat piped.err)"
fi
finish
