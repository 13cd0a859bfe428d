# tests/by-module.sh runs this: VRAMREPORT REALDATA-DIR. What was live at
# the peak by module (devices[].peak_by_module), on the real traces
# recorded with with_modules and the real snapshots with frames, against
# oracle.py's reading of each file; and on a snapshot written here, whose
# figures follow from how it is built. One PASS/FAIL line per check.
import json
import os
import pickle
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from oracle import want  # noqa: E402
from vrtest import human_bytes  # noqa: E402

VR, REAL = sys.argv[1], sys.argv[2]
GiB, MiB = 1 << 30, 1 << 20
SEP = " \u203a "


def result(cond, what, got=None):
    print("%s\t%s%s" % ("PASS" if cond else "FAIL", what, "" if cond else "\tgot: %r" % (got,)))


def report(name, path, fmt):
    out = "%s.%s" % (name, fmt)
    p = subprocess.run([VR, path, "-q", "-o", out, "--db", name + ".db"], capture_output=True, text=True)
    if p.returncode != 0:
        result(False, "%s: reported as %s" % (name, fmt), p.stderr)
        return None
    with open(out, encoding="utf-8") as f:
        return json.load(f) if fmt == "json" else f.read()


def md_text(s):
    """A text as the Markdown escapes it (the characters these files hold)."""
    for c in "\\`*_[]<>|#":
        s = s.replace(c, "\\" + c)
    return s


def compare(name, kind, path):
    for ext in ("db", "json", "md", "html"):
        if os.path.exists("%s.%s" % (name, ext)):
            os.remove("%s.%s" % (name, ext))
    w = want(kind, path)
    d = report(name, path, "json")
    if d is None:
        return None, None, w
    dev = d["devices"][0]
    for k, v in (("peak_by_module", []), ("peak_by_module_more", None), ("peak_by_module_outside", None),
                 ("peak_by_module_unrecorded_bytes", None), ("peak_by_module_named_by", None)):
        dev.setdefault(k, v)  # absent: each check below fails, none crashes
    got = [{"module": r["module"], "own": r["own"], "bytes": r["bytes"], "count": r["count"]}
           for r in dev["peak_by_module"]]
    result(got == w["rows"], "%s: the modules at the peak, rolled up, as the file says them" % name,
           (got, w["rows"]))
    result(dev["peak_by_module_more"] == w["more"], "%s: the modules past the tenth, summed" % name,
           (dev["peak_by_module_more"], w["more"]))
    out = dev["peak_by_module_outside"]
    result(out is not None and (out["bytes"], out["count"]) == (w["outside"]["bytes"], w["outside"]["count"]),
           "%s: what was live in no module" % name, (out, w["outside"]))
    result(dev["peak_by_module_unrecorded_bytes"] == w["unrecorded"],
           "%s: the peak no allocation accounts for (live before the record)" % name,
           (dev["peak_by_module_unrecorded_bytes"], w["unrecorded"]))
    total = sum(r["bytes"] for r in dev["peak_by_module"]) + (dev["peak_by_module_more"] or {}).get("bytes", 0) \
        + (out or {}).get("bytes", 0) + (dev["peak_by_module_unrecorded_bytes"] or 0)
    result(total == dev["peak_allocated_bytes"] == w["peak"],
           "%s: modules, the rest, no module and before the record sum to the peak" % name,
           (total, dev["peak_allocated_bytes"], w["peak"]))
    bad = [r for r in dev["peak_by_module"] if sum(r["categories"].values()) != r["bytes"]]
    result(not bad and bool(dev["peak_by_module"]) == bool(w["rows"]),
           "%s: each module's categories sum to its bytes" % name, bad)
    result(dev["peak_by_module_named_by"] == ("with_modules" if kind == "trace" else "forward_frames"),
           "%s: how the modules are named" % name, dev["peak_by_module_named_by"])
    md = report(name, path, "md")
    if md is not None and w["rows"]:
        r = w["rows"][0]
        shown = r["module"].replace(".", SEP) if kind == "trace" else r["module"]
        row = "| %s%s | %s |" % (md_text(shown), " (outside its submodules)" if r["own"] else "",
                                 human_bytes(r["bytes"]))
        result(row in md and "Which part of the model held it" in md,
               "%s: the Markdown's by-module table names the largest" % name, row)
    return dev, md, w


# 1. The real traces recorded with with_modules.
kineto = os.path.join(REAL, "kineto")
for f in ("qwen1.5-0.5b", "owlv2-large", "bert-small"):
    dev, md, w = compare(f, "trace", os.path.join(kineto, "tracelens-h100-%s.json.gz" % f))
    if f == "qwen1.5-0.5b" and dev:
        # An expert reads a decoder by its layers: every row is one.
        layers = [r["module"].split(".") for r in dev["peak_by_module"]]
        result(len(layers) == 10 and all(len(p) == 2 and p[1].startswith("Qwen2DecoderLayer_") for p in layers),
               "qwen1.5-0.5b: the rows are the decoder's layers, not their Linears", layers)

