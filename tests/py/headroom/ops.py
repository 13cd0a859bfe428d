# tests/headroom.sh runs this.
import json, sys
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import human_bytes
md = open(sys.argv[1]).read()
x = json.load(open(sys.argv[2]))
for name, (n, b) in sorted(x["per_op"].items()):
    row = [l for l in md.splitlines() if l.startswith("| %s |" % name.replace("_", "\\_"))]
    cell = "%d (%s)" % (n, human_bytes(b))
    ok = len(row) == 1 and row[0].rstrip().endswith("| %s |" % cell)
    print("%s\tMarkdown: %s's live-at-peak cell is %s\t%s" % ("PASS" if ok else "FAIL", name, cell, row))
