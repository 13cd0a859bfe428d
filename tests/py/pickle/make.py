# tests/pickle.sh runs this.
# Pickles for the checks below, written by python3's own pickle.dumps.
import os, pickle, struct, sys

out = sys.argv[1]


def save(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


# A snapshot-shaped dict (docs/formats/allocator-snapshot.md): frames lists
# shared between a block and a trace entry, frame dicts shared between
# stacks, addresses past 2^32 (LONG1), a filename past 255 bytes
# (BINUNICODE), 1,500 trace entries (APPENDS in batches of 1000), enough
# distinct strings for LONG_BINGET past slot 65535, and the odd values a
# hostile or future file may hold.
def snapshot(with_bytes):
    frames = [{"filename": "/src/model%d.py" % i + ("/deep" * 60 if i == 3 else ""),
               "line": i, "name": "forward_%d" % i} for i in range(40)]
    stacks = [frames[i:i + 5] for i in range(35)]
    segs = []
    for s in range(20):
        blocks = [{"address": 139926520725504 + s * 2**21 + b * 512, "size": 512,
                   "requested_size": 500, "state": ["active_allocated", "inactive"][b % 2],
                   "frames": stacks[(s + b) % 35]} for b in range(4)]
        segs.append({"device": 0, "address": 139926520725504 + s * 2**21,
                     "total_size": 2**21, "allocated_size": 1024, "active_size": 1024,
                     "requested_size": 1000, "stream": 0, "segment_type": "large",
                     "segment_pool_id": (0, 0), "is_expandable": False, "blocks": blocks})
    trace = [{"action": ["alloc", "free_requested", "free_completed"][i % 3],
              "addr": 139926520725504 + i * 512, "size": 512 * (i % 7), "stream": 0,
              "time_us": 1712195495519689 + i, "frames": stacks[i % 35]} for i in range(1500)]
    trace.append({"action": "oom", "device_free": 0, "size": 2**40, "stream": -1,
                  "time_us": 1712195495600000, "frames": []})
    labels = ["label-%d" % i for i in range(70000)]
    snap = {"segments": segs, "device_traces": [trace, [], trace[:3]],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
                                   "max_split_size": -1, "garbage_collection_threshold": 0.0,
                                   "expandable_segments": True,
                                   "roundup_power2_divisions": {"1": 1, "2": 4}},
            "external_annotations": [{"device": 0, "time_us": 1, "stage": "fwd"}],
            "labels": labels, "odd": {"too_large": 2**70, "negative": -(2**70),
                                      "min": -(2**63), "max": 2**63 - 1, "float": -1.5e-300,
                                      "none": None, "int_keys": {1: "a", -2: "b"},
                                      "tuple": (1, "x", (2.5, None), [3])}}
    if with_bytes:
        snap["odd"]["bytes"] = b"\x00\xff\x01"
        snap["odd"]["long_bytes"] = bytes(range(256)) * 2
    return snap


for p in (2, 3, 4, 5):
    save("shaped-p%d.pickle" % p, pickle.dumps(snapshot(p >= 3), protocol=p))


# Would run a command if loaded: os.system creating a marker file.
class Boom:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, ("touch '%s'" % self.marker,))


marker = os.path.join(out, "MARKER")
for p in (2, 4):
    save("boom-p%d.pickle" % p, pickle.dumps({"segments": [Boom(marker)]}, protocol=p))
# The same payload, pointed elsewhere, to prove it is real (python3 runs it).
save("boom-proof.pickle", pickle.dumps(Boom(os.path.join(out, "PROOF")), protocol=4))

P = b"\x80\x04"
save("memo-out-of-range.pickle", P + b"]\x94(K\x01h\xc8e.")
save("memo-long-out-of-range.pickle", P + b"j\xff\xff\xff\xff.")
save("huge-binunicode8.pickle", P + b"\x8d" + struct.pack("<Q", 2**60) + b"abc")
save("huge-binbytes8.pickle", P + b"\x8e" + struct.pack("<Q", 2**60) + b"abc")
save("huge-long4.pickle", P + b"\x8b" + struct.pack("<i", 2**31 - 1) + b"\x00")
save("huge-binunicode.pickle", P + b"X" + struct.pack("<I", 2**32 - 1) + b"abc")

sys.setrecursionlimit(100000)
deep = []
for _ in range(10000):
    deep = [deep]
save("deep-lists.pickle", pickle.dumps(deep, protocol=4))
save("deep-marks.pickle", P + b"](" * 10000 + b".")
bomb = []
for _ in range(100):
    bomb = [bomb, bomb]
save("memo-bomb.pickle", pickle.dumps(bomb, protocol=4))
cycle = []
cycle.append(cycle)
save("cycle.pickle", pickle.dumps(cycle, protocol=4))
save("not-a-pickle.json", b'{"segments": []}')
