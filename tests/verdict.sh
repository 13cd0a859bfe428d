#!/usr/bin/env bash
# tests/verdict.sh: the verdict at the top of the report (issues 11, 12),
# --summary, the terminal's success line, the estimate beside the
# measured breakdown.
#
# Three inputs, their numbers computed here from the input itself: a real
# OOM message (tests/data/logs/oom-05.log: failed; the request, the free
# memory, the capacity and what was outside PyTorch read from its text), a
# synthetic training trace (tests/gen-scenarios.py) whose capacity is set
# so that its peak reserved is 95 % of it (at risk), and the same trace on
# its H100 (OK). Checked: the banner's state and numbers in JSON,
# Markdown and HTML (id="verdict", styled by state), the verdict before
# the breakdown, the findings' order on a log with three hundred OOMs, the
# estimate beside the breakdown (the trace's parameter bytes known from
# the generator's ground truth), --summary within 4,000 characters on the
# biggest real inputs and on the three hundred OOMs, no advice heading
# without advice, and the one line a terminal gets (through `script`).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

GEN=$VR_SRCDIR/tests/gen-scenarios.py
LOGS=$VR_SRCDIR/tests/data/logs
REAL=$VR_SRCDIR/tests/data/realdata
cd "$TMP"
need python3 || true

"$PYTHON" - "$VRAMREPORT" "$GEN" "$LOGS" "$REAL" >results.txt 2>&1 <<'PYEOF' || true
import glob, json, os, re, subprocess, sys
from decimal import Decimal, ROUND_HALF_UP
from vrtest import human_bytes

vr, gen, logs, real = sys.argv[1:5]

def result(ok, desc, detail=""):
    if ok:
        print("PASS\t" + desc)
    else:
        print("FAIL\t" + desc + ("\t" + str(detail).replace("\t", " ").replace("\n", " | ")[:1500]
                                 if detail else ""))

def run(*args):
    p = subprocess.run([vr] + list(args) + ["-q"], capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

def render(inputs, fmt, extra=()):
    rc, out, err = run(*inputs, "-f", fmt, "-o", "-", *extra)
    if rc not in (0, 3):
        return None
    return json.loads(out) if fmt == "json" else out

UNITS = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}

def size(num, unit):
    return int((Decimal(num) * UNITS[unit]).quantize(Decimal(1), rounding=ROUND_HALF_UP))

def near(a, b, slack=1):
    return a is not None and b is not None and abs(a - b) <= slack

def banner_lines(md):
    """The lines between the title and the first blank line after it."""
    lines = md.splitlines()
    return lines[2:lines.index("", 2)] if "" in lines[2:] else lines[2:]

# ---- 1. a real OOM message: failed ------------------------------------------
text = open(os.path.join(logs, "oom-05.log")).read()
S = r"(\d+(?:\.\d+)?) (bytes|KiB|MiB|GiB)"
req = size(*re.search(r"Tried to allocate " + S, text).groups())
cap = size(*re.search(S + r" total capacity", text).groups())
alloc = size(*re.search(S + r" already allocated", text).groups())
free = size(*re.search(S + r" free", text).groups())
reserved = size(*re.search(S + r" reserved in total", text).groups())
outside = cap - free - reserved

oom = [os.path.join(logs, "oom-05.log")]
d = render(oom, "json")
v = (d or {}).get("verdict") or {}
result(v.get("state") == "failed", "OOM log: the verdict is failed", v)
result(near(v.get("requested_bytes"), req) and near(v.get("free_bytes"), free),
       "OOM log: the failed request (%d) against the free memory (%d)" % (req, free), v)
result(near(v.get("capacity_bytes"), cap) and near(v.get("peak_bytes"), max(reserved, alloc)),
       "OOM log: the peak (reserved at the OOM, %d) against the capacity (%d)" % (reserved, cap), v)
result(near(v.get("outside_pytorch_bytes"), outside, 2),
       "OOM log: memory outside PyTorch is capacity - free - reserved (%d)" % outside, v)
first = (d or {}).get("findings", [{}])[0]
result(v.get("cause") == first.get("title") and v.get("kind") == first.get("kind"),
       "OOM log: the cause is the primary finding's", (v, first.get("title")))
