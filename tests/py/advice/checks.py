# tests/advice.sh runs this.
import json, math, pickle, subprocess, sys

vr, gen = sys.argv[1], sys.argv[2]
MiB, GiB = 1 << 20, 1 << 30
REMEDIES = ["activation-checkpointing", "mixed-precision", "micro-batch-accumulation",
            "zero-fsdp-sharding", "cpu-offload", "8bit-optimizer", "memory-efficient-attention",
            "expandable-segments", "max-split-size", "garbage-collection-threshold",
            "del-references", "detach-logged-loss", "no-grad-inference", "free-other-processes",
            "memory-limits", "split-oversized-request", "vllm-gpu-memory-utilization",
            "vllm-max-num-seqs", "sglang-mem-fraction-static"]
seen = {r: {"given": 0, "withheld": 0} for r in REMEDIES}

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
        return None
    return json.loads(out)

ADVICE_KEYS = {"id", "title", "saving_bytes", "would_fit", "setting", "evidence", "figures",
               "source"}

def check(name, inputs, kind, want, absent):
    """The finding of `kind` has each advice of `want` {id: (saving,
    would_fit)} and none of `absent`; ranked by saving."""
    d = report(*inputs)
    fs = [f for f in (d or {}).get("findings", []) if f["kind"] == kind]
    result(len(fs) == 1, "%s: one %s finding" % (name, kind),
           [(f["kind"], f["detail"]) for f in (d or {}).get("findings", [])])
    if not fs:
        return None
    got = {a["id"]: a for a in fs[0]["advice"]}
    for rid, (saving, fit) in want.items():
        a = got.get(rid)
        ok = a is not None and a["saving_bytes"] == saving and a["would_fit"] is fit
        result(ok, "%s: %s saves %d bytes, would_fit %s" % (name, rid, saving, fit),
               (a["saving_bytes"], a["would_fit"], a["evidence"]) if a else sorted(got))
        if ok:
            seen[rid]["given"] += 1
    for rid in absent:
        result(rid not in got, "%s: no %s" % (name, rid), got.get(rid))
        if rid not in got:
            seen[rid]["withheld"] += 1
    # by saving, a saving on an inferred figure (figures.inferred) after
    # those measured
    keys = [(a["figures"].get("inferred") == 1, -a["saving_bytes"]) for a in fs[0]["advice"]]
    result(keys == sorted(keys) and all(-k[1] > 0 for k in keys),
           name + ": ranked by saving (inferred last), each a saving", keys)
    bad = [a for a in fs[0]["advice"] if set(a) != ADVICE_KEYS or not a["setting"]
           or not a["source"].startswith("https://")]
    result(not bad, name + ": each advice has the contract's keys, a setting and a source", bad)
    return d

