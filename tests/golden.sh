#!/usr/bin/env bash
# tests/golden.sh: the report's words by input kind. Each input below is
# rendered to Markdown alone and compared byte for byte with its golden in
# tests/golden/: a snapshot without a clock (flexgen's records no time_us),
# a snapshot with one, a job log alone, an nvidia-smi capture alone and a
# gpustat reading. Each input is copied into a temporary folder and the
# report made there, so no path in a golden depends on where the tree is.
#
# To regenerate after a deliberate change of wording, from the build folder:
#   GOLDEN_UPDATE=1 make check TESTS=tests/golden.sh
# then read every changed sentence of `git diff tests/golden/`: is it true
# of that input, would an expert agree?
#
# Besides the bytes, the sentences only a profiler trace makes true are
# looked for in the goldens of the other kinds, and gpustat's readings
# must not be headed as nvidia-smi's, so the check survives a
# regeneration that lets one back in.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
cd "$TMP"

D=$VR_SRCDIR/tests/data
# name  input
cases="snapshot-no-clock $D/realdata/snapshot/flexgen-opt1.3b-noframes.pickle
snapshot-clock $D/realdata/snapshot/cs336-silmont-segments.pickle
log $D/logs/oom-01.log
nvsmi $D/realdata/nvsmi/exporter-capture-h100-80gb.txt
gpustat $D/gpustat/color-watch-h100.txt"

# Sentences true of a profiler trace only (none of these inputs is one).
trace_only="Modules are named as the profiler names them
Linear\\_0
(no enclosing op)
recorded without
allocated before the trace began
carry no addresses
Allocated by
autograd's own thread
no frame of the user's code
grouped by operator"

while read -r name input; do
    dir=$TMP/$name
    mkdir -p "$dir"
    base=$(basename "$input")
    cp "$input" "$dir/$base"
    golden=$VR_SRCDIR/tests/golden/$name.md
    if ! (cd "$dir" && "$VRAMREPORT" "$base" -o report.md >run.out 2>&1); then
        fail "$name: renders" "$(head -n 5 "$dir/run.out")"
        continue
    fi
    if [ "${GOLDEN_UPDATE:-}" = 1 ]; then
        cp "$dir/report.md" "$golden"
        pass "$name: golden written ($golden)"
    elif cmp -s "$dir/report.md" "$golden"; then
        pass "$name: the report is the golden, byte for byte"
    else
        fail "$name: the report differs from tests/golden/$name.md" \
            "$(diff "$golden" "$dir/report.md" | head -n 20)"
    fi
    found=$(printf '%s\n' "$trace_only" | while IFS= read -r s; do
        grep -F -n -- "$s" "$golden" 2>/dev/null || true
    done)
    if [ -z "$found" ]; then
        pass "$name: no sentence only a trace makes true"
    else
        fail "$name: a trace's sentence in a report of no trace" "$found"
    fi
    if [ "$name" = gpustat ]; then
        if grep -n -e '^## nvidia-smi' -e 'what nvidia-smi saw' "$golden"; then
            fail "gpustat: its readings are said to be nvidia-smi's"
        else
            pass "gpustat: its readings are gpustat's, not under an nvidia-smi heading"
        fi
    fi
done <<<"$cases"
finish
