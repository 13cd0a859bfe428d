# tests/oom-wordings-torch.sh runs this.
import json, os, sqlite3, subprocess, sys
from decimal import Decimal, ROUND_HALF_UP
from vrtest import result, run_vr

vr, logs = sys.argv[1], sys.argv[2]


def run(*args):
    return run_vr(vr, *args)

UNITS = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "KB": 2**10, "MB": 2**20, "GB": 2**30}

def b(text):
    """A size as the message prints it, in bytes (format_size's binary units)."""
    num, unit = text.split(" ")
    return int((Decimal(num) * UNITS[unit]).quantize(Decimal(1), rounding=ROUND_HALF_UP))

# Each message's figures, read off it by hand: requested, allocated,
# reserved, free, capacity, allowed, "this process" (MPS: its heaps plus
# its other allocations), device index; wording; the expert's cause.
# cudaMallocAsync's limit of 17179869184.00 GiB is UINT64_MAX: no limit.
N = None
WANT = {
    16: dict(wording="thc", cause="insufficient-evidence"),
    17: dict(wording="thc", cause="insufficient-evidence"),
    18: dict(requested=b("320.00 MiB"), allocated=b("6.89 GiB"), free=b("2.94 MiB"),
             capacity=b("23.69 GiB"), device=0, wording="cuda-malloc-async", cause="other-process"),
    19: dict(requested=b("512.00 KiB"), allocated=b("15.16 GiB"), free=b("0 bytes"),
             capacity=b("15.99 GiB"), device=0, wording="cuda-malloc-async", cause="capacity"),
    20: dict(requested=b("1.88 GiB"), allocated=b("12.20 GiB"), free=b("0 bytes"),
             capacity=b("16.00 GiB"), device=0, wording="cuda-malloc-async", cause="other-process"),
    21: dict(requested=b("12.50 MiB"), allocated=b("5.96 GiB"), free=b("5.00 GiB"),
             capacity=b("12.00 GiB"), device=0, wording="cuda-malloc-async", cause="inconsistent"),
    22: dict(requested=b("292.50 MiB"), reserved=b("9.57 GiB"), allowed=b("27.20 GiB"),
             self=b("9.57 GiB") + b("17.35 GiB"), wording="mps", cause="capacity"),
    23: dict(requested=b("6.25 MB"), reserved=b("8.89 GB"), allowed=b("9.07 GB"),
             self=b("8.89 GB") + b("172.98 MB"), wording="mps", cause="capacity"),
    24: dict(requested=b("256 bytes"), reserved=b("16.00 GB"), allowed=b("18.13 GB"),
             self=b("16.00 GB") + b("3.31 GB"), wording="mps", cause="capacity"),
    25: dict(requested=b("5.81 GiB"), reserved=b("15.72 GiB"), allowed=b("18.13 GiB"),
             self=b("15.72 GiB") + b("2.41 MiB"), wording="mps", cause="oversized-request"),
    26: dict(requested=b("432.00 MiB"), allocated=b("8.08 GiB"), reserved=b("8.08 GiB") + b("321.96 MiB"),
             free=b("7.12 GiB"), capacity=b("15.92 GiB"), device=0, wording="current", cause="inconsistent"),
    27: dict(requested=b("16.00 GiB"), allocated=0, reserved=0, free=b("15.09 GiB"),
             capacity=b("15.24 GiB"), device=0, wording="current", cause="oversized-request"),
    28: dict(requested=b("1.88 GiB"), allocated=b("21.65 GiB"), reserved=b("21.65 GiB") + b("279.78 MiB"),
             free=b("1.70 GiB"), capacity=b("23.98 GiB"), device=0, wording="current", cause="capacity"),
    29: dict(requested=b("1.71 GiB"), allocated=b("176.00 MiB"), reserved=b("176.00 MiB"),
             capacity=b("15.56 GiB"), device=0, wording="reserved-in-total", cause="insufficient-evidence"),
    30: dict(requested=b("4.66 GiB"), allocated=b("195.50 KiB"), reserved=b("195.50 KiB") + b("1.81 MiB"),
             free=b("5.65 GiB"), capacity=b("5.65 GiB"), device=0, wording="current", cause="inconsistent"),
    31: dict(requested=b("8.11 GiB"), allocated=0, reserved=0, free=b("16.54 GiB"),
             capacity=b("16.54 GiB"), allowed=b("8.27 GiB"), device=0, wording="current", cause="inconsistent"),
    32: dict(wording="cuda-error", cause="insufficient-evidence"),
}
# What the detail must say: the async block's outside memory is reckoned
# from allocated (it tells no reserved); MPS's other allocations are this
# process's, outside PyTorch's allocator.
DETAIL = {18: "(capacity - free - allocated)", 22: "is outside PyTorch's allocator",
          29: "tells no free memory"}
