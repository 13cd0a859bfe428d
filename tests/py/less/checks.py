"""tests/less.sh's oracle: each "less to read" point of issue 28 checked on
reports of real inputs. argv: vramreport, the source directory."""
import json
import os
import re
import subprocess
import sys

VR, SRC = sys.argv[1], sys.argv[2]
SNAP = os.path.join(SRC, "tests/data/realdata/snapshot")
LOGS = os.path.join(SRC, "tests/data/logs")


def result(ok, desc, detail=""):
    print(("PASS\t" if ok else "FAIL\t") + desc + (("\t" + detail) if detail and not ok else ""))


def report(name, inputs, fmt="md"):
    out = "%s.%s" % (name, fmt)
    p = subprocess.run([VR] + inputs + ["-o", out], capture_output=True, text=True)
    if p.returncode not in (0, 1, 2) or not os.path.exists(out):
        result(False, "%s: vramreport wrote %s" % (name, out), p.stderr[-400:])
        return ""
    with open(out, encoding="utf-8") as f:
        return f.read()


two = [os.path.join(SNAP, "cs336-bcrafton.pickle"), os.path.join(SNAP, "cs336-magma27-training.pickle")]
md = report("two", two)
js = report("two", two, "json")
doc = json.loads(js) if js else {}

# 1. no 0 B category row; the empty categories named on one line
zero = set()
for dev in doc.get("devices", []):
    for cat, b in (dev.get("peak_breakdown") or {}).items():
        if b == 0:
            zero.add(cat.replace("_", "\\_"))
rows = re.findall(r"^\| ([a-z\\_]+) \| ([^|]+) \| ([^|]+) \|$", md, re.M)
bad = [r for r in rows if r[1].strip() in ("0 B",)]
result(not bad, "no category row holds 0 B", repr(bad))
result(bool(zero) and all(("Nothing in: " in md) and z in "".join(re.findall(r"^Nothing in: .*$", md, re.M)) for z in zero),
       "the empty categories are named on a 'Nothing in:' line", repr(zero))
pct0 = [r for r in rows if r[2].strip() in ("0.0%", "0 %", "0%")]
result(not pct0, "no category beside its bytes shows 0%", repr(pct0))

# 2. the categories' explanation once in a two-device report
n_tables = md.count("| Category | At the peak |")
n_para = md.count("The categories are PyTorch's memory-profiler ones")
result(n_tables == 2 and n_para == 1, "two category tables, the explanation once",
       "tables %d, paragraphs %d" % (n_tables, n_para))

# 3. no Markdown stack line is a frame memory_viz filters
stack_lines = [l for l in md.splitlines() if l.startswith("  - ")]
wrap = [l for l in stack_lines if "threading.py" in l or "_call_impl" in l.replace("\\", "") or "<frozen" in l]
result(stack_lines and not wrap, "no threading.py/_call_impl frame in the Markdown stacks", "\n".join(wrap[:3]))
said = re.findall(r"\d+ frames? left out: ([a-zA-Z' ,+]+)\)", md)
result(said and all(set(k.split(", ")) <= {"threading", "module call wrappers", "CPython internals",
                                          "the allocator's and dispatcher's C++ frames"} for k in said),
       "the stacks say how many frames were left out, and of which kinds", str(said[:3]))
html = report("two", two, "html")
result("_call_impl" in html and "<details" in html, "HTML keeps the full stack behind <details>")

# 4. advice paragraphs once; headlines without cause slugs
for i in range(1, 10):
    log = os.path.join(LOGS, "oom-%02d.log" % i)
    if not os.path.exists(log):
        continue
    m = report("oom%d" % i, [log])
    paras = [p.strip() for p in m.split("\n\n") if len(p.strip()) > 80]
    dup = sorted({p for p in paras if paras.count(p) > 1 and not p.startswith("|")})
    result(not dup, "oom-%02d: no paragraph appears twice" % i, (dup[0][:200] if dup else ""))
    heads = re.findall(r"\*\*[^*]*ran out of memory[^*]*\*\*", m)
    slug = [h for h in heads if re.search(r"\((capacity|fragmentation|other-process|leak|oversized-request|inconsistent|insufficient-evidence)\)", h)]
    result(heads and not slug, "oom-%02d: no cause slug in a headline" % i, repr(slug[:2]))
    j = json.loads(report("oom%d" % i, [log], "json") or "{}")
    for a in j.get("advice", []):
        ev = re.split(r"[_*\\`<>#|\[\]]", a.get("evidence") or "")[0][:60]
        if len(ev) >= 20:
            result(m.count(ev) == 1, "oom-%02d: advice %r written once" % (i, a.get("title")),
                   "%d times: %s" % (m.count(ev), ev))
    kinds = {f.get("kind") for f in j.get("findings", [])}
    result(not kinds or kinds <= {"capacity", "fragmentation", "other-process", "leak", "oversized-request",
                                  "inconsistent", "insufficient-evidence", "near-capacity"} | kinds,
           "oom-%02d: the JSON keeps its kinds" % i)
    result(not re.search(r"lines (\d+)-\1\b", m), "oom-%02d: no 'lines N-N'" % i)

