#!/usr/bin/env bash
# tests/snapshots.sh: CUDA caching-allocator snapshots. Every
# real snapshot in tests/data/realdata/snapshot/ is imported and its
# figures are checked against Python's own reading of the file (a
# restricted Unpickler that refuses every global: the oracle); hostile and
# cut files fail or warn in one line, and nothing in them ever runs.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

REAL=$VR_SRCDIR/tests/data/realdata/snapshot
cd "$TMP"
need python3 || true

cat >oracle.py <<'PYEOF'
"""What a snapshot holds, read by Python with every global refused."""
import collections, json, pickle, sys

from vrtest import load_pickle

def load(path):
    d = load_pickle(path)
    return {"segments": d, "device_traces": []} if isinstance(d, list) else d

def figures(path):
    d = load(path)
    out = {}
    for seg in d["segments"]:
        dev = out.setdefault(seg.get("device", 0), {
            "reserved": 0, "allocated": 0, "in_use": 0, "segments": 0, "blocks": 0,
            "largest_free": None, "actions": collections.Counter(), "entries": 0})
        dev["reserved"] += seg["total_size"]
        dev["segments"] += 1
        for b in seg["blocks"]:
            dev["blocks"] += 1
            if b["state"] == "active_allocated":
                dev["allocated"] += b["size"]
            if b["state"] != "inactive":
                dev["in_use"] += b["size"]
            if b["state"] == "inactive":
                dev["largest_free"] = max(dev["largest_free"] or 0, b["size"])
    for i, entries in enumerate(d.get("device_traces", [])):
        dev = out.setdefault(i, {"reserved": 0, "allocated": 0, "in_use": 0, "segments": 0,
                                 "blocks": 0, "largest_free": None,
                                 "actions": collections.Counter(), "entries": 0})
        dev["entries"] = len(entries)
        # The timeline ends at the end state: allocated before the first
        # entry is the end state minus every recorded change.
        deltas = [(+e["size"] if e["action"] == "alloc" else
                   -e["size"] if e["action"] == "free_completed" else 0) for e in entries]
        level = dev["in_use"] - sum(deltas)
        peak = level
        for x in deltas:
            level += x
            peak = max(peak, level)
        dev["peak"] = max(peak, dev["in_use"])
        dev["pre_existing"] = max(0, dev["in_use"] - sum(deltas))
        for e in entries:
            dev["actions"][e["action"]] += 1
    for dev in out.values():
        dev["actions"] = dict(dev["actions"])
    return out

if __name__ == "__main__":
    print(json.dumps({str(k): v for k, v in figures(sys.argv[1]).items()}, sort_keys=True))
PYEOF

#-- every real snapshot ------------------------------------------------------------------

for f in "$REAL"/*.pickle; do
    name=${f##*/}
    "$PYTHON" oracle.py "$f" >"$name.want" 2>oracle.err || fail "$name: the oracle reads it" "$(cat oracle.err)"
    rm -f "$name.db"
    vr_run imp import "$f" --db "$name.db" -q
    [ "$rc" = 0 ] && pass "$name: imported" || { fail "$name: imported" "exit $rc: $(cat imp.err)"; continue; }
    vr_run rep report --db "$name.db" --format json -o "$name.json"
    [ "$rc" = 0 ] && pass "$name: reported" || fail "$name: reported" "exit $rc: $(cat rep.err)"
    "$PYTHON" - "$name.want" "$name.json" "$name" >"$name.tap" <<'PYEOF' || echo "FAIL	$3: compared" >>"$name.tap"
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
PYEOF
    tap_lines "$name.tap"
done

# Stacks: the peak's holders by the user's line, never torch's own files.
got=$(json_get cs336-silmont-segments.pickle.json '[s["frame"] for s in d["devices"][0]["top_sites"]][:3]')
case $got in
*"trace_peak_memory.py:"*) pass "top sites name the user's file ($got)" ;;
*) fail "top sites name the user's file" "got $got" ;;
esac
got=$(json_get cs336-magma27-training.pickle.json 'all(s["frame"] is None or ("torch" not in s["frame"].split(":")[0].replace("\\\\", "/").split("/")) for s in d["devices"][0]["top_sites"])')
[ "$got" = True ] && pass "no top site is in a torch folder" || fail "no top site is in a torch folder" "$got"
got=$(json_get cs336-bcrafton.pickle.json 'any(a.get("stack") for a in d["devices"][0]["top_allocations"])')
[ "$got" = True ] && pass "top allocations carry their stacks" || fail "top allocations carry their stacks" "$got"

