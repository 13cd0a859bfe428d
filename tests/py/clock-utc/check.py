# tests/clock-utc.sh runs this.
"""Wall-clock times and entry numbers, checked against the input files."""
import datetime
import json
import os
import pickle
import re
import sys

from vrtest import load_pickle, result, run_vr

VR, DATA = sys.argv[1], sys.argv[2]
SNAP = os.path.join(DATA, "realdata", "snapshot")
LOGS = os.path.join(DATA, "logs")
TIME_WORD = re.compile(r"\d (ns|µs|ms|s)\b")


def iso_ms(us):
    """ISO 8601 with milliseconds (truncated) and Z, from Unix microseconds."""
    ms = us // 1000
    t = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def report(path, ext):
    out = "out-%s.%s" % (os.path.basename(path), ext)
    rc, _, err = run_vr(VR, path, "-o", out)
    if rc != 0:
        result(False, "%s: report %s" % (path, ext), err)
        return None
    with open(out, encoding="utf-8") as f:
        return json.load(f) if ext == "json" else f.read()


def peaks(trace):
    """The entry indexes at which the replayed allocated (alloc minus
    free_completed) and reserved (segment_alloc/map minus segment_free/
    unmap) totals first reach their maximum: the peaks' entries."""
    alloc = res = 0
    best_a = best_r = None
    for i, e in enumerate(trace):
        a, n = e["action"], e.get("size", 0)
        if a == "alloc":
            alloc += n
        elif a == "free_completed":
            alloc -= n
        elif a in ("segment_alloc", "segment_map"):
            res += n
        elif a in ("segment_free", "segment_unmap"):
            res -= n
        if best_a is None or alloc > best_a[0]:
            best_a = (alloc, i)
        if best_r is None or res > best_r[0]:
            best_r = (res, i)
    return best_a[1], best_r[1]


def md_device_rows(md):
    """The Markdown lines of the device section's figure and live-at-peak
    tables."""
    return [l for l in md.splitlines()
            if l.startswith(("| Peak allocated", "| Peak reserved", "| Memory events"))
            or re.match(r"\| [0-9.]+ [KMGT]?i?B \| ", l)]


# -- snapshots with time_us: the peaks' UTC ------------------------------------
for name in ("cs336-silmont-segments.pickle", "cs336-silmont-forward-bf16.pickle",
             "cs336-bcrafton.pickle", "cs336-magma27-training.pickle"):
    path = os.path.join(SNAP, name)
    trace = load_pickle(path)["device_traces"][0]
    ia, ir = peaks(trace)
    d = report(path, "json")
    if d is None:
        continue
    dev = d["devices"][0]
    want = iso_ms(trace[ia]["time_us"])
    result(dev.get("peak_allocated_utc") == want,
           "%s: peak_allocated_utc is the time_us of the peak's entry %d" % (name, ia),
           "%r != %r" % (dev.get("peak_allocated_utc"), want))
    # The reserved peak: the same instant when the replay agrees on it
    # (a ring buffer may have lost segments made before its history).
    got_r = dev.get("peak_reserved_utc")
    ok_r = got_r is not None and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", got_r) \
        and got_r in {iso_ms(e["time_us"]) for e in trace}
    result(bool(ok_r), "%s: peak_reserved_utc is an entry's time_us, ISO 8601 with Z" % name,
           repr(got_r))
    result(dev.get("history_entries") is None,
           "%s: a snapshot with time_us has no entry numbering" % name,
           repr(dev.get("history_entries")))
    if name == "cs336-silmont-segments.pickle":
        md = report(path, "md") or ""
        stamp = want[:10] + " " + want[11:19] + " UTC"
        row = [l for l in md.splitlines() if l.startswith("| Peak allocated")]
        result(bool(row) and re.search(r"at [0-9.]+ (ns|µs|ms|s) \(" + re.escape(stamp) + r"\)",
                                       row[0]) is not None,
               "%s: Markdown's peak row gives the wall-clock time beside the relative one" % name,
               row)

