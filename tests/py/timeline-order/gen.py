# tests/timeline-order.sh runs this.
import json, random

T0_US = 1672444800 * 1000000


def mem(dev, ts, addr, size, total):
    return {"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7, "ts": ts,
            "args": {"Device Type": 1, "Device Id": dev, "Addr": addr, "Bytes": size,
                     "Total Allocated": total, "Total Reserved": 1 << 34}}


def step(n, ts, dur):
    return {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % n,
            "pid": 7, "tid": 7, "ts": ts, "dur": dur}


def device_events(rng, dev, n):
    """n events of one device, in time order (distinct times): allocations
    at addresses of a small pool (so some land on a live address: their
    first allocation's free was not recorded), frees of live ones, and a
    few frees of addresses never allocated (before the trace began)."""
    live, total, ev, t = {}, 0, [], T0_US + 1000 + dev
    for _ in range(n):
        t += rng.randint(1, 5) * 4  # devices apart: dev added once
        r = rng.random()
        if r < 0.03:
            ev.append(mem(dev, t, 0x7f0000000000 + rng.randrange(1 << 20) * 512, -4096, total))
        elif live and r < 0.5:
            addr = rng.choice(sorted(live))
            size = live.pop(addr)
            total -= size
            ev.append(mem(dev, t, addr, -size, total))
        else:
            addr = 0x10000000 * (dev + 1) + rng.randrange(400) * 4096
            size = rng.randint(1, 64) * 512
            if addr in live:
                total -= live[addr]
            live[addr] = size
            total += size
            ev.append(mem(dev, t, addr, size, total))
    return ev


def oracle(events):
    """Per device: allocation rows (one per allocation event), those
    closed by a free or a later allocation at their address, the peak."""
    out = {}
    for e in sorted(events, key=lambda e: (e["args"]["Device Id"], e["ts"])):
        a = e["args"]
        d = out.setdefault(str(a["Device Id"]), {"rows": 0, "closed": 0, "peak": None,
                                                 "live": set()})
        if a["Bytes"] > 0:
            d["rows"] += 1
            if a["Addr"] in d["live"]:
                d["closed"] += 1
            d["live"].add(a["Addr"])
        elif a["Addr"] in d["live"]:
            d["closed"] += 1
            d["live"].discard(a["Addr"])
        if d["peak"] is None or a["Total Allocated"] > d["peak"]:
            d["peak"] = a["Total Allocated"]
    return {k: {"rows": v["rows"], "closed": v["closed"], "peak": v["peak"]}
            for k, v in out.items()}


def write(name, mems, steps):
    json.dump({"schemaVersion": 1, "traceEvents": steps + mems}, open(name, "w"))


def main():
    rng = random.Random(7)
    steps = [step(i + 1, T0_US + 1000 + i * 40000, 40000) for i in range(5)]
    one = device_events(rng, 0, 20000)
    two = device_events(rng, 1, 3000)
    variants = {
        # The reference: by device, then time.
        "sorted": one,
        # Three early events written last (as a snapshot's start marker):
        # guessed from the table's last rows.
        "tail": one[:10] + one[13:] + one[10:13],
        # Forty early events written in the middle: the guess fails, the
        # index finds them, the rest is read in table order.
        "middle": one[:5] + one[45:10000] + one[5:45] + one[10000:],
        # Every event out of place: read by the index.
        "shuffled": rng.sample(one, len(one)),
    }
    for name, ev in variants.items():
        write("one-%s.json" % name, ev, steps)
    # Two devices (the read with the device and source of each event).
    write("two-sorted.json", one + two, steps)
    write("two-tail.json", one + two[:1] + two[4:] + two[1:4], steps)
    # The other device's first events amid the first's: the first's rows
    # after them are out of place, found by the index.
    write("two-middle.json", one[:10000] + two[:40] + one[10000:] + two[40:], steps)
    both = sorted(one + two, key=lambda e: e["ts"])  # devices interleaved in time
    write("two-mixed.json", both, steps)
    json.dump({"one": oracle(one), "two": oracle(one + two)}, open("expect.json", "w"))


if __name__ == "__main__":
    main()
