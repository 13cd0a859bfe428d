# tests/diagnose.sh runs this.
import json, os, pickle, re, subprocess, sys
from decimal import Decimal, ROUND_HALF_UP

vr, logs = sys.argv[1], sys.argv[2]
MiB, GiB = 1 << 20, 1 << 30

def result(ok, desc, detail=""):
    if ok:
        print("PASS\t" + desc)
    else:
        print("FAIL\t" + desc + ("\t" + str(detail).replace("\t", " ").replace("\n", " | ")[:1500] if detail else ""))

def run(*args):
    p = subprocess.run([vr] + list(args) + ["-q"], capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

def report(*inputs, extra=()):
    rc, out, err = run(*inputs, "-f", "json", *extra)
    if rc not in (0, 3):
        return None, "exit %d: %s" % (rc, err)
    return json.loads(out), err

KEYS = {"kind", "secondary", "severity", "confidence", "device", "device_db_id", "rank", "ts_ns",
        "evidence", "advice", "title", "detail"}

# ---- the message's numbers, read by this test's own patterns --------------
UNITS = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
SIZE = r"(\d+(?:\.\d+)? (?:bytes|KiB|MiB|GiB))"

def size(text):
    num, unit = text.split(" ")
    return int((Decimal(num) * UNITS[unit]).quantize(Decimal(1), rounding=ROUND_HALF_UP))

FIELDS = {
    "requested": [r"Tried to allocate " + SIZE],
    "capacity": [SIZE + r" total capacity", r"total capac(?:i)?ty of " + SIZE],
    "free": [r"of which " + SIZE + r" is free", SIZE + r" free"],
    "allocated": [SIZE + r" already allocated", r"Of the allocated memory " + SIZE],
    "reserved": [SIZE + r" reserved in total by PyTorch"],
    "cached": [SIZE + r" cached\)"],
    "unallocated": [SIZE + r" is reserved by PyTorch but unallocated"],
    "allowed": [SIZE + r" allowed"],
}

def figures(msg):
    f = {}
    for key, pats in FIELDS.items():
        f[key] = None
        for p in pats:
            m = re.search(p, msg)
            if m:
                f[key] = size(m.group(1))
                break
    # Before torch 1.5 "cached" was amount_cached - amount_allocated: the
    # cache's free part (CUDACachingAllocator.cpp of that time).
    if f["reserved"] is None and f["allocated"] is not None:
        extra = f["unallocated"] if f["unallocated"] is not None else f["cached"]
        if extra is not None:
            f["reserved"] = f["allocated"] + extra
    if f["allowed"] is not None:
        f["capacity"] = f["allowed"]
    f["procs"] = [(int(p), size(s)) for p, s in re.findall(r"Process (\d+) has " + SIZE + " memory in use", msg)]
    f["self"] = [size(s) for s in re.findall(r"this process has " + SIZE + " memory in use", msg)]
    return f

# ---- the rules (docs/diagnosis.md), this test's own reading ---------------
HIGH, MEDIUM, LOW = 3, 2, 1

def segment(r):
    if r <= MiB:
        return 2 * MiB
    if r < 10 * MiB:
        return 20 * MiB
    return (r + 2 * MiB - 1) // (2 * MiB) * (2 * MiB)

def other_bytes(f):
    """(bytes held by other processes, confidence) or None."""
    R = f["reserved"]
    procs = sorted(f["procs"], key=lambda p: -p[1])
    if f["self"] or procs:
        self_found = bool(f["self"])
        other = 0
        # a lone "Process N" is this process when, as another, it and the
        # reserved memory would exceed what is in use (capacity - free)
        # beyond four figures' rounding of 0.005 GiB
        lone = len(procs) == 1 and not f["self"] and f["allowed"] is None and \
            None not in (f["capacity"], f["free"])
        for pid, used in procs:
            if not self_found and R is not None and used - R >= -2 * MiB and (
                    used - R <= 1.5 * GiB or
                    (lone and used + R > f["capacity"] - f["free"] + 4 * (GiB // 200))):
                self_found = True
                continue
            other += used
        if not self_found and not procs:
            return None
        return other, HIGH
    if None not in (f["capacity"], f["free"], R):
        return f["capacity"] - f["free"] - R - GiB, LOW
    return None

def rules(f):
    """[(kind, confidence as primary, holds as secondary)] in the table's order."""
    R, A, Rsv, F, C = f["requested"], f["allocated"], f["reserved"], f["free"], f["capacity"]
    out = []
    inc = (A is not None and C is not None and A > C) or \
          (F is not None and R is not None and F >= segment(R) + 512 * MiB)
    out.append(("inconsistent", HIGH if inc else 0, inc))
    o = other_bytes(f)
    oth = 0
    if o and o[0] > 0 and R is not None and (F or 0) + o[0] >= segment(R):
        oth = o[1]
    out.append(("other-process", oth, oth > 0))
    frag_sec = R is not None and A is not None and Rsv is not None and Rsv - A >= R
    frag = 0
    if frag_sec:
        room = Rsv - A + (F or 0) - R
        if C is not None:
            frag = MEDIUM if room * 1000 // C >= 50 else 0
        else:
            frag = MEDIUM if room >= R else 0
    out.append(("fragmentation", frag, frag_sec))
    over = 0
    if R is not None and not (C is not None and R * 20 < C):  # under 5 %: never
        if F is not None and Rsv is not None and R > F + Rsv:
            over = HIGH
        elif C is not None and R * 1000 // C >= 250:
            over = MEDIUM
    out.append(("oversized-request", over, over > 0))
    return out

def expect(f):
    if all(f[k] is None for k in ("requested", "allocated", "reserved", "free")):
        return "insufficient-evidence", []
    table = rules(f)
    best, conf = "capacity", 0
    for kind, c, _ in table:
        if c > conf:
            best, conf = kind, c
    return best, sorted(k for k, _, sec in table if sec and k != best)

# ---- a realistic log around a message --------------------------------------
def wrap(msg, prefix="torch.cuda.OutOfMemoryError: "):
    msg = msg.strip()
    if not re.match(r"^[\w.]*(Error|OutOfMemory)", msg) and not msg.startswith("("):
        msg = prefix + msg
    return ("2024-03-13 10:41:02,118 - INFO - epoch 3 step 1200 loss 0.4127\n"
            "2024-03-13 10:41:05,907 - INFO - epoch 3 step 1201 loss 0.4119\n"
            "Traceback (most recent call last):\n"
            '  File "/work/train.py", line 212, in <module>\n'
            "    main()\n"
            '  File "/work/train.py", line 188, in train_step\n'
            "    loss = model(images).loss\n"
            '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1518, in _wrapped_call_impl\n'
            "    return self._call_impl(*args, **kwargs)\n"
            + msg + "\n")

def findings_of(d):
    return d["findings"] if d else []

def check_keys(name, fs):
    bad = [sorted(set(x) ^ KEYS) for x in fs if set(x) != KEYS]
    result(not bad, name + ": each finding has exactly the keys docs/json.md lists", bad)

def check_oom(name, text, want_kind=None, want_secondary=None, evidence=None, says=()):
    path = name + ".log"
    with open(path, "w") as fh:
        fh.write(text)
    d, err = report(path)
    if d is None:
        result(False, name + ": a report", err)
        return None
    fs = [x for x in d["findings"] if x["severity"] == "critical"]
    result(len(fs) == len(d["oom_events"]) == 1, name + ": one OOM, one finding",
           [x["kind"] for x in fs])
    if not fs:
        return None
    got = fs[0]
    check_keys(name, d["findings"])
    result(got["kind"] == want_kind, "%s: primary cause %s" % (name, want_kind),
           "got %s: %s" % (got["kind"], got["detail"]))
    if want_secondary is not None:
        result(sorted(got["secondary"]) == want_secondary,
               "%s: secondary causes %s" % (name, want_secondary), got["secondary"])
    for key, value in (evidence or {}).items():
        ev = got["evidence"].get(key)
        result(ev is not None and ev["value"] == value,
               "%s: evidence %s = %d" % (name, key, value), ev)
    for s in says:
        result(s in got["detail"], "%s: the detail says %r" % (name, s), got["detail"])
    bad = [a for a in got["advice"] if not {"id", "title", "saving_bytes", "would_fit",
                                             "setting", "evidence"} <= set(a)]
    result(not bad, name + ": each advice has its keys (tests/advice.sh checks them)", bad)
    return got

# ---- 1. the real messages ----------------------------------------------------
for n in range(1, 16):
    with open(os.path.join(logs, "oom-%02d.log" % n)) as fh:
        msg = fh.read().strip().strip('"')
    if msg.startswith("..."):
        msg = "CUDA out of memory. " + msg[3:].strip()
    f = figures(msg)
    kind, sec = expect(f)
    ev = {}
    if f["requested"] is not None:
        ev["requested_bytes"] = f["requested"]
    if f["free"] is not None:
        ev["device_free_bytes"] = f["free"]
    if f["reserved"] is not None:
        ev["reserved_bytes"] = f["reserved"]
    says = [] if kind != "insufficient-evidence" else ["capture-help"]
    check_oom("real-%02d" % n, wrap(msg), kind, sec, ev, says)

# ---- 2. log scenarios, one per kind -----------------------------------------
CUR = ("CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of {cap} of "
       "which {free} is free. {procs}Of the allocated memory {alloc} is allocated by PyTorch, "
       "and {unalloc} is reserved by PyTorch but unallocated. If reserved but unallocated memory "
       "is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
       "fragmentation.  See documentation for Memory Management  "
       "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")

got = check_oom("other-process", wrap(CUR.format(
    req="2.00 GiB", cap="39.39 GiB", free="1.10 GiB",
    procs="Process 1234 has 29.00 GiB memory in use. Including non-PyTorch memory, this process has 9.25 GiB memory in use. ",
    alloc="8.00 GiB", unalloc="250.00 MiB")), "other-process",
    evidence={"other_processes_bytes": 29 * GiB, "other_pid": 1234}, says=["1234", "29.0 GiB"])
if got:
    result(got["confidence"] == "high", "other-process named by the message: high confidence",
           got["confidence"])

check_oom("container-self", wrap(CUR.format(
    req="2.00 GiB", cap="39.39 GiB", free="520.00 MiB",
    procs="Process 20398 has 38.85 GiB memory in use. ",
    alloc="37.80 GiB", unalloc="600.00 MiB")), "capacity",
    evidence={"this_process_bytes": size("38.85 GiB")})

check_oom("fragmentation-log", wrap(CUR.format(
    req="4.00 GiB", cap="79.15 GiB", free="1.25 GiB",
    procs="Including non-PyTorch memory, this process has 77.40 GiB memory in use. ",
    alloc="64.00 GiB", unalloc="12.50 GiB")), "fragmentation",
    evidence={"cache_free_bytes": size("12.50 GiB")}, says=["12.5 GiB"])

check_oom("oversized-log", wrap(CUR.format(
    req="12.00 GiB", cap="40.00 GiB", free="6.30 GiB",
    procs="Including non-PyTorch memory, this process has 33.50 GiB memory in use. ",
    alloc="32.00 GiB", unalloc="512.00 MiB")), "oversized-request", says=["30 %"])

check_oom("inconsistent-log", wrap(CUR.format(
    req="2.00 GiB", cap="40.00 GiB", free="20.00 GiB",
    procs="Including non-PyTorch memory, this process has 19.00 GiB memory in use. ",
    alloc="17.50 GiB", unalloc="500.00 MiB")), "inconsistent", says=["20.0 GiB"])

check_oom("inconsistent-over-capacity", wrap(
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 8.00 GiB total "
    "capacity; 17.20 GiB already allocated; 0 bytes free; 19.15 GiB reserved in total by PyTorch)"),
    "inconsistent", says=["17.2 GiB"])

got = check_oom("insufficient", "2024-03-13 10:41:02,118 - INFO - step 7\n"
    "Traceback (most recent call last):\n"
    '  File "/work/train.py", line 88, in <module>\n'
    "    out = model(x)\n"
    "RuntimeError: CUDA error: out of memory\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n",
    "insufficient-evidence", [], says=["capture-help"])
if got:
    result(got["evidence"] == {}, "insufficient-evidence: no numbers in its evidence",
           got["evidence"])

check_oom("capacity-log", wrap(CUR.format(
    req="20.00 MiB", cap="23.65 GiB", free="11.06 MiB",
    procs="Including non-PyTorch memory, this process has 23.60 GiB memory in use. ",
    alloc="23.30 GiB", unalloc="10.00 MiB")), "capacity", [])

# ---- 3. profiler traces -------------------------------------------------------
def trace(path, oom=None, events=(), rank=0, capacity=40 * GiB):
    ev = []
    t = 1000
    for alloc, reserved in events:
        t += 10
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                   "pid": 1, "tid": 1, "ts": t,
                   "args": {"Total Reserved": reserved, "Total Allocated": alloc,
                            "Bytes": 1 << 20, "Addr": 1 << 40 | t, "Device Id": 0,
                            "Device Type": 1}})
    if oom:
        req, alloc, reserved = oom
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[OutOfMemory]",
                   "pid": 1, "tid": 1, "ts": t + 10,
                   "args": {"Device Type": 1, "Device Id": 0, "Bytes": req,
                            "Total Allocated": alloc, "Total Reserved": reserved}})
    d = {"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
         "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB",
                               "totalGlobalMem": capacity}],
         "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
         "traceEvents": ev}
    with open(path, "w") as fh:
        json.dump(d, fh)
    return path