# ---- the trace generator's scenarios, and the truth at their peak -----------
def scenario(name, near=None, oom=None, world_size=None):
    """A generated training/inference trace; near: capacity so the peak is
    95 % of it (a near-capacity finding); oom: an [OutOfMemory] of that
    many bytes after the last event, on a device 10 MiB above the peak."""
    trace, truth_path = name + ".json", name + ".truth.json"
    subprocess.run([sys.executable, gen, name, trace, truth_path], check=True)
    d = json.load(open(trace))
    truth = json.load(open(truth_path))
    mem = [e for e in d["traceEvents"] if e.get("name") == "[memory]"]
    peak_reserved = max(e["args"]["Total Reserved"] for e in mem)
    facts = {"peak_reserved": peak_reserved}
    if near:
        facts["capacity"] = d["deviceProperties"][0]["totalGlobalMem"] = peak_reserved * 100 // 95
    if oom:
        last = max(mem, key=lambda e: e["ts"])
        facts["capacity"] = d["deviceProperties"][0]["totalGlobalMem"] = peak_reserved + 10 * MiB
        facts["requested"] = oom
        facts["oom_allocated"] = last["args"]["Total Allocated"]
        facts["oom_reserved"] = last["args"]["Total Reserved"]
        d["traceEvents"].append({"ph": "i", "cat": "cpu_instant_event", "s": "t",
                                 "name": "[OutOfMemory]", "pid": last["pid"], "tid": last["tid"],
                                 "ts": last["ts"] + 5,
                                 "args": {"Device Type": 1, "Device Id": 0, "Bytes": oom,
                                          "Total Allocated": facts["oom_allocated"],
                                          "Total Reserved": facts["oom_reserved"]}})
    if world_size:
        d["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": world_size}
    out = "%s-%s.json" % (name, "near" if near else "oom" if oom else "ws")
    json.dump(d, open(out, "w"))
    # The truth at the peak (the first event with the highest total).
    tl = truth["timeline"]
    peak_seq = max(range(len(tl)), key=lambda i: (tl[i][2], -i)) + 1
    cat, modules = {}, set()
    for a in truth["allocations"]:
        if a["alloc_seq"] <= peak_seq and (a["free_seq"] is None or a["free_seq"] > peak_seq):
            cat[a["category"]] = cat.get(a["category"], 0) + a["bytes"]
            if a["category"] == "activation" and a.get("module"):
                modules.add(a["module"])
    facts.update(peak=tl[peak_seq - 1][2], layers=len(modules),
                 kinds={p for _, p in truth["phases"]},
                 never_freed_act=sum(a["bytes"] for a in truth["allocations"]
                                     if a["category"] == "activation" and a["free_seq"] is None))
    for c in ("parameter", "optimizer_state", "gradient", "activation", "temporary", "input"):
        facts[c] = cat.get(c, 0)
    # What was reserved but not allocated at the peak: the generator keeps
    # 64 MiB of cache above the total at every event.
    facts["cache_at_peak"] = 64 * MiB
    # Allocated at each step's end, for the leak.
    ends = {}
    for step, _, total in tl:
        if step is not None:
            ends[step] = total
    facts["step_ends"] = [ends[s] for s in sorted(ends)]
    return out, facts

def fit(saving, f):
    """would_fit: the saving covers the request less what was free (the
    trace's OOM gives no free figure: none)."""
    return saving >= f["requested"] if "requested" in f else None

def leak_bytes(ends):
    """The last run of steps each ending >= 1 MiB above the one before
    (docs/diagnosis.md), as growth a step times the steps."""
    run = 0
    for i in range(1, len(ends)):
        run = run + 1 if ends[i] - ends[i - 1] >= MiB else 0
    first, last = ends[len(ends) - 1 - run], ends[-1]
    return (last - first) // run * run if run >= 3 else 0

# The remedies' savings, from the issue's formulas (docs/remedies.md).
def s_checkpointing(f):
    return int(f["activation"] * (1.0 - 1.0 / math.sqrt(f["layers"])))
def s_mixed(f):
    return (f["activation"] + f["temporary"]) // 2 - f["parameter"] // 2
def s_micro(f):
    return (f["activation"] + f["temporary"] + f["input"]) // 2
def model_states(f):
    return f["parameter"] + f["gradient"] + f["optimizer_state"]
def s_offload(f):
    return f["optimizer_state"] + f["gradient"]
def s_8bit(f):
    return f["optimizer_state"] * 3 // 4
