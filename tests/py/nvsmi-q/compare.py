# tests/nvsmi-q.sh runs this.
import json, sys
want, got, name = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
def say(desc, g, w):
    print(("PASS\t%s: %s" % (name, desc)) if g == w else
          ("FAIL\t%s: %s\tgot %r, want %r" % (name, desc, g, w)))
say("GPUs and MIG devices (uuid|bus id|mig)", sorted(got["gpus"]), sorted(want["gpus"]))
for key, w in sorted(want["gpus"].items()):
    g = got["gpus"].get(key)
    if g is None:
        continue
    say("%s: name" % key, g["name"], w["name"])
    say("%s: index (its place, when the reading lists every GPU attached)" % key, g["idx"], w["idx"])
    say("%s: readings" % key, len(g["samples"]), len(w["samples"]))
    for i, (gs, ws) in enumerate(zip(g["samples"], w["samples"])):
        for k in ("ts", "used", "total", "free", "reserved", "util_gpu", "util_memory"):
            say("%s: reading %d: %s" % (key, i, k), gs[k], ws[k])
        say("%s: reading %d: processes (pid, name, type, used, time)" % (key, i),
            gs["processes"], ws["processes"])
say("no process without its GPU and reading", got["orphans"], 0)
say("nothing skipped", got["tally"].get("malformed_event", 0), want.get("malformed", 0))