def one_finding(name, inputs, kind, severity="critical"):
    d, err = report(*inputs)
    fs = findings_of(d)
    got = [x for x in fs if x["kind"] == kind and x["severity"] == severity]
    result(len(got) == 1, "%s: a %s %s finding" % (name, severity, kind),
           err if d is None else [(x["kind"], x["severity"], x["detail"]) for x in fs])
    if d is not None:
        check_keys(name, fs)
    return got[0] if got else None

ramp = [(i * GiB, 21 * GiB) for i in range(1, 10)]
got = one_finding("fragmentation-trace",
                  [trace("frag.json", (4 * GiB, 20 * GiB, 30 * GiB), ramp)], "fragmentation")
if got:
    result(got["evidence"]["cache_free_bytes"] == {"value": 10 * GiB, "source": "derived"} and
           got["evidence"]["requested_bytes"] == {"value": 4 * GiB, "source": "trace"} and
           got["evidence"]["capacity_bytes"]["value"] == 40 * GiB,
           "fragmentation-trace: evidence from the trace and the device", got["evidence"])
    result(got["device"] == "cuda:0" and got["rank"] == 0 and
           got["ts_ns"] == 1700000000000000000 + 1100 * 1000,
           "fragmentation-trace: device, rank and time of the OOM",
           (got["device"], got["rank"], got["ts_ns"]))
