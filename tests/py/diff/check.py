"""tests/diff.sh's oracle: a diff document checked against the two single
reports (`vramreport X -o x.json` of each side), every figure recomputed
here from them, or (`self`) a diff of a run against itself.

  check.py pair BEFORE.json AFTER.json DIFF.json LABEL
  check.py self DIFF.json LABEL
  check.py unpaired BEFORE.json AFTER.json DIFF.json LABEL
  check.py many BEFORE.json AFTER.json DIFF.json LABEL
  check.py pickle BEFORE.pickle AFTER.pickle DIFF.json LABEL
"""
import json
import re
import sys

from vrtest import load_pickle, result

CATS = ["parameter", "optimizer_state", "input", "temporary", "activation", "kv_cache",
        "gradient", "autograd_detail", "unknown"]


def load(p):
    with open(p, encoding="utf-8") as f:
        return json.load(f)


def triple(b, a):
    return {"before": b, "after": a,
            "delta": None if b is None or a is None else a - b}


def sites_of(dev):
    """Site -> bytes as the single report lists them: a snapshot's
    top_sites by frame (complete when fewer than the 10 it keeps), else
    the groups' modules (or operators) summed over the categories (a lower
    bound: each category lists its 5 largest)."""
    out = {}
    if dev.get("top_sites"):
        for s in dev["top_sites"]:
            k = s["frame"] if s["frame"] is not None else "(torch's own frames)"
            out[k] = out.get(k, 0) + s["bytes"]
        return out, len(dev["top_sites"]) < 10
    by_op = dev.get("live_at_peak_by") == "operator"
    full = dev.get("live_at_peak_groups_more") is None
    for g in dev.get("live_at_peak_groups") or []:
        full = full and g.get("modules_more" if not by_op else "operators_more") is None
        for x in g["operators" if by_op else "modules"]:
            name = x["operator" if by_op else "module"]
            k = name if name is not None else ("(no operator)" if by_op else "(outside any module)")
            out[k] = out.get(k, 0) + x["bytes"]
    return out, full


def relative(listed, folder):
    """A side's sites named as the diff names them: from the folder its
    own files share (the pair's site_folders), where they start with it."""
    if not folder:
        return dict(listed)
    out = {}
    for k, v in listed.items():
        k = k[len(folder):] if k.startswith(folder) else k
        out[k] = out.get(k, 0) + v
    return out


OWN_NOT = ("site-packages", "dist-packages", "torchinductor", "/lib/python", "\\Lib\\", "/usr/")


def check_folder(label, side, dev, folder):
    """The folder a side's sites are named from: a folder (ending in a
    separator) that every one of its own absolute frames starts with."""
    if folder is None:
        return
    frames = [f for s in dev.get("top_sites") or [] for f in [s["frame"] or ""] + (s.get("stack") or [])]
    own = [f for f in frames if re.match(r"(/|[A-Za-z]:\\)", f) and not any(n in f for n in OWN_NOT)
           and "_call_impl" not in f and "threading.py" not in f and re.search(r":\d", f)]
    result(folder[-1:] in ("/", "\\") and own and all(f.startswith(folder) for f in own),
           "%s: %s's sites are named from %r, the folder of all its own frames" % (label, side, folder),
           repr([f for f in own if not f.startswith(folder)][:2]))


