"""Oracle for tests/names.sh: what a reader of the report checks by eye.

check.py names REPORT.md REPORT.html PATH...: the inputs table names each
input by the fewest trailing path components that tell it from the others
(cut in the middle past 40 characters), the names are distinct, the full
path is in the last column and in an HTML title; the device headings
("## cuda:0 ...", "### cuda:0 ...") are all distinct and carry no full path.

check.py invisible REPORT...: no U+2060, U+200B or U+00AD anywhere.

check.py settings REPORT.md REPORT.html: every "Setting:" is code.
"""
import html
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from vrtest import result  # noqa: E402

MAX, HEAD = 40, 24


def expected_name(path, others):
    parts = path.split("/")
    if len(path) <= MAX:
        return path
    n = 1
    while n < len(parts):
        mine = "/".join(parts[-n:])
        if not any("/".join(o.split("/")[-n:]) == mine for o in others if o != path):
            break
        n += 1
    tail = "/".join(parts[-n:])
    if len(tail) <= MAX:
        return tail
    return tail[:HEAD] + "\u2026" + tail[len(tail) - (MAX - HEAD - 1):]


def names(md_path, html_path, paths):
    md = open(md_path, encoding="utf-8").read()
    page = open(html_path, encoding="utf-8").read()
    rows = {}
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 6 and cells[-1] in paths:
            rows[cells[-1]] = cells[0].replace("\\", "")
    result(sorted(rows) == sorted(paths), "every input has a row with its full path in the last column",
           f"{sorted(rows)}")
    shown = list(rows.values())
    result(len(set(shown)) == len(shown), "the inputs' shown names are distinct", f"{shown}")
    for p in paths:
        want = expected_name(p, paths)
        result(rows.get(p) == want, f"{p} is shown as {want!r}", f"got {rows.get(p)!r}")
        result(f'title="{html.escape(p, quote=True)}"' in page or f'title="{p}"' in page,
               f"the HTML has {p} in a title", "")
    heads = [ln for ln in md.splitlines() if re.match(r"#{2,3} cuda:", ln)]
    for level in ("## ", "### "):
        hs = [h for h in heads if h.startswith(level)]
        result(len(set(hs)) == len(hs), f"the '{level}cuda:' headings are distinct", f"{hs}")
    result(not any(p in h for h in heads for p in paths), "no device heading holds a full path", f"{heads}")


def invisible(reports):
    bad = {"\u2060": "U+2060", "\u200b": "U+200B", "\u00ad": "U+00AD"}
    for r in reports:
        text = open(r, encoding="utf-8").read()
        found = {name: text.count(ch) for ch, name in bad.items() if ch in text}
        result(not found, f"{os.path.basename(r)} has no invisible characters", f"{found}")


def settings(md_path, html_path):
    """Every "Setting:" is a code span (Markdown) or <code> (HTML)."""
    md = open(md_path, encoding="utf-8").read()
    page = open(html_path, encoding="utf-8").read()
    md_after = [m.group(1) for m in re.finditer(r"Setting: (.)", md)]
    html_after = [m.group(1) for m in re.finditer(r"Setting: (.{6})", page)]
    result(md_after and all(c == "`" for c in md_after), "Markdown: every Setting is a code span",
           f"{len(md_after)} settings, {md_after[:5]}")
    result(html_after and all(c == "<code>" for c in html_after), "HTML: every Setting is in <code>",
           f"{len(html_after)} settings, {html_after[:5]}")


if sys.argv[1] == "settings":
    settings(sys.argv[2], sys.argv[3])
elif sys.argv[1] == "names":
    names(sys.argv[2], sys.argv[3], sys.argv[4:])
else:
    invisible(sys.argv[2:])
