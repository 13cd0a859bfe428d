# tests/roles.sh runs this: VRAMREPORT SNAPSHOT-DIR. Allocator snapshots written here
# with pickle (the layout torch.cuda.memory._snapshot() dumps), each
# allocation's stack built from frames a real run records, and what each
# allocation must be by the frame nearest the allocation that has a role:
# a forward run as a closure inside optimizer.step(closure) (Lightning,
# accelerate) makes activations, not optimizer state; the autograd
# engine's C++ frames (stacks="all") are backward; Module._apply / .to() /
# from_pretrained and DataParallel's replicate copies are parameters. The
# expected figures are computed here from the allocations written, one
# PASS/FAIL line per check.
import json
import os
import pickle
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import load_pickle  # noqa: E402

VR = sys.argv[1]
REAL = sys.argv[2]
MiB = 1 << 20
GiB = 1 << 30
T0 = 1700000000000000


def py(name, filename, line=1):
    return {"name": name, "filename": filename, "line": line}


def cxx(name):
    return {"name": name, "filename": "??", "line": 0}


TORCH = "/usr/lib/python3/site-packages/torch/"
MODULE = TORCH + "nn/modules/module.py"
USER = "/home/u/train.py"
CALL = [py("_call_impl", MODULE, 1747), py("_wrapped_call_impl", MODULE, 1736)]
ALLOC = [cxx("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)"),
         cxx("at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType)")]
# Lightning's optimizer step: the training step runs as its closure.
STEP = [py("closure", "/usr/lib/python3/site-packages/lightning/pytorch/loops/optimization/automatic.py", 146),
        py("_init_group_wrapper", TORCH + "optim/optimizer.py", 480),
        py("step", TORCH + "optim/adamw.py", 209),
        py("_use_grad", TORCH + "optim/optimizer.py", 79),
        py("wrapper", TORCH + "optim/optimizer.py", 487),
        py("optimizer_step", "/usr/lib/python3/site-packages/lightning/pytorch/core/module.py", 1306),
        py("main", USER, 90)]
FORWARD = [py("forward", TORCH + "nn/modules/linear.py", 125)] + CALL + \
    [py("forward", USER, 30)] + CALL + [py("training_step", USER, 60)]
ENGINE = [cxx("torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor>&&)"),
          cxx("torch::autograd::Node::operator()(std::vector<at::Tensor>&&)"),
          cxx("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> const&)"),
          cxx("torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)")]
ACCUMULATE = [cxx("torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor>&&)"),
              cxx("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> const&)"),
              cxx("torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)")]
CHECKPOINT = [py("recompute_fn", TORCH + "utils/checkpoint.py", 1125),
              py("unpack_hook", TORCH + "utils/checkpoint.py", 1150)] + ENGINE
TO = [py("convert", MODULE, 1340), py("_apply", MODULE, 900), py("_apply", MODULE, 900),
      py("to", MODULE, 1355), py("main", USER, 20)]
HF = [py("_load_state_dict_into_meta_model", "/usr/lib/python3/site-packages/transformers/modeling_utils.py", 800),
      py("from_pretrained", "/usr/lib/python3/site-packages/transformers/modeling_utils.py", 4000),
      py("main", USER, 10)]
# DataParallel: Broadcast.forward is outer to the copy broadcast_coalesced makes.
PAR = TORCH + "nn/parallel/"
REPLICATE = [py("broadcast_coalesced", PAR + "comm.py", 67), py("forward", PAR + "_functions.py", 23),
             py("apply", TORCH + "autograd/function.py", 575),
             py("_broadcast_coalesced_reshape", PAR + "replicate.py", 73),
             py("replicate", PAR + "replicate.py", 110), py("replicate", PAR + "data_parallel.py", 200),
             py("forward", PAR + "data_parallel.py", 184)] + CALL + [py("main", USER, 40)]
INIT = [py("_init_group", TORCH + "optim/adamw.py", 160)] + STEP[2:]
# nn.Linear(...) made on the GPU: its weight is created in the module's
# constructor (reset_parameters fills it), under the user's model's own.
CTOR = [py("__init__", TORCH + "nn/modules/linear.py", 105), py("__init__", USER, 12),
        py("main", USER, 30)]


