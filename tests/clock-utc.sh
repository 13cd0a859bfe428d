#!/usr/bin/env bash
# tests/clock-utc.sh: the clock (issue 28). Where a source gives absolute
# time (a snapshot's time_us, a job log's stamps) each peak and OOM
# carries its wall-clock time: JSON utc / peak_allocated_utc /
# peak_reserved_utc, computed here from the files themselves (Python
# reads the pickle's time_us and replays its totals, or the log line's
# stamp), and Markdown shows it beside the relative time. A snapshot
# without time_us (a real one, and a copy of a real one with time_us
# taken out) shows entry numbers, never times, and its chart's x axis
# counts entries.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/clock-utc

cd "$TMP"
need python3 || true

"$PYTHON" "$PY/check.py" "$VRAMREPORT" "$VR_SRCDIR/tests/data" >results.txt 2>&1 || true
tap_lines results.txt
finish