# 5. a one-line memory print reads "line N"
with open("print.log", "w") as f:
    f.write("step 1 torch.cuda.memory_allocated() = 1073741824\n")
m = report("print", ["print.log"])
result(not re.search(r"lines (\d+)-\1\b", m), "a one-line memory print: no 'lines N-N'")

# 6. one gpustat snapshot: one process table
g = report("gpustat", [os.path.join(SRC, "tests/data/gpustat/readme-2017.txt")])
tables = len(re.findall(r"^\| (File \| GPU \| )?PID \| Process \|", g, re.M))
result(tables == 1 and g.count("| python |") + g.count("| matrixMul |") >= 2,
       "one gpustat snapshot: its processes in one table", "tables %d" % tables)

# 7. each explanation once per report: in a report of many devices (every
# real snapshot and trace, 13 devices of snapshots and traces, one 2-GPU),
# no paragraph of more than 80 characters appears twice. Allowed, as they
# say one device's own figures, which two devices may share: a table, the
# empty categories ("Nothing in: ..."), an estimate's figures ("Beside an
# estimate: ...") and the assumptions it was made under ("Assumed: ...",
# whose explanation is said once), and the folder a device's files share
# (said per device when devices differ in it). A later device refers to what was said
# in a line of its own, shorter than 80 characters.
K = os.path.join(SRC, "tests/data/realdata/kineto")
many = [os.path.join(SNAP, f) for f in sorted(os.listdir(SNAP))] + \
    [os.path.join(K, f) for f in sorted(os.listdir(K)) if f.endswith(".json.gz")]
md = report("many", many)
ALLOWED = ("|", "Nothing in: ", "Beside an estimate: ", "Assumed: ",
           "This device's files are named from the folder they share")
paras = [p.strip() for p in re.split(r"\n[ \t]*\n", md) if len(p.strip()) > 80]
dup = sorted({p for p in paras if paras.count(p) > 1 and not p.startswith(ALLOWED)})
result(md.count("\n## ") >= 10 and not dup, "many devices: no paragraph of over 80 characters twice",
       " || ".join(p[:120] for p in dup[:4]))
for head, text in (("### Operators that allocate the most", "Self: allocations made by the operator itself"),
                   ("### Peak per phase", "The highest allocated memory in each phase of each step"),
                   ("### What was live at the peak", "A module is the `forward` an allocation's stack ran"),
                   ("| Module | At the peak |", "Which part of the model held it: the modules holding")):
    result(md.count(head) >= 2 and md.count(text) == 1,
           "many devices: %r %d times, its explanation once" % (head, md.count(head)),
           "%d explanations" % md.count(text))
refs = re.findall(r"^.*\bas above\b.*$", md, re.M)
result(refs and all(len(r) <= 80 for r in refs), "many devices: later devices refer to it in short lines",
       repr([r for r in refs if len(r) > 80][:2]))

# 8. frames named from the folder the job's own files share: said once,
# stripped everywhere in the Markdown, kept whole in the JSON. The oracle
# finds the folder itself: the longest common folder of the frames of the
# JSON outside installed packages, the standard library and generated code.
NOT_OWN = ("site-packages", "dist-packages", "torchinductor", "/lib/python", "\\Lib\\", "/usr/")


