# tests/explain.sh runs this: VRAMREPORT REALDATA-DIR. What a peak held
# from before its record, explained where the file gives grounds, computed
# here from the real files themselves (the pickles read with a data-only
# unpickler, the traces as JSON), one PASS/FAIL line per check:
#   - a training snapshot (AdamW, a custom step that replaces its state):
#     what the step lets go of from before the record is its old state;
#     what is kept is the parameters (half the measured Adam state) and as
#     much again, the gradients;
#   - a forward-only snapshot: what is kept from before the record is
#     the weights; two inference traces with shapes: the weights their
#     forward reads, and the rest stays unknown;
#   - an inference server's log beside a snapshot: its weights and KV
#     cache; a training trace with shapes: weights, Adam state, gradients;
#   - none where the file gives no grounds: a forward+backward snapshot
#     without an optimizer, a trace whose optimizer made no state in the
#     record, a 2021 trace without addresses.
import gzip
import json
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import load_pickle  # noqa: E402

VR = sys.argv[1]
REAL = sys.argv[2]
SNAP = os.path.join(REAL, "snapshot")
KINETO = os.path.join(REAL, "kineto")


def result(cond, what, got=None):
    print("%s\t%s%s" % ("PASS" if cond else "FAIL", what, "" if cond else "\tgot: %r" % (got,)))


def report(path, name):
    """The JSON and Markdown reports of one file, and its database."""
    db = name + ".db"
    if os.path.exists(db):
        os.remove(db)
    p = subprocess.run([VR, path, "--db", db, "-f", "json", "-o", name + ".json", "-q"],
                       capture_output=True, text=True)
    q = subprocess.run([VR, "report", "--db", db, "-f", "markdown", "-o", name + ".md", "-q"],
                       capture_output=True, text=True)
    result(p.returncode == 0 and q.returncode == 0, "%s: reported" % name, p.stderr + q.stderr)
    with open(name + ".json") as f:
        doc = json.load(f)
    with open(name + ".md") as f:
        md = f.read()
    return doc["devices"][0], md, db


def rows(dev):
    return [(r["rule"], r["category"], r["bytes"]) for r in dev["explained"]]


def agree(a, expected):
    return expected > 0 and abs(a - expected) * 1000 <= expected * 20


def frame_files(e):
    return [f.get("filename", "") for f in e.get("frames", [])]


def frame_names(e):
    return [f.get("name", "") for f in e.get("frames", [])]


def optimizer_frame(e):
    return any("/torch/optim/" in f for f in frame_files(e))


def backward_frame(e):
    return any("autograd::Engine::evaluate_function" in n or "Backward0::apply" in n
               for n in frame_names(e))


def replay(snap):
    """The record replayed from the level it began at: its peak (the first
    highest allocated total, as the allocator counts at free_completed),
    the frees of memory from before the record (an address the record did
    not allocate), and the allocations never freed."""
    trace = snap["device_traces"][0]
    end = sum(b["size"] for s in snap["segments"] for b in s["blocks"]
              if b["state"] == "active_allocated")
    delta = sum(e["size"] if e["action"] == "alloc" else -e["size"]
                for e in trace if e["action"] in ("alloc", "free_completed"))
    level = end - delta
    cur, peak, at = level, level, -1
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            cur += e["size"]
        elif e["action"] == "free_completed":
            cur -= e["size"]
        if cur > peak:
            peak, at = cur, i
    live, early, kept_alive = {}, [], []
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            live[e["addr"]] = e
        elif e["action"] == "free_completed":
            if e["addr"] in live:
                del live[e["addr"]]
            else:
                early.append((i, e))
    return {"level": level, "peak": peak, "at": at, "early": early, "never_freed": list(live.values())}


# 1. cs336-bcrafton: a training step under AdamW (its step's
# record_function label, in external_annotations), a custom step that
# makes each moment anew and lets the old one go.
path = os.path.join(SNAP, "cs336-bcrafton.pickle")
snap = load_pickle(path)
r = replay(snap)
after = [e for i, e in r["early"] if i > r["at"]]
in_step = sum(e["size"] for e in after
              if optimizer_frame(e) and "zero_grad" not in frame_names(e))
