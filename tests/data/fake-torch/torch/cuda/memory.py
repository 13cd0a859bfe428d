"""torch.cuda.memory: a toy caching allocator on one device, its history,
memory_stats() and snapshots in torch's shapes (docs/formats/allocator-snapshot.md, memory-stats.md)."""
import os
import pickle
import time

import torch

CAPACITY = 1 << 30             # the fake GPU: 1 GiB
SEGMENT_ROUND = 2 << 20        # large-pool segments: multiples of 2 MiB
BASE_ADDRESS = 0x7F0000000000
STATS = ["allocated_bytes", "reserved_bytes", "active_bytes", "inactive_split_bytes",
         "requested_bytes", "allocation", "segment", "active", "inactive_split"]


class _Allocator(object):
    def __init__(self):
        self.segments = []
        self.next_address = BASE_ADDRESS
        self.trace = []
        self.history = None      # None: off; else (max_entries, stacks)
        self.clock_us = int(time.time() * 1e6)  # the job runs now
        self.stats = {}
        for name in STATS + ["oversize_allocations", "oversize_segments"]:
            self.stats[name] = {"current": 0, "peak": 0, "allocated": 0, "freed": 0}
        self.counters = {"num_alloc_retries": 0, "num_ooms": 0, "max_split_size": -1,
                         "num_sync_all_streams": 0, "num_device_alloc": 0, "num_device_free": 0}

    def bump(self, name, delta):
        s = self.stats[name]
        s["current"] += delta
        s["peak"] = max(s["peak"], s["current"])
        s["allocated" if delta > 0 else "freed"] += abs(delta)

    def frames(self, where):
        filename, line, name = where
        py = [{"filename": filename, "line": line, "name": name}]
        if self.history and self.history[1] == "all":
            return [{"filename": "CUDACachingAllocator.cpp", "line": 0,
                     "name": "c10::cuda::CUDACachingAllocator::Native::malloc"}] + py
        return py

    def record(self, action, addr, size, where, **extra):
        if self.history is None:
            return
        self.clock_us += 1000
        e = {"action": action, "addr": addr, "size": size, "stream": 0,
             "time_us": self.clock_us, "frames": self.frames(where)}
        e.update(extra)
        if action == "oom":
            del e["addr"]
        self.trace.append(e)
        del self.trace[:-self.history[0]]

    def reserved(self):
        return sum(s["total_size"] for s in self.segments)

    def alloc(self, size, where):
        size = -(-size // 512) * 512
        for seg in self.segments:
            for b in seg["blocks"]:
                if b["state"] == "inactive" and b["size"] == size:
                    return self.activate(b, size, where)
        total = -(-size // SEGMENT_ROUND) * SEGMENT_ROUND
        if self.reserved() + total > CAPACITY:
            return None
        seg = {"device": 0, "address": self.next_address, "total_size": total,
               "allocated_size": 0, "active_size": 0, "requested_size": 0, "stream": 0,
               "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
               "frames": self.frames(where), "blocks": []}
        self.next_address += total
        seg["blocks"].append({"address": seg["address"], "size": size, "requested_size": 0,
                              "state": "inactive", "frames": []})
        if total > size:
            seg["blocks"].append({"address": seg["address"] + size, "size": total - size,
                                  "requested_size": 0, "state": "inactive", "frames": []})
        self.segments.append(seg)
        self.bump("reserved_bytes", total)
        self.bump("segment", 1)
        self.counters["num_device_alloc"] += 1
        self.record("segment_alloc", seg["address"], total, where)
        return self.activate(seg["blocks"][0], size, where)

    def activate(self, block, size, where):
        block.update(state="active_allocated", requested_size=size, frames=self.frames(where))
        for name in ("allocated_bytes", "active_bytes", "requested_bytes"):
            self.bump(name, size)
        self.bump("allocation", 1)
        self.bump("active", 1)
        self.record("alloc", block["address"], size, where)
        return block["address"]

    def free(self, addr):
        for seg in self.segments:
            for b in seg["blocks"]:
                if b["address"] == addr and b["state"] == "active_allocated":
                    where = (b["frames"][-1]["filename"], b["frames"][-1]["line"],
                             b["frames"][-1]["name"])
                    b["state"] = "inactive"
                    for name in ("allocated_bytes", "active_bytes", "requested_bytes"):
                        self.bump(name, -b["size"])
                    self.bump("allocation", -1)
                    self.bump("active", -1)
                    self.record("free_requested", addr, b["size"], where)
                    self.record("free_completed", addr, b["size"], where)
                    return
        raise ValueError("not allocated: %#x" % addr)

    def memory_stats(self):
        out = dict(self.counters)
        for name, s in self.stats.items():
            for stat, v in s.items():
                if name.startswith("oversize"):
                    out["%s.%s" % (name, stat)] = v
                    continue
                out["%s.all.%s" % (name, stat)] = v
                out["%s.large_pool.%s" % (name, stat)] = v
                out["%s.small_pool.%s" % (name, stat)] = 0
        return dict(sorted(out.items()))

    def snapshot(self):
        segments = []
        for seg in self.segments:
            s = dict(seg, blocks=[dict(b) for b in seg["blocks"]])
            s["allocated_size"] = sum(b["size"] for b in seg["blocks"]
                                      if b["state"] == "active_allocated")
            s["active_size"] = s["allocated_size"]
            s["requested_size"] = sum(b["requested_size"] for b in seg["blocks"]
                                      if b["state"] == "active_allocated")
            segments.append(s)
        return {"segments": segments, "device_traces": [list(self.trace)],
                "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                       "expandable_segments": False},
                "external_annotations": []}


_allocator = _Allocator()


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=1 << 62,
                           device=None):
    """torch >= 2.1; a bool `enabled` takes the legacy path, as in torch."""
    if isinstance(enabled, bool):
        return _record_memory_history_legacy(enabled)
    _allocator.history = None if enabled is None else (max_entries, stacks)


def _record_memory_history_legacy(enabled, record_context=True, trace_alloc_max_entries=1,
                                  trace_alloc_record_context=False, device=None,
                                  record_context_cpp=False):
    _allocator.history = (trace_alloc_max_entries, "python") if enabled else None


def _record_memory_history_113(enabled, device=None):
    """torch 1.13: stacks of live blocks only, no trace."""
    _allocator.history = None


def _snapshot(device=None):
    return _allocator.snapshot()


def _dump_snapshot(filename="dump_snapshot.pickle"):
    if os.environ.get("FAKE_TORCH_SNAPSHOT_FAILS"):
        raise RuntimeError("fake: the snapshot failed")
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)


if torch._V < (2, 1):
    del _dump_snapshot
    _record_memory_history = _record_memory_history_legacy
if torch._V < (2, 0):
    _record_memory_history = _record_memory_history_113
