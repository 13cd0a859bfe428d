# tests/segmap.sh runs this.
import pickle
MiB = 1 << 20
segs = []
# Every value its own object: PyTorch writes no back-references to
# containers (a shared tuple would be one), and our decoder refuses them.
for i in range(10000):
    size = 2 * MiB if i % 3 else (20 + i % 200) * MiB
    addr = (1 << 40) + i * (1 << 30)
    blocks, at = [], 0
    for k in range(4):
        b = size // 4
        blocks.append({"address": addr + at, "size": b, "requested_size": b,
                       "state": ("active_allocated", "inactive", "active_pending_free",
                                 "inactive")[(i + k) % 4], "frames": []})
        at += b
    segs.append({"device": 0, "address": addr, "total_size": size, "allocated_size": 0,
                 "active_size": 0, "requested_size": 0, "stream": 0,
                 "segment_type": "small" if size == 2 * MiB else "large",
                 "segment_pool_id": tuple([0, 0]), "is_expandable": i % 7 == 0,
                 "frames": [], "blocks": blocks})
open("many.pickle", "wb").write(pickle.dumps({"segments": segs, "device_traces": [[]]}, protocol=4))
