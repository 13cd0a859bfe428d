#!/usr/bin/env bash
# tests/joblog.sh: job logs with CUDA out-of-memory errors.
# The fifteen real messages of tests/data/logs/oom-NN.log (their
# sources in SOURCES.md) are imported one by one and every figure is
# checked, from the database and from the JSON report, against what this
# test reads from the message text itself (its own patterns and unit
# table, exact decimal arithmetic). The same messages are then wrapped as
# real logs wrap them: tracebacks with user and torch frames, Python
# logging stamps (zoned and not), [rank3]: prefixes and two ranks
# printing at once, ANSI colours, CRLF, HTML escapes, re-wrapping at 80
# columns (soft and hard), gzip, a chained traceback repeating the error;
# bare wordings without figures; embedded nvidia-smi and memory_summary
# boxes, read as their files alone are (real ones, compared by SQL), and
# a box past the scanner's bound. Malformed input: a text that only
# mentions the error, a cut gzip log, binary garbage named .log, and a
# log-only input gives a report.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/joblog

LOGS=$VR_SRCDIR/tests/data/logs
cd "$TMP"
need python3 || true

"$PYTHON" "$PY/checks.py" "$VRAMREPORT" "$LOGS" >results.txt 2>&1 || true
tap_lines results.txt
finish
