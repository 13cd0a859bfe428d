# tests/breakdown.sh runs this.
import json, sys
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import human_bytes
md = open(sys.argv[1], encoding="utf-8").read().splitlines()
dev = json.load(open(sys.argv[2]))["devices"][0]
for c, b in dev["peak_breakdown"].items():
    row = "| %s | %s | %.1f%% |" % (c.replace("_", "\\_"), human_bytes(b), 100.0 * b / dev["peak_allocated_bytes"])
    if b == 0:
        # an empty category has no row: it is named on the "Nothing in:" line
        name = c.replace("_", "\\_")
        none = not any(l.startswith("| %s |" % name) for l in md)
        named = any(l.startswith("Nothing in: ") and name in l for l in md)
        print(("PASS" if none and named else "FAIL") +
              "\tMarkdown: no row for the empty %s, named under the table" % c)
        continue
    print(("PASS" if row in md else "FAIL") + "\tMarkdown: the table's row %s" % row)
