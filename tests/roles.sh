#!/usr/bin/env bash
# tests/roles.sh: a snapshot allocation's category is decided by the frame
# nearest the allocation that has a role (schemas/categories.rules' role
# lines), not by an outer wrapper, and blocks in use before the record (a
# legacy snapshot's history) are decided by their stacks the same way:
# the checks are in tests/py/roles/.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/roles

cd "$TMP"
need python3 || true

"$PYTHON" "$PY/checks.py" "$VRAMREPORT" "$VR_SRCDIR/tests/data/realdata/snapshot" >results.txt 2>&1 || true
tap_lines results.txt
finish