md = render(oom, "md") or ""
top = banner_lines(md)
want = ["> **Verdict: FAILED.**",
        "Peak against capacity: **%s of %s (%.1f%%)**" % (human_bytes(reserved), human_bytes(cap),
                                                            int(reserved * 10000 / cap) / 100),
        "Failed request: **%s asked, %s free**" % (human_bytes(req), human_bytes(free)),
        "Outside PyTorch: **%s" % human_bytes(outside)]
result(md.startswith("# GPU memory report\n\n> **Verdict: FAILED.**") and
       all(any(w in l for l in top) for w in want),
       "OOM log: the Markdown's first lines after the title are the banner with its numbers",
       "\n".join(top))
para = [l for l in md.splitlines() if l.startswith("**1. ") and "Confidence:" in l]
result(len(para) == 1 and human_bytes(req) in para[0] and human_bytes(free) in para[0] and
       "Confidence: high" in para[0],
       "OOM log: one paragraph for the OOM: its cause, its numbers, its confidence", para)
adv = (d or {}).get("advice") or []
result(bool(adv) and "**Top advice:**" in md and
       "**%s**: saves %s" % (adv[0]["title"], human_bytes(adv[0]["saving_bytes"])) in md,
       "OOM log: the top advice follows the verdict, with its saving", adv[:1])
html = render(oom, "html") or ""
m = re.search(r'<div id="verdict" class="vr-verdict ([a-z-]+)"', html)
result(m is not None and m.group(1) == "vr-failed" and html.count('id="verdict"') == 1,
       "OOM log: the HTML banner is id=\"verdict\", styled as failed", m and m.group(0))
result(m is not None and html.index("<h1>") < m.start() < html.index("<h2>"),
       "OOM log: the HTML banner follows the title, before every section", "")
ban = html[m.start():html.index("</div>", m.start())] if m else ""
result(all(human_bytes(x) in ban for x in (req, free, cap, outside)),
       "OOM log: the HTML banner states the request, free, capacity and outside", ban)

# ---- 2. near capacity, and healthy -------------------------------------------
subprocess.run([sys.executable, gen, "training", "train.json", "truth.json"], check=True)
trace = json.load(open("train.json"))
peak_res = max(e["args"]["Total Reserved"] for e in trace["traceEvents"]
               if e.get("name") == "[memory]")
h100 = trace["deviceProperties"][0]["totalGlobalMem"]
tight = peak_res * 100 // 95
trace["deviceProperties"][0]["totalGlobalMem"] = tight
json.dump(trace, open("tight.json", "w"))

for name, path, capacity, state, label, css in (
        ("near capacity", "tight.json", tight, "at-risk", "AT RISK", "vr-at-risk"),
        ("healthy", "train.json", h100, "ok", "OK", "vr-ok")):
    d = render([path], "json")
    v = (d or {}).get("verdict") or {}
    result(v.get("state") == state, "%s: the verdict is %s" % (name, state), v)
    result(v.get("peak_bytes") == peak_res and v.get("capacity_bytes") == capacity and
           near(v.get("peak_share"), int(peak_res * 10000 / capacity) / 10000, 0.0001),
           "%s: the peak reserved (%d) against the capacity (%d)" % (name, peak_res, capacity), v)
    fs = (d or {}).get("findings", [])
    result([f["kind"] for f in fs] == (["near-capacity"] if state == "at-risk" else []),
           "%s: the findings behind it" % name, [f["kind"] for f in fs])
    md = render([path], "md") or ""
    top = banner_lines(md)
    want = "Peak against capacity: **%s of %s (%.1f%%)**" % (
        human_bytes(peak_res), human_bytes(capacity), int(peak_res * 10000 / capacity) / 100)
    result(top and top[0].startswith("> **Verdict: %s.**" % label) and any(want in l for l in top),
           "%s: the Markdown banner says %s and %s" % (name, label, want), "\n".join(top))
    if state == "ok":
        result(not (d or {}).get("advice") and "Top advice" not in md and "## Advice" not in md,
               "healthy: no advice, no advice heading", (d or {}).get("advice"))
    heads = [l for l in md.splitlines() if l.startswith("## ")]
    result(heads and heads[0] == "## Where the memory went at the peak" and
           md.index("**Verdict:") < md.index(heads[0]),
           "%s: the verdict comes before the breakdown, the breakdown before the rest" % name,
           heads[:4])
    html = render([path], "html") or ""
    m = re.search(r'<div id="verdict" class="vr-verdict ([a-z-]+)"', html)
    h2 = html.find("<h2>Where the memory went at the peak</h2>")
    result(m is not None and m.group(1) == css and 0 <= m.start() < h2,
           "%s: HTML: the banner (%s) before the breakdown" % (name, css), m and m.group(0))

