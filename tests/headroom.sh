#!/usr/bin/env bash
# tests/headroom.sh: what was live at the peak, the cache and the headroom
# (docs/breakdown.md, "Where the memory went"): every allocation live at the peak,
# not only the top ten; per operator, what it still held then; capacity
# minus peak reserved, and a warning at 90 % of the capacity; and four
# report fixes (traces without addresses, an empty device name, the
# chart's time axis, reserved left out of the legend when unknown).
# Every expected figure is computed here, by python3, from the traces: the
# synthetic ones it writes and real ones, replayed event by event.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

REAL="$VR_SRCDIR/tests/data/realdata/kineto"
OLD="$REAL/tbplugin-v100-resnet50-2021.pt.trace.json.gz"
NEW="$REAL/hta-v100x2-rank1-2022.pt.trace.json.gz"

cd "$TMP"
need python3 || true

# oracle.py: replays a trace's [memory] events, as a reader of the file
# would, into what the report should say of each device.
cat >oracle.py <<'PYEOF'
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
PYEOF

# gen.py: synthetic traces. One device of 16 GiB; 512 MiB allocated before
# the trace began (its free, of an address never allocated, is seen); ops
# that allocate what others free; events at the peak's very microsecond on
# both sides of it; reserved highest after the peak, at `share` of the
# capacity.
cat >gen.py <<'PYEOF'
import json, sys

MIB, GIB = 1 << 20, 1 << 30
CAP = 16 * GIB
T0 = 1672444800 * 1000000  # 2022-12-31T00:00:00Z, in us


def op(name, ts, dur):
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 7, "tid": 7,
            "ts": T0 + ts, "dur": dur}


class Trace:
    def __init__(self, share):
        self.ev, self.total, self.share = [], 512 * MIB, share

    def mem(self, ts, addr, size, reserved=None):
        self.total += size
        res = reserved if reserved is not None else self.total + 256 * MIB
        self.ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7,
                        "ts": T0 + ts, "args": {"Device Type": 1, "Device Id": 0,
                                                "Addr": addr, "Bytes": size,
                                                "Total Allocated": self.total,
                                                "Total Reserved": res}})

    def build(self):
        m = self.mem
        self.ev += [op("w::make_a", 100, 100), op("w::make_b", 300, 100),
                    op("w::peak", 690, 20), op("w::late", 800, 100)]
        m(110, 0x1000, 100 * MIB)
        m(120, 0x2000, 50 * MIB)
        m(150, 0x9000, -64 * MIB)          # allocated before the trace began
        m(310, 0x3000, 200 * MIB)
        m(320, 0x2000, -50 * MIB)          # w::make_a's, freed in w::make_b
        m(330, 0x4000, 30 * MIB)
        m(700, 0x4000, -30 * MIB)          # at the peak's time, before it
        m(700, 0x5000, 300 * MIB)          # the peak
        m(700, 0x1000, -100 * MIB)         # at the peak's time, after it
        m(700, 0x6000, 50 * MIB)           # ditto: not live at the peak
        m(850, 0x6000, -50 * MIB)
        m(860, 0x7000, 8 * MIB, reserved=int(CAP * self.share))
        return {"schemaVersion": 1, "traceEvents": self.ev,
                "deviceProperties": [{"id": 0, "name": "", "totalGlobalMem": CAP}]}


def old(share):
    """The 2021 format: no Addr, no totals; allocations reach `share` of
    the capacity (8 of them, freed after)."""
    ev, size = [], int(CAP * share) // 8
    for i in range(8):
        ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7,
                   "ts": T0 + 100 + i, "args": {"Device Type": 1, "Device Id": 0,
                                                "Bytes": size}})
    for i in range(8):
        ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7,
                   "ts": T0 + 200 + i, "args": {"Device Type": 1, "Device Id": 0,
                                                "Bytes": -size}})
    return {"schemaVersion": 1, "traceEvents": ev,
            "deviceProperties": [{"id": 0, "name": "Old GPU", "totalGlobalMem": CAP}]}


json.dump(Trace(0.92).build(), open("near-trace.json", "w"))
json.dump(Trace(0.80).build(), open("far-trace.json", "w"))
json.dump(old(0.93), open("old-trace.json", "w"))
json.dump({"cap": CAP}, open("gen.json", "w"))
PYEOF

