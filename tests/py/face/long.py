# tests/face.sh runs this.
import html as H, re, sys
full = sys.argv[1]
page = open("long.html", encoding="utf-8").read()
md = open("long.md", encoding="utf-8").read()
def say(ok, what, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + what + ("\t" + str(detail) if not ok else ""))
inputs = page[page.find("<h2>Inputs</h2>"):]
inputs = inputs[:inputs.find("</table>")]
cell = re.search(r'<td><span title="([^"]*)">([^<]*)</span></td>', inputs)
say(cell and H.unescape(cell.group(1)) == full, "HTML: the full path is the file cell's title=", cell and cell.groups())
short = H.unescape(cell.group(2)) if cell else ""
say(0 < len(short) <= 40 and short.endswith(".json") and "/" not in short,
    "HTML: the cell shows a short name (<= 40 characters, the extension kept)", short)
say(full not in re.sub(r'title="[^"]*"', "", inputs), "HTML: the full path is not in the table's text")
rows = [l for l in md.splitlines() if l.startswith("| " + short + " |")]
say(len(rows) == 1 and rows[0].split(" | ")[0] == "| " + short and rows[0].rstrip().endswith(full.replace("_", "\\_") + " |"),
    "Markdown: the short name first, the full path in the last column", rows)
say(re.search(r"^\| File \| Format \| Records \| Size \| Notes \| Full path \|$", md, re.M),
    "Markdown: the Notes come before the full path")
