# tests/snapshots.sh runs this.
import json, sys
want = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))
name = sys.argv[3]
def say(desc, got, exp):
    ok = got == exp
    print(("PASS\t%s: %s" % (name, desc)) if ok else
          ("FAIL\t%s: %s\tgot %r, want %r" % (name, desc, got, exp)))
devices = {x["id"]: x for x in d["devices"]}
src = d["sources"][0]
say("one source, format snapshot", (len(d["sources"]), src["format"]), (1, "snapshot"))
for idx, w in sorted(want.items()):
    dev = devices.get("cuda:%s" % idx)
    if dev is None:
        say("device cuda:%s reported" % idx, None, "present")
        continue
    say("cuda:%s reserved at the end (sum of segments)" % idx, dev.get("final_reserved_bytes"), w["reserved"])
    say("cuda:%s allocated at the end (blocks in use)" % idx, dev.get("final_allocated_bytes"), w["allocated"])
    say("cuda:%s segment and block counts" % idx, (dev.get("segment_count"), dev.get("block_count")),
        (w["segments"], w["blocks"]))
    say("cuda:%s largest free block" % idx, dev.get("largest_free_block_bytes"), w["largest_free"])
    if "peak" in w:
        say("cuda:%s peak allocated (timeline anchored at the end state)" % idx,
            dev.get("peak_allocated_bytes"), w["peak"])
        say("cuda:%s pre-existing memory" % idx, dev.get("pre_existing_bytes"), w["pre_existing"])
recs = src["records"]
total = {}
for w in want.values():
    for k, v in w["actions"].items():
        total[k] = total.get(k, 0) + v
say("trace entries per action", {k: recs.get(k, 0) for k in total}, total)
say("segments and blocks counted", (recs.get("segment"), recs.get("block")),
    (sum(w["segments"] for w in want.values()), sum(w["blocks"] for w in want.values())))