# Frames and stacks are stored once: fewer frame rows than frames written.
n=$(sqlite3 cs336-bcrafton.pickle.db 'SELECT (SELECT count(*) FROM frame) < (SELECT count(*) FROM stack_frame)' 2>&1 || true)
[ "$n" = 1 ] && pass "frames are shared by stacks" || fail "frames are shared by stacks" "$n"

# The Markdown shows the end state.
vr_run md "$REAL/cs336-silmont-segments.pickle" -o snap.md -q
grep -q '^### Allocator snapshot: the state it ends in' snap.md && pass "Markdown: the snapshot section" \
    || fail "Markdown: the snapshot section" "exit $rc: $(cat md.err)"

#-- an OOM the snapshot ends on -----------------------------------------------------------

"$PYTHON" - <<'PYEOF' || fail "python3 wrote the OOM snapshots"
import pickle
MiB = 1 << 20
def snapshot(after_oom):
    seg = {"device": 0, "address": 1 << 40, "total_size": 20 * MiB, "allocated_size": 14 * MiB,
           "active_size": 14 * MiB, "requested_size": 14 * MiB, "stream": 0,
           "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
           "frames": [], "blocks": [
               {"address": 1 << 40, "size": 12 * MiB, "requested_size": 12 * MiB - 100,
                "state": "active_allocated", "frames": []},
               {"address": (1 << 40) + 12 * MiB, "size": 6 * MiB, "requested_size": 0,
                "state": "inactive", "frames": []},
               {"address": (1 << 40) + 18 * MiB, "size": 2 * MiB, "requested_size": 2 * MiB,
                "state": "active_allocated", "frames": []}]}
    t = 1700000000000000
    trace = [{"action": "segment_alloc", "addr": 1 << 40, "size": 20 * MiB, "stream": 0, "time_us": t},
             {"action": "alloc", "addr": 1 << 40, "size": 12 * MiB, "stream": 0, "time_us": t + 1},
             {"action": "alloc", "addr": (1 << 40) + 18 * MiB, "size": 2 * MiB, "stream": 0,
              "time_us": t + 1},
             {"action": "oom", "device_free": 1 * MiB, "size": 8 * MiB, "stream": 0, "time_us": t + 2}]
    if after_oom:
        trace.append({"action": "alloc", "addr": (1 << 40) + 12 * MiB, "size": 512, "stream": 0,
                      "time_us": t + 3})
        trace.append({"action": "free_completed", "addr": (1 << 40) + 12 * MiB, "size": 512,
                      "stream": 0, "time_us": t + 4})
    return {"segments": [seg], "device_traces": [trace]}
open("oom-last.pickle", "wb").write(pickle.dumps(snapshot(False), protocol=4))
open("oom-earlier.pickle", "wb").write(pickle.dumps(snapshot(True), protocol=4))
PYEOF
vr_run oom oom-last.pickle --format json -o oom-last.json
got=$(json_get oom-last.json '[(o["requested_bytes"] >> 20, o["device_free_bytes"] >> 20, o["largest_free_block_bytes"] >> 20, o["total_allocated_bytes"] >> 20, o["total_reserved_bytes"] >> 20) for o in d["devices"][0]["out_of_memory"]]')
[ "$got" = "[(8, 1, 6, 14, 20)]" ] \
    && pass "an OOM the snapshot ends on: 8 MiB asked, 1 MiB free on the device, 6 MiB the largest free block, 14 of 20 MiB in use" \
    || fail "an OOM the snapshot ends on: requested, device free, largest free block, totals" "got $got"
vr_run oom2 oom-earlier.pickle --format json -o oom-earlier.json
got=$(json_get oom-earlier.json '[(o["requested_bytes"] >> 20, o["largest_free_block_bytes"]) for o in d["devices"][0]["out_of_memory"]]')
[ "$got" = "[(8, 6291456)]" ] && pass "an OOM with blocks changed after it: its largest free block rebuilt from the trace (6 MiB)" \
    || fail "an OOM with blocks changed after it: its largest free block rebuilt from the trace (6 MiB)" "got $got"

#-- pickles that are not snapshots -----------------------------------------------------------

