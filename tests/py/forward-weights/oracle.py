"""The weights one forward reads, from a trace's JSON alone: each op that
reads weights (by PyTorch's ATen schemas), its weight operands' bytes
from "Input Dims" x the dtype's size; an op inside another such op on
its thread is not counted; each op belongs to the innermost "nn.Module: "
call enclosing it in time; per module instance the call that read the
most, once; ops outside modules only in the first ProfilerStep (or the
whole trace). Prints one line of figures, or the per-op rows (ops).

    oracle.py forward TRACE    ->  key=value ... (forward_weights' columns)
    oracle.py ops TRACE        ->  name<TAB>ts_ns<TAB>bytes<TAB>tensors<TAB>buffer<TAB>uncounted
    oracle.py before TRACE     ->  what was allocated before the first memory event
"""
import gzip, json, sys
from decimal import Decimal

# op name: (weight places, buffer places), from native_functions.yaml
PLACES = {
    "aten::linear": ((1, 2), ()),
    "aten::conv1d": ((1, 2), ()), "aten::conv2d": ((1, 2), ()), "aten::conv3d": ((1, 2), ()),
    "aten::convolution": ((1, 2), ()), "aten::_convolution": ((1, 2), ()),
    "aten::conv_transpose1d": ((1, 2), ()), "aten::conv_transpose2d": ((1, 2), ()),
    "aten::conv_transpose3d": ((1, 2), ()),
    "aten::embedding": ((0,), ()), "aten::embedding_bag": ((0,), ()),
    "aten::layer_norm": ((2, 3), ()), "aten::group_norm": ((2, 3), ()),
    "aten::rms_norm": ((2,), ()),
    "aten::batch_norm": ((1, 2), (3, 4)), "aten::instance_norm": ((1, 2), (3, 4)),
}
SIZE = {"float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "c10::Float8_e4m3fn": 1,
        "c10::Float8_e5m2": 1, "long int": 8, "int": 4, "bool": 1, "signed char": 1,
        "unsigned char": 1, "short int": 2}
MAX = 2**63 - 1


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as fh:
        return json.load(fh)["traceEvents"]


def ns(v):
    d = Decimal(str(v)) * 1000
    return int(d.to_integral_value(rounding="ROUND_HALF_UP"))


def operand(dims, strides, dtype):
    """(bytes, ok) of one present operand; ok False: not counted."""
    size = SIZE.get(dtype)
    if not size:
        return 0, "dtype"
    if not isinstance(dims, list) or not all(
            isinstance(d, (int, float)) and not isinstance(d, bool) and d >= 0
            and float(d).is_integer() for d in dims):
        return 0, "dims"
    dims = [int(d) for d in dims]
    n = 1
    for i, d in enumerate(dims):
        st = strides[i] if isinstance(strides, list) and i < len(strides) else 1
        n *= 1 if (st == 0 and d > 0) else d
    return min(n, MAX) * size, None


def op_row(e):
    a = e.get("args", {})
    dims, types, strides = a.get("Input Dims"), a.get("Input type"), a.get("Input Strides")
    weights, buffers = PLACES[e["name"]]
    row = {"bytes": 0, "tensors": 0, "buffer": 0, "uncounted": 0, "weight_bytes": None,
           "shape": None, "sat": False}
    if not isinstance(dims, list) or not isinstance(types, list):
        row["uncounted"] = 1
        return row
    for i in sorted(weights + buffers):
        if i >= len(dims) or i >= len(types):
            break
        t = types[i]
        if not isinstance(t, str):
            row["uncounted"] += 1
            continue
        if t == "":
            continue
        st = strides[i] if isinstance(strides, list) and i < len(strides) else None
        b, bad = operand(dims[i], st, t)
        if bad:
            row["uncounted"] += 1
            continue
        if b >= MAX:
            row["sat"] = True
        if i in buffers:
            row["buffer"] = min(row["buffer"] + b, MAX)
            continue
        if row["tensors"] == 0 and row["uncounted"] == 0 and i == weights[0]:
            row["weight_bytes"] = b
            row["shape"] = "%s[%s]" % (t, ",".join(str(d) for d in dims[i]))
        row["tensors"] += 1
        row["bytes"] = min(row["bytes"] + b, MAX)
    return row


