# tests/memprints.sh runs this.
import json, os, re, sqlite3, subprocess, sys
from decimal import Decimal, ROUND_HALF_UP

vr, data = sys.argv[1], sys.argv[2]

def result(ok, desc, detail=""):
    print(("PASS\t" + desc) if ok else ("FAIL\t" + desc + "\t" + str(detail).replace("\n", " | ")[:1500]))

def run(*args):
    p = subprocess.run([vr] + list(args), capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

SHIFT = {"B": 0, "K": 10, "KB": 10, "KiB": 10, "M": 20, "MB": 20, "MiB": 20,
         "G": 30, "GB": 30, "GiB": 30}

def to_bytes(num, unit):
    v = Decimal(num) * (1 << SHIFT[unit])
    return int(v.to_integral_value(rounding=ROUND_HALF_UP))

N = r"([0-9]+(?:\.[0-9]+)?)"
# Each shape: a test that the line is one, and (role, regex, unit when
# the number has none) for its figures. Independent of schemas/memprint.patterns.
SHAPES = {
    "deepspeed-see-memory-usage.log": (lambda l: "Max_MA" in l, [
        ("allocated", r"(?<![\w])MA " + N + r" (GB)", None),
        ("max_allocated", r"Max_MA " + N + r" (GB)", None),
        ("reserved", r"(?<![\w])CA " + N + r" (GB)", None),
        ("max_reserved", r"Max_CA " + N + r" (GB)", None)]),
    "deepspeed-throughput-timer.log": (lambda l: "MemAllocated=" in l, [
        ("allocated", r"(?<!Max)MemAllocated=" + N + r"(GB)", None),
        ("max_allocated", r"MaxMemAllocated=" + N + r"(GB)", None)]),
    "megatron-report-memory.log": (lambda l: "memory (MB)" in l, [
        ("allocated", r"\| allocated: " + N, "MB"),
        ("max_allocated", r"max allocated: " + N, "MB"),
        ("reserved", r"\| reserved: " + N, "MB"),
        ("max_reserved", r"max reserved: " + N, "MB")]),
    "mmdet.log": (lambda l: "data_time" in l, [("max_allocated", r"memory: " + N, "MB")]),
    "detectron2.log": (lambda l: "max_mem" in l, [("max_allocated", r"max_mem: " + N + r"(M)", None)]),
    "ortmodule.log": (lambda l: "memory (MiB)" in l, [
        ("allocated", r"\| allocated: " + N, "MiB"),
        ("max_allocated", r"max allocated: " + N, "MiB"),
        ("reserved", r"\| cached: " + N, "MiB"),
        ("max_reserved", r"max cached: " + N, "MiB")]),
    "huggingface.log": (lambda l: "memory_allocated" in l or "before entering" in l or "Total Peak" in l, [
        ("allocated", r"'memory_allocated \(GB\)': " + N, "GB"),
        ("max_allocated", r"'max_memory_allocated \(GB\)': " + N, "GB"),
        ("allocated", r"before entering the train : " + N, "MB"),
        ("max_allocated", r"during the train \(max\): " + N, "MB")]),
    "chinese.log": (lambda l: "已分配" in l, [
        ("allocated", "已分配: " + N + " (GB|MB)", None),
        ("reserved", "已(?:保留|预留): " + N + " (GB|MB)", None)]),
}
ROLES = ["allocated", "reserved", "max_allocated", "max_reserved"]

def expected(path, shape):
    is_print, rules = shape
    out = {}
    for no, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        if not is_print(line):
            continue
        fig = {}
        for role, rx, unit in rules:
            m = re.search(rx, line)
            if m and role not in fig:
                fig[role] = to_bytes(m.group(1), m.group(2) if unit is None else unit)
        if "allocated" in fig or "max_allocated" in fig:
            out[no] = fig
    return out

def printed(db):
    c = sqlite3.connect(db)
    rows = c.execute("SELECT line, allocated_bytes, reserved_bytes, max_allocated_bytes, "
                     "max_reserved_bytes, step, framework, figure, unit_reading FROM memory_print "
                     "ORDER BY line").fetchall()
    c.close()
    return rows

# 1. real examples: every print found, its figures as this test reads them
for name, shape in sorted(SHAPES.items()):
    path = os.path.join(data, name)
    db = name + ".db"
    rc, out, err = run("import", path, "--db", db)
    if rc != 0:
        result(False, name + ": imported", err)
        continue
    got = {r[0]: {ROLES[k]: r[1 + k] for k in range(4) if r[1 + k] is not None} for r in printed(db)}
    want = expected(path, shape)
    result(len(want) > 0 and got == want, "%s: %d prints, figures as printed (1024-based)" % (name, len(want)),
           "got %s want %s" % (got, want))
    readings = {r[8] for r in printed(db)}
    result(readings == {"1024-based"}, name + ": the unit reading is stated as 1024-based", readings)

# peaks are peaks; steps from the line or the lines before it
rows = printed("mmdet.log.db")
result({r[7] for r in rows} == {"peak"} and [r[5] for r in rows] == [2400, 2450, 2150],
       "mmcv: 'memory:' is the peak, steps from 'Epoch [1][2400/7517]'", rows)
rows = printed("detectron2.log.db")
result({r[6] for r in rows} == {"detectron2"} and {r[7] for r in rows} == {"peak"} and
       [r[5] for r in rows] == [319, 339, 1259], "detectron2: max_mem is the peak, steps from 'iter:'", rows)
rows = printed("deepspeed-throughput-timer.log.db")
result([r[5] for r in rows] == [40, 4500, 199],
       "DeepSpeed timer: step from global_step=, or 'step=40' on the line before", rows)
rows = printed("megatron-report-memory.log.db")
result([r[5] for r in rows] == [20, 10, 10], "Megatron: the step from '(after N iterations)'", rows)
c = sqlite3.connect("megatron-report-memory.log.db")
ranks = [r[0] for r in c.execute("SELECT rank FROM memory_print ORDER BY line")]
c.close()
result(ranks == [0, 0, 16], "Megatron: '[Rank 16]' is the print's rank", ranks)
rows = printed("chinese.log.db")
result(len(rows) == 3 and rows[1][2] is None,
       "Chinese labels: 已分配/已保留/已预留; a reserved-only line is no sample", rows)

# 2. a rising log with a numberless OOM: leak; a flat one: not
def training_log(path, rise_mib, unit):
    scale = 1 if unit == "MB" else 1024
    with open(path, "w") as f:
        for step in range(1, 13):
            f.write("2026-11-30 10:%02d:00,000 INFO step %d: loss %.3f\n" % (step, step, 2.0 / step))
            alloc = (8192 + rise_mib * step) / scale
            f.write("2026-11-30 10:%02d:01,000 INFO mem_alloc=%.2f%s mem_reserved=%.2f%s\n"
                    % (step, alloc, unit, alloc + 1024 / scale, unit))
        f.write("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
                "    loss.backward()\nRuntimeError: CUDA error: out of memory\n")

def diagnose(path):
    rc, out, err = run(path, "-o", path + ".json")
    if rc != 0:
        return None, err
    return json.load(open(path + ".json", encoding="utf-8")), err

for unit in ("MB", "GB"):
    training_log("rise-%s.log" % unit, 300, unit)
    training_log("flat-%s.log" % unit, 0, unit)
    d, err = diagnose("rise-%s.log" % unit)
    f = [x for x in (d or {}).get("findings", []) if x.get("oom_id") is not None or x.get("kind") == "leak"]
    leak = [x for x in f if x.get("kind") == "leak"]
    # independently: the printed values, 1024-based, per step
    vals = [to_bytes("%.2f" % ((8192 + 300 * s) / (1 if unit == "MB" else 1024)), unit) for s in range(1, 13)]
    want_growth = (vals[-1] - vals[0]) // 11
    ev = leak[0].get("evidence", {}).get("leak_per_step_bytes", {}) if leak else {}
    result(len(leak) == 1 and abs(ev.get("value", 0) - want_growth) <= 1,
           "rising prints (%s) and a numberless OOM: the primary cause is leak, growth per step %d" % (unit, want_growth),
           json.dumps((d or {}).get("findings"))[:800] + err)
    mp = (d or {}).get("memory_prints", [])
    result(len(mp) == 1 and mp[0]["samples"] == 12 and mp[0]["first_allocated_bytes"] == vals[0] and
           mp[0]["last_allocated_bytes"] == vals[-1] and mp[0]["max_allocated_bytes"] == vals[-1] and
           mp[0]["growth_per_step_bytes"] == want_growth and mp[0]["figure"] == "current" and
           mp[0]["device"] is None and mp[0]["unit_reading"] == "1024-based" and
           mp[0]["max_reserved_bytes"] == to_bytes("%.2f" % ((8192 + 3600 + 1024) / (1 if unit == "MB" else 1024)), unit),
           "memory_prints[] (%s): samples, first/last/max allocated, max reserved, growth per step" % unit, mp)
    pts = mp[0].get("points", []) if mp else []
    result([p["allocated_bytes"] for p in pts] == vals and [p["step"] for p in pts] == list(range(1, 13))
           and all(p["ts_ns"] is not None for p in pts),
           "memory_prints[].points (%s): each print with its step and stamp" % unit, pts[:3])
    d, err = diagnose("flat-%s.log" % unit)
    kinds = [x.get("kind") for x in (d or {}).get("findings", [])]
    mp = (d or {}).get("memory_prints", [])
    result(d is not None and "leak" not in kinds and len(mp) == 1 and mp[0]["growth_per_step_bytes"] == 0,
           "flat prints (%s): no leak" % unit, kinds)

# prints of a sawtooth (freed each step): no leak either
with open("saw.log", "w") as f:
    for step in range(1, 13):
        f.write("step %d allocated: %d MB, reserved: 20000 MB\n" % (step, 8000 + (step % 2) * 500))
    f.write("RuntimeError: CUDA error: out of memory\n")
d, err = diagnose("saw.log")
result(d is not None and "leak" not in [x.get("kind") for x in d.get("findings", [])],
       "prints that rise and fall: no leak", err)

# 2b. the same prints with no OOM (a leak without an OOM, docs/diagnosis.md): one
# `leak` warning from the log, growth per step as printed; flat: none
def no_oom_log(path, rise_mib):
    with open(path, "w") as f:
        for step in range(1, 13):
            f.write("2026-11-30 10:%02d:00,000 INFO step %d: loss 1.0\n" % (step, step))
            f.write("2026-11-30 10:%02d:01,000 INFO allocated: %.2f MB, reserved: %.2f MB\n"
                    % (step, 8000 + rise_mib * step + 0.37 * step, 12000 + 0.0))

no_oom_log("rise-no-oom.log", 250)
no_oom_log("flat-no-oom.log", 0)
d, err = diagnose("rise-no-oom.log")
leak = [x for x in (d or {}).get("findings", []) if x.get("kind") == "leak"]
vals = [to_bytes("%.2f" % (8000 + 250 * s + 0.37 * s), "MB") for s in range(1, 13)]
want = (vals[-1] - vals[0]) // (len(vals) - 1)
ev = leak[0].get("evidence", {}) if leak else {}
result(len(leak) == 1 and leak[0].get("severity") == "warning" and leak[0].get("oom_id") is None
       and ev.get("leak_per_step_bytes") == {"value": want, "source": "log"}
       and ev.get("leak_steps") == {"value": 11, "source": "log"}
       and ev.get("first_printed_allocated_bytes", {}).get("value") == vals[0]
       and ev.get("last_printed_allocated_bytes", {}).get("value") == vals[-1],
       "rising prints, no OOM: one leak warning, %d bytes a step, source log" % want,
       json.dumps(leak)[:800] + err)
d, err = diagnose("flat-no-oom.log")
result(d is not None and not [x for x in d.get("findings", []) if x.get("kind") == "leak"],
       "flat prints, no OOM: no leak", err)
with open("saw-no-oom.log", "w") as f:
    for step in range(1, 13):
        f.write("step %d allocated: %d MB, reserved: 20000 MB\n" % (step, 8000 + (step % 2) * 500))
d, err = diagnose("saw-no-oom.log")
result(d is not None and not [x for x in d.get("findings", []) if x.get("kind") == "leak"],
       "sawtooth prints, no OOM: no leak", err)

# 3. the report's section, its text escaped
with open("evil.log", "w") as f:
    f.write("allocated: 1.00 GB, reserved: 2.00 GB\n")
    f.write("RuntimeError: CUDA error: out of memory\n")
evil = "<b>evil<b>|x.log"
os.rename("evil.log", evil)
rc, out, err = run(evil, "-o", "evil.md")
md = open("evil.md", encoding="utf-8").read() if rc == 0 else ""
result("## Memory printed by the job" in md and "1024-based" in md and "<b>" not in md and "\\|x.log" in md,
       "report: 'Memory printed by the job', 1024-based stated, the log's name escaped", md[-1500:] + err)
rc, out, err = run(evil, "-o", "evil.html")
html = open("evil.html", encoding="utf-8").read() if rc == 0 else ""
result("Memory printed by the job" in html and "<b>evil" not in html, "HTML report: the section, escaped", err)

# 4. a text with prints only is a job log; one without is not
rc, out, err = run("import", os.path.join(data, "chinese.log"), "--db", "only.db")
result(rc == 0, "a log with memory prints and no error is imported", err)

# 5. a print with a figure no allocator gives (over 1 PiB, 2^50 bytes) is
# counted as malformed, its line said on stderr, and not read; 1 PiB is.
with open("wild.log", "w") as f:
    f.write("step 1 allocated: 1.00 GB, reserved: 2.00 GB\n")
    f.write("step 2 allocated: 2000000 GB, reserved: 3.00 GB\n")
    f.write("step 3 allocated: 1.50 GB, reserved: 9999999999999999999999 GB\n")
    f.write("step 4 allocated: 1024 TB, reserved: 1024 TB\n")
rc, out, err = run("import", "wild.log", "--db", "wild.db")
rows, tallies = [], {}
if rc == 0:
    c = sqlite3.connect("wild.db")
    rows = [r for r in c.execute("SELECT line, allocated_bytes, reserved_bytes FROM memory_print ORDER BY line")]
    tallies = dict(c.execute("SELECT kind, count FROM source_tally"))
result(rows == [(1, 1 << 30, 2 << 30), (4, 1 << 50, 1 << 50)] and tallies.get("malformed_event") == 2,
       "prints over 1 PiB: not read, counted as malformed; 1 PiB itself read", (rc, rows, tallies, err))
result("wild.log: line 2: a memory print's allocated is impossible (over 1 PiB, more than any GPU "
       "holds): the print is not read (2 such prints, counted as malformed)" in err,
       "prints over 1 PiB: stderr names the first line", err)
