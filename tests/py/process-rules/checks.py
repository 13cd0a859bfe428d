# tests/process-rules.sh runs this: the process rules of the diagnosis
# (docs/diagnosis.md, "Other processes" and "Which readings are the
# job's") at their edges. Every figure is written by this test in bytes
# (the message's own "N bytes" form, a trace's and a snapshot's byte
# counts), so each edge is one byte; the expectations follow from the
# rules as the documentation states them, computed here.
import calendar, json, os, pickle, re, subprocess, sys, time
from vrtest import result

vr, srcdir = sys.argv[1], sys.argv[2]
MiB, GiB = 1 << 20, 1 << 30
DAY_NS = 86400 * 10**9
ROUNDING = 4 * (GiB // 200)  # four figures, each off by 0.005 GiB at most


def report(*inputs):
    p = subprocess.run([vr, *inputs, "-f", "json", "-q", "--tz", "UTC"], capture_output=True)
    if p.returncode not in (0, 3):
        return None, "exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace"))
    return json.loads(p.stdout), p.stderr.decode("utf-8", "replace")

def oom_finding(d):
    fs = [x for x in d["findings"] if x["severity"] == "critical"] if d else []
    return fs[0] if len(fs) == 1 else None

def log(name, req, cap, free, alloc, unalloc, procs="", this=None):
    """A log whose message states every figure in bytes."""
    p = "".join("Process %d has %d bytes memory in use. " % (pid, used) for pid, used in procs)
    if this is not None:
        p += "Including non-PyTorch memory, this process has %d bytes memory in use. " % this
    with open(name, "w") as fh:
        fh.write("2024-03-13 10:41:05,907 - INFO - epoch 3 step 1201 loss 0.4119\n"
                 "Traceback (most recent call last):\n"
                 '  File "/work/train.py", line 212, in <module>\n'
                 "    main()\n"
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %d bytes. GPU 0 "
                 "has a total capacity of %d bytes of which %d bytes is free. %sOf the allocated "
                 "memory %d bytes is allocated by PyTorch, and %d bytes is reserved by PyTorch "
                 "but unallocated.\n" % (req, cap, free, p, alloc, unalloc))
    return name

def check(name, path_or_paths, kind, evidence=None, absent=()):
    paths = path_or_paths if isinstance(path_or_paths, list) else [path_or_paths]
    d, err = report(*paths)
    f = oom_finding(d)
    result(f is not None and f["kind"] == kind, "%s: %s" % (name, kind),
           err if d is None else (f and (f["kind"], f["detail"])))
    for key, value in (evidence or {}).items():
        got = f and f["evidence"].get(key)
        result(got is not None and got["value"] == value,
               "%s: evidence %s = %d" % (name, key, value), got)
    for key in absent:
        result(f is not None and key not in f["evidence"], "%s: no %s in the evidence" % (name, key),
               f and f["evidence"])
    return d, f

# ---- 1. a lone "Process N" is this process by arithmetic ----------------
# As another process it and this process's reserved memory would be more
# than is in use (capacity - free) beyond the figures' rounding: they
# cannot be two processes. Its context (X - reserved, 1.9 GiB here) is
# above the 1.5 GiB the first rule accepts, so only the arithmetic says so.
cap, free, alloc, unalloc = 16 * GiB, 100 * MiB, 7 * GiB - 50 * MiB, 50 * MiB
reserved = alloc + unalloc
edge = cap - free + ROUNDING - reserved  # X at which X + reserved = in use + rounding
assert edge - reserved > 3 * GiB // 2
for x, kind, what in ((edge, "other-process", "at the edge: another process"),
                      (edge + 1, "capacity", "one byte past: this process")):
    ev = {"other_processes_bytes": x} if kind == "other-process" else {"this_process_bytes": x,
                                                                       "other_processes_bytes": 0}
    check("lone process %s (X + reserved - (capacity - free) = %d)" % (what, x + reserved - cap + free),
          log("self-%d.log" % x, 2 * GiB, cap, free, alloc, unalloc, [(4242, x)]), kind, ev)
# Two processes listed: the arithmetic does not apply (which one is this?)
check("two processes listed: the arithmetic does not name one",
      log("self-two.log", 2 * GiB, cap, free, alloc, unalloc, [(4242, edge + 1), (4243, 50 * MiB)]),
      "other-process", {"other_processes_bytes": edge + 1 + 50 * MiB})
# A "this process" line: a Process N beside it is another one
check("a 'this process' line: Process N is another",
      log("self-this.log", 2 * GiB, cap, free, alloc, unalloc, [(4242, edge + 1)],
          this=reserved + 300 * MiB),
      "other-process", {"other_processes_bytes": edge + 1})
