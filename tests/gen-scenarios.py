#!/usr/bin/env python3
"""Synthetic PyTorch profiler (Kineto) traces of four training/inference
loops whose memory composition is known, for tests/categories.sh.

    gen-scenarios.py SCENARIO TRACE.json TRUTH.json

SCENARIO: training (Adam), inference (no_grad), checkpointing (activation
checkpointing), accumulation (gradient accumulation). The trace is spelled
as real 2022+ traces are (see docs/formats/kineto-trace.md):
ProfilerStep#N and Optimizer.step#Adam.step / Optimizer.zero_grad#Adam.
zero_grad user annotations on the main thread, backward ops
(autograd::engine::evaluate_function: XBackward0 > XBackward0 > aten::mm)
on autograd's own thread, [memory] instants with Addr, Bytes, Total
Allocated, Total Reserved, Device Type 1, Device Id 0.

TRUTH.json is the ground truth: every allocation with its category as the
loop's author knows it (alloc_seq/free_seq: its events, counted from 1),
the memory live before the trace began ("preexisting_bytes"), and per
memory event the step and phase the loop was in and the total after it
("timeline"). The expected composition at the peak is computed
from it by the test, independently of vramreport."""
import json
import sys

PID, MAIN, AUTOGRAD = 4242, 4242, 4301
MiB = 1 << 20


class Sim:
    def __init__(self, preexisting=0):
        self.t = 1_700_000_000_000_000  # us since the epoch
        self.events = []
        self.allocs = []
        self.total = preexisting
        self.preexisting = preexisting
        self.next_addr = 0x7F0000000000
        self.seq = 0
        self.step = None          # the ProfilerStep being run
        self.phase = "before"     # what the loop is doing: its author knows
        self.timeline = []        # per memory event: [step, phase, total after it]
        self.phases = []          # [step, phase] as the loop enters each (not loading)
        self.module = None        # the nn.Module being called (with_stack traces)
        self.python_ids = 0
        self.meta = {}            # extra top-level members (distributedInfo)

    def enter(self, phase):
        if phase != "loading" and [self.step, phase] != (self.phases or [None])[-1]:
            self.phases.append([self.step, phase])
        self.phase = phase

    def tick(self, us=2):
        self.t += us

    def span(self, name, cat, tid, body):
        start = self.t
        self.tick()
        body()
        self.tick()
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": tid,
                            "ts": start, "dur": self.t - start, "args": {}})
        self.tick()

    def op(self, names, tid, body=lambda: None):
        """Nested cpu_ops, outermost first; body runs in the innermost."""
        if not names:
            body()
            return
        self.span(names[0], "cpu_op", tid, lambda: self.op(names[1:], tid, body))

    def module_call(self, name, tid, body):
        """A module's call as with_stack=True traces show it: a
        python_function event "nn.Module: Name_N" around its ops."""
        self.python_ids += 1
        start, outer = self.t, self.module
        self.module = name
        self.tick()
        body()
        self.tick()
        self.module = outer
        self.events.append({"ph": "X", "cat": "python_function", "name": "nn.Module: " + name,
                            "pid": PID, "tid": tid, "ts": start, "dur": self.t - start,
                            "args": {"Python id": self.python_ids, "Python thread": 0,
                                     "Python module id": int(name.rsplit("_", 1)[1])}})
        self.tick()

    def annotation(self, name, tid, body):
        self.span(name, "user_annotation", tid, body)

    def memory(self, addr, nbytes, tid):
        self.total += nbytes
        self.seq += 1
        self.events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                            "pid": PID, "tid": tid, "ts": self.t,
                            "args": {"Ev Idx": self.seq, "Device Type": 1, "Device Id": 0,
                                     "Addr": addr, "Bytes": nbytes,
                                     "Total Allocated": self.total,
                                     "Total Reserved": self.total + 64 * MiB}})
        self.timeline.append([self.step, self.phase, self.total])
        self.tick()

    def alloc(self, nbytes, category, tid=MAIN):
        addr = self.next_addr
        self.next_addr += (nbytes + 511) // 512 * 512 + 512
        a = {"addr": addr, "bytes": nbytes, "category": category, "alloc_seq": self.seq + 1,
             "free_seq": None, "module": self.module}
        self.allocs.append(a)
        self.memory(addr, nbytes, tid)
        return a

    def free(self, a, tid=MAIN):
        a["free_seq"] = self.seq + 1
        self.memory(a["addr"], -a["bytes"], tid)

    def temp_op(self, names, nbytes, tid=MAIN):
        """An op that allocates a workspace and frees it before returning."""
        def body():
            w = self.alloc(nbytes, "temporary", tid)
            self.free(w, tid)
        self.op(names, tid, body)

    def trace(self):
        meta = {"schemaVersion": 1, "profile_memory": 1,
                "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3",
                                      "totalGlobalMem": 85 * 1024 * MiB}],
                "traceEvents": self.events}
        meta.update(self.meta)
        return meta


