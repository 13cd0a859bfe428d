# tests/snapshots.sh runs this.
import pickle
MiB, GiB = 1 << 20, 1 << 30
base = 1 << 40
good = {"device": 0, "address": base, "total_size": 2 * MiB, "allocated_size": MiB,
        "active_size": MiB, "requested_size": MiB, "stream": 0, "segment_type": "small",
        "blocks": [{"address": base, "size": MiB, "requested_size": MiB,
                    "state": "active_allocated", "frames": []},
                   {"address": base + MiB, "size": MiB, "requested_size": 0,
                    "state": "inactive", "frames": []}]}
small = {"device": 0, "address": base + 4 * MiB, "total_size": MiB, "allocated_size": 0,
         "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "small",
         "blocks": [{"address": base + 4 * MiB, "size": 80 * GiB, "requested_size": 80 * GiB,
                     "state": "active_allocated", "frames": []},
                    {"address": -512, "size": 512, "state": "active_allocated"}]}
negative = dict(good, address=base + 8 * MiB, total_size=-GiB, blocks=[])
t = 1700000000000000
trace = [{"action": "alloc", "addr": base, "size": MiB, "stream": 0, "time_us": t},
         {"action": "alloc", "addr": base + MiB, "size": -GiB, "stream": 0, "time_us": t + 1},
         {"addr": base, "size": MiB, "time_us": t + 2}]
data = pickle.dumps({"segments": [negative, good, small], "device_traces": [trace]}, protocol=4)
open("impossible.pickle", "wb").write(data + b"garbage")
bad = {"segments": [negative, {"device": 0}], "device_traces": [[{"addr": 1}]]}
open("all-malformed.pickle", "wb").write(pickle.dumps(bad, protocol=4))
