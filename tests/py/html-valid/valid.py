# tests/html-valid.sh runs this.
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
