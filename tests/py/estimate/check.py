# tests/estimate.sh runs this.
import json, os, subprocess
from fractions import Fraction

VR = os.environ["VRAMREPORT"]
out = open("results.txt", "w")
GIB = 1 << 30
MIB = 1 << 20

def result(ok, desc, detail=""):
    out.write(("PASS\t%s\n" % desc) if ok else ("FAIL\t%s\t%s\n" % (desc, detail)))

def equal(desc, got, want):
    result(got == want, desc, "" if got == want else "got %r, expected %r" % (got, want))

def run(*args):
    p = subprocess.run([VR, "estimate"] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

def est(*args):
    """The JSON estimate, or None (the failure is recorded)."""
    rc, so, se = run(*(list(args) + ["--format", "json"]))
    if se:  # a warning or a sanitizer's report on a good estimate
        return result(False, "quiet stderr: estimate %s" % " ".join(args), se[:300])
    try:
        return json.loads(so) if rc == 0 else result(False, "estimate %s" % " ".join(args), se)
    except ValueError as e:
        result(False, "JSON parses: %s" % " ".join(args), str(e))

P = 7 * 10**9

# --- model states: the ZeRO paper's 16 bytes, the common 12 --------------
d = est("--params", "7e9", "--dtype", "bf16", "--optimizer", "adamw")
if d:
    ms = d["model_states"]
    equal("bf16 adamw: 7e9 x 16 bytes of model states (2 + 2 + 4 master + 8)",
          ms["total"], P * 16)
    equal("bf16 adamw: weights 2 B/param", ms["weights"], 2 * P)
    equal("bf16 adamw: gradients 2 B/param", ms["gradients"], 2 * P)
    equal("bf16 adamw: fp32 master weights 4 B/param", ms["master_weights"], 4 * P)
    equal("bf16 adamw: two fp32 moments 8 B/param", ms["optimizer_state"], 8 * P)
    pg = d["per_gpu"]
    equal("per-GPU total is the sum of its parts",
          pg["total"], pg["model_states"] + pg["activations"] + pg["workspace"] + pg["context"])
    equal("default CUDA context 500 MiB", pg["context"], 500 * MIB)
    equal("no --gpu: no verdict", d["gpu"], None)

d = est("--params", "7B", "--master-weights", "no")
if d:
    equal("the 12-byte figure: 7e9 x (2 + 2 + 8) bytes with --master-weights no",
          d["model_states"]["total"], P * 12)
    equal("--master-weights no: no master copy", d["model_states"]["master_weights"], 0)

d = est("--params", "7000000000", "--dtype", "fp32", "--optimizer", "adam")
if d:
    equal("fp32 adam: 4 + 4 + 8 bytes, no separate master copy",
          d["model_states"]["total"], P * 16)
    equal("fp32: master_weights false", d["master_weights"], False)

for opt, state in [("adam-8bit", 2), ("sgd", 4), ("sgd-nomomentum", 0), ("lion", 4),
                   ("adafactor", 0)]:
    d = est("--params", "1e9", "--optimizer", opt, "--master-weights", "no")
    if d:
        equal("%s: %d B/param of optimizer state" % (opt, state),
              d["model_states"]["optimizer_state"], state * 10**9)

# --- ZeRO over 8 GPUs ------------------------------------------------------
def ceil_div(a, n):
    return -(-a // n)

whole = {"weights": 2 * P, "gradients": 2 * P, "master_weights": 4 * P,
         "optimizer_state": 8 * P}
sharded_from = {"optimizer_state": 1, "master_weights": 1, "gradients": 2, "weights": 3}
for stage in range(4):
    d = est("--params", "7e9", "--gpus", "8", "--zero", str(stage))
    if not d:
        continue
    want = {k: ceil_div(v, 8) if stage >= sharded_from[k] else v for k, v in whole.items()}
    got = {k: d["per_gpu"][k] for k in whole}
    equal("ZeRO-%d over 8 GPUs shards %s" % (stage, [k for k in sorted(whole)
          if stage >= sharded_from[k]] or "nothing"), got, want)
    equal("ZeRO-%d: the whole model's states are unchanged" % stage,
          d["model_states"]["total"], 16 * P)
d = est("--params", "7e9", "--gpus", "8", "--zero", "3")
if d:
    equal("ZeRO-3 over 8 GPUs divides all model states by 8",
          d["per_gpu"]["model_states"], 16 * P // 8)
d = est("--params", "7e9", "--gpus", "8", "--zero", "1", "--master-weights", "no")
if d:
    equal("ZeRO-1 (no master copy) divides only the optimizer state",
          [d["per_gpu"][k] for k in ("weights", "gradients", "optimizer_state")],
          [2 * P, 2 * P, 8 * P // 8])

# --- activations: Korthikanti et al., a GPT-3-like shape -------------------
s, b, h, a, L = 2048, 1, 12288, 96, 96
def korthikanti(s, b, h, a):
    return Fraction(s * b * h) * (34 + Fraction(5 * a * s, h))

shape = ["--seq", str(s), "--batch", str(b), "--hidden", str(h), "--heads", str(a),
         "--layers", str(L)]
d = est("--params", "175e9", *shape)
if d:
    equal("GPT-3 shape: activations = s*b*h*(34 + 5*a*s/h) * L",
          d["per_gpu"]["activations"], int(korthikanti(s, b, h, a) * L))
d = est("--params", "175e9", *shape, "--batch", "4")
if d:
    equal("activations scale with the micro-batch",
          d["per_gpu"]["activations"], int(korthikanti(s, 4, h, a) * L))
d = est("--params", "175e9", *shape, "--checkpointing")
if d:
    equal("--checkpointing (full recompute): 2*s*b*h*L",
          d["per_gpu"]["activations"], 2 * s * b * h * L)
d = est("--params", "175e9", *shape, "--checkpointing=selective")
if d:
    equal("--checkpointing=selective: 34*s*b*h*L",
          d["per_gpu"]["activations"], 34 * s * b * h * L)
d = est("--params", "175e9", *shape, "--gpus", "8", "--zero", "3")
if d:
    equal("ZeRO does not shard activations", d["per_gpu"]["activations"],
          int(korthikanti(s, b, h, a) * L))
d = est("--params", "175e9", *shape, "--dtype", "fp32")
if d:
    equal("fp32 activations: twice the 16-bit formula",
          d["per_gpu"]["activations"], 2 * int(korthikanti(s, b, h, a) * L))
d = est("--params", "175e9", *shape, "--inference")
if d:
    equal("inference: one layer's activations, nothing kept for backward",
          d["per_gpu"]["activations"], int(korthikanti(s, b, h, a)))

# --- inference --------------------------------------------------------------
d = est("--params", "70e9", "--dtype", "int4", "--inference")
if d:
    equal("int4 inference: 0.5 B/param of weights, nothing else",
          [d["model_states"][k] for k in ("weights", "gradients", "master_weights",
                                          "optimizer_state")], [35 * 10**9, 0, 0, 0])
d = est("--params", "7e9", "--optimizer", "none", "--dtype", "fp16")
if d:
    equal("--optimizer none is inference", (d["training"], d["model_states"]["total"]),
          (False, 2 * P))

# --- fits or not --------------------------------------------------------------
capacities = {"H100-80GB": 80, "A100-40GB": 40, "RTX-4090": 24, "MI300X": 192,
              "H200-141GB": 141, "V100-16GB": 16, "L40S": 48}
def verdict(params, gpu, name):
    d = est("--params", params, "--gpu", gpu)
    if not d:
        return
    cap = capacities[name] * GIB
    total = d["per_gpu"]["total"]
    equal("--gpu %s is %s (%d GiB)" % (gpu, name, capacities[name]),
          (d["gpu"]["name"], d["gpu"]["capacity"]), (name, cap))
    equal("%s params on %s: fits = total <= capacity" % (params, name),
          (d["gpu"]["fits"], d["gpu"]["spare"]), (total <= cap, cap - total))
    return total <= cap

equal("7e9 bf16 adamw does not fit an H100 80GB (112e9 B of states alone)",
      verdict("7e9", "H100-80GB", "H100-80GB"), False)
equal("1e9 bf16 adamw fits an H100 (16e9 B + overheads)", verdict("1e9", "h100", "H100-80GB"), True)
verdict("2e9", "A100-40GB", "A100-40GB")
verdict("1e9", "4090", "RTX-4090")
verdict("1e9", "NVIDIA GeForce RTX 4090", "RTX-4090")
verdict("10e9", "MI300X", "MI300X")
verdict("8e9", "NVIDIA H200", "H200-141GB")
verdict("1e9", "Tesla V100-SXM2-16GB", "V100-16GB")
verdict("2e9", "NVIDIA L40S", "L40S")
d = est("--params", "7e9", "--gpu", "NVIDIA A100-SXM4-80GB")
if d:
    equal("nvidia-smi's product name 'NVIDIA A100-SXM4-80GB' is A100-80GB",
          d["gpu"]["name"], "A100-80GB")

rc, so, se = run("--params", "7e9", "--gpu", "H100-80GB")
short = (16 * P + 32 * MIB + 500 * MIB) - 80 * GIB
equal("text: 'fits on H100-80GB (80 GiB): no: ... short'",
      "fits on H100-80GB (80 GiB): no: %.1f GiB short" % (short / GIB) in so, True)
rc, so, se = run("--params", "1e9", "--gpu", "H100-80GB")
spare = 80 * GIB - (16 * 10**9 + 32 * MIB + 500 * MIB)
equal("text: 'fits on H100-80GB (80 GiB): yes, ... to spare'",
      "fits on H100-80GB (80 GiB): yes, %.1f GiB to spare" % (spare / GIB) in so, True)
rc, so, se = run("--params", "7e9", "--workspace", "1GiB", "--context", "0", "--format", "json")
d = json.loads(so) if rc == 0 else {}
equal("--workspace 1GiB --context 0 are used as given",
      (d.get("per_gpu", {}).get("workspace"), d.get("per_gpu", {}).get("context")), (GIB, 0))

# --- the examples in --help run ----------------------------------------------
rc, so, se = run("--help")
equal("--help exits 0 on stdout", (rc, se), (0, ""))
examples, cont = [], None
for line in so.splitlines():
    text = line.strip()
    if cont is not None:
        cont += " " + text.rstrip("\\")
        if not text.endswith("\\"):
            examples.append(cont)
            cont = None
    elif text.startswith("vramreport estimate "):
        if text.endswith("\\"):
            cont = text.rstrip("\\")
        else:
            examples.append(text)
result(len(examples) >= 4, "--help has examples", "found %d" % len(examples))
for ex in examples:
    args = ex.split()[2:]
    rc, so2, se2 = run(*args)
    equal("help example runs: %s" % ex, (rc, se2), (0, ""))

rc, so, se = run("--list-gpus")
equal("--list-gpus names the GPUs of the issue",
      [n for n in ("V100-16GB", "V100-32GB", "A100-40GB", "A100-80GB", "H100-80GB",
                   "H200-141GB", "L40S", "RTX-4090", "MI300X") if n not in so], [])

# --- usage errors: one line on stderr, nothing on stdout, exit 2 ----------------
bad = [
    ([], "missing --params"),
    (["--params", "abc"], "a count that is not one"),
    (["--params", "0"], "zero parameters"),
    (["--params", "1e16"], "over 1e15 parameters"),
    (["--params", "7e9", "--gpu", "H1000"], "unknown GPU"),
    (["--params", "7e9", "--gpu", "A100"], "ambiguous GPU (A100 40 or 80 GB)"),
    (["--params", "7e9", "--batch", "0"], "--batch 0"),
    (["--params", "7e9", "--batch", "1.5"], "--batch 1.5"),
    (["--params", "7e9", "--seq", "x"], "--seq x"),
    (["--params", "7e9", "--zero", "4"], "--zero 4"),
    (["--params", "7e9", "--gpus", "-1"], "--gpus -1"),
    (["--params", "7e9", "--dtype", "fp64"], "unknown dtype"),
    (["--params", "7e9", "--optimizer", "rmsprop"], "unknown optimizer"),
    (["--params", "7e9", "--seq", "2048"], "a partial shape"),
    (["--params", "7e9", "--checkpointing"], "checkpointing without a shape"),
    (["--params", "7e9", "--checkpointing=some"], "an unknown checkpointing kind"),
    (["--params", "7e9", "--inference", "--optimizer", "adamw"], "inference and an optimizer"),
    (["--params", "7e9", "--dtype", "fp32", "--master-weights", "yes"], "fp32 with a master copy"),
    (["--params", "7e9", "--master-weights", "maybe"], "--master-weights maybe"),
    (["--params", "7e9", "--workspace", "lots"], "--workspace lots"),
    (["--params", "7e9", "--format", "xml"], "--format xml"),
    (["--params", "7e9", "--frobnicate"], "an unknown option"),
    (["--params"], "an option without its value"),
    (["--params", "7e9", "stray"], "a stray argument"),
    (["--params", "7e9", "--seq", "1000000000", "--hidden", "1000000000", "--layers",
      "1000000000", "--heads", "1000000000"], "a shape that overflows 64 bits"),
]
# Numbers are decimal: another base's text, inf and nan are refused (0x10
# was read as 16, 0x10MiB as 16 MiB), and each option's bound is checked
# at the option, the message stating it (--gpus 1000000000 passed a check
# up to 1e9, then failed the estimate's up to 1e6 without naming --gpus).
refused = [
    (["--params", "0x10"], "'0x10' is not a decimal count"),
    (["--params", "010"], "'010' is not a decimal count"),
    (["--params", "inf"], "'inf' is not a decimal count"),
    (["--params", "nan"], "'nan' is not a decimal count"),
    (["--params", "7e9", "--workspace", "0x10MiB"], "--workspace '0x10MiB': give a decimal size up to 1e15 bytes"),
    (["--params", "7e9", "--context", "inf"], "--context 'inf': give a decimal size up to 1e15 bytes"),
    (["--params", "7e9", "--gpus", "1000000000"], "--gpus '1000000000': give a whole decimal number from 1 to 1000000"),
    (["--params", "7e9", "--gpus", "1000001"], "--gpus '1000001': give a whole decimal number from 1 to 1000000"),
    (["--params", "7e9", "--gpus", "0x10"], "--gpus '0x10': give a whole decimal number from 1 to 1000000"),
    (["--params", "7e9", "--seq", "1000000001"], "--seq '1000000001': give a whole decimal number from 1 to 1000000000"),
    (["--params", "7e9", "--batch", " 8"], "--batch ' 8': give a whole decimal number from 1 to 1000000000"),
]
for args, want in refused:
    rc, so, se = run(*args)
    lines = se.splitlines()
    ok = rc == 2 and so == "" and len(lines) == 1 and want in lines[0]
    result(ok, "refused with its bound: %s" % " ".join(args),
           "exit %d, stdout %r, stderr %r" % (rc, so[:80], se[:300]))
    bad.append((args, " ".join(args)))
d = est("--params", "7e9", "--gpus", "1000000", "--zero", "3")
if d:
    equal("--gpus at its bound (1000000) is taken", d["gpus"], 1000000)
d = est("--params", "7e9", "--workspace", "1.5e1MiB")
if d:
    equal("e-notation in a size: 1.5e1MiB is 15 MiB", d["per_gpu"]["workspace"], 15 * MIB)

for args, what in bad:
    rc, so, se = run(*args)
    lines = se.splitlines()
    ok = rc == 2 and so == "" and len(lines) == 1 and lines[0].startswith("vramreport estimate: ")
    result(ok, "usage error, one line, exit 2: %s" % what,
           "exit %d, stdout %r, stderr %r" % (rc, so[:80], se[:300]))
