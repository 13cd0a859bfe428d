# tests/segmap.sh runs this.
"""The segment map a snapshot should give, read with every global refused."""
import json, sys
import os
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import load_pickle

STATES = {"active_allocated": "allocated", "active_pending_free": "pending",
          "active_awaiting_free": "pending", "inactive": "free"}

def load(path):
    d = load_pickle(path)
    return {"segments": d, "device_traces": []} if isinstance(d, list) else d

def row(seg):
    r = {"bytes": seg["total_size"], "allocated": 0, "pending": 0, "free": 0, "other": 0}
    for b in seg["blocks"]:
        r[STATES.get(b["state"], "other")] += b["size"]
    r["other"] += max(0, seg["total_size"] - sum(b["size"] for b in seg["blocks"]))
    return r

def expected(path, max_rows):
    d = load(path)
    out = {}
    for seg in d["segments"]:
        out.setdefault(seg.get("device", 0), []).append(seg)
    devices = {}
    for dev, segs in sorted(out.items()):
        segs.sort(key=lambda s: (-s["total_size"], s["address"]))
        rows = [row(s) for s in segs]
        rest = rows[max_rows:]
        in_use = sum(r["bytes"] - r["free"] - r["other"] for r in rows)
        traces = d.get("device_traces", [])
        entries = traces[dev] if dev < len(traces) else None
        # The timeline ends at the end state: what was live before the
        # first entry is the end state minus every recorded change (all of
        # it when the history is empty); no history list: not known.
        deltas = sum(+e["size"] if e["action"] == "alloc" else
                     -e["size"] if e["action"] == "free_completed" else 0 for e in entries or [])
        devices[str(dev)] = {
            "segments": len(rows), "rows": rows[:max_rows],
            "rest": None if not rest else {
                "segments": len(rest), "bytes": sum(r["bytes"] for r in rest),
                **{k: sum(r[k] for r in rest) for k in ("allocated", "pending", "free", "other")}},
            "pre_existing": max(0, in_use - deltas) if entries is not None else None,
        }
    return devices

if __name__ == "__main__":
    print(json.dumps(expected(sys.argv[1], int(sys.argv[2])), sort_keys=True))
