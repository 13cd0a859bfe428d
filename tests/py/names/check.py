"""Oracle for tests/names.sh: what a reader of the report checks by eye.

check.py names REPORT.md REPORT.html PATH...: the inputs table names each
input by the fewest trailing path components that tell it from the others
(cut in the middle past 40 characters), the names are distinct, the full
path is in the last column and in an HTML title; the device headings
("## cuda:0 ...", "### cuda:0 ...") are all distinct and carry no full path.

check.py tables REPORT.md REPORT.html PATH...: the GPUs table, the
processes table and the bandwidth table name each GPU's file as the inputs
table does, never by its full path; in the HTML that name carries the full
path in its title.

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


def section(md, heading):
    m = re.search(r"^## %s.*?(?=^## |\Z)" % re.escape(heading), md, re.M | re.S)
    return m.group(0) if m else ""


def tables(md_path, html_path, paths):
    md = open(md_path, encoding="utf-8").read()
    page = open(html_path, encoding="utf-8").read()
    shown = {p: expected_name(p, paths) for p in paths}
    result(all(shown[p] != p for p in paths), "the inputs' paths are long enough to be shortened", f"{shown}")
    # the first cell of the GPUs' and processes' rows, "GPU N of NAME" of the bandwidth rows
    gpu_rows = [ln for ln in section(md, "nvidia-smi").splitlines() if re.match(r"\| [^-|]", ln)
                and not ln.startswith(("| File ",))]
    first = [ln.strip("|").split("|")[0].strip().replace("\\", "") for ln in gpu_rows]
    bw = [m.group(1).replace("\\", "") for m in re.finditer(r"^\| GPU \S+ of (.*?)(?: \(.*?\))? \|",
                                                           section(md, "Bandwidth or capacity"), re.M)]
    for label, cells in (("GPUs and processes tables", first), ("bandwidth table", bw)):
        result(len(cells) >= len(paths) and set(cells) == set(shown.values()),
               f"in the {label}, each file is named as in the inputs table ({len(cells)} rows)",
               f"got {sorted(set(cells))}, want {sorted(shown.values())}")
    body = section(md, "nvidia-smi") + section(md, "Bandwidth or capacity")
    result(body and not any(p in body for p in paths), "no full path in the GPUs' or the bandwidth table",
           [p for p in paths if p in body])
    for p in paths:
        span = f'<span title="{html.escape(p, quote=True)}">{html.escape(shown[p], quote=False)}</span>'
        n = page.count(span)
        # the inputs table's, and one per row of the three tables
        want = 1 + sum(1 for c in first + bw if c == shown[p])
        result(n == want, f"the HTML names {shown[p]} with its full path in a title in every table ({n})",
               f"{n} spans, want {want}")


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
elif sys.argv[1] == "tables":
    tables(sys.argv[2], sys.argv[3], sys.argv[4:])
elif sys.argv[1] == "names":
    names(sys.argv[2], sys.argv[3], sys.argv[4:])
else:
    invisible(sys.argv[2:])