# 2. The real snapshots with frames.
snap = os.path.join(REAL, "snapshot")
for f in ("cs336-silmont-forward-bf16", "cs336-magma27-training", "cs336-bcrafton",
          "flexgen-opt1.3b-noframes"):
    dev, md, w = compare(f, "snapshot", os.path.join(snap, f + ".pickle"))
    if dev and f == "cs336-magma27-training":
        # live_at_peak_groups places a snapshot's allocations in modules too.
        placed = sum(m["bytes"] for c in dev["live_at_peak_groups"] for m in c["modules"] if m["module"])
        inmods = sum(r["bytes"] for r in w["rows"]) + (w["more"] or {}).get("bytes", 0)
        result(placed > 0 and placed <= inmods and
               all(SEP in m["module"] or m["module"].count(":") == 1
                   for c in dev["live_at_peak_groups"] for m in c["modules"] if m["module"]),
               "%s: live_at_peak_groups names the snapshot's modules" % f, (placed, inmods))

# 3. A snapshot written here: a model's forward (top.py:5) calling a block
# twice (blk.py:7, blk.py:8) whose Linear (torch's, linear.py:125) holds
# most; the block of line 7 allocates 1 GiB itself; a compiled region's
# forward (torch/_functorch) is no module; an allocation in use since
# before the record (no entry made it) under a forward whose file name
# has markup; and 512 MiB outside any forward.
TORCH = "/usr/lib/python3/site-packages/torch/"
CALL = [{"name": "_call_impl", "filename": TORCH + "nn/modules/module.py", "line": 1747},
        {"name": "_wrapped_call_impl", "filename": TORCH + "nn/modules/module.py", "line": 1736}]


def fw(path, line):
    return [{"name": "forward", "filename": path, "line": line}] + CALL


MAIN = [{"name": "main", "filename": "/home/u/train.py", "line": 90}]
LIN = fw(TORCH + "nn/modules/linear.py", 125)
AOT = [{"name": "forward", "filename": TORCH + "_functorch/aot_autograd.py", "line": 1148}]
TOP = fw("/home/u/top.py", 5) + MAIN
allocs = [
    (1 * GiB, fw("/home/u/blk.py", 7) + TOP),
    (3 * GiB, AOT + LIN + fw("/home/u/blk.py", 7) + TOP),
    (2 * GiB, LIN + fw("/home/u/blk.py", 8) + TOP),
    (512 * MiB, MAIN),
]
before = (1 * GiB, fw("/home/u/<b>net|x.py", 10) + TOP)
segs, trace, t = [], [], 1700000000000000
for i, (size, frames) in enumerate(allocs + [before]):
    addr = (1 << 40) + i * (1 << 34)
    segs.append({"device": 0, "address": addr, "total_size": size, "allocated_size": size,
                 "active_size": size, "requested_size": size, "stream": 0, "segment_type": "large",
                 "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
                 "blocks": [{"address": addr, "size": size, "requested_size": size,
                             "state": "active_allocated", "frames": frames}]})
    if i < len(allocs):
        trace.append({"action": "alloc", "addr": addr, "size": size, "stream": 0, "time_us": t + i,
                      "frames": frames})
with open("made.pickle", "wb") as f:
    pickle.dump({"segments": segs, "device_traces": [trace],
                 "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": ""}}, f, protocol=4)
dev, md, w = compare("made", "snapshot", "made.pickle")
if dev:
    rows = {(r["module"], r["own"]): r for r in dev["peak_by_module"]}
    want_rows = {
        ("top.py:5" + SEP + "blk.py:7", True): 1 * GiB,
        ("top.py:5" + SEP + "blk.py:7" + SEP + "linear.py:125", False): 3 * GiB,
        ("top.py:5" + SEP + "blk.py:8", False): 2 * GiB,
        ("top.py:5" + SEP + "<b>net|x.py:10", False): 1 * GiB,
    }
    result({k: r["bytes"] for k, r in rows.items()} == want_rows,
           "made: a module holding most is shown by its submodules and its own row; torch's Linear "
           "is a module, a compiled region's forward is not", sorted(rows))
    b = rows.get(("top.py:5" + SEP + "<b>net|x.py:10", False))
    result(b is not None and b["categories"] == {"activation": GiB} and dev["peak_breakdown"]["activation"] >= GiB,
           "made: the block in use since before the record counts, in the category the breakdown gives it",
           b and b["categories"])
    result((dev["peak_by_module_outside"] or {}).get("bytes") == 512 * MiB and dev["peak_by_module_unrecorded_bytes"] == 0,
           "made: 512 MiB in no module, nothing unrecorded", dev["peak_by_module_outside"])
    result(dev.get("live_at_peak_grouped_bytes") == 7 * GiB + 512 * MiB and
           any(m["module"] == "top.py:5" + SEP + "<b>net|x.py:10" and m["bytes"] == GiB
               for c in dev["live_at_peak_groups"] for m in c["modules"]),
           "made: live_at_peak_groups counts the block in use before the record, in its module",
           dev.get("live_at_peak_grouped_bytes"))
    html = report("made", "made.pickle", "html")
    result(md is not None and "\\<b\\>net\\|x.py:10" in md and "<b>" not in md.split("Which part")[1],
           "made: a file name with markup is escaped in the Markdown", md and md[-800:])
    result(html is not None and "&lt;b&gt;net|x.py:10" in html and "<b>net" not in html,
           "made: and in the HTML")

# 4. A trace without modules: no table.
d = report("tiny", os.path.join(os.path.dirname(REAL), "..", "cli", "data", "tiny.pt.trace.json"), "md")
result(d is not None and "Which part of the model" not in d, "a trace without modules has no by-module table")
