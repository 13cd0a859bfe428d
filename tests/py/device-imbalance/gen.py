# tests/device-imbalance.sh runs this.
"""Devices of one process whose peaks differ: a DataParallel job's
allocator snapshot of three GPUs (the scatter gave cuda:0 the largest
share of the batch), snapshots at the rule's edge, and a profiler trace
of two devices. Each file's truth (every device's allocated peak, and
at the largest and smallest peaks the bytes of each site: the stack's
first frame outside torch, or the trace's enclosing operator) is
computed here from the allocations written, never from vramreport."""
import json, pickle, sys

GiB = 1 << 30
T0_US = 1700000000 * 1000000
TORCH = {"filename": "/usr/lib/python3/site-packages/torch/nn/modules/linear.py",
         "line": 125, "name": "forward"}
WEIGHTS = {"filename": "/job/model.py", "line": 20, "name": "__init__"}
ACTS = {"filename": "/job/model.py", "line": 57, "name": "forward"}
GATHER = {"filename": "/job/train.py", "line": 88, "name": "step"}


def site_name(frame):
    return "%s:%d in %s" % (frame["filename"], frame["line"], frame["name"])


def plan(weights, acts, gather=0, chunk=2 * GiB):
    """One device's allocations: weights kept to the end; activations
    (and outputs gathered here) freed after the forward, in chunks."""
    out = []
    def add(site, total, keep):
        while total > 0:
            n = min(chunk, total)
            out.append((site, n, keep))
            total -= n
    add(WEIGHTS, weights, True)
    add(ACTS, acts, False)
    add(GATHER, gather, False)
    return out


def snapshot(devices, oom=None):
    """devices: one plan per device. oom: (device, bytes) asked for at
    the peak of that device."""
    segs, traces, truth = [], [], []
    for dev, allocs in enumerate(devices):
        base = (1 << 44) + dev * (1 << 40)
        t, entries, live, total, peak, at_peak = T0_US, [], [], 0, 0, {}
        for i, (site, n, keep) in enumerate(allocs):
            addr = base + i * 4 * GiB
            t += 10
            frames = [TORCH, site]
            entries.append({"action": "segment_alloc", "addr": addr, "size": n, "stream": 0,
                            "time_us": t, "frames": frames})
            entries.append({"action": "alloc", "addr": addr, "size": n, "stream": 0,
                            "time_us": t, "frames": frames})
            live.append((addr, site, n, keep))
            total += n
            if total > peak:
                peak, at_peak = total, {}
                for _, s, b, _ in live:
                    at_peak[site_name(s)] = at_peak.get(site_name(s), 0) + b
        if oom and oom[0] == dev:
            t += 10
            entries.append({"action": "oom", "size": oom[1], "stream": 0, "device_free": 0,
                            "time_us": t, "frames": [TORCH, ACTS]})
        for addr, site, n, keep in live:
            if keep:
                segs.append({"device": dev, "address": addr, "total_size": n,
                             "allocated_size": n, "active_size": n, "requested_size": n,
                             "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
                             "is_expandable": False, "frames": [TORCH, site],
                             "blocks": [{"address": addr, "size": n, "requested_size": n,
                                         "state": "active_allocated",
                                         "frames": [TORCH, site]}]})
                continue
            t += 10
            for action in ("free_requested", "free_completed"):
                entries.append({"action": action, "addr": addr, "size": n, "stream": 0,
                                "time_us": t, "frames": [TORCH, site]})
            entries.append({"action": "segment_free", "addr": addr, "size": n, "stream": 0,
                            "time_us": t, "frames": [TORCH, site]})
        traces.append(entries)
        truth.append({"label": "cuda:%d" % dev, "peak": peak, "sites": at_peak})
    return {"segments": segs, "device_traces": traces, "allocator_settings": {}}, truth