# Skipped like a checkpoint, decided from the first bytes: a pickled args
# dict, a state_dict (an OrderedDict: GLOBAL, protocol 2, STACK_GLOBAL,
# protocol 4), a list of numbers, an empty dict; the args dict also cut in
# half (it must be refused before the cut is reached, so no truncation is
# said). The real snapshot beside them makes the report, exit 0.
mkdir -p notsnap
cp "$REAL/cs336-silmont-segments.pickle" notsnap/
"$PYTHON" - <<'PYEOF' || fail "python3 wrote the pickles that are not snapshots"
import collections, pickle
big = pickle.dumps({"lr": 0.001, "epochs": 3, "blob": list(range(500000))}, protocol=4)
open("notsnap/args.pickle", "wb").write(big)
open("notsnap/args-cut.pickle", "wb").write(big[:len(big) // 2])
sd = collections.OrderedDict([("layer.weight", [0.5, 1.5]), ("layer.bias", [0.0])])
open("notsnap/state-p2.pt", "wb").write(pickle.dumps(sd, protocol=2))
open("notsnap/state-p4.pt", "wb").write(pickle.dumps(sd, protocol=4))
open("notsnap/numbers.pickle", "wb").write(pickle.dumps([1, 2, 3], protocol=4))
open("notsnap/empty.pickle", "wb").write(pickle.dumps({}, protocol=4))
PYEOF
vr_run ns notsnap --format json -o notsnap.json
[ "$rc" = 0 ] && pass "a folder of a snapshot and pickles that are not: exit 0" \
    || fail "a folder of a snapshot and pickles that are not: exit 0" "exit $rc: $(cat ns.err)"
for f in args args-cut empty numbers state-p2 state-p4; do
    case $f in state*) p=notsnap/$f.pt ;; *) p=notsnap/$f.pickle ;; esac
    grep -q -F -x "vramreport: $p: skipped: a pickle, not an allocator snapshot" ns.err \
        && pass "$p: skipped: a pickle, not an allocator snapshot" \
        || fail "$p: skipped: a pickle, not an allocator snapshot" "$(cat ns.err)"
done
grep -q 'truncated\|warning' ns.err && fail "nothing is said truncated or warned of" "$(cat ns.err)" \
    || pass "the cut args pickle is refused before its cut: nothing said truncated"
got=$(json_get notsnap.json '[s["path"] for s in d["sources"]]')
[ "$got" = "['notsnap/cs336-silmont-segments.pickle']" ] && pass "the snapshot is the one source" \
    || fail "the snapshot is the one source" "$got"
got=$(json_get notsnap.json 'sorted((u["path"], u["outcome"], u["what"]) for u in d["unused_inputs"])')
want="[('notsnap/args-cut.pickle', 'skipped', 'a pickle, not an allocator snapshot'), ('notsnap/args.pickle', 'skipped', 'a pickle, not an allocator snapshot'), ('notsnap/empty.pickle', 'skipped', 'a pickle, not an allocator snapshot'), ('notsnap/numbers.pickle', 'skipped', 'a pickle, not an allocator snapshot'), ('notsnap/state-p2.pt', 'skipped', 'a pickle, not an allocator snapshot'), ('notsnap/state-p4.pt', 'skipped', 'a pickle, not an allocator snapshot')]"
[ "$got" = "$want" ] && pass "the report lists each as skipped" || fail "the report lists each as skipped" "got $got"
got=$(json_get notsnap.json '[u["message"] for u in d["unused_inputs"] if u["path"].endswith("/args.pickle")]')
[ "$got" = "['a pickle, not an allocator snapshot (its top level is a dict whose first key is \"lr\", not segments or device_traces)']" ] \
    && pass "the report says why: the first key" || fail "the report says why: the first key" "$got"
vr_run ns1 notsnap/args.pickle -o ns1.md
[ "$rc" = 1 ] && [ "$(wc -l <ns1.err | tr -d ' ')" = 1 ] &&
    grep -q '^vramreport: notsnap/args.pickle: a pickle, not an allocator snapshot' ns1.err \
    && pass "alone: one line, exit 1 (nothing could be used), as a checkpoint alone" \
    || fail "alone: one line, exit 1 (nothing could be used), as a checkpoint alone" "exit $rc: $(cat ns1.err)"

#-- impossible figures and malformed records ------------------------------------------------

# Each is counted as malformed, said once on stderr (the count and the
# first one's byte), noted in the report, and kept out of every figure: a
# segment of -1 GiB, an 80 GiB block in a 1 MiB segment, a block with a
# negative address, an alloc of -1 GiB, an entry without an action. Seven
# bytes follow the pickle's STOP.
"$PYTHON" - <<'PYEOF' || fail "python3 wrote the snapshot of impossible figures"
import pickle
MiB, GiB = 1 << 20, 1 << 30
base = 1 << 40
good = {"device": 0, "address": base, "total_size": 2 * MiB, "allocated_size": MiB,
        "active_size": MiB, "requested_size": MiB, "stream": 0, "segment_type": "small",
        "blocks": [{"address": base, "size": MiB, "requested_size": MiB,
                    "state": "active_allocated", "frames": []},
                   {"address": base + MiB, "size": MiB, "requested_size": 0,
                    "state": "inactive", "frames": []}]}
