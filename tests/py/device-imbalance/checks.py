# tests/device-imbalance.sh runs this after gen.py, in the folder gen.py
# wrote: each file's report against truth.json, gen.py's reading of the
# allocations it wrote.
import json, subprocess, sys
from vrtest import result, run_vr

vr = sys.argv[1]
truth = json.load(open("truth.json"))


def run(*args):
    return run_vr(vr, *args, "-q")


def report(*inputs):
    rc, out, err = run(*inputs, "-f", "json")
    if rc not in (0, 3):
        result(False, "%s: vramreport exits 0 or 3" % " ".join(inputs), (rc, err))
        return {"findings": [], "verdict": {}}
    return json.loads(out)


def of_kind(d, kind):
    return [f for f in d["findings"] if f["kind"] == kind]


def value(f, key):
    return (f["evidence"].get(key) or {}).get("value")


def check_finding(name, d, t, site_source):
    fs = of_kind(d, "device-imbalance")
    result(len(fs) == 1, name + ": one device-imbalance finding", [f["kind"] for f in d["findings"]])
    if not fs:
        return None
    f = fs[0]
    result(f["severity"] == "warning" and f["device"] == t["high"],
           name + ": a warning on %s, the device of the largest peak" % t["high"],
           (f["severity"], f["device"]))
    got = (value(f, "highest_device_peak_bytes"), value(f, "lowest_device_peak_bytes"),
           value(f, "devices"))
    result(got == (t["high_peak"], t["low_peak"], t["devices"]),
           name + ": the largest and smallest peaks and the devices counted",
           (got, t))
    result(t["high"] in f["title"] and t["low"] in f["title"], name + ": the title names both",
           f["title"])
    for label, peak in ((t["high"], t["high_peak"]), (t["low"], t["low_peak"])):
        size = human(peak)
        result("%s peaked at %s" % (label, size) in f["detail"] or
               "%s at %s" % (label, size) in f["detail"],
               name + ": the detail gives %s's peak, %s" % (label, size), f["detail"])
    got = (value(f, "site"), value(f, "site_highest_bytes"), value(f, "site_lowest_bytes"),
           f["evidence"].get("site", {}).get("source"))
    want = (t["site"], t["site_high"], t["site_low"], site_source)
    result(got == want, name + ": the site whose bytes differ most, %s" % t["site"], (got, want))
    result(t["site"] in f["detail"] and human(t["site_high"]) in f["detail"],
           name + ": the detail names the site and its bytes", f["detail"])
    return f


sys.path.insert(0, sys.argv[2])
from vrtest import human_bytes as human

# ---- the DataParallel job of three GPUs (78, 20, 8 GiB) -------------------------
d = report("dp.pickle")
t = truth["dp"]
result(t["fires"] and t["high_peak"] == 78 << 30 and t["low_peak"] == 8 << 30,
       "dp: the generated job peaks at 78 and 8 GiB", t)
check_finding("dp", d, t, "snapshot")
result(d["verdict"].get("state") == "at-risk", "dp: the verdict is at risk", d["verdict"])
rc, _, err = run("dp.pickle", "--fail-on", "device-imbalance", "-o", "dp.html")
result(rc == 3, "dp: --fail-on device-imbalance exits 3", (rc, err))
rc, md, _ = run("dp.pickle", "-f", "md")
result(rc == 0 and "peaked 875 % above cuda:2" in md and t["site"] in md,
       "dp: the Markdown report lists the finding", md[-1200:])
rc, html, _ = run("dp.pickle", "-f", "html")
result(rc == 0 and "device-imbalance" in html and t["site"] in html,
       "dp: the HTML report lists the finding", rc)

# ---- the rule's edge ---------------------------------------------------------------
for name in ("edge-in", "edge-out"):
    t = truth[name]
    d = report(name + ".pickle")
    if t["fires"]:
        check_finding(name, d, t, "snapshot")
    else:
        result(of_kind(d, "device-imbalance") == [],
               name + ": %d and %d bytes, 20 %% apart: no finding" % (t["high_peak"],
                                                                      t["low_peak"]),
               d["findings"])
result(not truth["edge-in"]["fires"] and truth["edge-out"]["fires"],
       "the edge: exactly 20 % apart does not fire, 20.1 % does", truth)

# ---- an OOM on the loaded device: its cause stays the device's own -----------------
d = report("dp-oom.pickle")
alone = report("dp-oom-alone.pickle")
ooms = [f for f in d["findings"] if f["severity"] == "critical"]
ooms_alone = [f for f in alone["findings"] if f["severity"] == "critical"]
result(len(ooms) == 1 and len(ooms_alone) == 1 and ooms[0]["kind"] == ooms_alone[0]["kind"]
       and ooms[0]["evidence"] == ooms_alone[0]["evidence"],
       "dp-oom: the OOM's cause and evidence are those of cuda:0 alone",
       ([(f["kind"], f["evidence"]) for f in ooms], [(f["kind"]) for f in ooms_alone]))
check_finding("dp-oom", d, truth["dp-oom"], "snapshot")
result(d["verdict"].get("state") == "failed", "dp-oom: the verdict is failed", d["verdict"])
result(of_kind(alone, "device-imbalance") == [], "dp-oom-alone: one device, no imbalance",
       alone["findings"])

# ---- a trace of two devices: the operator whose bytes differ most ------------------
d = report("two-devices.json")
check_finding("two-devices", d, truth["two-devices"], "trace")

# ---- ranks are rank-imbalance's, not this rule's ----------------------------------
# The two-device trace cut in two, each device's events in a file of its
# own rank (DistributedDataParallel: a process per GPU).
doc = json.load(open("two-devices.json"))
for rank in (0, 1):
    part = {"distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2}}
    part.update(doc)
    part["traceEvents"] = [e for e in doc["traceEvents"]
                           if e.get("name") != "[memory]" or e["args"]["Device Id"] == rank]
    json.dump(part, open("rank%d.json" % rank, "w"))
d = report("rank0.json", "rank1.json")
result(of_kind(d, "device-imbalance") == [] and len(of_kind(d, "rank-imbalance")) == 1,
       "two ranks of one device each: rank-imbalance, no device-imbalance",
       [(f["kind"], f["title"]) for f in d["findings"]])

# One rank driving both devices (DataParallel under one process with its
# rank known): one rank is no rank imbalance, whatever its devices hold;
# the gap between its devices is device-imbalance's.
one = {"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1}}
one.update(doc)
one["traceEvents"] = doc["traceEvents"]
json.dump(one, open("one-rank.json", "w"))
d = report("one-rank.json")
result(of_kind(d, "rank-imbalance") == [] and len(of_kind(d, "device-imbalance")) == 1,
       "one rank of two devices: device-imbalance, no rank-imbalance (was 'Rank 0 peaked ... above rank 0')",
       [(f["kind"], f["title"]) for f in d["findings"]])
