# tests/snapshot-phases.sh runs this: VRAMREPORT RULES SNAPSHOT-DIR.
# An allocator snapshot's phases (forward, backward, optimizer,
# zero_grad) from its entries' stacks and its annotations, the phases of
# its allocations, their categories, its breakdown at the peak and its
# peak per phase, each against model.py's reading of the pickle (Python's
# pickle, every global refused) and of the rules file; then what an
# expert checks by hand, stated here directly from the entries. Real
# snapshots first, then snapshots written here. One PASS/FAIL line each.
import json
import os
import pickle
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402

VR, RULES, REAL = sys.argv[1], sys.argv[2], sys.argv[3]
ROLES, RULE_LIST = model.read_rules(RULES)
MiB = 1 << 20


def result(cond, what, got=None):
    print("%s\t%s%s" % ("PASS" if cond else "FAIL", what, "" if cond else "\tgot: %r" % (got,)))


def run(*args):
    p = subprocess.run([VR] + list(args), capture_output=True, text=True)
    return p.returncode, p.stderr


def analyse(name, path):
    """Imports and reports `path`; (database, JSON report, Markdown)."""
    db = name + ".db"
    if os.path.exists(db):
        os.remove(db)
    rc, err = run("import", path, "--db", db, "-q")
    rc2, err2 = run("report", "--db", db, "-f", "json", "-o", name + ".json", "-q")
    rc3, err3 = run("report", "--db", db, "-f", "md", "-o", name + ".md", "-q")
    result(rc == 0 and rc2 == 0 and rc3 == 0, "%s: imported and reported" % name, err + err2 + err3)
    with open(name + ".json") as f:
        rep = json.load(f)
    with open(name + ".md") as f:
        md = f.read()
    return sqlite3.connect(db), rep, md


def compare(name, path):
    """The database and report against the model; returns what the
    expert checks need."""
    snap = model.load_pickle(path)
    db, rep, md = analyse(name, path)
    ph = model.phases(snap, ROLES)
    got = db.execute("SELECT kind, start_ns, end_ns FROM phase WHERE step IS NULL AND tid IS NULL"
                     " ORDER BY start_ns").fetchall()
    result(got == ph, "%s: its %d phases (%s)" % (name, len(ph), ", ".join(sorted({k for k, _, _ in ph}))),
           got[:8])
    allocs = model.allocations(snap, ROLES, RULE_LIST, ph)
    want = sorted((a["ts"], a["addr"], a["bytes"], a["alloc_phase"], a["free_phase"], a["category"],
                   a["rule"]) for a in allocs)
    got = sorted(db.execute("SELECT alloc_ts_ns, addr, bytes, alloc_phase, free_phase, category,"
                            " category_rule FROM allocation").fetchall())
    bad = [(w, g) for w, g in zip(want, got) if w != g]
    result(want == got, "%s: each of its %d allocations' phases and category" % (name, len(want)),
           bad[:3] or (len(want), len(got)))
    dev = rep["devices"][0]
    peak, cats = model.peak_breakdown(snap, allocs, ROLES, RULE_LIST)
    # What was live before the record and the allocations do not explain
    # is unknown here; the report's inferences (checked by tests/explain.sh)
    # move some of it into a category: moved back, the rest is these sums.
    cats = dict(cats)
    for r in dev.get("explained", []):
        if r["rule"] not in ("weight-loading-stack", "block-stack"):
            cats[r["category"]] = cats.get(r["category"], 0) + r["bytes"]
            cats["unknown"] = cats.get("unknown", 0) - r["bytes"]
    pb = {k: v for k, v in dev["peak_breakdown"].items() if v}
    result(dev["peak_allocated_bytes"] == peak and pb == {k: v for k, v in cats.items() if v},
           "%s: the breakdown at its peak (%s)" % (
               name, ", ".join("%s %d" % kv for kv in sorted(pb.items()))), (peak, cats, pb))
    pp = {p["phase"]: p["peak_allocated_bytes"] for p in dev["phase_peaks"]} if ph else {}
    want_pp = model.phase_peaks(snap, ph) if ph else {}
    result(pp == want_pp and all(p["step"] is None for p in dev["phase_peaks"]),
           "%s: its peak per phase (%s)" % (name, ", ".join(sorted(want_pp))), (pp, want_pp))
    return snap, allocs, dev, md