def snapshot(allocs, oom=None):
    """allocs: (bytes, frames, freed). One segment each, of its size."""
    segs, trace, t = [], [], T0
    for i, (size, frames, freed) in enumerate(allocs):
        addr = (1 << 40) + i * (1 << 34)
        segs.append({"device": 0, "address": addr, "total_size": size,
                     "allocated_size": 0 if freed else size, "active_size": 0 if freed else size,
                     "requested_size": 0 if freed else size, "stream": 0, "segment_type": "large",
                     "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
                     "blocks": [{"address": addr, "size": size, "requested_size": 0 if freed else size,
                                 "state": "inactive" if freed else "active_allocated",
                                 "frames": [] if freed else frames}]})
        trace.append({"action": "segment_alloc", "addr": addr, "size": size, "stream": 0,
                      "time_us": t, "frames": frames})
        trace.append({"action": "alloc", "addr": addr, "size": size, "stream": 0,
                      "time_us": t + 1, "frames": frames})
        t += 2
        if freed:
            for a in ("free_requested", "free_completed"):
                trace.append({"action": a, "addr": addr, "size": size, "stream": 0,
                              "time_us": t, "frames": frames})
                t += 1
    if oom:
        trace.append({"action": "oom", "device_free": 1 * MiB, "size": oom, "stream": 0,
                      "time_us": t, "frames": ALLOC + FORWARD + STEP})
    return {"segments": segs, "device_traces": [trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": ""}}


ok = [True]


def result(cond, what, got=None):
    print("%s\t%s%s" % ("PASS" if cond else "FAIL", what, "" if cond else "\tgot: %r" % (got,)))


def run(*args):
    p = subprocess.run([VR] + list(args), capture_output=True, text=True)
    return p.returncode, p.stderr


def load(name, snap):
    path = name + ".pickle"
    with open(path, "wb") as f:
        f.write(pickle.dumps(snap, protocol=4))
    if os.path.exists(name + ".db"):
        os.remove(name + ".db")
    rc, err = run("import", path, "--db", name + ".db", "-q")
    rc2, err2 = run("report", "--db", name + ".db", "-f", "json", "-o", name + ".json", "-q")
    result(rc == 0 and rc2 == 0, "%s: imported and reported" % name, err + err2)
    db = sqlite3.connect(name + ".db")
    rows = db.execute("SELECT bytes, category, category_rule FROM allocation ORDER BY id").fetchall()
    with open(name + ".json") as f:
        return rows, json.load(f)


def categories(name, allocs, want, rows):
    """want: the category of each allocation, in order."""
    got = sorted((r[0], r[1]) for r in rows)
    result(got == sorted((a[0], c) for a, c in zip(allocs, want)),
           "%s: each allocation's category by its innermost role (%s)" % (name, ", ".join(want)),
           rows)


# 1. The closure: Adam's state (made by _init_group on a step before) and
# three activations of the forward inside optimizer.step(closure), then
# an out-of-memory error in that forward.
closure = [(1 * GiB, ALLOC + INIT, False)] + [(6 * GiB, ALLOC + FORWARD + STEP, False)] * 3
rows, rep = load("closure", snapshot(closure, oom=4 * GiB))
categories("closure", closure, ["optimizer_state"] + ["activation"] * 3, rows)
pb = rep["devices"][0]["peak_breakdown"]
result(pb["activation"] == 18 * GiB and pb["optimizer_state"] == 1 * GiB,
       "closure: peak_breakdown: activation 18 GiB, optimizer_state 1 GiB", pb)
ids = sorted(a["id"] for f in rep["findings"] for a in f["advice"])
result(rep["findings"] and not {"cpu-offload", "8bit-optimizer"} & set(ids),
       "closure: no optimizer-state remedy for a forward's OOM (advice: %s)" % ", ".join(ids), ids)
result("activation-checkpointing" in ids or "micro-batch-accumulation" in ids or
       "mixed-precision" in ids, "closure: an activation remedy is offered", ids)

# 2. Backward with C++ frames only (the autograd engine's thread): a
# gradient kept, a temporary freed, a recomputed activation (activation
# checkpointing's forward run again inside backward) freed.
backward = [(64 * MiB, ALLOC + ACCUMULATE, False), (32 * MiB, ALLOC + ENGINE, True),
            (16 * MiB, ALLOC + FORWARD[:3] + CHECKPOINT, True)]
rows, rep = load("backward", snapshot(backward))
categories("backward", backward, ["gradient", "temporary", "temporary"], rows)
result(sorted((r[0], r[2]) for r in rows) ==
       [(16 * MiB, "snapshot-recompute"), (32 * MiB, "snapshot-backward-temp"),
        (64 * MiB, "snapshot-gradient")],
       "backward: decided by snapshot-gradient, snapshot-backward-temp, snapshot-recompute", rows)

# 3. Weights: moved by Module.to() (_apply), loaded by from_pretrained,
# copied to a replica by DataParallel inside its forward.
weights = [(256 * MiB, ALLOC + TO, False), (128 * MiB, ALLOC + HF, False),
           (64 * MiB, ALLOC + REPLICATE, False), (8 * MiB, ALLOC + FORWARD + [py("main", USER, 1)], False),
           (32 * MiB, ALLOC + CTOR, False)]
rows, rep = load("weights", snapshot(weights))
categories("weights", weights, ["parameter", "parameter", "parameter", "activation", "parameter"], rows)
pb = rep["devices"][0]["peak_breakdown"]
result(pb["parameter"] == 480 * MiB and pb["activation"] == 8 * MiB,
       "weights: peak_breakdown: parameter 480 MiB (a module's constructor included), activation 8 MiB", pb)

# 4. A snapshot of PyTorch before 2.0: a bare list of segments, each
# block's frames in its `history` (newest first: history[0] is the
# allocation in the block now), no record of entries, so every block in
# use was allocated before it: its stack still says what it was.
def legacy_block(addr, size, state, history):
    return {"address": addr, "size": size, "requested_size": size, "state": state,
            "history": [{"addr": addr, "real_size": size, "frames": f} for f in history]}


A = 1 << 40
legacy = [{"device": 0, "address": A, "total_size": 40 * MiB, "allocated_size": 36 * MiB,
           "active_size": 36 * MiB, "stream": 0, "segment_type": "large",
           "blocks": [legacy_block(A, 20 * MiB, "active_allocated", [TO]),
                      legacy_block(A + 20 * MiB, 12 * MiB, "active_allocated", [FORWARD, TO]),
                      legacy_block(A + 32 * MiB, 4 * MiB, "inactive", [TO]),
                      legacy_block(A + 36 * MiB, 4 * MiB, "active_allocated",
                                   [[py("main", USER, 5)]])]}]
rows, rep = load("legacy", legacy)
pb = rep["devices"][0]["peak_breakdown"]
result(pb["parameter"] == 20 * MiB and pb["activation"] == 12 * MiB and pb["unknown"] == 4 * MiB and
       sum(pb.values()) == 36 * MiB,
       "legacy history: parameter 20 MiB (Module.to), activation 12 MiB (history[0]: a forward), "
       "unknown 4 MiB (no role), of 36 MiB", pb)

# 5. A real one: FlexGen's OPT-1.3B inference (PyTorch before 2.0), its
# weights made under init_weight, read here from each block in use's
# history[0] frames.
path = os.path.join(REAL, "flexgen-opt1.3b-noframes.pickle")
snap = load_pickle(path)
weights = acts = 0
for seg in snap["segments"]:
    for b in seg["blocks"]:
        names = [f["name"] for f in (b.get("history") or [{}])[0].get("frames", [])]
        if b["state"] != "active_allocated":
            continue
        if "init_weight" in names:
            weights += b["size"]
        elif "forward" in names:
            acts += b["size"]
rc, err = run(path, "-f", "json", "-o", "flexgen.json", "-q")
with open("flexgen.json") as f:
    pb = json.load(f)["devices"][0]["peak_breakdown"]
# (its four attention-mask blocks have stacks no rule decides: they stay
# unknown, and no inference of the run's shape overrules their stacks)
result(rc == 0 and pb["parameter"] == weights and pb["activation"] == acts and weights > 0,
       "flexgen (legacy history): init_weight's blocks are parameters (%d bytes), forward's "
       "activations (%d bytes)" % (weights, acts), pb)

# 6. A real stacks="all" snapshot: its backward ran on the autograd
# engine's thread, C++ frames only (torch::autograd::Engine::
# evaluate_function, *Backward0::apply), and one allocation under a
# Python backward frame: each is backward's (gradient or temporary).
path = os.path.join(REAL, "cs336-silmont-segments.pickle")
snap = load_pickle(path)
n = nbytes = 0
for trace in snap["device_traces"]:
    for e in trace:
        names = [f["name"] for f in e.get("frames", [])]
        if e["action"] == "alloc" and any("autograd::Engine::evaluate_function" in x or x == "backward"
                                          for x in names):
            n += 1
            nbytes += e["size"]
if os.path.exists("silmont.db"):
    os.remove("silmont.db")
rc, err = run("import", path, "--db", "silmont.db", "-q")
got = sqlite3.connect("silmont.db").execute(
    "SELECT count(*), coalesce(sum(bytes), 0) FROM allocation"
    " WHERE category_rule IN ('snapshot-gradient', 'snapshot-backward-temp')").fetchone()
result(rc == 0 and n > 0 and got == (n, nbytes),
       "cs336-silmont-segments: the %d allocations of backward (C++ autograd frames), %d bytes, "
       "are backward's" % (n, nbytes), got)
