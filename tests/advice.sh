#!/usr/bin/env bash
# tests/advice.sh: advice with this job's numbers: each remedy
# of the catalogue (schemas/remedies.sql, docs/remedies.md) on one input
# where its trigger holds, with the saving computed here from the input's
# own figures (the trace generator's ground truth, the message's numbers,
# the snapshot's layout) and whether it would have made the failed
# request fit, and on one input where it must not appear. Then the order
# (by saving), the JSON's keys, the ranked list across findings, and the
# Markdown and HTML reports (escaping, the setting as a code block).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/advice

cd "$TMP"
need python3 || true

"$PYTHON" "$PY/checks.py" "$VRAMREPORT" "$VR_SRCDIR/tests/gen-scenarios.py" >results.txt 2>&1 || true
tap_lines results.txt
finish