check "python3 writes the traces" "$PYTHON" gen.py

# expect DESC REPORT PYTHON-EXPR: the expression, over the report `d`, its
# first device `dv`, the oracle's figures `x` (from X.json when given as
# the 4th argument) and ops(dv) {name: row}, is True.
expect() {
    got=$("$PYTHON" - "$2" "$3" "${4:-}" <<'PYEOF' 2>&1 || true
import json, sys
d = json.load(open(sys.argv[1]))
dv = d["devices"][0]
x = json.load(open(sys.argv[3])) if sys.argv[3] else {}
g = json.load(open("gen.json"))
def ops(dv):
    return {o["name"]: o for o in dv.get("operators") or []}
try:
    ok = eval(sys.argv[2])
except Exception as e:
    ok = "error: %r" % e
print(ok)
PYEOF
)
    if [ "$got" = True ]; then pass "$1"; else fail "$1" "$3 -> $got"; fi
}

report() { # NAME INPUT: NAME.json, NAME.md, NAME.html
    vr_run "$1-j" "$2" --format json -o "$1.json"
    [ "$rc" = 0 ] || fail "$1: the JSON report" "$(cat "$1-j.err")"
    vr_run "$1-m" "$2" -o "$1.md"
    [ "$rc" = 0 ] || fail "$1: the Markdown report" "$(cat "$1-m.err")"
    vr_run "$1-h" "$2" -o "$1.html"
    [ "$rc" = 0 ] || fail "$1: the HTML report" "$(cat "$1-h.err")"
}

# has DESC FILE TEXT / lacks DESC FILE TEXT: a fixed string is in / not in FILE.
has() { if grep -q -F -e "$3" "$2"; then pass "$1"; else fail "$1" "'$3' not in $2"; fi; }
lacks() { if grep -q -F -e "$3" "$2"; then fail "$1" "'$3' in $2: $(grep -F -e "$3" "$2" | head -3)"; else pass "$1"; fi; }

# The legend's entries of the first chart, one a line.
legend() {
    "$PYTHON" - "$1" <<'PYEOF'
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
g = re.search(r'<g class="vr-legend">(.*?)</g>', html, re.S)
print("\n".join(re.findall(r"<text[^>]*>([^<]*)</text>", g.group(1)) if g else []))
PYEOF
}

#-- synthetic: every figure at the peak -----------------------------------------

report near near-trace.json
report far far-trace.json
"$PYTHON" oracle.py near-trace.json peak 1 0 ops >near-x.json
"$PYTHON" oracle.py far-trace.json peak 1 0 ops >far-x.json

expect "live_at_peak_count: every allocation live at the peak, equal times in file order" \
    near.json "dv['live_at_peak_count'] == x['count'] and x['count'] >= 3" near-x.json
expect "live_at_peak_bytes: their sum" near.json "dv['live_at_peak_bytes'] == x['bytes']" near-x.json
expect "live at the peak plus what was allocated before the trace is the peak" near.json \
    "dv['live_at_peak_bytes'] + dv['unattributed_at_peak_bytes'] == dv['peak_allocated_bytes'] == x['peak']" near-x.json
expect "cached_at_peak_bytes: reserved minus allocated at the peak event" near.json \
    "dv['cached_at_peak_bytes'] == x['cached']" near-x.json
expect "headroom_bytes: capacity minus peak reserved" near.json \
    "dv['headroom_bytes'] == g['cap'] - x['reserved'] and dv['capacity_bytes'] == g['cap']" near-x.json
expect "operators[]: each operator's allocations live at the peak (count, bytes)" near.json \
    "all([o['live_at_peak_count'], o['live_at_peak_bytes']] == x['per_op'].get(n, [0, 0]) for n, o in ops(dv).items()) and len(x['per_op']) >= 2" near-x.json
expect "operators[]: an operator that allocated only after the peak held nothing then" near.json \
    "[ops(dv)['w::late']['live_at_peak_count'], ops(dv)['w::late']['live_at_peak_bytes']] == x['per_op'].get('w::late', [0, 0]) == [0, 0]" near-x.json
expect "operators[]: the allocated-minus-freed figures are gone" near.json \
    "not any(k.endswith('increase_bytes') for o in dv['operators'] for k in o)"
