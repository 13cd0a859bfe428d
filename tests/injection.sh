#!/usr/bin/env bash
# tests/injection.sh: hostile text in every kind of input comes out inert in
# HTML, Markdown and JSON alike. The inputs (a Kineto trace, an
# allocator snapshot in JSON form, a job log with a traceback and an OOM,
# nvidia-smi --query-compute-apps CSV) carry op names, stack frames, file
# paths, process and GPU names holding <script>, quotes, &amp;, javascript:
# and http:// URLs, @someone, ![x](http://evil), | table breakers | and
# backticks. The same inputs with plain names are the reference: what a
# report of them holds (tags, attributes, links) is all a hostile one may
# hold.
#   HTML: no <script>, no tag, attribute or link the plain report lacks, no
#     on* attribute; the hostile text shows as text (or a tooltip), intact
#     but for invisible joiners (U+2060 and kin, which break @mentions).
#   Markdown, parsed as GitHub does (libcmark-gfm with its table and autolink
#     extensions, through python3's ctypes): no raw HTML, no image, no link
#     the plain report lacks (a bare URL GitHub would autolink is one), no
#     @mention outside code (GitHub's pattern), every table row with its
#     header's cell count, the hostile text visible and intact.
#   JSON: parses, and holds every hostile string exactly, as a value.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/injection
cd "$TMP"
need python3 || true

evil_dir=$("$PYTHON" "$PY/mk.py" evil in-evil) && plain_dir=$("$PYTHON" "$PY/mk.py" plain in-plain) ||
    { fail "python3 wrote the inputs"; finish; }

inputs="trace.json snapshot.json job.log smi.csv"
for kind in evil plain; do
    [ $kind = evil ] && dir=$evil_dir || dir=$plain_dir
    mkdir -p "out-$kind"
    for f in $inputs; do
        for fmt in html md json; do
            vr_run "out-$kind/$f.$fmt" -q "$dir/$f" -o "out-$kind/$f.$fmt"
            if [ "$rc" -eq 0 ] && [ -s "out-$kind/$f.$fmt" ]; then
                [ $kind = evil ] && pass "$f: the $fmt report is written"
            else
                fail "$f ($kind names): the $fmt report is written" "exit $rc: $(head -c 300 "out-$kind/$f.$fmt.err")"
            fi
        done
    done
done

# vramreport diff (docs/diff.md): the trace before, the snapshot after; the
# same checks read its pages as "diff".
for kind in evil plain; do
    [ $kind = evil ] && dir=$evil_dir || dir=$plain_dir
    for fmt in html md json; do
        vr_run "out-$kind/diff.$fmt" diff -q "$dir/trace.json" "$dir/snapshot.json" -o "out-$kind/diff.$fmt"
        if [ "$rc" -eq 0 ] && [ -s "out-$kind/diff.$fmt" ]; then
            [ $kind = evil ] && pass "diff: the $fmt diff is written"
        else
            fail "diff ($kind names): the $fmt diff is written" "exit $rc: $(head -c 300 "out-$kind/diff.$fmt.err")"
        fi
    done
done

"$PYTHON" "$PY/check.py" $inputs diff >check.out 2>check.err || fail "check.py ran" "$(tail -5 check.err)"
tap_lines check.out
finish
