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
cd "$TMP"
need python3 || true
need sqlite3 || true

cat >gen.py <<'PYEOF'
import json, pickle

MiB = 1 << 20
T0 = 1700000000000000


def device_trace(dev, n):
    """n rounds of alloc, free_requested, free_completed over one segment,
    an oom half-way, and the odd entries a memory event cannot state."""
    base = (0x7F0000000000 + dev * 0x1000000000)
    t = [T0]
    out = []

    def entry(action, addr, size, **kw):
        t[0] += 3
        e = {"action": action, "addr": addr, "size": size, "stream": dev,
             "time_us": t[0], "frames": []}
        e.update(kw)
        out.append(e)

    entry("segment_alloc", base, 64 * MiB)
    for i in range(n):
        addr, size = base + (i % 32) * 2 * MiB, (i % 7 + 1) * 512
        entry("alloc", addr, size)
        if i == n // 2:
            entry("oom", 0, 80 * MiB, device_free=1 * MiB)
        entry("free_requested", addr, size)
        entry("free_completed", addr, size)
    entry("alloc", base, 0)                        # a size of 0
    entry("free_completed", base, 512, device_free=7)  # a device_free
    out.append({"action": "alloc", "addr": base, "stream": dev, "time_us": t[0] + 1,
                "frames": []})                     # no size: a stream, no size
    out.append({"action": "segment_map", "addr": base, "size": MiB, "time_us": t[0] + 2,
                "frames": []})
    out.append({"action": "something_new", "addr": base, "size": 3, "time_us": t[0] + 3,
                "frames": []})
    out.append({"action": "free_completed", "addr": base + 5, "size": -4, "stream": 1,
                "time_us": t[0] + 4, "frames": []})   # a negative size
    return out


traces = [device_trace(0, 300), device_trace(1, 200)]
segments = [{"device": d, "address": 0x7F0000000000 + d * 0x1000000000,
             "total_size": 64 * MiB, "allocated_size": 0, "active_size": 0,
             "requested_size": 0, "stream": d, "segment_type": "large",
             "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
             "blocks": [{"address": 0x7F0000000000 + d * 0x1000000000, "size": 64 * MiB,
                         "requested_size": 0, "state": "inactive", "frames": []}]}
            for d in range(2)]
pickle.dump({"segments": segments, "device_traces": traces}, open("snap.pickle", "wb"),
            protocol=4)
# Another snapshot: device 0's history alone.
pickle.dump({"segments": segments[:1], "device_traces": traces[:1]},
            open("snap2.pickle", "wb"), protocol=4)
# (its one entry of a negative size is malformed: not stored)
open("n2.txt", "w").write("%d\n" % sum(1 for e in traces[0] if (e.get("size") or 0) >= 0))

# What the view must show, per device in order: the columns a user reads.
known = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
         "segment_map", "segment_unmap", "snapshot", "oom"}
rows = []
for dev, entries in enumerate(traces):
    for seq, e in enumerate(entries):
        if (e.get("size") or 0) < 0:
            continue                               # malformed: not stored
        rows.append([dev, seq, e["action"] if e["action"] in known else "other",
                     e.get("addr"), e.get("size"), e.get("stream"), e["time_us"] * 1000,
                     e.get("device_free")])
json.dump(rows, open("expected.json", "w"))
PYEOF
"$PYTHON" gen.py || fail "gen.py writes the snapshot"

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
cat >check.py <<'PYEOF'
import json, sqlite3, sys
expected = json.load(open("expected.json"))
got = json.load(open("view.json"))
cols = ["dev", "seq", "action", "address", "bytes", "stream", "ts_ns", "device_free_bytes"]
rows = [[r[c] for c in cols] for r in got]
print("PASS\tthe view shows every entry as the file has it (%d)" % len(expected)
      if rows == expected else
      "FAIL\tthe view shows every entry as the file has it\t%r" %
      [(a, b) for a, b in zip(rows, expected) if a != b][:3] + [len(rows), len(expected)])
ids_ordered = all(a["id"] < b["id"] for a, b in zip(got, got[1:]) if a["dev"] == b["dev"])
ids_unique = len({r["id"] for r in got}) == len(got)
print("PASS\tids are unique and follow each device's entries" if ids_ordered and ids_unique
      else "FAIL\tids are unique and follow each device's entries\t%s %s" % (ids_ordered, ids_unique))
db = sqlite3.connect(sys.argv[1])
one = lambda sql: db.execute(sql).fetchone()[0]
stated = sum(1 for r in expected if r[2] in ("alloc", "free_completed") and r[4] is not None
             and r[4] > 0 and r[7] is None)
others, events = one("SELECT count(*) FROM trace_entry_other"), \
    one("SELECT count(*) FROM mem_event WHERE seq IS NOT NULL")
print("PASS\teach entry is one row: %d memory events, %d others" % (events, others)
      if (events, others) == (stated, len(expected) - stated) else
      "FAIL\teach entry is one row\tmemory events %d others %d, want %d %d" %
      (events, others, stated, len(expected) - stated))
# The odd allocs and frees still move the timeline as before: a memory
# event each (without seq) beside their entry.
odd = one("SELECT count(*) FROM mem_event WHERE seq IS NULL AND bytes <> 0")
want = sum(1 for r in expected if r[2] in ("alloc", "free_completed") and r[4] is not None
           and r[4] != 0 and not (r[4] > 0 and r[7] is None))
print("PASS\tthe entries kept apart still make their memory events (%d)" % odd if odd == want
      else "FAIL\tthe entries kept apart still make their memory events\t%d, want %d" % (odd, want))
PYEOF
"$PYTHON" check.py snap.db >results.txt 2>&1 || echo "FAIL	check.py ran	$(cat results.txt)" >>results.txt
tap_lines results.txt

vr_run before report --db snap.db --format json -o before.json
[ "$rc" = 0 ] && pass "the report" || fail "the report" "$(cat before.err)"

# The database as schema 15 wrote it: every entry in one trace_entry table,
# memory events without seq and stream.
"$PYTHON" - <<'PYEOF' || fail "snap.db taken back to schema 15"
import sqlite3
db = sqlite3.connect("snap.db")
db.executescript("""
CREATE TABLE te AS SELECT * FROM trace_entry;
DROP VIEW trace_entry;
CREATE TABLE trace_entry (
    id INTEGER PRIMARY KEY, source_id INTEGER NOT NULL, device_id INTEGER NOT NULL,
    seq INTEGER NOT NULL, action TEXT NOT NULL, address INTEGER, bytes INTEGER,
    stream INTEGER, ts_ns INTEGER NOT NULL, device_free_bytes INTEGER, stack_id INTEGER);
INSERT INTO trace_entry SELECT * FROM te;
DROP TABLE te; DROP TABLE trace_entry_other; DROP TABLE trace_action;
ALTER TABLE mem_event DROP COLUMN seq;
ALTER TABLE mem_event DROP COLUMN stream;
PRAGMA user_version = 15;
""")
db.close()
PYEOF
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
