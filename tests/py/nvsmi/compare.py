# tests/nvsmi.sh runs this.
import json, re, sys
want = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))
label = sys.argv[3]

def say(desc, got, exp):
    ok = got == exp
    print(("PASS\t%s: %s" % (label, desc)) if ok else
          ("FAIL\t%s: %s\tgot %r, want %r" % (label, desc, got, exp)))

def bus_key(bus):
    m = re.match(r"^([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-9a-fA-F]+)$", bus)
    return ":".join(str(int(x, 16)) for x in m.groups()) if m else bus

def key(g):
    k = bus_key(g["pci_bus_id"]) if g["pci_bus_id"] else g["uuid"] if g["uuid"] else "idx:%s" % g["idx"]
    return k + ("/" + g["mig"] if g["mig"] else "")

got = {key(g): g for g in d["gpus"]}
say("the GPUs", sorted(got), sorted(want["gpus"]))
for k, w in sorted(want["gpus"].items()):
    g = got.get(k)
    if not g:
        continue
    say("GPU %s: readings" % k, g["smi_samples"], w["samples"])
    say("GPU %s: most memory used" % k, g["smi_max_used_bytes"], w["max_used"])
    say("GPU %s: memory total" % k, g["memory_total_bytes"], w["total"])
    if w["name"] is not None:
        say("GPU %s: name" % k, g["name"], w["name"])
    procs = {str(p["pid"]): {"name": p["name"], "used": p["used_bytes"]} for p in g["smi_processes"]}
    say("GPU %s: processes (pid, name, most used)" % k, procs, w["procs"])
src = d["sources"][0]
say("first and last time", (src["start_ts_ns"], src["end_ts_ns"]), (want["start"], want["end"]))
if want["start"] is not None:
    say("times read as wall clock", src["clock"].split(" (")[0], "wall clock")