def s_gc(f):
    return f["peak_reserved"] - max(f["peak"], f["capacity"] * 8 // 10)

# ---- 1. demand remedies on traces ---------------------------------------------
trace, f = scenario("training", near=True)
check("training near capacity", [trace], "near-capacity",
      {"8bit-optimizer": (s_8bit(f), None), "cpu-offload": (s_offload(f), None),
       "expandable-segments": (f["cache_at_peak"], None),
       "garbage-collection-threshold": (s_gc(f), None)},
      # activations are not the largest part; optimizer state and weights
      # outweigh activations and temporaries; one rank; a backward pass
      ["activation-checkpointing", "mixed-precision", "zero-fsdp-sharding",
       "no-grad-inference", "del-references", "detach-logged-loss", "max-split-size",
       "memory-efficient-attention", "free-other-processes", "micro-batch-accumulation"])

trace, f = scenario("wide-modules", near=True)
result(f["layers"] == 3, "wide-modules: three layers' activations live at the peak", f["layers"])
check("long sequences in modules", [trace], "near-capacity",
      {"activation-checkpointing": (s_checkpointing(f), None),
       "mixed-precision": (s_mixed(f), None),
       "micro-batch-accumulation": (s_micro(f), None)},
      ["cpu-offload", "zero-fsdp-sharding"])

trace, f = scenario("accumulation", oom=2 * GiB, world_size=4)
check("four ranks, an OOM", [trace], "oversized-request" if 2 * GiB * 4 >= f["capacity"] else "capacity",
      {"zero-fsdp-sharding": (model_states(f) * 3 // 4, fit(model_states(f) * 3 // 4, f)),
       "8bit-optimizer": (s_8bit(f), fit(s_8bit(f), f))},
      ["garbage-collection-threshold"])  # an OOM, not a peak: the cache was already released

trace, f = scenario("training", oom=64 * MiB)
check("an OOM a small saving covers", [trace],
      "oversized-request" if 64 * MiB * 4 >= f["capacity"] else "capacity",
      {"8bit-optimizer": (s_8bit(f), fit(s_8bit(f), f)),
       "cpu-offload": (s_offload(f), fit(s_offload(f), f))},
      ["zero-fsdp-sharding"])
result(fit(s_8bit(f), f) is True, "the 64 MiB request: 8-bit Adam's saving covers it")

trace, f = scenario("inference-grad", near=True)
check("eval without no_grad", [trace], "near-capacity",
      {"no-grad-inference": (f["activation"], None)},
      ["8bit-optimizer", "cpu-offload", "micro-batch-accumulation"])
trace, f = scenario("inference", near=True)
check("eval under no_grad", [trace], "near-capacity", {},
      ["no-grad-inference", "activation-checkpointing", "8bit-optimizer"])

# ---- 2. a graph kept from step to step ----------------------------------------
trace, f = scenario("leaky", near=True)
lb = leak_bytes(f["step_ends"])
result(lb > 0 and f["never_freed_act"] > 0, "leaky: a leak of activations", (lb, f["step_ends"]))
check("leaky", [trace], "leak",
      {"del-references": (lb, None), "detach-logged-loss": (lb, None)},
      ["8bit-optimizer", "expandable-segments", "garbage-collection-threshold"])

# a leak of tensors the optimizer keeps, not activations: no detach advice
def leak_trace(path, steps=5):
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
        # kept by the optimizer's step (a history of state): not a graph
        ev.append({"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#Adam.step",
                   "pid": 1, "tid": 1, "ts": t0 + 400, "dur": 500, "args": {}})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::cat", "pid": 1, "tid": 1,
                   "ts": t0 + 500, "dur": 300, "args": {}})
        mem(t0 + 550, GiB, (1 << 40) + s * GiB)
    with open(path, "w") as fh:
        json.dump({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
                   "deviceProperties": [{"id": 0, "name": "A100", "totalGlobalMem": 40 * GiB}],
                   "traceEvents": ev}, fh)
    return path
check("a leak of buffers", [leak_trace("cat-leak.json")], "leak",
      {"del-references": (4 * GiB, None)}, ["detach-logged-loss"])
d = report(leak_trace("short.json", steps=3))
result(d is not None and d["findings"] == [] and d["advice"] == [],
       "two growing steps: no finding, no advice", d and d["advice"])

# ---- 3. attention's score matrices ----------------------------------------------
def attention_trace(path, op):
    """1 GiB of weights, then an op whose 2 GiB temporary is the peak, then
    an OOM asking for 4 GiB on an 8 GiB device."""
    ev, total = [], [0]
    def mem(ts, nbytes, addr):
        total[0] += nbytes
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                   "pid": 1, "tid": 1, "ts": ts,
                   "args": {"Total Reserved": 3 * GiB, "Total Allocated": total[0],
                            "Bytes": nbytes, "Addr": addr, "Device Id": 0, "Device Type": 1}})
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1,
               "ts": 10, "dur": 10, "args": {}})
    mem(15, GiB, 1 << 40)
    ev.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1,
               "ts": 100, "dur": 100, "args": {}})
    mem(110, 2 * GiB, 1 << 41)
    mem(190, -2 * GiB, 1 << 41)
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[OutOfMemory]",
               "pid": 1, "tid": 1, "ts": 300,
               "args": {"Device Type": 1, "Device Id": 0, "Bytes": 4 * GiB,
                        "Total Allocated": GiB, "Total Reserved": 3 * GiB}})
    with open(path, "w") as fh:
        json.dump({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
                   "deviceProperties": [{"id": 0, "name": "A100", "totalGlobalMem": 8 * GiB}],
                   "traceEvents": ev}, fh)
    return path
