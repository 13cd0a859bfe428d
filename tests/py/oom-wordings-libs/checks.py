# tests/oom-wordings-libs.sh runs this: VRAMREPORT LOGS-DIR. Each real
# message of another library (tests/data/logs/SOURCES.md) is one OOM event
# with the figures read off it by hand below, and the cause an expert gives.
import json
import os
import sqlite3
import subprocess
import sys
from vrtest import result

VR = sys.argv[1]
LOGS = sys.argv[2]
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def report(path, name):
    db = name + ".db"
    if os.path.exists(db):
        os.remove(db)
    p = subprocess.run([VR, path, "--db", db, "-f", "json", "-o", name + ".json", "-q"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None, None, p.stderr.strip()
    with open(name + ".json") as f:
        return json.load(f), sqlite3.connect(db), ""


COLUMNS = ("requested_bytes", "capacity_bytes", "device_free_bytes", "total_allocated",
           "total_reserved", "allowed_bytes", "device_idx")


def events(db):
    return db.execute("SELECT wording, " + ", ".join(COLUMNS) + " FROM oom_event ORDER BY id"
                      ).fetchall()


def gib(text):
    """A size as the message prints it, two decimals of GiB."""
    return round(float(text) * GiB)


# file, wording, figures (None: the message gives none), device named,
# the cause, words its detail must hold
CASES = [
    ("oom-40", "cuda-driver", {"requested_bytes": 2740606464}, None, "capacity", ["CUDA driver"]),
    # three lines of one retry loop: one OOM, its first request
    ("oom-41", "cuda-driver", {"requested_bytes": 167444480}, None, "capacity", ["nvidia-smi"]),
    ("oom-42", "cupy", {"requested_bytes": 25600000, "total_reserved": 3635267072}, None,
     "capacity", ["CuPy's memory pool"]),
    ("oom-43", "cupy", {"requested_bytes": 1073741824, "total_reserved": 12373894656}, None,
     "capacity", ["CuPy's memory pool"]),
    ("oom-44", "cublas-alloc", {}, None, "insufficient-evidence", ["cuBLAS", "memory_summary()"]),
    ("oom-45", "cudnn-alloc", {}, None, "insufficient-evidence", ["cuDNN", "memory_summary()"]),
    ("oom-46", "nccl", {}, 3, "insufficient-evidence", ["NCCL_DEBUG=INFO"]),
    ("oom-47", "nccl", {}, None, "insufficient-evidence", ["NCCL_DEBUG=INFO"]),
    # shape x sizeof(float)
    # only the request known: the detail claims no tensors filled the device
    ("oom-48", "tf-oom", {"requested_bytes": 128 * 128 * 109 * 109 * 4}, 1, "capacity",
     ["Stats:", "TF_GPU_ALLOCATOR", "what filled it the error does not tell"]),
    ("oom-49", "tf-oom", {"requested_bytes": 16 * 112 * 112 * 147 * 4}, 0, "capacity",
     ["Stats:"]),
    ("oom-50", "tf-oom", {"requested_bytes": 563354 * 256 * 4}, None, "capacity", ["Stats:"]),
    ("oom-51", "tf-bfc", {"requested_bytes": gib("2.20")}, 0, "capacity", ["Stats:"]),
    ("oom-52", "xla", {"requested_bytes": 4770354232}, None, "capacity",
     ["XLA_PYTHON_CLIENT_MEM_FRACTION", "BufferAssignment"]),
    ("oom-53", "xla", {"requested_bytes": 12582912}, None, "capacity",
     ["XLA_PYTHON_CLIENT_PREALLOCATE"]),
    ("oom-54", "xla", {"requested_bytes": 20029400304}, None, "capacity",
     ["XLA_PYTHON_CLIENT_MEM_FRACTION"]),
    # the server's own checks say what ran short: its KV cache's budget
    ("oom-55", "vllm-no-kv-memory", {}, None, "capacity",
     ["preallocates its KV cache", "--gpu-memory-utilization", "start-up memory lines"]),
    ("oom-56", "vllm-kv-too-small", {}, None, "capacity",
     ["preallocates its KV cache", "--max-model-len"]),
    # free 19.77 of 22.05 GiB, 0.9 x 22.05 = 19.84 GiB asked for: 2.28 GiB
    # in use before the engine allocated anything
    ("oom-57", "vllm-startup-free",
     {"requested_bytes": gib("19.84"), "device_free_bytes": gib("19.77"),
      "capacity_bytes": gib("22.05")}, 1, "other-process", ["before vLLM allocated anything"]),
    ("oom-58", "cudaMalloc", {"requested_bytes": 1610612736}, None, "capacity",
     ["own cudaMalloc"]),
    ("oom-59", "cudaMalloc", {"requested_bytes": 536870912}, 1, "capacity", ["own cudaMalloc"]),
    ("oom-60", "vllm-kv-too-small", {"requested_bytes": 16 * GiB}, None, "capacity",
     ["preallocated", "--max-model-len"]),
    # four WARN lines of one failure
    ("oom-61", "nccl", {}, 2, "insufficient-evidence", ["NCCL_DEBUG=INFO"]),
]

for name, wording, figures, device, kind, words in CASES:
    doc, db, err = report(os.path.join(LOGS, name + ".log"), name)
    if doc is None:
        result(False, "%s: a %s OOM is read" % (name, wording), err)
        continue
    rows = events(db)
    want = [(wording,) + tuple(figures.get(c) for c in COLUMNS[:-1]) + (device,)]
    result(rows == want, "%s: one %s OOM, its figures %s, device %s" %
           (name, wording, figures or "none", device), rows)
    found = [(f["kind"], f["detail"]) for f in doc["findings"]]
    kinds = [k for k, _ in found]
    result(kinds[:1] == [kind], "%s: the cause is %s" % (name, kind), kinds)
    detail = found[0][1] if found else ""
    result(all(w in detail for w in words), "%s: the detail says %s" % (name, words), detail)
    result(doc["verdict"]["state"] == "failed", "%s: the verdict is FAILED" % name,
           doc["verdict"]["state"])

# The folded copies are counted (repeated_oom), not lost.
for name, copies in (("oom-41", 2), ("oom-61", 1)):
    try:
        n = sqlite3.connect(name + ".db").execute(
            "SELECT coalesce(sum(count), 0) FROM source_tally WHERE kind = 'repeated_oom'"
        ).fetchone()[0]
    except sqlite3.Error as e:  # no database: the log was not read
        n = str(e)
    result(n == copies, "%s: %d copies of the one failure counted as repeats" % (name, copies), n)

# TensorFlow's whole account of one OOM, in the format strings of
# tensorflow/core/common_runtime/bfc_allocator.cc (its allocator line, its
# dump of chunks: more than the scanner's look-ahead), framework/
# allocator.cc (the stats) and op_kernel.cc (the op's error), then the
# Python exception: one OOM, the op's tensor as the request, Limit as what
# the allocator may use and InUse as allocated.
stamp = "2024-03-12 10:15:%02d.%06d: "
lines = [stamp % (1, 0) + "W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator "
         "(GPU_0_bfc) ran out of memory trying to allocate 1.00GiB (rounded to 1073741824)"
         "requested by op Conv2D"]
lines.append(stamp % (1, 1) + "I tensorflow/core/common_runtime/bfc_allocator.cc:1027] Bin (256): "
             "\tTotal Chunks: 36, Chunks in use: 35. 9.0KiB allocated for chunks. 8.8KiB in use "
             "in bin. 1.1KiB client-requested in use in bin.")
for i in range(4000):
    lines.append(stamp % (2, i) + "I tensorflow/core/common_runtime/bfc_allocator.cc:1066] InUse at "
                 "7f%010x of size 2621440 next %d" % (i * 2621440, i + 1))
lines.append(stamp % (3, 0) + "I tensorflow/core/common_runtime/bfc_allocator.cc:1107] Stats: ")
limit, inuse, maxinuse = 10990990132, 10729615360, 10839941120
for label, v in (("Limit", limit), ("InUse", inuse), ("MaxInUse", maxinuse), ("NumAllocs", 4170),
                 ("MaxAllocSize", 3590324224), ("Reserved", 0), ("PeakReserved", 0),
                 ("LargestFreeBlock", 0)):
    lines.append("%-18s%20d" % (label + ":", v))
lines.append("")
lines.append(stamp % (3, 1) + "W tensorflow/core/common_runtime/bfc_allocator.cc:491] " + "*" * 60)
oom = ("OOM when allocating tensor with shape[16,64,512,512] and type float on "
       "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc")
lines.append(stamp % (3, 2) + "W tensorflow/core/framework/op_kernel.cc:1780] OP_REQUIRES failed at "
             "conv_ops.cc:684 : RESOURCE_EXHAUSTED: " + oom)
lines += ["Traceback (most recent call last):", '  File "train.py", line 12, in <module>',
          "    model.fit(x, y)",
          "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:",
          "", oom,
          "Hint: If you want to see a list of allocated tensors when OOM happens, add "
          "report_tensor_allocations_upon_oom to RunOptions for current allocation info."]
with open("tf-bfc.log", "w") as f:
    f.write("\n".join(lines) + "\n")
result(sum(len(l) + 1 for l in lines[:4003]) > 256 * KiB,
       "tf-bfc: the dump of chunks is longer than the scanner's look-ahead")
doc, db, err = report("tf-bfc.log", "tf-bfc")
if doc is None:
    result(False, "tf-bfc: read", err)
else:
    rows = events(db)
    result(rows == [("tf-oom", 16 * 64 * 512 * 512 * 4, None, None, inuse, None, limit, 0)],
           "tf-bfc: one OOM: the op's tensor (shape x 4 bytes), InUse as allocated, "
           "Limit as allowed, GPU 0", rows)
    kinds = [(f["kind"], f["confidence"]) for f in doc["findings"]]
    # InUse is 97.6 % of the allocator's limit: tensors fill what TF may use
    result(kinds[:1] == [("capacity", "high")] and inuse * 10 >= limit * 9,
           "tf-bfc: tensors filled the allocator's limit: capacity (high)", kinds)

# Lines that mention memory or a failed allocation and are no GPU OOM
# (tests/data/logs/not-oom-libs.log); with a real PyTorch OOM after them
# the log has that one only.
with open("mixed.log", "w") as f:
    f.write(open(os.path.join(LOGS, "not-oom-libs.log")).read())
    f.write(open(os.path.join(LOGS, "oom-12.log")).read())
doc, db, err = report("mixed.log", "mixed")
rows = [r[0] for r in events(db)] if db else err
result(rows == ["current"], "not-oom-libs: no line of it is an OOM (only oom-12's is)", rows)
doc, db, err = report(os.path.join(LOGS, "not-oom-libs.log"), "none")
result(doc is None and "not a recognised input" in err,
       "not-oom-libs: alone, no OOM: not a job log", err or events(db))

# The fold's edges: copies further apart than 200 lines are two failures;
# another error between two copies makes them two; a held allocator line
# another error follows is its own OOM, first.
def line_of(name):
    return open(os.path.join(LOGS, name + ".log")).read().splitlines()[0]


cases = [
    ("far", [line_of("oom-46")] + ["step %d" % i for i in range(201)] + [line_of("oom-46")],
     ["nccl", "nccl"]),
    ("near", [line_of("oom-46")] + ["step %d" % i for i in range(199)] + [line_of("oom-46")],
     ["nccl"]),
    ("between", [line_of("oom-48"), line_of("oom-12"), line_of("oom-48")],
     ["tf-oom", "current", "tf-oom"]),
    ("held", [line_of("oom-51"), "step 1", line_of("oom-12")], ["tf-bfc", "current"]),
]
for name, lines, want in cases:
    with open(name + ".log", "w") as f:
        f.write("\n".join(lines) + "\n")
    doc, db, err = report(name + ".log", name)
    got = [r[0] for r in events(db)] if db else err
    result(got == want, "fold, %s: %s" % (name, want), got)