lacks "Markdown: the operators table has no Increase column" near.md "Increase"
has "Markdown: the operators table shows what each still held at the peak" near.md \
    "| Live at the peak |"
"$PYTHON" - near.md near-x.json >ops.tap <<'PYEOF'
import json, sys
from vrtest import human_bytes
md = open(sys.argv[1]).read()
x = json.load(open(sys.argv[2]))
for name, (n, b) in sorted(x["per_op"].items()):
    row = [l for l in md.splitlines() if l.startswith("| %s |" % name.replace("_", "\\_"))]
    cell = "%d (%s)" % (n, human_bytes(b))
    ok = len(row) == 1 and row[0].rstrip().endswith("| %s |" % cell)
    print("%s\tMarkdown: %s's live-at-peak cell is %s\t%s" % ("PASS" if ok else "FAIL", name, cell, row))
PYEOF
tap_lines ops.tap
"$PYTHON" - near.md near-x.json near.json >sum.tap <<'PYEOF'
import json, sys
from vrtest import human_bytes
md = open(sys.argv[1]).read()
x = json.load(open(sys.argv[2]))
cap = json.load(open("gen.json"))["cap"]
rows = {
    "Headroom": "| Headroom | %s (capacity minus peak reserved) |" % human_bytes(cap - x["reserved"]),
    "Cached": "| Cached at the peak | %s:" % human_bytes(x["cached"]),
    "Live": "| Live at the peak | %s (allocations: %d) |" % (human_bytes(x["bytes"]), x["count"]),
}
for what, text in rows.items():
    print("%s\tMarkdown: the device summary states %s\t%s" % ("PASS" if text in md else "FAIL", what, text))
PYEOF
tap_lines sum.tap

# The warning: at 92 % of the capacity, not at 80 %.
pct=$("$PYTHON" -c 'import json; x = json.load(open("near-x.json")); g = json.load(open("gen.json")); print("%.1f%%" % (100.0 * x["reserved"] / g["cap"]))')
has "92 %: a warning names peak reserved and its share of the capacity" near.md \
    "**Warning:** peak reserved memory reached $pct of the"
expect "92 %: near_capacity says reserved" near.json "dv['near_capacity'] == 'reserved' and abs(dv['near_capacity_share'] - x['reserved'] / g['cap']) < 1e-4" near-x.json
lacks "80 %: no warning" far.md "Warning"
expect "80 %: near_capacity is null" far.json "dv['near_capacity'] is None and dv['near_capacity_share'] is None"
expect "80 %: the headroom follows the reserved peak" far.json \
    "dv['headroom_bytes'] == g['cap'] - x['reserved']" far-x.json

# An empty device name: no dangling colon.
has "an empty device name: the heading is the device alone" near.md $'\n## cuda:0\n'
lacks "an empty device name: no colon after the device" near.md "## cuda:0:"
expect "an empty device name: JSON name is null" near.json "dv['name'] is None"

# Reserved known: the chart's legend names it (the test below can fail).
legend near.html >near.legend
has "reserved known: the legend names allocated" near.legend allocated
has "reserved known: the legend names reserved" near.legend reserved

#-- synthetic, old format: reserved unknown, no addresses -----------------------

report old old-trace.json
"$PYTHON" - old-trace.json >old-x.json <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1]))
run = peak = 0
for e in sorted((e for e in doc["traceEvents"] if e["name"] == "[memory]"), key=lambda e: e["ts"]):
    run += e["args"]["Bytes"]
    peak = max(peak, run)
cap = doc["deviceProperties"][0]["totalGlobalMem"]
print(json.dumps({"peak": peak, "pct": "%.1f%%" % (100.0 * peak / cap)}))
PYEOF
opct=$("$PYTHON" -c 'import json; print(json.load(open("old-x.json"))["pct"])')
has "reserved unknown at 93 %: the warning names peak allocated" old.md \
    "**Warning:** peak allocated memory reached $opct of the"
has "reserved unknown: the warning says reserved is not known" old.md "reserved memory is not known"
expect "reserved unknown: near_capacity says allocated" old.json "dv['near_capacity'] == 'allocated'"
expect "reserved unknown: headroom and cached are null" old.json \
    "dv['headroom_bytes'] is None and dv['cached_at_peak_bytes'] is None and dv['peak_allocated_bytes'] == x['peak']" old-x.json
