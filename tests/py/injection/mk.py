# tests/injection.sh runs this.
"""Writes the four inputs to DIR, with hostile names or plain ones."""
import json, os, sys

EVIL = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(2)>',
    "' onmouseover='alert(3)",
    "a &amp; b & c",
    "javascript:alert(4)",
    "see http://evil.example/x",
    "ping @someone",
    "![x](http://evil.example/p.png)",
    "| table | breakers |",
    "`tick` ``fence``",
]
GPU_EVIL = 'A100 "<i>x</i>" & @someone'
# A directory the inputs sit in: its path shows in every report.
DIR_EVIL = "<script>alert(5)</script> \"q\" 'q' &amp; @someone"

def write(kind, out):
    names = EVIL if kind == "evil" else ["op_%d" % i for i in range(len(EVIL))]
    gpu = GPU_EVIL if kind == "evil" else "A100 plain"
    path = os.path.join(out, DIR_EVIL if kind == "evil" else "plain dir")
    os.makedirs(path, exist_ok=True)
    MiB = 1 << 20
    # A Kineto trace: each op owns an allocation that stays live to the peak.
    ev = [{"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": names[0]}},
          {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 10, "tid": 10,
           "ts": 50, "dur": 2000}]
    t = 100
    for i, n in enumerate(names):
        ev.append({"ph": "X", "cat": "cpu_op", "name": n, "pid": 10, "tid": 10, "ts": t, "dur": 50,
                   "args": {"External id": i + 1}})
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10,
                   "tid": 10, "ts": t + 10,
                   "args": {"Total Reserved": 64 * MiB, "Total Allocated": (i + 1) * MiB,
                            "Bytes": MiB, "Addr": 140000000000000 + MiB * i,
                            "Device Id": 0, "Device Type": 1}})
        t += 100
    json.dump({"schemaVersion": 1,
               "deviceProperties": [{"id": 0, "name": gpu, "totalGlobalMem": 85899345920}],
               "traceEvents": ev, "traceName": "worker0"},
              open(os.path.join(path, "trace.json"), "w"), indent=1)
    # An allocator snapshot (JSON form): one block per name, its frames the
    # names and a path; the trace allocates them in turn.
    blocks, trace, addr = [], [], 1 << 40
    for i, n in enumerate(names):
        frames = [{"filename": os.path.join("/home/u", names[(i + 1) % len(names)], "train.py"),
                   "line": 10 + i, "name": n}]
        blocks.append({"address": addr + i * 2 * MiB, "size": 2 * MiB, "requested_size": 2 * MiB,
                       "state": "active_allocated", "frames": frames})
        trace.append({"action": "alloc", "addr": addr + i * 2 * MiB, "size": 2 * MiB, "stream": 0,
                      "time_us": 1700000000000000 + 1000 * i, "frames": frames})
    seg = {"device": 0, "address": addr, "total_size": 2 * MiB * len(names),
           "allocated_size": 2 * MiB * len(names), "active_size": 2 * MiB * len(names),
           "requested_size": 2 * MiB * len(names), "stream": 0, "segment_type": "large",
           "segment_pool_id": [0, 0], "is_expandable": False, "frames": [], "blocks": blocks}
    json.dump({"segments": [seg], "device_traces": [trace]},
              open(os.path.join(path, "snapshot.json"), "w"))
    # A job log: a traceback through frames with the names, then an OOM.
    lines = ["step 1 loss 2.31", "Traceback (most recent call last):"]
    for i, n in enumerate(names):
        lines.append('  File "/home/u/%s/train.py", line %d, in %s' % (names[(i + 3) % len(names)], 20 + i, n))
        lines.append("    x = layer(x)")
    lines.append("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
                 "total capacity of 79.15 GiB of which 3.00 MiB is free. Including non-PyTorch memory, this "
                 "process has 79.14 GiB memory in use. Of the allocated memory 77.00 GiB is allocated by "
                 "PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated.")
    open(os.path.join(path, "job.log"), "w").write("\n".join(lines) + "\n")
    # nvidia-smi --query-compute-apps CSV: one process per name.
    rows = ["timestamp, gpu_name, gpu_bus_id, gpu_serial, gpu_uuid, pid, process_name, used_gpu_memory [MiB]"]
    for i, n in enumerate(names):
        rows.append("2026/07/14 08:12:%02d.500, %s, 00000000:00:09.0, 0000000000000, "
                    "GPU-6a5d1c2e-0000-4000-8000-000000000001, %d, %s, %d MiB" % (10 + i, gpu, 1000 + i, n, 100 + i))
    open(os.path.join(path, "smi.csv"), "w").write("\n".join(rows) + "\n")
    print(path)

if __name__ == "__main__":
    write(sys.argv[1], sys.argv[2])