# ---- 3. the estimate beside the breakdown ------------------------------------
truth = json.load(open("truth.json"))
peak_seq = max(range(len(truth["timeline"])), key=lambda i: (truth["timeline"][i][2], -i)) + 1
live = {}
for a in truth["allocations"]:
    if a["alloc_seq"] <= peak_seq and (a["free_seq"] is None or a["free_seq"] > peak_seq):
        live[a["category"]] = live.get(a["category"], 0) + a["bytes"]
params = live["parameter"] // 4          # fp32 weights, as the generator makes them
want_parts = {"parameter": (live["parameter"], params * 4),
              "gradient": (live.get("gradient", 0), params * 4),       # fp32 gradients
              "optimizer_state": (live.get("optimizer_state", 0), params * 8)}  # Adam: 2 moments
d = render(["train.json"], "json")
est = (d or {"devices": [{}]})["devices"][0].get("estimate") or {}
got = {p["category"]: (p["measured_bytes"], p["estimated_bytes"]) for p in est.get("parts", [])}
result(est.get("params") == params and est.get("dtype") == "fp32" and
       est.get("optimizer") == "adamw" and got == want_parts,
       "estimate: %d parameters from %d parameter bytes at fp32; measured and AdamW's parts"
       % (params, live["parameter"]), (est, want_parts))
result("fp32" in est.get("assumption", "") and "AdamW" in est.get("assumption", ""),
       "estimate: says the assumption it used", est.get("assumption"))
md = render(["train.json"], "md") or ""
rows = ["| %s | %s | %s |" % (c.replace("_", "\\_"), human_bytes(m), human_bytes(e))
        for c, (m, e) in want_parts.items()]
bd, inputs = md.find("## Where the memory went at the peak"), md.find("## Inputs")
result(all(0 <= bd < md.find(r) < inputs for r in rows) and
       "{:,}".format(params) in md[bd:inputs],
       "estimate: the Markdown puts it in the breakdown, measured beside estimated", rows)
d = render([os.path.join(logs, "oom-05.log")], "json")
result(all(x.get("estimate") is None for x in (d or {"devices": []})["devices"]),
       "estimate: none without parameter bytes", "")

# ---- 4. three hundred OOMs: the findings' order, the summary's bound ---------
MSG = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate {req} MiB. GPU 0 "
       "has a total capacity of 23.65 GiB of which {free} MiB is free. Including non-PyTorch "
       "memory, this process has 23.60 GiB memory in use. Of the allocated memory 22.90 GiB is "
       "allocated by PyTorch, and 194.87 MiB is reserved by PyTorch but unallocated.")
