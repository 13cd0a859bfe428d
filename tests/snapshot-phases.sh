#!/usr/bin/env bash
# tests/snapshot-phases.sh: an allocator snapshot's phases (forward,
# backward, optimizer, zero_grad) come from its entries' stacks (the
# category rules' role lines) and its optimizer annotations, so its
# allocations get their phases, the lifetime rules decide what no role
# does, and the peak per phase is the snapshot's: the real snapshots and
# ones written here, against a Python reading of each pickle
# (tests/py/snapshot-phases/).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/snapshot-phases

cd "$TMP"
need python3 || true
need sqlite3 || true

"$PYTHON" "$PY/check.py" "$VRAMREPORT" "$VR_SRCDIR/schemas/categories.rules" \
    "$VR_SRCDIR/tests/data/realdata/snapshot" >results.txt 2>&1 || true
tap_lines results.txt
finish
