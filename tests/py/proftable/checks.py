# tests/proftable.sh runs this.
import importlib.util, json, os, subprocess, sys
from decimal import Decimal, ROUND_HALF_UP

vr, tests = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("gen", os.path.join(tests, "gen-proftable.py"))
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)

def result(ok, desc, detail=""):
    print(("PASS\t" + desc) if ok else ("FAIL\t" + desc + "\t" + str(detail).replace("\n", " | ")[:1500]))

def run(*args):
    p = subprocess.run([vr] + list(args), capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

UNITS = {"b": 0, "Kb": 10, "Mb": 20, "Gb": 30}
KEYS = {"Self CUDA Mem": "self_cuda_mem_bytes", "CUDA Mem": "cuda_mem_bytes",
        "Self XPU Mem": "self_cuda_mem_bytes", "XPU Mem": "cuda_mem_bytes",
        "Self CPU Mem": "self_cpu_mem_bytes", "CPU Mem": "cpu_mem_bytes"}

def to_bytes(cell):
    num, unit = cell.split(" ")
    v = Decimal(num) * (1 << UNITS[unit])
    return int(v.to_integral_value(rounding=ROUND_HALF_UP))

def CALLS(header):
    return "# of Calls" if "# of Calls" in header else "Number of Calls" if "Number of Calls" in header else None

def oracle(text):
    """The tables of a text, read independently: rows cut at the rule's columns."""
    lines = [l.split("]: ", 1)[1] if l.startswith("[rank") else l for l in text.split("\n")]
    tables, i = [], 0
    while i + 2 < len(lines):
        if CALLS(lines[i + 1]) and set(lines[i].strip()) == {"-", " "} and set(lines[i + 2].strip()) == {"-", " "}:
            rule = lines[i + 2]
            cols, k = [], 0
            while k < len(rule):
                if rule[k] == "-":
                    j = k
                    while j < len(rule) and rule[j] == "-":
                        j += 1
                    cols.append((k, j)); k = j
                else:
                    k += 1
            names = [h.strip() for h in lines[i + 1].split("  ") if h.strip()]
            t = {"columns": names, "ops": [], "truncated": True}
            i += 3
            while i < len(lines):
                l = lines[i]
                if set(l.strip()) == {"-", " "} and l.strip():
                    t["truncated"] = False; break
                if not l.strip():
                    i += 1; continue
                cells = [l[(cols[c - 1][1] if c else 0):(e if c + 1 < len(cols) else len(l))].strip() for c, (s, e) in enumerate(cols)]
                if len(l.rstrip()) < cols[names.index(CALLS(lines[i - 1] if False else "  ".join(names)))][1]:
                    break
                op = {"name": cells[0], "calls": int(cells[names.index(CALLS(lines[i - 1] if False else "  ".join(names)))])}
                for key in ("self_cuda_mem_bytes", "cuda_mem_bytes", "self_cpu_mem_bytes", "cpu_mem_bytes"):
                    hs = [h for h in names if KEYS.get(h) == key]
                    op[key] = to_bytes(cells[names.index(hs[0])]) if hs else None
                # the first frame of the stack, the row's own line only
                op["source_location"] = (cells[names.index("Source Location")] or None) if "Source Location" in names else None
                t["ops"].append(op); i += 1
            t["row_count"] = len(t["ops"])
            tables.append(t)
        i += 1
    return tables

EV = [dict(name="aten::empty", calls=3, cpu_mem=-524288, self_cpu_mem=100, cuda_mem=3 * 2**30 + 12345, self_cuda_mem=1536),
      dict(name="aten::conv2d  with  blanks " * 3, calls=1, cuda_mem=5 << 20, self_cuda_mem=-(7 << 20), self_cpu_mem=-1023),
      dict(name="ProfilerStep*", calls=12, cpu_mem=123456789, self_cpu_mem=-(1 << 30) * 5 // 2, cuda_mem=999, self_cuda_mem=(17 << 20) + 5),
      dict(name="aten::addmm", calls=40, cuda_mem=-(3 << 30), self_cuda_mem=1 << 30, shapes=[[64, 1024], [1024, 1024]])]

cases = {
    "all": gen.build_table(EV, shapes=True),
    "no-device-mem": gen.build_table(EV, device_mem=False),
    "no-memory": gen.build_table(EV, memory=False, device_time=False),
    "xpu": gen.build_table(EV, device="XPU"),
    "stack": gen.build_table([dict(e, stack=["train.py(10): step", "train.py(3): <module>"]) for e in EV]),
}
for name, table in cases.items():
    with open(name + ".log", "w") as f:
        f.write("2026-03-01 10:00:00,123 INFO starting\n" + table + "2026-03-01 10:00:05,000 INFO done\n")
# two tables, rank prefixes, a cut one at the end
t1, t2 = gen.build_table(EV[:2]), gen.build_table(EV[2:], shapes=True)
with open("two.log", "w") as f:
    f.write("noise\n" + "".join("[rank0]: " + l + "\n" for l in t1.splitlines()) + "step 5 loss 0.1\n" + t2)
cut = gen.build_table(EV, shapes=True)
cut = cut[: cut.index("ProfilerStep*") + 60]
with open("cut.log", "w") as f:
    f.write("epoch 1\n" + cut)
with open("cut-oom.log", "w") as f:
    f.write("epoch 1\n" + cut + "\n[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.14 GiB of which 3.06 MiB is free.\n")
cases["cut-oom"] = None
# kubectl logs --timestamps: a stamp of one width before every line
stamped = gen.build_table(EV, shapes=True)
with open("k8s.log", "w") as f:
    for k, l in enumerate(["starting"] + stamped.splitlines() + ["done"]):
        f.write("2026-03-01T10:00:%02d.123456789Z %s\n" % (k % 60, l))
cases["two"] = None
cases["cut"] = None

cases["k8s"] = None
for name in cases:
    text = open(name + ".log").read()
    if name == "k8s":
        text = "".join(l[31:] + "\n" for l in text.splitlines())
    want = oracle(text)
    rc, out, err = run(name + ".log", "--format", "json", "-o", name + ".json")
    doc = json.load(open(name + ".json")) if rc == 0 else {}
    got = [{k: t.get(k) for k in ("columns", "ops", "truncated", "row_count")} for t in doc.get("profiler_tables", [])]
    result(rc == 0 and got == want and len(want) >= 1, name + ": tables, columns and every op's figures as printed",
           (rc, err, got, want))

doc = json.load(open("two.json"))
result([t["line"] for t in doc["profiler_tables"]] == [2, 2 + len(t1.splitlines()) + 1], "two tables: the lines of their rules",
       [t["line"] for t in doc["profiler_tables"]])
doc = json.load(open("cut.json"))
t = doc["profiler_tables"][0]
result(t["truncated"] is True and t["row_count"] == 2, "a cut table: rows read kept, said truncated", t)
doc = json.load(open("cut-oom.json"))
result(len(doc["oom_events"]) == 1 and doc["profiler_tables"][0]["truncated"] and doc["oom_events"][0]["requested_bytes"] == 20 << 20,
       "a cut table, then an out-of-memory error: the table stops before it, the error is found", doc.get("oom_events"))
doc = json.load(open("no-device-mem.json"))
result(all(o["self_cuda_mem_bytes"] is None and o["cuda_mem_bytes"] is None for o in doc["profiler_tables"][0]["ops"]),
       "null where the table lacks the column")
result(doc["profiler_tables"][0]["source"] == "no-device-mem.log" and doc["profiler_tables"][0]["line"] == 2,
       "source and line")

# ---- real tables quoted in public threads (tests/data/proftable/PROVENANCE) ----
real = os.path.join(tests, "data", "proftable")
for name in sorted(os.listdir(real)):
    if not name.endswith(".log"):
        continue
    path = os.path.join(real, name)
    want = oracle(open(path).read())
    rc, out, err = run(path, "--format", "json", "-o", name + ".json")
    doc = json.load(open(name + ".json")) if rc == 0 else {}
    got = [{k: t.get(k) for k in ("columns", "ops", "truncated", "row_count")} for t in doc.get("profiler_tables", [])]
    result(rc == 0 and got == want and want and want[0]["truncated"], "real " + name + ": rows as printed, cut quote said truncated",
           (rc, err, got, want))
    result("profiler table row(s) not read" in err, "real " + name + ": the row cut mid-line is counted", err)
doc = json.load(open("torchprof-pr16.log.json"))
result(doc["profiler_tables"][0]["ops"][0]["cuda_mem_bytes"] == 256 * 1024, "256.00 Kb is 262144 bytes")

# ---- the report: top ops by memory, names escaped -----------------------------
ev = [dict(name="op%d" % k, calls=1, self_cuda_mem=k * 1000 - 6000) for k in range(14)]
ev.append(dict(name="evil|<b>x</b>", calls=2, self_cuda_mem=1 << 40))
with open("top.log", "w") as f:
    f.write(gen.build_table(ev))
rc, out, err = run("top.log", "-o", "top.md")
md = open("top.md").read() if rc == 0 else ""
rows = [l for l in md.split("## Top ops by memory", 1)[-1].splitlines() if l.startswith("| ") and not l.startswith("| Op")]
names = [r.split(" | ")[0][2:] for r in rows]
want = ["evil\\|\\<b\\>x\\</b\\>"] + ["op%d" % k for k in range(13, 4, -1)]
result(rc == 0 and len(rows) == 10 and names[1:] == want[1:], "Markdown: the ten ops with the most self CUDA memory, largest first", (rc, err, names))
result("<b>" not in md and "evil" in names[0] and "|" not in names[0].replace("\\|", ""), "Markdown: an op's name is escaped", names[:1])
# total CUDA memory ranks first: an op that allocates little itself but
# much through its children (aten::cat here) leads the table
ev2 = [dict(name="aten::small_total", calls=1, self_cuda_mem=9 << 20, cuda_mem=9 << 20),
       dict(name="aten::cat", calls=1, self_cuda_mem=1 << 20, cuda_mem=900 << 20),
       dict(name="aten::mid", calls=1, self_cuda_mem=5 << 20, cuda_mem=50 << 20)]
with open("total.log", "w") as f:
    f.write(gen.build_table(ev2))
rc2, out2, err2 = run("total.log", "-o", "total.md")
md2 = open("total.md").read() if rc2 == 0 else ""
rows2 = [l for l in md2.split("## Top ops by memory", 1)[-1].splitlines() if l.startswith("| ") and not l.startswith("| Op")]
names2 = [r.split(" | ")[0][2:].replace("\\", "") for r in rows2]
result(names2 == ["aten::cat", "aten::mid", "aten::small_total"] and "the top ones by total CUDA memory" in md2,
       "Markdown: ranked by total CUDA memory (the op and its children), largest first", (rc2, err2, names2))
# Source Location kept: two aten::cat rows told apart by the first frame
# of their stacks (group_by_stack_n), in the JSON and the Markdown
ev3 = [dict(name="aten::cat", calls=2, self_cuda_mem=3 << 30, cuda_mem=3 << 30,
            stack=["model.py(41): forward", "torch/nn/modules/module.py(1501): _call_impl"]),
       dict(name="aten::cat", calls=1, self_cuda_mem=1 << 30, cuda_mem=1 << 30, stack=["loss.py(12): compute"]),
       dict(name="aten::mm", calls=4, self_cuda_mem=2 << 30, cuda_mem=2 << 30, stack=[])]
with open("source.log", "w") as f:
    f.write(gen.build_table(ev3, stack=True))
rc3, out3, err3 = run("source.log", "--format", "json", "-o", "source.json")
ops3 = json.load(open("source.json"))["profiler_tables"][0]["ops"] if rc3 == 0 else []
result([(o["name"], o["source_location"]) for o in ops3] ==
       [("aten::cat", "model.py(41): forward"), ("aten::cat", "loss.py(12): compute"), ("aten::mm", None)],
       "JSON: each op's Source Location, the first frame of its stack (none: null)", (rc3, err3, ops3))
rc3, out3, err3 = run("source.log", "-o", "source.md")
md3 = open("source.md").read() if rc3 == 0 else ""
rows3 = [l for l in md3.split("## Top ops by memory", 1)[-1].splitlines() if l.startswith("| ") and not l.startswith("| Op")]
result("| Op | Source Location | Calls |" in md3 and [r.split(" | ")[1] for r in rows3] ==
       ["model.py(41): forward", "-", "loss.py(12): compute"],
       "Markdown: a Source Location column tells the two aten::cat rows apart", (rc3, err3, rows3))
result("Source Location" not in md2, "Markdown: no Source Location column for a table without one", md2[-400:])
rc, out, err = run("top.log", "-o", "top.html")
html = open("top.html").read() if rc == 0 else ""
result(rc == 0 and "Top ops by memory" in html and "<b>x</b>" not in html, "HTML: the section, names escaped", err)
rc, out, err = run(os.path.join(real, "pytorch-pr37775.log"), "-o", "old.md")
md = open("old.md").read() if rc == 0 else ""
result("the top ones by total CPU memory" in md, "Markdown: ranked by the first column with a figure other than zero (old PyTorch's all-zero CUDA columns)", md[-800:])
# past the scanner's bound (400 lines): the rows up to it, said truncated
big = [dict(name="op%d" % k, calls=1, self_cuda_mem=k) for k in range(500)]
with open("big.log", "w") as f:
    f.write("=" * 40 + "\nmy header\n" + gen.build_table(big) + "after\n")
rc, out, err = run("big.log", "--format", "json", "-o", "big.json")
doc = json.load(open("big.json")) if rc == 0 else {}
t = (doc.get("profiler_tables") or [{}])[0]
# 64 KiB of lines of this width, less the three above the rows (rules, header)
rows_fit = (64 * 1024 - sum(len(l) + 1 for l in gen.build_table(big).splitlines()[:3])) // (len(gen.build_table(big).splitlines()[3]) + 1)
result(t.get("truncated") is True and t.get("row_count") == min(rows_fit, 397) and "not read" not in err and
       [o["name"] for o in t["ops"]] == ["op%d" % k for k in range(t["row_count"])] and "read in part" in err,
       "a table past the bound (64 KiB): its whole rows up to it, said truncated and warned", (rc, err, t.get("row_count"), t.get("truncated")))
