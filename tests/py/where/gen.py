# tests/where.sh runs this.
"""Writes a with_stack=True trace: python_function events nested as the
python tracer nests them, cpu_ops inside, memory events under them."""
import json, sys

BASE = 1719853884000000000
PID, MAIN, AUTOGRAD = 4242, 4242, 4250
MIB = 1 << 20

# (name, start_us, end_us, children); a frame's children nest in time.
def f(name, a, b, *kids):
    return (name, a, b, list(kids))

def module_call(cls, a, b, forward, *kids):
    """How a module call appears: Module.__call__'s frame is the module's
    event, then _call_impl, then its forward (torch's own or the user's)."""
    return f("nn.Module: " + cls, a, b,
             f("torch/nn/modules/module.py(1541): _call_impl", a + 0.5, b - 0.5,
               f(forward, a + 1, b - 1, *kids)))

def builtin(name, a, b):
    return f(name, a, b)

TREE = f("train.py(1): <module>", 0, 1000,
         f("train.py(40): train_step", 10, 900,
           module_call("Net_0", 20, 500, "model.py(30): forward",
             module_call("Sequential_0", 30, 200, "torch/nn/modules/container.py(215): forward",
               module_call("Linear_0", 40, 100, "torch/nn/modules/linear.py(116): forward",
                           builtin("<built-in function linear>", 44, 96)),
               module_call("My*Block_0", 105, 135, "blocks.py(12): forward",
                           builtin("<built-in method relu of type object at 0x7f>", 110, 130)),
               module_call("Linear_1", 140, 190, "torch/nn/modules/linear.py(116): forward",
                           builtin("<built-in function linear>", 144, 186))),
             f("model.py(45): helper", 210, 300,
               builtin("<built-in method matmul of type object at 0x7f>", 215, 295)),
             f("/opt/conda/lib/python3.11/site-packages/einops/einops.py(400): rearrange", 310, 320),
             f("model.py(45): helper", 330, 360,
               builtin("<built-in method matmul of type object at 0x7f>", 332, 358))),
           f("train.py(60): make_buffer", 600, 650,
             f("contextlib.py(79): inner", 605, 645)),
           f("my (copy).py(7): run", 800, 850,
             f("C:\\venv\\Lib\\site-packages\\lib\\x.py(3): f", 810, 840))))

# (ts_us, tid, bytes, addr); frees: (ts_us, tid, addr).
ALLOCS = [(50, MAIN, 16 * MIB, 0x1000), (120, MAIN, 16 * MIB, 0x2000),
          (150, MAIN, 4 * MIB, 0x3000), (160, MAIN, 4 * MIB, 0x3800),
          (220, MAIN, 8 * MIB, 0x4000), (315, MAIN, 1 * MIB, 0x5000),
          (340, MAIN, 8 * MIB, 0x5800), (620, MAIN, 32 * MIB, 0x6000),
          (700, AUTOGRAD, 2 * MIB, 0x7000), (820, MAIN, 3 * MIB, 0x7800),
          (950, MAIN, 64 * MIB, 0x8000)]
FREES = [(300, MAIN, 0x3800), (980, MAIN, 0x8000)]

CALL_FROM = len(sys.argv) > 2 and sys.argv[2] == "callfrom"

def call_site(parent, index):
    """Recent PyTorch's "CallFrom": the caller's file and its line at the
    call (here: a few lines into the caller, one per call it makes)."""
    if parent.startswith("nn.Module: "):
        return "torch/nn/modules/module.py:1532"
    file, rest = parent.rsplit("(", 1)
    return "%s:%d" % (file, int(rest.split(")")[0]) + 2 + index)

def events():
    out, ids = [], [0]
    def walk(node, parent, index=0, parent_name=None):
        name, a, b, kids = node
        ids[0] += 1
        me = ids[0]
        args = {"Python id": me, "Python thread": 0}
        if parent:
            args["Python parent id"] = parent
            if CALL_FROM:
                args["CallFrom"] = call_site(parent_name, index)
        if name.startswith("nn.Module: "):
            args["Python module id"] = int(name.rsplit("_", 1)[1])
        out.append({"ph": "X", "cat": "python_function", "name": name, "pid": PID,
                    "tid": MAIN, "ts": "%.3f" % a, "dur": "%.3f" % (b - a), "args": args})
        for i, k in enumerate(kids):
            walk(k, me, i, name)
    walk(TREE, None)
    # cpu_ops inside the built-ins (the analysis's operators)
    for a, b, name in [(45, 95, "aten::linear"), (111, 129, "aten::relu"),
                       (145, 185, "aten::linear"), (216, 294, "aten::matmul"),
                       (333, 357, "aten::matmul")]:
        out.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": PID, "tid": MAIN,
                    "ts": "%.3f" % a, "dur": "%.3f" % (b - a), "args": {"External id": 1}})
    mem = [(t, tid, b, addr) for t, tid, b, addr in ALLOCS] + \
          [(t, tid, None, addr) for t, tid, addr in FREES]
    sizes = {addr: b for _, _, b, addr in ALLOCS}
    total = 0
    for t, tid, b, addr in sorted(mem, key=lambda m: m[0]):
        delta = b if b is not None else -sizes[addr]
        total += delta
        out.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                    "pid": PID, "tid": tid, "ts": "%.3f" % t,
                    "args": {"Total Reserved": 256 * MIB, "Total Allocated": total,
                             "Bytes": delta, "Addr": addr, "Device Id": 0, "Device Type": 1}})
    return out

doc = {"schemaVersion": 1, "with_stack": 1, "with_modules": 1, "profile_memory": 1,
       "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3",
                             "totalGlobalMem": 85520809984}],
       "traceEvents": events(), "baseTimeNanoseconds": BASE}
text = json.dumps(doc, indent=1)
# ts/dur as Kineto writes them: bare numbers with three decimals
text = text.replace('"ts": "', '"ts": ').replace('"dur": "', '"dur": ')
import re
text = re.sub(r'("(?:ts|dur)": [0-9.]+)"', r"\1", text)
open(sys.argv[1], "w").write(text)