# The first rule is kept: reserved plus up to 1.5 GiB of context is this
# process, one byte more is another's (far from the arithmetic's edge).
cap2, free2 = 40 * GiB, 100 * MiB
for x, kind in ((reserved + 3 * GiB // 2, "capacity"), (reserved + 3 * GiB // 2 + 1, "other-process")):
    check("context rule: X - reserved = 1.5 GiB %s" % ("" if kind == "capacity" else "+ 1 byte"),
          log("ctx-%d.log" % x, 2 * GiB, cap2, free2, alloc, unalloc, [(4242, x)]), kind)

# ---- 1b. one nvidia-smi process row, beside a trace's OOM ---------------
# In use is nvidia-smi's reading (the trace gives no free figure); the
# row's and the reading's MiB are whole, so the edge is a MiB.
T0 = calendar.timegm((2026, 11, 30, 9, 15, 0)) * 10**9
def trace(path, base_ns, req, alloc, reserved, capacity, name="NVIDIA A100-SXM4-80GB"):
    ev, t = [], 1000
    for i in range(1, 9):
        t += 10
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                   "pid": 1, "tid": 1, "ts": t,
                   "args": {"Total Reserved": reserved, "Total Allocated": alloc * i // 8,
                            "Bytes": alloc // 8, "Addr": (1 << 40) + i * GiB, "Device Id": 0,
                            "Device Type": 1}})
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[OutOfMemory]",
               "pid": 1, "tid": 1, "ts": t + 10,
               "args": {"Device Type": 1, "Device Id": 0, "Bytes": req,
                        "Total Allocated": alloc, "Total Reserved": reserved}})
    with open(path, "w") as fh:
        json.dump({"schemaVersion": 1, "baseTimeNanoseconds": base_ns,
                   "deviceProperties": [{"id": 0, "name": name, "totalGlobalMem": capacity}],
                   "traceEvents": ev}, fh)
    return path

def gpustat(path, used_mib, proc_mib, total_mib=81920):
    with open(path, "w") as fh:
        for s in (0, 1, 2):
            fh.write("dgx-a100-03              Mon Nov 30 09:15:%02d 2026  535.104.05\n" % s)
            fh.write("[0] NVIDIA A100-SXM4-80GB | 40°C,  99 %% | %5d / %d MB | bob:python/12345(%dM)\n"
                     % (used_mib, total_mib, proc_mib))
    return path

R_MIB, USED_MIB = 10240, 40000
smi_edge = (USED_MIB * MiB + ROUNDING - R_MIB * MiB) // MiB  # largest X (MiB) that is another's
tr = trace("smi-trace.json", T0, 4 * GiB, R_MIB * MiB - GiB, R_MIB * MiB, 80 * GiB)
check("one nvidia-smi row at %d MiB: another process (medium)" % smi_edge,
      [tr, gpustat("smi-other.txt", USED_MIB, smi_edge)], "other-process",
      {"other_processes_bytes": smi_edge * MiB, "nvidia_smi_used_bytes": USED_MIB * MiB})
check("one nvidia-smi row at %d MiB: this process" % (smi_edge + 1),
      [tr, gpustat("smi-self.txt", USED_MIB, smi_edge + 1)], "capacity",
      {"this_process_bytes": (smi_edge + 1) * MiB, "other_processes_bytes": 0})

# ---- 2. a request under 5 % of the device is never oversized ------------
# 7.9 GiB device, 20 MiB free, 100 MiB reserved: the request is larger
# than free plus reserved (oversized's surest case), and what is in use
# outside this process (capacity - free - reserved, beyond a context)
# explains the shortfall.
cap = 8482560000  # divisible by 20: 5 % is a whole byte count
free, alloc, unalloc = 20 * MiB, 90 * MiB, 10 * MiB
five = cap // 20
check("request of 5 % - 1 byte, memory outside explains it: other-process",
      log("small-49.log", five - 1, cap, free, alloc, unalloc), "other-process")
check("request of exactly 5 %: oversized-request",
      log("small-50.log", five, cap, free, alloc, unalloc), "oversized-request")
req27 = cap * 27 // 1000
check("the real case: 2.7 % of a 7.9 GiB device, others hold 7.8 GiB: other-process",
      log("small-27.log", req27, cap, free, alloc, unalloc), "other-process")
# Unexplained: this process itself holds what is in use (its non-PyTorch
# memory), no other process: the device is full, capacity.
check("request under 5 %, nothing outside this process: capacity, not oversized",
      log("small-self.log", five - 1, cap, free, alloc, unalloc, this=cap - free), "capacity")

# ---- 3. readings matched to the job's GPU only when they can be it ------
REAL = os.path.join(srcdir, "tests/data/realdata/nvsmi/exporter-capture-h100-80gb.txt")
MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
stamps = []
with open(REAL, encoding="utf-8", errors="replace") as fh:
    for line in fh:
        m = re.match(r"(\d{4})/(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d)(?:\.\d+)?,", line)
        if m:
            stamps.append(calendar.timegm(tuple(int(x) for x in m.groups())) * 10**9)
        m = re.match(r"Timestamp\s+: \w{3} (\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{4})", line)
        if m:
            mo, dd, hh, mi, ss, yy = m.groups()
            stamps.append(calendar.timegm((int(yy), MONTHS.index(mo) + 1, int(dd), int(hh),
                                           int(mi), int(ss))) * 10**9)
first = min(stamps)
H100_TOTAL = 81559 * MiB  # the capture's memory.total

