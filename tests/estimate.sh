#!/usr/bin/env bash
# tests/estimate.sh: `vramreport estimate` against hand
# computations. The oracle is Python with its own figures: bytes per
# parameter from the ZeRO paper (16 with bf16 Adam and fp32 master
# weights) and the common 2 + 2 + 8 = 12 (no master copy), ZeRO's
# sharding by stage, Korthikanti et al.'s activation formula for a
# GPT-3-like shape computed with exact fractions, the GPU capacities as
# marketed (GiB), and the fit verdict. Usage errors: one line, exit 2.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/estimate

cd "$TMP"
need python3 || true

"$PYTHON" "$PY/check.py" || fail "the checks ran" "check.py exited $?"
tap_lines results.txt
finish