def check_sites(label, bd, ad, p):
    """The diff's sites against what the single reports list: every site
    listed by both is neither appeared nor vanished, its bytes at least
    the listed ones (equal where a report lists all its sites); sites and
    sites_more add up to each side's bytes live at the peak."""
    (b, bfull), (a, afull) = sites_of(bd), sites_of(ad)
    folders = p.get("site_folders") or {}
    b, a = relative(b, folders.get("before")), relative(a, folders.get("after"))
    check_folder(label, "before", bd, folders.get("before"))
    check_folder(label, "after", ad, folders.get("after"))
    got = {s["site"]: s for s in p["sites"]}
    more = p["sites_more"]
    bad = []
    for k, s in got.items():
        if k in b and k in a and s["change"] in ("appeared", "vanished"):
            bad.append("%s listed by both, %s" % (k, s["change"]))
        for side, listed, full in (("before", b, bfull), ("after", a, afull)):
            v = listed.get(k, 0)
            if s[side + "_bytes"] < v or (full and s[side + "_bytes"] != v):
                bad.append("%s %s %d, listed %d" % (k, side, s[side + "_bytes"], v))
        if s["delta_bytes"] != s["after_bytes"] - s["before_bytes"]:
            bad.append("%s delta" % k)
    for side, listed, full in (("before", b, bfull), ("after", a, afull)):
        if full and more["count"] == 0 and set(listed) - set(got):
            bad.append("%s lists %s, the diff not" % (side, sorted(set(listed) - set(got))[:3]))
    result(not bad, "%s: each site the reports list: its bytes, and never appeared or vanished "
           "when both list it" % label, "; ".join(bad[:6]))
    for side, dev in (("before", bd), ("after", ad)):
        total = sum(s[side + "_bytes"] for s in p["sites"]) + more[side + "_bytes"]
        want = dev.get("live_at_peak_grouped_bytes") or 0
        result(total == want, "%s: the sites and sites_more add up to %s's bytes live at the peak"
               % (label, side), "%d != %d" % (total, want))
    n = len(p["sites"]) + more["count"]
    result(len(p["sites"]) <= 20 and (more["count"] == 0 or len(p["sites"]) == 20)
           and more["delta_bytes"] == more["after_bytes"] - more["before_bytes"],
           "%s: at most 20 sites listed, the rest (%d) summed" % (label, more["count"]),
           "%d listed of %d" % (len(p["sites"]), n))


def user_frame(e):
    """The first frame of the user's code (tests/py/where/snap_want.py's
    rule), or torch's own frames."""
    for fr in e.get("frames") or []:
        fn = fr["filename"].replace("\\", "/")
        if fn.endswith(".py") and "/torch/" not in fn and not fn.startswith("torch/"):
            return "%s:%d in %s" % (fr["filename"], fr["line"], fr["name"])
    return "(torch's own frames)"


def pickle_sites(path):
    """A snapshot's device 0 replayed from its pickle: the allocated level
    over its history (from the end state back), the allocations of the
    history live when it first ran highest, by user frame."""
    d = load_pickle(path)
    entries = d["device_traces"][0]
    in_use = sum(b["size"] for sg in d["segments"] if sg.get("device", 0) == 0
                 for b in sg["blocks"] if b["state"] == "active_allocated")
    deltas = [e["size"] if e["action"] == "alloc" else
              -e["size"] if e["action"] == "free_completed" else 0 for e in entries]
    level = in_use - sum(deltas)
    best, best_live, live = level, {}, {}
    for e, x in zip(entries, deltas):
        if e["action"] == "alloc":
            live[e["addr"]] = e
        elif e["action"] == "free_completed":
            live.pop(e["addr"], None)
        level += x
        if level > best:
            best, best_live = level, dict(live)
    out = {}
    for e in best_live.values():
        k = user_frame(e)
        out[k] = out.get(k, 0) + e["size"]
    return best, out


def check_pickles(bpath, apath, d, label):
    (bpeak, b), (apeak, a) = pickle_sites(bpath), pickle_sites(apath)
    p = d["devices"][0]
    folders = p.get("site_folders") or {}
    b, a = relative(b, folders.get("before")), relative(a, folders.get("after"))
    result(p["peak_allocated_bytes"]["before"] == bpeak and p["peak_allocated_bytes"]["after"] == apeak,
           "%s: the peaks are the pickles' replayed" % label, json.dumps(p["peak_allocated_bytes"]))
    bad, listed = [], set()
    for s in p["sites"]:
        listed.add(s["site"])
        want = (b.get(s["site"], 0), a.get(s["site"], 0))
        if (s["before_bytes"], s["after_bytes"]) != want:
            bad.append("%s: %s != %s" % (s["site"], (s["before_bytes"], s["after_bytes"]), want))
        if s["site"] in b and s["site"] in a and s["change"] in ("appeared", "vanished"):
            bad.append("%s held on both sides, %s" % (s["site"], s["change"]))
    rest = set(b) | set(a)
    rest -= listed
    m = p["sites_more"]
    want = (len(rest), sum(b.get(k, 0) for k in rest), sum(a.get(k, 0) for k in rest))
    if (m["count"], m["before_bytes"], m["after_bytes"]) != want:
        bad.append("sites_more %s != %s" % (m, want))
    result(not bad, "%s: every site's bytes are the pickles' (live at the replayed peak, by user "
           "frame), the rest in sites_more, none held by both appeared or vanished" % label,
           "; ".join(bad[:5]))


