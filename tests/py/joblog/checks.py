# tests/joblog.sh runs this.
import gzip, json, os, re, sqlite3, subprocess, sys, textwrap
from decimal import Decimal, ROUND_HALF_UP

vr, logs = sys.argv[1], sys.argv[2]

def result(ok, desc, detail=""):
    if ok:
        print("PASS\t" + desc)
    else:
        print("FAIL\t" + desc + ("\t" + str(detail).replace("\t", " ").replace("\n", " | ")[:1500] if detail else ""))

def run(*args):
    p = subprocess.run([vr] + list(args), capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

# ---- the oracle: the message read with this test's own patterns -------------
UNITS = {"bytes": 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40,
         "KB": 2**10, "MB": 2**20, "GB": 2**30}
SIZE = r"(\d+(?:\.\d+)? (?:bytes|KiB|MiB|GiB|TiB|KB|MB|GB|B))"

def size(text):
    num, unit = text.split(" ")
    return int((Decimal(num) * UNITS[unit]).quantize(Decimal(1), rounding=ROUND_HALF_UP))

FIELDS = {
    "requested_bytes": [r"Tried to allocate " + SIZE],
    "capacity_bytes": [SIZE + r" total capacity", r"total capac(?:i)?ty of " + SIZE],
    "free_bytes": [r"of which " + SIZE + r" is free", SIZE + r" free"],
    "allocated_bytes": [SIZE + r" already allocated", r"Of the allocated memory " + SIZE],
    "reserved_bytes": [SIZE + r" reserved in total by PyTorch"],
    # PyTorch 1.0-1.3's "cached" is amount_cached - amount_allocated
    "reserved_unallocated_bytes": [SIZE + r" is reserved by PyTorch but unallocated", SIZE + r" cached"],
    "allowed_bytes": [SIZE + r" allowed"],
    "private_pools_bytes": [SIZE + r" allocated in private pools"],
}

def oracle(msg):
    msg = msg.replace("&gt;", ">")
    want = {}
    for key, pats in FIELDS.items():
        want[key] = None
        for p in pats:
            m = re.search(p, msg)
            if m:
                want[key] = size(m.group(1))
                break
    if want["reserved_bytes"] is None and want["allocated_bytes"] is not None and \
            want["reserved_unallocated_bytes"] is not None:
        want["reserved_bytes"] = want["allocated_bytes"] + want["reserved_unallocated_bytes"]
    procs = [(int(p), size(s)) for p, s in re.findall(r"Process (\d+) has " + SIZE + " memory in use", msg)]
    procs += [("self", size(s)) for s in re.findall(r"this process has " + SIZE + " memory in use", msg)]
    want["processes"] = sorted(procs, key=str)
    m = re.search(r"GPU (\d+)", msg)
    want["device"] = "cuda:%s" % m.group(1) if m else None
    return want

# the form each message has (docs/formats/job-log-oom.md names them)
WORDINGS = {1: "cached", 2: "cached", 3: "reserved-in-total", 4: "reserved-in-total",
            5: "reserved-in-total", 6: "reserved-in-total", 7: "reserved-in-total",
            8: "reserved-in-total", 9: "capacty-2.1", 10: "capacty-2.1", 11: "capacty-2.1",
            12: "current", 13: "current", 14: "hint", 15: "private-pools"}

SQL_OF = {"requested_bytes": "requested_bytes", "capacity_bytes": "capacity_bytes",
          "free_bytes": "device_free_bytes", "allocated_bytes": "total_allocated",
          "reserved_bytes": "total_reserved", "reserved_unallocated_bytes": "reserved_unallocated_bytes",
          "allowed_bytes": "allowed_bytes", "private_pools_bytes": "private_pools_bytes"}

def db_events(db):
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    rows = [dict(r) for r in con.execute(
        "SELECT e.*, s.path AS path, d.label AS device FROM oom_event e JOIN source s ON s.id = e.source_id "
        "LEFT JOIN device d ON d.id = e.device_id ORDER BY e.id")]
    for r in rows:
        r["processes"] = sorted([(p if p is not None else "self", u) for p, u in con.execute(
            "SELECT pid, used_bytes FROM oom_process WHERE oom_id = ?", (r["id"],))], key=str)
    con.close()
    return rows

def compare(desc, got, want, keys):
    bad = ["%s: got %r, want %r" % (k, got.get(k), want[k]) for k in keys if got.get(k) != want[k]]
    result(not bad, desc, "; ".join(bad))

messages = {}
for n in range(1, 16):
    messages[n] = open(os.path.join(logs, "oom-%02d.log" % n), encoding="utf-8").read().rstrip("\n")

# ---- 1. the fifteen messages, each alone ------------------------------------
rc, out, err = 0, "", ""
for n in range(1, 16):
    rc, out, err = run("import", os.path.join(logs, "oom-%02d.log" % n), "--db", "msgs.db", "-q")
    result(rc == 0, "oom-%02d.log is imported as a job log" % n, err)
events = db_events("msgs.db")
result(len(events) == 15, "the fifteen messages give fifteen errors", len(events))
for r in events:
    n = int(re.search(r"oom-(\d+)\.log", r["path"]).group(1))
    want = oracle(messages[n])
    got = {k: r[SQL_OF[k]] for k in FIELDS}
    got["processes"] = r["processes"]
    got["device"] = r["device"]
    compare("oom-%02d: every figure in the database is the message's" % n, got, want,
            list(FIELDS) + ["processes", "device"])
    result(r["wording"] == WORDINGS[n], "oom-%02d: wording %s" % (n, WORDINGS[n]), r["wording"])
    result(r["line"] == 1 and r["message"] == messages[n].replace("&gt;", ">"),
           "oom-%02d: line 1, the message kept whole" % n, (r["line"], r["message"][:200]))
# figures the oracle found at all: none of the fifteen is left without its numbers
thin = [n for n in messages if n != 14 and sum(oracle(messages[n])[k] is not None for k in FIELDS) < 2]
result(not thin, "the oracle itself reads at least two figures of each message but the bare hint", thin)

rc, out, err = run("report", "--db", "msgs.db", "--format", "json", "-o", "msgs.json")
result(rc == 0, "JSON report of the fifteen", err)
doc = json.load(open("msgs.json"))
oe = doc.get("oom_events", [])
result(len(oe) == 15, "oom_events lists the fifteen", len(oe))
for e in oe:
    n = int(re.search(r"oom-(\d+)\.log", e["source"]).group(1))
    want = oracle(messages[n])
    got = dict(e)
    got["processes"] = sorted([(p["pid"], p["used_bytes"]) for p in e["processes"]], key=str)
    compare("oom-%02d: every figure in the JSON is the message's" % n, got, want,
            list(FIELDS) + ["processes", "device"])
    keys = {"source", "line", "device", "rank", "ts_ns", "requested_bytes", "capacity_bytes",
            "free_bytes", "allocated_bytes", "reserved_bytes", "allowed_bytes", "processes"}
    result(keys <= set(e), "oom-%02d: the JSON has the issue's keys" % n, keys - set(e))

# ---- 2. realistic logs ------------------------------------------------------
def traceback(msg, prefix="", user=("/home/me/train.py", 88, "train_step")):
    lines = ["Traceback (most recent call last):",
             '  File "%s", line %d, in <module>' % (user[0], 120),
             "    main()",
             '  File "%s", line %d, in %s' % user,
             "    loss = model(batch).sum()",
             '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1518, in _wrapped_call_impl',
             "    return self._call_impl(*args, **kwargs)",
             '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py", line 2210, in linear',
             "    return torch._C._nn.linear(input, weight, bias)",
             msg]
    return [prefix + l for l in lines]

def stamp(i, zone=""):
    return "2024-03-12 10:%02d:%02d,123%s" % (i // 60, i % 60, zone)

def log_of(ns, wrap=None, prefix="", colour=False, stamped=True, zone=""):
    out = []
    for i, n in enumerate(ns):
        out.append(("%s - INFO - step %d loss 2.31" % (stamp(i, zone), i)) if stamped else "step %d loss 2.31" % i)
        msg = messages[n]
        if colour:
            msg = re.sub(r"^(\S*Error)", "\x1b[1;31m\\1\x1b[0m", msg)
        tb = traceback(msg, prefix)
        if wrap:
            tb = tb[:-1] + wrap(tb[-1])
        out += tb
    return out, None

def check_log(name, lines, ns, eol="\n", opener=open, wrapped=False, want_rank=None):
    path = name
    data = eol.join(lines) + eol
    with opener(path, "wb") as f:
        f.write(data.encode("utf-8"))
    db = name + ".db"
    rc, out, err = run("import", path, "--db", db, "-q")
    result(rc == 0, "%s: imported" % name, err)
    ev = db_events(db)
    result(len(ev) == len(ns), "%s: %d errors" % (name, len(ns)), [e["message"][:80] for e in ev])
    for e, n in zip(ev, ns):
        want = oracle(messages[n])
        got = {k: e[SQL_OF[k]] for k in FIELDS}
        got["processes"], got["device"] = e["processes"], e["device"]
        compare("%s: oom-%02d's figures" % (name, n), got, want, list(FIELDS) + ["processes", "device"])
        result(e["user_frame"] == "/home/me/train.py:88 in train_step",
               "%s: oom-%02d: the user frame is the last one outside torch" % (name, n), e["user_frame"])
        if want_rank is not None:
            result(e["rank"] == want_rank, "%s: oom-%02d: rank %d from the prefix" % (name, n, want_rank), e["rank"])
    return db, ev

FIGURED = [1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 15]
lines, _ = log_of(FIGURED)
db, ev = check_log("plain.log", lines, FIGURED)
# the line numbers: where the message is in the file, counted here
want_lines = [i + 1 for i, l in enumerate(lines) if l in messages.values()]
result([e["line"] for e in ev] == want_lines, "plain.log: each error on its own line number", [e["line"] for e in ev])
con = sqlite3.connect(db)
roles = dict(con.execute("SELECT role, count(*) FROM log_line GROUP BY role").fetchall())
clock = con.execute("SELECT clock_rule FROM source").fetchone()[0]
tb_first = con.execute("SELECT role, text FROM log_line WHERE line = ?", (want_lines[0] - 9,)).fetchone()
con.close()
result(roles.get("oom") == len(FIGURED) and roles.get("traceback", 0) >= 9 * len(FIGURED),
       "plain.log: the error lines and their tracebacks are kept as log lines", roles)
result(tb_first == ("traceback", "Traceback (most recent call last):"),
       "plain.log: the traceback's first line has role traceback", tb_first)
result(clock.startswith("wall clock (--tz"), "plain.log: stamps without a zone: local wall clock", clock)
# each error's time: the stamp of the step line before its traceback
ts = [e["ts_ns"] for e in ev]
import datetime
want_ts = [int(datetime.datetime(2024, 3, 12, 10, i // 60, i % 60, 123000, tzinfo=datetime.timezone.utc).timestamp()) * 10**9 + 123000000
           for i in range(len(FIGURED))]
result(ts == want_ts, "plain.log: each error at its log stamp", (ts[:3], want_ts[:3]))

lines, _ = log_of(FIGURED, zone="+02:00")
lines = [l.replace(",123+02:00", ".123+02:00") for l in lines]
db, ev = check_log("zoned.log", lines, FIGURED)
con = sqlite3.connect(db)
clock, start = con.execute("SELECT clock_rule, start_ns FROM source").fetchone()
con.close()
result(clock == "wall clock (zone in the file)", "zoned.log: stamps with their zone: UTC", clock)
result(ev[0]["ts_ns"] == want_ts[0] - 7200 * 10**9 and start == ev[0]["ts_ns"] - 0,
       "zoned.log: +02:00 converted to UTC", (ev[0]["ts_ns"], want_ts[0] - 7200 * 10**9, start))

lines, _ = log_of(FIGURED, prefix="[rank3]: ")
check_log("rank.log", lines, FIGURED, want_rank=3)
lines, _ = log_of(FIGURED, prefix="[default5]:")
check_log("torchrun.log", lines, FIGURED, want_rank=5)
lines, _ = log_of(FIGURED, colour=True)
check_log("colour.log", lines, FIGURED)
lines, _ = log_of(FIGURED)
check_log("crlf.log", lines, FIGURED, eol="\r\n")
lines, _ = log_of([5, 6])
check_log("html.log", [l.replace(">>", "&gt;&gt;") for l in lines], [5, 6])
lines, _ = log_of(FIGURED, wrap=lambda m: textwrap.wrap(m, 80))
check_log("rewrapped.log", lines, FIGURED, wrapped=True)
lines, _ = log_of(FIGURED, wrap=lambda m: [m[i:i + 80] for i in range(0, len(m), 80)])
check_log("hardwrapped.log", lines, FIGURED, wrapped=True)
lines, _ = log_of(FIGURED)
check_log("gzipped.log.gz", lines, FIGURED, opener=gzip.open)

# a log of 9 MiB dense with errors: the scanner's window slides twice, and
# its edges fall inside messages; every error is still read whole
dense, order = [], []
i = total = 0
while total < 9 << 20:
    n = FIGURED[i % len(FIGURED)]
    add = ["step %d" % i] * (i % 3) + [messages[n]]
    dense += add
    total += sum(len(l) + 1 for l in add)
    order.append(n)
    i += 1
with open("dense.log", "w") as f:
    f.write("\n".join(dense) + "\n")
rc, out, err = run("import", "dense.log", "--db", "dense.db", "-q")
ev = db_events("dense.db")
want_of = {n: oracle(messages[n]) for n in set(order)}  # each message read once
bad = [(e["line"], n) for e, n in zip(ev, order) if e["requested_bytes"] != want_of[n]["requested_bytes"]
       or e["total_reserved"] != want_of[n]["reserved_bytes"] or e["message"] != messages[n]]
result(rc == 0 and len(ev) == len(order) and not bad,
       "a dense 9 MiB log: all %d errors read whole across the window's edges" % len(order), (rc, err, len(ev), bad[:5]))

# two ranks print the same error, interleaved: two errors, each its rank and frame
a = traceback(messages[12], "[rank0]: ")
b = traceback(messages[12], "[rank1]: ", ("/home/me/other.py", 7, "step"))
inter = [x for pair in zip(a, b) for x in pair]
with open("two-ranks.log", "w") as f:
    f.write("\n".join(inter) + "\n")
rc, out, err = run("import", "two-ranks.log", "--db", "two.db", "-q")
ev = db_events("two.db")
got = sorted((e["rank"], e["user_frame"], e["device"]) for e in ev)
result(got == [(0, "/home/me/train.py:88 in train_step", "cuda:0"), (1, "/home/me/other.py:7 in step", "cuda:0")],
       "two ranks printing the same error: two errors, each with its rank, frame and device", got)
con = sqlite3.connect("two.db")
devs = con.execute("SELECT rank, label FROM device ORDER BY rank").fetchall()
con.close()
result(devs == [(0, "cuda:0"), (1, "cuda:0")], "two ranks: each rank's GPU 0 is its own device", devs)

# a chained traceback prints the error again: one error
chained = traceback(messages[13]) + ["", "During handling of the above exception, another exception occurred:", ""] + \
    traceback(messages[13])
with open("chained.log", "w") as f:
    f.write("\n".join(chained) + "\n")
rc, out, err = run("import", "chained.log", "--db", "chained.db", "-q")
con = sqlite3.connect("chained.db")
n_ev = con.execute("SELECT count(*) FROM oom_event").fetchone()[0]
rep = con.execute("SELECT count FROM source_tally WHERE kind = 'repeated_oom'").fetchone()
con.close()
result(n_ev == 1 and rep == (1,), "a chained traceback repeating the error: one error, the repeat counted", (n_ev, rep))
# the same message twice, not chained (the job failed twice): two errors
with open("twice.log", "w") as f:
    f.write("\n".join(traceback(messages[13]) + ["retrying with a smaller batch"] + traceback(messages[13])) + "\n")
rc, out, err = run("import", "twice.log", "--db", "twice.db", "-q")
result(len(db_events("twice.db")) == 2, "the same error twice, not chained: two errors", err)

# stamp shapes: [bracketed], ISO with Z, glog (no year: not placed, the
# error takes the nearest placed stamp before it)
with open("stamps.log", "w") as f:
    f.write("[rank0]: [2024-03-12 10:15:32] starting\n"
            "2024-03-12T10:15:33.5Z step 1\n"
            "I0312 10:15:40.123456 12345 train.py:10] glog line\n"
            "RuntimeError: CUDA error: out of memory\n")
rc, out, err = run("import", "stamps.log", "--db", "stamps.db", "-q")
con = sqlite3.connect("stamps.db")
got = con.execute("SELECT e.ts_ns, s.start_ns, s.end_ns, s.clock_rule FROM oom_event e JOIN source s").fetchone()
con.close()
t32 = int(datetime.datetime(2024, 3, 12, 10, 15, 32, tzinfo=datetime.timezone.utc).timestamp()) * 10**9
result(got == (t32 + 1500000000, t32, t32 + 1500000000, "wall clock (--tz UTC)"),
       "stamps: bracketed and ISO read, glog's yearless stamp skipped, a log mixing zones read as local",
       (got, t32))

# ---- 3. bare wordings: errors without figures --------------------------------
BARE = [
    ("RuntimeError: CUDA error: out of memory", "cuda-error"),
    ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=2 : out of memory", "thc"),
    ("RuntimeError: cudaErrorMemoryAllocation: out of memory", "cudaErrorMemoryAllocation"),
    ("RuntimeError: HIP error: hipErrorOutOfMemory", "hip-error"),
    ("torch.OutOfMemoryError: HIP out of memory.", "hip-bare"),
    ("RuntimeError: CUDA out of memory.", "bare"),
]
with open("bare.log", "w") as f:
    for i, (line, _) in enumerate(BARE):
        f.write("epoch %d\n%s\n" % (i, line))
    # after a bare error, a line with its words is not part of it
    f.write("GPU 1 cache emptied: 5.00 GiB free\n")
rc, out, err = run("import", "bare.log", "--db", "bare.db", "-q")
ev = db_events("bare.db")
got = [(e["line"], e["wording"], e["requested_bytes"], e["device_free_bytes"], e["device_id"]) for e in ev]
want = [(2 * i + 2, w, None, None, None) for i, (_, w) in enumerate(BARE)]
result(got == want, "bare wordings: errors without figures, each its wording and line", got)

# ---- 4. embedded boxes -------------------------------------------------------
SMI = """Tue Mar 12 10:15:32 2024
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
|   0  Tesla T4            Off  | 00000000:00:04.0 Off |                    0 |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                                  |
|    0   N/A  N/A      1234      C   python                          14000MiB |
+-----------------------------------------------------------------------------+"""
SUMMARY = """|===========================================================================|
|                  PyTorch CUDA memory summary, device ID: 0                 |
|---------------------------------------------------------------------------|
| Allocated memory      |  14398 MiB |  14398 MiB |  20480 MiB |   6082 MiB |
|===========================================================================|"""
# The error first: a head (64 KiB) holding a box's title alone is that
# box's format (its own reader), one holding the error is a job log.
filler = ["step %d loss 2.31" % i for i in range(4000)]
boxed = traceback(messages[12]) + filler + SMI.split("\n") + ["between"] + SUMMARY.split("\n") + ["end"]
with open("boxes.log", "w") as f:
    f.write("\n".join(boxed) + "\n")
rc, out, err = run("import", "boxes.log", "--db", "boxes.db", "-q")
result(rc == 0, "a log with boxes: imported", err)
con = sqlite3.connect("boxes.db")
rows = con.execute("SELECT line, role FROM log_line WHERE role IN ('smi_table', 'memory_summary') ORDER BY line").fetchall()
whole = con.execute("SELECT text FROM log_line WHERE role = 'smi_table' ORDER BY line LIMIT 1").fetchone()
con.close()
smi0 = len(traceback("x")) + len(filler) + 2
smi1 = smi0 + len(SMI.split("\n")) - 2
sum0 = smi1 + 2
sum1 = sum0 + len(SUMMARY.split("\n")) - 1
result(whole is not None and whole[0] == "\n".join(SMI.split("\n")[1:]),
       "embedded nvidia-smi table: its first row holds the whole table", whole)
result(rows == [(smi0, "smi_table"), (smi1, "smi_table"), (sum0, "memory_summary"), (sum1, "memory_summary")],
       "embedded boxes: the nvidia-smi table and the memory_summary box, first and last line",
       (rows, [smi0, smi1, sum0, sum1]))

# Boxes are read, not only kept: a real memory_summary() box and a real
# nvidia-smi table (the "load" section of an exporter capture, cut out
# here with its time stamp line) printed into a log give the rows the
# same box gives as a file of its own, compared by SQL on two databases.
real = os.path.join(os.path.dirname(logs), "realdata")
summary_file = os.path.join(real, "summary", "pytorch__pytorch__issue35901__memory_summary_PARTIAL.txt")
cap = open(os.path.join(real, "nvsmi", "exporter-capture-h100-80gb.txt")).read().split("\n")
at = cap.index("# load :: nvidia-smi (default table)") + 3
table = []
for l in cap[at:]:
    if l.startswith("####"):
        break
    table.append(l)
while table and not table[-1].strip():
    table.pop()
with open("table.txt", "w") as f:
    f.write("\n".join(table) + "\n")
summary = open(summary_file).read().rstrip("\n").split("\n")
# The error and both boxes within the head (64 KiB): still a job log.
embedded = traceback(messages[12]) + ["step 1 loss 2.31"] + table + ["step 2 loss 2.30"] + summary + ["done"]
with open("real-boxes.log", "w") as f:
    f.write("\n".join(embedded) + "\n")
for name in ("real-boxes.log", "table.txt"):
    rc, out, err = run("import", name, "--db", name + ".db", "-q")
    result(rc == 0, "boxes read: %s imported" % name, err)
rc, out, err = run("import", summary_file, "--db", "summary.db", "-q")
result(rc == 0, "boxes read: the summary file imported", err)

def rows(db, sql):
    con = sqlite3.connect(db)
    got = con.execute(sql).fetchall()
    con.close()
    return got

fmt = rows("real-boxes.log.db", "SELECT format FROM source")
result(fmt == [("job_log",)], "a log with an error and boxes in its head: read as a job log", fmt)
STATS = "SELECT device_idx, dump, key, value FROM allocator_stat ORDER BY dump, key"
got, want = rows("real-boxes.log.db", STATS), rows("summary.db", STATS)
result(len(want) > 20 and got == want,
       "an embedded memory_summary box: the allocator_stat rows of the summary file (%d)" % len(want),
       (len(got), len(want), sorted(set(got) ^ set(want))[:6]))
GPUS = "SELECT idx, name, uuid, pci_bus_id, memory_total_bytes FROM gpu ORDER BY id"
SAMPLES = ("SELECT g.pci_bus_id, s.seq, s.ts_ns, s.memory_used_bytes, s.memory_total_bytes, "
           "s.utilization_gpu_pct FROM gpu_sample s JOIN gpu g ON g.id = s.gpu_id ORDER BY s.seq")
PROCS = ("SELECT g.pci_bus_id, p.ts_ns, p.pid, p.process_name, p.process_type, p.used_bytes "
         "FROM process_sample p LEFT JOIN gpu g ON g.id = p.gpu_id ORDER BY p.id")
for what, sql, least in (("gpu", GPUS, 1), ("gpu_sample", SAMPLES, 1), ("process_sample", PROCS, 3)):
    got, want = rows("real-boxes.log.db", sql), rows("table.txt.db", sql)
    result(len(want) >= least and got == want,
           "an embedded nvidia-smi table: the %s rows of the table alone (%d)" % (what, len(want)),
           (got, want))
# The oracle for the figures themselves, from the table's text.
mem = re.search(r"(\d+)MiB /\s+(\d+)MiB", "\n".join(table))
procs = [int(m.group(1)) for m in re.finditer(r"\s(\d+)MiB \|$", "\n".join(table), re.M)]
smp = rows("real-boxes.log.db", "SELECT memory_used_bytes, memory_total_bytes FROM gpu_sample")
pu = rows("real-boxes.log.db", "SELECT used_bytes FROM process_sample ORDER BY id")
result(smp == [(int(mem.group(1)) << 20, int(mem.group(2)) << 20)] and [u for (u,) in pu] == [p << 20 for p in procs],
       "an embedded nvidia-smi table: used and total as the table writes them", (smp, pu, procs))
# The table's own stamp line places its reading (a local wall clock, as the file alone).
ts = rows("real-boxes.log.db", "SELECT ts_ns FROM gpu_sample")
import calendar, time
table_ns = calendar.timegm(time.strptime(table[0].strip(), "%a %b %d %H:%M:%S %Y")) * 10**9
result(ts == [(table_ns,)], "an embedded nvidia-smi table: its reading at its own stamp line", (ts, table_ns))
kept = rows("real-boxes.log.db", "SELECT role, count(*) FROM log_line WHERE role IN ('smi_table', 'memory_summary') GROUP BY role ORDER BY role")
result(kept == [("memory_summary", 2), ("smi_table", 2)], "boxes read are still kept as log lines", kept)
rc, out, err = run("real-boxes.log", "--format", "json", "-o", "real-boxes.json")
doc = json.load(open("real-boxes.json")) if rc == 0 else {}
result(len(doc.get("oom_events", [])) == 1 and len(doc.get("allocator_stats", [])) > 0 and len(doc.get("gpus", [])) == 1,
       "a log with an error and boxes: the report has its oom_events, allocator_stats and gpus",
       (rc, err, {k: len(doc.get(k, [])) for k in ("oom_events", "allocator_stats", "gpus")}))
# Two ranks printing the table: behind a "[rank1]: " prefix it reads the same.
with open("rank-table.log", "w") as f:
    f.write("\n".join(traceback(messages[12]) + ["[rank1]: " + l for l in table]) + "\n")
rc, out, err = run("import", "rank-table.log", "--db", "rank-table.db", "-q")
got = rows("rank-table.db", SAMPLES) + rows("rank-table.db", PROCS) if rc == 0 else err
want = rows("table.txt.db", SAMPLES) + rows("table.txt.db", PROCS)
result(got == want, "an embedded nvidia-smi table behind a rank prefix: the same readings and processes", (got, want))

# A box past the scanner's bound (64 KiB): what is there is read, the cut said.
big = ["| Allocated memory      |    1062 MB |    4877 MB |   89299 MB |   88237 MB |"] * 1200
with open("big-box.log", "w") as f:
    f.write("\n".join(traceback(messages[12]) + summary[:5] + big + ["done"]) + "\n")
rc, out, err = run("import", "big-box.log", "--db", "big-box.db")
n = rows("big-box.db", "SELECT count(*) FROM allocator_stat WHERE key LIKE 'allocated_bytes.all.%'") if rc == 0 else None
result(rc == 0 and n and n[0][0] > 0 and "box(es) in a log read in part" in err,
       "a box over 64 KiB: its rows up to the bound read, the cut said", (rc, n, err))

# ---- 5. malformed input -------------------------------------------------------
with open("mention.log", "w") as f:
    f.write("INFO tip: CUDA out of memory errors are avoided with a smaller batch\nstep 1 loss 2.0\n")
rc, out, err = run("import", "mention.log", "--db", "mention.db")
result(rc != 0 and "mention.log: not a recognised input: text without a CUDA out-of-memory error, a memory print or an inference server's memory line (2 lines read)" in err
       and "Traceback" not in err and rc < 128,
       "a log that only mentions the error: refused in one clear line", (rc, err))
with open("notes.txt", "w") as f:
    f.write("epoch 1 loss 2.31\nepoch 2 loss 2.05\n")
rc, out, err = run("import", "notes.txt", "--db", "notes.db")
result(rc != 0 and "text without a CUDA out-of-memory error" in err and err.count("\n") == 1,
       "text with no error: refused, not imported", (rc, err))

two = log_of([3, 12, 13])[0]
raw = gzip.compress(("\n".join(two * 400) + "\n").encode())
with open("cut.log.gz", "wb") as f:
    f.write(raw[: len(raw) * 2 // 3])
rc, out, err = run("import", "cut.log.gz", "--db", "cut.db")
n_ev = len(db_events("cut.db")) if rc == 0 else -1
result(rc == 0 and "truncated" in err and 0 < n_ev < 1200,
       "a cut gzip log: what is before the cut is imported, with a warning", (rc, n_ev, err[:300]))
con = sqlite3.connect("cut.db")
trunc = con.execute("SELECT truncated FROM source").fetchone()
con.close()
result(trunc == (1,), "a cut gzip log: the source says it is cut", trunc)

import random
random.seed(9)
with open("garbage.log", "wb") as f:
    f.write(bytes(random.randrange(256) for _ in range(20000)))
rc, out, err = run("import", "garbage.log", "--db", "garbage.db")
result(rc == 1 and "binary data" in err and err.count("\n") == 1, "binary garbage named .log: refused cleanly", (rc, err))

with open("long.log", "wb") as f:
    f.write(b"x" * (3 << 20) + b" CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 1.00 GiB total capacity; 0 bytes free; 99999999999999999999.00 GiB reserved in total by PyTorch)\n")
rc, out, err = run("import", "long.log", "--db", "long.db")
ev = db_events("long.db") if rc == 0 else []
result(rc == 0 and len(ev) == 1 and ev[0]["total_reserved"] is None and ev[0]["device_free_bytes"] == 0,
       "a 3 MiB line and a figure out of range: the error is read, the figure left out", (rc, err, ev[:1]))
result("figure(s) not read (out of range, or impossible)" in err, "the figure left out is said", err)

# ---- 6. a log beside a trace: its error is on the trace's device -------------
import shutil
shutil.copy(os.path.join(os.path.dirname(logs), "..", "cli", "data", "tiny.pt.trace.json"), "tiny.pt.trace.json")
with open("rank0.log", "w") as f:
    f.write("[rank0]: " + messages[12].replace("GPU 0", "GPU 1") + "\n")
rc, out, err = run("tiny.pt.trace.json", "rank0.log", "--format", "json", "-o", "both.json")
doc = json.load(open("both.json")) if rc == 0 else {}
dev = [d for d in doc.get("devices", []) if d["id"] == "cuda:1" and d.get("rank") == 0]
reqs = sorted(o["requested_bytes"] for o in dev[0]["out_of_memory"]) if dev else None
result(reqs is not None and size("22.00 MiB") in reqs and len(reqs) == 2,
       "a log beside a trace of its rank: its error is in the device's out_of_memory", (rc, err, reqs))
srcs = sorted((e["source"], e["device"], e["rank"]) for e in doc.get("oom_events", []))
result(srcs == [("rank0.log", "cuda:1", 0), ("tiny.pt.trace.json", "cuda:1", 0)],
       "oom_events lists the trace's error and the log's", srcs)

# ---- 7. a log alone makes a report -------------------------------------------
lines, _ = log_of([12])
with open("alone.log", "w") as f:
    f.write("\n".join(lines) + "\n")
rc, out, err = run("alone.log", "-o", "alone.md")
md = open("alone.md").read() if os.path.exists("alone.md") else ""
result(rc == 0 and "## Out-of-memory errors" in md and "22.0 MiB" in md and "/home/me/train.py:88 in train\\_step" in md,
       "a log alone: the report has its out-of-memory errors", (rc, err, md[:2000]))
result("Tried to allocate 22.00 MiB" in md and "Traceback (most recent call last):" in md,
       "a log alone: the excerpt is in the report, unescaped in its code block", md[-1500:])
rc, out, err = run("alone.log", "-o", "alone.html")
html = open("alone.html").read() if os.path.exists("alone.html") else ""
result(rc == 0 and "Out-of-memory errors" in html and "<code>" in html, "a log alone: the HTML report too", err)
# ---- 8. thousands of errors of one shape: told once, the report bounded -----
# 5,000 errors of cuda:0 asking for 20-30 MiB (one shape: the same device,
# cause and power of two), three of cuda:1 asking for 2 GiB among them;
# every figure of the group's range is computed here from the lines written.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import human_bytes
N = 5000
base = calendar.timegm((2024, 3, 12, 0, 0, 0)) * 10**9
def stamp(ns):
    t = (ns - base) // 10**6
    return "2024-03-12 %02d:%02d:%02d,%03d" % (t // 3600000, t // 60000 % 60, t // 1000 % 60, t % 1000)
big, small, out = [], [], []
for j in range(N + 3):
    ns = base + j * 500 * 10**6
    other = j in (100, 2001, 4002)
    req = "2.00 GiB" if other else "%d.00 MiB" % (20 + j * 7 % 11)
    free = "%.2f MiB" % (10 + (j % 9) * 0.25)
    unalloc = "%d.00 MiB" % (190 + j % 13)
    out.append("%s - INFO - step %d loss 1.%04d" % (stamp(ns), j, j))
    out.append("%s - ERROR - torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %s. "
               "GPU %d has a total capacity of 23.65 GiB of which %s is free. Including non-PyTorch "
               "memory, this process has 23.60 GiB memory in use. Of the allocated memory 22.90 GiB "
               "is allocated by PyTorch, and %s is reserved by PyTorch but unallocated."
               % (stamp(ns), req, 1 if other else 0, free, unalloc))
    (small if other else big).append({"requested": size(req), "free": size(free),
                                      "reserved": size("22.90 GiB") + size(unalloc), "ts": ns})
with open("many.log", "w") as f:
    f.write("\n".join(out) + "\n")
rc, _, err = run("many.log", "-o", "many.json")
result(rc == 0, "a log of 5,003 errors gives a JSON report", err)
jsize = os.path.getsize("many.json") if rc == 0 else 0
d = json.load(open("many.json")) if rc == 0 else {}
result(0 < jsize < 256 * 1024, "the JSON of 5,003 errors is under 256 KiB (not 30 log lines per error)", jsize)
oe = d.get("oom_events", [])
result(d.get("oom_event_count") == N + 3 and len(oe) == 50 and
       d.get("verdict", {}).get("oom_count") == N + 3,
       "oom_events lists the first 50 errors; oom_event_count and the verdict count all 5,003",
       (d.get("oom_event_count"), len(oe), d.get("verdict", {}).get("oom_count")))
with_lines = [len(e.get("excerpt", [])) > 0 for e in oe]
kept = sum(with_lines)
text = [sum(len(l["text"].encode()) for l in e.get("excerpt", [])) for e in oe]
result(0 < kept <= 20 and with_lines == [True] * kept + [False] * (50 - kept) and
       sum(text[:kept - 1]) < 64 * 1024 and
       oe[0]["excerpt"][-1]["role"] == "oom" and "Tried to allocate 20.00 MiB" in oe[0]["excerpt"][-1]["text"],
       "excerpts: the first errors' lines, at most 20 errors and 64 KiB, none after", (kept, text[:25]))
def rng(rows, key):
    return min(r[key] for r in rows), max(r[key] for r in rows)
groups = d.get("oom_groups", [])
want = [("cuda:0", N) + rng(big, "requested") + rng(big, "free") + rng(big, "reserved") + rng(big, "ts"),
        ("cuda:1", 3) + rng(small, "requested") + rng(small, "free") + rng(small, "reserved") + rng(small, "ts")]
got = [(g["device"], g["errors"], g["requested_min_bytes"], g["requested_max_bytes"], g["free_min_bytes"],
        g["free_max_bytes"], g["reserved_min_bytes"], g["reserved_max_bytes"], g["first_ts_ns"], g["last_ts_ns"])
       for g in groups]
result(got == want, "oom_groups: two shapes, each with its count and the range of its figures", (got, want))
fs = [f for f in d.get("findings", []) if f["severity"] == "critical"]
like = fs[0].get("more_like_it", {}) if fs else {}
result(len(fs) == 4 and like.get("more") == N - 1 and like.get("errors") == N and
       [f.get("more_like_it") for f in fs[1:]] == [None] * 3 and
       [f["device"] for f in fs] == ["cuda:0", "cuda:1", "cuda:1", "cuda:1"] and
       (like.get("requested_min_bytes"), like.get("requested_max_bytes"), like.get("last_ts_ns")) ==
       (want[0][2], want[0][3], want[0][9]) and d["verdict"]["finding_count"] == N + 3,
       "findings: the big shape's first, with 4,999 more like it; the three of cuda:1 each in full",
       [(f["device"], f.get("more_like_it")) for f in fs])
listed = {f["title"] for f in d.get("findings", [])}
result(len(d.get("advice", [])) == sum(len(f["advice"]) for f in d.get("findings", [])) and
       all(a["finding"] in listed for a in d.get("advice", [])),
       "advice: only the listed findings' (not 5,003 copies)", len(d.get("advice", [])))
rc, _, err = run("many.log", "-o", "many.md")
md = open("many.md").read() if rc == 0 else ""
def t(ns):  # the report's times, from the start of the log
    v = ns - base
    return ("%d ns" % v if v < 1e3 else "%.1f \u00b5s" % (v / 1e3) if v < 1e6 else
            "%.2f ms" % (v / 1e6) if v < 1e9 else "%.3f s" % (v / 1e9))
def span(lo, hi):  # one figure where the range's ends read the same
    return lo if lo == hi else "%s to %s" % (lo, hi)
sentence = ("4,999 more like it: requested %s, free %s, reserved %s, from %s to %s"
            % (span(human_bytes(want[0][2]), human_bytes(want[0][3])),
               span(human_bytes(want[0][4]), human_bytes(want[0][5])),
               span(human_bytes(want[0][6]), human_bytes(want[0][7])), t(want[0][8]), t(want[0][9])))
result(rc == 0 and md.count(sentence) == 2 and len(md) < 128 * 1024,
       "Markdown: the verdict and the finding say '%s'; the report is under 128 KiB" % sentence[:40],
       (rc, err, len(md), sentence, re.findall(r"[0-9,]+ more like it.{0,200}", md)[:3]))
# The Cause column says the kind in words (the headline's), not its slug.
KIND_WORDS = {"capacity": "the GPU was full", "fragmentation": "free memory was fragmented",
              "other-process": "another process held the memory", "leak": "memory kept growing",
              "oversized-request": "the request was larger than the GPU",
              "inconsistent": "the figures contradict each other",
              "insufficient-evidence": "too little evidence to tell why"}
row = "| cuda:0 | %s | 5,000 | %s to %s |" % (KIND_WORDS.get(fs[0]["kind"], "?") if fs else "?", human_bytes(want[0][2]),
                                           human_bytes(want[0][3]))
result(row in md and md.count(" more like it") == 2,
       "Markdown: the table of shapes counts the 5,000 errors of cuda:0", row)
# The same errors on the device of a trace beside them (cuda:1, rank 0): its
# out_of_memory lists at most 200, evenly over the run, and counts all.
with open("many1.log", "w") as f:
    for l in out:
        f.write(("[rank0]: " + l.replace("GPU 0 has", "GPU 1 has") if "ERROR" in l else l) + "\n")
rc, _, err = run("tiny.pt.trace.json", "many1.log", "-o", "many1.json")
d1 = json.load(open("many1.json")) if rc == 0 else {}
dev = [x for x in d1.get("devices", []) if x["id"] == "cuda:1"]
ts = [o["ts_ns"] for o in dev[0]["out_of_memory"]] if dev else []
result(dev and dev[0]["out_of_memory_count"] == N + 4 and 100 <= len(ts) <= 200 and ts == sorted(ts) and
       ts[0] == 1700000000001600000 and ts[-1] > base + (N - 100) * 500 * 10**6,
       "a device of 5,004 errors: out_of_memory lists at most 200, from the first to near the last, and counts all",
       (rc, err[:300], dev and dev[0]["out_of_memory_count"], len(ts), ts[:2], ts[-1:]))
# 150 ranks failing once each: 150 shapes; the first 100 are groups of
# one, the other 50 one group "of other shapes", told by its first.
with open("ranks150.log", "w") as f:
    for r in range(150):
        f.write("[rank%d]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %d.00 MiB. "
                "GPU 0 has a total capacity of 23.65 GiB of which 11.00 MiB is free.\n" % (r, 100 + r))
rc, _, err = run("ranks150.log", "-o", "ranks150.json")
d = json.load(open("ranks150.json")) if rc == 0 else {}
gs = d.get("oom_groups", [])
fs = [f for f in d.get("findings", []) if f["severity"] == "critical"]
other = gs[-1] if gs else {}
result(len(gs) == 101 and [g["errors"] for g in gs[:100]] == [1] * 100 and other.get("other_shapes") and
       other.get("errors") == 50 and other.get("device") is None and
       (other.get("requested_min_bytes"), other.get("requested_max_bytes")) == (200 << 20, 249 << 20) and
       len(fs) == 101 and fs[-1].get("more_like_it", {}).get("more") == 49 and d["verdict"]["finding_count"] == 150,
       "150 shapes: 100 groups, the other 50 one group of other shapes told by its first",
       (rc, err[:200], len(gs), other, len(fs)))
rc, _, err = run("ranks150.log", "-o", "ranks150.md")
md = open("ranks150.md").read() if rc == 0 else ""
result("49 more of other shapes: requested 200 MiB to 249 MiB, free 11.0 MiB." in md and
       "| not named | other shapes | 50 | 200 MiB to 249 MiB |" in md,
       "Markdown: the group of other shapes, its sentence and its row", re.findall(r".{0,80}other shapes.{0,80}", md)[:3])
