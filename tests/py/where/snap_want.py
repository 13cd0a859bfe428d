# tests/where.sh runs this.
import collections, json, sys
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import load_pickle
d = load_pickle(sys.argv[1])
count = collections.Counter()
for entries in d["device_traces"]:
    for e in entries:
        if e["action"] != "alloc":
            continue
        user = None
        for fr in e.get("frames") or []:
            fn = fr["filename"].replace("\\", "/")
            if fn.endswith(".py") and "/torch/" not in fn and not fn.startswith("torch/"):
                user = "%s:%d in %s" % (fr["filename"], fr["line"], fr["name"])
                break
        count[user or "-"] += 1
print(json.dumps(count, sort_keys=True))