FIG = ["requested", "allocated", "reserved", "free", "capacity", "allowed", "self", "device"]
SQL = {"requested": "requested_bytes", "allocated": "total_allocated", "reserved": "total_reserved",
       "free": "device_free_bytes", "capacity": "capacity_bytes", "allowed": "allowed_bytes",
       "device": "device_idx"}

def events(db):
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    rows = [dict(r) for r in con.execute("SELECT * FROM oom_event ORDER BY id")]
    for r in rows:
        ps = con.execute("SELECT pid, used_bytes FROM oom_process WHERE oom_id = ?", (r["id"],)).fetchall()
        r["self"] = ps[0][1] if len(ps) == 1 and ps[0][0] is None else (None if not ps else ps)
    tallies = dict(con.execute("SELECT kind, sum(count) FROM source_tally GROUP BY kind").fetchall())
    con.close()
    return rows, tallies

def got_figures(r):
    return {k: (r["self"] if k == "self" else r[SQL[k]]) for k in FIG}

def report(path, *extra):
    rc, out, err = run(path, "-f", "json", "-q", *extra)
    try:
        return json.loads(out), err
    except ValueError:
        return None, "exit %d: %s" % (rc, err)

def oom_findings(doc):
    return [f for f in doc.get("findings", []) if f.get("kind") in
            ("insufficient-evidence", "inconsistent", "other-process", "fragmentation", "leak",
             "oversized-request", "capacity")]

# ---- 1. each real message alone ---------------------------------------------
for n, want in sorted(WANT.items()):
    path = os.path.join(logs, "oom-%02d.log" % n)
    db = "m%02d.db" % n
    rc, out, err = run("import", path, "--db", db, "-q")
    result(rc == 0, "oom-%02d.log is imported as a job log" % n, err)
    if rc != 0:
        continue
    ev, _ = events(db)
    result(len(ev) == 1, "oom-%02d: one OOM event" % n, [e["message"][:80] for e in ev])
    if not ev:
        continue
    e = ev[0]
    exp = {k: want.get(k) for k in FIG}
    got = got_figures(e)
    bad = ["%s: got %r, want %r" % (k, got[k], exp[k]) for k in FIG if got[k] != exp[k]]
    result(not bad, "oom-%02d: its figures are the message's" % n, "; ".join(bad))
    result(e["wording"] == want["wording"], "oom-%02d: wording %s" % (n, want["wording"]), e["wording"])
    doc, err = report(path)
    fs = oom_findings(doc) if doc else []
    kinds = [f["kind"] for f in fs]
    result(kinds == [want["cause"]], "oom-%02d: the cause is %s" % (n, want["cause"]), (kinds, err))
    if fs and n in DETAIL:
        result(DETAIL[n] in fs[0]["detail"], "oom-%02d: the detail says %r" % (n, DETAIL[n]), fs[0]["detail"])
    if fs and want["cause"] == "insufficient-evidence":
        d = fs[0]["detail"]
        result("snapshot" in d and ("memory_summary" in d or "memory_stats" in d),
               "oom-%02d: the finding says what to capture next time" % n, d)
    if doc:
        result(doc.get("verdict", {}).get("state") == "failed" or
               doc.get("verdict", {}).get("oom_count") == 1,
               "oom-%02d: the verdict counts one OOM" % n, doc.get("verdict"))

# ---- 2. the cudaMallocAsync block's edges -----------------------------------
BLOCK = ("torch.cuda.OutOfMemoryError: Allocation on device 1 would exceed allowed memory. (out of memory)\n"
         "Currently allocated     : 10.50 GiB\n"
         "Requested               : 2.00 GiB\n"
         "Device limit            : 23.69 GiB\n"
         "Free (according to CUDA): 11.00 GiB\n"
         "PyTorch limit (set by user-supplied memory fraction)\n"
         "                        : %s\n")

def one(name, text):
    with open(name, "w") as f:
        f.write(text)
    db = name + ".db"
    rc, out, err = run("import", name, "--db", db, "-q")
    ev, tallies = events(db) if rc == 0 else ([], {})
    return rc, ev, tallies, err

# a fraction set: its limit is what the process may have
rc, ev, _, err = one("fraction.log", BLOCK % "11.84 GiB")
result(rc == 0 and len(ev) == 1 and ev[0]["allowed_bytes"] == b("11.84 GiB") and ev[0]["device_idx"] == 1,
       "async block: a memory fraction's limit is read as allowed, device 1 from 'on device 1'",
       [(e["allowed_bytes"], e["device_idx"]) for e in ev] or err)
