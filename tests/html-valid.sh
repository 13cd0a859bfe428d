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
[ "${#pages[@]}" -gt 0 ] || { fail "reports to validate" "none written"; finish; }

cat >valid.py <<'PYEOF'
import re, subprocess, sys
import xml.etree.ElementTree as ET

SVG_NS = "{http://www.w3.org/2000/svg}svg"
ALIGN = re.compile(r'<t[dh]> attribute "align" not allowed for HTML5$')
SVG_ATTR = re.compile(r'<svg> proprietary attribute "[a-z-]+"$')
SVG_RE = re.compile(r"<svg\b.*?</svg>", re.S)


def tidy(text):
    """tidy's messages on text (errors and warnings), and its exit status."""
    p = subprocess.run(["tidy", "-q", "-e", "--show-warnings", "yes", "--gnu-emacs", "no"],
                       input=text.encode("utf-8"), capture_output=True, timeout=60)
    msgs = [re.sub(r"^line \d+ column \d+ - ", "", l) for l in p.stderr.decode("utf-8", "replace").splitlines() if l.strip()]
    return msgs, p.returncode


def report(ok, desc, detail=""):
    print("PASS\t%s" % desc if ok else "FAIL\t%s\t%s" % (desc, detail))


for page in sys.argv[1:]:
    text = open(page, encoding="utf-8").read()
    name = page[:-len(".html")]
    msgs, rc = tidy(text)
    errors = [m for m in msgs if m.startswith("Error:")]
    report(not errors and rc < 2, "%s: tidy finds no error" % name, "; ".join(errors[:5]) or "tidy exit %d" % rc)
    other = [m for m in msgs if m.startswith("Warning:") and not ALIGN.search(m) and not SVG_ATTR.search(m)]
    report(not other, "%s: tidy warns of nothing but the accepted" % name, "; ".join(other[:5]))
    svgs = SVG_RE.findall(text)
    msgs, rc = tidy(SVG_RE.sub("", text))
    other = [m for m in msgs if not ALIGN.search(m)]
    report(not other and rc < 2, "%s: without its %d SVG, the page is clean HTML5 for tidy" % (name, len(svgs)),
           "; ".join(other[:5]))
    bad = []
    for i, svg in enumerate(svgs):
        try:
            root = ET.fromstring(svg)
            if root.tag != SVG_NS:
                bad.append("SVG %d: root %s" % (i + 1, root.tag))
        except ET.ParseError as e:
            bad.append("SVG %d: %s" % (i + 1, e))
    if svgs:
        report(not bad, "%s: its %d SVG are well-formed XML in the SVG namespace" % (name, len(svgs)), "; ".join(bad[:5]))
    ids = re.findall(r'\sid="([^"]*)"', SVG_RE.sub("", text)) + [i for s in svgs for i in re.findall(r'\sid="([^"]*)"', s)]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    report(not dup, "%s: no id is used twice" % name, "duplicates: %s" % ", ".join(dup[:5]))
PYEOF
"$PYTHON" valid.py "${pages[@]}" >valid.out 2>valid.err || fail "valid.py ran" "$(tail -5 valid.err)"
tap_lines valid.out
n_svg=$(cat "${pages[@]}" | grep -o '<svg ' | wc -l | tr -d ' ')
[ "$n_svg" -gt 5 ] && pass "the pages hold SVG charts to check ($n_svg)" || fail "the pages hold SVG charts to check" "$n_svg"
finish
