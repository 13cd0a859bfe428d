#!/usr/bin/env bash
# tests/diagnose.sh: the diagnosis: one finding per OOM, its
# primary cause, secondary causes, confidence and evidence; findings for
# peaks without an OOM; --fail-on.
#
# The fifteen real OOM messages of tests/data/logs (SOURCES.md) are
# each wrapped in a realistic log (stamped lines, a traceback) and the
# primary kind is checked against what this test computes from the
# message's own numbers with the issue's rules (docs/diagnosis.md),
# written again here in Python. Then scenario inputs made for the test,
# one per kind, in log, profiler-trace and allocator-snapshot variants:
# another process named by the message; a container's "Process N" that
# is this process; fragmentation (log, trace, snapshot whose replay shows
# the largest free block); an oversized request; free memory far above
# the request; a bare "CUDA error: out of memory"; plain capacity;
# another process seen only by nvidia-smi; near-capacity and
# rank-imbalance peaks; --fail-on's exit statuses.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/diagnose

LOGS=$VR_SRCDIR/tests/data/logs
cd "$TMP"
need python3 || true

"$PYTHON" "$PY/checks.py" "$VRAMREPORT" "$LOGS" >results.txt 2>&1 || true
tap_lines results.txt
finish
