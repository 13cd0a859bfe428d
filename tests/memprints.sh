#!/usr/bin/env bash
# tests/memprints.sh: memory print lines of job logs. Real
# examples of each shape (tests/data/memprints/, sources in PROVENANCE.md)
# are imported and every print's figures compared with what this test
# reads from the lines itself (its own regular expressions, bytes =
# printed value x 1024^unit, rounded half up); a synthetic training log
# whose prints rise step by step and ends in a numberless OOM must be
# diagnosed `leak` (growth per step as printed), a flat one must not;
# the same rising prints without an OOM a `leak` warning (from the log);
# memory_prints[] in the JSON; the report's section, escaped.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/memprints
cd "$TMP"
need python3 || true

"$PYTHON" "$PY/checks.py" "$VRAMREPORT" "$VR_SRCDIR/tests/data/memprints" >results.txt 2>&1 || true
tap_lines results.txt
finish
