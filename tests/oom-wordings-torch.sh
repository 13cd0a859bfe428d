#!/usr/bin/env bash
# tests/oom-wordings-torch.sh: PyTorch's out-of-memory wordings beyond
# the CUDA caching allocator's: THC's `cuda runtime error (2)` (before
# 1.0, with its THCudaCheck line told once), the cudaMallocAsync
# backend's block, MPS, HIP and XPU. The real messages of
# tests/data/logs/oom-16.log to oom-32.log (SOURCES.md) are imported one
# by one: each is an OOM event, its figures are the ones written in the
# test as read off the message by hand, and its cause is an expert's.
# Then the edges of each rule: a memory fraction's limit set, equal to
# the device or unset; a line after the block; THC's two lines far apart
# or at two places; MPS without a watermark; the unexplained rule either
# side of half the device.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/oom-wordings-torch

LOGS=$VR_SRCDIR/tests/data/logs
cd "$TMP"
need python3 || true

"$PYTHON" "$PY/checks.py" "$VRAMREPORT" "$LOGS" >results.txt 2>&1 || true
tap_lines results.txt
finish
