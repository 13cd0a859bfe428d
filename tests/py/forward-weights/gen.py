"""A trace written as PyTorch's profiler writes one with record_shapes=True
and with_modules=True, of a small model whose weights are known: two
ProfilerSteps, each one forward, with a module called twice, nested
convolution ops, an LM head tied to the embedding, a broadcast weight
(stride 0), a dtype of unknown size, batch norm running statistics and
an op outside every module. Keys are written in varied orders.

    gen.py OUT [modules|plain|bad]   -> writes OUT, prints the expected figures
"""
import json, random, sys

out, mode = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "modules"
rng = random.Random(7)
events = []
T = 1_700_000_000_000_000  # us


def emit(e):
    keys = list(e)
    rng.shuffle(keys)
    ev = {k: e[k] for k in keys}
    if "args" in ev:
        ak = list(ev["args"])
        rng.shuffle(ak)
        ev["args"] = {k: ev["args"][k] for k in ak}
    events.append(ev)


def op(name, ts, dur, dims, types, strides=None):
    if strides is None and not isinstance(dims, list):
        strides = []
    elif strides is None:
        strides = []
        for d in dims:
            st, acc = [], 1
            for x in reversed(d if isinstance(d, list) else []):
                st.insert(0, acc)
                acc *= x if isinstance(x, int) else 1
            strides.append(st)
    emit({"ph": "X", "cat": "cpu_op", "name": name, "pid": 11, "tid": 11, "ts": ts, "dur": dur,
          "args": {"External id": len(events), "Input Dims": dims, "Input type": types,
                   "Input Strides": strides, "Concrete Inputs": [""] * len(types)}})


def module(name, ts, dur):
    if mode != "plain":
        emit({"ph": "X", "cat": "python_function", "name": "nn.Module: " + name, "pid": 11,
              "tid": 11, "ts": ts, "dur": dur, "args": {"Python id": len(events)}})


BF, F32, HALF = "c10::BFloat16", "c10::Float8_e5m2", "c10::Half"
x = [1, 8, 64]


def forward(t0):
    """One forward at t0 (us); its known weight reads, in order, as
    (instance, bytes, tensors, buffer, uncounted, tied)."""
    reads = []
    module("Net_0", t0 + 10, 880)
    module("Embedding_0", t0 + 20, 40)
    op("aten::embedding", t0 + 25, 25, [[1000, 64], [1, 8], [], [], []],
       [BF, "long int", "Scalar", "Scalar", "Scalar"])
    reads.append(("Embedding_0", 1000 * 64 * 2, 1, 0, 0, "bf[1000,64]"))
    module("Linear_0", t0 + 70, 50)
    op("aten::linear", t0 + 75, 35, [x, [128, 64], [128]], ["float", "float", "float"])
    reads.append(("Linear_0", 128 * 64 * 4 + 128 * 4, 2, 0, 0, None))
    module("Linear_1", t0 + 130, 50)
    op("aten::linear", t0 + 135, 35, [[1, 8, 128], [64, 128], []], ["float", "float", ""])
    reads.append(("Linear_1", 64 * 128 * 4, 1, 0, 0, None))
    module("LayerNorm_0", t0 + 190, 40)
    op("aten::layer_norm", t0 + 195, 30, [x, [], [64], [64], [], []],
       [BF, "ScalarList", BF, BF, "Scalar", "Scalar"])
    reads.append(("LayerNorm_0", 64 * 2 * 2, 2, 0, 0, None))
    module("Conv2d_0", t0 + 240, 60)
    conv = ([[1, 3, 8, 8], [16, 3, 3, 3], [16], [], [], []],
            [HALF, HALF, HALF, "ScalarList", "ScalarList", "ScalarList"])
    op("aten::conv2d", t0 + 245, 50, *conv)
    op("aten::convolution", t0 + 250, 40, *conv)
    op("aten::_convolution", t0 + 255, 30, *conv)
    reads.append(("Conv2d_0", 16 * 27 * 2 + 16 * 2, 2, 0, 0, None))
    module("BatchNorm2d_0", t0 + 310, 40)
    op("aten::batch_norm", t0 + 315, 30, [[1, 16, 6, 6], [16], [16], [16], [16], [], [], [], []],
       ["float", "float", "float", "float", "float", "Scalar", "Scalar", "Scalar", "Scalar"])
    reads.append(("BatchNorm2d_0", 16 * 4 * 2, 2, 16 * 4 * 2, 0, None))
    module("Linear_0", t0 + 410, 40)  # the same instance called again: read once
    op("aten::linear", t0 + 415, 30, [x, [128, 64], [128]], ["float", "float", "float"])
    reads.append(("Linear_0", 128 * 64 * 4 + 128 * 4, 2, 0, 0, None))
    module("Expand_0", t0 + 460, 40)  # a broadcast matrix: 64 distinct elements
    op("aten::linear", t0 + 465, 30, [x, [256, 64], []], ["float", "float", ""],
       [[512, 64, 1], [0, 1], []])
    reads.append(("Expand_0", 64 * 4, 1, 0, 0, None))
    module("Odd_0", t0 + 510, 40)  # a dtype of unknown size: its matrix is not counted
    op("aten::linear", t0 + 515, 30, [x, [8, 64], [8]], ["float", "c10::Weird", "float"])
    reads.append(("Odd_0", 8 * 4, 1, 0, 1, None))
    module("Fp8_0", t0 + 560, 40)
    op("aten::linear", t0 + 565, 30, [x, [32, 64], []], [BF, F32, ""])
    reads.append(("Fp8_0", 32 * 64, 1, 0, 0, None))
    # A position table read by Net_0 itself (no module of its own).
    op("aten::embedding", t0 + 610, 20, [[10, 64], [1, 8], [], [], []],
       ["float", "long int", "Scalar", "Scalar", "Scalar"])
    reads.append(("Net_0", 10 * 64 * 4, 1, 0, 0, "f[10,64]"))
    module("Linear_2", t0 + 640, 50)  # the head, tied to Embedding_0's table
    op("aten::linear", t0 + 645, 40, [x, [1000, 64], []], [BF, BF, ""])
    reads.append(("Linear_2", 1000 * 64 * 2, 1, 0, 0, "bf[1000,64]"))
    # After Net_0: outside every module.
    op("aten::linear", t0 + 900, 20, [[1, 64], [4, 64], [4]], ["float", "float", "float"])
    reads.append((None, 4 * 64 * 4 + 4 * 4, 2, 0, 0, None))
    return reads


