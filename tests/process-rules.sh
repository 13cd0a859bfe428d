#!/usr/bin/env bash
# tests/process-rules.sh: the diagnosis's process rules at their edges
# (docs/diagnosis.md): a lone "Process N" (or one nvidia-smi row) is this
# process when, as another, it and the reserved memory would exceed what
# is in use; a request under 5 % of the device is never oversized; and
# nvidia-smi readings are the job's only when the GPU's model or memory
# agrees with the device and they lie within the job's time span (else
# listed as not matched, and why, and used for nothing).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/process-rules
cd "$TMP"
need python3 || true

"$PYTHON" "$PY/checks.py" "$VRAMREPORT" "$VR_SRCDIR" >results.txt 2>&1 || true
tap_lines results.txt
finish
