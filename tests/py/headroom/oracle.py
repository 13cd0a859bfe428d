# tests/headroom.sh runs this.
import gzip, json, sys

GIB = 1 << 30


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def memory_events(doc, dev_type=1, dev_id=0):
    """A device's [memory] events in time order; equal times keep the
    file's order (the order they were recorded in)."""
    ev = [e for e in doc["traceEvents"] if e.get("name") == "[memory]"
          and e["args"].get("Device Type") == dev_type
          and e["args"].get("Device Id") == dev_id]
    return sorted(ev, key=lambda e: e["ts"])


def innermost_op(ops, e):
    """The shortest cpu_op of the event's thread whose span holds it."""
    best = None
    for o in ops:
        if (o["pid"], o["tid"]) == (e["pid"], e["tid"]) and \
                o["ts"] <= e["ts"] < o["ts"] + o["dur"] and \
                (best is None or o["dur"] < best["dur"]):
            best = o
    return best["name"] if best else None


def at_peak(doc, dev_type=1, dev_id=0, with_ops=False):
    """The peak (the first event with the highest Total Allocated), what
    is live then (paired by address: a free ends the allocation at its
    address, a second allocation there ends the first), and per operator
    the live allocations it made."""
    ev = memory_events(doc, dev_type, dev_id)
    ops = [o for o in doc["traceEvents"] if o.get("cat") == "cpu_op"] if with_ops else []
    peak_i = max(range(len(ev)), key=lambda i: (ev[i]["args"]["Total Allocated"], -i))
    live = {}
    for e in ev[:peak_i + 1]:
        a = e["args"]
        if a["Bytes"] >= 0:
            live[a["Addr"]] = (a["Bytes"], innermost_op(ops, e) if with_ops else None)
        else:
            live.pop(a["Addr"], None)
    per_op = {}
    for size, name in live.values():
        n, b = per_op.get(name, (0, 0))
        per_op[name] = (n + 1, b + size)
    pa = ev[peak_i]["args"]
    return {
        "peak": pa["Total Allocated"],
        "count": len(live),
        "bytes": sum(s for s, _ in live.values()),
        "cached": pa["Total Reserved"] - pa["Total Allocated"],
        "reserved": max(e["args"]["Total Reserved"] for e in ev),
        "per_op": {k: list(v) for k, v in per_op.items() if k},
        "first_ts_us": ev[0]["ts"],
    }


if __name__ == "__main__":
    doc = load(sys.argv[1])
    args = sys.argv[3:]
    if sys.argv[2] == "peak":
        print(json.dumps(at_peak(doc, int(args[0]), int(args[1]), args[2:] == ["ops"])))
    elif sys.argv[2] == "axis":
        # The first memory event, in ns since the epoch (absolute us).
        print(round(memory_events(doc, int(args[0]), int(args[1]))[0]["ts"] * 1000))
