# tests/segmap.sh runs this.
import pickle
MiB = 1 << 20
evil = [{"filename": "/home/u/<script>alert(1)</script>.py", "line": 7,
         "name": "<img src=x onerror=alert(2)>"}]
seg = {"device": 0, "address": 1 << 40, "total_size": 20 * MiB, "allocated_size": 12 * MiB,
       "active_size": 12 * MiB, "requested_size": 12 * MiB, "stream": 0,
       "segment_type": "<script>alert(3)</script>", "segment_pool_id": (0, 0),
       "is_expandable": False, "frames": [], "blocks": [
           {"address": 1 << 40, "size": 12 * MiB, "requested_size": 12 * MiB,
            "state": "active_allocated", "frames": evil},
           {"address": (1 << 40) + 12 * MiB, "size": 8 * MiB, "requested_size": 0,
            "state": "inactive", "frames": []}]}
trace = [{"action": "alloc", "addr": 1 << 40, "size": 12 * MiB, "stream": 0,
          "time_us": 1700000000000000, "frames": evil}]
open("evil.pickle", "wb").write(pickle.dumps({"segments": [seg], "device_traces": [trace]}, protocol=4))
