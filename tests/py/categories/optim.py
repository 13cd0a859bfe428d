# tests/categories.sh runs this.
import sys
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import load_pickle
d = load_pickle(sys.argv[1])
blocks = [b for seg in d["segments"] for b in seg["blocks"] if b["state"] == "active_allocated"
          and any("/torch/optim/" in f.get("filename", "") for f in b.get("frames", []))]
print(len(blocks), sum(b["size"] for b in blocks))