def expected(truth):
    """The highest and lowest peaks, the rule (apart by more than 20 % of
    the highest), and the site whose bytes differ most between them."""
    hi = max(truth, key=lambda d: (d["peak"], -int(d["label"][5:])))
    lo = min(truth, key=lambda d: (d["peak"], int(d["label"][5:])))
    keys = set(hi["sites"]) | set(lo["sites"])
    site = max(sorted(keys), key=lambda k: abs(hi["sites"].get(k, 0) - lo["sites"].get(k, 0)))
    return {"fires": (hi["peak"] - lo["peak"]) * 1000 // hi["peak"] > 200,
            "high": hi["label"], "high_peak": hi["peak"], "low": lo["label"],
            "low_peak": lo["peak"], "devices": len(truth), "site": site,
            "site_high": hi["sites"].get(site, 0), "site_low": lo["sites"].get(site, 0)}


def trace(path):
    """A trace of two devices (one process, no rank): on cuda:0 an
    aten::mm holds 6 GiB and aten::cat 3 GiB at its peak; on cuda:1 the
    aten::mm holds 1 GiB and aten::cat 2 GiB. Both keep 1 GiB of weights
    made by aten::empty."""
    ev, totals, truth = [], {0: 0, 1: 0}, []
    plan_ = {0: [("aten::empty", GiB), ("aten::mm", 6 * GiB), ("aten::cat", 3 * GiB)],
             1: [("aten::empty", GiB), ("aten::mm", GiB), ("aten::cat", 2 * GiB)]}
    for dev, ops in plan_.items():
        t, live = 1000 + dev * 100000, []
        for k, (op, n) in enumerate(ops):
            ev.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1,
                       "ts": t, "dur": 50, "args": {}})
            addr = (1 << 40) + dev * (1 << 38) + k * 8 * GiB
            totals[dev] += n
            ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                       "pid": 1, "tid": 1, "ts": t + 10,
                       "args": {"Device Type": 1, "Device Id": dev, "Addr": addr, "Bytes": n,
                                "Total Allocated": totals[dev],
                                "Total Reserved": totals[dev] + GiB}})
            live.append((op, addr, n))
            t += 100
        peak_sites = {}
        for op, _, n in live:
            peak_sites[op] = peak_sites.get(op, 0) + n
        for op, addr, n in live[1:]:
            totals[dev] -= n
            ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                       "pid": 1, "tid": 1, "ts": t,
                       "args": {"Device Type": 1, "Device Id": dev, "Addr": addr, "Bytes": -n,
                                "Total Allocated": totals[dev],
                                "Total Reserved": totals[dev] + GiB}})
            t += 10
        truth.append({"label": "cuda:%d" % dev, "peak": sum(n for _, _, n in live),
                      "sites": peak_sites})
    json.dump({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
               "deviceProperties": [{"id": 0, "name": "A100", "totalGlobalMem": 80 * GiB},
                                    {"id": 1, "name": "A100", "totalGlobalMem": 80 * GiB}],
               "traceEvents": ev}, open(path, "w"))
    return truth


def main():
    cases = {
        # the DataParallel job: 78, 20 and 8 GiB
        "dp": ([plan(6 * GiB, 64 * GiB, 8 * GiB), plan(6 * GiB, 14 * GiB),
                plan(6 * GiB, 2 * GiB)], None),
        # within the rule: 10 and 8 GiB are 20 % of the larger apart
        "edge-in": ([plan(2 * GiB, 8 * GiB), plan(2 * GiB, 6 * GiB)], None),
        # just past it: 10 GiB and 8 GiB less 12 MiB
        "edge-out": ([plan(2 * GiB, 8 * GiB), plan(2 * GiB, 6 * GiB - 12 * (1 << 20))], None),
        # the DataParallel job failing on cuda:0, and that device alone
        "dp-oom": ([plan(6 * GiB, 64 * GiB, 8 * GiB), plan(6 * GiB, 14 * GiB),
                    plan(6 * GiB, 2 * GiB)], (0, 4 * GiB)),
        "dp-oom-alone": ([plan(6 * GiB, 64 * GiB, 8 * GiB)], (0, 4 * GiB)),
    }
    truths = {}
    for name, (devices, oom) in cases.items():
        snap, truth = snapshot(devices, oom)
        pickle.dump(snap, open(name + ".pickle", "wb"), protocol=4)
        truths[name] = expected(truth) if len(truth) > 1 else None
    truths["two-devices"] = expected(trace("two-devices.json"))
    json.dump(truths, open("truth.json", "w"), indent=1)


main()
