# tests/capture-kit.sh runs this.
import glob, hashlib, json, os, re, subprocess, sys

import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import load_pickle

VR, KIT, FAKE, PY = (os.environ[k] for k in ("VRAMREPORT", "KIT", "FAKE_TORCH", "PYTHON"))
BIN = os.path.abspath("bin")
out = open("results.txt", "w")
MIB = 1 << 20

def result(ok, desc, detail=""):
    detail = str(detail).replace("\t", " ").replace("\n", " | ")[:600]
    out.write(("PASS\t%s\n" % desc) if ok else ("FAIL\t%s\t%s\n" % (desc, detail)))

def job(name, code, version="2.5", path_bin=BIN, env=None, torch=True):
    """Runs `code` as a training script in folder `name` with the kit on
    PYTHONPATH (and the stand-in torch unless torch=False)."""
    os.makedirs(name)
    e = {"PATH": path_bin, "PYTHONPATH": KIT + (os.pathsep + FAKE if torch else ""),
         "FAKE_TORCH_VERSION": version, "PYTHONWARNINGS": "default", "LC_ALL": "C",
         "PYTHONDONTWRITEBYTECODE": "1"}  # nothing written into the source tree
    e.update(env or {})
    p = subprocess.run([PY, "-c", code], cwd=name, env=e, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

TRAIN = """
import torch, vramreport_capture as vc
print("enabled", vc.enable(%s))
a = torch.cuda._fake_alloc(100 << 20, ("train.py", 10, "load"))
b = torch.cuda._fake_alloc(300 << 20, ("train.py", 20, "forward"))
torch.cuda._fake_free(a)
for i in range(%d):
    try:
        torch.cuda._fake_alloc(800 << 20, ("train.py", 30, "attention"))
    except torch.cuda.OutOfMemoryError:
        print("caught OOM", i)
print("training goes on")
"""

def folders(name):
    return sorted(glob.glob(os.path.join(name, "vramreport-capture", "*")))

def report(name, target):
    p = subprocess.run([VR, "-q", target, "-o", name + ".json"], capture_output=True, text=True)
    d = json.load(open(name + ".json")) if p.returncode == 0 else None
    return p.returncode, d, p.stderr

# --- torch 2.5: the whole capture, read by vramreport ---------------------
rc, so, se = job("new", TRAIN % ("", 1), env={"RANK": "3", "WORLD_SIZE": "4"})
result(rc == 0 and "training goes on" in so and "enabled True" in so,
       "torch 2.5: enable() is on, the OOM is raised to the job, training goes on", so + se)
result("CaptureWarning" not in se, "torch 2.5: no warning", se)
dirs = folders("new")
result(len(dirs) == 1 and re.search(r"/\d{8}T\d{6}Z-rank3-oom$", dirs[0]) is not None,
       "one folder <time>-rank3-oom", dirs)
d0 = dirs[0] if dirs else "none"
want_files = {"rank3.snapshot.pickle": "snapshot", "rank3.memory_stats.json": "memory_stats",
              "rank3.memory_summary.txt": "memory_summary",
              "rank3.nvidia-smi.txt": "nvsmi_capture"}
got_files = sorted(os.listdir(d0)) if dirs else []
result(got_files == sorted(want_files), "the four files, rank-named, no temporary left",
       got_files)

rc, rep, err = report("new", os.path.join("new", "vramreport-capture"))
result(rc == 0 and rep is not None, "vramreport reads the capture folder (exit 0)", err)
rep = rep or {"sources": [], "unused_inputs": [], "devices": [], "oom_events": [],
              "allocator_stats": [], "gpus": []}
formats = {os.path.basename(s["path"]): s["format"] for s in rep["sources"]}
result(formats == want_files, "every file recognised by its reader", formats)
result(rep["unused_inputs"] == [], "nothing skipped", rep["unused_inputs"])

snap = load_pickle(os.path.join(d0, "rank3.snapshot.pickle")) if dirs else {"segments": [],
                                                                           "device_traces": [[]]}
blocks = [b for s in snap["segments"] for b in s["blocks"]]
allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
reserved = sum(s["total_size"] for s in snap["segments"])
ooms = [e for t in snap["device_traces"] for e in t if e["action"] == "oom"]
dev = [x for x in rep["devices"] if x["id"] == "cuda:0"]
dev = dev[0] if dev else {}
result((dev.get("final_allocated_bytes"), dev.get("final_reserved_bytes")) == (allocated, reserved)
       and allocated == 300 * MIB,
       "snapshot: the end state as the pickle says (%d allocated, %d reserved)" % (allocated, reserved),
       (dev.get("final_allocated_bytes"), dev.get("final_reserved_bytes")))
result(len(ooms) == 1 and [(o["requested_bytes"], o["free_bytes"]) for o in rep["oom_events"]]
       == [(ooms[0]["size"], ooms[0]["device_free"])],
       "snapshot: the OOM the allocator recorded, its request and free bytes",
       (ooms, rep["oom_events"]))
frames = [f for e in snap["device_traces"][0] for f in e["frames"]]
result(frames and all(f["filename"] == "train.py" for f in frames),
       "stacks='python': Python frames only in the history", frames[:3])

stats = json.load(open(os.path.join(d0, "rank3.memory_stats.json"))) if dirs else {}
flat = stats.get("cuda:0", {})
src = [s for s in rep["sources"] if s["format"] == "memory_stats"]
result(stats.get("rank") == 3 and stats.get("world_size") == 4 and src
       and (src[0]["rank"], src[0]["world_size"]) == (3, 4),
       "memory_stats.json: rank 3 of 4, and the source says so", (stats.get("rank"), src))
for fmt in ("memory_stats", "memory_summary"):
    a = [x for x in rep["allocator_stats"] if x["format"] == fmt]
    a = a[0] if a else {}
    keys = [("allocated_bytes_current", "allocated_bytes.all.current"),
            ("allocated_bytes_peak", "allocated_bytes.all.peak"),
            ("reserved_bytes_current", "reserved_bytes.all.current"),
            ("num_ooms", "num_ooms")]
    got = [a.get(k) for k, _ in keys]
    want = [flat.get(k) for _, k in keys]
    result(a.get("device") == 0 and got == want and want[3] == 1,
           "%s: device 0, allocated, peak, reserved and OOMs as memory_stats() said" % fmt,
           (a.get("device"), got, want))
ms = [x for x in rep["allocator_stats"] if x["format"] == "memory_stats"]
result(ms and ms[0]["figures"] == len(flat), "memory_stats: every figure and only them (%d)" % len(flat),
       ms[0]["figures"] if ms else None)

smi = open(os.path.join(d0, "rank3.nvidia-smi.txt")).read().splitlines() if dirs else []
head = [i for i, l in enumerate(smi) if l.startswith("timestamp, index,")]
row = dict(zip([h.split(" [")[0] for h in smi[head[0]].split(", ")],
               smi[head[0] + 1].split(", "))) if head else {}
gpus = rep["gpus"]
result(len(gpus) == 1 and gpus[0]["uuid"] == row.get("uuid") and gpus[0]["name"] == row.get("name")
       and gpus[0]["pci_bus_id"] == row.get("pci.bus_id"),
       "nvidia-smi: the GPU's uuid, name and bus id in gpus[]", (gpus, row))
result(dev.get("smi_match") == "index" and [p.get("pid") for p in dev.get("smi_processes", [])] == [4242],
       "nvidia-smi: the GPU tied to cuda:0 by its index, the job's process on it",
       (dev.get("smi_match"), dev.get("smi_processes")))

# --- two OOMs: two folders, the first untouched ------------------------------
rc, so, se = job("two", TRAIN % ("", 1) + """
import hashlib, glob, os
first = sorted(glob.glob("vramreport-capture/*/*"))
sums = {p: hashlib.sha256(open(p, "rb").read()).hexdigest() for p in first}
try:
    torch.cuda._fake_alloc(900 << 20)
except torch.cuda.OutOfMemoryError:
    pass
print("unchanged", all(hashlib.sha256(open(p, "rb").read()).hexdigest() == s for p, s in sums.items()))
""")
dirs = folders("two")
result(rc == 0 and len(dirs) == 2 and "unchanged True" in so,
       "two OOMs: two folders, the first one's files unchanged", (dirs, so, se))
result(len(set(dirs)) == 2 and all(len(os.listdir(x)) == 4 for x in dirs),
       "two OOMs in one second: the second folder gets its own name (-1)", dirs)
rc, rep2, err = report("two", os.path.join("two", "vramreport-capture"))
result(rc == 0 and len(rep2["sources"]) == 8 and rep2["unused_inputs"] == [],
       "two OOMs: vramreport reads both folders", err)

# --- max_dumps ---------------------------------------------------------------
rc, so, se = job("max", TRAIN % ("max_dumps=1", 3))
result(rc == 0 and len(folders("max")) == 1 and "max_dumps=1 reached" in se
       and so.count("caught OOM") == 3, "max_dumps=1: three OOMs, one dump, a note", (so, se))

# --- no nvidia-smi -------------------------------------------------------------
rc, so, se = job("nosmi", TRAIN % ("", 1), path_bin=os.path.abspath("nobin"))
dirs = folders("nosmi")
files = sorted(os.listdir(dirs[0])) if dirs else []
result(rc == 0 and "training goes on" in so and "nvidia-smi not found" in se
       and len(files) == 3 and not any("nvidia-smi" in f for f in files),
       "no nvidia-smi: a note, the other three files", (files, se))
rc, rep3, err = report("nosmi", os.path.join("nosmi", "vramreport-capture"))
result(rc == 0 and rep3["unused_inputs"] == [] and rep3["gpus"] == [],
       "no nvidia-smi: vramreport reads the rest", err)

# --- torch 2.0: no stacks= ---------------------------------------------------
rc, so, se = job("t20", TRAIN % ("stacks='all'", 1), version="2.0")
dirs = folders("t20")
result(rc == 0 and "enabled True" in so and "stacks='all' not supported" in se,
       "torch 2.0: a warning that stacks='all' is not supported, enable() still on", se)
rc, so, se = job("t20py", "import vramreport_capture as vc; print(vc.enable())", version="2.0")
result(rc == 0 and so.strip() == "True" and "Warning" not in se,
       "torch 2.0 with the default stacks='python': no warning (it records Python stacks)", se)
names = sorted(os.listdir(dirs[0])) if dirs else []
result(any(n.endswith(".snapshot.pickle") for n in names),
       "torch 2.0: the snapshot by pickle.dump(_snapshot()) (no _dump_snapshot)", names)
rc, rep4, err = report("t20", os.path.join("t20", "vramreport-capture"))
snap_src = [s for s in (rep4 or {}).get("sources", []) if s["format"] == "snapshot"]
result(rc == 0 and snap_src and len(rep4["oom_events"]) == 1,
       "torch 2.0: vramreport reads the snapshot and its OOM", err)

# --- torch 1.13: no OOM observer: oom_guard ----------------------------------
rc, so, se = job("t113", """
import torch, vramreport_capture as vc
print("enabled", vc.enable())
try:
    with vc.oom_guard():
        torch.cuda._fake_alloc(2000 << 20)
except torch.cuda.OutOfMemoryError:
    print("caught")
""", version="1.13")
dirs = folders("t113")
result(rc == 0 and "enabled False" in so and "no OOM observer" in se and "caught" in so
       and len(dirs) == 1 and dirs[0].endswith("-oom"),
       "torch 1.13: a warning, oom_guard() dumps and re-raises", (dirs, so, se))
rc, rep5, err = report("t113", os.path.join("t113", "vramreport-capture"))
result(rc == 0 and rep5["unused_inputs"] == [], "torch 1.13: vramreport reads it", err)

# --- a part that fails loses only itself; dump() on demand; pid names ------
rc, so, se = job("fails", """
import torch, vramreport_capture as vc
vc.enable()
torch.cuda._fake_alloc(10 << 20)
print("dumped", vc.dump("after step 1") is not None)
""", env={"FAKE_TORCH_SNAPSHOT_FAILS": "1"})
dirs = folders("fails")
names = sorted(os.listdir(dirs[0])) if dirs else []
result(rc == 0 and "dumped True" in so and "the snapshot failed" in se and len(names) == 3
       and re.search(r"-pid\d+-after-step-1$", dirs[0] if dirs else ""),
       "dump('after step 1'): a failed snapshot is a warning, the other three files stay",
       (dirs, names, se))

# --- torch.distributed gives the rank ---------------------------------------
rc, so, se = job("dist", "import vramreport_capture as vc, torch; vc.enable(); print(vc.dump())",
                 env={"FAKE_TORCH_DIST_RANK": "5", "FAKE_TORCH_DIST_WORLD": "8", "RANK": "1"})
dirs = folders("dist")
st = json.load(open(glob.glob(dirs[0] + "/rank5.memory_stats.json")[0])) if dirs else {}
result(rc == 0 and dirs and dirs[0].endswith("-rank5-manual")
       and (st.get("rank"), st.get("world_size")) == (5, 8),
       "torch.distributed's rank comes before RANK", (dirs, st.get("rank")))

# --- no torch at all -----------------------------------------------------------
rc, so, se = job("notorch", """
import vramreport_capture as vc
print(vc.enable(), vc.dump(), sorted(vc.profiler_kwargs()))
""", torch=False)
result(rc == 0 and so.startswith("False None") and "torch cannot be imported" in se
       and not os.path.exists(os.path.join("notorch", "vramreport-capture")),
       "no torch: the module imports, enable() and dump() warn and return", (so, se))

# --- profiler_kwargs ---------------------------------------------------------
rc, so, se = job("prof", """
import torch, vramreport_capture as vc
kw = vc.profiler_kwargs(trace_dir="vramreport-capture/profiler")
with torch.profiler.profile(**kw) as p:
    pass
print(sorted(p.flags.items()), [a.name for a in p.activities], p.exported)
""", env={"RANK": "2"})
result(rc == 0 and "('profile_memory', True), ('record_shapes', True), ('with_modules', True), "
       "('with_stack', True)" in so and "['CPU', 'CUDA']" in so
       and "('vramreport-capture/profiler', 'rank2', True)" in so,
       "profiler_kwargs(): memory, shapes, stacks, modules; CPU+CUDA; gzip traces per rank",
       so + se)

# --- safe: nothing loads a pickle or opens a socket ---------------------------
src = open(os.path.join(KIT, "vramreport_capture.py")).read()
bad = [w for w in ("pickle.load", "import socket", "urllib", "http.client", "eval(", "exec(")
       if w in src]
result(not bad, "the kit loads no pickle and touches no network", bad)