other = sum(e["size"] for e in after) - in_step
before = sum(e["size"] for i, e in r["early"] if i <= r["at"])
state = sum(e["size"] for e in r["never_freed"] if optimizer_frame(e))
params = state // 2
kept = r["level"] - before - in_step - other
grads = min(kept - params, params)
names = [a["name"] for a in snap.get("external_annotations", [])]
dev, md, db = report(path, "bcrafton")
result("Optimizer.step#AdamW.step" in names and in_step > 0 and agree(kept, 2 * params),
       "bcrafton: the file names AdamW, its step frees %d bytes from before the record, and what it "
       "keeps (%d) is twice half its state (%d)" % (in_step, kept, state), (names, kept, state))
want = [("optimizer-state-replaced", "optimizer_state", in_step),
        ("adam-state-half", "parameter", params),
        ("gradients-kept", "gradient", grads)]
result(rows(dev) == want, "bcrafton: the old state replaced, the parameters half the state, the "
       "gradients as large as them: %r" % (want,), rows(dev))
conf = [x["confidence"] for x in dev["explained"]]
result(conf == ["high", "medium", "low"], "bcrafton: each inference's confidence", conf)
ev = {e["name"]: e["value"] for e in dev["explained"][1]["evidence"]}
result(ev.get("optimizer") == "AdamW" and ev.get("optimizer_state_bytes") == state and
       ev.get("kept_from_before_record_bytes") == kept,
       "bcrafton: adam-state-half's evidence names the optimizer, its state and what was kept", ev)
pb = dev["peak_breakdown"]
rest = r["level"] - before - in_step - params - grads
result(sum(pb.values()) == r["peak"] == dev["peak_allocated_bytes"] and
       dev["unknown_at_peak"]["before_record_bytes"] == rest - other,
       "bcrafton: the breakdown still sums to the peak (%d); %d bytes from before the record stay "
       "unknown" % (r["peak"], rest - other), (pb, dev["unknown_at_peak"]))
result("How we know what no live allocation says:" in md and "(adam-state-half, medium confidence)" in md,
       "bcrafton: the Markdown says how it knows", md[md.find("## Where"):][:600])
