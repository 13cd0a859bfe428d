#!/usr/bin/env bash
# tests/browser.sh: HTML reports of real inputs, opened in a headless
# Chromium. For each report: no console errors, no request but the
# file itself, the verdict (#verdict) and the memory chart (the first
# `figure.chart svg.vr-chart`) in the first screen at 1280x800 and at 390x844,
# no sideways scrolling, no two chart texts overlapping (every <text> of every
# figure's svg and every legend item, by getBoundingClientRect), no chart text
# under 10 px at 390, 360 and 320 px, legends as HTML lists, no chart text over
# a line it does not label, readable text (WCAG AA contrast) in light and in dark
# mode, and a PDF when printed. Among the cases: a report of two devices and a
# snapshot with out-of-memory marks on its chart, where labels crowd. tests/browser.py drives Chromium over the
# DevTools protocol (one Chromium for all pages, every wait bounded).
# Screenshots and PDFs: build/tests/screenshots/ (CI keeps them).
#
# No Chromium: skipped (exit 77), except under CI=true, where it is a failure
# (.ci/run installs chromium). CHROMIUM=path picks another binary.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

R=$VR_SRCDIR/tests/data/realdata
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
SHOTS=$VR_BUILDDIR/tests/screenshots
cd "$TMP"

if [ ! -x "$CHROMIUM" ]; then
    if [ "${CI:-}" = true ]; then
        fail "chromium is installed" "$CHROMIUM not found; CI must install it (./bootstrap deps ci)"
        finish
    fi
    echo "# SKIP: no $CHROMIUM (install chromium, or set CHROMIUM=path)"
    exit 77
fi
need python3 || true

# The cases: name, whether the report has a memory timeline (so a chart), and
# its inputs (real files, copied so that the report's paths do not depend on
# where the tree is). A job log with an OOM is one real message.
cases="
trace chart kineto/tracelens-h100-bert-small.json.gz
snapshot chart snapshot/cs336-silmont-segments.pickle
oomlog - ../logs/oom-12.log
nvsmi - nvsmi/exporter-capture-h100-80gb.txt
jobdir chart snapshot/cs336-magma27-training.pickle ../logs/oom-05.log nvsmi/exporter-capture-rtx4080s.txt
multi chart snapshot/cs336-bcrafton.pickle snapshot/cs336-silmont-forward-bf16.pickle
oomchart - +oom:snapshot/cs336-bcrafton.pickle
"
# The OOM chart's case does not ask for its chart in the first screen, and
# rightly: a failed run's first screen holds what failed (#verdict, checked),
# its causes and the advice that fixes it, which the report puts before the
# evidence; the charts follow them. Its chart is measured all the same (text
# overlaps, sizes, legends, text over lines).
args=()
while read -r name chart inputs; do
    [ -n "$name" ] || continue
    mkdir -p "in/$name"
    for f in $inputs; do
        case $f in
        # A real snapshot with out-of-memory entries added (one in the
        # middle, one at the end), so that the OOM marks and their labels
        # crowd the chart where they are measured.
        +oom:*)
            f=${f#+oom:}
            "$PYTHON" "$VR_SRCDIR/tests/py/snapshot-ooms/addoom.py" "$R/$f" "in/$name/oom-$(basename "$f")" ||
                fail "$name: OOM entries added to $f" ;;
        *) cp "$R/$f" "in/$name/" ;;
        esac
    done
    vr_run "$name" -q "in/$name" -o "$name.html"
    if [ "$rc" -eq 0 ] && [ -s "$name.html" ]; then
        pass "$name: the HTML report is written"
    else
        fail "$name: the HTML report is written" "exit $rc: $(head -c 300 "$name.err")"
        continue
    fi
    [ "$chart" = chart ] && args+=("$name=$TMP/$name.html:chart") || args+=("$name=$TMP/$name.html")
done <<<"$cases"
# vramreport diff's page: its charts measured as the report's are.
vr_run diffpage diff -q "$R/snapshot/cs336-bcrafton.pickle" "$R/snapshot/cs336-magma27-training.pickle" -o diff.html
if [ "$rc" -eq 0 ] && [ -s diff.html ]; then
    pass "diff: the HTML diff is written"
    args+=("diff=$TMP/diff.html")
else
    fail "diff: the HTML diff is written" "exit $rc: $(head -c 300 diffpage.err)"
fi

rm -rf "$SHOTS"
mkdir -p "$SHOTS"
start=$(date +%s)
brc=0
timeout -k 10 300 "$PYTHON" "$VR_SRCDIR/tests/browser.py" --chromium "$CHROMIUM" \
    --shots "$SHOTS" --timeout 60 "${args[@]}" >browser.out 2>browser.err || brc=$?
tap_lines browser.out
sed 's/^/#   /' browser.err
[ "$brc" -eq 0 ] && pass "the browser checks ran to the end" ||
    fail "the browser checks ran to the end" "browser.py exit $brc (124: timed out)"
echo "# browser checks: $(($(date +%s) - start)) s; screenshots in $SHOTS"
n=$(find "$SHOTS" -name '*.png' | wc -l | tr -d ' ')
[ "$n" -ge 5 ] && pass "screenshots are kept ($n in $SHOTS)" || fail "screenshots are kept" "$n PNG files in $SHOTS"
finish