LAYERS = [(24 * MiB, 40 * MiB), (16 * MiB, 32 * MiB), (8 * MiB, 24 * MiB)]  # (weight, activation)
WIDE = [(24 * MiB, 160 * MiB), (16 * MiB, 128 * MiB), (8 * MiB, 96 * MiB)]   # long sequences
MODULES = False  # wrap each layer's forward in nn.Module python_function events
LEAK = False     # each step keeps the last layer's activation (a graph held)


def make_params(sim):
    """Model weights, allocated before the first step and kept."""
    params = []
    for i, (w, _) in enumerate(LAYERS):
        sim.op(["aten::empty"], MAIN, lambda w=w: params.append(sim.alloc(w, "parameter")))
    return params


def load_batch(sim, state, nbytes=6 * MiB):
    """The batch moves to the device; the previous one dies when replaced."""
    sim.enter("loading")
    sim.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", MAIN,
                   lambda: sim.op(["aten::stack", "aten::cat"], MAIN))  # the collate, on the CPU
    box = []
    sim.op(["aten::to", "aten::_to_copy", "aten::empty_strided"], MAIN,
           lambda: box.append(sim.alloc(nbytes, "input")))
    sim.op(["aten::copy_"], MAIN)
    if state.get("input"):
        sim.free(state["input"])
    state["input"] = box[0]


def forward(sim, keep=True, checkpoint=False):
    """Each layer: a workspace freed inside its op, an intermediate freed in
    the next op (temporaries), and its output kept for backward (activation)
    unless no_grad or checkpointed."""
    sim.enter("forward")
    saved = []
    prev = None
    for i, (_, act) in enumerate(LAYERS):
        sim.temp_op(["aten::linear", "aten::addmm", "aten::empty"], 3 * MiB)
        box = []
        category = "activation" if keep and not (checkpoint and i > 0) else "temporary"

        def layer(act=act, category=category, box=box):
            sim.op(["aten::linear", "aten::addmm"], MAIN,
                   lambda: box.append(sim.alloc(act, category)))
        if MODULES:
            sim.module_call("Linear_%d" % i, MAIN, layer)
        else:
            layer()
        if prev is not None and prev["category"] == "temporary":
            sim.free(prev)
        prev = box[0]
        saved.append(box[0])
    if prev["category"] == "temporary":
        loss_src = prev
    else:
        loss_src = None
    box = []
    sim.op(["aten::mse_loss"], MAIN, lambda: box.append(
        sim.alloc(512, "activation" if keep else "temporary")))
    if loss_src is not None:
        sim.free(loss_src)
    if not keep:
        sim.free(box[0])
        return []
    return [a for a in saved if a["category"] == "activation"] + box


