# tests/where.sh runs this.
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
PID = 4242
mem = [e for e in ev if e.get("name") == "[memory]"]
total = max(e["args"]["Total Allocated"] for e in mem)
t = 2000.0
for i in range(8):
    ev.append({"ph": "X", "cat": "python_function", "name": "nn.Module: Extra_%d" % i,
               "pid": PID, "tid": PID, "ts": t, "dur": 10.0,
               "args": {"Python id": 1000 + i, "Python module id": i}})
    total += (i + 1) << 20
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
               "pid": PID, "tid": PID, "ts": t + 5,
               "args": {"Total Reserved": 1 << 30, "Total Allocated": total, "Bytes": (i + 1) << 20,
                        "Addr": 0x100000 + i * 0x1000, "Device Id": 0, "Device Type": 1}})
    t += 20
json.dump(d, open(sys.argv[2], "w"))