con = sqlite3.connect(db)
peak_ts = con.execute("SELECT peak_allocated_ts_ns FROM device_summary").fetchone()[0]
sample = dict(con.execute("SELECT category, bytes FROM category_sample WHERE ts_ns = ?", (peak_ts,)))
result(sample == pb, "bcrafton: the chart's sample at the peak is the breakdown", (sample, pb))
estimate = dev.get("estimate") or {}
result(estimate.get("params") == params // 4,
       "bcrafton: the estimator's comparison appears, %d fp32 parameters" % (params // 4), estimate)

# 2. cs336-silmont-forward-bf16: a forward only (no autograd engine, no
# optimizer frame in any entry): what it kept from before the record, in
# blocks without stacks, is the weights.
path = os.path.join(SNAP, "cs336-silmont-forward-bf16.pickle")
snap = load_pickle(path)
r = replay(snap)
trace = snap["device_traces"][0]
shape_ok = (not any(backward_frame(e) or optimizer_frame(e) for e in trace) and
            any("forward" in frame_names(e) for e in trace))
kept = r["level"] - sum(e["size"] for i, e in r["early"])
dev, md, db = report(path, "silmont-forward")
result(shape_ok and kept > 0 and rows(dev) == [("forward-only-weights", "parameter", kept)],
       "silmont-forward: a forward-only run's %d bytes kept from before the record are its "
       "weights" % kept, rows(dev))


# 3. Two forward-only traces (HF inference, H100 and MI300X): the level
# every memory event starts from, less what the trace frees of it, is
# what was kept from before the trace.
def trace_kept(path, device_type):
    with gzip.open(path) as f:
        doc = json.load(f)
    evs = [e for e in doc["traceEvents"] if e.get("name") == "[memory]" and
           e.get("args", {}).get("Device Type") == device_type]
    evs.sort(key=lambda e: e["ts"])
    first = evs[0]["args"]
    level = first["Total Allocated"] - first["Bytes"]
    live, early = set(), 0
    for e in evs:
        a = e["args"]
        if a["Bytes"] > 0:
            live.add(a["Addr"])
        elif a["Addr"] in live:
            live.discard(a["Addr"])
        else:
            early += -a["Bytes"]
    ops = [e.get("name", "") for e in doc["traceEvents"] if e.get("cat") in ("cpu_op", "user_annotation")]
    forward_only = not any("Backward" in n or n.startswith("autograd::engine") or
                           n.startswith("Optimizer.") for n in ops)
    return level - early, forward_only


# Recorded with record_shapes, they say more: the weight operands one
# forward reads (tests/py/forward-weights/oracle.py reads them from the
# trace, each module instance once) are the parameters, an output layer
# shaped as the embedding taken as tied to it (shapes cannot tell), and
# the rest kept from before stays unknown (not weights the forward reads).
import importlib.util  # noqa: E402
spec = importlib.util.spec_from_file_location(
    "fw_oracle", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              "forward-weights", "oracle.py"))
fw_oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fw_oracle)
for name, dtype in (("tracelens-h100-bert-small.json.gz", 1), ("tracelens-mi300x-bert-small.json.gz", 6)):
    path = os.path.join(KINETO, name)
    kept, forward_only = trace_kept(path, dtype)
    fw = fw_oracle.forward(fw_oracle.load(path))
    params = fw["bytes"] - fw["tied_candidate_bytes"]
    dev, md, db = report(path, name.split(".")[0])
    result(forward_only and 0 < params <= kept and
           rows(dev) == [("weights-read-by-forward", "parameter", params)],
           "%s: the weights one forward reads (%d bytes, %d of them taken as a tied head's) are "
           "the parameters, within the %d bytes kept from before the trace" %
           (name, fw["bytes"], fw["tied_candidate_bytes"], kept), rows(dev))
    result(dev["unknown_at_peak"]["before_record_bytes"] == dev["peak_breakdown"]["unknown"] == kept - params,
           "%s: the rest kept from before (%d bytes) stays unknown" % (name, kept - params),
           (dev["unknown_at_peak"], dev["peak_breakdown"]))
    est = dev.get("estimate") or {}
    result(est.get("dtype") == "bf16" and est.get("params") == params // 2,
           "%s: the estimate reads the weights' dtype from the shapes: %d bf16 parameters" %
           (name, params // 2), est)

# flexgen-opt1.3b (PyTorch < 2.0): the blocks in use since before the
# record whose history says init_weight are parameters, and say so.
path = os.path.join(SNAP, "flexgen-opt1.3b-noframes.pickle")
snap = load_pickle(path)
init = [b for s in snap["segments"] for b in s["blocks"] if b["state"] == "active_allocated" and
        "init_weight" in [f["name"] for f in (b.get("history") or [{}])[0].get("frames", [])]]
dev, md, db = report(path, "flexgen")
row = [r for r in dev["explained"] if r["rule"] == "weight-loading-stack"]
ev = {e["name"]: e["value"] for e in row[0]["evidence"]} if row else {}
result(len(row) == 1 and row[0]["bytes"] == sum(b["size"] for b in init) and
       ev.get("blocks_in_use_before_record") == len(init) and row[0]["category"] == "parameter",
       "flexgen: weight-loading-stack, its %d init_weight blocks (%d bytes)" %
       (len(init), sum(b["size"] for b in init)), (row, ev))

# 4. No grounds, no inference.
# cs336-magma27-training: a forward and a backward, no optimizer: what it
# kept from before the record (parameters? gradients kept?) cannot be told.
path = os.path.join(SNAP, "cs336-magma27-training.pickle")
snap = load_pickle(path)
trace = snap["device_traces"][0]
no_opt = not any(optimizer_frame(e) for e in trace) and not snap.get("external_annotations")
dev, md, db = report(path, "magma27")
u = dev["unknown_at_peak"]
result(no_opt and dev["explained"] == [] and u["before_record_bytes"] > 0 and
       u["before_record_bytes"] + u["undecided_bytes"] == dev["peak_breakdown"]["unknown"],
       "magma27: forward and backward without an optimizer: nothing inferred, %d bytes from before "
       "the record stay unknown" % u["before_record_bytes"], (dev["explained"], u))
result("nothing in the file says what it was" in md and "_record_memory_history" in md.replace("\\_", "_"),
       "magma27: the report says why it is unknown and what to record next time", md[md.find("## Where"):][:900])

# hta-v100x2-rank1: SGD's step made no state in the record (momentum
# buffers, if any, were made before it): the level is not split.
dev, md, db = report(os.path.join(KINETO, "hta-v100x2-rank1-2022.pt.trace.json.gz"), "hta")
result(dev["explained"] == [] and dev["unknown_at_peak"]["before_record_bytes"] > 0,
       "hta-v100x2: a training trace whose optimizer made no state in it: nothing inferred",
       (dev["explained"], dev["unknown_at_peak"]))

# tbplugin 2021: memory events without addresses.
dev, md, db = report(os.path.join(KINETO, "tbplugin-v100-resnet50-2021.pt.trace.json.gz"), "tbplugin")
u = dev["unknown_at_peak"]
result(dev["explained"] == [] and u["unplaced_bytes"] == dev["peak_breakdown"]["unknown"] ==
       dev["peak_allocated_bytes"] and u["before_record_bytes"] == 0,
       "tbplugin-2021: no addresses: nothing inferred, all of the peak unplaced", u)
result("carry no addresses" in md, "tbplugin-2021: the report says the events carry no addresses",
       md[md.find("## Where"):][:900])


# 5. An inference server: vLLM's log says its weights and the KV cache it
# reserved at start-up; a snapshot recorded later kept exactly that much
# from before its record (blocks without stacks, as a record started after
# the server's start-up leaves them): the two, as the log says. A record
# that kept less than the log's two gets no server inference.
def server_figures(path):
    """The last start-up's weights and KV cache, read here from vLLM V1's
    wording: 'Model loading took X GiB memory', 'Available KV cache
    memory: Y GiB' (1024-based, as vLLM divides by 2**30)."""
    import re
    weights = kv = None
    with open(path) as f:
        for line in f:
            m = re.search(r"Model loading took ([0-9.]+) GiB", line)
            if m:
                weights = round(float(m.group(1)) * (1 << 30))
            m = re.search(r"Available KV cache memory: ([0-9.]+) GiB", line)
            if m:
                kv = round(float(m.group(1)) * (1 << 30))
    return weights, kv


def serving_snapshot(kept_blocks):
    import pickle
    MiB = 1 << 20
    fwd = [{"name": "forward", "filename": "/srv/model.py", "line": 10}]
    segs, addr = [], 1 << 40
    for size in kept_blocks:
        segs.append({"device": 0, "address": addr, "total_size": size, "allocated_size": size,
                     "active_size": size, "requested_size": size, "stream": 0,
                     "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
                     "frames": [], "blocks": [{"address": addr, "size": size, "requested_size": size,
                                               "state": "active_allocated", "frames": []}]})
        addr += 1 << 36
    t = 1700000000000000
    segs.append({"device": 0, "address": addr, "total_size": 2 * MiB, "allocated_size": 0,
                 "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "large",
                 "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
                 "blocks": [{"address": addr, "size": 2 * MiB, "requested_size": 0,
                             "state": "inactive", "frames": []}]})
    trace = [{"action": "alloc", "addr": addr, "size": 2 * MiB, "stream": 0, "time_us": t, "frames": fwd},
             {"action": "free_requested", "addr": addr, "size": 2 * MiB, "stream": 0,
              "time_us": t + 1, "frames": fwd},
             {"action": "free_completed", "addr": addr, "size": 2 * MiB, "stream": 0,
              "time_us": t + 1, "frames": fwd}]
    return pickle.dumps({"segments": segs, "device_traces": [trace],
                         "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": ""}}, protocol=4)


import shutil  # noqa: E402
log = os.path.join(REAL, "..", "kv-cache", "vllm-v1-2025.log")
weights, kv = server_figures(log)
for name, blocks, want in (
        ("server", [weights, kv], [("server-kv-cache", "kv_cache", kv),
                                   ("server-kv-cache", "parameter", weights)]),
        ("server-short", [weights // 2, kv // 2], [("forward-only-weights", "parameter",
                                                    weights // 2 + kv // 2)])):
    if os.path.exists(name):
        shutil.rmtree(name)
    os.mkdir(name)
    shutil.copy(log, os.path.join(name, "vllm.log"))
    with open(os.path.join(name, "serving.pickle"), "wb") as f:
        f.write(serving_snapshot(blocks))
    dev, md, db = report(name, name)
    result(rows(dev) == want, "%s: kept %d bytes from before the record against the log's weights %d "
           "and KV cache %d: %r" % (name, sum(blocks), weights, kv, want), rows(dev))
dev, md, db = report("server", "server")
ev = {e["name"]: e["value"] for e in dev["explained"][0]["evidence"]}
result(ev.get("server") == "vllm" and ev.get("kv_cache_in_log_bytes") == kv and
       ev.get("kv_cache_log_line") == 5 and dev["explained"][0]["confidence"] == "high",
       "server: the evidence names vLLM, the log's KV cache and its line (the last start-up's)", ev)


# 6. A training trace recorded with record_shapes from the middle of a run
# (written here: one ProfilerStep, a Linear's forward, its backward, an
# AdamW step): the level it began at is the weights the forward reads,
# Adam's two moments of them, and their gradients kept between steps.
def training_trace(level, w_dims):
    T = 1_700_000_000_000_000
    ev = []

    def x(cat, name, ts, dur, args=None, tid=1):
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur,
                   "args": args or {}})

    def mem(ts, addr, b, total):
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1,
                   "tid": 1, "ts": ts, "args": {"Device Type": 1, "Device Id": 0, "Addr": addr,
                                                "Bytes": b, "Total Allocated": total,
                                                "Total Reserved": 1 << 34}})
    x("user_annotation", "ProfilerStep#3", T, 1000)
    x("python_function", "nn.Module: Linear_0", T + 10, 200)
    x("cpu_op", "aten::linear", T + 20, 100,
      {"Input Dims": [[64, w_dims[1]], w_dims, [w_dims[0]]], "Input type": ["float"] * 3,
       "Input Strides": [[w_dims[1], 1], [w_dims[1], 1], [1]], "Concrete Inputs": ["", "", ""]})
    act = 64 * w_dims[0] * 4
    mem(T + 30, 1 << 40, act, level + act)
    x("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", T + 300, 200, tid=2)
    x("cpu_op", "AddmmBackward0", T + 310, 180, tid=2)
    mem(T + 400, 1 << 40, -act, level)
    x("user_annotation", "Optimizer.step#AdamW.step", T + 600, 300)
    x("cpu_op", "aten::_foreach_add_", T + 610, 50)
    return json.dumps({"schemaVersion": 1, "traceEvents": ev})


w = [512, 256]
P = w[0] * w[1] * 4 + w[0] * 4  # the Linear's weight and bias, fp32
for name, level, want in (
        ("training", 4 * P, [("weights-read-by-forward", "parameter", P),
                             ("adam-state-from-weights", "optimizer_state", 2 * P),
                             ("gradients-kept", "gradient", P)]),
        ("training-no-grads", 3 * P, [("weights-read-by-forward", "parameter", P),
                                      ("adam-state-from-weights", "optimizer_state", 2 * P)]),
        ("training-short", 2 * P, [("weights-read-by-forward", "parameter", P)])):
    with open(name + ".pt.trace.json", "w") as f:
        f.write(training_trace(level, w))
    dev, md, db = report(name + ".pt.trace.json", name)
    result(rows(dev) == want, "%s: a level of %d bytes with %d of weights read, under AdamW: %r" %
           (name, level, P, want), rows(dev))
