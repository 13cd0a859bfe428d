#!/usr/bin/env bash
# tests/trace-entries.sh: an allocator snapshot's trace entries are stored
# once each (migration 16): an alloc or free_completed as its memory event,
# any other entry (and an alloc or free a memory event cannot state: no
# size, a size of 0, a device_free) in trace_entry_other; the view
# trace_entry shows every entry as the file has it, but for one of a
# negative size: that cannot be, and is malformed (not stored, counted). Python writes a
# two-device snapshot with every kind of entry and counts what the view
# must show; a database taken back to schema 15 (one trace_entry table,
# as an older vramreport wrote it) is upgraded with its entries and
# reports the same.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/trace-entries
cd "$TMP"
need python3 || true
need sqlite3 || true

"$PYTHON" "$PY/gen.py" || fail "gen.py writes the snapshot"

vr_run imp import snap.pickle --db snap.db
[ "$rc" = 0 ] && pass "the snapshot imports" || fail "the snapshot imports" "$(cat imp.err)"
grep -q 'snap.pickle: 2 malformed record(s) skipped, the first at byte [0-9]* (a trace entry with a negative size or address)' imp.err \
    && pass "the two frees of a negative size are malformed, said on stderr" \
    || fail "the two frees of a negative size are malformed, said on stderr" "$(cat imp.err)"

# view DB: the view's rows as the file numbers devices, in order (JSON).
view() {
    sqlite3 -json "$1" "SELECT d.idx AS dev, t.seq, t.action, t.address, t.bytes, t.stream,
                              t.ts_ns, t.device_free_bytes, t.id
                         FROM trace_entry t JOIN device d ON d.id = t.device_id
                        ORDER BY d.idx, t.seq"
}
view snap.db >view.json
"$PYTHON" "$PY/check.py" snap.db >results.txt 2>&1 || echo "FAIL	check.py ran	$(cat results.txt)" >>results.txt
tap_lines results.txt

vr_run before report --db snap.db --format json -o before.json
[ "$rc" = 0 ] && pass "the report" || fail "the report" "$(cat before.err)"

# The database as schema 15 wrote it: every entry in one trace_entry table,
# memory events without seq and stream.
"$PYTHON" "$PY/schema15.py" || fail "snap.db taken back to schema 15"
vr_run after report --db snap.db --format json -o after.json
[ "$rc" = 0 ] && pass "a schema 15 database: upgraded and reported" ||
    fail "a schema 15 database: upgraded and reported" "$(cat after.err)"
view snap.db >upgraded.json
cmp -s view.json upgraded.json && pass "a schema 15 database keeps every entry, ids and all" ||
    fail "a schema 15 database keeps every entry, ids and all" "$(diff view.json upgraded.json | head -5)"
same=$("$PYTHON" -c '
import json
a, b = (json.load(open(f)) for f in ("before.json", "after.json"))
for d in (a, b):
    d.pop("generated_at", None)
print(a == b and len(a["devices"]) == 2)')
[ "$same" = True ] && pass "a schema 15 database reports the same (two devices, their OOMs replayed)" ||
    fail "a schema 15 database reports the same" "$same"
got=$(sqlite3 snap.db "SELECT count(*) FROM oom_fragmentation")
[ "$got" -gt 0 ] && pass "the OOMs of the upgraded database replayed ($got rows)" ||
    fail "the OOMs of the upgraded database replayed" "$got rows"

# A snapshot imported after the upgrade numbers its entries after the old
# ones (which kept their ids, in the id space of memory events too).
vr_run again import snap2.pickle --db snap.db --quiet
got=$(sqlite3 snap.db "SELECT count(*), count(DISTINCT id) FROM trace_entry")
want=$(($("$PYTHON" -c 'import json; print(len(json.load(open("expected.json"))))') + $(cat n2.txt)))
[ "$rc" = 0 ] && [ "$got" = "$want|$want" ] && pass "a second import after the upgrade: every entry once, ids unique" ||
    fail "a second import after the upgrade: every entry once, ids unique" "rc $rc, $got, want $want|$want: $(cat again.err)"
finish