small = {"device": 0, "address": base + 4 * MiB, "total_size": MiB, "allocated_size": 0,
         "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "small",
         "blocks": [{"address": base + 4 * MiB, "size": 80 * GiB, "requested_size": 80 * GiB,
                     "state": "active_allocated", "frames": []},
                    {"address": -512, "size": 512, "state": "active_allocated"}]}
negative = dict(good, address=base + 8 * MiB, total_size=-GiB, blocks=[])
t = 1700000000000000
trace = [{"action": "alloc", "addr": base, "size": MiB, "stream": 0, "time_us": t},
         {"action": "alloc", "addr": base + MiB, "size": -GiB, "stream": 0, "time_us": t + 1},
         {"addr": base, "size": MiB, "time_us": t + 2}]
data = pickle.dumps({"segments": [negative, good, small], "device_traces": [trace]}, protocol=4)
open("impossible.pickle", "wb").write(data + b"garbage")
bad = {"segments": [negative, {"device": 0}], "device_traces": [[{"addr": 1}]]}
open("all-malformed.pickle", "wb").write(pickle.dumps(bad, protocol=4))
PYEOF
vr_run imposs impossible.pickle --format json -o impossible.json
[ "$rc" = 0 ] && pass "impossible figures: imported, exit 0" || fail "impossible figures: imported, exit 0" "exit $rc: $(cat imposs.err)"
size=$(wc -c <impossible.pickle)
line=$(grep 'malformed' imposs.err || true)
case $line in
"vramreport: warning: impossible.pickle: 5 malformed record(s) skipped, the first at byte "*" (a segment with a negative size or address)")
    at=${line#*the first at byte }
    at=${at%% *}
    [ "$at" -gt 0 ] && [ "$at" -lt "$size" ] && pass "stderr: the count and the first one's byte ($line)" \
        || fail "stderr: the first one's byte is in the file" "$line" ;;
*) fail "stderr: 5 malformed records, the first a segment of negative size" "$(cat imposs.err)" ;;
esac
grep -q -F -x 'vramreport: warning: impossible.pickle: 7 byte(s) after the end of the pickle ignored' imposs.err \
    && pass "stderr: bytes after the end of the pickle (not of a JSON document)" \
    || fail "stderr: bytes after the end of the pickle (not of a JSON document)" "$(cat imposs.err)"
got=$(json_get impossible.json '(d["sources"][0]["tolerated"].get("malformed_event"), d["sources"][0]["tolerated"].get("trailing_pickle"), d["sources"][0]["tolerated"].get("trailing_data"))')
[ "$got" = "(5, 7, None)" ] && pass "tolerated: 5 malformed records, 7 bytes after the pickle" \
    || fail "tolerated: 5 malformed records, 7 bytes after the pickle" "got $got"
got=$(json_get impossible.json '[(x["final_reserved_bytes"], x["final_allocated_bytes"], x["segment_count"], x["block_count"], x["peak_allocated_bytes"]) for x in d["devices"]]')
[ "$got" = "[(3145728, 1048576, 2, 2, 1048576)]" ] \
    && pass "the figures hold only what can be: 2 + 1 MiB of segments (not -1 GiB), 1 MiB allocated (not 80 GiB), peak 1 MiB" \
    || fail "the figures hold only what can be: 3 MiB reserved, 1 MiB allocated, peak 1 MiB" "got $got"
vr_run imposs-md impossible.pickle -o impossible.md -q
grep -q -F 'impossible.pickle: 5 malformed record(s) skipped' impossible.md \
    && grep -q -F '7 byte(s) after the end of the pickle ignored' impossible.md \
    && pass "the report's notes say both" || fail "the report's notes say both" "$(grep -i note impossible.md)"
vr_run allbad all-malformed.pickle -o all-malformed.md
grep -q 'malformed record(s) skipped, the first at byte' allbad.err \
    && pass "all records malformed: said on stderr" || fail "all records malformed: said on stderr" "$(cat allbad.err)"
