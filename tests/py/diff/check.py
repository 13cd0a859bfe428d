"""tests/diff.sh's oracle: a diff document checked against the two single
reports (`vramreport X -o x.json` of each side), every figure recomputed
here from them, or (`self`) a diff of a run against itself.

  check.py pair BEFORE.json AFTER.json DIFF.json LABEL
  check.py self DIFF.json LABEL
  check.py unpaired BEFORE.json AFTER.json DIFF.json LABEL
"""
import json
import sys

from vrtest import result

CATS = ["parameter", "optimizer_state", "input", "temporary", "activation", "kv_cache",
        "gradient", "autograd_detail", "unknown"]


def load(p):
    with open(p, encoding="utf-8") as f:
        return json.load(f)


def triple(b, a):
    return {"before": b, "after": a,
            "delta": None if b is None or a is None else a - b}


def sites_of(dev):
    """Site -> bytes: a snapshot's top_sites by frame, else the groups'
    modules (or operators) summed over the categories."""
    out = {}
    if dev.get("top_sites"):
        for s in dev["top_sites"]:
            k = s["frame"] if s["frame"] is not None else "(torch's own frames)"
            out[k] = out.get(k, 0) + s["bytes"]
        return out
    by_op = dev.get("live_at_peak_by") == "operator"
    for g in dev.get("live_at_peak_groups") or []:
        for x in g["operators" if by_op else "modules"]:
            name = x["operator" if by_op else "module"]
            k = name if name is not None else ("(no operator)" if by_op else "(outside any module)")
            out[k] = out.get(k, 0) + x["bytes"]
    return out


def expected_sites(bd, ad):
    b, a = sites_of(bd), sites_of(ad)
    rows = {}
    for k in set(b) | set(a):
        vb, va = b.get(k, 0), a.get(k, 0)
        if k not in b or (vb == 0 and va > 0):
            ch = "appeared"
        elif k not in a or (va == 0 and vb > 0):
            ch = "vanished"
        else:
            ch = "grew" if va > vb else "shrank" if va < vb else "same"
        rows[k] = {"site": k, "before_bytes": vb, "after_bytes": va, "delta_bytes": va - vb,
                   "change": ch}
    return rows


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
    sites = expected_sites(bd, ad)
    got = {s["site"]: s for s in p["sites"]}
    result(got == sites, "%s: every site's bytes before and after, delta and change" % label,
           "%s != %s" % (json.dumps(got)[:600], json.dumps(sites)[:600]))
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
    bdoc, adoc, d, label = load(sys.argv[2]), load(sys.argv[3]), load(sys.argv[4])["diff"], sys.argv[5]
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