def first_backward_us(snap):
    """The time of the first alloc entry under a backward frame (the
    autograd engine's C++ frames or a Python backward)."""
    for e in snap["device_traces"][0]:
        names = [f["name"] for f in e.get("frames", [])]
        if e["action"] == "alloc" and any("autograd::Engine::evaluate_function" in x or x == "backward"
                                          for x in names):
            return e["time_us"]
    return None


# ---- the real snapshots ----------------------------------------------------

path = os.path.join(REAL, "cs336-silmont-segments.pickle")
snap, allocs, dev, md = compare("silmont-segments", path)
# A plain-function attention (no nn.Module): what it made before the
# backward and the backward freed is what autograd saved, activations.
t = first_backward_us(snap) * 1000
saved = sum(a["bytes"] for a in allocs if a["ts"] < t and a["free_ts"] is not None and a["free_ts"] >= t)
db = sqlite3.connect("silmont-segments.db")
got = db.execute("SELECT coalesce(sum(bytes), 0) FROM allocation WHERE alloc_ts_ns < :t"
                 " AND free_ts_ns >= :t AND category = 'activation'", {"t": t}).fetchone()[0]
result(saved > 0 and got == saved,
       "silmont-segments: made before its backward and freed in it: activation, %d bytes" % saved, got)
pb = dev["peak_breakdown"]
result(pb["unknown"] * 100 < dev["peak_allocated_bytes"],
       "silmont-segments: under 1 % of the peak unknown (was 17.1 %)", pb)
result("| outside steps | 1.52 GiB | 3.03 GiB |  | 508 B |" in md,
       "silmont-segments: the report's peak per phase: forward 1.52 GiB, backward 3.03 GiB",
       [x for x in md.splitlines() if "outside steps" in x])

path = os.path.join(REAL, "cs336-bcrafton.pickle")
snap, allocs, dev, md = compare("bcrafton", path)
ann = [a for a in snap["external_annotations"] if a["name"].startswith("Optimizer.step#")]
pp = {p["phase"]: p for p in dev["phase_peaks"]}
result(set(pp) == {"forward", "backward", "optimizer", "other"} and
       pp["optimizer"]["peak_allocated_bytes"] == dev["peak_allocated_bytes"] and
       ann[0]["time_us"] * 1000 <= dev["peak_allocated_ts_ns"] <= ann[1]["time_us"] * 1000,
       "bcrafton: its peak lies in the Optimizer.step annotation, the optimizer phase's peak", pp)

path = os.path.join(REAL, "cs336-magma27-training.pickle")
snap, allocs, dev, md = compare("magma27-training", path)
# stacks="python": the autograd engine's thread has no Python frames, so
# its allocations have no stack; after loss.backward() began (the record
# ends in it), they are backward's.
tr = snap["device_traces"][0]
first = next(i for i, e in enumerate(tr) if e["action"] == "alloc" and
             any(f["name"] == "backward" for f in e.get("frames", [])))
bare = sum(1 for e in tr[first:] if e["action"] == "alloc" and not e.get("frames"))
got = sqlite3.connect("magma27-training.db").execute(
    "SELECT count(*) FROM allocation a JOIN mem_event m ON m.id = a.alloc_event_id"
    " WHERE m.stack_id IS NULL AND a.alloc_phase = 'backward'").fetchone()[0]
result(bare > 100 and got == bare,
       "magma27-training: its %d allocations without a stack after backward began are "
       "backward's" % bare, got)

path = os.path.join(REAL, "cs336-silmont-forward-bf16.pickle")
snap, allocs, dev, md = compare("silmont-forward-bf16", path)
pp = {p["phase"]: p["peak_allocated_bytes"] for p in dev["phase_peaks"]}
result("backward" not in pp and pp.get("forward") == dev["peak_allocated_bytes"],
       "silmont-forward-bf16: forward only, its peak the forward's", pp)

