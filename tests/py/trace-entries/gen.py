# tests/trace-entries.sh runs this.
import json, pickle

MiB = 1 << 20
T0 = 1700000000000000


def device_trace(dev, n):
    """n rounds of alloc, free_requested, free_completed over one segment,
    an oom half-way, and the odd entries a memory event cannot state."""
    base = (0x7F0000000000 + dev * 0x1000000000)
    t = [T0]
    out = []

    def entry(action, addr, size, **kw):
        t[0] += 3
        e = {"action": action, "addr": addr, "size": size, "stream": dev,
             "time_us": t[0], "frames": []}
        e.update(kw)
        out.append(e)

    entry("segment_alloc", base, 64 * MiB)
    for i in range(n):
        addr, size = base + (i % 32) * 2 * MiB, (i % 7 + 1) * 512
        entry("alloc", addr, size)
        if i == n // 2:
            entry("oom", 0, 80 * MiB, device_free=1 * MiB)
        entry("free_requested", addr, size)
        entry("free_completed", addr, size)
    entry("alloc", base, 0)                        # a size of 0
    entry("free_completed", base, 512, device_free=7)  # a device_free
    out.append({"action": "alloc", "addr": base, "stream": dev, "time_us": t[0] + 1,
                "frames": []})                     # no size: a stream, no size
    out.append({"action": "segment_map", "addr": base, "size": MiB, "time_us": t[0] + 2,
                "frames": []})
    out.append({"action": "something_new", "addr": base, "size": 3, "time_us": t[0] + 3,
                "frames": []})
    out.append({"action": "free_completed", "addr": base + 5, "size": -4, "stream": 1,
                "time_us": t[0] + 4, "frames": []})   # a negative size
    return out


traces = [device_trace(0, 300), device_trace(1, 200)]
segments = [{"device": d, "address": 0x7F0000000000 + d * 0x1000000000,
             "total_size": 64 * MiB, "allocated_size": 0, "active_size": 0,
             "requested_size": 0, "stream": d, "segment_type": "large",
             "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
             "blocks": [{"address": 0x7F0000000000 + d * 0x1000000000, "size": 64 * MiB,
                         "requested_size": 0, "state": "inactive", "frames": []}]}
            for d in range(2)]
pickle.dump({"segments": segments, "device_traces": traces}, open("snap.pickle", "wb"),
            protocol=4)
# Another snapshot: device 0's history alone.
pickle.dump({"segments": segments[:1], "device_traces": traces[:1]},
            open("snap2.pickle", "wb"), protocol=4)
# (its one entry of a negative size is malformed: not stored)
open("n2.txt", "w").write("%d\n" % sum(1 for e in traces[0] if (e.get("size") or 0) >= 0))

# What the view must show, per device in order: the columns a user reads.
known = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
         "segment_map", "segment_unmap", "snapshot", "oom"}
rows = []
for dev, entries in enumerate(traces):
    for seq, e in enumerate(entries):
        if (e.get("size") or 0) < 0:
            continue                               # malformed: not stored
        rows.append([dev, seq, e["action"] if e["action"] in known else "other",
                     e.get("addr"), e.get("size"), e.get("stream"), e["time_us"] * 1000,
                     e.get("device_free")])
json.dump(rows, open("expected.json", "w"))