# -- job logs with stamps: the OOMs' UTC ----------------------------------------
STAMP = re.compile(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(\.\d+)?")
for name in ("oom-40.log", "oom-41.log", "oom-57.log"):
    path = os.path.join(LOGS, name)
    d = report(path, "json")
    if d is None:
        continue
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    ooms = d["oom_events"]
    result(len(ooms) > 0, "%s: OOM events" % name)
    for o in ooms:
        m = STAMP.search(lines[o["line"] - 1])
        frac = (m.group(3) or ".000")[1:4].ljust(3, "0")
        want = "%sT%s.%sZ" % (m.group(1), m.group(2), frac)
        result(o.get("utc") == want, "%s line %d: utc is the line's stamp" % (name, o["line"]),
               "%r != %r" % (o.get("utc"), want))
md = report(os.path.join(LOGS, "oom-40.log"), "md") or ""
result("(2021-10-15 15:01:44 UTC)" in md, "oom-40.log: Markdown's OOM row gives the wall-clock time")

# -- --tz: a log whose stamps name no zone ------------------------------------
# oom-40.log's stamps name none: under --tz +02:00 they are local time two
# hours ahead of UTC, so each OOM's utc (and ts_ns) is two hours earlier
# than under --tz UTC; the Markdown prints that earlier time and says how
# the stamps were read. A zone that is no offset (named zones change
# offset with the date), or past +14:00, is refused up front, in one line
# naming it, exit 2, no report written; --tz to `report` (whose database
# was placed at import) is refused too.
def utc_dt(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")


log40 = os.path.join(LOGS, "oom-40.log")
tz = {}
for zone in ("UTC", "+02:00"):
    rc, _, err = run_vr(VR, log40, "--tz", zone, "-o", "tz%s.json" % zone)
    rc2, _, err2 = run_vr(VR, log40, "--tz", zone, "-o", "tz%s.md" % zone)
    if rc or rc2:
        result(False, "oom-40.log --tz %s: reports" % zone, err or err2)
        continue
    tz[zone] = (json.load(open("tz%s.json" % zone, encoding="utf-8")),
                open("tz%s.md" % zone, encoding="utf-8").read())
if len(tz) == 2:
    a, b = tz["UTC"][0]["oom_events"], tz["+02:00"][0]["oom_events"]
    pairs = [(x["utc"], y["utc"]) for x, y in zip(a, b)]
    result(len(a) == len(b) > 0 and all(x and y and utc_dt(x) - utc_dt(y) == datetime.timedelta(hours=2)
                                        for x, y in pairs)
           and all(x["ts_ns"] - y["ts_ns"] == 2 * 3600 * 10**9 for x, y in zip(a, b)),
           "--tz +02:00: each OOM's utc and ts_ns two hours before --tz UTC's", pairs)
    stamp = open(log40, encoding="utf-8").readline()[:19]
    local = datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S")
    for zone, shift in (("UTC", 0), ("+02:00", 2)):
        want = (local - datetime.timedelta(hours=shift)).strftime("(%Y-%m-%d %H:%M:%S UTC)")
        md = tz[zone][1]
        result(want in md, "--tz %s: the Markdown's OOM row prints %s" % (zone, want),
               [l for l in md.splitlines() if "UTC)" in l][:2])
        row = [l for l in md.splitlines() if l.startswith("| oom-40.log |")]
        result(bool(row) and ("stamps without a zone read as %s (`--tz`)" % zone) in row[0],
               "--tz %s: the inputs table says how the stamps were read" % zone, row)
        clock = [s.get("clock") for s in tz[zone][0]["sources"]]
        result(clock == ["wall clock (--tz %s)" % zone], "--tz %s: sources[].clock says it" % zone, clock)
for zone in ("Europe/Berlin", "+25:00", "+02:60", "", "2", "+02:00x", "UTC+"):
    out = "badtz.md"
    rc, so, err = run_vr(VR, log40, "--tz", zone, "-o", out)
    first = err.splitlines()[0] if err else ""
    result(rc == 2 and first.startswith("vramreport: --tz '%s': " % zone) and "+02:00" in first
           and len([l for l in err.splitlines() if not l.startswith("Try ")]) == 1
           and not so and not os.path.exists(out),
           "--tz %r: refused in one line naming it, exit 2, no report" % zone, (rc, err))
run_vr(VR, "import", log40, "--db", "tz.db", "-q")
rc, _, err = run_vr(VR, "report", "--db", "tz.db", "--tz", "+02:00", "-o", "tzr.md")
result(rc == 2 and err.startswith("vramreport: --tz ") and not os.path.exists("tzr.md"),
       "report --tz: refused (the database's times were placed at import)", (rc, err))
rc, _, err = run_vr(VR, "import", log40, "--db", "tz2.db", "--tz", "+02:00", "-q")
rc2, _, err2 = run_vr(VR, "report", "--db", "tz2.db", "-o", "tz2.json")
d = json.load(open("tz2.json", encoding="utf-8")) if rc == 0 and rc2 == 0 else {}
result(len(tz) == 2 and [o["utc"] for o in d.get("oom_events", [])]
       == [o["utc"] for o in tz["+02:00"][0]["oom_events"]],
       "import --tz +02:00, then report: the times placed at import", (err, err2))

# -- a log without stamps: utc null ---------------------------------------------
d = report(os.path.join(LOGS, "oom-01.log"), "json")
if d is not None:
    result(all(o.get("utc") is None for o in d["oom_events"]) and "utc" in d["oom_events"][0],
           "oom-01.log: no stamp, utc null")

# -- a snapshot without time_us: entry numbers ---------------------------------
src = load_pickle(os.path.join(SNAP, "cs336-silmont-segments.pickle"))
for t in src["device_traces"]:
    for e in t:
        e.pop("time_us", None)
with open("noclock.pickle", "wb") as f:
    pickle.dump(src, f, protocol=4)
trace = src["device_traces"][0]
n = len(trace)
ia, ir = peaks(trace)
d = report("noclock.pickle", "json")
md = report("noclock.pickle", "md") or ""
html = report("noclock.pickle", "html") or ""
if d is not None:
    dev = d["devices"][0]
    result(dev.get("history_entries") == n, "no clock: history_entries is the entries' count",
           "%r != %d" % (dev.get("history_entries"), n))
    result("peak_allocated_utc" in dev and dev["peak_allocated_utc"] is None
           and dev.get("peak_reserved_utc") is None, "no clock: peak_*_utc are null")
row = [l for l in md.splitlines() if l.startswith("| Peak allocated")]
result(bool(row) and ("at entry %d of %d" % (ia + 1, n)) in row[0],
       "no clock: the peak row names the peak's entry (%d of %d)" % (ia + 1, n), row)
mem = [l for l in md.splitlines() if l.startswith("| Memory events")]
events = sum(1 for e in trace if e["action"] in ("alloc", "free_completed"))
result(bool(mem) and ("%d entries" % n) in mem[0] and " from " not in mem[0],
       "no clock: the memory-events row counts entries", mem)
rows = md_device_rows(md)
bad = [l for l in rows if TIME_WORD.search(l)]
result(len(rows) > 3 and not bad, "no clock: no time in the peak, events and live-at-peak rows",
       bad or rows)
live = [l for l in rows if re.match(r"\| [0-9.]+ [KMGT]?i?B \| ", l)]
result(any(re.search(r"\| entry \d+ of %d \| entry \d+ of %d \| \d+ entries \|" % (n, n), l)
           for l in live),
       "no clock: live at the peak: allocated/freed at entries, lifetime in entries", live[:3])
axis = re.findall(r'<g class="vr-axis vr-axis-x"[^>]*>(.*?)</g>', html, re.S)
labels = re.findall(r">([^<]+)</text>", axis[0]) if axis else []
result(bool(labels) and all(l.endswith(" entries") for l in labels)
       and all(re.fullmatch(r"\d{1,3}(,\d{3})* entries", l) for l in labels),
       "no clock: the chart's x axis counts entries", labels)

# The chart counts entries as the tables do, from 1: the tick "K entries"
# stands where entry K (ordinal K - 1) is drawn, and the peak's mark names
# the entry the peak row names, where that entry is drawn. x of an ordinal:
# the plot's left to right edge (the axis line) over data-x-range.
charts = [svg for svg in re.findall(r"<svg.*?</svg>", html, re.S)
          if re.search(r"<title[^>]*>[^<]*memory over time<", svg)]
svg = charts[0] if charts else ""
xr = re.search(r'data-x-range="(-?\d+) (-?\d+)"', svg)
edge = re.search(r'class="vr-axis-line" d="M([0-9.]+) [0-9.]+H([0-9.]+)"', svg)
if xr and edge:
    lo, hi = int(xr.group(1)), int(xr.group(2))
    left, right = float(edge.group(1)), float(edge.group(2))

    def x_of(ordinal):
        return left + (ordinal - lo) / (hi - lo) * (right - left)
    ticks = [(float(x), int(k.replace(",", ""))) for x, k in
             re.findall(r'<text x="([0-9.]+)"[^>]*>([0-9,]+) entries</text>', axis[0] if axis else "")]
    off = [(k, x, round(x_of(k - 1), 1)) for x, k in ticks if abs(x - x_of(k - 1)) > 0.6]
    result(len(ticks) >= 3 and not off,
           "no clock: the tick 'K entries' stands at entry K (ordinal K - 1), as the tables count",
           off or ticks)
    peak = re.search(r'<g class="vr-peak">\s*<title>([^<]*)</title>\s*<circle cx="([0-9.]+)"', svg)
    want = "at entry {:,} of {:,}".format(ia + 1, n)
    result(bool(peak) and peak.group(1).endswith(want) and bool(row) and want in row[0],
           "no clock: the chart's peak mark and the peak row name one entry (%d of %d)" % (ia + 1, n),
           (peak.group(1) if peak else None, row))
    result(bool(peak) and abs(float(peak.group(2)) - x_of(ia)) <= 0.6,
           "no clock: the peak's mark is drawn at that entry", (peak.group(2) if peak else None, x_of(ia)))
    label = re.search(r'aria-label="[^"]*memory over time, peak [^"]* (at [^"]*)"', svg)
    result(bool(label) and label.group(1) == want, "no clock: the chart's summary names that entry",
           label.group(0) if label else svg[:300])
else:
    result(False, "no clock: the memory chart states its x range and axis line", svg[:300])

# A longer history (thousands of entries): table, mark and ticks group the
# digits alike ("entry 3,697 of 6,486", "1,000 entries").
big = load_pickle(os.path.join(SNAP, "cs336-bcrafton.pickle"))
for t in big["device_traces"]:
    for e in t:
        e.pop("time_us", None)
with open("noclock-big.pickle", "wb") as f:
    pickle.dump(big, f, protocol=4)
bt = big["device_traces"][0]
bia, _ = peaks(bt)
bmd = report("noclock-big.pickle", "md") or ""
bhtml = report("noclock-big.pickle", "html") or ""
want = "entry {:,} of {:,}".format(bia + 1, len(bt))
brow = [l for l in bmd.splitlines() if l.startswith("| Peak allocated")]
bpeak = re.search(r'<g class="vr-peak">\s*<title>([^<]*)</title>', bhtml)
bticks = re.findall(r">([0-9,]+) entries</text>", bhtml)
result(bool(brow) and want in brow[0] and bool(bpeak) and bpeak.group(1).endswith("at " + want)
       and any("," in k for k in bticks),
       "no clock, %d entries: the peak row and the chart's mark say %r, the ticks group digits"
       % (len(bt), want), (brow, bpeak.group(1) if bpeak else None, bticks))

# -- the real snapshot without time_us ------------------------------------------
md = report(os.path.join(SNAP, "flexgen-opt1.3b-noframes.pickle"), "md") or ""
rows = md_device_rows(md)
bad = [l for l in rows if TIME_WORD.search(l)]
result(len(rows) >= 2 and not bad and any("entr" in l for l in rows),
       "flexgen (no time_us): entry wording, no times", bad or rows)

# -- one report, one unit: every device's memory chart reads time alike --------
CLI = os.path.join(os.path.dirname(DATA), "cli", "data")
rc, _, err = run_vr(VR, os.path.join(CLI, "tiny.pt.trace.json"),
                    os.path.join(DATA, "realdata", "kineto", "hta-v100x2-rank1-2022.pt.trace.json.gz"),
                    "-o", "two.html")
html = open("two.html", encoding="utf-8").read() if rc == 0 else ""
units = {}
for svg in re.findall(r"<svg.*?</svg>", html, re.S):
    title = re.search(r"<title[^>]*>([^<]*)", svg)
    axis = re.findall(r'<g class="vr-axis vr-axis-x"[^>]*>(.*?)</g>', svg, re.S)
    if title and title.group(1).endswith("memory over time") and axis:
        units[title.group(1) + " #%d" % len(units)] = {l.split()[-1] for l in
                                                       re.findall(r">([^<]+)</text>", axis[0])}
result(len(units) >= 3 and len(set().union(*units.values())) == 1,
       "two files, three devices: their memory charts' x axes share one unit", units or err)
