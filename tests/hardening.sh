#!/usr/bin/env bash
# tests/hardening.sh: what a hostile or unlucky input, a full disk or a
# killed run must not do to the output file, the database or the truth of
# the report. Each case failed before its fix.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/hardening

TINY=$VR_SRCDIR/tests/cli/data/tiny.pt.trace.json
cd "$TMP"
need python3 || true
need sqlite3 || true
need gzip || true
need zstd || true


expect_rc() { # DESC WANT
    if [ "$rc" = "$2" ]; then pass "$1: exit $2"; else fail "$1: exit $2" "exit $rc: $(head -c 600 "$vr_name.err")"; fi
}


sql() { sqlite3 "$1" "$2" 2>&1 || true; }

#-- (1, 9) the temporary output: planted symlinks, file size limits --------------

cp "$TINY" t.json
echo victim >victim
# The old temporary name was OUT.tmp<pid>: plant it for the pid exec keeps.
rc=0
bash -c 'ln -s victim r.md.tmp$$; exec "$VRAMREPORT" t.json -o r.md -q' 2>planted.err || rc=$?
[ "$(cat victim)" = victim ] && pass "a symlink planted at the temporary name is not followed" \
    || fail "a symlink planted at the temporary name is not followed" "victim now starts: $(head -c 80 victim)"
[ "$rc" = 0 ] && [ -f r.md ] && [ ! -L r.md ] && pass "the report is still written, as a regular file" \
    || fail "the report is still written, as a regular file" "exit $rc: $(cat planted.err)"
rm -f r.md.tmp* r.md

# A file made by the report has the mode fopen would give (umask applies).
(umask 027 && "$VRAMREPORT" t.json -o mode.md -q) || true
mode=$(stat -c %a mode.md 2>&1 || true)
[ "$mode" = 640 ] && pass "the report's mode follows the umask (640 under 027)" \
    || fail "the report's mode follows the umask (640 under 027)" "mode $mode"

# ulimit -f: the write fails with a message; no partial file is left.
rc=0
(ulimit -f 1 && exec "$VRAMREPORT" t.json -o limited.md -q) >limited.out 2>limited.err || rc=$?
vr_name=limited
expect_rc "report over ulimit -f" 1
grep -q '^vramreport: limited.md: write failed' limited.err && pass "report over ulimit -f: says the write failed" \
    || fail "report over ulimit -f: says the write failed" "stderr: $(cat limited.err)"
leftover=$(ls -A | grep -e '^limited\.md' -e '^\.limited\.md' || true)
[ -z "$leftover" ] && pass "report over ulimit -f: no partial file is left" \
    || fail "report over ulimit -f: no partial file is left" "$leftover"

#-- (5) the output is an input or the database -------------------------------------

sum_before=$(cksum <t.json)
vr_run same t.json -o t.json
expect_rc "output = input" 2
[ "$(cksum <t.json)" = "$sum_before" ] && pass "output = input: the input is unchanged" \
    || fail "output = input: the input is unchanged"
vr_run samedb t.json --db x.db -o x.db
expect_rc "output = the new --db" 2
vr_run keep import t.json --db x.db -q
db_before=$(cksum <x.db)
vr_run samedb2 report --db x.db -o x.db
expect_rc "report: output = the --db" 2
[ "$(cksum <x.db)" = "$db_before" ] && pass "report: output = the --db: the database is unchanged" \
    || fail "report: output = the --db: the database is unchanged"

#-- (9) databases that are not ours, or older, or newer -----------------------------

