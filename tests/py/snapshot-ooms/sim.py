# tests/snapshot-ooms.sh runs this.
"""A forward model of the CUDA caching allocator's layout, and snapshots
written from it (pickle, shaped like torch.cuda.memory._dump_snapshot)."""
import json, pickle

MiB = 1 << 20
BASE = 1 << 40

def round_block(n):
    return max(512, (n + 511) // 512 * 512)

class Allocator:
    def __init__(self, device=0):
        self.device = device
        self.ranges = {}   # address -> [size, stream, type, expandable]: held ranges
        self.blocks = {}   # address -> [size, requested, state, stream]
        self.trace = []
        self.t = 1700000000000000
        self.expected = []  # per oom, in order

    def entry(self, action, **kw):
        self.t += 1
        e = {"action": action, "time_us": self.t, "frames": []}
        e.update(kw)
        self.trace.append(e)

    # history
    def segment_alloc(self, addr, size, stream, kind="large"):
        self.ranges[addr] = [size, stream, kind, False]
        self.entry("segment_alloc", addr=addr, size=size, stream=stream)

    def segment_free(self, addr):
        size, stream, _, _ = self.ranges.pop(addr)
        assert not any(addr <= a < addr + size for a in self.blocks)
        self.entry("segment_free", addr=addr, size=size, stream=stream)

    def segment_map(self, addr, size, stream):
        self.ranges[addr] = [size, stream, "large", True]
        self.entry("segment_map", addr=addr, size=size, stream=stream)

    def segment_unmap(self, addr, size, stream):
        seg = self.segment_of(addr)
        assert seg is not None
        lo, hi, _, _, _ = seg
        # the range is cut out of the held ranges it covers
        new = {}
        for a, (s, st, k, x) in self.ranges.items():
            if a + s <= addr or a >= addr + size:
                new[a] = [s, st, k, x]
                continue
            if a < addr:
                new[a] = [addr - a, st, k, x]
            if a + s > addr + size:
                new[addr + size] = [a + s - addr - size, st, k, x]
        self.ranges = new
        self.entry("segment_unmap", addr=addr, size=size, stream=stream)

    def alloc(self, addr, requested, stream):
        size = round_block(requested)
        assert addr not in self.blocks
        self.blocks[addr] = [size, requested, "active_allocated", stream]
        self.entry("alloc", addr=addr, size=requested, stream=stream)

    def free(self, addr, complete=True):
        b = self.blocks[addr]
        self.entry("free_requested", addr=addr, size=b[1], stream=b[3])
        b[2] = "active_pending_free"
        if complete:
            del self.blocks[addr]
            self.entry("free_completed", addr=addr, size=b[1], stream=b[3])

    def oom(self, requested, stream, device_free):
        size = round_block(requested)
        self.expected.append(self.figures(size, stream, device_free))
        self.entry("oom", size=size, stream=stream, device_free=device_free)

    # the layout
    def segments(self):
        """Held ranges as the snapshot shows them: contiguous expandable
        ranges of one stream are one segment."""
        out = []
        for a in sorted(self.ranges):
            s, st, k, x = self.ranges[a]
            if out and x and out[-1][4] and out[-1][1] == a and out[-1][2] == st:
                out[-1][1] = a + s
            else:
                out.append([a, a + s, st, k, x])
        return [tuple(o) for o in out]

    def segment_of(self, addr):
        for seg in self.segments():
            if seg[0] <= addr < seg[1]:
                return seg
        return None

    def cut(self, seg):
        """A segment's blocks in address order, free runs included."""
        lo, hi = seg[0], seg[1]
        used = sorted((a, b) for a, b in self.blocks.items() if lo <= a < hi)
        out, at = [], lo
        for a, b in used:
            if a > at:
                out.append((at, a - at, 0, "inactive"))
            out.append((a, b[0], b[1], b[2]))
            at = a + b[0]
        if hi > at:
            out.append((at, hi - at, 0, "inactive"))
        return out

    def figures(self, size, stream, device_free):
        pools = {}
        allocated = reserved = 0
        largest = 0
        for seg in self.segments():
            key = "%s|%s" % (seg[3], seg[2])
            p = pools.setdefault(key, {"segments": 0, "expandable": 0, "reserved": 0,
                                       "allocated": 0, "largest": 0, "split": 0, "waste": 0})
            blocks = self.cut(seg)
            free = [b[1] for b in blocks if b[3] == "inactive"]
            used = sum(b[1] for b in blocks if b[3] != "inactive")
            p["segments"] += 1
            p["expandable"] += seg[4]
            p["reserved"] += seg[1] - seg[0]
            p["allocated"] += used
            p["waste"] += sum(b[1] - b[2] for b in blocks if b[3] != "inactive")
            p["largest"] = max([p["largest"]] + free)
            if used:
                p["split"] += sum(free)
            reserved += seg[1] - seg[0]
            allocated += used
            largest = max([largest] + free)
        for p in pools.values():
            p["free"] = p["reserved"] - p["allocated"]
        want = "%s|%s" % ("small" if size <= MiB else "large", stream)
        return {"requested": size, "device_free": device_free, "allocated": allocated,
                "reserved": reserved, "largest": largest, "pools": pools,
                "in_pool": pools.get(want, {}).get("largest", 0), "request_pool": want}

    def snapshot_segments(self):
        out = []
        for seg in self.segments():
            blocks = self.cut(seg)
            out.append({
                "device": self.device, "address": seg[0], "total_size": seg[1] - seg[0],
                "allocated_size": sum(b[1] for b in blocks if b[3] == "active_allocated"),
                "active_size": sum(b[1] for b in blocks if b[3] != "inactive"),
                "requested_size": sum(b[2] for b in blocks), "stream": seg[2],
                "segment_type": seg[3], "segment_pool_id": (0, 0), "is_expandable": seg[4],
                "frames": [],
                "blocks": [{"address": a, "size": s, "requested_size": r, "state": st,
                            "frames": []} for a, s, r, st in blocks]})
        return out

def dump(path, allocators, drop=0, reverse=False):
    """The snapshot; `drop`: entries of device 0 lost off the ring buffer's start;
    `reverse`: segments and their blocks listed from the highest address down."""
    segments, traces = [], []
    for i, a in enumerate(allocators):
        segments += a.snapshot_segments()
        traces.append(a.trace[drop:] if i == 0 else a.trace)
    if reverse:
        for seg in segments:
            seg["blocks"].reverse()
        segments.reverse()
    d = {"segments": segments, "device_traces": traces,
         "allocator_settings": {"expandable_segments": any(
             r[3] for a in allocators for r in a.ranges.values())}}
    with open(path, "wb") as f:
        pickle.dump(d, f, protocol=4)
