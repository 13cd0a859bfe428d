# tests/breakdown.sh runs this.
import json
ev = []
for ts, addr, b, total in [(100, 0xa00, 4096, 1024), (110, 0xb00, 8192, 5120), (120, 0xa00, -4096, 1024)]:
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10,
               "tid": 10, "ts": ts,
               "args": {"Total Reserved": 8388608, "Total Allocated": total, "Bytes": b,
                        "Addr": addr, "Device Id": 0, "Device Type": 1}})
json.dump({"schemaVersion": 1, "traceEvents": ev}, open("over.json", "w"))
