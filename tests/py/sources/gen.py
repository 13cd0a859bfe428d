# tests/sources.sh runs this.
import json, sys

# 2022-12-31T00:00:00Z: a moment every trace below describes, in us.
T0_US = 1672444800 * 1000000


def mem(ts, addr, size, total, reserved=1 << 30, pid=7, tid=7, totals=True):
    a = {"Device Type": 1, "Device Id": 0, "Addr": addr, "Bytes": size}
    if totals:
        a["Total Allocated"] = total
        a["Total Reserved"] = reserved
    return {"ph": "i", "s": "t", "name": "[memory]", "pid": pid, "tid": tid,
            "ts": ts, "args": a}


def op(name, ts, dur, pid=7, tid=7):
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": pid, "tid": tid,
            "ts": ts, "dur": dur}


def step(n, ts, dur, pid=7, tid=7):
    return {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % n,
            "pid": pid, "tid": tid, "ts": ts, "dur": dur}


def trace(events, rank=None, base=None, extra=None):
    doc = {"schemaVersion": 1}
    if rank is not None:
        doc["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 8}
    doc["traceEvents"] = events
    if base is not None:
        doc["baseTimeNanoseconds"] = base
    doc.update(extra or {})
    return doc


def allocations(t, sizes, addr0, pid=7, tid=7, totals=True, first_total=0):
    """Allocations at t, t+10, ... and their frees after; with totals."""
    ev, total = [], first_total
    for i, size in enumerate(sizes):
        total += size
        ev.append(mem(t + 10 * i, addr0 + 4096 * i, size, total, pid=pid, tid=tid,
                      totals=totals))
    for i, size in enumerate(sizes):
        total -= size
        ev.append(mem(t + 10 * (len(sizes) + i), addr0 + 4096 * i, -size, total,
                      pid=pid, tid=tid, totals=totals))
    return ev


def rank_trace(rank):
    """Two ranks with the same pid and tid and overlapping clocks: rank 0's
    op spans [T0+100, T0+160), rank 1's [T0+90, T0+260). Every allocation
    is inside its rank's own op, and in time inside the other's: merged by
    (pid, tid, time), rank 0's op would nest in rank 1's, and rank 1's
    allocations (at +131, +141, +151) would be rank 0's op's."""
    name = ["rank0::matmul", "rank1::conv"][rank]
    start, dur, first = [(T0_US + 100, 60, T0_US + 101), (T0_US + 90, 170, T0_US + 131)][rank]
    sizes = [[1 << 20, 3 << 20], [5 << 20, 7 << 20, 11 << 20]][rank]
    ev = [step(1, T0_US, 400), op(name, start, dur)]
    ev += allocations(first, sizes, 0x10000000 * (rank + 1))
    return trace(ev, rank=rank), {"op": name, "sizes": sizes,
                                  "peak": sum(sizes), "events": 2 * len(sizes)}


def windowed(t, sizes, rank, name="w::op", totals=True, extra=None):
    ev = [step(1 if t == T0_US else 2, t, 1000), op(name, t + 1, 900)]
    ev += allocations(t + 2, sizes, 0x20000000, totals=totals)
    return trace(ev, rank=rank, extra=extra)


def write(name, doc):
    json.dump(doc, open(name, "w"))


def main():
    exp = {}
    for r in (0, 1):
        doc, e = rank_trace(r)
        write("rank%d.json" % r, doc)
        exp["rank%d" % r] = e
    # One rank, one run, three files of the same moments: the trace as
    # written, the same trace written again with one more allocation (more
    # coverage), and a copy without allocator totals (the most events).
    write("same-a.json", windowed(T0_US, [1 << 20, 2 << 20], rank=3))
    write("same-b.json", windowed(T0_US, [1 << 20, 2 << 20, 4 << 20], rank=3))
    write("same-c.json", windowed(T0_US, [1 << 20, 2 << 20, 4 << 20, 8 << 20], rank=3,
                                   totals=False))
    # Two windows of one rank, ten seconds apart.
    write("win-1.json", windowed(T0_US, [1 << 20, 6 << 20], rank=4))
    write("win-2.json", windowed(T0_US + 10000000, [2 << 20, 3 << 20], rank=4))
    # One moment in two formats: 2024 (times relative to
    # baseTimeNanoseconds, fractional us) and 2022 (absolute us).
    base = (T0_US - 5000) * 1000
    rel = [op("clock::op", 5000.5, 100)] + [
        mem(5000.5 + 10 * i, 0x30000000 + 4096 * i, 1 << 20, (i + 1) << 20) for i in range(3)]
    ab = [op("clock::op", T0_US + 0.5, 100)] + [
        mem(T0_US + 0.5 + 10 * i, 0x30000000 + 4096 * i, 1 << 20, (i + 1) << 20) for i in range(3)]
    write("clock-2024.json", trace(rel, base=base))
    write("clock-2022.json", trace(ab, extra={"traceName": "2022"}))
    write("clock-2024-r.json", trace(rel, rank=5, base=base))
    write("clock-2022-r.json", trace(ab, rank=5, extra={"traceName": "2022"}))
    # No absolute time at all: relative times, no base.
    write("unplaced.json", trace([mem(250, 0x40000000, 4096, 4096)]))
    write("unplaced-r.json", trace([mem(250, 0x40000000, 4096, 4096)], rank=5))
    exp["clock_ns"] = T0_US * 1000 + 500
    json.dump(exp, open("expect.json", "w"))


if __name__ == "__main__":
    main()
