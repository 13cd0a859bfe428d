#!/usr/bin/env bash
# tests/capture-kit.sh: the capture kit (docs/capture.md),
# share/vramreport/vramreport_capture.py, run without a GPU under a
# stand-in torch (tests/data/fake-torch) and a stand-in nvidia-smi that
# answers any --query-gpu / --query-compute-apps with the fields asked.
# A job enables the kit, allocates, and hits an OOM (the fake allocator
# calls the registered observer as torch's does); then vramreport reads the
# capture folder. The oracle reads the kit's files itself (the snapshot
# with every global refused, the JSON, the stand-in's CSV): every file
# recognised by its reader, the snapshot's end state and OOM, the
# memory_stats figures and rank, the GPU in the report. Then: torch 2.0
# (no `stacks`) and 1.13 (no history signature, no _dump_snapshot, no OOM
# observer: oom_guard) warn and still capture; no nvidia-smi is a note;
# two OOMs are two folders and nothing is overwritten; max_dumps; a failing
# part loses only itself; no torch at all never raises; profiler_kwargs.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/capture-kit

cd "$TMP"
need python3 || true
KIT=$VR_SRCDIR/share/vramreport
FAKE_TORCH=$VR_SRCDIR/tests/data/fake-torch
export KIT FAKE_TORCH PYTHON

mkdir bin nobin
# The stand-in, under this python3.
{ printf '#!%s\n' "$PYTHON"; cat "$PY/nvidia_smi.py"; } >bin/nvidia-smi
chmod +x bin/nvidia-smi

PYTHONDONTWRITEBYTECODE=1 "$PYTHON" "$PY/check.py" && tap_lines results.txt || fail "check.py ran" "$(tail -5 results.txt 2>/dev/null)"
finish