def own_folder(dev):
    frames = []
    for s in dev.get("top_sites", []):
        frames += [s.get("frame") or ""] + (s.get("stack") or [])
    for a in dev.get("top_allocations", []):
        frames += [a.get("where") or ""] + (a.get("stack") or [])
    for g in dev.get("live_at_peak_groups", []):
        for m in g.get("modules", []):
            frames += [l.get("where") or "" for l in m.get("lines", [])]
    folders = []
    for f in frames:
        m = re.match(r"(.*?[/\\])[^/\\:]*:\d", f)
        if not m or not re.match(r"(/|[A-Za-z]:\\|\\\\)", f) or f.startswith("<") or any(n in f for n in NOT_OWN) or "threading.py" in f \
                or "_call_impl" in f or "<frozen" in f:
            continue
        folders.append(m.group(1))
    if not folders:
        return None
    root = os.path.commonprefix(folders)
    cut = max(root.rfind("/"), root.rfind("\\"))
    root = root[:cut + 1]
    return root if len(root) >= 8 else None


mag = [os.path.join(SNAP, "cs336-magma27-training.pickle")]
md = report("mag", mag)
doc = json.loads(report("mag", mag, "json") or "{}")
root = own_folder(doc["devices"][0]) if doc.get("devices") else None
result(root == "D:\\Dev\\assignment2-systems\\", "magma27: the job's folder found by the oracle", repr(root))
said = re.findall(r"The job's own files are named from the folder they share,\s+`([^`]*)`", md)
result(said == [root], "magma27: the report names the folder once", repr(said))
code_frames = re.findall(r"^  - `([^`]*)`$", md, re.M)
result(code_frames and not any(f.startswith(root or "?") for f in code_frames)
       and md.count(root or "?") == 1, "magma27: no frame of the Markdown keeps the folder",
       repr([f for f in code_frames if f.startswith(root or "?")][:2]))
want = [f[len(root):] for s in doc["devices"][0].get("top_sites", []) for f in s.get("stack", [])
        if root and f.startswith(root) and "_call_impl" not in f and "threading.py" not in f]
result(want and all(f in code_frames for f in want[:5]),
       "magma27: the stacks' own frames shown without it", repr(want[:2]))
result(root and all(s["frame"].startswith(root) or any(n in s["frame"] for n in NOT_OWN) is False
                    for s in doc["devices"][0]["top_sites"] if s.get("frame", "").startswith(root)),
       "magma27: the JSON keeps the paths whole")
snaps = [os.path.join(SNAP, f) for f in sorted(os.listdir(SNAP))]
md = report("snaps", snaps)
doc = json.loads(report("snaps", snaps, "json") or "{}")
roots = [own_folder(d) for d in doc.get("devices", [])]
said = re.findall(r"This device's files are named from the folder they share, `([^`]*)`", md)
result(len(set(r for r in roots if r)) > 1 and said == [r for r in roots if r],
       "five snapshots of five machines: each device names its own folder", repr((said, roots)))

# 9. issue 28's reading pass: a finding's kind in words, never its slug in
# a sentence ("Also other-process."), nor a secondary cause said twice
# ("fragmentation is a secondary cause. Also fragmentation."); the advice
# table's For column in words; the banner's "Outside PyTorch" formula the
# one the message allowed (no reserved figure: allocated); an inferred
# other process said to be inferred; a title starts with a capital.
SLUGS = r"(capacity|fragmentation|other-process|leak|oversized-request|inconsistent|insufficient-evidence)"
m4 = report("r04", [os.path.join(LOGS, "oom-04.log")])
result(not re.search(r"Also " + SLUGS + r"\.", m4) and "Also: another process held the memory." in m4,
       "oom-04: the secondary cause in words", repr(re.findall(r"Also[^.]*\.", m4)))
fors = re.findall(r"^\| \d+ \| [^|]+ \| [^|]+ \| [^|]+ \| ([^|]+) \|$", m4, re.M)
result(fors and not any(re.match(SLUGS + r",", f.strip()) for f in fors),
       "oom-04: the advice table's For column in words", repr(fors))
result("Other processes held" not in m4 and "which no input names" in m4,
       "oom-04: other processes the message does not list are said to be inferred")
m12 = report("r12", [os.path.join(SNAP, "cs336-silmont-segments.pickle"), os.path.join(LOGS, "oom-12.log")])
result("secondary cause" in m12 and "Also fragmentation" not in m12 and "Also: free memory" not in m12,
       "oom-12 with a snapshot: the secondary cause said once")
