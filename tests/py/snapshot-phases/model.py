"""An allocator snapshot's phases and categories, read by Python from the
pickle (every global refused) and the rules file, as docs/categories.md
states them ("Phases of an allocator snapshot"), without vramreport's code.

Each alloc entry's stack has a kind: backward when a frame of it has the
backward role (the autograd engine runs it, a recomputed forward
included); else by its innermost frame with a role: forward or replica
-> forward, optimizer -> optimizer, weights or data -> forward inside a
forward (a frame of the stack has the forward role), else no phase; no
role (or no stack) -> undecided. Inside an Optimizer.step# or
Optimizer.zero_grad# annotation an entry undecided, of optimizer or of no
phase is the annotation's; forward and backward entries keep theirs (a
step run as optimizer.step(closure)). A phase begins at the first entry
(or annotation start) of another kind and reaches to the next one; the
end of an annotation begins a stretch in no phase; the last phase reaches
to the record's end. Undecided entries belong to the phase before them,
except in a record without forward entries, where those just before a
backward (after something other than a forward, or first) are its
forward: a plain-function model's forward."""
import fnmatch
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import load_pickle  # noqa: E402

KINDS = ("forward", "backward", "optimizer", "zero_grad")


# ---- the rules file: role lines and rules --------------------------------

def _cond(words):
    out = {}
    for w in words:
        k, v = w.split("=", 1)
        neg = v.startswith("!")
        out[k] = (neg, (v[1:] if neg else v).split("|"))
    return out


def read_rules(path):
    roles, rules = [], []
    with open(path) as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            w = s.split()
            if w[0] == "role":
                roles.append((w[1], _cond(w[2:])))
            else:
                arrow = w.index("->")
                rules.append((w[0], _cond(w[1:arrow]), w[arrow + 1]))
    return roles, rules


def _globs(cond, s):
    neg, alts = cond
    hit = any((s is None) if g == "-" else (s is not None and fnmatch.fnmatchcase(s, g))
              for g in alts)
    return hit != neg


# frame_role's answers by (rules, name, file): a snapshot's stacks share
# few distinct frames, each matched against every glob once.
_role_of = {}


def frame_role(roles, frame):
    key = (id(roles), frame["name"], frame["filename"])
    if key not in _role_of:
        _role_of[key] = _frame_role(roles, frame)
    return _role_of[key]


def _frame_role(roles, frame):
    for role, c in roles:
        if ("frame" not in c or _globs(c["frame"], frame["name"])) and \
           ("file" not in c or _globs(c["file"], frame["filename"])):
            return role
    return None


def stack_roles(roles, frames):
    """(innermost role or None, set of all roles) of a frames list,
    innermost first."""
    inner, within = None, set()
    for fr in frames or []:
        r = frame_role(roles, fr)
        if r:
            within.add(r)
            if inner is None:
                inner = r
    return inner, within


def decide(rules, facts):
    """The first rule that holds (its name, category), or (None, unknown)."""
    for name, c, cat in rules:
        ok = True
        for k, cond in c.items():
            neg, alts = cond
            if k == "alloc":
                ok = (facts["alloc"] in alts) != neg
            elif k == "free":
                have = {"never"} if facts["free"] is None else {facts["free"]}
                if facts["same_phase"]:
                    have.add("same_phase")
                ok = bool(have & set(alts)) != neg
            elif k == "step":
                ok = alts == ["no"]
            elif k == "op":
                ok = _globs(cond, None)
            elif k in ("frame", "file"):
                ok = facts["frames"] is not None and any(
                    ("frame" not in c or _globs(c["frame"], fr["name"])) and
                    ("file" not in c or _globs(c["file"], fr["filename"]))
                    for fr in facts["frames"])
            elif k == "role":
                ok = facts["frames"] is not None and \
                    ((facts["role"] or "-") in alts) != neg
            elif k == "within":
                ok = facts["frames"] is not None and bool(facts["within"] & set(alts)) != neg
            if not ok:
                break
        if ok:
            return name, cat
    return None, "unknown"


# ---- phases --------------------------------------------------------------

def entry_kind(roles, frames):
    inner, within = stack_roles(roles, frames)
    if "backward" in within:
        return "backward"
    if inner in ("forward", "replica"):
        return "forward"
    if inner == "optimizer":
        return "optimizer"
    if inner in ("weights", "data"):
        return "forward" if "forward" in within else "none"
    return None