def backward(sim, params, saved, grads, checkpoint=False):
    """On autograd's thread: per layer, the weight's gradient (kept until
    zero_grad, or added in place and freed when one exists), the input's
    gradient (freed by the next layer: temporary), the saved activation
    freed. Checkpointing recomputes a layer's output first (temporary)."""
    t = AUTOGRAD
    sim.enter("backward")
    sim.op(["autograd::engine::evaluate_function: MseLossBackward0", "MseLossBackward0"], t,
           lambda: None)
    sim.free(saved.pop(), t)  # the loss
    grad_in = None
    for i in reversed(range(len(LAYERS))):
        w, act = LAYERS[i]
        recomputed = []
        if checkpoint and i > 0:
            sim.op(["autograd::engine::evaluate_function: CheckpointFunctionBackward",
                    "CheckpointFunctionBackward", "aten::addmm"], t,
                   lambda act=act: recomputed.append(sim.alloc(act, "temporary", t)))
        box = []

        def grads_of_layer(box=box, w=w, i=i):
            box.append(sim.alloc(w, "gradient" if grads[i] is None else "temporary", t))
            box.append(sim.alloc(LAYERS[i][1] // 2, "temporary", t))
        sim.op(["autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0",
                "aten::mm"], t, grads_of_layer)
        if grad_in is not None:
            sim.free(grad_in, t)
        grad_w, grad_in = box
        for r in recomputed:
            sim.free(r, t)
        if not checkpoint or i == 0:
            kept = saved.pop()
            if not (LEAK and i == len(LAYERS) - 1):
                sim.free(kept, t)

        def accumulate(i=i, grad_w=grad_w):
            if grads[i] is None:
                grads[i] = grad_w  # stolen: AccumulateGrad keeps it as .grad
            else:
                sim.tick()
                sim.free(grad_w, t)  # added in place into .grad
        sim.op(["autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
                "torch::autograd::AccumulateGrad"], t, accumulate)
    sim.free(grad_in, t)


def zero_grad(sim, grads):
    def body():
        for i, g in enumerate(grads):
            if g is not None:
                sim.free(g)
                grads[i] = None
    sim.enter("zero_grad")
    sim.annotation("Optimizer.zero_grad#Adam.zero_grad", MAIN, body)


def adam_step(sim, params, state):
    """Adam's exp_avg and exp_avg_sq are created by the first step and kept;
    each step's intermediate (the denominator) is freed within it."""
    def body():
        if not state.get("adam"):
            state["adam"] = []
            for p in params:
                for _ in range(2):
                    sim.op(["aten::zeros_like", "aten::empty_like", "aten::empty_strided"], MAIN,
                           lambda p=p: state["adam"].append(
                               sim.alloc(p["bytes"], "optimizer_state")))
        box = []
        sim.op(["aten::_foreach_sqrt"], MAIN,
               lambda: box.extend(sim.alloc(p["bytes"], "temporary") for p in params))
        sim.op(["aten::_foreach_addcdiv_"], MAIN)
        for a in box:
            sim.free(a)
    sim.enter("optimizer")
    sim.annotation("Optimizer.step#Adam.step", MAIN, body)


def step(sim, number, body):
    sim.step = number
    sim.annotation("ProfilerStep#%d" % number, MAIN, body)
    sim.step = None


def training(sim, steps=4, checkpoint=False, micro=1):
    params = make_params(sim)
    grads = [None] * len(LAYERS)
    state = {}

    def one(n):
        def body():
            for _ in range(micro):
                load_batch(sim, state)
                saved = forward(sim, checkpoint=checkpoint)
                backward(sim, params, saved, grads, checkpoint=checkpoint)
            adam_step(sim, params, state)
            zero_grad(sim, grads)
        step(sim, n, body)
    for n in range(1, steps + 1):
        one(n)


def inference(sim, steps=4, grad=False):
    """grad: without no_grad, each forward keeps its activations for an
    autograd graph that only dies when the next step replaces it."""
    make_params(sim)
    state = {}

    def one(n):
        def body():
            load_batch(sim, state)
            if grad:
                sim.enter("forward")
                for a in state.pop("graph", []):
                    sim.free(a)
            kept = forward(sim, keep=grad)
            if grad:
                state["graph"] = kept
        step(sim, n, body)
    for n in range(1, steps + 1):
        one(n)


SCENARIOS = {
    "training": lambda s: training(s),
    "inference": lambda s: inference(s),
    "checkpointing": lambda s: training(s, checkpoint=True),
    "accumulation": lambda s: training(s, micro=3),
    # For tests/advice.sh: eval without no_grad; long sequences in layers
    # that are nn.Modules; a graph kept from step to step.
    "inference-grad": lambda s: inference(s, grad=True),
    "wide-modules": lambda s: training(s),
    "leaky": lambda s: training(s, steps=6),
}


def configure(name):
    """Module switches of the scenarios that need them."""
    global LAYERS, MODULES, LEAK
    if name == "wide-modules":
        LAYERS, MODULES = WIDE, True
    LEAK = name == "leaky"


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in SCENARIOS:
        sys.exit("usage: gen-scenarios.py %s TRACE.json TRUTH.json" % "|".join(SCENARIOS))
    sim = Sim(preexisting=50 * MiB)
    configure(sys.argv[1])
    SCENARIOS[sys.argv[1]](sim)
    with open(sys.argv[2], "w") as f:
        json.dump(sim.trace(), f, indent=1)
    with open(sys.argv[3], "w") as f:
        json.dump({"preexisting_bytes": sim.preexisting, "allocations": sim.allocs,
                   "timeline": sim.timeline, "phases": sim.phases, "autograd_tid": AUTOGRAD, "main_tid": MAIN}, f)


if __name__ == "__main__":
    main()