if grep -q 'profile_memory' all-malformed.md; then
    fail "all records malformed: the report does not blame profile_memory=True" "$(grep -B2 -A2 profile_memory all-malformed.md)"
elif tr '\n' ' ' <all-malformed.md | grep -q 'the allocator snapshot holds no segment or trace entry that could be read (its malformed records were skipped'; then
    pass "all records malformed: the report says its malformed records were skipped"
else
    fail "all records malformed: the report says its malformed records were skipped" "$(tail -8 all-malformed.md)"
fi

# Frees of addresses never allocated. The rule: a free with no alloc of
# its address before it in the trace is normal (allocated before the
# trace began) when a segment holds the address: one the end state lists,
# or one the trace names (a segment_free later: released after the
# free). One that no segment holds cannot be: malformed, and kept out of
# the timeline, the peak, the pre-existing memory and the OOM's figures.
"$PYTHON" - <<'PYEOF' || fail "python3 wrote the snapshot of frees"
import json, pickle
MiB, GiB = 1 << 20, 1 << 30
base = 1 << 40
seg = {"device": 0, "address": base, "total_size": 4 * MiB, "allocated_size": MiB,
       "active_size": MiB, "requested_size": MiB, "stream": 0, "segment_type": "small",
       "blocks": [{"address": base, "size": MiB, "state": "active_allocated", "frames": []},
                  {"address": base + MiB, "size": 3 * MiB, "state": "inactive", "frames": []}]}
t = 1700000000000000
def e(action, addr, size, dt, **kw):
    d = {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t + dt}
    d.update(kw)
    return d
trace = [e("free_completed", base + MiB, 2 * MiB, 0),          # allocated before the trace
         e("alloc", base + MiB, MiB, 1),
         e("free_requested", 5 * base, 70 * GiB, 2),            # never allocated, no segment
         e("free_completed", 5 * base, 70 * GiB, 3),
         e("alloc", 7 * base, 512, 4), e("free_completed", 7 * base, 512, 5),  # not judged
         e("oom", 0, 8 * MiB, 6, device_free=0),
         e("free_completed", 3 * base + 512, 512, 7),           # in a segment freed later
         e("segment_free", 3 * base, 2 * MiB, 8)]
open("frees.pickle", "wb").write(pickle.dumps({"segments": [seg], "device_traces": [trace]},
                                              protocol=4))
# What can be, as memory_viz would read the file without the two bad entries.
good = [x for x in trace if x["addr"] != 5 * base]
deltas = [x["size"] if x["action"] == "alloc" else -x["size"] if x["action"] == "free_completed"
          else 0 for x in good]
level = MiB - sum(deltas)
pre, peak, oom_at = level, level, None
for x, d in zip(good, deltas):
    level += d
    peak = max(peak, level)
    if x["action"] == "oom":
        oom_at = level
json.dump([peak, pre, oom_at], open("frees.want", "w"))
PYEOF
vr_run frees frees.pickle --format json -o frees.json
grep -q -F -x 'vramreport: warning: frees.pickle: 2 malformed record(s) skipped, the first at byte '"$(grep -o 'byte [0-9]*' frees.err | head -1 | cut -d' ' -f2)"' (a free of an address never allocated, in no segment)' frees.err \
    && pass "frees never allocated, in no segment: 2 malformed, said on stderr" \
    || fail "frees never allocated, in no segment: 2 malformed, said on stderr" "$(cat frees.err)"
got=$(json_get frees.json '[d["devices"][0]["peak_allocated_bytes"], d["devices"][0]["pre_existing_bytes"], d["devices"][0]["out_of_memory"][0]["total_allocated_bytes"]]')
[ "$got" = "$(cat frees.want | tr -d ' ' | sed 's/,/, /g')" ] \
    && pass "the peak, the pre-existing memory and the OOM's figure without them ($got, not 70 GiB more)" \
    || fail "the peak, the pre-existing memory and the OOM's figure without them" "got $got, want $(cat frees.want)"
got=$(json_get frees.json '(d["sources"][0]["records"].get("free_completed"), d["sources"][0]["records"].get("free_requested"), d["sources"][0]["tolerated"].get("malformed_event"))')
[ "$got" = "(3, None, 2)" ] && pass "the normal frees are kept: 3 free_completed, the bad pair counted malformed" \
    || fail "the normal frees are kept: 3 free_completed, the bad pair counted malformed" "got $got"