expect "no addresses: live_at_peak figures are null, not zero" old.json \
    "dv['live_at_peak_count'] is None and dv['live_at_peak_bytes'] is None"
lacks "no addresses: no Headroom row" old.md "| Headroom |"
lacks "no addresses: no Live at the peak row" old.md "| Live at the peak |"

#-- the real 2021 trace: no running totals, no addresses ------------------------

report r21 "$OLD"
lacks "2021 trace: no claim that the peak was allocated before the trace began" r21.md \
    "allocated before the trace began"
has "2021 trace: the report says its events carry no addresses" r21.md \
    "The memory events of this file carry no addresses"
expect "2021 trace: live_at_peak figures are null" r21.json \
    "dv['live_at_peak_count'] is None and dv['live_at_peak_bytes'] is None"
expect "2021 trace: operators' live-at-peak figures are null" r21.json \
    "dv['operators'] and all(o['live_at_peak_count'] is None and o['live_at_peak_bytes'] is None for o in dv['operators'])"
has "2021 trace: the operators table says not known" r21.md "| not known |"
expect "2021 trace: headroom and cached are null (reserved unknown)" r21.json \
    "dv['headroom_bytes'] is None and dv['cached_at_peak_bytes'] is None"
legend r21.html >r21.legend
has "2021 trace: the legend names allocated" r21.legend allocated
lacks "2021 trace: reserved, unknown, leaves the legend" r21.legend reserved
axis=$("$PYTHON" oracle.py "$OLD" axis 1 0)
"$PYTHON" - r21.html "$axis" r21.json >axis.tap <<'PYEOF'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
# data-x-range: the axis in ns after the origin, where the report's times
# start (the earliest source's start).
m = re.search(r'<svg[^>]*class="vr-chart"[^>]*data-x-range="(-?\d+) (-?\d+)"', html)
origin = json.load(open(sys.argv[3]))["sources"][0]["start_ts_ns"]
first = int(sys.argv[2])
ok = m is not None and origin + int(m.group(1)) == first and first > origin
print("%s\t2021 trace: the chart's time axis starts at the first memory event (%d ns after the report's start)\t%s"
      % ("PASS" if ok else "FAIL", first - origin, m.groups() if m else "no data-x-range"))
xs = re.search(r'<g class="vr-axis vr-axis-x"[^>]*>\s*<path d="M([\d.]+) ', html)
left = re.search(r'<path class="vr-axis-line" d="M([\d.]+) ', html)
ok = xs is not None and left is not None and float(xs.group(1)) >= float(left.group(1))
print("%s\t2021 trace: the first x tick lies on the axis\t%s" % ("PASS" if ok else "FAIL", (xs and xs.group(1), left and left.group(1))))
PYEOF
tap_lines axis.tap

#-- a real trace with addresses: replayed from its [memory] events ---------------

report r22 "$NEW"
"$PYTHON" oracle.py "$NEW" peak 1 1 >r22-x.json
expect "2022 trace: the peak is the trace's highest Total Allocated" r22.json \
    "dv['peak_allocated_bytes'] == x['peak']" r22-x.json
expect "2022 trace: live_at_peak_count from the trace's [memory] events" r22.json \
    "dv['live_at_peak_count'] == x['count'] > 10" r22-x.json
expect "2022 trace: live_at_peak_bytes from the trace's [memory] events" r22.json \
    "dv['live_at_peak_bytes'] == x['bytes']" r22-x.json
expect "2022 trace: cached at the peak is Total Reserved minus Total Allocated then" r22.json \
    "dv['cached_at_peak_bytes'] == x['cached']" r22-x.json
expect "2022 trace: headroom is capacity minus the highest Total Reserved" r22.json \
    "dv['headroom_bytes'] == dv['capacity_bytes'] - x['reserved']" r22-x.json
expect "2022 trace: the operators' live allocations are among the device's" r22.json \
    "sum(o['live_at_peak_count'] for o in dv['operators']) <= dv['live_at_peak_count'] and sum(o['live_at_peak_bytes'] for o in dv['operators']) <= dv['live_at_peak_bytes']"
has "2022 trace: the sentence on memory from before the trace stays" r22.md \
    "allocated before the trace began"

finish