foreign() { # DESC SQL
    rm -f foreign.db
    sqlite3 foreign.db "$2" || fail "$1: sqlite3 made the database"
    before=$(cksum <foreign.db)
    vr_run foreign import t.json --db foreign.db
    expect_rc "$1" 1
    grep -q 'not a vramreport one' foreign.err && pass "$1: refused as not ours" \
        || fail "$1: refused as not ours" "stderr: $(cat foreign.err)"
    [ "$(cksum <foreign.db)" = "$before" ] && pass "$1: the file is unchanged" \
        || fail "$1: the file is unchanged"
}
foreign "user_version -1 with a foreign table" "PRAGMA user_version = -1; CREATE TABLE accounts (id, balance);"
foreign "user_version 1 with foreign tables" "PRAGMA user_version = 1; CREATE TABLE accounts (id, balance);"
foreign "user_version 2 with our tables but another application_id" \
    "PRAGMA user_version = 2; PRAGMA application_id = 42; CREATE TABLE source (id); CREATE TABLE device (id); CREATE TABLE mem_event (id);"
foreign "application_id 0 and no version, with a table" "CREATE TABLE source (id);"

rm -f newer.db
cp x.db newer.db
sqlite3 newer.db "PRAGMA user_version = 99" || fail "sqlite3 set user_version 99"
vr_run newer report --db newer.db -o newer.md
expect_rc "a database from a newer vramreport" 1
grep -q 'newer vramreport' newer.err && pass "a newer database: says upgrade" \
    || fail "a newer database: says upgrade" "stderr: $(cat newer.err)"

# A database written by the first release (schema 1) is upgraded and reports.
gzip -dc "$VR_SRCDIR/tests/data/db/v1-tiny.db.gz" >v1.db
vr_run v1 report --db v1.db --format json -o v1.json
expect_rc "a schema 1 database" 0
current=$(json_get v1.json 'd["schema_version"]')
[ "$(sql v1.db 'PRAGMA user_version')" = "$current" ] && [ "$current" -gt 1 ] \
    && pass "a schema 1 database: upgraded to the current schema ($current)" \
    || fail "a schema 1 database: upgraded to the current schema" "user_version $(sql v1.db 'PRAGMA user_version'), current $current"
"$VRAMREPORT" t.json --format json -o fresh.json -q || fail "the one-shot JSON report of t.json"
want=$(json_get fresh.json '[(x["id"], x["peak_allocated_bytes"], x["peak_reserved_bytes"]) for x in d["devices"]]')
got=$(json_get v1.json '[(x["id"], x["peak_allocated_bytes"], x["peak_reserved_bytes"]) for x in d["devices"]]')
[ "$got" = "$want" ] && pass "a schema 1 database: the same peaks as a fresh import ($got)" \
    || fail "a schema 1 database: the same peaks as a fresh import" "got $got, want $want"

# Migration 20's indexes (a series' prints in order, a device's OOMs):
# on the schema 1 database upgraded, and on a schema 19 one (today's
# without them) with a trace's OOM and a log's prints, which reports the
# same bytes once upgraded.
indexes="SELECT count(*) FROM sqlite_master WHERE type = 'index'
           AND name IN ('memory_print_series', 'oom_event_by_device')"
[ "$(sql v1.db "$indexes")" = 2 ] && pass "a schema 1 database: upgraded with the print and OOM indexes" \
    || fail "a schema 1 database: upgraded with the print and OOM indexes" "$(sql v1.db "$indexes") of 2"
"$PYTHON" "$VR_SRCDIR/tests/bench/gen_devices.py" 3 --ooms 2 >o3.json
"$PYTHON" "$VR_SRCDIR/tests/bench/gen_prints.py" 5 4 >p5.log
rm -f v19.db
vr_run v19imp import o3.json p5.log --db v19.db -q
vr_run v19now report --db v19.db --format json -o v19-now.json
sql v19.db "DROP INDEX memory_print_series; DROP INDEX oom_event_by_device; PRAGMA user_version = 19" >/dev/null
vr_run v19 report --db v19.db --format json -o v19.json
expect_rc "a schema 19 database" 0
[ "$(sql v19.db 'PRAGMA user_version')" = "$current" ] && [ "$(sql v19.db "$indexes")" = 2 ] \
    && pass "a schema 19 database: upgraded, with the print and OOM indexes" \
    || fail "a schema 19 database: upgraded, with the print and OOM indexes" \
        "user_version $(sql v19.db 'PRAGMA user_version'), $(sql v19.db "$indexes") of 2"