# Segments met at different times may overlap: a free inside a wide
# segment the trace releases later, but above a narrow one starting
# higher, is held (normal). And many segments with many frees outside
# them are judged in one pass, not each free against every segment below
# it (20,000 x 40,000: minutes before; under the timeout now).
"$PYTHON" - <<'PYEOF' || fail "python3 wrote the snapshots of overlapping and many segments"
import pickle
MiB = 1 << 20
base = 1 << 40
def seg(addr, size):
    return {"device": 0, "address": addr, "total_size": size, "allocated_size": 0,
            "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "large",
            "blocks": [{"address": addr, "size": size, "state": "inactive", "frames": []}]}
t = 1700000000000000
def e(action, addr, size, dt):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t + dt}
trace = [e("free_completed", base + 10 * MiB, MiB, 0),       # in the wide segment only
         e("segment_free", base - 8 * MiB, 24 * MiB, 1)]
open("overlap.pickle", "wb").write(pickle.dumps(
    {"segments": [seg(base, 4 * MiB)], "device_traces": [trace]}, protocol=4))
segs = [seg(base + 4 * MiB * i, 2 * MiB) for i in range(20000)]
far = base + 4 * MiB * 20000
trace = [e("free_completed", far + 4096 * i, 512, i) for i in range(40000)]
open("manyfrees.pickle", "wb").write(pickle.dumps({"segments": segs, "device_traces": [trace]},
                                                  protocol=4))
PYEOF
vr_run overlap overlap.pickle --format json -o overlap.json
got=$(json_get overlap.json '(d["sources"][0]["records"].get("free_completed"), d["sources"][0]["tolerated"].get("malformed_event"))')
[ "$got" = "(1, None)" ] && pass "a free inside a wider, overlapping segment named later is kept, not malformed" \
    || fail "a free inside a wider, overlapping segment named later is kept, not malformed" "got $got: $(cat overlap.err)"
rc=0
timeout 120 "$VRAMREPORT" manyfrees.pickle --format json -o manyfrees.json -q 2>manyfrees.err || rc=$?
got=$([ "$rc" = 0 ] && json_get manyfrees.json 'd["sources"][0]["tolerated"].get("malformed_event")')
[ "$rc" = 0 ] && [ "$got" = 40000 ] && pass "40,000 frees outside 20,000 segments: judged in one pass, all malformed" \
    || fail "40,000 frees outside 20,000 segments: judged in one pass, all malformed" "exit $rc, malformed $got: $(head -c 300 manyfrees.err)"

#-- hostile and cut files ------------------------------------------------------------------

"$PYTHON" - <<'PYEOF' || fail "python3 wrote the hostile pickles"
import os, pickle
class Run:
    def __reduce__(self):
        return (os.system, ("touch ran-a-command",))
# A snapshot-looking dict holding code, named as if it were JSON.
open("evil.json", "wb").write(pickle.dumps({"segments": [Run()]}, protocol=4))
open("evil2.pickle", "wb").write(pickle.dumps({"segments": [], "x": Run()}, protocol=2))
PYEOF
for f in evil.json evil2.pickle; do
    vr_run evil "$f" -o evil.md
    [ "$rc" = 1 ] && pass "$f: refused (exit 1)" || fail "$f: refused (exit 1)" "exit $rc"
    [ "$(wc -l <evil.err | tr -d ' ')" = 1 ] && grep -q -E "^vramreport: $f: byte [0-9]+: opcode (STACK_)?GLOBAL" evil.err \
        && pass "$f: one line naming the opcode and its offset" \
        || fail "$f: one line naming the opcode and its offset" "$(cat evil.err)"
done
[ ! -e ran-a-command ] && pass "nothing in a hostile pickle ran" || fail "nothing in a hostile pickle ran"

size=$(wc -c <"$REAL/cs336-bcrafton.pickle")
head -c $((size / 2)) "$REAL/cs336-bcrafton.pickle" >cut.pickle
vr_run cut cut.pickle --format json -o cut.json
[ "$rc" = 0 ] && pass "a cut snapshot: exit 0" || fail "a cut snapshot: exit 0" "exit $rc: $(cat cut.err)"
grep -q '^vramreport: warning: cut.pickle: truncated at byte' cut.err && pass "a cut snapshot: said on stderr" \
    || fail "a cut snapshot: said on stderr" "$(cat cut.err)"
got=$(json_get cut.json '(d["sources"][0]["truncated"], d["sources"][0]["records"].get("segment", 0) > 0)')
[ "$got" = "(True, True)" ] && pass "a cut snapshot: what came before the cut is kept" \
    || fail "a cut snapshot: what came before the cut is kept" "$got"

finish
