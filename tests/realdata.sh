#!/usr/bin/env bash
# tests/realdata.sh: every real trace in tests/data/realdata/kineto is
# imported and reported; the figures in the JSON report are checked against
# figures this script computes on its own from the original file (python3's
# json and gzip modules), and the HTML and Markdown renderings of the same
# database are checked for the basics. Then: truncated inputs (cut at
# several offsets, and a gzip stream cut short), the same content as plain,
# gzip, zstd and standard input, and importing one file twice.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

K=$VR_SRCDIR/tests/data/realdata/kineto
cd "$TMP"

need python3 || true
check "python3 runs, with json, gzip, zlib and decimal" "$PYTHON" -c 'import json, gzip, zlib, decimal'
need zstd || true
need gzip || true

# rd.py: the independent side of every check below.
cat >"$TMP/rd.py" <<'PYEOF'
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
PYEOF

# py OUT CMD...: run rd.py, results into OUT; a crash is one failure.
py() {
    vr_out=$1
    shift
    if ! "$PYTHON" "$TMP/rd.py" "$@" >"$vr_out" 2>"$TMP/py.err"; then
        printf 'FAIL\trd.py %s %s failed\t%s\n' "$1" "${2##*/}" "$(tail -n 3 "$TMP/py.err" | tr '\n\t' '  ')" >>"$vr_out"
    fi
}

#-- every real file: figures, HTML and Markdown -------------------------------

files=$(ls "$K")
[ -n "$files" ] && pass "real traces found in $K" || fail "real traces found in $K"
for f in $files; do
    src=$K/$f
    db=$TMP/$f.db
    vr_run imp import "$src" --db "$db" -q
    if [ "$rc" -ne 0 ]; then
        fail "$f: import exits 0" "exit $rc: $(cat imp.err)"
        continue
    fi
    pass "$f: import exits 0"
    vr_run rep report --db "$db" --format json -o "$TMP/$f.json"
    [ "$rc" -eq 0 ] && pass "$f: JSON report exits 0" || fail "$f: JSON report exits 0" "exit $rc: $(cat rep.err)"
    py "$TMP/$f.expect" expect "$src" "$TMP/$f.ends"
    py "$TMP/cmp.tap" compare "$f" "$TMP/$f.expect" "$TMP/$f.json"
    tap_lines "$TMP/cmp.tap"

    vr_run html report --db "$db" -o "$TMP/r.html"
    [ "$rc" -eq 0 ] && pass "$f: HTML report exits 0" || fail "$f: HTML report exits 0" "exit $rc: $(cat html.err)"
    vr_run md report --db "$db" -o "$TMP/r.md"
    [ "$rc" -eq 0 ] && pass "$f: Markdown report exits 0" || fail "$f: Markdown report exits 0" "exit $rc: $(cat md.err)"
    py "$TMP/rend.tap" renders "$f" "$TMP/$f.expect" "$TMP/r.html" "$TMP/r.md"
    tap_lines "$TMP/rend.tap"

    rm -f "$TMP/one.html"
    vr_run one "$src" -o "$TMP/one.html" -q
    if [ "$rc" -eq 0 ] && [ -s "$TMP/one.html" ] && grep -q '<svg' "$TMP/one.html"; then
        pass "$f: one-shot to HTML works"
    else
        fail "$f: one-shot to HTML works" "exit $rc: $(cat one.err)"
    fi
    rm -f "$db" "$TMP/r.html" "$TMP/r.md" "$TMP/one.html"
done

#-- truncated inputs ----------------------------------------------------------

for f in hta-v100x2-rank1-2022.pt.trace.json.gz tracelens-h100-qwen1.5-0.5b.json.gz; do
    gzip -dc "$K/$f" >"$TMP/full.json"
    py "$TMP/cuts.tap" cuts "$TMP/full.json" "$TMP/$f.ends" "$TMP/cuts.json" 0.10 0.33 0.50 0.77 0.99
    tap_lines "$TMP/cuts.tap"
    i=0
    for frac in 10 33 50 77 99; do
        len=$("$PYTHON" "$TMP/rd.py" field "$TMP/cuts.json" "$i" length 2>/dev/null || echo 0)
        head -c "$len" "$TMP/full.json" >"$TMP/cut.json"
        vr_run cut "$TMP/cut.json" --format json -o "$TMP/cut.report.json"
        tag="$f cut at $frac%"
        [ "$rc" -eq 0 ] && pass "$tag: exits 0" || fail "$tag: exits 0" "exit $rc: $(cat cut.err)"
        if grep -q 'truncated at byte' cut.err; then
            pass "$tag: warns \"truncated at byte\""
        else
            fail "$tag: warns \"truncated at byte\"" "stderr: $(cat cut.err)"
        fi
        py "$TMP/cut.tap" check-cut "$tag" "$TMP/cuts.json" "$TMP/cut.report.json" "$i"
        tap_lines "$TMP/cut.tap"
        i=$((i + 1))
    done
    rm -f "$TMP/full.json" "$TMP/cut.json"
done