cmp -s v19.json v19-now.json && pass "a schema 19 database: the report's bytes, once upgraded" \
    || fail "a schema 19 database: the report's bytes, once upgraded" "$(diff v19.json v19-now.json | head -5)"
[ "$(json_get v19.json 'len(d["memory_prints"]), len(d["oom_events"])')" = "(5, 6)" ] \
    && pass "a schema 19 database: its 5 ranks' prints and 6 OOMs reported" \
    || fail "a schema 19 database: its 5 ranks' prints and 6 OOMs reported" \
        "$(json_get v19.json 'len(d["memory_prints"]), len(d["oom_events"])')"

# Migration 21: the indexes the analysis made itself (ops by thread, a
# snapshot's blocks by segment) are the schema's. A schema 20 database
# (today's without them, analysed, and with a covering index of
# allocation that earlier versions kept) is upgraded when a report opens
# it: the indexes there before any analysis, the old index gone, the
# report's bytes the same.
schema21="SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN
            ('op_cpu_source_thread_time', 'op_python_source_thread_time', 'block_by_segment')"
[ "$(sql v1.db "$schema21")" = 3 ] && pass "a schema 1 database: upgraded with migration 21's indexes" \
    || fail "a schema 1 database: upgraded with migration 21's indexes" "$(sql v1.db "$schema21") of 3"
rm -f v20.db
vr_run v20imp import t.json --db v20.db -q
vr_run v20now report --db v20.db --format json -o v20-now.json
sql v20.db "DROP INDEX op_cpu_source_thread_time; DROP INDEX op_python_source_thread_time;
            DROP INDEX block_by_segment; CREATE INDEX allocation_by_free_event ON allocation (free_event_id);
            PRAGMA user_version = 20" >/dev/null
vr_run v20 report --db v20.db --format json -o v20.json
expect_rc "a schema 20 database" 0
old="SELECT count(*) FROM sqlite_master WHERE name = 'allocation_by_free_event'"
[ "$(sql v20.db 'PRAGMA user_version')" = "$current" ] && [ "$(sql v20.db "$schema21")" = 3 ] &&
    [ "$(sql v20.db "$old")" = 0 ] \
    && pass "a schema 20 database: upgraded, with the indexes, without the old one" \
    || fail "a schema 20 database: upgraded, with the indexes, without the old one" \
        "user_version $(sql v20.db 'PRAGMA user_version'), $(sql v20.db "$schema21") of 3, old $(sql v20.db "$old")"
cmp -s v20.json v20-now.json && pass "a schema 20 database: the report's bytes, once upgraded" \
    || fail "a schema 20 database: the report's bytes, once upgraded" "$(diff v20.json v20-now.json | head -5)"

#-- (9) the same content, compressed otherwise ----------------------------------------

gzip -c t.json >t.json.gz
zstd -q -c t.json >t.json.zst
rm -f same.db
for f in t.json t.json.gz t.json.zst; do
    vr_run dup import "$f" --db same.db
done
[ "$(sql same.db 'SELECT count(*) FROM source')" = 1 ] && pass "plain, .gz and .zst of one trace: imported once" \
    || fail "plain, .gz and .zst of one trace: imported once" "$(sql same.db 'SELECT path FROM source')"
grep -q 'already imported' dup.err && pass "the .zst copy: said to be imported already" \
    || fail "the .zst copy: said to be imported already" "stderr: $(cat dup.err)"

#-- (8) data dropped is counted, said on stderr and kept where it can be -------------

"$PYTHON" "$PY/gen_devices_trailing.py" || fail "python3 wrote the device and trailing-data traces"