# the 2 GiB softmax temporary is live at the 3 GiB peak; 2 GiB < 4 GiB asked
check("unfused attention", [attention_trace("softmax.json", "aten::_softmax")],
      "oversized-request", {"memory-efficient-attention": (2 * GiB, False)}, [])
check("fused attention", [attention_trace("sdpa.json", "aten::_scaled_dot_product_flash_attention")],
      "oversized-request", {}, ["memory-efficient-attention"])

# ---- 4. the cache and other processes: OOM messages ----------------------------
CUR = ("CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of {cap} of "
       "which {free} is free. {procs}Of the allocated memory {alloc} is allocated by PyTorch, "
       "and {unalloc} is reserved by PyTorch but unallocated. If reserved but unallocated memory "
       "is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
       "fragmentation.")
def log(name, **kw):
    with open(name + ".log", "w") as fh:
        fh.write("2024-03-13 10:41:05,907 - INFO - step 1201\n"
                 "Traceback (most recent call last):\n"
                 '  File "/work/train.py", line 188, in train_step\n'
                 "torch.OutOfMemoryError: " + CUR.format(**kw) + "\n")
    return name + ".log"

# 12.5 GiB reserved but unallocated; 4 GiB asked with 1.25 GiB free
check("fragmentation", [log("frag", req="4.00 GiB", cap="79.15 GiB", free="1.25 GiB",
                            procs="", alloc="64.00 GiB", unalloc="12.50 GiB")],
      "fragmentation", {"expandable-segments": (int(12.5 * GiB), True)},
      ["max-split-size", "free-other-processes", "garbage-collection-threshold"])
# another process holds 29 GiB: 2 GiB asked with 1.10 GiB free
check("another process", [log("other", req="2.00 GiB", cap="39.39 GiB", free="1.10 GiB",
      procs="Process 1234 has 29.00 GiB memory in use. Including non-PyTorch memory, this "
            "process has 9.25 GiB memory in use. ", alloc="8.00 GiB", unalloc="250.00 MiB")],
      "other-process", {"free-other-processes": (29 * GiB, True)}, ["expandable-segments"])
# oom-04's shape: 1.88 GiB free in the cache, and 3.42 GiB of the device in
# use beyond PyTorch's reserved that no process list explains: freeing
# "other processes" would save 2.42 GiB (less a 1 GiB context) on an
# inferred figure, so the measured cache's remedy ranks first, in the
# finding and across findings, and in the banner's top advice.
d = check("fragmentation beside unexplained memory",
          [log("frag-other", req="246.00 MiB", cap="31.75 GiB", free="460.00 MiB", procs="",
               alloc="26.00 GiB", unalloc="1.88 GiB")],
          "fragmentation", {"expandable-segments": (round(1.88 * GiB), True)}, [])
adv = (d or {}).get("advice", [])
result([a["id"] for a in adv][:2] == ["expandable-segments", "free-other-processes"] and
       adv[1]["figures"].get("inferred") == 1 and adv[1]["saving_bytes"] > adv[0]["saving_bytes"],
       "fragmentation beside unexplained memory: the measured remedy first, the larger inferred one second",
       [(a["id"], a["saving_bytes"], a["figures"].get("inferred")) for a in adv])
check("capacity", [log("cap", req="20.00 MiB", cap="23.65 GiB", free="11.06 MiB",
      procs="Including non-PyTorch memory, this process has 23.60 GiB memory in use. ",
      alloc="23.30 GiB", unalloc="10.00 MiB")], "capacity", {},
      ["expandable-segments", "free-other-processes", "max-split-size", "del-references"])