def snapshot(path, end_ns, used=8 * GiB, device_free=100 * MiB, request=GiB):
    """Segments of 1 GiB all in use, the last event an OOM at end_ns."""
    segs, tr = [], []
    t = end_ns // 1000 - 100
    for i in range(used // GiB):
        addr = (1 << 40) + i * 2 * GiB
        segs.append({"device": 0, "address": addr, "total_size": GiB, "allocated_size": GiB,
                     "active_size": GiB, "requested_size": GiB, "stream": 0,
                     "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
                     "frames": [], "blocks": [{"address": addr, "size": GiB, "requested_size": GiB,
                                               "state": "active_allocated", "frames": []}]})
        tr.append({"action": "segment_alloc", "addr": addr, "size": GiB, "stream": 0,
                   "time_us": t + 2 * i, "frames": []})
        tr.append({"action": "alloc", "addr": addr, "size": GiB, "stream": 0,
                   "time_us": t + 2 * i + 1, "frames": []})
    tr.append({"action": "oom", "size": request, "stream": 0, "device_free": device_free,
               "time_us": end_ns // 1000, "frames": []})
    with open(path, "wb") as fh:
        pickle.dump({"segments": segs, "device_traces": [tr], "allocator_settings": {}}, fh,
                    protocol=4)
    return path

def gpu_row(d):
    return d["gpus"][0] if d and d["gpus"] else {}

# 3a. at the job's time, its GPU: matched, and its total is the capacity
d, f = check("a capture at the job's time: matched",
             [snapshot("now.pickle", first + 60 * 10**9), REAL], "other-process",
             {"capacity_bytes": H100_TOTAL})
g = gpu_row(d)
result(g.get("device") == "cuda:0" and g.get("not_matched_reason") is None,
       "a capture at the job's time: gpus[] names the device", g)

# 3b. the real case: the capture is 268 days after the job (an OOM whose
# snapshot states no capacity): listed, not used
end = first - 268 * DAY_NS
d, f = check("a capture 268 days from the job: not the capacity, not other-process",
             [snapshot("old.pickle", end), REAL], "capacity",
             absent=("capacity_bytes", "nvidia_smi_used_bytes", "other_processes_bytes",
                     "outside_allocator_bytes"))
g = gpu_row(d)
days = (first - end + DAY_NS // 2) // DAY_NS
result(g.get("device") is None and g.get("device_db_id") is None and
       g.get("not_matched_device") == "cuda:0" and
       g.get("not_matched_reason") == "%d days from the job" % days and g.get("smi_samples", 0) > 0,
       "a capture %d days from the job: listed in gpus[], not matched, and why" % days, g)
devs = d["devices"] if d else []
result(len(devs) == 1 and not devs[0].get("smi_samples") and devs[0].get("capacity_bytes") is None,
       "a capture 268 days from the job: not the device's readings nor its capacity", devs)
rc = subprocess.run([vr, "old.pickle", REAL, "-f", "md", "-q"], capture_output=True)
md = rc.stdout.decode("utf-8", "replace")
result("not matched: %d days from the job (not cuda:0)" % days in md,
       "the Markdown nvidia-smi section says why the readings are not the job's",
       md[md.find("## nvidia-smi"):][:1200])
# at the margin's edge: readings 10 minutes after the job's end (its OOM)
# are the job's, a microsecond (the snapshot's unit) more are not
for extra_us, matched in ((0, True), (1, False)):
    d, _ = report(snapshot("gap%d.pickle" % extra_us, first - 600 * 10**9 - extra_us * 1000), REAL)
    g = gpu_row(d)
    want = "cuda:0" if matched else None
    result(g.get("device") == want and
           (matched or g.get("not_matched_reason") == "10 minutes from the job"),
           "readings 10 minutes %s after the job: %s" % ("and 1 us" if extra_us else "",
                                                        "matched" if matched else "not"), g)

# 3c. another GPU model at the job's time: a trace of a 24 GiB GPU. The
# capture changes nothing: the finding is the trace's alone.
t4090 = trace("4090.json", first, 2 * GiB, 20 * GiB, 22 * GiB, 24 * GiB, "NVIDIA GeForce RTX 4090")
alone, _ = report(t4090)
d, _ = report(t4090, REAL)
fa, fb = oom_finding(alone), oom_finding(d)
result(fa is not None and fb is not None and (fa["kind"], fa["evidence"]) == (fb["kind"], fb["evidence"])
       and fb["evidence"]["capacity_bytes"]["value"] == 24 * GiB,
       "a capture of another GPU model at the job's time: the finding is the trace's alone",
       (fa and fa["evidence"], fb and fb["evidence"]))
g = gpu_row(d)
result(g.get("device") is None and g.get("not_matched_reason") == "another GPU model" and
       g.get("not_matched_device") == "cuda:0",
       "another GPU model: listed in gpus[], not matched, and why", g)
# a snapshot (no capacity) holding more than the GPU has: another model
d, _ = report(snapshot("big.pickle", first + 60 * 10**9, used=82 * GiB), REAL)
g = gpu_row(d)
result(g.get("not_matched_reason") == "another GPU model",
       "a job that held 82 GiB is not on an 81,559 MiB GPU", g)
