#!/usr/bin/env bash
# tests/timeline-order.sh: the timeline pass gives the same allocations,
# peaks and steps whatever the order of the memory events in the file.
# It reads the events in table order when only a few are out of place
# (guessed among the table's last rows, else found by the index) and by
# the index otherwise (timeline.c): each variant below takes one of those
# ways, and each must give what the file sorted by device and time gives.
# The pairing and the peaks are also computed here, by python3, from the
# events themselves.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

cd "$TMP"
need python3 || true

cat >gen.py <<'PYEOF'
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
PYEOF

check "python3 writes the traces" "$PYTHON" gen.py

# dump.py DB: what the timeline wrote, with each event named by its
# device and time (event ids follow the file's order).
cat >dump.py <<'PYEOF'
import json, sqlite3, sys

db = sqlite3.connect(sys.argv[1])
ev = {i: (d, t) for i, d, t in db.execute("SELECT id, device_id, ts_ns FROM mem_event")}
name = lambda i: None if i is None else ev[i]
out = {
    "allocation": [list(r[:-2]) + [name(r[-2]), name(r[-1])] for r in db.execute(
        "SELECT id, device_id, addr, bytes, alloc_ts_ns, free_ts_ns, op_id, category,"
        " alloc_phase, free_phase, category_rule, frame_id, alloc_event_id, free_event_id"
        " FROM allocation ORDER BY id")],
    "device_source_summary": [list(r[:-1]) + [name(r[-1])] for r in db.execute(
        "SELECT device_id, events, start_ns, end_ns, peak_allocated_bytes,"
        " peak_allocated_ts_ns, peak_allocated_step, peak_reserved_bytes,"
        " live_unknown_bytes, peak_allocated_event_id FROM device_source_summary"
        " ORDER BY device_id, source_id")],
    "step_summary": [list(r) for r in db.execute(
        "SELECT * FROM step_summary ORDER BY device_id, source_id, step")],
    # By the device's index (cuda:N), as the trace names it.
    "counts": {str(d): {"rows": n, "closed": c} for d, n, c in db.execute(
        "SELECT d.idx, count(*), count(free_ts_ns) FROM allocation a"
        " JOIN device d ON d.id = a.device_id GROUP BY d.idx")},
    "peaks": {str(d): p for d, p in db.execute(
        "SELECT d.idx, peak_allocated_bytes FROM device_source_summary s"
        " JOIN device d ON d.id = s.device_id")},
}
json.dump(out, sys.stdout, indent=0)
PYEOF

for v in one-sorted one-tail one-middle one-shuffled two-sorted two-tail two-middle two-mixed; do
    vr_run "imp-$v" import "$v.json" --db "$v.db" -q
    if [ "$rc" = 0 ]; then
        pass "$v: imported"
    else
        fail "$v: imported" "$(cat "imp-$v.err")"
    fi
    "$PYTHON" dump.py "$v.db" >"$v.dump" 2>"$v.dump.err" || fail "$v: read back" "$(cat "$v.dump.err")"
done

# The oracle's pairing and peak per device.
oracle() {
    "$PYTHON" - "$1" "$2" <<'PYEOF'
import json, sys
got = json.load(open(sys.argv[1] + ".dump"))
exp = json.load(open("expect.json"))[sys.argv[2]]
ok = True
for dev, e in exp.items():
    g = got["counts"].get(dev, {})
    if g.get("rows") != e["rows"] or g.get("closed") != e["closed"] or got["peaks"].get(dev) != e["peak"]:
        print("device %s: got %s, peak %s; expected %s" % (dev, g, got["peaks"].get(dev), e))
        ok = False
sys.exit(0 if ok else 1)
PYEOF
}
check "one device, sorted: pairing and peak as computed from the events" oracle one-sorted one
check "two devices, sorted: pairing and peaks as computed from the events" oracle two-sorted two

same() {
    if cmp -s "$1.dump" "$2.dump"; then
        pass "$2: the same allocations, peaks and steps as $1"
    else
        fail "$2: the same allocations, peaks and steps as $1" \
            "$(diff "$1.dump" "$2.dump" | head -n 12)"
    fi
}
same one-sorted one-tail
same one-sorted one-middle
same one-sorted one-shuffled
same two-sorted two-tail
same two-sorted two-middle
same two-sorted two-mixed

finish
