# tests/headroom.sh runs this.
import json, sys
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import human_bytes
md = open(sys.argv[1]).read()
x = json.load(open(sys.argv[2]))
cap = json.load(open("gen.json"))["cap"]
rows = {
    "Headroom": "| Headroom | %s (capacity minus peak reserved) |" % human_bytes(cap - x["reserved"]),
    "Cached": "| Cached at the peak | %s:" % human_bytes(x["cached"]),
    "Live": "| Live at the peak | %s (allocations: %d) |" % (human_bytes(x["bytes"]), x["count"]),
}
for what, text in rows.items():
    print("%s\tMarkdown: the device summary states %s\t%s" % ("PASS" if text in md else "FAIL", what, text))
