# tests/by-module.sh runs this: ORACLE trace FILE | snapshot FILE.
"""What was live at a device's peak by module, computed from the input
alone: a trace's modules by its Python parent ids (the analysis nests by
time), a snapshot's by its entries' frames, replayed from the end state;
then rolled up by the rule docs/breakdown.md states: from the roots down,
while one module shown holds more than half of what modules hold and most
of it is in its submodules, its submodules (and its own bytes) are shown
in its place; the largest ten kept, the rest summed. Prints JSON."""
import bisect
import functools
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import load_pickle  # noqa: E402

SHOWN = 10


def trace_live(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as fh:
        events = json.load(fh)["traceEvents"]
    mem = [e for e in events if e.get("name") == "[memory]"
           and e["args"].get("Device Type") == 1 and e["args"].get("Device Id") == 0]
    mem.sort(key=lambda e: float(e["ts"]))
    peak = max(range(len(mem)), key=lambda i: (mem[i]["args"]["Total Allocated"], -i))
    live = {}
    for e in mem[:peak + 1]:
        a = e["args"]
        if a["Bytes"] > 0:
            live[a["Addr"]] = e
        else:
            live.pop(a["Addr"], None)
    py = [e for e in events if e.get("cat") == "python_function"]
    by_id = {e["args"]["Python id"]: e for e in py}
    by_tid = {}
    for e in sorted(py, key=lambda e: (float(e["ts"]), e["args"]["Python id"])):
        by_tid.setdefault(e["tid"], []).append(e)
    starts = {t: [float(e["ts"]) for e in v] for t, v in by_tid.items()}
    rows = []
    for e in live.values():
        t, evs = float(e["ts"]), by_tid.get(e["tid"], [])
        i = bisect.bisect_right(starts.get(e["tid"], []), t)
        cur = None
        while i > 0:
            i -= 1
            c = evs[i]
            if float(c["ts"]) + float(c["dur"]) >= t:
                cur = c
                break
        mods = []
        while cur is not None:
            if cur["name"].startswith("nn.Module: "):
                mods.append(cur["name"][len("nn.Module: "):])
            cur = by_id.get(cur["args"].get("Python parent id"))
        rows.append(((tuple(reversed(mods)) or None), e["args"]["Bytes"]))
    return rows, mem[peak]["args"]["Total Allocated"]


def is_module_file(f):
    f = f.replace("\\", "/")
    parts = f.split("/")
    for i, p in enumerate(parts[:-1]):
        if p == "torch":
            return i + 1 < len(parts) - 1 and parts[i + 1] == "nn"
    return True


def frames_path(frames):
    out = []
    for fr in reversed(frames or []):
        if fr["name"] == "forward" and is_module_file(fr["filename"]):
            out.append("%s:%d" % (fr["filename"].replace("\\", "/").split("/")[-1] or "?", fr["line"]))
    return tuple(out) or None


def snapshot_live(path):
    d = load_pickle(path)
    if isinstance(d, list):  # PyTorch < 2.0: the segments alone
        d = {"segments": d, "device_traces": [[]]}
    entries = d["device_traces"][0] if d["device_traces"] else []
    blocks = []
    for s in d["segments"]:
        if s.get("device", 0) != 0:
            continue
        addr = s["address"]
        for b in s["blocks"]:  # a legacy block has no address: its offset in the segment
            blocks.append(dict(b, address=b.get("address", addr)))
            addr += b["size"]
    in_use = sum(b["size"] for b in blocks if b["state"] != "inactive")
    deltas = [e["size"] if e["action"] == "alloc" else -e["size"] if e["action"] == "free_completed"
              else 0 for e in entries]
    level = in_use - sum(deltas)
    peak, at = level, -1
    for i, x in enumerate(deltas):
        level += x
        if level > peak:
            peak, at = level, i
    live, end = {}, {}
    for i, e in enumerate(entries):
        if e["action"] == "alloc":
            end[e["addr"]] = e
            if i <= at:
                live[e["addr"]] = e
        elif e["action"] == "free_completed":
            end.pop(e["addr"], None)
            if i <= at:
                live.pop(e["addr"], None)
    rows = [(frames_path(e.get("frames")), e["size"]) for e in live.values()]
    # Blocks in use at the end that no allocation live at the end is,
    # with a stack: in use since before the record, live at every point.
    for b in blocks:
        frames = b.get("frames") or (b.get("history") or [{}])[0].get("frames")
        if b["state"] == "active_allocated" and b["address"] not in end and frames:
            rows.append((frames_path(frames), b["size"]))
    return rows, peak


def roll_up(rows, peak, sep):
    nodes = {}  # path tuple -> [own bytes, own count, all bytes, all count]
    outside = [0, 0]
    for path, size in rows:
        if path is None:
            outside[0] += size
            outside[1] += 1
            continue
        for k in range(1, len(path) + 1):
            n = nodes.setdefault(path[:k], [0, 0, 0, 0])
            n[2] += size
            n[3] += 1
        nodes[path][0] += size
        nodes[path][1] += 1
    children = {}
    for p in nodes:
        children.setdefault(p[:-1], []).append(p)
    shown = [(p, False) for p in children.get((), [])]
    total = sum(nodes[p][2] for p, _ in shown)
    while True:
        opened = [r for r in shown if not r[1] and r[0] in children
                  and 2 * nodes[r[0]][2] > total
                  and nodes[r[0]][2] - nodes[r[0]][0] > nodes[r[0]][0]]
        if not opened:
            break
        p = opened[0][0]
        shown.remove((p, False))
        if nodes[p][0] or nodes[p][1]:
            shown.append((p, True))
        shown += [(c, False) for c in children[p]]

    def figs(r):
        n = nodes[r[0]]
        return (n[0], n[1]) if r[1] else (n[2], n[3])
    # Equal sizes by the path's text in reading order (a run of digits by
    # its number: layer 2 before layer 10), as the report orders them.
    def natural(a, b):
        i = j = 0
        while i < len(a) and j < len(b):
            if a[i:i + 1].isdigit() and b[j:j + 1].isdigit():
                ie, je = i, j
                while ie < len(a) and a[ie:ie + 1].isdigit():
                    ie += 1
                while je < len(b) and b[je:je + 1].isdigit():
                    je += 1
                x, y = a[i:ie].lstrip(b"0"), b[j:je].lstrip(b"0")
                if len(x) != len(y) or x != y:
                    return -1 if (len(x), x) < (len(y), y) else 1
                i, j = ie, je
                continue
            if a[i] != b[j]:
                return -1 if a[i] < b[j] else 1
            i += 1
            j += 1
        if i < len(a) or j < len(b):
            return 1 if i < len(a) else -1
        return (a > b) - (a < b)

    def order(x, y):
        if figs(x)[0] != figs(y)[0]:
            return -1 if figs(x)[0] > figs(y)[0] else 1
        c = natural(sep.join(x[0]).encode(), sep.join(y[0]).encode())
        return c if c else int(x[1]) - int(y[1])
    shown.sort(key=functools.cmp_to_key(order))
    out = [{"module": sep.join(r[0]), "own": r[1], "bytes": figs(r)[0], "count": figs(r)[1]} for r in shown]
    rest = out[SHOWN:]
    recorded = sum(s for _, s in rows)
    return {"rows": out[:SHOWN],
            "more": {"groups": len(rest), "bytes": sum(r["bytes"] for r in rest),
                     "count": sum(r["count"] for r in rest)} if rest else None,
            "outside": {"bytes": outside[0], "count": outside[1]},
            "unrecorded": max(0, peak - recorded), "peak": peak}


def want(kind, path):
    """kind: trace or snapshot."""
    rows, peak = (trace_live if kind == "trace" else snapshot_live)(path)
    return roll_up(rows, peak, "." if kind == "trace" else " \u203a ")


if __name__ == "__main__":
    print(json.dumps(want(sys.argv[1], sys.argv[2])))
