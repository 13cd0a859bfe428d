# tests/bandwidth.sh runs this.
import gzip, json, re, sys
from specs import SPECS
path = sys.argv[1]
if path.endswith(".gz"):
    names = [p["name"] for p in json.load(gzip.open(path))["deviceProperties"]][:1]
    if "hta-v100x2" in path:  # rank 1's events are on device 1 (both are the same model)
        names = [json.load(gzip.open(path))["deviceProperties"][1]["name"]]
else:
    text = open(path, encoding="utf-8", errors="replace").read()
    names = re.findall(r"<product_name>([^<]+)</product_name>", text) or \
        re.findall(r"^\s*Product Name\s*:\s*(.+?)\s*$", text, re.M)
print(sorted(set((n,) + (SPECS.get(n) or (None, None, None)) for n in names)))