# ---- 5. an allocator snapshot: the largest free block ---------------------------
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
        pickle.dump({"segments": segs, "device_traces": [tr], "allocator_settings": {}}, fh,
                    protocol=4)
    return path

# eight 256 MiB free blocks, 1 GiB asked with 100 MiB free
d = check("split blocks", [snapshot("frag.pickle", 256 * MiB, GiB)], "fragmentation",
          {"max-split-size": (8 * 256 * MiB - 256 * MiB, True),
           "expandable-segments": (8 * 256 * MiB, True)}, [])
if d:
    a = [x for x in d["findings"][0]["advice"] if x["id"] == "max-split-size"][0]
    result("max_split_size_mb:1024" in a["setting"],
           "max-split-size: the setting keeps blocks of the request's 1024 MiB whole", a["setting"])
check("one free block big enough", [snapshot("onebig.pickle", 512 * MiB, 256 * MiB,
                                             device_free=0, segments=1)],
      "capacity", {}, ["max-split-size", "expandable-segments"])


# ---- 5b. advice that fits the case ---------------------------------------------
import os, re
from vrtest import human_bytes
DATA = os.path.join(os.path.dirname(gen), "data")
def size_of(text):
    """A message's "1.50 GiB" as PyTorch meant it (1024-based), rounded."""
    n, unit = re.match(r"([\d.]+) (B|KiB|MiB|GiB|bytes)", text).groups()
    return round(float(n) * {"B": 1, "bytes": 1, "KiB": 1 << 10, "MiB": MiB, "GiB": GiB}[unit])
def current(msg):
    """The current message's figures, read here."""
    m = re.search(r"Tried to allocate ([\d.]+ \w+)\. GPU \d+ has a total capac\w* of ([\d.]+ \w+)"
                  r" of which ([\d.]+ \w+) is free", msg)
    return {"requested": size_of(m.group(1)), "capacity": size_of(m.group(2)),
            "free": size_of(m.group(3))}
def critical(inputs):
    d = report(*inputs)
    fs = [f for f in (d or {}).get("findings", []) if f["severity"] == "critical"]
    return fs[0]["kind"] if len(fs) == 1 else None

# An inference server's OOM while serving: the real start-up lines of vLLM
# V1 (tests/data/kv-cache) then an OOM of the cache's kind (2.60 GiB
# cached free, 1.50 GiB asked). Its preallocation is vLLM's share of the
# device: lower it by the points of the device the request lacked.
OOM_MSG = CUR.format(req="1.50 GiB", cap="23.55 GiB", free="310.00 MiB", procs="Including "
                     "non-PyTorch memory, this process has 23.22 GiB memory in use. ",
                     alloc="20.10 GiB", unalloc="2.60 GiB")
def server_log(name, startup):
    lines = open(os.path.join(DATA, "kv-cache", startup)).read()
    with open(name, "w") as fh:
        fh.write(lines + "Traceback (most recent call last):\n"
                 '  File "/srv/vllm/v1/worker/gpu_model_runner.py", line 2000, in execute_model\n'
                 "torch.OutOfMemoryError: " + OOM_MSG + "\n")
    return name
