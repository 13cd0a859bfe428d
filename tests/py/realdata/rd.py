# tests/realdata.sh runs this.
import decimal, gzip, json, re, sys, zlib
from decimal import Decimal

GPU_TYPES = {1: "cuda", 6: "rocm"}
STEP_RE = re.compile(r"ProfilerStep#([0-9]+)$")


def raw_text(path):
    """The decompressed bytes of a file (plain or gzip)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def us_to_ns(ts):
    # ts is the exact text of the number (parse_float=str) or an int.
    return int((Decimal(ts) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


WS = " \t\r\n"


def walk(text):
    """Reads a trace (text decoded as latin-1, so that an index is a byte
    offset) the way a streaming reader must: yields ("member", key, value)
    for each top-level member but the event list, and ("event", value, end)
    for each element of the event list (or of a top-level array), end being
    the offset just past it. Stops quietly where the text is cut."""
    dec = json.JSONDecoder(parse_float=str)
    n = len(text)

    def skip(i):
        while i < n and text[i] in WS:
            i += 1
        return i

    def elements(i):
        i = skip(i + 1)
        while i < n and text[i] != "]":
            try:
                obj, j = dec.raw_decode(text, i)
            except ValueError:
                return  # cut inside this element
            yield ("event", obj, j)
            i = skip(j)
            if i < n and text[i] == ",":
                i = skip(i + 1)

    i = skip(0)
    if i < n and text[i] == "[":
        yield from elements(i)
        return
    i = skip(i + 1)
    while i < n and text[i] != "}":
        try:
            key, i = dec.raw_decode(text, i)
            i = skip(i)
            if text[i] != ":":
                return
            i = skip(i + 1)
            if key == "traceEvents" and text[i] == "[":
                for ev in elements(i):
                    yield ev
                    i = ev[2]
                i = skip(i)
                if i >= n or text[i] != "]":
                    return
                i += 1
            else:
                val, i = dec.raw_decode(text, i)
                yield ("member", key, val)
        except (ValueError, IndexError):
            return
        i = skip(i)
        if i < n and text[i] == ",":
            i = skip(i + 1)


def utf8(s):
    return s.encode("latin-1").decode("utf-8", "replace") if isinstance(s, str) else s


def rebuild(events):
    """events: [(ts_ns, order, bytes)] -> (peak, ts of first event at it)."""
    events = sorted(events)
    run, totals = 0, []
    for ts, _, b in events:
        run += b
        totals.append(run)
    base = max(0, -min(totals))
    peak = max(totals) + base
    for (ts, _, _), t in zip(events, totals):
        if t + base == peak:
            return peak, ts


def gpu_memory(e):
    """(label, args) of a GPU [memory] event the reader must count, else None."""
    if not isinstance(e, dict) or e.get("name") != "[memory]" or "ts" not in e:
        return None
    a = e.get("args") or {}
    if a.get("Device Type") not in GPU_TYPES or "Device Id" not in a or "Bytes" not in a:
        return None
    return "cuda:%d" % a["Device Id"], a


def expect_kineto(items):
    meta, devs, steps, ends, mem_ends = {}, {}, set(), [], []
    for order, (kind, a, b) in enumerate(items):
        if kind == "member":
            meta[a] = b
            continue
        e = a
        ends.append(b)
        if not isinstance(e, dict):
            continue
        name = e.get("name")
        if e.get("ph") == "X" and e.get("cat") in ("user_annotation", "Operator") \
                and isinstance(name, str):
            m = STEP_RE.match(name)
            if m:
                steps.add(int(m.group(1)))
        g = gpu_memory(e)
        if not g:
            continue
        label, args = g
        d = devs.setdefault(label, {"idx": args["Device Id"], "n": 0, "mem": []})
        d["n"] += 1
        d["mem"].append((us_to_ns(e["ts"]), order, int(args["Bytes"]),
                         args.get("Total Allocated"), args.get("Total Reserved")))
        mem_ends.append((len(ends) - 1, args.get("Total Allocated"), label))
    base = int(meta.get("baseTimeNanoseconds") or 0)
    props = {p.get("id"): p for p in meta.get("deviceProperties") or []}
    out = {}
    for label, d in devs.items():
        p = props.get(d["idx"], {})
        x = {"memory_events": d["n"], "name": utf8(p.get("name")),
             "capacity_bytes": p.get("totalGlobalMem"), "steps": len(steps)}
        if all(m[3] is not None for m in d["mem"]):
            peak = max(int(m[3]) for m in d["mem"])
            x["peak_allocated_bytes"] = peak
            x["peak_allocated_ts_ns"] = base + min(m[0] for m in d["mem"] if int(m[3]) == peak)
            res = [int(m[4]) for m in d["mem"] if m[4] is not None]
            x["peak_reserved_bytes"] = max(res) if res else None
            x["totals_rebuilt"] = False
        else:
            peak, ts = rebuild([(m[0], m[1], m[2]) for m in d["mem"]])
            x["peak_allocated_bytes"] = peak
            x["peak_allocated_ts_ns"] = base + ts
            x["peak_reserved_bytes"] = None
            x["totals_rebuilt"] = True
        out[label] = x
    return {"events": len(ends), "devices": out}, {"ends": ends, "mem": mem_ends}


def expect_memtimeline(rows):
    pre = [r for r in rows if r[0] == -1]
    timed = [(r[0], i, r[2]) for i, r in enumerate(rows) if r[0] != -1]
    evs = list(timed)
    first = min(t for t, _, _ in timed) if timed else 0
    # Each pre-existing row is an event (its category kept), at the first
    # timed row's time, before any tie.
    evs += [(first, k - len(pre), r[2]) for k, r in enumerate(pre)]
    peak, ts = rebuild(evs)
    return {"events": len(rows), "devices": {"cuda:0": {
        "memory_events": len(evs), "name": None, "capacity_bytes": None,
        "steps": 0, "peak_allocated_bytes": peak, "peak_allocated_ts_ns": ts,
        "peak_reserved_bytes": None, "totals_rebuilt": True}}}


def cmd_expect(path, ends_path=None):
    text = raw_text(path).decode("latin-1")
    items = list(walk(text))
    if items and items[0][0] == "event" and isinstance(items[0][1], list):
        exp = expect_memtimeline([v for _, v, _ in items])
    else:
        exp, ends = expect_kineto(items)
        if ends_path:
            json.dump(ends, open(ends_path, "w"))
    json.dump(exp, sys.stdout)


import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import human_bytes


class Out:
    def __init__(self, prefix):
        self.prefix = prefix

    def check(self, desc, ok, detail=""):
        desc = "%s: %s" % (self.prefix, desc)
        if ok:
            print("PASS\t" + desc)
        else:
            print("FAIL\t%s\t%s" % (desc, detail))

    def eq(self, desc, got, want):
        self.check(desc, got == want, "got %r, want %r" % (got, want))


def load_report(out, path):
    """The JSON report, with a check that it parses (None if not)."""
    try:
        rep = json.load(open(path))
    except Exception as e:
        out.check("JSON report parses", False, str(e))
        return None
    out.check("JSON report parses", True)
    return rep


def cmd_compare(tag, exp_path, report_path):
    exp = json.load(open(exp_path))
    out = Out(tag)
    rep = load_report(out, report_path)
    if rep is None:
        return
    src = rep.get("sources") or [{}]
    out.eq("one source", len(rep.get("sources") or []), 1)
    out.eq("sources[0].truncated", src[0].get("truncated"), False)
    out.eq("sources[0].events == records in the file", src[0].get("events"), exp["events"])
    devs = {d.get("id"): d for d in rep.get("devices") or []}
    out.eq("GPU devices", sorted(devs), sorted(exp["devices"]))
    for label, x in sorted(exp["devices"].items()):
        d = devs.get(label, {})
        for key in ("peak_allocated_bytes", "peak_allocated_ts_ns", "peak_reserved_bytes",
                    "capacity_bytes", "name", "memory_events", "totals_rebuilt"):
            out.eq("%s %s" % (label, key), d.get(key), x[key])
        out.eq("%s number of steps" % label, len(d.get("steps") or []), x["steps"])


def cmd_renders(tag, exp_path, html_path, md_path):
    exp = json.load(open(exp_path))
    out = Out(tag)
    html = open(html_path, encoding="utf-8", errors="replace").read()
    md = open(md_path, encoding="utf-8", errors="replace").read()
    low = html.lower()
    for bad in ("<script", 'src="http', "href=\"http", "@import", "url(", "<link"):
        out.check("HTML is self-contained (no %s)" % bad, bad not in low,
                  "found at offset %d" % low.find(bad))
    n = len(exp["devices"])
    out.check("HTML has an <svg per device", low.count("<svg") >= n,
              "%d <svg for %d devices" % (low.count("<svg"), n))
    for label, x in sorted(exp["devices"].items()):
        out.check("HTML names %s" % label, label in html)
        h = human_bytes(x["peak_allocated_bytes"])
        out.check("Markdown shows %s peak as %s" % (label, h),
                  ("| Peak allocated | " + h) in md, "not found in the Markdown")
        out.check("HTML shows %s peak as %s" % (label, h), h in html)


def peaks_before(ends, limit):
    """Records complete before byte `limit`, and the peak Total Allocated
    per device over the complete GPU [memory] events."""
    n = sum(1 for j in ends["ends"] if j <= limit)
    peaks = {}
    for idx, total, label in ends["mem"]:
        if ends["ends"][idx] <= limit and total is not None:
            peaks[label] = max(peaks.get(label, 0), total)
    return n, peaks


def cmd_cuts(full_path, ends_path, out_path, *fractions):
    import os
    size = os.path.getsize(full_path)
    ends = json.load(open(ends_path))
    res = []
    for f in fractions:
        cut = int(size * float(f))
        n, peaks = peaks_before(ends, cut)
        res.append({"fraction": f, "length": cut, "events": n, "peaks": peaks})
    json.dump(res, open(out_path, "w"))


def cmd_gzcut(cut_gz_path, out_path):
    data = open(cut_gz_path, "rb").read()
    text = zlib.decompressobj(wbits=31).decompress(data).decode("latin-1")
    _, ends = expect_kineto(list(walk(text)))
    n, peaks = peaks_before(ends, len(text))
    json.dump({"fraction": "gzip", "length": len(text), "events": n, "peaks": peaks},
              open(out_path, "w"))


def cmd_check_cut(tag, exp_path, report_path, index=None):
    exp = json.load(open(exp_path))
    if index is not None:
        exp = exp[int(index)]
    out = Out(tag)
    rep = load_report(out, report_path)
    if rep is None:
        return
    src = (rep.get("sources") or [{}])[0]
    out.eq("sources[0].truncated", src.get("truncated"), True)
    if exp["fraction"] != "gzip":
        out.eq("sources[0].truncated_at_byte == cut length", src.get("truncated_at_byte"),
               exp["length"])
    out.eq("sources[0].events == complete records before the cut", src.get("events"),
           exp["events"])
    got = {d.get("id"): d.get("peak_allocated_bytes") for d in rep.get("devices") or []}
    out.eq("peak_allocated_bytes == max Total Allocated of complete [memory] events",
           got, exp["peaks"])


def cmd_same_devices(tag, a, b):
    out = Out(tag)
    # A device without a known rank names the file it came from (and so
    # does its list of sources): the one field that may differ between two
    # copies of the same trace.
    def devices(path):
        devs = json.load(open(path)).get("devices")
        for d in devs or []:
            d.pop("source_path", None)
            for s in d.get("sources") or []:
                s.pop("path", None)
        return devs
    da = devices(a)
    db = devices(b)
    out.check("devices[] identical", da == db and da,
              "differ" if da != db else "no devices")


def cmd_field(path, *keys):
    v = json.load(open(path))
    for k in keys:
        v = v[int(k)] if isinstance(v, list) else v.get(k)
    print(json.dumps(v))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    globals()["cmd_" + cmd.replace("-", "_")](*args)