doc, err = report("fraction.log")
fs = oom_findings(doc) if doc else []
# 10.50 + 2.00 GiB above the 11.84 GiB allowed, with 11 GiB free: the limit, not the device
result([f["kind"] for f in fs] == ["inconsistent"] and "allowed" in fs[0]["detail"],
       "async block with a fraction: the limit explains it (inconsistent, 'allowed' in the detail)",
       [(f["kind"], f["detail"]) for f in fs] or err)
# a limit equal to the device is no limit
rc, ev, _, err = one("full.log", BLOCK % "23.69 GiB")
result(rc == 0 and len(ev) == 1 and ev[0]["allowed_bytes"] is None,
       "async block: a limit equal to the device limit is no limit", [e["allowed_bytes"] for e in ev] or err)
# the unset limit (UINT64_MAX) is no unreadable figure
rc, ev, tallies, err = one("unset.log", BLOCK % "17179869184.00 GiB")
result(rc == 0 and len(ev) == 1 and ev[0]["allowed_bytes"] is None and not tallies.get("unreadable_oom_figure"),
       "async block: the unset limit is neither a limit nor an unreadable figure", (tallies, err))
# the line after the block is not part of it
rc, ev, _, err = one("after.log", BLOCK % "17179869184.00 GiB" + "Free memory on GPU 1 is low, reserved 2 GiB\n")
result(rc == 0 and len(ev) == 1 and ev[0]["message"].endswith("17179869184.00 GiB"),
       "async block: it ends at the limit's figure, the next line is not joined",
       [e["message"][-60:] for e in ev] or err)

# ---- 3. THC's two lines -------------------------------------------------------
CHECK = "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCTensorRandom.cu line=25 error=2 : out of memory\n"
EXC = "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCTensorRandom.cu:%d\n"
TB = "Traceback (most recent call last):\n  File \"mgn.py\", line 314, in <module>\n    run()\n"
rc, ev, tallies, err = one("thc-same.log", CHECK + TB + EXC % 25)
result(rc == 0 and len(ev) == 1 and tallies.get("repeated_oom") == 1,
       "THC: the exception after its THCudaCheck line, same place, is one OOM (a repeat)", (len(ev), tallies, err))
rc, ev, _, err = one("thc-other.log", CHECK + TB + EXC % 26)
result(rc == 0 and len(ev) == 2, "THC: an exception at another place is a second OOM", (len(ev), err))
rc, ev, _, err = one("thc-far.log", CHECK + "step\n" * 250 + TB + EXC % 25)
result(rc == 0 and len(ev) == 2, "THC: the same place past a traceback's reach (200 lines) is a second OOM",
       (len(ev), err))
rc, ev, _, err = one("thc-twice.log", (CHECK + TB + EXC % 25) * 2)
result(rc == 0 and len(ev) == 2, "THC: two failures, each told twice, are two OOMs", (len(ev), err))

# ---- 4. MPS without a watermark, XPU bare -----------------------------------
rc, ev, _, err = one("mps-nolimit.log",
                     "RuntimeError: MPS backend out of memory (MPS allocated: 30.00 GiB, other allocations: 1.00 GiB). "
                     "Tried to allocate 4.00 GiB on private pool.\n")
result(rc == 0 and len(ev) == 1 and ev[0]["allowed_bytes"] is None and ev[0]["total_reserved"] == b("30.00 GiB")
       and ev[0]["requested_bytes"] == b("4.00 GiB") and ev[0]["self"] == b("31.00 GiB"),
       "MPS without a high watermark: no limit, its figures read", [got_figures(e) for e in ev] or err)
rc, ev, _, err = one("xpu-bare.log", "torch.OutOfMemoryError: XPU out of memory.\n")
result(rc == 0 and len(ev) == 1 and ev[0]["wording"] == "xpu-bare", "XPU's bare wording is an OOM",
       [e["wording"] for e in ev] or err)

# ---- 5. the unexplained rule either side of half the device -----------------
def xpu(req, alloc):
    return ("RuntimeError: XPU out of memory. Tried to allocate %s (GPU 0; 16.00 GiB total capacity; "
            "%s already allocated; %s reserved in total by PyTorch)\n" % (req, alloc, alloc))
for name, text, want in [("half-under.log", xpu("2.00 GiB", "5.99 GiB"), "insufficient-evidence"),
                         ("half-at.log", xpu("2.00 GiB", "6.00 GiB"), "capacity")]:
    with open(name, "w") as f:
        f.write(text)
    doc, err = report(name)
    kinds = [f["kind"] for f in oom_findings(doc)] if doc else err
    result(kinds == [want], "%s: PyTorch's memory and the request %s half the device, no free told: %s"
           % (name, "under" if "under" in name else "at", want), kinds)