vr_run dev devices100.json --format json -o dev.json -q
expect_rc "100 devices" 0
# 16 in full (devices[]), the rest as figures (more_devices[]): none lost.
got=$(json_get dev.json 'sorted((int(x["id"].split(":")[1]), x["peak_allocated_bytes"] >> 20, x["name"]) for x in d["devices"] + d["more_devices"]) == [(i, i + 1, "GPU %d" % i) for i in range(100)]')
[ "$got" = True ] && pass "100 devices: every device kept, with its own peak and name" \
    || fail "100 devices: every device kept, with its own peak and name" "$(json_get dev.json 'len(d["devices"]), len(d["more_devices"])') devices (in full, more)"

vr_run trail trailing.json --format json -o trail.json
expect_rc "data after the JSON document" 0
got=$(json_get trail.json 'd["sources"][0]["tolerated"].get("trailing_data")')
want=$("$PYTHON" -c 'print(len("{\"traceEvents\": []}\nmore garbage\n"))')
[ "$got" = "$want" ] && pass "data after the document: tolerated.trailing_data = $want bytes" \
    || fail "data after the document: tolerated.trailing_data = $want bytes" "got $got"
grep -q "^vramreport: warning: trailing.json: $want byte(s) after the end of the JSON document ignored" trail.err \
    && pass "data after the document: said on stderr" || fail "data after the document: said on stderr" "stderr: $(cat trail.err)"
got=$(json_get trail.json '[x["peak_allocated_bytes"] for x in d["devices"]] == [x["peak_allocated_bytes"] for x in json.load(open("fresh.json"))["devices"]]')
[ "$got" = True ] && pass "data after the document: the document itself is read whole" \
    || fail "data after the document: the document itself is read whole" "$got"

vr_run big oversized.json.gz --format json -o big.json
expect_rc "a value over 256 MiB" 0
got=$(json_get big.json '(d["sources"][0]["tolerated"].get("oversized_value"), d["devices"][0]["peak_allocated_bytes"])')
[ "$got" = "(1, 3072)" ] && pass "a value over 256 MiB: counted, and the events around it kept" \
    || fail "a value over 256 MiB: counted, and the events around it kept" "got $got"
grep -q '^vramreport: warning: oversized.json.gz: 1 value(s) over 256 MiB skipped' big.err \
    && pass "a value over 256 MiB: said on stderr" || fail "a value over 256 MiB: said on stderr" "stderr: $(cat big.err)"
rm -f oversized.json.gz

#-- (11) impossible figures in a trace: counted as malformed, said, kept out of peaks --

# A [memory] event's Total Allocated or Total Reserved below 0 or over
# 1 PiB, its Bytes over 1 PiB either way, or its Total Allocated over a
# (non-zero) Total Reserved is no allocator's: the event is counted as
# malformed, the first named on stderr with its byte, and not read, so the
# peaks are the good events' (INT64_MIN was "peaked at -8.00 EiB"). An
# [OutOfMemory] event is kept without its impossible totals.
"$PYTHON" "$PY/figures.py" >figures.log 2>&1 || cat figures.log >>figures.txt
tap_lines figures.txt

#-- (4) an analysis that did not complete -----------------------------------------------

# A trace whose analysis writes much more than its import: indexes over,
# and one allocation row for, each of 60,000 memory events.
"$PYTHON" "$PY/gen_analysis.py" || fail "python3 wrote analysis.json"
# Find a file size limit (KiB) under which the import commits and the
# analysis then fails for want of space, as on a full disk: the database
# holds the events but no analysis of them.
found=
for kib in 1200 1500 1800 2100 2400 2700 3000 3400 3800 4200 4700 5200 5800 6500 7300 8200; do
    rm -f cut.db cut.db-journal
    rc=0
    (ulimit -f "$kib" && exec "$VRAMREPORT" import analysis.json --db cut.db -q) >cut.out 2>cut.err || rc=$?
    [ -f cut.db ] || continue
    events=$(sql cut.db 'SELECT count(*) FROM mem_event')
    summaries=$(sql cut.db 'SELECT count(*) FROM device_summary')
    if [ "$events" = 60000 ] && [ "$summaries" = 0 ]; then
        found=$kib
        break
    fi
