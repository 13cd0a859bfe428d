# tests/many-report.sh runs this.
import json, os, sys
MiB, GiB = 1 << 20, 1 << 30
for r in range(40):
    ev = []
    for dev, mib in ((0, 1000 + 10 * r), (1, 500 + r)):
        alloc = 0
        for k in range(4):
            b = mib * MiB if k < 3 else -mib * MiB
            alloc += b
            ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                       "pid": 1, "tid": 1, "ts": 1000 * r + 10 * dev + k + 1,
                       "args": {"Total Reserved": 8 * GiB, "Total Allocated": alloc, "Bytes": b,
                                "Addr": (1 << 40) + dev * (1 << 32) + (k % 3) * GiB,
                                "Device Id": dev, "Device Type": 1}})
    json.dump({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
               "distributedInfo": {"rank": r, "world_size": 40}, "traceEvents": ev},
              open(os.path.join(sys.argv[1], "r%02d.json" % r), "w"))
