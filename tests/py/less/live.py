"""tests/less.sh's second oracle: "live at the peak" says one thing. A
device section gives a row "Live at the peak" (the allocations of the
record live at the peak) and, above its list of what was live, a total
"Live at the peak: ..." (those allocations, plus a snapshot's blocks in
use since before its history). For every real snapshot and trace in
tests/data the two agree with each other, with the JSON, and with what
this script replays from the pickle or the trace on its own: whenever the
list's total differs from the row's, the sentence says by what, and what
of the peak neither holds. argv: vramreport, the source directory."""
import gzip
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from vrtest import human_bytes, load_pickle, result  # noqa: E402

VR, SRC = sys.argv[1], sys.argv[2]
SNAP = os.path.join(SRC, "tests/data/realdata/snapshot")
KINETO = os.path.join(SRC, "tests/data/realdata/kineto")


def report(path, fmt):
    out = "live-%s.%s" % (os.path.basename(path), fmt)
    p = subprocess.run([VR, path, "-o", out, "-q"], capture_output=True, text=True)
    if not os.path.exists(out):
        result(False, "%s: vramreport wrote %s" % (os.path.basename(path), fmt), p.stderr[-400:])
        return None
    with open(out, encoding="utf-8") as f:
        return json.load(f) if fmt == "json" else f.read()


def count(n):
    return "{:,}".format(n)


def sections(md):
    """{"cuda:0": the device section's Markdown}."""
    parts = re.split(r"^## ", md, flags=re.M)
    return {re.sub(r": .*", "", p.split("\n", 1)[0].strip()): p for p in parts[1:]}


# -- the independent side: replays ---------------------------------------------

def snapshot_live(path, device):
    """(allocations of the history live at the allocated peak, their
    bytes, blocks in use at the end that no allocation of the history
    live at the end made, their bytes) of one device of a pickle. The peak:
    the first entry at which alloc minus free_completed is highest, or the
    start (before entry 1) when no entry rises above it."""
    snap = load_pickle(path)
    trace = snap["device_traces"][device]
    level, best, peak_i = 0, 0, -1
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            level += e["size"]
        elif e["action"] == "free_completed":
            level -= e["size"]
        if level > best:
            best, peak_i = level, i
    live = {}
    for e in trace[:peak_i + 1]:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
        elif e["action"] == "free_completed":
            live.pop(e["addr"], None)
    end = {}
    for e in trace:
        if e["action"] == "alloc":
            end[e["addr"]] = e["size"]
        elif e["action"] == "free_completed":
            end.pop(e["addr"], None)
    before = []
    for seg in snap.get("segments", []):
        if seg.get("device", 0) != device:
            continue
        addr = seg["address"]
        for b in seg["blocks"]:
            if b["state"] == "active_allocated" and addr not in end:
                # a stack: the block's frames, or (a legacy snapshot) its history's
                stack = b.get("frames") or any(h.get("frames") for h in b.get("history") or [])
                before.append((b, bool(stack)))
            addr += b["size"]
    stacked = [b for b, has in before if has]
    return (len(live), sum(live.values()), len(stacked), sum(b["size"] for b in stacked))


