# tests/snapshot-ooms.sh runs this.
"""Two devices. cuda:0: two streams, a large segment split by allocs and
frees, a small segment, OOMs in the middle (one whose request fits a free
block of the other stream), later frees, a segment freed after the first
OOM, a free whose size is not a multiple of 512 (internal waste from the
trace) and a live block of the same kind (from the end state), a block
left waiting to be freed. cuda:1: expandable segments mapped, cut and unmapped around an OOM."""
import json, sys
from sim import Allocator, dump, MiB, BASE

a = Allocator(0)
S1, S2, S3, S4 = BASE, BASE + 64 * MiB, BASE + 128 * MiB, BASE + 192 * MiB
a.segment_alloc(S1, 20 * MiB, 0)
a.segment_alloc(S2, 2 * MiB, 0, "small")
a.segment_alloc(S3, 20 * MiB, 7)
a.alloc(S1, 4 * MiB, 0)
a.alloc(S1 + 4 * MiB, 3 * MiB, 0)
a.alloc(S1 + 7 * MiB, 5 * MiB, 0)
a.alloc(S1 + 12 * MiB, 6 * MiB, 0)
a.alloc(S2, 1000, 0)               # a 1024-byte block
a.alloc(S2 + 1024, 64 * 1024, 0)
a.alloc(S2 + 66 * 1024, 3000, 0)    # a 3072-byte block, live to the end
a.alloc(S3, 2 * MiB, 7)
a.free(S1 + 4 * MiB)                # 3 MiB hole
a.segment_alloc(S4, 20 * MiB, 0)    # freed after the first OOM
a.alloc(S4, 18 * MiB, 0)
a.alloc(S1 + 18 * MiB, MiB + 512, 0)
# 9 MiB asked on stream 0: the largest free block there is 3 MiB; stream 7
# has 18 MiB free in one block.
a.oom(9 * MiB, 0, 5 * MiB)
a.free(S2)                          # requested 1000: the block comes back as 1024
a.free(S1 + 12 * MiB)
a.free(S4)
a.segment_free(S4)
a.alloc(S3 + 2 * MiB, 4 * MiB, 7)
a.oom(600 * 1024, 7, 1 * MiB)       # a small request on a stream with no small pool
a.free(S1 + 7 * MiB)
a.alloc(S1 + 4 * MiB, 2 * MiB, 0)
a.free(S3 + 2 * MiB, complete=False)  # still waiting at the end
a.oom(30 * MiB, 0, 0)               # the snapshot ends on it

b = Allocator(1)
E = BASE + (1 << 36)
b.segment_map(E, 20 * MiB, 0)
b.alloc(E, 8 * MiB, 0)
b.segment_map(E + 20 * MiB, 20 * MiB, 0)
b.alloc(E + 8 * MiB, 20 * MiB, 0)
b.segment_map(E + 60 * MiB, 20 * MiB, 0)   # a second, separate range
b.alloc(E + 60 * MiB, 2 * MiB, 0)
b.oom(40 * MiB, 0, 2 * MiB)
b.free(E + 60 * MiB)
b.segment_unmap(E + 60 * MiB, 20 * MiB, 0)
b.free(E + 8 * MiB)
b.segment_unmap(E + 20 * MiB, 20 * MiB, 0)
b.segment_map(E + 20 * MiB, 20 * MiB, 0)
b.alloc(E + 8 * MiB, 30 * MiB, 0)

def anchor(al):
    """What the import's running totals say at each oom: the end state
    minus the recorded changes after it (entries carry requested sizes,
    so a block rounded up leaves its rounding in)."""
    end = sum(blk[0] for blk in al.blocks.values())
    ooms = [i for i, e in enumerate(al.trace) if e["action"] == "oom"]
    for w, i in zip(al.expected, ooms):
        w["import_allocated"] = end - sum(
            e["size"] if e["action"] == "alloc" else -e["size"] if e["action"] == "free_completed"
            else 0 for e in al.trace[i + 1:])

anchor(a)
anchor(b)
# An alloc that also says device_free is stored as a trace_entry_other row
# and a memory event that is not an entry: the replay's unchecked read
# (every row from the device's last entry down) no longer counts only the
# device's entries there, and the device is walked again, filtered.
next(e for e in a.trace if e["action"] == "alloc" and e["addr"] == S3 + 2 * MiB)["device_free"] = MiB
dump("history.pickle", [a, b])
# The same history with its first 14 entries lost off the ring buffer:
# three segments and the first allocations are pre-existing.
dump("dropped.pickle", [a, b], drop=14)
# The same end state listed from the highest address down: the replay,
# which loads blocks as the table lists them while their addresses rise,
# reads them again sorted.
dump("reversed.pickle", [a, b], reverse=True)
json.dump({"0": a.expected, "1": b.expected}, open("history.want", "w"), indent=1)
