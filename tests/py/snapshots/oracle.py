# tests/snapshots.sh runs this.
"""What a snapshot holds, read by Python with every global refused."""
import collections, json, pickle, sys

import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import load_pickle

def load(path):
    d = load_pickle(path)
    return {"segments": d, "device_traces": []} if isinstance(d, list) else d

def figures(path):
    d = load(path)
    out = {}
    for seg in d["segments"]:
        dev = out.setdefault(seg.get("device", 0), {
            "reserved": 0, "allocated": 0, "in_use": 0, "segments": 0, "blocks": 0,
            "largest_free": None, "actions": collections.Counter(), "entries": 0})
        dev["reserved"] += seg["total_size"]
        dev["segments"] += 1
        for b in seg["blocks"]:
            dev["blocks"] += 1
            if b["state"] == "active_allocated":
                dev["allocated"] += b["size"]
            if b["state"] != "inactive":
                dev["in_use"] += b["size"]
            if b["state"] == "inactive":
                dev["largest_free"] = max(dev["largest_free"] or 0, b["size"])
    for i, entries in enumerate(d.get("device_traces", [])):
        dev = out.setdefault(i, {"reserved": 0, "allocated": 0, "in_use": 0, "segments": 0,
                                 "blocks": 0, "largest_free": None,
                                 "actions": collections.Counter(), "entries": 0})
        dev["entries"] = len(entries)
        # The timeline ends at the end state: allocated before the first
        # entry is the end state minus every recorded change.
        deltas = [(+e["size"] if e["action"] == "alloc" else
                   -e["size"] if e["action"] == "free_completed" else 0) for e in entries]
        level = dev["in_use"] - sum(deltas)
        peak = level
        for x in deltas:
            level += x
            peak = max(peak, level)
        dev["peak"] = max(peak, dev["in_use"])
        dev["pre_existing"] = max(0, dev["in_use"] - sum(deltas))
        for e in entries:
            dev["actions"][e["action"]] += 1
    for dev in out.values():
        dev["actions"] = dict(dev["actions"])
    return out

if __name__ == "__main__":
    print(json.dumps({str(k): v for k, v in figures(sys.argv[1]).items()}, sort_keys=True))
