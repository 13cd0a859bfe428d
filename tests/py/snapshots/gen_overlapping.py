# tests/snapshots.sh runs this.
import pickle
MiB = 1 << 20
base = 1 << 40
def seg(addr, size):
    return {"device": 0, "address": addr, "total_size": size, "allocated_size": 0,
            "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "large",
            "blocks": [{"address": addr, "size": size, "state": "inactive", "frames": []}]}
t = 1700000000000000
def e(action, addr, size, dt):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t + dt}
trace = [e("free_completed", base + 10 * MiB, MiB, 0),       # in the wide segment only
         e("segment_free", base - 8 * MiB, 24 * MiB, 1)]
open("overlap.pickle", "wb").write(pickle.dumps(
    {"segments": [seg(base, 4 * MiB)], "device_traces": [trace]}, protocol=4))
segs = [seg(base + 4 * MiB * i, 2 * MiB) for i in range(20000)]
far = base + 4 * MiB * 20000
trace = [e("free_completed", far + 4096 * i, 512, i) for i in range(40000)]
open("manyfrees.pickle", "wb").write(pickle.dumps({"segments": segs, "device_traces": [trace]},
                                                  protocol=4))