def findings(doc, dev):
    return [f["kind"] for f in doc["findings"]
            if f.get("device") == dev["id"] and f.get("rank") == dev["rank"]]


def find_dev(doc, id_, rank):
    for d in doc["devices"]:
        if d["id"] == id_ and d["rank"] == rank:
            return d
    return None


def check_pair(label, bdoc, adoc, p):
    bd = find_dev(bdoc, p["before_id"], p["rank"])
    ad = find_dev(adoc, p["after_id"], p["rank"])
    result(bd is not None and ad is not None, "%s: %s pairs with a device of each report"
           % (label, p["before_id"]), json.dumps(p)[:300])
    if bd is None or ad is None:
        return
    for key in ["peak_allocated_bytes", "peak_reserved_bytes", "headroom_bytes"]:
        want = triple(bd.get(key), ad.get(key))
        result(p[key] == want, "%s: %s before, after and delta are the single reports'"
               % (label, key), "%s != %s" % (p[key], want))
    bb, ab = bd.get("peak_breakdown") or {}, ad.get("peak_breakdown") or {}
    want = {c: triple(bb.get(c, 0), ab.get(c, 0)) for c in CATS if bb.get(c) or ab.get(c)}
    result(p["peak_breakdown"] == want, "%s: the breakdown at the peak, per category present" % label,
           "%s != %s" % (p["peak_breakdown"], want))
    check_sites(label, bd, ad, p)
    deltas = [abs(s["delta_bytes"]) for s in p["sites"]]
    result(deltas == sorted(deltas, reverse=True), "%s: the sites are ranked by |delta|" % label,
           str(deltas))
    bs = {s["step"]: s["peak_allocated_bytes"] for s in bd.get("steps") or []}
    as_ = {s["step"]: s["peak_allocated_bytes"] for s in ad.get("steps") or []}
    want = {k: triple(bs.get(k), as_.get(k)) for k in set(bs) | set(as_)}
    got = {s["step"]: {"before": s["before"], "after": s["after"], "delta": s["delta"]}
           for s in p["steps"]}
    result(got == want, "%s: the per-step peaks side by side" % label, "%s != %s" % (got, want))
    for side, dev in (("before", bd), ("after", ad)):
        pts = p["timeline"][side]["points"]
        ts = [x[0] for x in pts]
        ok = pts and max(x[1] for x in pts) == dev["peak_allocated_bytes"] and ts == sorted(ts) \
            and ts[0] >= 0 and len(pts) <= 400
        result(bool(ok), "%s: the %s timeline is in time order, at most 400 points, its highest the peak"
               % (label, side), "%d points" % len(pts))
    common = set(bs) & set(as_)
    on = p["timeline"]["aligned_on"]
    if common:
        ok = on is not None and on["step"] == min(common) and on["before_ns"] >= 0 \
            and on["after_ns"] >= 0
    else:
        ok = on is None
    result(ok, "%s: the timelines are aligned on the first step both have (%s), else not"
           % (label, min(common) if common else "none"), json.dumps(on))
    fb, fa = findings(bdoc, bd), findings(adoc, ad)
    f = p["findings"]
    result([x["kind"] for x in f["before"]] == fb and [x["kind"] for x in f["after"]] == fa,
           "%s: the findings before and after" % label, json.dumps(f)[:400])
    result(set(f["gone"]) == set(fb) - set(fa) and set(f["new"]) == set(fa) - set(fb),
           "%s: the findings gone and new" % label, json.dumps(f)[:400])
    advised = []
    for a in bdoc["advice"]:
        if a["device"] == bd["id"] and a["id"] not in [x[0] for x in advised]:
            advised.append((a["id"], a["saving_bytes"]))
    got = [(x["id"], x["estimated_saving_bytes"]) for x in p["advice_checked"]]
    result(got == advised, "%s: every remedy BEFORE advised is checked, with its estimate" % label,
           "%s != %s" % (got, advised))
    return bd, ad


def measured(p, rid):
    for x in p["advice_checked"]:
        if x["id"] == rid:
            return x["measured_saving_bytes"], x["applied"]
    return None, None


