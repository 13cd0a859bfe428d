# tests/breakdown-many.sh runs this.
import json, sys
MiB, GiB = 1 << 20, 1 << 30
ev, ts = [], 0
for d in range(3000):
    alloc = 0
    for k in range(4):
        b = (100 + (d * 37) % 900) * MiB * (1 if k < 3 else -1)
        alloc += b
        ts += 1
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                   "pid": 1, "tid": 1, "ts": ts,
                   "args": {"Total Reserved": 4 * GiB, "Total Allocated": alloc, "Bytes": b,
                            "Addr": (1 << 40) + d * (1 << 32) + (k % 3) * GiB,
                            "Device Id": d, "Device Type": 1}})
json.dump({"schemaVersion": 1, "traceEvents": ev}, sys.stdout)