done
if [ -z "$found" ]; then
    fail "a size limit stops the analysis after the import" "no limit in the list did"
else
    pass "a size limit ($found KiB) stops the analysis after the import"
    vr_name=cut
    expect_rc "the run whose analysis failed" 1
    grep -q '^vramreport: .*cut.db' cut.err && pass "the run whose analysis failed: says why, naming the database" \
        || fail "the run whose analysis failed: says why, naming the database" "stderr: $(cat cut.err)"
    vr_run after report --db cut.db --format json -o after.json
    expect_rc "report on the database whose analysis failed" 0
    got=$(json_get after.json '[(x["id"], x["peak_allocated_bytes"], x["memory_events"]) for x in d["devices"]]')
    [ "$got" = "[('cuda:0', 122880000, 60000)]" ] \
        && pass "report on the database whose analysis failed: the true peak, never \"no events\"" \
        || fail "report on the database whose analysis failed: the true peak, never \"no events\"" "devices: $got; stderr: $(cat after.err)"
    grep -q 'analysis is not current' after.err && pass "report: says it finished the analysis" \
        || fail "report: says it finished the analysis" "stderr: $(cat after.err)"
    [ "$(sql cut.db 'SELECT complete FROM analysis_state')" = 1 ] && pass "the analysis is now marked complete" \
        || fail "the analysis is now marked complete"
fi

# An import that fails leaves the database as it was, derived tables and
# analysis state included.
rm -f fail.db
"$VRAMREPORT" import t.json --db fail.db -q || fail "import into fail.db"
sqlite3 fail.db .dump >fail.before || true
printf '\037\213\010\000\000\000\000\000\000\003not deflate data\n' >corrupt.gz
vr_run failimp import corrupt.gz --db fail.db
expect_rc "a failed import" 1
sqlite3 fail.db .dump >fail.after || true
cmp -s fail.before fail.after && pass "a failed import: the database dumps the same" \
    || fail "a failed import: the database dumps the same" "$(diff fail.before fail.after | head -n 5)"

# A database is input too (`report --db`): a trigger it brings must not
# reach the functions a pass registers for its own statements (they hold
# the pass's state: one called where the pass does not expect it could
# write past its buffers). No trigger a database brings runs at all; and
# SQLite would refuse those functions outside our statements anyway.
rm -f trig.db
"$VRAMREPORT" import t.json --db trig.db -q || fail "import into trig.db"
sql trig.db "CREATE TABLE planted_calls (n);
             CREATE TRIGGER planted AFTER INSERT ON device_source_summary BEGIN
               INSERT INTO planted_calls SELECT vr_timeline_displaced(id) FROM mem_event; END;
             UPDATE analysis_state SET complete = 0;" >/dev/null
vr_run trig report --db trig.db -o trig.md
crashed "$rc" trig.err && fail "a trigger calling a pass's function: no crash" "$(cat trig.err)" \
    || pass "a trigger calling a pass's function: no crash"
expect_rc "a trigger in the database calling a pass's function: the report is written" 0
[ "$(sql trig.db 'SELECT count(*) FROM planted_calls')" = 0 ] && [ -s trig.md ] \
    && pass "a trigger calling a pass's function: never runs" \
    || fail "a trigger calling a pass's function: never runs" "planted_calls: $(sql trig.db 'SELECT count(*) FROM planted_calls'); stderr: $(cat trig.err)"

#-- a database's own triggers and views never run ---------------------------------------

# A trigger on the findings the analysis writes: one that would leave a
# mark, and one that would never end (a recursive CTE without a limit;
# `timeout` only stops a vramreport that runs it).
planted() { # NAME SQL
    rm -f "$1.db"
    "$VRAMREPORT" import t.json --db "$1.db" -q || fail "import into $1.db"
    sql "$1.db" "$2 UPDATE analysis_state SET complete = 0;" >/dev/null
    before=$(sql "$1.db" 'SELECT count(*) FROM finding')
}
planted mark "CREATE TABLE planted_log (what);
              CREATE TRIGGER mark AFTER INSERT ON finding BEGIN
                INSERT INTO planted_log VALUES (new.kind); END;"
