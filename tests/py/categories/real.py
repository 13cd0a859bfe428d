# tests/categories.sh runs this.
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else []
opt = sum(1 for e in ev if e.get("ph") == "X" and str(e.get("name", "")).startswith("Optimizer.step#"))
bwd = {e.get("tid") for e in ev if e.get("ph") == "X" and
       str(e.get("name", "")).startswith("autograd::engine::evaluate_function")}
print(opt, len({int(t) for t in bwd}), ",".join(str(int(t)) for t in sorted(bwd, key=int)))
