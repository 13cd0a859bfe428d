#!/usr/bin/env python3
"""tests/bench/gen_snapshot_ooms.py: a large synthetic allocator snapshot
for timing the snapshot_replay pass (docs/performance.md, "Allocator
snapshots").

usage: gen_snapshot_ooms.py OUT.pickle [ENTRIES] [SEED]

2,000 segments of 20 MiB, each cut into 40 slots of 512 KiB; random
allocations (up to a slot) and frees keep about 48,000 blocks live, and
oom entries sit near the start (entry 10), in the middle and at the end,
so the walk back crosses almost every entry. The trace is written as a
pickle stream, a batch of entries at a time (the file is the shape of
torch.cuda.memory._dump_snapshot: a dict of segments and device_traces),
so the generator's memory stays small whatever ENTRIES is."""
import io, pickle, random, sys

MiB = 1 << 20
SEGMENTS, SLOTS, SLOT = 2000, 40, 512 * 1024
BASE = 1 << 40

def element(obj):
    """obj pickled without memo or header, to be spliced into a stream."""
    buf = io.BytesIO()
    p = pickle.Pickler(buf, protocol=2)
    p.fast = True  # no memo: the pieces are independent
    p.dump(obj)
    return buf.getvalue()[2:-1]  # drop PROTO 2 and STOP

def main():
    out = sys.argv[1]
    entries = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    slots = [BASE + s * 32 * MiB + i * SLOT for s in range(SEGMENTS) for i in range(SLOTS)]
    live = {}           # address -> requested size
    live_list = []      # the same addresses, for a random pick
    free = list(slots)
    t = 1700000000000000
    ooms = sorted({10, entries // 2, entries - 1})
    with open(out, "wb") as f:
        f.write(b"\x80\x02}(")                         # PROTO 2, EMPTY_DICT, MARK
        f.write(element("device_traces") + b"]]")      # key, outer list, device 0's list
        n = 0
        batch = []
        while n < entries:
            t += 1
            if ooms and n >= ooms[0]:
                ooms.pop(0)
                batch.append(element({"action": "oom", "size": 64 * MiB, "stream": 0,
                                      "device_free": MiB, "time_us": t}))
                n += 1
            elif free and (len(live) < 0.6 * len(slots) or rng.random() < 0.5):
                i = rng.randrange(len(free))
                free[i], free[-1] = free[-1], free[i]
                addr = free.pop()
                size = rng.randrange(1, SLOT // 512 + 1) * 512
                live[addr] = size
                live_list.append(addr)
                batch.append(element({"action": "alloc", "addr": addr, "size": size,
                                      "stream": 0, "time_us": t}))
                n += 1
            else:
                i = rng.randrange(len(live_list))
                live_list[i], live_list[-1] = live_list[-1], live_list[i]
                addr = live_list.pop()
                size = live.pop(addr)
                free.append(addr)
                for action in ("free_requested", "free_completed"):
                    batch.append(element({"action": action, "addr": addr, "size": size,
                                          "stream": 0, "time_us": t}))
                n += 2
            if len(batch) >= 1000:
                f.write(b"(" + b"".join(batch) + b"e")  # MARK ... APPENDS
                batch = []
        if batch:
            f.write(b"(" + b"".join(batch) + b"e")
        f.write(b"a")                                  # device 0's list into the outer one
        segs = []
        for s in range(SEGMENTS):
            start = BASE + s * 32 * MiB
            blocks = []
            for i in range(SLOTS):
                a = start + i * SLOT
                if a in live:
                    blocks.append({"address": a, "size": live[a], "requested_size": live[a],
                                   "state": "active_allocated"})
                    if live[a] < SLOT:
                        blocks.append({"address": a + live[a], "size": SLOT - live[a],
                                       "requested_size": 0, "state": "inactive"})
                else:
                    blocks.append({"address": a, "size": SLOT, "requested_size": 0,
                                   "state": "inactive"})
            segs.append({"device": 0, "address": start, "total_size": SLOTS * SLOT,
                         "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
                         "is_expandable": False, "blocks": blocks})
        f.write(element("segments") + element(segs))
        f.write(b"u.")                                 # SETITEMS, STOP

if __name__ == "__main__":
    main()
