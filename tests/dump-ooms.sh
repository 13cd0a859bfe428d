#!/usr/bin/env bash
# tests/dump-ooms.sh: an allocator dump's own count of its process's
# out-of-memory errors (memory_summary()'s "CUDA OOMs: N", memory_stats()'s
# num_ooms) is an OOM that happened: the verdict is FAILED, never OK, and
# a cache far larger than what was allocated reads as fragmentation. A
# job log's box restates the log's own error: no second OOM. The checks
# are in tests/py/dump-ooms/.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

cd "$TMP"
need python3 || true

"$PYTHON" "$VR_SRCDIR/tests/py/dump-ooms/checks.py" "$VRAMREPORT" "$VR_SRCDIR/tests/data/realdata/summary" >results.txt 2>&1 || true
tap_lines results.txt
finish