def main():
    mode = sys.argv[1]
    if mode == "self":
        d, label = load(sys.argv[2])["diff"], sys.argv[3]
        bad = []
        for p in d["devices"]:
            for key in ["peak_allocated_bytes", "peak_reserved_bytes", "out_of_memory_count"]:
                if p[key]["delta"] != 0:
                    bad.append(key)
            if p["headroom_bytes"]["before"] is not None and p["headroom_bytes"]["delta"] != 0:
                bad.append("headroom")
            bad += ["breakdown " + c for c, t in p["peak_breakdown"].items() if t["delta"] != 0]
            bad += ["site " + s["site"] for s in p["sites"]
                    if s["delta_bytes"] != 0 or s["change"] != "same"]
            bad += ["step %s" % s["step"] for s in p["steps"] + p["phases"] if s["delta"] != 0]
            if p["findings"]["gone"] or p["findings"]["new"]:
                bad.append("findings")
        result(not bad and d["devices"] != [], "%s: against itself, zero everywhere and every site same"
               % label, ", ".join(bad[:20]))
        result(not d["unpaired"]["before"] and not d["unpaired"]["after"] and not d["pairs_differ"],
               "%s: against itself, every device pairs" % label, json.dumps(d["unpaired"]))
        return
    if mode == "pickle":
        check_pickles(sys.argv[2], sys.argv[3], load(sys.argv[4])["diff"], sys.argv[5])
        return
    bdoc, adoc, d, label = load(sys.argv[2]), load(sys.argv[3]), load(sys.argv[4])["diff"], sys.argv[5]
    if mode == "many":
        # Every device pairs, those past the 16 in full too (by their
        # peaks: more_devices[] of the single reports); in_full says
        # whether both are in devices[].
        def index(doc):
            out = {}
            for full, key in ((True, "devices"), (False, "more_devices")):
                for x in doc[key]:
                    out[(x["id"], x["rank"])] = (x, full)
            return out
        bi, ai = index(bdoc), index(adoc)
        got = {(p["before_id"], p["rank"]): p for p in d["devices"]}
        bad = [k for k in bi if k not in got]
        for k, p in got.items():
            (bx, bf), (ax, af) = bi[k], ai[(p["after_id"], p["rank"])]
            for key in ["peak_allocated_bytes", "peak_reserved_bytes"]:
                if p[key] != triple(bx.get(key), ax.get(key)):
                    bad.append("%s %s" % (k, key))
            if p["in_full"] != (bf and af):
                bad.append("%s in_full" % (k,))
            if not p["in_full"] and (p["peak_breakdown"] or p["sites"] or p["steps"]):
                bad.append("%s: details without both in full" % (k,))
        result(not bad and len(got) == len(bi) == len(ai) and len(bi) > 16,
               "%s: all %d devices pair, past the 16 in full by their peaks" % (label, len(bi)),
               "; ".join(map(str, bad[:6])))
        return
    if mode == "unpaired":
        ub = [(x["id"], x["rank"]) for x in d["unpaired"]["before"]]
        ua = [(x["id"], x["rank"]) for x in d["unpaired"]["after"]]
        want_b = [(x["id"], x["rank"]) for x in bdoc["devices"]]
        want_a = [(x["id"], x["rank"]) for x in adoc["devices"]]
        result(d["devices"] == [] and ub == want_b and ua == want_a and d["pairs_differ"],
               "%s: devices of other ranks are listed unpaired on each side" % label,
               "%s %s" % (ub, ua))
        return
    result(len(d["devices"]) >= 1, "%s: the devices pair" % label, json.dumps(d["unpaired"]))
    for p in d["devices"]:
        pair = check_pair(label, bdoc, adoc, p)
        if pair and mode == "advice":
            bd, ad = pair
            bb, ab = bd["peak_breakdown"], ad["peak_breakdown"]
            want = bb["optimizer_state"] - ab["optimizer_state"]
            got, applied = measured(p, "8bit-optimizer")
            result(got == want and applied is True,
                   "%s: 8-bit optimizer: the measured saving is the optimizer state's drop" % label,
                   "%s != %s" % (got, want))
            want = (bd["peak_reserved_bytes"] - bd["peak_allocated_bytes"]) - \
                (ad["peak_reserved_bytes"] - ad["peak_allocated_bytes"])
            got, applied = measured(p, "expandable-segments")
            result(got == want, "%s: expandable segments: the measured saving is the cache's drop"
                   % label, "%s != %s" % (got, want))
    result(d["oom_event_count"] == triple(bdoc["oom_event_count"], adoc["oom_event_count"]),
           "%s: the out-of-memory errors before and after" % label, json.dumps(d["oom_event_count"]))


main()