with open("many.log", "w") as fh:
    for i in range(300):
        # every tenth: free far above the request (inconsistent); the rest capacity
        free = 9000 if i % 10 == 0 else 11
        fh.write("2024-03-13 %02d:%02d:%02d,118 - INFO - step %d\n"
                 % (10 + i // 3600, i // 60 % 60, i % 60, i))
        fh.write("2024-03-13 %02d:%02d:%02d,500 - ERROR - " % (10 + i // 3600, i // 60 % 60, i % 60)
                 + MSG.format(req=20 + i % 7, free=free) + "\n")
d = render(["many.log", "tight.json"], "json")
fs = (d or {}).get("findings", [])
sev = {"critical": 0, "warning": 1, "info": 2}
order = [(sev[f["severity"]], f["ts_ns"] is None, f["ts_ns"] or 0) for f in fs]
# two shapes (30 inconsistent, 270 capacity, 20-26 MiB each): each told by its first
told = [1 + f.get("more_like_it", {}).get("more", 0) for f in fs if f["severity"] == "critical"]
result(told == [30, 270] and order == sorted(order) and d["verdict"]["finding_count"] == 301,
       "300 OOMs and a peak: findings by severity, each OOM's before the peak's, then time",
       [(f["severity"], f["kind"], f["ts_ns"]) for f in fs[:3] + fs[-3:]])
result(fs and fs[-1]["kind"] == "near-capacity" and (d or {})["verdict"]["state"] == "failed" and
       d["verdict"]["cause"] == fs[0]["title"],
       "300 OOMs and a peak: failed, the first OOM's finding is the primary cause",
       (d or {}).get("verdict"))

def summary_ok(name, inputs):
    rc, out, err = run(*inputs, "--summary", "-o", "-")
    n = len(out)
    result(rc in (0, 3) and 0 < n <= 4000 and out.startswith("### GPU memory: "),
           "--summary on %s: %d characters (at most 4,000)" % (name, n), err[:300])
    return out

out = summary_ok("300 OOMs and a peak", ["many.log", "tight.json"])
result("### GPU memory: FAILED" in out and "29 more like it: requested 20.0 MiB to 26.0 MiB" in out and
       "269 more like it: requested 20.0 MiB to 26.0 MiB" in out and
       "**Allocated at the peak**" in out and
       (("Top advice" in out) == bool((d or {}).get("advice"))),
       "--summary: the verdict, the findings of each shape and how many more like it, the breakdown, advice when there is some",
       out[:600])
biggest = sorted(glob.glob(os.path.join(real, "*", "*")), key=os.path.getsize)[-6:]
summary_ok("the six biggest real inputs", biggest)
summary_ok("every real trace and snapshot", glob.glob(os.path.join(real, "kineto", "*")) +
           glob.glob(os.path.join(real, "snapshot", "*")))
# A summary template that would run long is cut at a line, and says so.
os.makedirs("tpl", exist_ok=True)
open("tpl/summary.md.mustache", "w").write("{{#oom_events}}\n- {{source}}: {{message}}\n{{/oom_events}}\n")
rc, out, err = run("many.log", "--summary", "--templates", "tpl", "-o", "-")
result(rc == 0 and len(out) <= 4000 and out.rstrip().endswith("has the rest._") and
       out.split("\n")[-4].startswith("- "),
       "--summary: a longer text is cut at a line to 4,000 characters, saying so",
       (len(out), out[-300:]))
rc, out, err = run("many.log", "--summary", "-o", "x.html")
result(rc == 2 and "--summary writes Markdown" in err and not os.path.exists("x.html"),
       "--summary with an HTML output: a usage error", err)
PYEOF
tap_lines results.txt

# ---- 5. the terminal's line ---------------------------------------------------
need script || true
OOM=$LOGS/oom-05.log
script -qec "'$VRAMREPORT' '$OOM' -o tty.md" /dev/null </dev/null >tty.txt 2>&1 || true
size=$("$PYTHON" -c "import os, sys; from vrtest import human_bytes; print(human_bytes(os.path.getsize('tty.md')))")
line=$(tr '\r' '\n' <tty.txt | grep '^vramreport: wrote' || true)
case $line in
"vramreport: wrote tty.md ($size): FAILED: cuda:0 ran out of memory asking for 74.0 MiB"*)
    pass "on a terminal: one line with the output, its size ($size) and the verdict" ;;
*) fail "on a terminal: one line with the output, its size ($size) and the verdict" "$(cat tty.txt)" ;;
esac
script -qec "'$VRAMREPORT' '$OOM' -q -o tty2.md" /dev/null </dev/null >tty2.txt 2>&1 || true
if [ -s tty2.md ] && ! grep -q 'wrote' tty2.txt; then
    pass "on a terminal with --quiet: no line"
else
    fail "on a terminal with --quiet: no line" "$(cat tty2.txt)"
fi
vr_run piped "$OOM" -o piped.md
if [ "$rc" = 0 ] && ! grep -q 'wrote' piped.err; then
    pass "stderr not a terminal: no line"
else
    fail "stderr not a terminal: no line" "$(cat piped.err)"
fi
finish