m20 = report("r20", [os.path.join(LOGS, "oom-20.log")])
result("(capacity - free - allocated at the OOM)" in m20 and "- reserved at the OOM" not in m20,
       "oom-20 (no reserved figure): the banner names the formula it used")
m22 = report("r22", [os.path.join(LOGS, "oom-22.log")])
result("**1. The GPU ran out" in m22 and "**1. the GPU" not in m22 and "- **the GPU" not in m22,
       "oom-22 (no device named): the headline starts with a capital")
# An error's form in words, not the scanner's name for it; the OOM
# table's legend true of a dump too (no "message" there); a log without an
# OOM is not asked for again; an unknown GPU's memory cell says why.
result(", reserved-in-total wording" not in m4 and
       "line 1: PyTorch's message before 2.1 (\"reserved in total\")." in m4,
       "oom-04: the message's form in words", repr(re.findall(r"^\*\*1\.\*\* .*$", m4, re.M)))
ms = report("ms", [os.path.join(SRC, "tests/data/memstats/memory-stats-flat.json")])
result("## Out-of-memory errors" in ms and "the message does not say" not in ms and
       "A dash: the input does not say." in ms,
       "a memory_stats dump's OOM: the table's legend speaks of the input, not a message")
for f in ("tests/data/logs/oom-%02d.log" % i for i in (40, 46, 52, 56)):
    m = report("w" + os.path.basename(f), [os.path.join(SRC, f)])
    result(not re.search(r", [a-z0-9.-]+ wording[.,;]", m), "%s: no wording slug" % os.path.basename(f),
           repr(re.findall(r"^\*\*1\.\*\* .*$", m, re.M)))
kv = report("kv", [os.path.join(SRC, "tests/data/kv-cache/vllm-v1-2025.log")])
result("add the job's log" not in kv and "No out-of-memory error in the log" in kv,
       "a log without an OOM: the verdict does not ask for the job's log")
smi = report("smi", [os.path.join(SRC, "tests/data/realdata/nvsmi/telegraf-dual_a5000-v13.xml")])
result("not in the table" not in smi and "no datasheet (not in `estimate --list-gpus`)" in smi,
       "an RTX A5000 (no datasheet): its memory cell says where it is missing from")
# vLLM's start-up checks refuse to start: no allocation failed, so the
# headline does not say "ran out of memory" (nor "the GPU was full" of a
# KV cache too small for the longest request).
for i, want in ((55, "vLLM did not start on the GPU: its share of the GPU left no memory for the KV cache"),
                (56, "vLLM did not start on the GPU: its KV cache is too small for one request of the longest length"),
                (57, "vLLM did not start on cuda:1, asking for 19.8 GiB: another process held the memory")):
    m = report("v%d" % i, [os.path.join(LOGS, "oom-%02d.log" % i)])
    result(("**Verdict: FAILED.** " + want + ".") in m and "ran out of memory" not in m.split("## Inputs")[0],
           "oom-%d (vLLM's start-up check): the headline says it did not start" % i,
           repr(re.findall(r"^> \*\*Verdict.*$", m, re.M)))
# A diff of two files: the heading names them; no list says them again
# (a folder's side still lists its files).
K = os.path.join(SRC, "tests/data/realdata/kineto")
pair = [os.path.join(K, "tracelens-h100-bert-small.json.gz"), os.path.join(K, "tracelens-mi300x-bert-small.json.gz")]
p = subprocess.run([VR, "diff"] + pair + ["-o", "pair.md"], capture_output=True, text=True)
dm = open("pair.md", encoding="utf-8").read() if os.path.exists("pair.md") else ""
result(dm.count("tracelens-h100-bert-small.json.gz") == 1 and "Files before:" not in dm and "Files after:" not in dm,
       "diff of two files: each named once, in the heading", "%d times" % dm.count("tracelens-h100-bert-small.json.gz"))
os.makedirs("side", exist_ok=True)
import shutil
shutil.copy(pair[0], "side/a.json.gz")
p = subprocess.run([VR, "diff", "side", pair[1], "-o", "side.md"], capture_output=True, text=True)
sm = open("side.md", encoding="utf-8").read() if os.path.exists("side.md") else ""
result("Files before:\n- side/a.json.gz" in sm and "Files after:" not in sm,
       "diff of a folder and a file: the folder's files listed", sm[-300:])
