# tests/hardening.sh runs this.
import json, gzip
# 100 devices, each with its own allocation of (i + 1) MiB.
ev = []
for i in range(100):
    ev.append({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1000 + i,
               "args": {"Device Type": 1, "Device Id": i, "Addr": 4096 * (i + 1),
                        "Bytes": (i + 1) << 20, "Total Allocated": (i + 1) << 20,
                        "Total Reserved": 2 << 30}})
json.dump({"schemaVersion": 1, "traceEvents": ev,
           "deviceProperties": [{"id": i, "name": "GPU %d" % i, "totalGlobalMem": 80 << 30}
                                for i in range(100)]},
          open("devices100.json", "w"))
tiny = open("t.json").read()
open("trailing.json", "w").write(tiny + '\n{"traceEvents": []}\nmore garbage\n')
# One value over the scanner's 256 MiB limit, between two good events.
with gzip.open("oversized.json.gz", "wb", compresslevel=1) as f:
    f.write(b'{"schemaVersion": 1, "traceEvents": [\n')
    f.write(b'{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 10, "args": {"Device Type": 1, "Device Id": 0, "Addr": 4096, "Bytes": 1024, "Total Allocated": 1024, "Total Reserved": 2097152}},\n')
    f.write(b'{"ph": "X", "cat": "cpu_op", "name": "')
    chunk = b"x" * (1 << 20)
    for _ in range(257):
        f.write(chunk)
    f.write(b'", "pid": 1, "tid": 1, "ts": 20, "dur": 1},\n')
    f.write(b'{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 30, "args": {"Device Type": 1, "Device Id": 0, "Addr": 8192, "Bytes": 2048, "Total Allocated": 3072, "Total Reserved": 2097152}}\n')
    f.write(b']}\n')
