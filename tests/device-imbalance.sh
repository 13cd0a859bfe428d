#!/usr/bin/env bash
# tests/device-imbalance.sh: the devices of one process whose peaks differ
# by more than 20 % of the largest (docs/diagnosis.md, device-imbalance):
# a DataParallel job's snapshot of three GPUs that peaked at 78, 20 and
# 8 GiB, snapshots at the rule's edge, the same job with an OOM on the
# loaded GPU, and a trace of two devices. Python writes the files and
# computes each device's peak and, at the largest and smallest peaks,
# each site's bytes (tests/py/device-imbalance/gen.py).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/device-imbalance

cd "$TMP"
need python3 || true

"$PYTHON" "$PY/gen.py" || fail "gen.py writes the files"
"$PYTHON" "$PY/checks.py" "$VRAMREPORT" "$VR_SRCDIR/tests" >results.txt 2>&1 || true
tap_lines results.txt
finish
