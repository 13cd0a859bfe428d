#!/usr/bin/env bash
# tests/by-module.sh: which part of the model held the memory at the peak
# (devices[].peak_by_module): the real traces recorded with with_modules
# and the real snapshots with frames against a Python reading of each
# file (tests/py/by-module/oracle.py), and a snapshot written here: the
# checks are in tests/py/by-module/checks.py.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/by-module

cd "$TMP"
need python3 || true

"$PYTHON" "$PY/checks.py" "$VRAMREPORT" "$VR_SRCDIR/tests/data/realdata" >results.txt 2>&1 || true
tap_lines results.txt
finish
