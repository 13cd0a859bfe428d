# tests/hardening.sh runs this.
import json
ev, total = [], 0
for i in range(30000):
    total += 4096
    ev.append({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 10 * i,
               "args": {"Device Type": 1, "Device Id": 0, "Addr": 65536 * (i + 1), "Bytes": 4096,
                        "Total Allocated": total, "Total Reserved": 1 << 30}})
for i in range(30000):
    total -= 4096
    ev.append({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 300000 + 10 * i,
               "args": {"Device Type": 1, "Device Id": 0, "Addr": 65536 * (i + 1), "Bytes": -4096,
                        "Total Allocated": total, "Total Reserved": 1 << 30}})
json.dump({"schemaVersion": 1, "traceEvents": ev}, open("analysis.json", "w"))
