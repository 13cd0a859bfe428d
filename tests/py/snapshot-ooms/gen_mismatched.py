# tests/snapshot-ooms.sh runs this.
import pickle
MiB = 1 << 20
B = 1 << 40
seg = {"device": 0, "address": B, "total_size": 20 * MiB, "stream": 0, "segment_type": "large",
       "segment_pool_id": (0, 0), "is_expandable": False, "frames": [], "blocks": [
           {"address": B, "size": 4 * MiB, "requested_size": 4 * MiB, "state": "active_allocated"},
           {"address": B + 2 * MiB, "size": 4 * MiB, "requested_size": 4 * MiB,
            "state": "active_allocated"},   # overlaps the one before
           {"address": B + 6 * MiB, "size": 14 * MiB, "requested_size": 0, "state": "inactive"}]}
t = 1700000000000000
def e(action, **kw):
    global t
    t += 1
    d = {"action": action, "time_us": t, "stream": 0}
    d.update(kw)
    return d
trace = [e("oom", size=30 * MiB, device_free=0),
         e("free_completed", addr=B + 100 * MiB, size=MiB),       # no segment there
         e("alloc", addr=B + 8 * MiB, size=MiB),                  # no block there
         e("segment_free", addr=B + 10 * MiB, size=20 * MiB),     # overlaps the segment
         e("segment_free", addr=B + 200 * MiB, size=-5),          # a negative size
         e("segment_map", addr=B + 300 * MiB, size=20 * MiB),     # maps nothing held
         e("segment_unmap", addr=(1 << 63) - 10, size=20 * MiB),  # past the end of addresses
         e("free_requested", addr=B + 12 * MiB, size=MiB),
         e("alloc", size=MiB),                                     # no address
         e("alloc", addr=B, size=4 * MiB)]                         # the one real change
pickle.dump({"segments": [seg], "device_traces": [trace]}, open("mismatch.pickle", "wb"), protocol=4)
