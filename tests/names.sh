#!/usr/bin/env bash
# tests/names.sh: inputs whose file names collide (two real traces as
# run1/rank0/trace.json.gz and run2/rank0/trace.json.gz, two real
# snapshots as a/snapshot.pickle and b/snapshot.pickle, in long folders)
# are told apart by the fewest trailing path components, their full paths
# only in the inputs table's last column and HTML titles, their device
# headings distinct; the GPUs', processes' and bandwidth tables name
# nvidia-smi's and gpustat's files by the same short names; and copy safety: no report of the real inputs, in any
# format, holds an invisible character (U+2060, U+200B, U+00AD) that a
# user copying a setting or command would take along, and every
# "Setting:" is a code span (Markdown) or <code> (HTML). The oracle is
# tests/py/names/check.py.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/names
R=$VR_SRCDIR/tests/data/realdata

cd "$TMP"
need python3 || true

#-- collisions ----------------------------------------------------------------
mkdir -p c/experiments/run1-long-folder-name/rank0 c/experiments/run2-long-folder-name/rank0 \
    c/a-long-folder-name-for-snapshots c/b-long-folder-name-for-snapshots
cp "$R/kineto/tracelens-h100-bert-small.json.gz" c/experiments/run1-long-folder-name/rank0/trace.json.gz
cp "$R/kineto/tracelens-mi300x-bert-small.json.gz" c/experiments/run2-long-folder-name/rank0/trace.json.gz
cp "$R/snapshot/cs336-silmont-segments.pickle" c/a-long-folder-name-for-snapshots/snapshot.pickle
cp "$R/snapshot/flexgen-opt1.3b-noframes.pickle" c/b-long-folder-name-for-snapshots/snapshot.pickle
P="c/experiments/run1-long-folder-name/rank0/trace.json.gz c/experiments/run2-long-folder-name/rank0/trace.json.gz c/a-long-folder-name-for-snapshots/snapshot.pickle c/b-long-folder-name-for-snapshots/snapshot.pickle"
# shellcheck disable=SC2086
vr_run md $P -o c.md -q
check "colliding names: Markdown exit 0" [ "$rc" = 0 ]
# shellcheck disable=SC2086
vr_run html $P -o c.html -q
check "colliding names: HTML exit 0" [ "$rc" = 0 ]
# shellcheck disable=SC2086
"$PYTHON" "$PY/check.py" names c.md c.html $P >names.txt 2>&1 || true
tap_lines names.txt

#-- the GPUs' and the bandwidth tables: short names too ---------------------------
mkdir -p g/monitoring-logs-of-a-long-folder-name/run1 g/monitoring-logs-of-a-long-folder-name/run2
cp "$R/nvsmi/exporter-capture-h100-80gb.txt" g/monitoring-logs-of-a-long-folder-name/run1/smi.txt
cp "$VR_SRCDIR/tests/data/gpustat/readme-2017.txt" g/monitoring-logs-of-a-long-folder-name/run2/smi.txt
G="g/monitoring-logs-of-a-long-folder-name/run1/smi.txt g/monitoring-logs-of-a-long-folder-name/run2/smi.txt"
# shellcheck disable=SC2086
vr_run gmd $G -o g.md -q
check "GPU captures: Markdown exit 0" [ "$rc" = 0 ]
# shellcheck disable=SC2086
vr_run ghtml $G -o g.html -q
check "GPU captures: HTML exit 0" [ "$rc" = 0 ]
# shellcheck disable=SC2086
"$PYTHON" "$PY/check.py" tables g.md g.html $G >tables.txt 2>&1 || true
tap_lines tables.txt

#-- copy safety -----------------------------------------------------------------
for f in md html json; do
    vr_run "real-$f" "$R"/kineto/*.gz "$R"/snapshot/* "$R"/summary/* "$VR_SRCDIR"/tests/data/logs/* \
        -o "real.$f" -q
    check "the real inputs: a $f report is written" [ -s "real.$f" ]
done
"$PYTHON" "$PY/check.py" invisible real.md real.html real.json >invisible.txt 2>&1 || true
tap_lines invisible.txt
"$PYTHON" "$PY/check.py" settings real.md real.html >settings.txt 2>&1 || true
tap_lines settings.txt
finish