vr_run mark report --db mark.db --format json -o mark.json
expect_rc "a trigger on finding" 0
[ "$(sql mark.db 'SELECT count(*) FROM planted_log')" = 0 ] && [ "$(sql mark.db 'SELECT count(*) FROM finding')" = "$before" ] \
    && [ "$before" -gt 0 ] \
    && pass "a trigger on finding: never runs ($before findings written, none logged)" \
    || fail "a trigger on finding: never runs" "planted_log $(sql mark.db 'SELECT count(*) FROM planted_log'), findings $before"
planted spin "CREATE TRIGGER spin AFTER INSERT ON finding BEGIN
                SELECT count(*) FROM (WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c)
                                      SELECT n FROM c);
                SELECT length(randomblob(1000000000)); END;"
rc=0
timeout 300 "$VRAMREPORT" report --db spin.db --format json -o spin.json >spin.out 2>spin.err || rc=$?
vr_name=spin
expect_rc "a trigger on finding that would never end" 0
got=$(json_get spin.json 'len(d["findings"])')
[ "$got" = "$before" ] && pass "a trigger that would never end: the report has its $before finding(s)" \
    || fail "a trigger that would never end: the report has its findings" "got $got, want $before"

# A view where a table of vramreport's was is never read: one clear error.
rm -f view.db
"$VRAMREPORT" import t.json --db view.db -q || fail "import into view.db"
sql view.db "CREATE TABLE finding_kept AS SELECT * FROM finding; DROP TABLE finding;
             CREATE VIEW finding AS SELECT * FROM finding_kept;" >/dev/null
vr_run view report --db view.db -o view.md
expect_rc "a view in place of the findings" 1
grep -q "^vramreport: view.db: cannot be read: .*holds views vramreport did not make" view.err \
    && [ "$(wc -l <view.err)" = 1 ] && [ ! -e view.md ] \
    && pass "a view in place of the findings: refused in one line, no report" \
    || fail "a view in place of the findings: refused in one line, no report" "stderr: $(cat view.err)"

#-- a failed import leaves no database that reports OK ---------------------------------

# No database is made when nothing was imported: `report` on what an
# import left would otherwise say "Verdict: OK" on no evidence.
nothing_left() { # DESC PREFIX
    leftover=$(ls -A | grep -e "^$2\$" -e "^$2-" || true)
    [ -z "$leftover" ] && pass "$1: no database is left" || fail "$1: no database is left" "$leftover"
}
echo "not a trace" >notatrace.txt
rm -f new.db*
vr_run badnew import notatrace.txt --db new.db
expect_rc "import of a file no reader reads into a new --db" 1
nothing_left "import of a file no reader reads into a new --db" new.db
vr_run badrun notatrace.txt --db new2.db -o new2.md
expect_rc "a run whose every input fails, with a new --db" 1
nothing_left "a run whose every input fails, with a new --db" new2.db
# The disk fills: first while the schema is written, then during the
# import (room for the schema, not for 60,000 events).
rc=0
(ulimit -f 16 && exec "$VRAMREPORT" import analysis.json --db full0.db -q) >full0.out 2>full0.err || rc=$?
vr_name=full0
expect_rc "the disk fills while a new --db is made" 1
nothing_left "the disk fills while a new --db is made" full0.db
kib=$(($(stat -c %s x.db) / 1024 + 64))
rc=0
(ulimit -f "$kib" && exec "$VRAMREPORT" import analysis.json --db full.db -q) >full.out 2>full.err || rc=$?
vr_name=full
expect_rc "the disk fills during the import into a new --db ($kib KiB)" 1
grep -q '^vramreport: full.db: ' full.err && pass "the disk fills during the import: says why, naming the database" \
    || fail "the disk fills during the import: says why, naming the database" "stderr: $(cat full.err)"
