# tests/breakdown.sh runs this.
import json, sys
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import human_bytes
md = open(sys.argv[1], encoding="utf-8").read().splitlines()
dev = json.load(open(sys.argv[2]))["devices"][0]
for c, b in dev["peak_breakdown"].items():
    row = "| %s | %s | %.1f%% |" % (c.replace("_", "\\_"), human_bytes(b), 100.0 * b / dev["peak_allocated_bytes"])
    if c == "kv_cache" and b == 0:
        # a run without a KV cache (most) has no row for it
        none = not any(l.startswith("| kv\\_cache |") for l in md)
        print(("PASS" if none else "FAIL") + "\tMarkdown: no row for an empty kv_cache")
        continue
    print(("PASS" if row in md else "FAIL") + "\tMarkdown: the table's row %s" % row)
