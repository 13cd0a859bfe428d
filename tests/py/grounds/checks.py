# tests/grounds.sh runs this: a verdict only on grounds (docs/diagnosis.md,
# "The verdict's grounds"). Each figure is read here from the input.
import json, os, re, subprocess, sys, traceback

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import human_bytes, result, run_vr

vr, gen, real = sys.argv[1:4]
GIB, MIB = 2**30, 2**20


def run(*args):
    return run_vr(vr, *args, "-q")


def report(inputs, *extra):
    rc, out, err = run(*inputs, "-f", "json", "-o", "-", *extra)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, {}, err


def verdict(d):
    return (d or {}).get("verdict") or {}


def kinds(d):
    return [f["kind"] for f in (d or {}).get("findings", [])]


def csv(path, rows, total_mib=81559):
    with open(path, "w") as f:
        f.write("timestamp, index, name, memory.used [MiB], memory.total [MiB], "
                "utilization.gpu [%]\n")
        for i, used in enumerate(rows):
            f.write("2024/05/01 10:00:%02d.000, 0, NVIDIA A100-SXM4-80GB, %d MiB, %d MiB, 97 %%\n"
                    % (i, used, total_mib))


def checks():
    # ---- 1. monitoring readings alone, nothing near full: unknown -----------
    smi = os.path.join(real, "nvsmi", "exporter-capture-h100-80gb.txt")
    rc, d, err = report([smi])
    v = verdict(d)
    result(v.get("state") == "unknown" and not kinds(d),
           "nvidia-smi readings alone at 24 %: the verdict is unknown, no finding", v)
    result("Only monitoring readings" in v.get("cause", "") and "snapshot" in v.get("cause", ""),
           "readings alone: the cause says what is missing and what to add", v.get("cause"))
    rc, _, _ = run(smi, "-o", "any.md", "--fail-on", "any")
    result(rc == 0, "readings alone: --fail-on any exits 0 (nothing found)", rc)
    rc, out, _ = run(smi, "-f", "html", "-o", "-")
    result('id="verdict" class="vr-unknown"' in out or
           re.search(r'<div[^>]*class="vr-unknown"[^>]*id="verdict"', out) is not None or
           re.search(r'id="verdict"[^>]*vr-unknown', out) is not None,
           "readings alone: the HTML banner's class is vr-unknown", out[:0])
    result("#verdict.vr-unknown" in out, "the page styles vr-unknown (neutral)", "")

    # gpustat alone (real, an A100 at 68.5 of 80 GiB at most): no verdict either
    gs = os.path.join(os.path.dirname(real), "gpustat", "watch-a100-cpu.txt")
    rc, d, err = report([gs])
    result(verdict(d).get("state") == "unknown" and not kinds(d) and
           "Only monitoring readings" in verdict(d).get("cause", ""),
           "gpustat readings alone, nothing near full: unknown", verdict(d))

    # ---- 2. readings at full in every reading: AT RISK, near-capacity ---------
    csv("full.csv", [81559] * 6)
    rc, d, err = report(["full.csv"])
    v = verdict(d)
    result(v.get("state") == "at-risk" and kinds(d) == ["near-capacity"],
           "81,559 of 81,559 MiB in every reading: AT RISK with a near-capacity finding",
           (v, kinds(d)))
    f = (d.get("findings") or [{}])[0]
    ev = f.get("evidence", {})
    result(ev.get("nvidia_smi_used_bytes", {}).get("value") == 81559 * MIB and
           ev.get("capacity_bytes", {}).get("value") == 81559 * MIB and
           ev.get("full_readings", {}).get("value") == 6 and
           ev.get("readings", {}).get("value") == 6,
           "full readings: the finding's figures are the CSV's (81559 MiB, 6 of 6)", ev)
    rc, _, _ = run("full.csv", "-o", "full.md", "--fail-on", "near-capacity")
    result(rc == 3, "full readings: --fail-on near-capacity exits 3", rc)
    # 89 % in every reading: not full (the bound pass's 90 %)
    csv("most.csv", [81559 * 89 // 100] * 6)
    rc, d, err = report(["most.csv"])
    result(verdict(d).get("state") == "unknown" and not kinds(d),
           "89 % in every reading: not near capacity, and no verdict from readings alone",
           (verdict(d), kinds(d)))

    # ---- 3. used above total: suspect input, no verdict -----------------------
    csv("over.csv", [40000, 90000, 90000], total_mib=81559)
    rc, d, err = report(["over.csv"])
    sus = [f for f in d.get("findings", []) if f["kind"] == "suspect-input"]
    result(len(sus) == 1 and sus[0]["severity"] == "info" and
           sus[0]["evidence"]["contradiction"]["value"] == "used-above-total" and
           sus[0]["evidence"]["figure"]["value"] == 90000 * MIB and
           sus[0]["evidence"]["bound"]["value"] == 81559 * MIB and
           "2 readings" in sus[0]["title"],
           "used 90000 MiB of 81559: one suspect-input finding naming the two figures", sus)
    result(verdict(d).get("state") != "ok" and "contradict" in verdict(d).get("cause", ""),
           "used above total: never OK, the cause says the inputs contradict",
           verdict(d))

    # ---- 4. a snapshot, no capacity anywhere; --capacity ----------------------
    snap = os.path.join(real, "snapshot", "cs336-bcrafton.pickle")
    rc, d, err = report([snap])
    v = verdict(d)
    result(v.get("state") == "unknown" and "--capacity" in v.get("cause", ""),
           "a snapshot with no capacity: unknown, the cause names --capacity", v)
    dev = (d.get("devices") or [{}])[0]
    res, alloc = dev.get("peak_reserved_bytes"), dev.get("peak_allocated_bytes")
    result(res and alloc and ("%s allocated, %s reserved" % (human_bytes(alloc), human_bytes(res)))
           in v.get("cause", ""),
           "the unknown sentence says the peak allocated and reserved both", v.get("cause"))
    for given, cap in (("80GiB", 80 * GIB), ("A100-80GB", 80 * GIB), ("24 GB", 24 * 10**9)):
        rc, d, err = report([snap], "--capacity", given)
        v = verdict(d)
        dev = (d.get("devices") or [{}])[0]
        result(v.get("state") == "ok" and v.get("capacity_bytes") == cap and
               v.get("capacity_from") == "--capacity" and dev.get("capacity_bytes") == cap and
               dev.get("capacity_from") == "--capacity" and
               (d.get("capacity_given") or {}).get("bytes") == cap and
               v.get("peak_share") == int(res * 10000 / cap) / 10000,
               "--capacity %s: the peak judged against %d bytes: OK" % (given, cap),
               (v, dev.get("capacity_bytes"), d.get("capacity_given")))
    rc, d, err = report([snap], "--capacity", "4GiB")
    result(verdict(d).get("state") == "at-risk" and kinds(d) == ["near-capacity"] and
           d["findings"][0]["evidence"]["capacity_bytes"]["source"] == "--capacity",
           "--capacity 4GiB (the peak reserved is %s): near-capacity, its capacity from "
           "--capacity" % human_bytes(res), (verdict(d), kinds(d)))
    for bad, why in (("A100", "ambiguous"), ("12", "unknown GPU"), ("0.5MiB", "1MiB"),
                     ("eighty", "unknown GPU")):
        rc, out, err = run(snap, "--capacity", bad, "-o", "bad.md")
        lines = [l for l in err.splitlines() if l.strip()]
        result(rc == 2 and lines and lines[0].startswith("vramreport: --capacity '%s'" % bad)
               and why in lines[0] and not os.path.exists("bad.md"),
               "--capacity %s: a usage error saying why (%s), no report" % (bad, why), err)
    # a kept database analysed again with another capacity
    if os.path.exists("kept.db"):
        os.remove("kept.db")
    run(snap, "--db", "kept.db", "-o", "kept1.md")
    rc, out, err = run("report", "--db", "kept.db", "--capacity", "80GiB", "-f", "json", "-o", "-")
    try:
        d = json.loads(out)
    except ValueError:
        d = {}
    result(rc == 0 and verdict(d).get("state") == "ok" and
           (d.get("capacity_given") or {}).get("said") == "80GiB",
           "report --db with --capacity analyses the kept database again", (rc, err, verdict(d)))
    rc, out, err = run("report", "--db", "kept.db", "-f", "json", "-o", "-")
    try:
        d = json.loads(out)
    except ValueError:
        d = {}
    result(rc == 0 and verdict(d).get("state") == "unknown" and d.get("capacity_given") is None,
           "and without --capacity again: no capacity, unknown", (rc, verdict(d)))

    # ---- 5. a memory_summary() box: its peaks, judged only with --capacity ----
    box = os.path.join(real, "summary",
                       "facebookresearch__fairseq__issue2442__memory_summary_PARTIAL.txt")
    text = open(box).read()
    m = re.search(r"GPU reserved memory\s*\|\s*\d+ MB \|\s*(\d+) MB", text)
    peak_res = int(m.group(1)) * MIB  # PyTorch's "MB" are MiB
    m = re.search(r"Allocated memory\s*\|\s*\d+ MB \|\s*(\d+) MB", text)
    peak_alloc = int(m.group(1)) * MIB
    rc, d, err = report([box])
    v = verdict(d)
    want = "%s allocated, %s reserved" % (human_bytes(peak_alloc), human_bytes(peak_res))
    result(v.get("state") == "unknown" and "memory_summary()" in v.get("cause", "") and
           want in v.get("cause", "") and "--capacity" in v.get("cause", ""),
           "a memory_summary() box without OOMs: unknown, its peaks (%s) and --capacity" % want,
           v)
    rc, d, err = report([box], "--capacity", "80GiB")
    result(verdict(d).get("state") == "ok" and not kinds(d),
           "the box with --capacity 80GiB: OK", verdict(d))
    tight = peak_res * 100 // 95
    rc, d, err = report([box], "--capacity", "%dB" % tight)
    f = (d.get("findings") or [{}])[0]
    ev = f.get("evidence", {})
    result(verdict(d).get("state") == "at-risk" and f.get("kind") == "near-capacity" and
           ev.get("peak_reserved_bytes", {}).get("value") == peak_res and
           ev.get("peak_allocated_bytes", {}).get("value") == peak_alloc and
           ev.get("capacity_bytes", {}).get("value") == tight,
           "the box with a capacity its peak reserved is 95 % of: near-capacity with the "
           "box's figures", (verdict(d), f))

    # ---- 6. a trace whose allocated exceeds its reserved: suspect -------------
    subprocess.run([sys.executable, gen, "training", "train.json", "truth.json"], check=True,
                   capture_output=True)
    trace = json.load(open("train.json"))
    for e in trace["traceEvents"]:
        if e.get("name") == "[memory]":
            e["args"]["Total Reserved"] = e["args"]["Total Allocated"] // 2
    json.dump(trace, open("half.json", "w"))
    rc, d, err = report(["half.json"])
    # The reader refuses such events (each one counted as malformed): the
    # report has no peak from them, and so no OK.
    result("is impossible (over Total Reserved" in err and verdict(d).get("state") == "unknown"
           and not d.get("devices"),
           "a trace with reserved half of allocated: its events refused, the verdict unknown",
           (err[:300], verdict(d)))
    rc, d, err = report(["train.json"])
    result(verdict(d).get("state") == "ok" and "suspect-input" not in kinds(d),
           "the same trace unchanged: OK on its own capacity", (verdict(d), kinds(d)))


def oom_snapshot():
    """A snapshot whose oom entry says 1 MiB free, its one segment 20 MiB
    reserved: the device holds at least 21 MiB; nothing states more."""
    import pickle
    seg = {"device": 0, "address": 1 << 40, "total_size": 20 * MIB, "allocated_size": 14 * MIB,
           "active_size": 14 * MIB, "requested_size": 14 * MIB, "stream": 0,
           "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
           "frames": [], "blocks": [
               {"address": 1 << 40, "size": 14 * MIB, "requested_size": 14 * MIB,
                "state": "active_allocated", "frames": []},
               {"address": (1 << 40) + 14 * MIB, "size": 6 * MIB, "requested_size": 0,
                "state": "inactive", "frames": []}]}
    t = 1700000000000000
    trace = [{"action": "segment_alloc", "addr": 1 << 40, "size": 20 * MIB, "stream": 0,
              "time_us": t},
             {"action": "alloc", "addr": 1 << 40, "size": 14 * MIB, "stream": 0, "time_us": t + 1},
             {"action": "oom", "device_free": 1 * MIB, "size": 8 * MIB, "stream": 0,
              "time_us": t + 2}]
    open("oom.pickle", "wb").write(pickle.dumps({"segments": [seg], "device_traces": [trace]},
                                                protocol=4))
    rc, d, err = report(["oom.pickle"])
    f = (d.get("findings") or [{}])[0]
    least = f.get("evidence", {}).get("capacity_at_least_bytes", {})
    result(least.get("value") == 21 * MIB and least.get("source") == "derived" and
           "capacity_bytes" not in f.get("evidence", {}) and
           verdict(d).get("capacity_at_least_bytes") == 21 * MIB and
           verdict(d).get("state") == "failed",
           "a snapshot's OOM with 1 MiB free and 20 MiB reserved: capacity at least 21 MiB",
           (f.get("evidence"), verdict(d)))
    rc, out, err = run("oom.pickle", "-f", "md", "-o", "-")
    result("of at least 21.0 MiB" in out,
           "the banner says the capacity is at least 21.0 MiB", out[:1500])
    rc, d, err = report(["oom.pickle"], "--capacity", "24GiB")
    f = (d.get("findings") or [{}])[0]
    result(f.get("evidence", {}).get("capacity_bytes", {}).get("value") == 24 * GIB and
           f["evidence"]["capacity_bytes"]["source"] == "--capacity" and
           "capacity_at_least_bytes" not in f["evidence"],
           "with --capacity 24GiB: the OOM's capacity is the given one", f.get("evidence"))


def fast_copy():
    """The real V100 trace's fastest memset (9 MiB in 10 us, a microsecond
    clock) is above the GPU's 900 GB/s: flagged, never a rate; the OK on
    its memory stands (a copy's speed says nothing of capacity)."""
    tb = os.path.join(real, "kineto", "tbplugin-v100-resnet50-2021.pt.trace.json.gz")
    rc, d, err = report([tb])
    sus = [f for f in d.get("findings", []) if f["kind"] == "suspect-input"]
    bw = (d.get("bandwidth_or_capacity") or [{}])[0]
    ev = sus[0]["evidence"] if sus else {}
    result(len(sus) == 1 and ev["contradiction"]["value"] == "copy-above-peak" and
           ev["figure"]["value"] == bw.get("best_copy_bytes_per_s") and
           ev["bound"]["value"] == bw.get("bandwidth_bytes_per_s") == 900 * 10**9 and
           ev["figure"]["value"] > ev["bound"]["value"] and bw.get("best_copy_above_peak") is True,
           "a memset faster than the V100's 900 GB/s: suspect-input, flagged in the table", (sus, bw))
    result(verdict(d).get("state") == "ok",
           "the suspect copy does not void the OK on memory", verdict(d))
    rc, md, err = run(tb, "-f", "md", "-o", "-")
    head = md[:md.index("## ")] if "## " in md else md
    result("faster than the GPU's peak, so its timing is suspect" in md and
           "copy faster" not in head,
           "the Markdown says the rate is suspect, and the verdict lists no info finding", head)


try:
    checks()
    oom_snapshot()
    fast_copy()
except Exception:
    result(False, "the checks ran to the end", traceback.format_exc())
