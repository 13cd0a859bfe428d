# tests/bad-input.sh runs this.
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
def pipes(line):
    return len(re.findall(r"(?<!\\)\|", line))
tables, cur = [], []
for line in lines + [""]:
    if line.startswith("|"):
        cur.append(line)
    elif cur:
        tables.append(cur)
        cur = []
bad = []
for t in tables:
    want = pipes(t[0])
    for row in t[1:]:
        if pipes(row) != want:
            bad.append("%d vs %d: %s" % (pipes(row), want, row))
named = sum(1 for t in tables for row in t if "pipes" in row)
print(("PASS\t" if not bad else "FAIL\t") + "markup names: every Markdown table row has its header's cell count"
      + ("" if not bad else "\t" + " | ".join(bad[:3])))
print(("PASS\t" if named >= 2 else "FAIL\t") + "markup names: the \"| pipes |\" op is in the Markdown tables")
