# tests/snapshots.sh runs this.
import json, pickle
MiB, GiB = 1 << 20, 1 << 30
base = 1 << 40
seg = {"device": 0, "address": base, "total_size": 4 * MiB, "allocated_size": MiB,
       "active_size": MiB, "requested_size": MiB, "stream": 0, "segment_type": "small",
       "blocks": [{"address": base, "size": MiB, "state": "active_allocated", "frames": []},
                  {"address": base + MiB, "size": 3 * MiB, "state": "inactive", "frames": []}]}
t = 1700000000000000
def e(action, addr, size, dt, **kw):
    d = {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t + dt}
    d.update(kw)
    return d
trace = [e("free_completed", base + MiB, 2 * MiB, 0),          # allocated before the trace
         e("alloc", base + MiB, MiB, 1),
         e("free_requested", 5 * base, 70 * GiB, 2),            # never allocated, no segment
         e("free_completed", 5 * base, 70 * GiB, 3),
         e("alloc", 7 * base, 512, 4), e("free_completed", 7 * base, 512, 5),  # not judged
         e("oom", 0, 8 * MiB, 6, device_free=0),
         e("free_completed", 3 * base + 512, 512, 7),           # in a segment freed later
         e("segment_free", 3 * base, 2 * MiB, 8)]
open("frees.pickle", "wb").write(pickle.dumps({"segments": [seg], "device_traces": [trace]},
                                              protocol=4))
# What can be, as memory_viz would read the file without the two bad entries.
good = [x for x in trace if x["addr"] != 5 * base]
deltas = [x["size"] if x["action"] == "alloc" else -x["size"] if x["action"] == "free_completed"
          else 0 for x in good]
level = MiB - sum(deltas)
pre, peak, oom_at = level, level, None
for x, d in zip(good, deltas):
    level += d
    peak = max(peak, level)
    if x["action"] == "oom":
        oom_at = level
json.dump([peak, pre, oom_at], open("frees.want", "w"))