one_finding("oversized-trace", [trace("over.json", (16 * GiB, 20 * GiB, 21 * GiB), ramp)],
            "oversized-request")
one_finding("capacity-trace", [trace("cap.json", (1 * GiB, 37 * GiB, 37.5 * GiB // 1), ramp)],
            "capacity")

# another process seen only by nvidia-smi, at the OOM's time (UTC)
with open("smi.csv", "w") as fh:
    fh.write("timestamp, index, pci.bus_id, memory.used [MiB], memory.total [MiB]\n")
    for s in ("19.5", "20.0", "20.5"):
        fh.write("2023/11/14 22:13:%s, 0, 00000000:18:00.0, 39000 MiB, 40960 MiB\n" % s)
got = one_finding("other-process-smi",
                  [trace("smi-trace.json", (4 * GiB, 10 * GiB, 11 * GiB), ramp), "smi.csv"],
                  "other-process")
if got:
    result(got["evidence"].get("nvidia_smi_used_bytes", {}).get("value") == 39000 * MiB and
           got["confidence"] == "low",
           "other-process-smi: nvidia-smi's used memory is the evidence (low confidence)",
           (got["evidence"], got["confidence"]))

# ---- 4. allocator snapshots: the replay's largest free block ---------------
def snapshot(path, free_per_segment, request, device_free=100 * MiB, segments=8):
    BASE, SEG = 1 << 40, GiB
    segs, tr, t = [], [], 1700000000000000
    for i in range(segments):
        addr = BASE + i * 2 * SEG
        used = SEG - free_per_segment
        blocks = [{"address": addr, "size": used, "requested_size": used,
                   "state": "active_allocated", "frames": []}]
        if free_per_segment:
            blocks.append({"address": addr + used, "size": free_per_segment,
                           "requested_size": 0, "state": "inactive", "frames": []})
        segs.append({"device": 0, "address": addr, "total_size": SEG, "allocated_size": used,
                     "active_size": used, "requested_size": used, "stream": 0,
                     "segment_type": "large", "segment_pool_id": (0, 0),
                     "is_expandable": False, "frames": [], "blocks": blocks})
        t += 1
        tr.append({"action": "segment_alloc", "addr": addr, "size": SEG, "stream": 0,
                   "time_us": t, "frames": []})
        t += 1
        tr.append({"action": "alloc", "addr": addr, "size": used, "stream": 0,
                   "time_us": t, "frames": []})
    tr.append({"action": "oom", "size": request, "stream": 0, "device_free": device_free,
               "time_us": t + 1, "frames": []})
    with open(path, "wb") as fh:
        pickle.dump({"segments": segs, "device_traces": [tr],
                     "allocator_settings": {}}, fh, protocol=4)
    return path

got = one_finding("fragmentation-snapshot",
                  [snapshot("frag.pickle", 256 * MiB, GiB)], "fragmentation")
if got:
    ev = got["evidence"]
    result(ev.get("largest_free_block_bytes", {}).get("value") == 256 * MiB and
           ev.get("cache_free_bytes", {}).get("value") == 8 * 256 * MiB,
           "fragmentation-snapshot: the replay's largest free block (256 MiB) and free cache (2 GiB)",
           ev)
    result("256 MiB" in got["detail"], "fragmentation-snapshot: the detail cites the largest block",
           got["detail"])
d, err = report(snapshot("full.pickle", 0, GiB))
kinds = [x["kind"] for x in findings_of(d)]
result(kinds == ["capacity"], "a snapshot with a full cache: capacity, not fragmentation", kinds)
# free cache in one block big enough: the OOM is not fragmentation's either
d, err = report(snapshot("onebig.pickle", 512 * MiB, 256 * MiB, device_free=0, segments=1))
fs = findings_of(d)
result(len(fs) == 1 and "fragmentation" not in [fs[0]["kind"]] + fs[0]["secondary"],
       "a snapshot whose largest free block fits the request: no fragmentation",
       [(x["kind"], x["secondary"]) for x in fs])

# ---- 5. peaks without an OOM --------------------------------------------------
near = [(i * GiB, (i + 1) * GiB) for i in range(30, 38)]
got = one_finding("near-capacity", [trace("near.json", None, near)], "near-capacity", "warning")
if got:
    result(got["evidence"]["peak_reserved_bytes"]["value"] == 38 * GiB and
           "95 %" in got["title"], "near-capacity: 38 GiB of 40 GiB is 95 %",
           (got["title"], got["evidence"]))
d, err = report(trace("low.json", None, [(i * GiB, (i + 1) * GiB) for i in range(1, 30)]))
result(d is not None and findings_of(d) == [], "a peak at 75 % of the device: no finding",
       findings_of(d))

r0 = trace("rank0.json", None, [(i * GiB, (i + 1) * GiB) for i in range(1, 11)], rank=0)
r1 = trace("rank1.json", None, [(i * GiB, (i + 1) * GiB) for i in range(1, 21)], rank=1)
got = one_finding("rank-imbalance", [r0, r1], "rank-imbalance", "warning")
if got:
    result("Rank 1" in got["title"] and "rank 0" in got["title"] and got["rank"] == 1,
           "rank-imbalance: names the ranks (20 GiB on rank 1 against 10 GiB on rank 0)",
           got["title"])
# a rank that allocated nothing: no "0 %" (the gap over a peak of 0)
r0z = trace("rank0z.json", None, [(0, GiB)], rank=0)
got = one_finding("rank-imbalance", [r0z, r1], "rank-imbalance", "warning")
if got:
    result(got["title"] == "Rank 1 peaked at 20.0 GiB, rank 0 allocated nothing",
           "rank-imbalance against a rank of no allocation: said so, no percentage", got["title"])
r1b = trace("rank1b.json", None, [(i * GiB, (i + 1) * GiB) for i in range(1, 12)], rank=1)
d, err = report(r0, r1b)
result(d is not None and findings_of(d) == [], "ranks within 20 %: no finding", findings_of(d))


# ---- 5b. a leak: every step keeps 1 GiB (aten::cat), a temporary is freed --
def leak_trace(path, steps=5, oom=False, capacity=40 * GiB):
    ev, state = [], {"alloc": 8 * GiB, "reserved": 12 * GiB}
    def mem(ts, nbytes, addr):
        state["alloc"] += nbytes
        state["reserved"] = max(state["reserved"], state["alloc"] + GiB)
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                   "pid": 1, "tid": 1, "ts": ts,
                   "args": {"Total Reserved": state["reserved"], "Total Allocated": state["alloc"],
                            "Bytes": nbytes, "Addr": addr, "Device Id": 0, "Device Type": 1}})
    for s in range(1, steps + 1):
        t0 = s * 1000
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s,
                   "pid": 1, "tid": 1, "ts": t0, "dur": 1000, "args": {}})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
                   "ts": t0 + 100, "dur": 300, "args": {}})
        mem(t0 + 150, 2 * GiB, 1 << 41)
        mem(t0 + 350, -2 * GiB, 1 << 41)
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::cat", "pid": 1, "tid": 1,
                   "ts": t0 + 500, "dur": 300, "args": {}})
        mem(t0 + 550, GiB, (1 << 40) + s * GiB)
    if oom:
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[OutOfMemory]",
                   "pid": 1, "tid": 1, "ts": (steps + 1) * 1000 - 10,
                   "args": {"Device Type": 1, "Device Id": 0, "Bytes": 2 * GiB,
                            "Total Allocated": state["alloc"],
                            "Total Reserved": state["reserved"]}})
    with open(path, "w") as fh:
        json.dump({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
                   "deviceProperties": [{"id": 0, "name": "A100", "totalGlobalMem": capacity}],
                   "traceEvents": ev}, fh)
    return path

