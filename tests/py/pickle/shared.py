# tests/pickle.sh runs this.
import os, pickle, pickletools, sys

out = sys.argv[1]
pool = (3, 7)                     # one object, shared by every segment
segs = [{"device": 0, "address": 2**40 + i * 2**21, "total_size": 2**21,
         "allocated_size": 0, "active_size": 0, "requested_size": 0, "stream": 0,
         "segment_type": "small", "segment_pool_id": pool, "is_expandable": False,
         "blocks": [{"address": 2**40 + i * 2**21, "size": 2**21, "requested_size": 0,
                     "state": "inactive", "frames": []}]} for i in range(10000)]
snap = {"segments": segs, "device_traces": [[]]}


def unframed(data):
    """The same pickle without its FRAME opcodes (a valid pickle: framing is optional)."""
    cut = [pos for op, arg, pos in pickletools.genops(data) if op.name == "FRAME"]
    for pos in reversed(cut):
        data = data[:pos] + data[pos + 9:]
    return data


for p in (2, 3, 4, 5):
    data = pickle.dumps(snap, protocol=p)
    open(os.path.join(out, "pool-p%d.pickle" % p), "wb").write(data)
    if p >= 4:
        open(os.path.join(out, "pool-p%d-unframed.pickle" % p), "wb").write(unframed(data))