# A snapshot without frames has no phases.
path = os.path.join(REAL, "flexgen-opt1.3b-noframes.pickle")
db, rep, md = analyse("flexgen", path)
result(db.execute("SELECT count(*) FROM phase").fetchone()[0] == 0 and not rep["devices"][0]["phase_peaks"],
       "flexgen-opt1.3b-noframes: no frames, no phases", rep["devices"][0]["phase_peaks"])


# ---- snapshots written here -------------------------------------------------

def py(name, filename, line=1):
    return {"name": name, "filename": filename, "line": line}


def cxx(name):
    return {"name": name, "filename": "??", "line": 0}


TORCH = "/usr/lib/python3/site-packages/torch/"
MODULE = TORCH + "nn/modules/module.py"
USER = "/home/u/train.py"
ALLOC = [cxx("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)")]
MAIN = [py("main", USER, 90), py("<module>", USER, 99)]
PLAIN = ALLOC + [py("attention", USER, 20)] + MAIN  # a plain function: no role
FORWARD = ALLOC + [py("forward", USER, 30), py("_call_impl", MODULE, 1747)] + MAIN
ENGINE = ALLOC + [cxx("torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor>&&)"),
                  cxx("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> const&)")]
ACCUMULATE = ALLOC + [cxx("torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor>&&)"),
                      cxx("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> const&)")]
ADAM = ALLOC + [py("_single_tensor_adamw", TORCH + "optim/adamw.py", 400),
                py("step", TORCH + "optim/adamw.py", 209)] + MAIN
STEP = [py("step", TORCH + "optim/adamw.py", 209), py("optimizer_step", USER, 70)] + MAIN
T0 = 1700000000000000


class Writer:
    """A snapshot's trace, written entry by entry (1 µs apart), and its
    annotations; write() lays it out as torch's _dump_snapshot does."""

    def __init__(self):
        self.t, self.trace, self.ann, self.live, self.next = T0, [], [], {}, 1 << 40

    def alloc(self, name, size, frames):
        self.t += 1
        addr, self.next = self.next, self.next + (1 << 30)
        self.live[name] = (addr, size, frames)
        self.trace.append({"action": "alloc", "addr": addr, "size": size, "stream": 0,
                           "time_us": self.t, "frames": frames})

    def free(self, name):
        addr, size, frames = self.live.pop(name)
        for a in ("free_requested", "free_completed"):
            self.t += 1
            self.trace.append({"action": a, "addr": addr, "size": size, "stream": 0,
                               "time_us": self.t, "frames": []})

    def mark(self, name, stage):
        self.t += 1
        self.ann.append({"name": name, "stage": stage, "device": 0, "time_us": self.t})

    def write(self, path):
        segs = []
        for addr, size, frames in self.live.values():
            segs.append({"device": 0, "address": addr, "total_size": size, "allocated_size": size,
                         "active_size": size, "requested_size": size, "stream": 0,
                         "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
                         "frames": [], "blocks": [{"address": addr, "size": size, "requested_size": size,
                                                   "state": "active_allocated", "frames": frames}]})
        with open(path, "wb") as f:
            f.write(pickle.dumps({"segments": segs, "device_traces": [self.trace],
                                  "allocator_settings": {}, "external_annotations": self.ann},
                                 protocol=4))


def categories_of(name):
    db = sqlite3.connect(name + ".db")
    return {r[0]: r[1:] for r in db.execute(
        "SELECT bytes, alloc_phase, free_phase, category FROM allocation")}


# 1. A plain-function model trained two steps with AdamW (annotated
# Optimizer.step# and Optimizer.zero_grad#, set_to_none: zero_grad frees
# the gradients): no forward frames, so what comes before each backward
# (after the optimizer's step) is its forward. Sizes tell the
# allocations apart.
w = Writer()
w.alloc("weight", 64 * MiB, PLAIN)       # made in the record, before any backward
for step in (0, 1):
    s = step * 1024
    w.alloc("x", 1 * MiB + s, PLAIN)       # the forward's input, freed by the backward
    w.alloc("h", 2 * MiB + s, PLAIN)       # saved for the backward
    w.alloc("tmp", 3 * MiB + s, PLAIN)     # freed within the forward
    w.free("tmp")
    w.alloc("ws", 4 * MiB + s, ENGINE)     # the backward's temporary
    w.free("ws")
    w.free("h")
    w.free("x")
    w.alloc("grad", 5 * MiB + s, ACCUMULATE)  # the gradient, kept past the backward
    w.mark("Optimizer.step#AdamW.step", "START")
    if step == 0:
        w.alloc("exp_avg", 6 * MiB, ADAM)  # Adam's state, kept
    w.alloc("upd", 7 * MiB + s, PLAIN)     # made inside the step, no frame of it
    w.free("upd")
    w.mark("Optimizer.step#AdamW.step", "END")
    w.mark("Optimizer.zero_grad#AdamW.zero_grad", "START")
    w.free("grad")
    w.mark("Optimizer.zero_grad#AdamW.zero_grad", "END")
