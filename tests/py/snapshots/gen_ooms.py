# tests/snapshots.sh runs this.
import pickle
MiB = 1 << 20
def snapshot(after_oom):
    seg = {"device": 0, "address": 1 << 40, "total_size": 20 * MiB, "allocated_size": 14 * MiB,
           "active_size": 14 * MiB, "requested_size": 14 * MiB, "stream": 0,
           "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
           "frames": [], "blocks": [
               {"address": 1 << 40, "size": 12 * MiB, "requested_size": 12 * MiB - 100,
                "state": "active_allocated", "frames": []},
               {"address": (1 << 40) + 12 * MiB, "size": 6 * MiB, "requested_size": 0,
                "state": "inactive", "frames": []},
               {"address": (1 << 40) + 18 * MiB, "size": 2 * MiB, "requested_size": 2 * MiB,
                "state": "active_allocated", "frames": []}]}
    t = 1700000000000000
    trace = [{"action": "segment_alloc", "addr": 1 << 40, "size": 20 * MiB, "stream": 0, "time_us": t},
             {"action": "alloc", "addr": 1 << 40, "size": 12 * MiB, "stream": 0, "time_us": t + 1},
             {"action": "alloc", "addr": (1 << 40) + 18 * MiB, "size": 2 * MiB, "stream": 0,
              "time_us": t + 1},
             {"action": "oom", "device_free": 1 * MiB, "size": 8 * MiB, "stream": 0, "time_us": t + 2}]
    if after_oom:
        trace.append({"action": "alloc", "addr": (1 << 40) + 12 * MiB, "size": 512, "stream": 0,
                      "time_us": t + 3})
        trace.append({"action": "free_completed", "addr": (1 << 40) + 12 * MiB, "size": 512,
                      "stream": 0, "time_us": t + 4})
    return {"segments": [seg], "device_traces": [trace]}
open("oom-last.pickle", "wb").write(pickle.dumps(snapshot(False), protocol=4))
open("oom-earlier.pickle", "wb").write(pickle.dumps(snapshot(True), protocol=4))
