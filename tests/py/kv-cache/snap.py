# tests/kv-cache.sh runs this: VRAMREPORT. An allocator snapshot of an
# inference run written here with pickle (the layout
# torch.cuda.memory._snapshot() dumps), its allocations' stacks built of
# the frames the servers' own sources have where they allocate their KV
# caches (docs/categories.md names each one's source): vLLM's V0 cache
# engine, V1's GPU model runner (and its newer utils), SGLang's memory
# pool, Hugging Face's cache layers inside a model's forward in
# generate(); beside them weights loaded by vLLM's load_weights, an
# activation of vLLM's attention forward, and look-alikes that are no
# cache (a user's own cache_utils.py). What is a KV cache is decided here
# by this file's own reading of each stack (its innermost frame that is a
# cache's, a forward or a weight loader), and the peak's kv_cache bytes
# computed from the trace; vramreport's breakdown, allocation rows and
# report must agree. Then --category-rules: kv_cache accepted, a wrong
# name refused with the list. One PASS/FAIL line per check.
import json
import os
import pickle
import re
import sqlite3
import subprocess
import sys

VR = sys.argv[1]
MiB = 1 << 20
T0 = 1700000000000000
SITE = "/opt/venv/lib/python3.11/site-packages/"
TORCH = SITE + "torch/"
MODULE = TORCH + "nn/modules/module.py"
USER = "/home/u/serve.py"


def py(name, filename, line=1):
    return {"name": name, "filename": filename, "line": line}


ALLOC = [{"name": "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)",
          "filename": "??", "line": 0}]
CALL = [py("_call_impl", MODULE, 1747), py("_wrapped_call_impl", MODULE, 1736)]
V0 = SITE + "vllm/worker/"
V1 = SITE + "vllm/v1/worker/"
SGL = SITE + "sglang/srt/"
HF = SITE + "transformers/"
LLAMA = HF + "models/llama/modeling_llama.py"

STACKS = {
    # vLLM V0: CacheEngine.__init__ -> _allocate_kv_cache, a torch.zeros a layer
    "vllm-v0-cache": [py("_allocate_kv_cache", V0 + "cache_engine.py", 92),
                      py("__init__", V0 + "cache_engine.py", 68),
                      py("_init_cache_engine", V0 + "worker.py", 320),
                      py("initialize_cache", V0 + "worker.py", 300), py("main", USER, 9)],
    # vLLM V1: initialize_kv_cache -> initialize_kv_cache_tensors -> _allocate_kv_cache_tensors
    "vllm-v1-cache": [py("_allocate_kv_cache_tensors", V1 + "gpu_model_runner.py", 3760),
                      py("initialize_kv_cache_tensors", V1 + "gpu_model_runner.py", 3900),
                      py("initialize_kv_cache", V1 + "gpu_model_runner.py", 3950),
                      py("initialize_from_config", V1 + "gpu_worker.py", 290), py("main", USER, 9)],
    # vLLM V1, newer: initialize_kv_cache_tensors -> utils.allocate_kv_cache
    "vllm-v1-utils-cache": [py("allocate_kv_cache", V1 + "utils.py", 210),
                            py("initialize_kv_cache_tensors", V1 + "gpu_model_runner.py", 6120),
                            py("initialize_kv_cache", V1 + "gpu_model_runner.py", 6190),
                            py("main", USER, 9)],
    # SGLang: a list comprehension (no role) inside MHATokenToKVPool._create_buffers
    "sglang-cache": [py("<listcomp>", SGL + "mem_cache/memory_pool.py", 243),
                     py("_create_buffers", SGL + "mem_cache/memory_pool.py", 241),
                     py("__init__", SGL + "mem_cache/memory_pool.py", 226),
                     py("init_memory_pool", SGL + "model_executor/model_runner.py", 900),
                     py("main", USER, 9)],
    # HF generate(): DynamicLayer.update's torch.cat, inside the attention's forward
    "hf-dynamic-cache": [py("update", HF + "cache_utils.py", 120), py("update", HF + "cache_utils.py", 776),
                         py("forward", LLAMA, 260)] + CALL + [py("forward", LLAMA, 300)] + CALL +
                        [py("generate", HF + "generation/utils.py", 2400), py("main", USER, 20)],
    # HF StaticLayer.lazy_initialization's torch.zeros, from update, in a forward
    "hf-static-cache": [py("lazy_initialization", HF + "cache_utils.py", 290),
                        py("update", HF + "cache_utils.py", 330), py("forward", LLAMA, 260)] + CALL +
                       [py("generate", HF + "generation/utils.py", 2400), py("main", USER, 20)],
    # no cache: vLLM's weights, its attention's forward, a user's own cache_utils.py
    "vllm-weights": [py("weight_loader", SITE + "vllm/model_executor/layers/linear.py", 400),
                     py("load_weights", SITE + "vllm/model_executor/models/llama.py", 500),
                     py("load_model", V1 + "gpu_model_runner.py", 2000), py("main", USER, 5)],
    "vllm-attention": [py("forward", SITE + "vllm/attention/layer.py", 250)] + CALL +
                      [py("forward", SITE + "vllm/model_executor/models/llama.py", 300)] + CALL +
                      [py("_dummy_run", V1 + "gpu_model_runner.py", 2500), py("main", USER, 7)],
    "user-cache-utils": [py("update", "/home/u/cache_utils.py", 12), py("forward", "/home/u/model.py", 40)] +
                        CALL + [py("main", USER, 30)],
}