# A memory_summary's OOM gives no request: the fragmentation finding does
# not weigh the free memory against one ("enough for the request"), and
# the advice table says the request's size is not known, not that there
# was no failed request.
sm = report("sum", [os.path.join(SRC, "tests/data/realdata/summary/pytorch__pytorch__issue35901__memory_summary_PARTIAL.txt")])
result("ran out of memory" in sm and "enough for the request" not in sm and "likely, not shown" in sm,
       "memory_summary's OOM: no 'enough for the request' without a request")
result("| no failed request |" not in sm and "| its size not known |" in sm,
       "memory_summary's OOM: the advice table says the request's size is not known")
result("of it was in use" in report("r20b", [os.path.join(LOGS, "oom-20.log")]),
       "oom-20: 'of it was in use'")
# "How we know": a category in words ("of activations", not "of
# activation"), and a block's category said to come from its stack.
fx = report("fx", [os.path.join(SNAP, "flexgen-opt1.3b-noframes.pickle")])
result("8.12 MiB of activations: 1 block in use since before the record, its category read from the stack" in fx
       and "of activation:" not in fx and "decided by their stacks" not in fx,
       "flexgen: the How-we-know line says 'activations' and how one block's category was read",
       repr(re.findall(r"^- .*block-stack.*$", fx, re.M)))
# gpustat alone: its process table is gpustat's, not nvidia-smi's.
gw = report("gw", [os.path.join(SRC, "tests/data/gpustat/color-watch-h100.txt")])
result("The processes gpustat listed:" in gw and "nvidia-smi listed" not in gw,
       "gpustat alone: the process table is said to be gpustat's")
# A memset counted as a copy is said to be one of the two.
tb = report("tb", [os.path.join(SRC, "tests/data/realdata/kineto/tbplugin-v100-resnet50-2021.pt.trace.json.gz")])
result("a copy or memset faster than the GPU's peak bandwidth" in tb and "the copy's rate" not in tb,
       "tbplugin V100: a Memset's rate is not called a copy's")
# A memory timeline's unknown: said why (no category from the profiler,
# no stacks in the export), not "unknown as ... states it".
ht = report("ht", [os.path.join(SRC, "tests/data/realdata/kineto/hta-memory-timeline.raw.json.gz")])
result("128 MiB stays unknown: PyTorch's memory profiler gave it no category itself" in ht
       and "unknown as PyTorch" not in ht, "memory timeline: its unknown part said why")
# Modules of equal size in reading order: layer 2 before layer 10.
qw = report("qw", [os.path.join(SRC, "tests/data/realdata/kineto/tracelens-h100-qwen1.5-0.5b.json.gz")])
layers = [int(n) for n in re.findall(r"^\| Qwen2Model\\_0 › Qwen2DecoderLayer\\_(\d+) \| 34\.9 MiB \|", qw, re.M)]
result(len(layers) >= 3 and layers == sorted(layers), "qwen: equal modules by their number (layer 2 before 10)",
       repr(layers))
# A memory fraction's (or MPS's) "allowed" is not called the capacity in
# a headline's figures.
for i in (8, 22):
    m = report("al%d" % i, [os.path.join(LOGS, "oom-%02d.log" % i)])
    line = "".join(re.findall(r"^\*\*1\. .*$", m, re.M)[:1])
    result("allowed " in line and "capacity " not in line,
           "oom-%02d: the headline's figures say 'allowed', not 'capacity'" % i, line)

# 10. two sizes compared never read alike: "19.8 GiB asked, 19.8 GiB free"
# (oom-57.log: 19.84 asked, 19.77 free) is written to tell them apart.
same = []
for f in sorted(os.listdir(LOGS)):
    if not f.startswith("oom-") or not f.endswith(".log"):
        continue  # not-oom-libs.log has no error: not a report's input
    t = report("cmp-" + f, [os.path.join(LOGS, f)])
    for m in re.finditer(r"\*\*([0-9.,]+ [KMGTP]?i?B) asked, \1 free\*\*|asking for ([0-9.,]+ [KMGTP]?i?B) with \2 free", t):
        same.append("%s: %s" % (f, m.group(0)))
o57 = report("cmp57", [os.path.join(LOGS, "oom-57.log")])
result(not same and "19.84 GiB asked, 19.77 GiB free" in o57,
       "no report of the logs compares two sizes that read alike (oom-57: 19.84 GiB asked, 19.77 GiB free)",
       "; ".join(same[:4]))
