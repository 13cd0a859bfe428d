#!/usr/bin/env bash
# tests/many.sh: a job of many devices, ranks or memory prints. A report
# shows 16 of them in full (those an error or a finding names, the highest
# peaks, the lowest) and sums up the rest in one line; the JSON report
# keeps every one's figures (more_devices[], more_memory_prints[], ranks[]).
# The figures are checked against what this script computes from the
# inputs it writes; the report's size must not grow with the count (80
# devices give the same Markdown and HTML as 40, give or take their
# figures' digits). How long it takes is the benchmark's (tests/bench/many.sh).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/many
cd "$TMP"
need python3 || true

"$PYTHON" "$PY/checks.py" "$VRAMREPORT" >results.txt 2>&1 || true
tap_lines results.txt
finish
