"""torch.cuda on a fake device 0 (see ../../README.md)."""
import torch

from . import memory


class OutOfMemoryError(RuntimeError):
    pass


def is_available():
    return True


def current_device():
    return 0


def memory_stats(device=None):
    return memory._allocator.memory_stats()


def _fmt_size(sz, pref):
    prefix, units = "B  ", ["KiB", "MiB", "GiB", "TiB", "PiB"]
    for new in units:
        if pref < 768 * 1024:
            break
        prefix, sz, pref = new, sz // 1024, pref / 1024
    return "%6d %s" % (sz, prefix)


def _fmt_count(cnt, pref):
    prefix = " "
    for new in ["K", "M"]:
        if pref < 750 * 1000:
            break
        prefix, cnt, pref = new, cnt // 1000, pref / 1000
    return "%7d %s " % (cnt, prefix)


def memory_summary(device=None, abbreviated=False):
    """The box torch/cuda/memory.py writes (docs/formats/memory-summary.md)."""
    stats = memory_stats(device)
    rows = [("allocated_bytes", "Allocated memory", _fmt_size),
            ("active_bytes", "Active memory", _fmt_size),
            ("requested_bytes", "Requested memory", _fmt_size),
            ("reserved_bytes", "GPU reserved memory", _fmt_size),
            ("inactive_split_bytes", "Non-releasable memory", _fmt_size),
            ("allocation", "Allocations", _fmt_count), ("active", "Active allocs", _fmt_count),
            ("segment", "GPU reserved segments", _fmt_count),
            ("inactive_split", "Non-releasable allocs", _fmt_count)]
    lines = ["=" * 75, " %-16s PyTorch CUDA memory summary, device ID %-17d " % ("", 0),
             "-" * 75,
             "  %-9s CUDA OOMs: %-12d | %-6s cudaMalloc retries: %-8d  "
             % ("", stats["num_ooms"], "", stats["num_alloc_retries"]),
             "=" * 75, "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  "]
    for key, name, f in rows:
        lines.append("-" * 75)
        prefs = None
        for sub, label in [("all", name), ("large_pool", "      from large pool"),
                           ("small_pool", "      from small pool")]:
            vals = [stats["%s.%s.%s" % (key, sub, s)]
                    for s in ("current", "peak", "allocated", "freed")]
            prefs = prefs or vals
            lines.append(" %-21s | %s " % (label, " | ".join(f(v, p) for v, p in zip(vals, prefs))))
    lines.append("=" * 75)
    return "|" + "|\n|".join(lines) + "|\n"


def _fake_alloc(size, where=("train.py", 42, "forward")):
    addr = memory._allocator.alloc(size, where)
    if addr is None:
        _fake_oom(size, where)
    return addr


def _fake_free(addr):
    memory._allocator.free(addr)


def _fake_oom(size, where=("train.py", 42, "forward")):
    """What the allocator does when a request fails: count it, record it,
    call the observers (device, requested, allocated, free), raise."""
    a = memory._allocator
    free = memory.CAPACITY - a.reserved()
    a.counters["num_ooms"] += 1
    a.record("oom", 0, size, where, device_free=free)
    for observer in list(getattr(torch._C, "_oom_observers", [])):
        observer(0, size, a.stats["allocated_bytes"]["current"], free)
    raise OutOfMemoryError("CUDA out of memory. Tried to allocate %d bytes" % size)
