# tests/snapshot-device.sh runs this.
"""One process's allocations, written as a trace and as a snapshot."""
import json, pickle, sys

T0_US = 1672531200 * 1000000          # 2023-01-01T00:00:00Z
BASE_NS = (T0_US - 5000000) * 1000    # the trace's baseTimeNanoseconds
N = 90                                # allocations; every third lives to the end
WINDOW = (10, 80)                     # the allocations the trace saw


def allocations(addr_base):
    out = []
    for i in range(N):
        size = ((i * 7919) % 4096 + 1) * 512
        t = T0_US + 1000 * i
        free = None if i % 3 == 0 else t + 500
        out.append({"i": i, "addr": addr_base + i * 0x200000, "size": size, "t": t,
                    "free": free})
    return out


def events(allocs):
    """(time_us, addr, +size or -size), in time order."""
    ev = [(a["t"], a["addr"], a["size"]) for a in allocs]
    ev += [(a["free"], a["addr"], -a["size"]) for a in allocs if a["free"]]
    return sorted(ev)


def trace(allocs, extra=None):
    total, out = 0, []
    lo, hi = T0_US + 1000 * WINDOW[0], T0_US + 1000 * WINDOW[1]
    for t, addr, size in events(allocs):
        total += size
        if lo <= t < hi:
            out.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7,
                        "ts": t - BASE_NS // 1000,
                        "args": {"Device Type": 1, "Device Id": 0, "Addr": addr,
                                 "Bytes": size, "Total Allocated": total,
                                 "Total Reserved": 1 << 30}})
    doc = {"schemaVersion": 1, "traceEvents": out, "baseTimeNanoseconds": BASE_NS}
    doc.update(extra or {})
    return doc


def snapshot(allocs, history=True):
    live = [a for a in allocs if a["free"] is None]
    segments = [{"device": 0, "address": a["addr"], "total_size": a["size"],
                 "allocated_size": a["size"], "active_size": a["size"],
                 "requested_size": a["size"], "stream": 0, "segment_type": "large",
                 "blocks": [{"address": a["addr"], "size": a["size"],
                             "requested_size": a["size"], "state": "active_allocated",
                             "frames": []}]} for a in live]
    entries = []
    for t, addr, size in events(allocs):
        if size > 0:
            entries.append({"action": "alloc", "addr": addr, "size": size, "stream": 0,
                            "time_us": t, "frames": []})
        else:
            for action in ("free_requested", "free_completed"):
                entries.append({"action": action, "addr": addr, "size": -size, "stream": 0,
                                "time_us": t, "frames": []})
    return {"segments": segments, "device_traces": [entries] if history else [],
            "allocator_settings": {}}


def truth(allocs):
    """The peak the process's allocated memory reached, and where the
    trace's window has it."""
    total, peak, peak_win = 0, 0, 0
    lo, hi = T0_US + 1000 * WINDOW[0], T0_US + 1000 * WINDOW[1]
    for t, _, size in events(allocs):
        total += size
        peak = max(peak, total)
        if lo <= t < hi:
            peak_win = max(peak_win, total)
    in_window = [a for a in allocs if WINDOW[0] <= a["i"] < WINDOW[1]]
    return {"peak": peak, "trace_peak": peak_win, "snapshot_allocs": N,
            "trace_allocs": len(in_window),
            "trace_live_at_end": sum(1 for a in in_window if a["free"] is None)}


def main():
    runs = {"a": allocations(0x7F3A00000000), "b": allocations(0x7E1100000000)}
    for name, allocs in runs.items():
        json.dump(trace(allocs), open("trace-%s.json" % name, "w"))
        pickle.dump(snapshot(allocs), open("snap-%s.pickle" % name, "wb"), protocol=4)
    # The same trace of run a once more, another file (another rank's copy).
    json.dump(trace(runs["a"], {"deviceProperties": []}), open("trace-a2.json", "w"))
    # Run a's snapshot without history: only the end state to go by.
    pickle.dump(snapshot(runs["a"], history=False), open("end-a.pickle", "wb"), protocol=4)
    json.dump(truth(runs["a"]), open("truth.json", "w"))


main()