got = one_finding("leak", [leak_trace("leak.json")], "leak", "warning")
if got:
    result(got["evidence"]["leak_per_step_bytes"]["value"] == GiB and
           got["evidence"]["leak_steps"]["value"] == 4,
           "leak: 1 GiB a step over 4 steps", got["evidence"])
    # Step ends hold 8 GiB + s GiB (one aten::cat kept a step); the first
    # growing step ends at 9 GiB, the last at 13 GiB.
    ev = got["evidence"]
    result(ev.get("first_end_allocated_bytes") == {"value": 9 * GiB, "source": "timeline"} and
           ev.get("last_end_allocated_bytes") == {"value": 13 * GiB, "source": "timeline"} and
           ev["leak_per_step_bytes"]["source"] == "timeline" and
           got["title"].endswith(": allocated memory grows 1.00 GiB a step"),
           "leak: step-end figures from the timeline, 9 to 13 GiB, and the title", [ev, got["title"]])
    result("aten::cat (4 allocations, 4.00 GiB)" in got["detail"] and "aten::mm" not in got["detail"],
           "leak: names the site never freed (aten::cat), not the freed temporary", got["detail"])
got = one_finding("leak-oom", [leak_trace("leak-oom.json", oom=True, capacity=16 * GiB)], "leak")
if got:
    result(got["evidence"]["leak_per_step_bytes"]["value"] == GiB and
           got["secondary"] == ["fragmentation"],
           "leak-oom: the OOM's cause is the leak; 2 GiB of scattered cache is secondary",
           (got["evidence"], got["secondary"]))