# A gzip stream cut in the middle of its compressed bytes.
f=tracelens-h100-qwen1.5-0.5b.json.gz
size=$(wc -c <"$K/$f")
head -c $((size / 2)) "$K/$f" >"$TMP/half.json.gz"
vr_run gzcut "$TMP/half.json.gz" --format json -o "$TMP/half.report.json"
[ "$rc" -eq 0 ] && pass "$f cut in its gzip stream: exits 0" || fail "$f cut in its gzip stream: exits 0" "exit $rc: $(cat gzcut.err)"
if grep -q 'truncated at byte' gzcut.err; then
    pass "$f cut in its gzip stream: warns \"truncated at byte\""
else
    fail "$f cut in its gzip stream: warns \"truncated at byte\"" "stderr: $(cat gzcut.err)"
fi
py "$TMP/gz.tap" gzcut "$TMP/half.json.gz" "$TMP/gzcut.json"
tap_lines "$TMP/gz.tap"
py "$TMP/gz.tap" check-cut "$f cut in its gzip stream" "$TMP/gzcut.json" "$TMP/half.report.json"
tap_lines "$TMP/gz.tap"

#-- one content, every container ------------------------------------------------

f=tracelens-h100-qwen1.5-0.5b.json.gz
gzip -dc "$K/$f" >"$TMP/plain.json"
cp "$K/$f" "$TMP/packed.json.gz"
if command -v zstd >/dev/null 2>&1; then
    zstd -q -f -3 "$TMP/plain.json" -o "$TMP/packed.json.zst"
fi
vr_run c1 "$TMP/packed.json.gz" --format json -o "$TMP/c.gz.json" -q
[ "$rc" -eq 0 ] && pass "gzip input: exits 0" || fail "gzip input: exits 0" "exit $rc: $(cat c1.err)"
vr_run c2 "$TMP/plain.json" --format json -o "$TMP/c.plain.json" -q
[ "$rc" -eq 0 ] && pass "plain input: exits 0" || fail "plain input: exits 0" "exit $rc: $(cat c2.err)"
py "$TMP/same.tap" same-devices "plain vs gzip" "$TMP/c.gz.json" "$TMP/c.plain.json"
tap_lines "$TMP/same.tap"
if [ -f "$TMP/packed.json.zst" ]; then
    vr_run c3 "$TMP/packed.json.zst" --format json -o "$TMP/c.zst.json" -q
    [ "$rc" -eq 0 ] && pass "zstd input: exits 0" || fail "zstd input: exits 0" "exit $rc: $(cat c3.err)"
    py "$TMP/same.tap" same-devices "zstd vs gzip" "$TMP/c.gz.json" "$TMP/c.zst.json"
    tap_lines "$TMP/same.tap"
    comp=$("$PYTHON" "$TMP/rd.py" field "$TMP/c.zst.json" sources 0 compression 2>/dev/null || true)
    [ "$comp" = '"zstd"' ] && pass "zstd input: compression is \"zstd\"" || fail "zstd input: compression is \"zstd\"" "got $comp"
else
    fail "zstd input: exits 0" "zstd CLI missing: cannot make the .zst input (CI installs zstd)"
fi
# A pipe, not a file: the reader cannot seek or stat it.
rc=0
cat "$K/$f" | "$VRAMREPORT" - --format json -o "$TMP/c.stdin.json" -q 2>stdin.err || rc=$?
[ "$rc" -eq 0 ] && pass "gzip on standard input: exits 0" || fail "gzip on standard input: exits 0" "exit $rc: $(cat stdin.err)"
py "$TMP/same.tap" same-devices "stdin vs file" "$TMP/c.gz.json" "$TMP/c.stdin.json"
tap_lines "$TMP/same.tap"
rc=0
cat "$TMP/plain.json" | "$VRAMREPORT" - --format json -o "$TMP/c.stdin2.json" -q 2>stdin.err || rc=$?
[ "$rc" -eq 0 ] && pass "plain on standard input: exits 0" || fail "plain on standard input: exits 0" "exit $rc: $(cat stdin.err)"
py "$TMP/same.tap" same-devices "plain stdin vs file" "$TMP/c.gz.json" "$TMP/c.stdin2.json"
tap_lines "$TMP/same.tap"
rm -f "$TMP/plain.json" "$TMP/packed.json.zst"

#-- importing one file twice ----------------------------------------------------

vr_run dup1 import "$K/$f" --db "$TMP/dup.db" -q
[ "$rc" -eq 0 ] && pass "first import exits 0" || fail "first import exits 0" "exit $rc: $(cat dup1.err)"
vr_run dup2 import "$K/$f" --db "$TMP/dup.db"
[ "$rc" -eq 0 ] && pass "second import of the same file exits 0" || fail "second import of the same file exits 0" "exit $rc: $(cat dup2.err)"
if grep -q 'already imported' dup2.err; then
    pass "second import says \"already imported\""
else
    fail "second import says \"already imported\"" "stderr: $(cat dup2.err)"
fi
if command -v sqlite3 >/dev/null 2>&1; then
    n=$(sqlite3 "$TMP/dup.db" 'SELECT count(*) FROM source;' 2>&1 || true)
else
    "$VRAMREPORT" report --db "$TMP/dup.db" --format json -o "$TMP/dup.json" 2>/dev/null || true
    n=$("$PYTHON" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["sources"]))' "$TMP/dup.json" 2>&1 || true)
fi
[ "$n" = 1 ] && pass "one source after a duplicate import" || fail "one source after a duplicate import" "sources: $n"

finish
