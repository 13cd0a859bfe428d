#!/usr/bin/env bash
# tests/html-valid.sh: the HTML reports of real inputs (every kind we read)
# are valid HTML5. tidy (HTML Tidy 5) reads each whole page: no
# error, and no warning but the accepted ones below; then the page with its
# inline SVG charts taken out, where only cmark-gfm's `align` is accepted;
# each SVG is parsed on its own as XML (python3's expat): well-formed, an
# <svg> in the SVG namespace. Duplicate ids are looked for too (tidy warns).
#
# Accepted warnings, and why:
#   <td>/<th> attribute "align" not allowed for HTML5: cmark-gfm writes a
#     table column's alignment so; browsers honour it, and safe mode leaves
#     no other way to align a column.
#   <svg> proprietary attribute "fill"/"font-family"/...: SVG presentation
#     attributes, valid SVG that tidy does not know (only in the whole page).
#
# No tidy: skipped (exit 77), except under CI=true, where it is a failure.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/html-valid

D=$VR_SRCDIR/tests/data
R=$D/realdata
cd "$TMP"

if ! command -v tidy >/dev/null 2>&1; then
    if [ "${CI:-}" = true ]; then
        fail "tidy is installed" "tidy not found; CI must install it (./bootstrap deps ci)"
        finish
    fi
    echo "# SKIP: no tidy (install the tidy package)"
    exit 77
fi
need python3 || true

# One report per input, or per folder where a kind comes in many small files.
# (The two largest traces are left to realdata.sh: they add time, not markup.)
inputs="
$R/kineto/tracelens-h100-bert-small.json.gz
$R/kineto/tracelens-h100-qwen1.5-0.5b.json.gz
$R/kineto/tracelens-mi300x-bert-small.json.gz
$R/kineto/tbplugin-v100-resnet50-2021.pt.trace.json.gz
$R/kineto/hta-memory-timeline.raw.json.gz
$R/snapshot/cs336-bcrafton.pickle
$R/snapshot/cs336-magma27-training.pickle
$R/snapshot/cs336-silmont-forward-bf16.pickle
$R/snapshot/cs336-silmont-segments.pickle
$R/snapshot/flexgen-opt1.3b-noframes.pickle
$R/nvsmi/exporter-capture-h100-80gb.txt
$R/nvsmi/exporter-capture-rtx2080s-windows.txt
$R/nvsmi/telegraf-dual_a5000-v13.xml
$R/nvsmi/telegraf-a100-sxm4-v12.xml
$R/summary
$D/logs
$D/proftable
$D/gpustat
"
pages=()
for f in $inputs; do
    name=$(basename "$f")
    vr_run "$name" -q "$f" -o "$name.html"
    # 3: a file of a folder failed (gpustat's truncated sample); the page is written.
    if { [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]; } && [ -s "$name.html" ]; then
        pages+=("$name.html")
    else
        fail "$name: the HTML report is written" "exit $rc: $(head -c 300 "$name.err")"
    fi
done
# vramreport diff's page (docs/diff.md): two snapshots, two traces.
for pair in "cs336-silmont-forward-bf16.pickle cs336-bcrafton.pickle snapshot" \
    "tracelens-h100-bert-small.json.gz tracelens-mi300x-bert-small.json.gz kineto"; do
    set -- $pair
    vr_run "diff-$1" diff -q "$R/$3/$1" "$R/$3/$2" -o "diff-$1.html"
    if [ "$rc" -eq 0 ] && [ -s "diff-$1.html" ]; then
        pages+=("diff-$1.html")
    else
        fail "diff $1 $2: the HTML diff is written" "exit $rc: $(head -c 300 "diff-$1.err")"
    fi
done
[ "${#pages[@]}" -gt 0 ] || { fail "reports to validate" "none written"; finish; }

"$PYTHON" "$PY/valid.py" "${pages[@]}" >valid.out 2>valid.err || fail "valid.py ran" "$(tail -5 valid.err)"
tap_lines valid.out
n_svg=$(cat "${pages[@]}" | grep -o '<svg ' | wc -l | tr -d ' ')
[ "$n_svg" -gt 5 ] && pass "the pages hold SVG charts to check ($n_svg)" || fail "the pages hold SVG charts to check" "$n_svg"
finish