# The oracle's reading: a KV cache's frames (file suffix, functions), from
# the servers' sources; a forward; a weight loader. The innermost of
# those decides.
KV_FRAMES = [("vllm/worker/cache_engine.py", {"_allocate_kv_cache"}),
             ("vllm/v1/worker/gpu_model_runner.py", {"initialize_kv_cache", "initialize_kv_cache_tensors",
                                                     "_allocate_kv_cache_tensors", "_reshape_kv_cache_tensors"}),
             ("vllm/v1/worker/utils.py", {"allocate_kv_cache"}),
             ("sglang/srt/mem_cache/memory_pool.py", {"_create_buffers", "__init__"}),
             ("transformers/cache_utils.py", {"update", "lazy_initialization", "__init__"})]


def oracle(frames):
    for f in frames:
        if any(f["filename"].endswith("/" + path) and f["name"] in names for path, names in KV_FRAMES):
            return "kv_cache"
        if f["name"] in ("load_weights", "from_pretrained"):
            return "parameter"
        if f["name"] == "forward" or (f["name"] == "_call_impl" and f["filename"] == MODULE):
            return "activation"
    return "unknown"


# (stack, MiB, freed): the weights first, the caches, then a forward's
# temporary freed before the end; the rest live at the end (the peak).
ALLOCS = [("vllm-weights", 512, False), ("vllm-v0-cache", 96, False), ("vllm-v0-cache", 96, False),
          ("vllm-v1-cache", 160, False), ("vllm-v1-utils-cache", 48, False), ("sglang-cache", 80, False),
          ("hf-dynamic-cache", 6, False), ("hf-dynamic-cache", 7, True), ("hf-static-cache", 24, False),
          ("vllm-attention", 40, True), ("vllm-attention", 12, False), ("user-cache-utils", 5, False)]


def snapshot(allocs):
    segs, trace, t = [], [], T0
    for i, (stack, mib, freed) in enumerate(allocs):
        size, frames, addr = mib * MiB, ALLOC + STACKS[stack], (1 << 40) + i * (1 << 34)
        segs.append({"device": 0, "address": addr, "total_size": size,
                     "allocated_size": 0 if freed else size, "active_size": 0 if freed else size,
                     "requested_size": 0 if freed else size, "stream": 0, "segment_type": "large",
                     "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
                     "blocks": [{"address": addr, "size": size, "requested_size": 0 if freed else size,
                                 "state": "inactive" if freed else "active_allocated",
                                 "frames": [] if freed else frames}]})
        for a in ("segment_alloc", "alloc"):
            trace.append({"action": a, "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": frames})
            t += 1
        if freed:
            for a in ("free_requested", "free_completed"):
                trace.append({"action": a, "addr": addr, "size": size, "stream": 0, "time_us": t,
                              "frames": frames})
                t += 1
    return {"segments": segs, "device_traces": [trace], "allocator_settings": {}}


def peak_live(snap):
    """The allocations live at the trace's highest total (the first of equals)."""
    live, best, at, total = {}, -1, {}, 0
    for e in snap["device_traces"][0]:
        if e["action"] == "alloc":
            live[e["addr"]] = e
            total += e["size"]
        elif e["action"] == "free_completed":
            total -= live.pop(e["addr"])["size"]
        else:
            continue
        if total > best:
            best, at = total, dict(live)
    return best, at.values()


def result(cond, what, got=None):
    print("%s\t%s%s" % ("PASS" if cond else "FAIL", what, "" if cond else "\tgot: %r" % (got,)))


def run(*args):
    p = subprocess.run([VR] + list(args), capture_output=True, text=True)
    return p.returncode, p.stderr


