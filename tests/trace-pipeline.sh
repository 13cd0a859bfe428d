#!/usr/bin/env bash
# tests/trace-pipeline.sh: a trace's rows are written by a writer thread
# while the reader decodes (kineto.c, src/batch/batch.h); a failure on
# either thread ends the import as one, with the database as it was
# before it: no source, no row, no name of the failed trace, and the exit
# status and the message say so. The failures are made in the database
# file: a unique index that the writer's 6,001st memory event breaks (the
# writer thread fails, thousands of rows written before it), and a name
# table that refuses the third step's name, which the reader interns well
# into the file (the reader thread fails while the writer holds batches).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
GEN=$VR_BUILDDIR/tests/bench/gen_trace
cd "$TMP"
need sqlite3 || true
[ -x "$GEN" ] || { fail "gen_trace is built" "$GEN is missing: make tests/bench/gen_trace"; finish; }

"$GEN" --seed 2 --size-mb 1 >first.json 2>/dev/null
"$GEN" --seed 1 --size-mb 20 >second.json 2>/dev/null
vr_run probe import second.json --db probe.db -q
[ "$rc" = 0 ] && pass "the second trace imports alone" || fail "the second trace imports alone" "exit $rc: $(cat probe.err)"
vr_run first import first.json --db before.db -q
[ "$rc" = 0 ] && pass "the first trace imports" || fail "the first trace imports" "exit $rc: $(cat first.err)"

# rows DB: each table's row count and the largest id, the names kept.
rows() {
    for t in source mem_event op gpu_op step name source_events op_weight; do
        printf '%s %s\n' "$t" "$(sqlite3 "$1" "SELECT count(*) || ' ' || coalesce(max(rowid), 0) FROM $t" 2>&1 || true)"
    done
}
rows before.db >before.rows

# failed CASE SQL: the second trace into a copy of before.db changed by SQL fails, cleanly.
failed() {
    cp before.db "$1.db"
    sqlite3 "$1.db" "$2"
    vr_run "$1" import second.json --db "$1.db"
    [ "$rc" != 0 ] && pass "$1: the import fails (exit $rc)" || fail "$1: the import fails" "exit 0"
    ! crashed "$rc" "$1.err" && pass "$1: no crash" || fail "$1: no crash" "exit $rc: $(cat "$1.err")"
    rows "$1.db" >"$1.rows"
    cmp -s before.rows "$1.rows" && pass "$1: nothing of the failed trace is stored" \
        || fail "$1: nothing of the failed trace is stored" "$(diff before.rows "$1.rows")"
}

# The writer thread fails: the 6,001st memory event of source 2 onwards
# break a unique index (the rows of 5 statements before it written).
ts=$(sqlite3 probe.db "SELECT ts_ns FROM mem_event ORDER BY id LIMIT 1 OFFSET 6000")
failed writer "CREATE UNIQUE INDEX boom ON mem_event(source_id) WHERE source_id = 2 AND ts_ns >= $ts"
grep -q 'write failed: UNIQUE constraint failed: mem_event.source_id' writer.err &&
    pass "writer: the message names the constraint" || fail "writer: the message names the constraint" "$(cat writer.err)"

# The reader thread fails: the name of the third step is refused, well
# after the first memory events went to the writer.
third=$(sqlite3 probe.db "SELECT n.text FROM op o JOIN name n ON n.id = o.name_id
  WHERE n.text LIKE 'ProfilerStep#%' ORDER BY o.ts_ns LIMIT 1 OFFSET 2")
before_third=$(sqlite3 probe.db "SELECT count(*) FROM mem_event e
  WHERE e.ts_ns < (SELECT min(o.ts_ns) FROM op o JOIN name n ON n.id = o.name_id WHERE n.text = '$third')")
[ "${before_third:-0}" -gt 2048 ] && pass "reader: $before_third memory events come before '$third'" \
    || fail "reader: thousands of memory events before the refused name" "${before_third:-none} before '$third'"
failed reader "CREATE TABLE name2 (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE CHECK (text <> '$third'));
INSERT INTO name2 SELECT * FROM name; DROP TABLE name; ALTER TABLE name2 RENAME TO name;"
grep -q 'interning a name: the name table kept no row for it' reader.err && ! grep -q 'not an error' reader.err &&
    pass "reader: the message says what failed (not SQLite's 'not an error')" || fail "reader: the message says what failed" "$(cat reader.err)"

# The same import without a failure stores the trace next to the first.
cp before.db ok.db
vr_run ok import second.json --db ok.db -q
n=$(sqlite3 ok.db "SELECT count(*) FROM mem_event WHERE source_id = 2")
want=$(sqlite3 probe.db "SELECT count(*) FROM mem_event")
[ "$rc" = 0 ] && [ "$n" = "$want" ] && pass "without a failure: every memory event stored ($n)" \
    || fail "without a failure: every memory event stored" "exit $rc, $n of $want: $(cat ok.err)"
finish