def annotation_segments(snap):
    """Optimizer.step#/zero_grad# START/END pairs (the latest START of a
    name first), flattened: the innermost open one decides; [(start, end,
    kind)] in ns, in time order."""
    spans, open_ = [], []
    for a in snap.get("external_annotations") or []:
        name, t = a.get("name", ""), a["time_us"] * 1000
        if a["stage"] == "START":
            open_.append((name, t))
        else:
            for i in range(len(open_) - 1, -1, -1):
                if open_[i][0] == name:
                    spans.append((open_[i][1], t, name))
                    del open_[i]
                    break
    kinds = []
    for s, e, name in spans:
        if name.startswith("Optimizer.step#"):
            kinds.append((s, e, "optimizer"))
        elif name.startswith("Optimizer.zero_grad#"):
            kinds.append((s, e, "zero_grad"))
    kinds.sort(key=lambda x: (x[0], -x[1]))
    cuts = sorted({t for s, e, _ in kinds for t in (s, e)})
    segs = []
    for a, b in zip(cuts, cuts[1:]):
        inner = None
        for s, e, k in kinds:
            if s <= a and b <= e:
                inner = k  # the latest start covering it
        if inner:
            if segs and segs[-1][2] == inner and segs[-1][1] == a:
                segs[-1] = (segs[-1][0], b, inner)
            else:
                segs.append((a, b, inner))
    return segs


def record_end(snap):
    ts = [e["time_us"] for tr in snap.get("device_traces", []) for e in tr]
    ts += [a["time_us"] for a in snap.get("external_annotations") or []]
    return max(ts) * 1000


def phases(snap, roles):
    """[(kind, start_ns, end_ns)] of the snapshot, from its first device
    trace with an entry that decides a phase (and its annotations)."""
    segs = annotation_segments(snap)
    entries = []
    for tr in snap.get("device_traces", []):
        e = [(x["time_us"] * 1000, entry_kind(roles, x.get("frames")))
             for x in tr if x["action"] == "alloc" and x.get("size", 0) > 0]
        if any(k for _, k in e):
            entries = e
            break
    marks = []  # (ts, order, kind): annotation edges before entries at one time
    for i, (s, e, k) in enumerate(segs):
        marks.append((s, 0, k, True))
        if i + 1 == len(segs) or segs[i + 1][0] != e:
            marks.append((e, 0, "none", True))
    for t, k in entries:
        marks.append((t, 1, k, False))
    marks.sort(key=lambda m: (m[0], m[1]))
    runs = []  # [kind, start, first undecided after its last entry]
    lead = None
    seg_i, cur_seg = 0, None
    has_forward = False
    for t, _, k, edge in marks:
        if not edge:
            while seg_i < len(segs) and segs[seg_i][1] <= t:
                seg_i += 1
            a = segs[seg_i][2] if seg_i < len(segs) and segs[seg_i][0] <= t else None
            if a and k in (None, "optimizer", "none"):
                k = a
            if k == "forward":
                has_forward = True
        if k is None:
            if runs:
                if runs[-1][2] is None:
                    runs[-1][2] = t
            elif lead is None:
                lead = t
            continue
        if runs and runs[-1][0] == k:
            runs[-1][2] = None
            continue
        runs.append([k, t, None])
    end = record_end(snap) + 1
    out = []
    if runs and runs[0][0] == "backward" and not has_forward and lead is not None:
        out.append(("forward", lead, runs[0][1]))
    for i, (k, s, u) in enumerate(runs):
        nxt = runs[i + 1] if i + 1 < len(runs) else None
        e = nxt[1] if nxt else end
        split = nxt and nxt[0] == "backward" and not has_forward and k != "forward" and u is not None
        if split:
            e = u
        if k != "none" and (e > s or not nxt):
            out.append((k, s, e))
        if split and nxt[1] > u:
            out.append(("forward", u, nxt[1]))
    return out


def phase_at(ph, t):
    """(kind or 'other', stretch): the phase t lies in and the index of the
    last phase begun at or before it."""
    idx = -1
    for i, (k, s, e) in enumerate(ph):
        if s <= t:
            idx = i
    if idx >= 0 and (t < ph[idx][2] or (t == ph[idx][2] == ph[idx][1])):
        return ph[idx][0], idx
    return "other", idx