snap = snapshot(ALLOCS)
with open("serve.pickle", "wb") as f:
    f.write(pickle.dumps(snap, protocol=4))
for out in ("serve.db",):
    if os.path.exists(out):
        os.remove(out)
rc, err = run("import", "serve.pickle", "--db", "serve.db", "-q")
rc2, err2 = run("report", "--db", "serve.db", "-f", "json", "-o", "serve.json", "-q")
rc3, err3 = run("report", "--db", "serve.db", "-f", "md", "-o", "serve.md", "-q")
rc4, err4 = run("report", "--db", "serve.db", "-f", "html", "-o", "serve.html", "-q")
result(rc == rc2 == rc3 == rc4 == 0, "the serving snapshot: imported and reported", err + err2 + err3 + err4)

peak, live = peak_live(snap)
want = {}
for e in live:
    c = oracle(e["frames"][len(ALLOC):])
    want[c] = want.get(c, 0) + e["size"]
with open("serve.json") as f:
    dev = json.load(f)["devices"][0]
pb = dev["peak_breakdown"]
result(list(pb)[4:6] == ["activation", "kv_cache"], "peak_breakdown: kv_cache right after activation", list(pb))
result(dev["peak_allocated_bytes"] == peak and sum(pb.values()) == peak,
       "the peak (%d bytes) is the trace's highest total, and the breakdown sums to it" % peak, pb)
result(want.get("kv_cache", 0) > 0 and all(pb.get(c) == want.get(c, 0) for c in ("kv_cache", "parameter", "activation")),
       "at the peak: kv_cache %d, parameter %d, activation %d bytes, as the stacks say"
       % (want.get("kv_cache", 0), want.get("parameter", 0), want.get("activation", 0)), pb)

db = sqlite3.connect("serve.db")
rows = db.execute("SELECT bytes, category, category_rule FROM allocation ORDER BY alloc_ts_ns").fetchall()
expect = [(mib * MiB, oracle(STACKS[s])) for s, mib, _ in ALLOCS]
result(sorted((r[0], r[1]) for r in rows) == sorted(expect),
       "each allocation's category by its innermost role (the 7 caches kv_cache, freed or not)", rows)
result({r[2] for r in rows if r[1] == "kv_cache"} == {"snapshot-kv-cache"},
       "the caches decided by snapshot-kv-cache", rows)
result(db.execute("SELECT bytes FROM peak_category WHERE category = 'kv_cache'").fetchone() == (pb["kv_cache"],),
       "peak_category has the kv_cache row")

md = open("serve.md", encoding="utf-8").read()
share = 100.0 * pb["kv_cache"] / peak
row = re.search(r"^\| kv\\_cache \| ([^|]+) \| ([0-9.]+)% \|$", md, re.M)
result(row and abs(float(row.group(2)) - share) < 0.051,
       "Markdown: a kv_cache row, %.1f%% of the peak" % share, row and row.group(0))
html = open("serve.html", encoding="utf-8").read()
result('class="vr-band vr-cat-kv_cache" fill="#f0e442"' in html and "kv_cache: " in html,
       "HTML: the KV cache's band, in yellow, and its legend")

# --category-rules: kv_cache is a category a rule may name.
with open("mine.rules", "w") as f:
    f.write("role cache frame=update file=*/home/u/cache_utils.py\n"
            "my-cache role=cache -> kv_cache\n"
            "rest -> unknown\n")
rc, err = run("report", "--db", "serve.db", "--category-rules", "mine.rules", "-f", "json", "-o", "mine.json", "-q")
got = sqlite3.connect("serve.db").execute(
    "SELECT category, count(*), sum(bytes) FROM allocation GROUP BY category ORDER BY category").fetchall()
result(rc == 0 and got == [("kv_cache", 1, 5 * MiB), ("unknown", len(ALLOCS) - 1, sum(m for _, m, _ in ALLOCS) * MiB - 5 * MiB)],
       "--category-rules: a rule -> kv_cache takes the user's own cache (5 MiB), the rest unknown", (rc, err, got))
with open("bad.rules", "w") as f:
    f.write("# a typo\nmine op=* -> kvcache\n")
rc, err = run("report", "--db", "serve.db", "--category-rules", "bad.rules", "-f", "json", "-o", "bad.json", "-q")
lines = err.strip().splitlines()
result(rc == 2 and len(lines) == 1 and "bad.rules:2: expected a category after '->' (" in err
       and "activation, kv_cache, gradient" in err and "got 'kvcache'" in err,
       "--category-rules: a wrong name is one line, naming the line and listing kv_cache", (rc, err))
