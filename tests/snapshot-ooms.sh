#!/usr/bin/env bash
# tests/snapshot-ooms.sh: the allocator's layout at every `oom` entry of a
# snapshot (src/analyze/snapshot_replay.c walks the trace back
# from the end state). Python plays a scripted history FORWARD with its
# own simple model of the caching allocator (segments, blocks, free runs
# merged), writes the snapshot the allocator would dump (the end state
# and the trace), and notes at each oom what the layout was: the largest
# free block per pool and stream and overall, allocated, reserved,
# segments, inactive split bytes. The database and the JSON report must
# say the same. Real snapshots (none has an oom entry) get oom entries
# added: one at the end must agree with the end state (snapshot_summary),
# one in the middle must replay without a mismatch.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/snapshot-ooms

REAL=$VR_SRCDIR/tests/data/realdata/snapshot
cd "$TMP"
need python3 || true

"$PYTHON" "$PY/history.py" || fail "python3 played the history"

for f in history dropped reversed; do
    rm -f $f.db
    vr_run imp-$f import $f.pickle --db $f.db -q
    [ "$rc" = 0 ] && pass "$f.pickle: imported" || fail "$f.pickle: imported" "exit $rc: $(cat imp-$f.err)"
    vr_run rep-$f report --db $f.db --format json -o $f.json
    [ "$rc" = 0 ] && pass "$f.pickle: reported" || fail "$f.pickle: reported" "exit $rc: $(cat rep-$f.err)"
    "$PYTHON" "$PY/compare.py" history.want $f.db $f.json $f >$f.tap 2>&1 || echo "FAIL	$f: compared	$(tail -3 $f.tap)" >>$f.tap
    tap_lines $f.tap
done

# The figures the story is about, said plainly.
got=$(json_get history.json '[(o["requested_bytes"] >> 20, o["largest_free_block_bytes"] >> 20, o["largest_free_block_in_pool_bytes"] >> 20) for o in d["devices"][0]["out_of_memory"]][0]')
[ "$got" = "(9, 18, 3)" ] \
    && pass "9 MiB asked on stream 0: 18 MiB free in one block on stream 7, 3 MiB on its own" \
    || fail "9 MiB asked on stream 0: 18 MiB free in one block on stream 7, 3 MiB on its own" "got $got"

# Markdown: the OOM table shows the largest free block against the request.
vr_run md report --db history.db -o history.md
grep -q '^| At | Requested | Allocated then | Reserved then | Largest free block | In its pool and stream | Free on the device |$' history.md \
    && grep -q '| 9.00 MiB | .* | 18.0 MiB | 3.00 MiB | 5.00 MiB |$' history.md \
    && pass "Markdown: the OOM table shows the largest free block against the request" \
    || fail "Markdown: the OOM table shows the largest free block against the request" "$(grep -A6 'Out-of-memory' history.md)"

# Analysing again (a report finishes an analysis marked incomplete) gives
# the same rows: the pass clears what it owns.
before=$(sqlite3 history.db 'SELECT count(*), sum(largest_free_block_bytes) FROM oom_fragmentation')
sqlite3 history.db 'UPDATE analysis_state SET complete = 0'
vr_run again report --db history.db --format json -o again.json
after=$(sqlite3 history.db 'SELECT count(*), sum(largest_free_block_bytes) FROM oom_fragmentation')
[ "$rc" = 0 ] && [ "$before" = "$after" ] && pass "analysing twice: the same rows ($after)" \
    || fail "analysing twice: the same rows" "exit $rc, $before then $after: $(cat again.err)"

#-- a trace that does not match its end state --------------------------------------------

# Frees of addresses no segment holds, an alloc undone twice, overlapping
# and negative ranges, a map inside nothing: the walk skips and counts
# them, never fails, and the OOM still gets figures.
"$PYTHON" "$PY/gen_mismatched.py" || fail "python3 wrote the mismatched snapshot"
rm -f mismatch.db
vr_run mism mismatch.pickle --db mismatch.db --format json -o mismatch.json
[ "$rc" = 0 ] && pass "a mismatched trace: exit 0" || fail "a mismatched trace: exit 0" "exit $rc: $(cat mism.err)"
got=$(sqlite3 mismatch.db 'SELECT e.largest_free_block_bytes >> 20, f.unmatched_entries > 0
                             FROM oom_event e JOIN oom_fragmentation f ON f.oom_id = e.id AND f.is_request_pool = 1')
# (the overlapping block is dropped; undoing the alloc at B frees the rest)
[ "$got" = "20|1" ] && pass "a mismatched trace: the OOM still has its figures, and says entries did not match" \
    || fail "a mismatched trace: the OOM still has its figures, and says entries did not match" "got $got"

#-- real snapshots, with oom entries added ----------------------------------------------

for f in cs336-bcrafton cs336-silmont-segments cs336-silmont-forward-bf16; do
    "$PYTHON" "$PY/addoom.py" "$REAL/$f.pickle" $f-oom.pickle || { fail "$f: oom entries added"; continue; }
    rm -f $f.db
    vr_run imp-$f $f-oom.pickle --db $f.db -q --format json -o $f.json
    [ "$rc" = 0 ] || { fail "$f: imported and reported" "exit $rc: $(cat imp-$f.err)"; continue; }
    got=$(sqlite3 $f.db "SELECT (e.largest_free_block_bytes IS s.largest_free_block_bytes
                                 OR (e.largest_free_block_bytes = 0 AND s.largest_free_block_bytes IS NULL))
                                || ',' || (e.total_reserved = s.final_reserved_bytes)
                                || ',' || (e.total_allocated = s.final_allocated_bytes + s.pending_free_bytes)
                                || ',' || (SELECT sum(segments) = s.segment_count AND sum(reserved_bytes) = s.final_reserved_bytes
                                                  AND sum(allocated_bytes) = s.final_allocated_bytes + s.pending_free_bytes
                                                  AND sum(inactive_split_bytes) = s.inactive_split_bytes
                                                  AND max(unmatched_entries) = 0
                                             FROM oom_fragmentation f WHERE f.oom_id = e.id)
                           FROM oom_event e JOIN snapshot_summary s USING (source_id, device_id)
                          ORDER BY e.id DESC LIMIT 1")
    [ "$got" = "1,1,1,1" ] && pass "$f: an OOM at the end has the end state's figures (snapshot_summary)" \
        || fail "$f: an OOM at the end has the end state's figures (snapshot_summary)" "got $got"
    got=$(sqlite3 $f.db "SELECT (SELECT max(unmatched_entries) FROM oom_fragmentation f WHERE f.oom_id = e.id)
                                || ',' || (e.total_reserved = (SELECT sum(reserved_bytes) FROM oom_fragmentation f WHERE f.oom_id = e.id))
                                || ',' || (e.largest_free_block_bytes <= e.total_reserved - e.total_allocated + 511 * 4096)
                           FROM oom_event e ORDER BY e.id LIMIT 1")
    [ "$got" = "0,1,1" ] && pass "$f: an OOM in the middle replays with every entry matched, reserved as the import's" \
        || fail "$f: an OOM in the middle replays with every entry matched, reserved as the import's" "got $got"
done

finish