d, err = report(leak_trace("short.json", steps=3))
result(d is not None and [x["kind"] for x in findings_of(d)] == [],
       "two growing steps are not a leak", findings_of(d))

# ---- 5c. one OOM told by two sources: the trace's [OutOfMemory] on cuda:1
# at 2023-11-14 22:13:20.0016 UTC and the log's message at 00:13:20,001 in
# a zone two hours ahead: one finding with the figures of both ------------
TINY = os.path.join(os.environ["VR_SRCDIR"], "tests/cli/data/tiny.pt.trace.json")
with open("twin.log", "w") as fh:
    fh.write("2023-11-15 00:13:19,412 - INFO - step 41 loss 2.31\n"
             "2023-11-15 00:13:20,001 - ERROR - Traceback (most recent call last):\n"
             '  File "train.py", line 88, in <module>\n'
             "    loss = model(batch).sum()\n"
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 GiB. GPU 1 has "
             "a total capacity of 40.00 GiB of which 1.50 GiB is free. Including non-PyTorch "
             "memory, this process has 20.60 GiB memory in use. Of the allocated memory 18.00 GiB "
             "is allocated by PyTorch, and 2.00 GiB is reserved by PyTorch but unallocated.\n")
d, err = report(TINY, "twin.log", extra=("--tz", "+02:00"))
fs = [x for x in findings_of(d) if x["severity"] == "critical"]
result(len(d["oom_events"]) == 1 and d["oom_event_count"] == 1 and len(fs) == 1 and
       d["verdict"]["oom_count"] == 1,
       "one OOM in a trace and a log: one finding, one OOM listed and counted",
       ([(x["kind"], x["ts_ns"]) for x in fs], d["oom_event_count"], d["verdict"]))
