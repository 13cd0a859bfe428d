# tests/kv-cache.sh runs this: VRAMREPORT DATA-DIR. Each real log of
# inference servers' start-up lines (DATA-DIR/*.log, PROVENANCE.md) is
# imported alone; the server_memory rows must be the figures read here,
# with Python's own regular expressions, from each line: one row per
# figure, sizes as exact decimals times 2**30 (both servers divide by
# 2**30 and print "GB" or "GiB") rounded half up, counts without their
# thousands' commas, SGLang's K and V sizes added, the TP rank a line
# names. One PASS/FAIL line per check.
import glob
import os
import re
import sqlite3
import subprocess
import sys
from fractions import Fraction

VR, DATA = sys.argv[1], sys.argv[2]
UNITS = {"GiB": 30, "GB": 30, "MiB": 20, "MB": 20}
SIZE = r"(\d+(?:\.\d+)?) ?(GiB|GB|MiB|MB)"


def size(num, unit):
    x = Fraction(num) * (1 << UNITS[unit])
    return int(x + Fraction(1, 2))  # half up


def result(cond, what, got=None):
    print("%s\t%s%s" % ("PASS" if cond else "FAIL", what, "" if cond else "\tgot: %r" % (got,)))


# (framework, figure, pattern whose groups are a size or a count, the
# text the line must hold or None)
VLLM = [("weights", r"Loading model weights took " + SIZE, None),
        ("weights", r"Model loading took " + SIZE, None),
        ("torch_peak", r"peak_torch_memory=" + SIZE, "Memory profiling results"),
        ("kv_cache", r"kv_cache_size=" + SIZE, "Memory profiling results"),
        ("weights", r"model weights take\s+" + SIZE, None),
        ("non_torch", r"non_torch_memory(?: takes|=|\s+)\s*" + SIZE, None),
        ("activation_peak", r"PyTorch activation peak memory(?: takes)?\s+" + SIZE, None),
        ("kv_cache", r"reserved for KV Cache is " + SIZE, None),
        ("kv_cache", r"available_kv_cache_memory\s+" + SIZE, None),
        ("kv_cache", r"Available KV cache memory: " + SIZE, None),
        ("total", r"total_gpu_memory(?:=|\s+|\s\()" + SIZE, None)]
VLLM_COUNTS = [("kv_tokens", r"GPU KV cache size: ([\d,]+) tokens"),
               ("gpu_blocks", r"# GPU blocks: (\d+)"), ("cpu_blocks", r"# CPU blocks: (\d+)")]


def expected(line):
    rows = {}
    if "Load weight end" in line:
        m = re.search(r"mem usage=" + SIZE, line)
        if m:
            rows["weights"] = ("sglang", size(*m.groups()), None, m.group(2))
    elif "KV Cache is allocated" in line:
        m = re.search(r"#tokens: (\d+)", line)
        rows["kv_tokens"] = ("sglang", None, int(m.group(1)), None)
        parts = re.findall(r"(?:^|[ ,])(?:K|V|KV) size: " + SIZE, line)
        rows["kv_cache"] = ("sglang", sum(size(n, u) for n, u in parts), None, parts[0][1])
    else:
        for fig, pat, need in VLLM:
            m = re.search(pat, line)
            if m and fig not in rows and (need is None or need in line):
                rows[fig] = ("vllm", size(*m.groups()), None, m.group(2))
        for fig, pat in VLLM_COUNTS:
            m = re.search(pat, line)
            if m:
                rows[fig] = ("vllm", None, int(m.group(1).replace(",", "")), None)
    tp = re.search(r"[\[ _]TP(\d+)[\] ]", line)
    rank = int(tp.group(1)) if tp and rows else None
    return {(f,) + v + (rank,) for f, v in rows.items()}


files = sorted(glob.glob(os.path.join(DATA, "*.log")))
result(len(files) == 5, "five real logs of server lines", files)
frameworks = set()
for path in files:
    name = os.path.basename(path)
    db = name + ".db"
    if os.path.exists(db):
        os.remove(db)
    p = subprocess.run([VR, "import", path, "--db", db, "-q"], capture_output=True, text=True)
    result(p.returncode == 0, "%s: imported (a log of server lines alone is a job log)" % name,
           p.stderr)
    if p.returncode != 0:
        continue
    want = set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            want |= {(n,) + r for r in expected(line.rstrip("\n"))}
    got = set(sqlite3.connect(db).execute(
        "SELECT line, figure, framework, bytes, count, unit, rank FROM server_memory").fetchall())
    result(want and got == want, "%s: the %d server_memory rows are the lines' figures" % (name, len(want)),
           sorted(got ^ want))
    frameworks |= {r[2] for r in want}
result(frameworks == {"vllm", "sglang"}, "both servers' lines were read", frameworks)

# The report shows what the server said: server_memory[] of the JSON is
# the same rows (our words beside the figure's slug), in line order; the
# Markdown has a row a line, its size as the units print it, its count
# with its commas; the verdict of a log with no OOM cites the last KV
# cache the server printed, its tokens and the weights before it.
import json
WORDS = {"weights": "model weights loaded", "kv_cache": "memory given to the KV cache",
         "kv_tokens": "tokens the KV cache holds", "total": "the GPU's memory",
         "non_torch": "memory outside PyTorch (CUDA context, NCCL, graphs)",
         "activation_peak": "activations at the profiling run's peak",
         "torch_peak": "PyTorch's peak in the profiling run",
         "gpu_blocks": "KV cache blocks on the GPU",
         "cpu_blocks": "KV cache blocks in host memory (swap)"}


def human(b):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift:
            x = b / (1 << shift)
            return ("%.0f" if x >= 99.5 else "%.1f" if x >= 9.995 else "%.2f") % x + " " + unit
    return "%d B" % b


for path in files:
    name = os.path.basename(path)
    want = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            want += sorted((n,) + r for r in expected(line.rstrip("\n")))
    p = subprocess.run([VR, path, "-f", "json", "-o", "-", "-q"], capture_output=True, text=True)
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    rows = doc.get("server_memory", [])
    got = sorted((r["line"], r["figure"], "vllm" if r["server"] == "vLLM" else "sglang",
                  r["bytes"], r["tokens_or_blocks"], r["rank"], r["what"]) for r in rows)
    result(got == sorted((w[0], w[1], w[2], w[3], w[4], w[6], WORDS[w[1]]) for w in want),
           "%s: server_memory[] holds the %d lines' figures in words" % (name, len(want)), got)
    p = subprocess.run([VR, path, "-f", "md", "-o", "-", "-q"], capture_output=True, text=True)
    md = p.stdout
    cells = ["| %s | %s |" % (WORDS[w[1]], human(w[3]) if w[3] is not None else "{:,}".format(w[4]))
             for w in want]
    result("## What the inference server said of its memory" in md and all(c in md for c in cells),
           "%s: the Markdown lists every line's figure" % name,
           [c for c in cells if c not in md])
    kv = [w for w in want if w[1] == "kv_cache"][-1]
    verdict = md.split("\n")[3] if md.count("\n") > 3 else md
    server = "vLLM" if kv[2] == "vllm" else "SGLang"
    result("No out-of-memory error in the log; %s gave its KV cache %s" % (server, human(kv[3]))
           in verdict, "%s: the verdict cites the last KV cache the server printed" % name, verdict)