def trace_live(path):
    """{device label: (allocations live at the peak, their bytes)} of a
    kineto trace whose [memory] events carry addresses and totals: the
    peak is the first event with the highest Total Allocated."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        doc = json.load(f)
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else []
    mem = {}
    for order, e in enumerate(events):
        a = e.get("args") or {} if isinstance(e, dict) else {}
        if not isinstance(e, dict) or e.get("name") != "[memory]" or "ts" not in e:
            continue
        if a.get("Device Type") != 1 or "Addr" not in a or "Total Allocated" not in a:
            continue
        mem.setdefault("cuda:%d" % a["Device Id"], []).append(
            (float(e["ts"]), order, int(a["Addr"]), int(a["Bytes"]), int(a["Total Allocated"])))
    out = {}
    for label, evs in mem.items():
        evs.sort(key=lambda m: (m[0], m[1]))
        top = max(m[4] for m in evs)
        k = next(i for i, m in enumerate(evs) if m[4] == top)
        live = {}
        for m in evs[:k + 1]:
            if m[3] > 0:
                live[m[2]] = m[3]
            else:
                live.pop(m[2], None)
        out[label] = (len(live), sum(live.values()))
    return out


# -- the report's side ---------------------------------------------------------

ROW = re.compile(r"^\| Live at the peak(, allocated by an entry of the history)? \| (.+?) "
                 r"\(allocations: ([0-9,]+)\) \|$", re.M)
TOTAL = re.compile(r"^Live at the peak(, in this list)?: (.+?) \(allocations: ([0-9,]+)\)(.*)$", re.M)


def check_device(tag, dev, sec, oracle):
    """The row, the list's total and its sentence against the JSON, and the
    JSON against the oracle (count, bytes, before count, before bytes)."""
    n, b = dev.get("live_at_peak_count"), dev.get("live_at_peak_bytes")
    gn, gb = dev.get("live_at_peak_grouped_count"), dev.get("live_at_peak_grouped_bytes")
    bn = dev.get("live_at_peak_grouped_before_count")
    bb = dev.get("live_at_peak_grouped_before_bytes")
    un = dev.get("unattributed_at_peak_bytes") or 0
    if oracle is not None:
        result((n, b) == oracle[:2], "%s: live_at_peak_count/_bytes are the replay's" % tag,
               "%r != %r" % ((n, b), oracle[:2]))
        if len(oracle) > 2:
            result((bn, bb) == oracle[2:], "%s: the blocks from before the history are the "
                   "segments' (in use at the end, with a stack, no live entry made them)" % tag,
                   "%r != %r" % ((bn, bb), oracle[2:]))
    if n is None:
        return
    result(gn == n + (bn or 0) and gb == b + (bb or 0),
           "%s: the list holds the row's allocations plus the blocks from before" % tag,
           repr((gn, gb, n, b, bn, bb)))
    result(b + un == dev.get("peak_allocated_bytes"),
           "%s: row and what was live before make the peak" % tag,
           repr((b, un, dev.get("peak_allocated_bytes"))))
    row = ROW.search(sec)
    if row:
        result(row.group(2) == human_bytes(b) and row.group(3) == count(n),
               "%s: the row's figures are live_at_peak_bytes/_count" % tag, row.group(0))
    else:
        result(n == 0 and (bb or 0) > 0, "%s: no row only when the history left nothing live "
               "and the list holds blocks from before" % tag, repr((n, bb)))
    tot = TOTAL.search(sec)
    if not tot:
        result(gn == 0, "%s: a list of what was live has its total" % tag, repr(gn))
        return
    result(tot.group(2) == human_bytes(gb) and tot.group(3) == count(gn),
           "%s: the list's total is live_at_peak_grouped_*" % tag, tot.group(0)[:300])
    rest = tot.group(4)
    split = gb != b or un > (bb or 0)
    result(bool(tot.group(1)) == split,
           "%s: the list's total says 'in this list' exactly when it is not both the row "
           "and the peak" % tag, tot.group(0)[:300])
    if (bb or 0) > 0:
        want = "%s in blocks in use since before the history (allocations: %s)" % (
            human_bytes(bb), count(bn))
        result(want in rest and (not row or ("the %s allocated by an entry of the history "
                                             "(allocations: %s)" % (human_bytes(b), count(n))) in rest),
               "%s: the total says how much of it the row holds, how much came from before" % tag,
               rest[:300])
    if un > (bb or 0):
        want = "not in it, the other %s of the peak" % human_bytes(un - (bb or 0))
        result(want in rest, "%s: the total says what of the peak the list does not hold" % tag,
               rest[:300])
    else:
        result("not in it" not in rest, "%s: the list holds the whole peak: nothing said missing"
               % tag, rest[:300])


for name in sorted(os.listdir(SNAP)):
    path = os.path.join(SNAP, name)
    d, md = report(path, "json"), report(path, "md")
    if d is None or md is None:
        continue
    secs = sections(md)
    for i, dev in enumerate(d["devices"]):
        check_device("%s %s" % (name, dev["id"]), dev, secs.get(dev["id"], ""),
                     snapshot_live(path, i))

for name in sorted(os.listdir(KINETO)):
    path = os.path.join(KINETO, name)
    if not name.endswith(".json.gz") or "memory-timeline" in name:
        continue
    d, md = report(path, "json"), report(path, "md")
    if d is None or md is None:
        continue
    secs = sections(md)
    want = trace_live(path)
    for dev in d["devices"]:
        o = want.get(dev["id"])
        check_device("%s %s" % (name, dev["id"]), dev, secs.get(dev["id"], ""),
                     o if dev.get("live_at_peak_count") is not None else None)