told = [(os.path.basename(t["source"]), t["line"]) for t in d["oom_events"][0]["told_by"]] \
    if d["oom_events"] else []
result(told == [("tiny.pt.trace.json", None), ("twin.log", 5)],
       "the one OOM says both sources told it: the trace and the log's line 5", told)
if fs:
    ev = fs[0]["evidence"]
    result(ev["requested_bytes"]["source"] == "trace" and ev["device_free_bytes"] ==
           {"value": 3 * GiB // 2, "source": "log"} and fs[0]["device"] == "cuda:1" and
           fs[0]["rank"] == 0,
           "the finding has the trace's request and device and the log's free memory", ev)
d, err = report(TINY, "twin.log")
fs = [x for x in findings_of(d) if x["severity"] == "critical"]
result(len(fs) == 2, "the same log read as UTC is two hours away: two OOMs, two findings",
       [(x["kind"], x["ts_ns"]) for x in fs])

# ---- 6. order and --fail-on ---------------------------------------------------
d, err = report("capacity-log.log", "near.json")
sev = [x["severity"] for x in findings_of(d)]
result(sev == ["critical", "warning"], "findings ordered by severity, the OOM first", sev)

for args, want, desc in (
        (["--fail-on", "capacity"], 3, "--fail-on capacity with a capacity OOM: exit 3"),
        (["--fail-on", "leak,fragmentation"], 0, "--fail-on other kinds: exit 0"),
        (["--fail-on", "near-capacity,capacity"], 3, "--fail-on a list with the kind: exit 3"),
        (["--fail-on", "any"], 3, "--fail-on any: exit 3"),
        (["--fail-on", "bogus"], 2, "--fail-on an unknown kind: a usage error (2)")):
    rc, out, err = run("capacity-log.log", "-f", "json", *args)
    result(rc == want, desc, "exit %d: %s" % (rc, err))
rc, out, err = run("--fail-on", "fragmentaton", "capacity-log.log")
result("fragmentation" in err and "insufficient-evidence" in err,
       "--fail-on's usage error lists the kinds", err)
rc, out, err = run("low.json", "-f", "json", "--fail-on", "any")
result(rc == 0, "--fail-on any without findings: exit 0", "exit %d" % rc)
rc, _, err = run("import", "capacity-log.log", "--db", "gate.db")
rc2, _, err2 = run("report", "--db", "gate.db", "-f", "json", "--fail-on", "capacity")
result(rc == 0 and rc2 == 3, "report --db --fail-on: exit 3", (rc, err, rc2, err2))
rc, out, err = run("capacity-log.log", "-f", "md")
result("## Findings" in out and "capacity" in out, "the Markdown report lists the finding",
       out[-600:])
