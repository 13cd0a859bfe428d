#!/usr/bin/env bash
# tests/explain.sh: memory a peak holds that no live allocation explains
# (live since before the record) is explained only where the file gives
# grounds, each inference with its evidence (JSON devices[].explained[],
# the section's "How we know"), and stays unknown where it gives none.
# The figures are computed in tests/py/explain/ from the real files.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/explain

cd "$TMP"
need python3 || true

"$PYTHON" "$PY/checks.py" "$VRAMREPORT" "$VR_SRCDIR/tests/data/realdata" >results.txt 2>&1 || true
tap_lines results.txt
finish
