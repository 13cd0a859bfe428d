# tests/memstats.sh runs this.
import json, os, re, sqlite3, subprocess, sys

VR = os.environ["VRAMREPORT"]
SRC = os.environ["VR_SRCDIR"]
REAL = os.path.join(SRC, "tests/data/realdata/summary")
FLAT = os.path.join(SRC, "tests/data/memstats/memory-stats-flat.json")
out = open("results.txt", "w")

def result(ok, desc, detail=""):
    out.write(("PASS\t%s\n" % desc) if ok else ("FAIL\t%s\t%s\n" % (desc, detail)))

def run(*args):
    p = subprocess.run([VR, "-q"] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

def imported(path, name):
    """{(dump, device, key): value} and the source's tallies, from --db."""
    db = name + ".db"
    if os.path.exists(db):
        os.remove(db)
    rc, _, err = run("--db", db, "-o", name + ".md", path)
    if rc != 0:
        return None, {"error": err.strip()[:200]}
    c = sqlite3.connect(db)
    rows = {(d, dev, k): v for d, dev, k, v in
            c.execute("SELECT dump, device_idx, key, value FROM allocator_stat")}
    tallies = dict(c.execute("SELECT kind, count FROM source_tally"))
    c.close()
    return rows, tallies

def diff(got, want):
    if got is None:
        return "not imported"
    g, w = set(got.items()), set(want.items())
    return "missing %s; extra %s" % (sorted(w - g)[:4], sorted(g - w)[:4])

def check_rows(desc, got, want):
    result(got == want, desc, "" if got == want else diff(got, want))

# --- the oracle's reading of a box: its own label and unit tables --------
METRICS = {"Allocated memory": "allocated_bytes", "Active memory": "active_bytes",
           "Requested memory": "requested_bytes", "GPU reserved memory": "reserved_bytes",
           "Non-releasable memory": "inactive_split_bytes", "Allocations": "allocation",
           "Active allocs": "active", "GPU reserved segments": "segment",
           "Non-releasable allocs": "inactive_split",
           "Oversize allocations": "oversize_allocations",
           "Oversize GPU segments": "oversize_segments"}
POOLS = {"from large pool": "large_pool", "from small pool": "small_pool"}
UNITS = {"B": 1, "KB": 2**10, "KiB": 2**10, "MB": 2**20, "MiB": 2**20, "GB": 2**30,
         "GiB": 2**30, "": 1, "K": 1000, "M": 10**6}
STATS = ["current", "peak", "allocated", "freed"]

def oracle(text):
    rows, metric, dev = {}, None, None
    for line in text.splitlines():
        m = re.search(r"device ID (\d+)", line)
        if m:
            dev = int(m.group(1))
        m = re.search(r"CUDA OOMs: (\d+)\s*\|\s*cudaMalloc retries: (\d+)", line)
        if m:
            rows[(0, dev, "num_ooms")] = int(m.group(1))
            rows[(0, dev, "num_alloc_retries")] = int(m.group(2))
        cells = line.split("|")
        if len(cells) < 3:
            continue
        label = cells[1].strip()
        if label in METRICS:
            metric, pool = METRICS[label], "all"
        elif label in POOLS and metric:
            pool = POOLS[label]
        else:
            continue
        for stat, cell in zip(STATS, cells[2:-1]):  # closed cells only
            num, unit = re.fullmatch(r"\s*(\d+)\s*(\w*)\s*", cell).groups()
            key = (metric + "." + stat if metric.startswith("oversize")
                   else "%s.%s.%s" % (metric, pool, stat))
            rows[(0, dev, key)] = int(num) * UNITS[unit]
    return rows

for name in sorted(os.listdir(REAL)):
    path = os.path.join(REAL, name)
    got, tallies = imported(path, "real")
    want = oracle(open(path, encoding="utf-8").read())
    check_rows("%s: every figure as Python reads the box (%d)" % (name, len(want)), got, want)

# --- boxes written from the JSON fixture, as PyTorch writes them ---------
flat = json.load(open(FLAT))

def fmt_size(sz, pref, units, width):
    prefix = units[0]
    for new in units[1:]:
        if pref < 768 * 1024:
            break
        prefix, sz, pref = new, sz // 1024, pref / 1024
    return "%*d %s" % (width, sz, prefix)

def fmt_count(cnt, pref, width):
    prefix = " "
    for new in ["K", "M"]:
        if pref < 750 * 1000:
            break
        prefix, cnt, pref = new, cnt // 1000, pref / 1000
    return "%*d %s " % (width, cnt, prefix)

def summary(stats, device=0, old=False):
    """memory_summary()'s box (torch/cuda/memory.py); old: PyTorch < 1.13
    (KB/MB, 7-digit sizes, no Requested memory row)."""
    units = ["B ", "KB", "MB", "GB", "TB", "PB"] if old else ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"]
    width = 7 if old else 6
    size = lambda sz, pref: fmt_size(sz, pref, units, width)
    count = lambda c, pref: fmt_count(c, pref, 7)
    rows = [("allocated_bytes", "Allocated memory", size), ("active_bytes", "Active memory", size),
            ("requested_bytes", "Requested memory", size),
            ("reserved_bytes", "GPU reserved memory", size),
            ("inactive_split_bytes", "Non-releasable memory", size),
            ("allocation", "Allocations", count), ("active", "Active allocs", count),
            ("segment", "GPU reserved segments", count),
            ("inactive_split", "Non-releasable allocs", count)]
    if old:
        rows = [r for r in rows if r[0] != "requested_bytes"]
    lines = ["=" * 75, " %-16s PyTorch CUDA memory summary, device ID %-17d " % ("", device),
             "-" * 75,
             "  %-9s CUDA OOMs: %-12d | %-6s cudaMalloc retries: %-8d  "
             % ("", stats["num_ooms"], "", stats["num_alloc_retries"]),
             "=" * 75, "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  "]
    for key, name, f in rows:
        lines.append("-" * 75)
        prefs = None
        for sub, label in [("all", name), ("large_pool", "      from large pool"),
                           ("small_pool", "      from small pool")]:
            vals = [stats["%s.%s.%s" % (key, sub, s)] for s in STATS]
            prefs = prefs or vals
            lines.append(" %-21s | %s " % (label, " | ".join(f(v, p) for v, p in zip(vals, prefs))))
    for key, name in [("oversize_allocations", "Oversize allocations"),
                      ("oversize_segments", "Oversize GPU segments")]:
        lines.append("-" * 75)
        vals = [stats["%s.%s" % (key, s)] for s in STATS]
        lines.append(" %-21s | %s " % (name, " | ".join(fmt_count(v, v, 7) for v in vals)))
    lines.append("=" * 75)
    return "|" + "|\n|".join(lines) + "|\n"

def in_box(key, old=False):
    return (key.split(".")[0] in set(METRICS.values()) | {"num_ooms", "num_alloc_retries"}
            and not (old and key.startswith("requested_bytes")))

rows_json, t_json = imported(FLAT, "flat")
want_json = {(0, None, k): v for k, v in flat.items()}
check_rows("memory_stats JSON: every key and value round-trips (%d)" % len(flat), rows_json, want_json)
result(t_json == {}, "memory_stats JSON: nothing skipped", str(t_json))

for old, layout in [(False, "KiB/MiB"), (True, "old KB/MB")]:
    text = summary(flat, 0, old)
    open("box.txt", "w").write(text)
    got, tallies = imported("box.txt", "box")
    want = {(0, 0, k): v for k, v in flat.items() if in_box(k, old)}
    check_rows("summary (%s layout) gives the JSON's rows for its %d figures" % (layout, len(want)),
               got, want)
    check_rows("summary (%s layout): Python's reading agrees" % layout, got, oracle(text))
    result(tallies == {}, "summary (%s layout): nothing skipped" % layout, str(tallies))
    result(("K " in text) == True, "summary (%s layout) has counts in K" % layout)

# --- partial copies ------------------------------------------------------
lines = summary(flat, 0).splitlines()
body = lines[5:]                               # no top: title and header gone
wrap = next(i for i, l in enumerate(body) if l.startswith("| Active memory"))
cut = next(i for i, l in enumerate(body) if l.startswith("| GPU reserved memory")) + 2
parts = []
for i, l in enumerate(body):
    if i == wrap:                              # re-wrapped over two lines
        parts += ["[rank0]: " + l[:50], l[50:]]
    elif i == wrap + 4:                        # wrapped by a log that prefixes each line
        parts += ["[rank0]: " + l[:40], "[rank0]: " + l[40:]]
    elif i == cut:                             # small pool row cut in its 3rd cell
        parts.append("[rank0]: " + l[:l.index("|", 40) + 5])
    else:
        parts.append("[rank0]: " + l)
open("partial.txt", "w").write("\n".join(parts) + "\n")
got, tallies = imported("partial.txt", "partial")
lost = {"num_ooms", "num_alloc_retries", "reserved_bytes.small_pool.allocated",
        "reserved_bytes.small_pool.freed"}
want = {(0, None, k): v for k, v in flat.items() if in_box(k) and k not in lost}
check_rows("partial copy (no top, [rank0]: prefix, a re-wrapped row, a cut row)", got, want)
result(tallies.get("malformed_stat") == 2, "partial copy: the cut row's 2 figures counted",
       str(tallies))

# --- malformed numbers -----------------------------------------------------
text = summary(flat, 0)
text = text.replace("| Allocated memory      |  10343 MiB |",
                    "| Allocated memory      |  10x43 MiB |", 1)
text = text.replace("|       from small pool |      4 MiB |", "|       from small pool |      4 XB  |", 1)
open("bad.txt", "w").write(text)
got, tallies = imported("bad.txt", "bad")
bad = {"allocated_bytes.all.current", "requested_bytes.small_pool.current"}
want = {(0, 0, k): v for k, v in flat.items() if in_box(k) and k not in bad}
check_rows("malformed cells skipped, the rest read", got, want)
result(tallies.get("malformed_stat") == 2, "malformed cells counted (2)", str(tallies))

bad_json = dict(flat)
bad_json.update({"num_ooms": "1", "num_alloc_retries": 1.5, "max_split_size": None,
                 "num_device_free": True, "num_device_alloc": 1e30,
                 "segment.all.current": 320.0})
json.dump(bad_json, open("bad.json", "w"))
got, tallies = imported("bad.json", "badjson")
skipped = {"num_ooms", "num_alloc_retries", "max_split_size", "num_device_free", "num_device_alloc"}
want = {(0, None, k): int(v) for k, v in bad_json.items() if k not in skipped}
check_rows("JSON values that are not integers skipped (320.0 is 320)", got, want)
result(tallies.get("malformed_stat") == 5, "JSON values that are not integers counted (5)",
       str(tallies))

cut_text = open(FLAT).read()[:2000]
open("cut.json", "w").write(cut_text)
got, _ = imported("cut.json", "cut")
whole = {k: flat[k] for k in re.findall(r'"([^"]+)": -?\d+,', cut_text)}  # members ended by a comma
check_rows("a cut memory_stats JSON: the %d members before the cut" % len(whole), got,
           {(0, None, k): v for k, v in whole.items()})
rc, js, err = run("--format", "json", "cut.json")
result(rc == 0 and json.loads(js)["sources"][0]["truncated"] and "truncated at byte 2000" in err,
       "a cut memory_stats JSON is said to be cut", err)

# --- exact units, decimal sizes, K counts --------------------------------
cases = [("0 B", 0), ("4096 B", 4096), ("12345 KB", 12345 * 1024), ("1.23 GiB", 1320702444),
         ("1.5 GiB", 1610612736), ("767 MB", 767 << 20)]
box = "| Allocated memory      | %s |\n" % " | ".join("%10s" % c for c, _ in cases[:4])
box += "|       from large pool | %s |\n" % " | ".join("%10s" % c for c, _ in cases[2:])
box += "| Allocations           |    1234 K  |       7    |    2 M     |       0    |\n"
open("units.txt", "w").write(box)
got, tallies = imported("units.txt", "units")
want = {(0, None, "allocated_bytes.all." + s): v for s, (_, v) in zip(STATS, cases[:4])}
want.update({(0, None, "allocated_bytes.large_pool." + s): v for s, (_, v) in zip(STATS, cases[2:])})
want.update({(0, None, "allocation.all." + s): v for s, v in zip(STATS, [1234000, 7, 2000000, 0])})
check_rows("sizes and counts converted exactly (1.23 GiB = %d)" % cases[3][1], got, want)

# --- several dumps -----------------------------------------------------------
second = dict(flat, **{"allocated_bytes.all.peak": flat["allocated_bytes.all.peak"] + 2**30,
                       "reserved_bytes.all.peak": flat["reserved_bytes.all.peak"] + 2**31})
text = summary(flat, 0) + "some log line\n" + summary(second, 1)
headless = summary(flat, 0).splitlines()[5:]
text += "device: 3\n" + "\n".join(headless) + "\n" + "\n".join(headless) + "\n"
open("dumps.txt", "w").write(text)
got, _ = imported("dumps.txt", "dumps")
want = {}
for dump, dev, st in [(0, 0, flat), (1, 1, second), (2, 3, flat), (3, None, flat)]:
    want.update({(dump, dev, k): v for k, v in st.items()
                 if in_box(k) and (dump < 2 or not k.startswith("num_"))})
check_rows("four boxes in one file: dumps 0-3, devices from titles and 'device: 3'", got, want)

nested = {"cuda:0": flat, "cuda:1": second}
json.dump(nested, open("nested.json", "w"))
got, _ = imported("nested.json", "nested")
want = {(0, 0, k): v for k, v in flat.items()}
want.update({(1, 1, k): v for k, v in second.items()})
check_rows("JSON per device {\"cuda:0\": ..., \"cuda:1\": ...}: two dumps", got, want)

def nest(d):
    tree = {}
    for k, v in d.items():
        node = tree
        parts = k.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = v
    return tree
json.dump({"device": 2, **nest(flat)}, open("nested-dict.json", "w"))
got, _ = imported("nested-dict.json", "nesteddict")
check_rows("memory_stats_as_nested_dict() with \"device\": 2 flattens to the same keys",
           got, {(0, 2, k): v for k, v in flat.items()})
json.dump({**flat, "device": "cuda:5"}, open("device-string.json", "w"))
got, _ = imported("device-string.json", "devicestring")
check_rows("flat JSON with \"device\": \"cuda:5\" (after the figures) is of device 5",
           got, {(0, 5, k): v for k, v in flat.items()})

# --- impossible figures -------------------------------------------------------
# A count or size below 0, a current or peak size over 1 PiB, allocated
# over reserved (one pool, current or peak, one dump) are no allocator's:
# counted as malformed, named on stderr with their byte or line, kept out
# of the database and so of the report's peaks (-2^63 was "-8.00 EiB").
# max_split_size's -1 ("no limit") and a cumulative total past 1 PiB stay.
def run_db(path, name):
    db = name + ".db"
    if os.path.exists(db):
        os.remove(db)
    p = subprocess.run([VR, "--db", db, "-o", name + ".md", path], capture_output=True, text=True)
    c = sqlite3.connect(db)
    rows = {(d, dev, k): v for d, dev, k, v in
            c.execute("SELECT dump, device_idx, key, value FROM allocator_stat")}
    tallies = dict(c.execute("SELECT kind, count FROM source_tally"))
    c.close()
    return p, rows, tallies, open(name + ".md").read() if p.returncode == 0 else ""

wild = dict(flat, **{"allocated_bytes.all.peak": -2**63, "num_ooms": -1,
                     "reserved_bytes.large_pool.current": 2**60,
                     "allocated_bytes.small_pool.current": 3 * 2**20,
                     "reserved_bytes.small_pool.current": 2 * 2**20,
                     "max_split_size": -1, "allocated_bytes.all.allocated": 2**55})
text = json.dumps(wild)
open("wild.json", "w").write(text)
p, got, tallies, md = run_db("wild.json", "wild")
gone = {"allocated_bytes.all.peak", "num_ooms", "reserved_bytes.large_pool.current",
        "allocated_bytes.small_pool.current", "reserved_bytes.small_pool.current"}
check_rows("memory_stats JSON: impossible figures left out, the rest read",
           got, {(0, None, k): v for k, v in wild.items() if k not in gone})
result(tallies.get("malformed_stat") == 5, "memory_stats JSON: 5 impossible figures counted as malformed",
       str(tallies))
first = text.index('"allocated_bytes.all.peak": ') + len('"allocated_bytes.all.peak": ')
warn = [l for l in p.stderr.splitlines() if "is impossible" in l]
result(len(warn) == 1 and "wild.json: byte %d: allocated_bytes.all.peak -9223372036854775808 "
       "is impossible (below 0): not read (5 such figures" % first in warn[0],
       "memory_stats JSON: stderr names the first impossible figure and its byte", p.stderr[:400])
result("EiB" not in md and "1 PiB" not in md and
       "5 allocator statistic(s) not read (cut, not a number, or impossible)" in md,
       "memory_stats JSON: no peak of -8 EiB in the report; its note counts them", md[-600:])

box = summary(dict(flat, **{"allocated_bytes.all.peak": -5 * 2**20}), 0)
open("wild-box.txt", "w").write(box)
p, got, tallies, md = run_db("wild-box.txt", "wildbox")
line = next(i for i, l in enumerate(box.splitlines(), 1) if "Allocated memory" in l)
check_rows("memory_summary: a negative peak left out, the rest read", got,
           {(0, 0, k): v for k, v in flat.items() if in_box(k) and k != "allocated_bytes.all.peak"})
result(tallies.get("malformed_stat") == 1 and
       "wild-box.txt: line %d: allocated_bytes.all.peak -5242880 is impossible (below 0)" % line
       in p.stderr, "memory_summary: counted, and stderr names its line", p.stderr[:400] + str(tallies))

# A box floors each cell to its metric's unit: reserved in GiB (its total
# over 768 GiB) shows a 1.5 MiB small pool as "0 GiB", allocated in MiB
# "1 MiB". That is rounding, not allocated over reserved: read. 3 GiB of
# allocated over reserved's "2 GiB" is past any rounding: left out.
fine = dict(flat, **{"reserved_bytes.all.current": 800 * 2**30,
                     "reserved_bytes.small_pool.current": 3 * 2**19,
                     "allocated_bytes.all.current": 700 * 2**20,
                     "allocated_bytes.small_pool.current": 2**20})
p, got, tallies, _ = run_db(open("fine-box.txt", "w").write(summary(fine, 0)) and "fine-box.txt", "finebox")
result(tallies == {} and got.get((0, 0, "allocated_bytes.small_pool.current")) == 2**20 and
       got.get((0, 0, "reserved_bytes.small_pool.current")) == 0,
       "memory_summary: allocated over reserved within the cells' rounding is read", str(tallies))
over = dict(flat, **{"reserved_bytes.all.peak": 800 * 2**30, "allocated_bytes.all.peak": 803 * 2**30})
p, got, tallies, _ = run_db(open("over-box.txt", "w").write(summary(over, 0)) and "over-box.txt", "overbox")
result(tallies.get("malformed_stat") == 2 and (0, 0, "allocated_bytes.all.peak") not in got and
       (0, 0, "reserved_bytes.all.peak") not in got and "over reserved_bytes.all.peak" in p.stderr,
       "memory_summary: allocated peak over reserved peak: both left out, counted, said",
       p.stderr[:400] + str(tallies))

# --- the report --------------------------------------------------------------
open("summary.txt", "w").write(summary(flat, 0))
rc, _, err = run("summary.txt", "-o", "r.md")
md = open("r.md").read() if rc == 0 else ""
result(rc == 0 and "## Allocator statistics" in md, "summary-only input gives a report", err)
result("cudaMalloc\n> retries: 3. A retry means" in md, "the report explains cudaMalloc retries")
result("profile_memory" not in md and "the allocator's own statistics follow" in " ".join(md.split()),
       "a summary-only report says it has no timeline, without blaming profile_memory")
rc, js, err = run("--format", "json", "summary.txt")
st = json.loads(js)["allocator_stats"] if rc == 0 else [{}]
expect = {"allocated_bytes_current": flat["allocated_bytes.all.current"],
          "allocated_bytes_peak": flat["allocated_bytes.all.peak"],
          "reserved_bytes_current": flat["reserved_bytes.all.current"],
          "reserved_bytes_peak": flat["reserved_bytes.all.peak"],
          "active_bytes_peak": flat["active_bytes.all.peak"],
          "inactive_split_bytes_peak": flat["inactive_split_bytes.all.peak"],
          "num_alloc_retries": 3, "num_ooms": 1, "oversize_allocations_peak": 2,
          "device": 0, "dump": 0, "source": "summary.txt"}
result(len(st) == 1 and all(st[0].get(k) == v for k, v in expect.items()),
       "allocator_stats[] holds the figures", str(st)[:300])
quiet = dict(flat, num_alloc_retries=0)
json.dump(quiet, open("quiet.json", "w"))
rc, _, err = run("quiet.json", "-o", "q.md")
md = open("q.md").read() if rc == 0 else ""
result(rc == 0 and "## Allocator statistics" in md and "A retry means" not in md,
       "stats-only input gives a report; no retry note without retries", err)
# A dump's OOM count beside what it held, with no capacity, request or
# free memory: nothing says the device was full (the fallback's "the GPU
# was full" had no grounds); the finding says what is missing.
rc, js, err = run("--format", "json", "summary.txt")
fs = json.loads(js).get("findings", []) if rc in (0, 3) else []
oom = [f for f in fs if f.get("oom_index") is not None or "ran out of memory" in f.get("title", "")]
result(len(oom) == 1 and oom[0]["kind"] == "insufficient-evidence" and
       "how large the device was" in oom[0].get("detail", "") and
       "was full" not in oom[0]["title"],
       "a dump's OOM count without a capacity or request: too little evidence, not 'the GPU was full'",
       str(oom)[:400])