# ---- allocations, the peak ------------------------------------------------

def allocations(snap, roles, rules, ph):
    """Every allocation of the record: dicts with ts, free_ts, bytes, addr,
    device, alloc/free phase, rule, category."""
    out = []
    for dev, tr in enumerate(snap.get("device_traces", [])):
        live = {}
        for i, x in enumerate(tr):
            if x["action"] == "alloc" and x.get("size", 0) > 0:
                live[x["addr"]] = a = {"device": dev, "addr": x["addr"], "bytes": x["size"],
                                       "ts": x["time_us"] * 1000, "free_ts": None, "i": i,
                                       "free_i": None, "frames": x.get("frames") or None}
                out.append(a)
            elif x["action"] == "free_completed" and x["addr"] in live:
                a = live.pop(x["addr"])
                a["free_ts"], a["free_i"] = x["time_us"] * 1000, i
    has = bool(ph)
    for a in out:
        ak, ast = phase_at(ph, a["ts"])
        fk, fst = phase_at(ph, a["free_ts"]) if a["free_ts"] is not None else (None, None)
        inner, within = stack_roles(roles, a["frames"])
        facts = {"alloc": ak, "free": fk, "frames": a["frames"], "role": inner, "within": within,
                 "same_phase": has and fk is not None and ak == fk and ast == fst}
        a["alloc_phase"], a["free_phase"] = ak, fk
        a["rule"], a["category"] = decide(rules, facts)
    return out


def blocks_before(snap, allocs, roles, rules, dev=0):
    """Blocks in use at the end that no allocation of the record live at
    the end is: live at every point, decided as made before any phase and
    never freed. {category: bytes} (unknown left out)."""
    live_end = {a["addr"] for a in allocs if a["device"] == dev and a["free_ts"] is None}
    out = {}
    for seg in snap["segments"]:
        if seg.get("device", 0) != dev:
            continue
        for b in seg["blocks"]:
            if b["state"] != "active_allocated" or b["address"] in live_end:
                continue
            frames = b.get("frames") or None
            if not frames:
                continue
            inner, within = stack_roles(roles, frames)
            _, cat = decide(rules, {"alloc": "other", "free": None, "frames": frames,
                                    "role": inner, "within": within, "same_phase": False})
            if cat != "unknown":
                out[cat] = out.get(cat, 0) + b["size"]
    return out


def timeline(snap, dev=0):
    """[(ts, running allocated, event index)] of a device, its level lifted
    so it ends at the segments' state, with the opening and closing levels
    (at the first entry's time - 1 ns and the last's)."""
    tr = snap["device_traces"][dev]
    final = sum(b["size"] for s in snap["segments"] if s.get("device", 0) == dev
                for b in s["blocks"] if b["state"] == "active_allocated")
    delta = [(x["size"] if x["action"] == "alloc" else
              -x["size"] if x["action"] == "free_completed" else 0) for x in tr]
    level = final - sum(delta)
    pts = [(tr[0]["time_us"] * 1000 - 1, level, -1)]
    for i, (x, d) in enumerate(zip(tr, delta)):
        if d:
            level += d
            pts.append((x["time_us"] * 1000, level, i))
    pts.append((tr[-1]["time_us"] * 1000, level, len(tr)))
    return pts


def peak_breakdown(snap, allocs, roles, rules, dev=0):
    pts = timeline(snap, dev)
    peak = max(p[1] for p in pts)
    at = next(p for p in pts if p[1] == peak)
    cats = {}
    for a in allocs:
        if a["device"] == dev and a["i"] <= at[2] and (a["free_i"] is None or a["free_i"] > at[2]):
            cats[a["category"]] = cats.get(a["category"], 0) + a["bytes"]
    for c, b in blocks_before(snap, allocs, roles, rules, dev).items():
        cats[c] = cats.get(c, 0) + b
    known = sum(b for c, b in cats.items() if c != "unknown")
    cats["unknown"] = peak - known
    return peak, cats


def phase_peaks(snap, ph, dev=0):
    """{phase: peak} over the device's points (zero_grad with the
    optimizer's, outside every phase: other)."""
    out = {}
    for t, level, _ in timeline(snap, dev):
        k, _ = phase_at(ph, t)
        k = "optimizer" if k == "zero_grad" else k
        out[k] = max(out.get(k, level), level)
    return out