def weight_ops(events):
    out = []
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e.get("name") in PLACES \
                and "Input Dims" in e.get("args", {}):
            r = op_row(e)
            if r["tensors"] or r["uncounted"]:
                r.update(name=e["name"], thread=(e.get("pid"), e.get("tid")),
                         ts=ns(e["ts"]), end=ns(e["ts"]) + ns(e.get("dur", 0)))
                out.append(r)
    return out


def forward(events):
    ops = weight_ops(events)
    mods = [(e["pid"], e["tid"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"], k)
            for k, e in enumerate(events)
            if e.get("cat") == "python_function" and e.get("name", "").startswith("nn.Module: ")]
    # Not nested: no other weight op of the thread encloses it (of two
    # identical ones, the first in the file encloses the second).
    for k, o in enumerate(ops):
        o["order"] = (o["ts"], -o["end"], k)
    # (The same tests, each over its own thread's ops and modules only.)
    ops_of, mods_of = {}, {}
    for o in ops:
        ops_of.setdefault(o["thread"], []).append(o)
    for m in mods:
        mods_of.setdefault((m[0], m[1]), []).append(m)
    top = [o for o in ops
           if not any(p is not o and p["ts"] <= o["ts"]
                      and p["end"] >= o["end"] and p["order"] < o["order"]
                      for p in ops_of[o["thread"]])]
    calls = {}
    outside = []
    for o in top:
        inside = [m for m in mods_of.get(o["thread"], []) if m[2] <= o["ts"]
                  and m[3] >= o["ts"]]
        if not inside:
            outside.append(o)
            continue
        m = max(inside, key=lambda m: (m[2], -m[3]))
        calls.setdefault(m[4], {}).setdefault(m[5], []).append(o)
    counted = []
    for inst, by_call in calls.items():
        best = max(by_call.values(), key=lambda c: sum(o["bytes"] for o in c))
        counted += best
    steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events
                   if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
    lo, hi = steps[0] if steps else (-2**63, 2**63 - 1)
    counted += [o for o in outside if lo <= o["ts"] <= hi]
    tied = 0
    shapes = {}
    for o in counted:
        if o["shape"]:
            s = shapes.setdefault(o["shape"], [0, 0, o["weight_bytes"]])
            s[0] += o["name"] in ("aten::embedding", "aten::embedding_bag")
            s[1] += o["name"] == "aten::linear"
    for ne, nl, wb in shapes.values():
        if ne == nl:
            tied += nl * wb
    where = "module" if not any(o in outside for o in counted) else None
    return {"bytes": min(sum(o["bytes"] for o in counted), MAX),
            "tensors": sum(o["tensors"] for o in counted),
            "buffer_bytes": min(sum(o["buffer"] for o in counted), MAX),
            "uncounted": sum(o["uncounted"] for o in counted),
            "tied_candidate_bytes": tied, "ops": len(counted), "reads": len(top),
            "modules": len(calls), "how": where or ("module+" if calls else "") + "window"}


def before(events):
    mem = [e for e in events if e.get("name") == "[memory]"
           and e.get("args", {}).get("Device Type", 0) != 0]
    first = min(mem, key=lambda e: ns(e["ts"]))["args"]
    return first["Total Allocated"] - first["Bytes"]


if __name__ == "__main__":
    what, path = sys.argv[1], sys.argv[2]
    ev = load(path)
    if what == "forward":
        f = forward(ev)
        print(" ".join("%s=%s" % (k, f[k]) for k in sorted(f)))
    elif what == "ops":
        for r in sorted(weight_ops(ev), key=lambda r: (r["ts"], r["name"])):
            print("%s\t%d\t%d\t%d\t%d\t%d" % (r["name"], r["ts"], r["bytes"], r["tensors"],
                                            r["buffer"], r["uncounted"]))
    elif what == "before":
        print(before(ev))
