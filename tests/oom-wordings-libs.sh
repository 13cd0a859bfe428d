#!/usr/bin/env bash
# tests/oom-wordings-libs.sh: out-of-memory errors other libraries print
# (the CUDA driver through a C++ library, cuBLAS, cuDNN, NCCL, CuPy,
# faiss, TensorFlow, JAX/XLA, vLLM): each real message is one OOM event
# with the figures it gives and the cause an expert names; copies of one
# failure are one OOM; lines that only mention an OOM are none. The
# checks are in tests/py/oom-wordings-libs/.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

cd "$TMP"
need python3 || true

"$PYTHON" "$VR_SRCDIR/tests/py/oom-wordings-libs/checks.py" "$VRAMREPORT" "$VR_SRCDIR/tests/data/logs" >results.txt 2>&1 || true
tap_lines results.txt
finish