nothing_left "the disk fills during the import into a new --db" full.db
# A database that was there before is never removed: the failed import's
# transaction leaves it as it was.
rm -f kept.db*
"$VRAMREPORT" import t.json --db kept.db -q || fail "import into kept.db"
sqlite3 kept.db .dump >kept.before || true
kib=$(($(stat -c %s kept.db) / 1024 + 64))
rc=0
(ulimit -f "$kib" && exec "$VRAMREPORT" import analysis.json --db kept.db -q) >kept.out 2>kept.err || rc=$?
vr_name=kept
expect_rc "the disk fills during the import into an existing --db" 1
sqlite3 kept.db .dump >kept.after 2>&1 || true
[ -f kept.db ] && cmp -s kept.before kept.after \
    && pass "the disk fills during the import into an existing --db: it is kept, as it was" \
    || fail "the disk fills during the import into an existing --db: it is kept, as it was" "$(diff kept.before kept.after | head -n 5)"
vr_run nosrc notatrace.txt --db kept.db -o kept.md
expect_rc "a run whose every input fails, with an existing --db" 1
[ -f kept.db ] && pass "a run whose every input fails: the existing --db is kept" \
    || fail "a run whose every input fails: the existing --db is kept"

# `report` refuses a database that holds no imported source, and writes
# nothing into it: an empty file, or the schema without a source.
: >empty.db
vr_run empty report --db empty.db --fail-on any -o empty.md
expect_rc "report on an empty file" 1
grep -q '^vramreport: empty.db: holds no imported source' empty.err \
    && pass "report on an empty file: says it holds no imported source" \
    || fail "report on an empty file: says it holds no imported source" "stderr: $(cat empty.err)"
[ ! -s empty.db ] && [ ! -e empty.md ] && pass "report on an empty file: nothing written into it, no report" \
    || fail "report on an empty file: nothing written into it, no report" "$(stat -c %s empty.db) bytes; $(ls empty.md 2>&1)"
cp x.db nosource.db
sql nosource.db "DELETE FROM source" >/dev/null
before=$(cksum <nosource.db)
vr_run nosource report --db nosource.db --fail-on any -o nosource.md
expect_rc "report on a database that holds no source" 1
grep -q '^vramreport: nosource.db: holds no imported source' nosource.err && [ ! -e nosource.md ] \
    && [ "$(cksum <nosource.db)" = "$before" ] \
    && pass "report on a database that holds no source: refused, said, the file unchanged" \
    || fail "report on a database that holds no source: refused, said, the file unchanged" "stderr: $(cat nosource.err)"

#-- two contents, one XXH64 ------------------------------------------------------------

# XXH64 is invertible lane by lane: file B's first 32 bytes are chosen,
# its next 32 computed so that after 64 bytes its four lanes are file A's;
# the same rest and length then give the same 64-bit hash. Both are the
# same job log after a first line of 64 printable bytes.
"$PYTHON" "$PY/gen_xxh64_twins.py" "$VR_SRCDIR/tests/data/logs/oom-01.log" || fail "python3 wrote two job logs with one XXH64"
rm -f coll.db*
vr_run colla import coll-a.log --db coll.db -q
vr_run collb import coll-b.log --db coll.db
got=$(sql coll.db 'SELECT count(*), count(DISTINCT content_hash), count(DISTINCT data_hash), count(DISTINCT data_blake2b) FROM source')
[ "$got" = "2|1|1|2" ] && pass "two files with one XXH64: both imported (one 64-bit hash, two digests)" \
    || fail "two files with one XXH64: both imported (one 64-bit hash, two digests)" "count, hashes, digests: $got; stderr: $(cat collb.err)"
grep -q 'already imported' collb.err && fail "two files with one XXH64: the second is not said to be imported already" "$(cat collb.err)" \
    || pass "two files with one XXH64: the second is not said to be imported already"
