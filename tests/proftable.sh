#!/usr/bin/env bash
# tests/proftable.sh: profiler tables (key_averages().table()) printed in
# job logs. Tables are made by tests/gen-proftable.py (a
# re-implementation of PyTorch's _build_table formatting) with column
# subsets, negative figures, every unit, with and without Input Shapes,
# rank prefixes, a table cut by a killed job, two tables in one log, noise
# and timestamps around them. The expected rows are read back from the
# printed text by this test's own reader (cells cut by the rule's widths,
# bytes = printed value x 1024^unit, rounded), never from our output.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/proftable
cd "$TMP"
need python3 || true

"$PYTHON" "$PY/checks.py" "$VRAMREPORT" "$VR_SRCDIR/tests" >results.txt 2>&1 || true
tap_lines results.txt
finish
