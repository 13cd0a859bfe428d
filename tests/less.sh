#!/usr/bin/env bash
# tests/less.sh: less to read (issue 28): on real inputs, no category row
# of 0 B, the categories' explanation once in a two-device report, no
# advice paragraph twice, no threading/_call_impl frame in the Markdown
# stacks, no "lines N-N", no cause slug in a headline, one gpustat
# process table (the oracle: tests/py/less/checks.py); "live at the
# peak" one figure in the row and the list's total, or the difference said.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

cd "$TMP"
need python3 || true
"$PYTHON" "$VR_SRCDIR/tests/py/less/checks.py" "$VRAMREPORT" "$VR_SRCDIR" >results.txt 2>&1 || true
tap_lines results.txt
# "Live at the peak": the row, the list's total and the replays agree
# (tests/py/less/live.py).
"$PYTHON" "$VR_SRCDIR/tests/py/less/live.py" "$VRAMREPORT" "$VR_SRCDIR" >live.txt 2>&1 || true
tap_lines live.txt
finish
