# tests/breakdown.sh runs this.
import json
pre = 1000000
ops = [(100, 0xa00, 4096), (110, 0xb00, 8192), (120, 0x999, -2048), (130, 0xd00, 65536),
       (140, 0xa00, -4096), (150, 0xe00, 1024), (150, 0xd00, -65536), (160, 0xf00, 131072),
       (160, 0xb00, -8192), (170, 0xf00, -131072)]
ev, total = [], pre
for ts, addr, b in ops:
    total += b
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10,
               "tid": 10, "ts": ts,
               "args": {"Total Reserved": 8388608, "Total Allocated": total, "Bytes": b,
                        "Addr": addr, "Device Id": 0, "Device Type": 1}})
json.dump({"schemaVersion": 1, "traceEvents": ev}, open("synthetic.json", "w"))