gzip -c coll-b.log >coll-b.log.gz
vr_run collagain import coll-a.log --db coll.db
vr_run collgz import coll-b.log.gz --db coll.db
[ "$(sql coll.db 'SELECT count(*) FROM source')" = 2 ] && grep -q 'already imported (same content as source 1)' collagain.err \
    && grep -q 'already imported (same content as source 2)' collgz.err \
    && pass "two files with one XXH64: each, again or as .gz, is its own source imported already" \
    || fail "two files with one XXH64: each, again or as .gz, is its own source imported already" "$(cat collagain.err collgz.err)"
# A source imported before the digest was kept (schema 18 and older) has
# only its XXH64, which decides as it did then.
rm -f collold.db*
"$VRAMREPORT" import coll-a.log --db collold.db -q || fail "import coll-a.log into collold.db"
sql collold.db "UPDATE source SET data_blake2b = NULL" >/dev/null
vr_run collold import coll-b.log --db collold.db
[ "$(sql collold.db 'SELECT count(*) FROM source')" = 1 ] && grep -q 'already imported' collold.err \
    && pass "a source with no digest (imported before schema 19): its XXH64 decides, as before" \
    || fail "a source with no digest (imported before schema 19): its XXH64 decides, as before" "$(cat collold.err)"

#-- another process holds the database ---------------------------------------------------

# A second process holds the write lock (BEGIN EXCLUSIVE). Within the
# limit (VRAMREPORT_DB_TIMEOUT) vramreport waits, saying so once on a
# terminal; the holder lets go once it has said it. Past the limit, one
# error names the database.
rm -f locked.db*
"$VRAMREPORT" import t.json --db locked.db -q || fail "import into locked.db"
cp analysis.json waited.json
"$PYTHON" "$PY/lockwait.py" >lockwait.out 2>&1 || true
grep -q '^exit 0' lockwait.out && pass "a second import while another holds the database: waits, then imports" \
    || fail "a second import while another holds the database: waits, then imports" "$(head -c 600 lockwait.out)"
[ "$(grep -c 'vramreport: waiting for another vramreport holding locked.db' lockwait.out)" = 1 ] \
    && pass "a second import while another holds the database: says once, on a terminal, that it waits" \
    || fail "a second import while another holds the database: says once, on a terminal, that it waits" "$(head -c 600 lockwait.out)"
[ "$(sql locked.db "SELECT count(*) FROM source WHERE path = 'waited.json'")" = 1 ] \
    && pass "a second import while another holds the database: its source is there" \
    || fail "a second import while another holds the database: its source is there"
"$PYTHON" "$PY/lockout.py" >lockout.out 2>&1 || true
grep -q '^exit 1' lockout.out \
    && grep -q '^vramreport: locked.db: another process holds the database (another vramreport importing into it?); gave up after waiting 1 s' lockout.out \
    && [ "$(wc -l <lockout.out)" = 2 ] \
    && pass "past VRAMREPORT_DB_TIMEOUT: one error naming the database" \
    || fail "past VRAMREPORT_DB_TIMEOUT: one error naming the database" "$(cat lockout.out)"
[ -f locked.db ] && pass "past VRAMREPORT_DB_TIMEOUT: the database is kept" || fail "past VRAMREPORT_DB_TIMEOUT: the database is kept"
rc=0
VRAMREPORT_DB_TIMEOUT=soon "$VRAMREPORT" import t.json --db locked.db >badwait.out 2>badwait.err || rc=$?
vr_name=badwait
expect_rc "VRAMREPORT_DB_TIMEOUT that is not whole seconds" 2
grep -q "VRAMREPORT_DB_TIMEOUT 'soon'" badwait.err && pass "VRAMREPORT_DB_TIMEOUT that is not whole seconds: said" \
    || fail "VRAMREPORT_DB_TIMEOUT that is not whole seconds: said" "$(cat badwait.err)"

finish