w.write("plain.pickle")
compare("plain", "plain.pickle")
got = categories_of("plain")
kinds = [r[0] for r in sqlite3.connect("plain.db").execute("SELECT kind FROM phase ORDER BY start_ns")]
result(kinds == ["forward", "backward", "optimizer", "zero_grad"] * 2,
       "plain: forward, backward, optimizer, zero_grad, twice (a forward before each backward)", kinds)
for s in (0, 1024):
    want = {2 * MiB + s: ("forward", "backward", "activation"),
            1 * MiB + s: ("forward", "backward", "activation"),
            3 * MiB + s: ("forward", "forward", "temporary"),
            4 * MiB + s: ("backward", "backward", "temporary"),
            5 * MiB + s: ("backward", "zero_grad", "gradient"),
            7 * MiB + s: ("optimizer", "optimizer", "temporary")}
    result(all(got.get(b) == v for b, v in want.items()),
           "plain step %d: saved for backward -> activation, freed in the forward -> temporary, "
           "the backward's -> temporary, freed by zero_grad -> gradient" % (s // 1024),
           {b: got.get(b) for b in want})
result(got.get(6 * MiB) == ("optimizer", None, "optimizer_state") and
       got.get(64 * MiB) == ("forward", None, "unknown"),
       "plain: Adam's state kept -> optimizer_state; kept from the forward with no role -> unknown",
       (got.get(6 * MiB), got.get(64 * MiB)))

# 2. The training step as optimizer.step(closure) (Lightning, accelerate),
# an nn.Module model: the closure's forward and backward are phases of
# their own inside the optimizer's annotation; the batch moved to the GPU
# before the first forward is in no phase. The loss, computed in the
# closure outside the model, has the optimizer's frames and no role
# nearer: its stack is the optimizer's (the innermost role), and so is
# its moment, between the closure's forward and backward.
w = Writer()
w.alloc("batch", 1 * MiB, ALLOC + MAIN)
w.mark("Optimizer.step#AdamW.step", "START")
w.alloc("act", 2 * MiB, FORWARD + STEP)
w.alloc("loss", 3 * MiB, ALLOC + [py("cross_entropy", TORCH + "nn/functional.py", 3000)] + STEP)
w.alloc("ws", 4 * MiB, ENGINE)
w.free("act")
w.free("loss")
w.free("ws")
w.alloc("grad", 5 * MiB, ACCUMULATE)
w.alloc("exp_avg", 6 * MiB, ADAM)
w.mark("Optimizer.step#AdamW.step", "END")
w.write("closure.pickle")
compare("closure", "closure.pickle")
rows = sqlite3.connect("closure.db").execute("SELECT kind FROM phase ORDER BY start_ns").fetchall()
result([r[0] for r in rows] == ["optimizer", "forward", "optimizer", "backward", "optimizer"],
       "closure: optimizer, the closure's forward, its loss, its backward, the optimizer again", rows)
got = categories_of("closure")
want = {1 * MiB: ("other", None, "unknown"), 2 * MiB: ("forward", "backward", "activation"),
        3 * MiB: ("optimizer", "backward", "temporary"), 4 * MiB: ("backward", "backward", "temporary"),
        5 * MiB: ("backward", None, "gradient"), 6 * MiB: ("optimizer", None, "optimizer_state")}
result(got == want, "closure: the closure's forward -> activation, its backward's -> temporary and "
       "gradient, Adam's state -> optimizer_state, the batch in no phase", got)
