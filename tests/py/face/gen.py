# tests/face.sh runs this.
"""A training loop of 5 steps (ProfilerStep#N) that keeps 1 GiB a step,
then an [OutOfMemory] asking for 2 GiB; truth.json holds what it means."""
import json, sys
GiB = 1 << 30
path, opname, capacity = sys.argv[1], sys.argv[2], 16 * GiB
ev, alloc, reserved = [], 8 * GiB, 12 * GiB
series = []  # (ts_us, allocated, reserved)
def mem(ts, nbytes, addr):
    global alloc, reserved
    alloc += nbytes
    reserved = max(reserved, alloc + GiB)
    series.append((ts, alloc, reserved))
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
               "pid": 1, "tid": 1, "ts": ts,
               "args": {"Total Reserved": reserved, "Total Allocated": alloc, "Bytes": nbytes,
                        "Addr": addr, "Device Id": 0, "Device Type": 1}})
steps = []
for s in range(1, 6):
    t0 = s * 1000
    steps.append((s, t0))
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s,
               "pid": 1, "tid": 1, "ts": t0, "dur": 1000, "args": {}})
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
               "ts": t0 + 100, "dur": 300, "args": {}})
    mem(t0 + 150, 2 * GiB, 1 << 41)
    mem(t0 + 350, -2 * GiB, 1 << 41)
    ev.append({"ph": "X", "cat": "cpu_op", "name": opname, "pid": 1, "tid": 1,
               "ts": t0 + 500, "dur": 300, "args": {}})
    mem(t0 + 550, GiB, (1 << 40) + s * GiB)
oom_ts = 6000 - 10
ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[OutOfMemory]",
           "pid": 1, "tid": 1, "ts": oom_ts,
           "args": {"Device Type": 1, "Device Id": 0, "Bytes": 2 * GiB,
                    "Total Allocated": alloc, "Total Reserved": reserved}})
json.dump({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
           "deviceProperties": [{"id": 0, "name": "A100", "totalGlobalMem": capacity}],
           "traceEvents": ev}, open(path, "w"))
start = min(e["ts"] for e in ev)
peak = max(series, key=lambda p: p[1])  # the first highest allocated
json.dump({"start_us": start, "oom_us": oom_ts, "steps": steps, "capacity": capacity,
           "requested": 2 * GiB, "oom_allocated": alloc, "oom_reserved": reserved,
           "peak_allocated": peak[1], "peak_reserved": peak[2]}, open("truth.json", "w"))
