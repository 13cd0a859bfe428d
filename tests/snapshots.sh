#!/usr/bin/env bash
# tests/snapshots.sh: CUDA caching-allocator snapshots. Every
# real snapshot in tests/data/realdata/snapshot/ is imported and its
# figures are checked against Python's own reading of the file (a
# restricted Unpickler that refuses every global: the oracle); hostile and
# cut files fail or warn in one line, and nothing in them ever runs.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/snapshots

REAL=$VR_SRCDIR/tests/data/realdata/snapshot
cd "$TMP"
need python3 || true

#-- every real snapshot ------------------------------------------------------------------

for f in "$REAL"/*.pickle; do
    name=${f##*/}
    "$PYTHON" "$PY/oracle.py" "$f" >"$name.want" 2>oracle.err || fail "$name: the oracle reads it" "$(cat oracle.err)"
    rm -f "$name.db"
    vr_run imp import "$f" --db "$name.db" -q
    [ "$rc" = 0 ] && pass "$name: imported" || { fail "$name: imported" "exit $rc: $(cat imp.err)"; continue; }
    vr_run rep report --db "$name.db" --format json -o "$name.json"
    [ "$rc" = 0 ] && pass "$name: reported" || fail "$name: reported" "exit $rc: $(cat rep.err)"
    "$PYTHON" "$PY/compare.py" "$name.want" "$name.json" "$name" >"$name.tap" || echo "FAIL	$3: compared" >>"$name.tap"
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

"$PYTHON" "$PY/gen_ooms.py" || fail "python3 wrote the OOM snapshots"
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
"$PYTHON" "$PY/gen_not_snapshots.py" || fail "python3 wrote the pickles that are not snapshots"
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
"$PYTHON" "$PY/gen_impossible.py" || fail "python3 wrote the snapshot of impossible figures"
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
# (the verdict's list of what to add, a trace with profile_memory=True
# among them, blames nothing: its line is left out)
if grep -v '^> \*\*Verdict' all-malformed.md | grep -q 'profile_memory'; then
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
"$PYTHON" "$PY/gen_frees.py" || fail "python3 wrote the snapshot of frees"
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
"$PYTHON" "$PY/gen_overlapping.py" || fail "python3 wrote the snapshots of overlapping and many segments"
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

"$PYTHON" "$PY/gen_hostile.py" || fail "python3 wrote the hostile pickles"
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
