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
       and all(re.fullmatch(r"\d+ entries", l) for l in labels),
       "no clock: the chart's x axis counts entries", labels)

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