def points_of(f):
    short = f["requested"] - f["free"]
    return max(1, (short * 100 + f["capacity"] - 1) // f["capacity"])
f = current(OOM_MSG)
pts = points_of(f)
plain = log("served-plain", req="1.50 GiB", cap="23.55 GiB", free="310.00 MiB",
            procs="Including non-PyTorch memory, this process has 23.22 GiB memory in use. ",
            alloc="20.10 GiB", unalloc="2.60 GiB")
kind = critical([plain])
check("the OOM without a server", [plain], kind,
      {"expandable-segments": (size_of("2.60 GiB"), True)}, ["vllm-gpu-memory-utilization"])
vllm = server_log("vllm.log", "vllm-v1-2025.log")
kv = [size_of(m + " GiB") for m in re.findall(r"Available KV cache memory: ([\d.]+) GiB",
                                               open(vllm).read())][-1]
result(pts * f["capacity"] // 100 < kv, "vllm: the KV cache (%d bytes) can give %d points" % (kv, pts))
d = check("vllm serving", [vllm], kind,
          {"vllm-gpu-memory-utilization": (pts * f["capacity"] // 100, True)},
          ["expandable-segments", "max-split-size", "garbage-collection-threshold",
           "vllm-max-num-seqs", "sglang-mem-fraction-static", "activation-checkpointing"])
if d:
    a = next((x for x in d["findings"][0]["advice"] if x["id"] == "vllm-gpu-memory-utilization"), {"setting": "", "evidence": "", "figures": {}})
    want = "--gpu-memory-utilization %.2f" % (0.90 - pts / 100.0)
    result(want in a["setting"] and a["figures"].get("server_kv_cache_bytes") == kv
           and a["figures"].get("points") == pts,
           "vllm: the setting (%s) and the KV cache it gives from" % want, a)
# vLLM 0.8's profiling line gives its activations' peak: half as many
# sequences batched need about half of it.
v08 = server_log("vllm08.log", "vllm-0.8-2025-04.log")
act = [size_of(m + " GiB") for m in re.findall(r"activation peak memory takes ([\d.]+)GiB",
                                                open(v08).read())][-1]
kv = [size_of(m + " GiB") for m in re.findall(r"reserved for KV Cache is ([\d.]+)GiB",
                                               open(v08).read())][-1]
check("vllm 0.8 serving", [v08], kind,
      {"vllm-max-num-seqs": (act // 2, act // 2 >= f["requested"] - f["free"]),
       "vllm-gpu-memory-utilization": (pts * f["capacity"] // 100, True)},
      ["expandable-segments"])
result(pts * f["capacity"] // 100 < kv, "vllm 0.8: its KV cache (%d bytes) can give them" % kv)
sgl = server_log("sglang.log", "sglang-2025.log")
kv = [size_of(k + " GiB") + size_of(v + " GiB") for k, v in
      re.findall(r"K size: ([\d.]+) GB, V size: ([\d.]+) GB", open(sgl).read())][-1]
d = check("sglang serving", [sgl], kind,
          {"sglang-mem-fraction-static": (pts * f["capacity"] // 100, True)},
          ["expandable-segments", "max-split-size", "vllm-gpu-memory-utilization"])
if d:
    a = next((x for x in d["findings"][0]["advice"] if x["id"] == "sglang-mem-fraction-static"), {"setting": "", "evidence": "", "figures": {}})
    result("--mem-fraction-static" in a["setting"] and "%.2f" % (pts / 100.0) in a["setting"]
           and abs(a["figures"].get("server_kv_cache_bytes", 0) - kv) <= 2,
           "sglang: the setting and its KV cache pool (K and V)", a)

# A vLLM snapshot: its KV cache made under vLLM's own frames; cut cache
# blocks are not the allocator knobs' to fix there.
VLLM_FRAMES = [{"name": "_allocate_kv_cache_tensors", "line": 3760,
                "filename": "/opt/venv/lib/python3.11/site-packages/vllm/v1/worker/gpu_model_runner.py"},
               {"name": "main", "filename": "/srv/serve.py", "line": 9}]
data = pickle.load(open(snapshot("vllm-frag.pickle", 256 * MiB, GiB), "rb"))
for seg in data["segments"]:
    for b in seg["blocks"]:
        if b["state"] == "active_allocated":
            b["frames"] = VLLM_FRAMES
for e in data["device_traces"][0]:
    if e["action"] == "alloc":
        e["frames"] = VLLM_FRAMES
pickle.dump(data, open("vllm-frag.pickle", "wb"), protocol=4)
check("a vLLM snapshot's split blocks", ["vllm-frag.pickle"], "fragmentation", {},
      ["max-split-size", "expandable-segments"])

# An inconsistent OOM: a limit, not other processes from an assumed
# context. Real messages (tests/data/logs, SOURCES.md).
def old_free(msg):
    return size_of(re.search(r"; ([\d.]+ \w+) free", msg).group(1))
msg = open(os.path.join(DATA, "logs", "oom-01.log")).read()
check("oom-01: 9.28 GiB free, 12.5 MiB refused", [os.path.join(DATA, "logs", "oom-01.log")],
      "inconsistent", {"memory-limits": (old_free(msg), True)}, ["free-other-processes"])
msg = open(os.path.join(DATA, "logs", "oom-11.log")).read()
check("oom-11: 38.09 GiB free, 64 MiB refused", [os.path.join(DATA, "logs", "oom-11.log")],
      "inconsistent", {"memory-limits": (current(msg)["free"], True)}, ["free-other-processes"])
check("another process's OOM is no limit's", ["other.log"], "other-process", {},
      ["memory-limits"])

# One oversized request: split it, citing its size.
path = os.path.join(DATA, "logs", "oom-13.log")
f13 = current(open(path).read())
half = f13["requested"] // 2
d = check("oom-13: 22.78 GiB asked of 31.47 GiB", [path], "oversized-request",
          {"split-oversized-request": (half, half >= f13["requested"] - f13["free"])}, [])
if d:
    a = next((x for x in d["findings"][0]["advice"] if x["id"] == "split-oversized-request"), {"setting": "", "evidence": "", "figures": {}})
    result(human_bytes(f13["requested"]) in a["evidence"] and
           a["figures"].get("request_pct") == f13["requested"] * 100 // f13["capacity"],
           "oversized: the evidence cites the request's size and share", a["evidence"])
check("a request a small saving covers is not oversized", ["frag.log"], "fragmentation", {},
      ["split-oversized-request"])

# CUDA graphs' private pools: their free blocks are no saving. The
# message's "reserved but unallocated" already leaves them out (PyTorch
# counts them allocated): the saving is that figure, and the evidence
# says the rest is not counted.
path = os.path.join(DATA, "logs", "oom-15.log")
msg = open(path).read()
unalloc = size_of(re.search(r"and ([\d.]+ \w+) is reserved by PyTorch but unallocated", msg).group(1))
private = size_of(re.search(r"with ([\d.]+ \w+) allocated in private pools", msg).group(1))
d = check("oom-15: private pools", [path], "fragmentation",
          {"expandable-segments": (unalloc, True)}, [])
if d:
    a = next((x for x in d["findings"][0]["advice"] if x["id"] == "expandable-segments"), {"setting": "", "evidence": "", "figures": {}})
    result(human_bytes(private) + " free in private pools" in a["evidence"],
           "oom-15: the evidence says the private pools' %s is not counted" % human_bytes(private),
           a["evidence"])
# A snapshot of a default segment (8 GiB, 7 in use) and a CUDA graph's
# pool (4 GiB, 1 in use) near the capacity nvidia-smi gives (13 GiB):
# only the default pool's free GiB is the cache's saving.
fr = [{"name": "forward", "filename": "/job/model.py", "line": 7}]
segs, tr, t = [], [], 1764494100 * 1000000
for addr, size, used, pool in ((1 << 40, 8 * GiB, 7 * GiB, (0, 0)), (1 << 41, 4 * GiB, GiB, (1, 2))):
    segs.append({"device": 0, "address": addr, "total_size": size, "allocated_size": used,
                 "active_size": used, "requested_size": used, "stream": 0,
                 "segment_type": "large", "segment_pool_id": pool, "is_expandable": False,
                 "frames": fr, "blocks": [
                     {"address": addr, "size": used, "requested_size": used,
                      "state": "active_allocated", "frames": fr},
                     {"address": addr + used, "size": size - used, "requested_size": 0,
                      "state": "inactive", "frames": []}]})
    for action, n in (("segment_alloc", size), ("alloc", used)):
        t += 1
        tr.append({"action": action, "addr": addr, "size": n, "stream": 0, "time_us": t,
                   "frames": fr})
pickle.dump({"segments": segs, "device_traces": [tr], "allocator_settings": {}},
            open("graphs.pickle", "wb"), protocol=4)
with open("graphs-smi.csv", "w") as fh:
    fh.write("timestamp, name, index, memory.total [MiB], memory.used [MiB]\n")
    for i in range(5):
        fh.write("2025/11/30 09:15:%02d.000, NVIDIA A10, 0, 13312 MiB, 12800 MiB\n" % i)
default_free = sum(s["total_size"] - s["allocated_size"] for s in segs
                   if s["segment_pool_id"] == (0, 0))
reserved, allocated = sum(s["total_size"] for s in segs), sum(s["allocated_size"] for s in segs)
gc = min(reserved - max(allocated, 13312 * MiB * 8 // 10), default_free)
check("a CUDA graph's pool near capacity", ["graphs.pickle", "graphs-smi.csv"], "near-capacity",
      {"expandable-segments": (default_free, None), "garbage-collection-threshold": (gc, None)}, [])

# ---- 6. every remedy given once and withheld once -------------------------------
for rid, n in seen.items():
    result(n["given"] >= 1 and n["withheld"] >= 1,
           "%s: given where its trigger holds, withheld where it does not" % rid, n)

# ---- 7. the ranked list across findings; the reports ---------------------------
d = report("frag.log", "other.log")
ranked = [a["saving_bytes"] for a in d["advice"]]
result(ranked == sorted(ranked, reverse=True) and len(ranked) == 2 and
       d["advice"][0]["id"] == "free-other-processes" and
       {"kind", "device", "finding"} <= set(d["advice"][0]),
       "advice[]: both findings' advice, by saving (29 GiB before 12.5 GiB)", d["advice"])
rc, md, err = run("frag.log", "other.log", "-f", "md")
result("## Advice" in md and "| 1 | Free the GPU from other processes | 29.0 GiB | the request "
       "would have fit |" in md, "Markdown: the Advice section's table", md[-1500:])
result("```\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n```" in md and
       "    ```\n    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n    ```" not in md and
       "  - see advice: " in md,
       "Markdown: the setting as a code block in the Advice section, once; its finding points to it",
       md[-2500:])
rc, html, err = run("frag.log", "-f", "html")
result("<code>PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n</code>" in html,
       "HTML: the setting as code", html[-800:])

# ---- 8. a database analysed before the advice existed (schema 12) ----------
import sqlite3
rc, _, err = run("import", "frag.log", "--db", "old.db")
db = sqlite3.connect("old.db")
# every table a later migration made goes, as in a database written then
import glob, os, re
later = [f for f in glob.glob(os.path.join(os.path.dirname(sys.argv[2]), "..", "schemas",
                                           "migrations", "*.sql"))
         if int(os.path.basename(f)[:3]) > 12]
# (and each view and added column goes, and a table one of them dropped
# comes back as its first migration made it: migration 16's trace_entry)
earlier = "".join(open(f).read() for f in sorted(glob.glob(os.path.join(
    os.path.dirname(sys.argv[2]), "..", "schemas", "migrations", "*.sql")))
    if int(os.path.basename(f)[:3]) <= 12)
for f in sorted(later, reverse=True):
    text = open(f).read()
    for v in re.findall(r"CREATE VIEW (\w+)", text):
        db.execute("DROP VIEW IF EXISTS " + v)
    for t in re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", text):
        db.execute("DROP TABLE IF EXISTS " + t)
    for t, c in re.findall(r"ALTER TABLE (\w+) ADD COLUMN (\w+)", text):
        db.execute("ALTER TABLE %s DROP COLUMN %s" % (t, c))
    for t in re.findall(r"DROP TABLE (?!IF )(\w+)", text):
        # (one made again under its own name stays: migration 19's source)
        if not db.execute("SELECT 1 FROM sqlite_schema WHERE name = ?", (t,)).fetchone():
            db.execute(re.search(r"CREATE TABLE %s \(.*?\n\);" % t, earlier, re.S).group(0))
db.executescript("PRAGMA user_version = 12;")
db.close()
rc2, out, err2 = run("report", "--db", "old.db", "-f", "json")
ids = [a["id"] for a in json.loads(out)["advice"]] if rc2 == 0 else None
result(rc == 0 and ids == ["expandable-segments"],
       "a schema 12 database: upgraded, analysed again, its advice given", (rc, err, rc2, err2, ids))
