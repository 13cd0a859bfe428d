# tests/where.sh runs this.
import json, sys
ev, t = [], 0.0
for i in range(150):
    ev.append({"ph": "X", "cat": "python_function", "name": "nn.Module: DeepBlock_%d" % i,
               "pid": 1, "tid": 1, "ts": t + i, "dur": 1000.0 - 2 * i, "args": {"Python id": i + 1}})
ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 500.0,
           "args": {"Device Type": 1, "Device Id": 0, "Addr": 4096, "Bytes": 512,
                    "Total Allocated": 512, "Total Reserved": 2 << 20}})
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