def memory(ts, b, total):
    emit({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 11,
          "tid": 11, "ts": ts, "args": {"Device Type": 1, "Device Id": 0, "Addr": 1 << 40,
                                         "Bytes": b, "Total Allocated": total,
                                         "Total Reserved": 1 << 30}})


steps = []
for k in range(2):
    t0 = T + k * 1000
    emit({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (k + 1), "pid": 11,
          "tid": 11, "ts": t0, "dur": 990, "args": {}})
    steps.append(forward(t0))
    memory(t0 + 30, 4096, 300000 + 4096)
    memory(t0 + 980, -4096, 300000)

if mode == "bad":
    t0 = T + 3000
    op("aten::linear", t0, 5, 5, ["float", "float", "float"])  # dims not a list
    op("aten::linear", t0 + 10, 5, [x, "[64, 64]", [64]], ["float", "float", "float"])
    op("aten::linear", t0 + 20, 5, [x, [64, -1], []], ["float", "float", ""])
    op("aten::linear", t0 + 30, 5, [x, [64, [64]], []], ["float", "float", ""])
    op("aten::linear", t0 + 40, 5, [x, [99999999999, 99999999999, 9999999], []],
       ["float", "float", ""])
    op("aten::linear", t0 + 50, 5, [x, [2 ** 70, 3], []], ["float", "float", ""])
    op("aten::layer_norm", t0 + 60, 5, [x, [], [64], [64]], "not a list")
    op("aten::embedding", t0 + 70, 5, [[64, 64], [1]], [7, "long int"])
    op("aten::linear", t0 + 80, 5, [x, [3, 3]], ["float", "float", "float"], "strides?")
    op("aten::linear", t0 + 90, 5, [x], ["float"])  # no weight operand at all: no row
    for _ in range(2):  # one event twice (merged traces): two rows, each its own op
        op("aten::linear", t0 + 100, 5, [x, [2, 64], []], ["float", "float", ""])

if mode == "huge":  # only two ops, each past 2^63 bytes, in no step: their sum saturates
    events = []
    op("aten::linear", T, 5, [x, [2 ** 40, 2 ** 40], []], ["float", "float", ""])
    op("aten::embedding", T + 10, 5, [[2 ** 62, 2], [1]], ["c10::BFloat16", "long int"])
    memory(T + 20, 512, 1024)

with open(out, "w") as fh:
    json.dump({"schemaVersion": 1, "traceEvents": events,
               "deviceProperties": [{"id": 0, "name": "Test GPU", "totalGlobalMem": 1 << 34}]},
              fh)

# What one forward reads, from the construction.
reads = steps[0]
if mode == "plain":
    counted = reads  # the first step, every read (the module called twice counts twice)
else:
    best = {}
    for r in reads:
        if r[0] is None:
            continue
        best.setdefault(r[0], []).append(r)
    counted = [max(v, key=lambda r: r[1]) for v in best.values()]
    counted += [r for r in reads if r[0] is None]
tied = 1000 * 64 * 2
print("bytes=%d tensors=%d buffer_bytes=%d uncounted=%d tied_candidate_bytes=%d ops=%d" % (
    sum(r[1] for r in counted), sum(r[2] for r in counted), sum(r[3] for r in counted),
    sum(r[4] for r in counted), tied, len(counted)))
