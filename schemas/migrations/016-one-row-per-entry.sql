-- Migration 16 (PRAGMA user_version = 16): one row per allocator-snapshot
-- alloc or free (the speed of snapshot imports, docs/performance.md).
--
-- Migration 5 stored every trace entry as a trace_entry row, and each
-- alloc and free_completed again as a memory event (mem_event): two rows
-- for two thirds of the entries. Now such an entry is stored once, as its
-- memory event, which carries the entry's number (seq) and stream; the
-- other entries (free_requested, segment_*, oom, snapshot, ...) and the
-- rare alloc or free a memory event cannot state exactly (no size, a size
-- of 0 or less, a device_free) go to trace_entry_other. trace_entry is now
-- a view of both with the columns it had.
--
-- Ids: the importer numbers a snapshot's entries in one sequence across
-- both tables, so trace_entry.id still follows the entries' order within
-- a device and is unique, and a range of ids is a range of entries. (A
-- snapshot's memory events therefore have gaps in their ids where its other
-- entries are; every reader orders by id, none counts on its density.)

-- Action codes (trace_entry_other.action): an integer in the row, its
-- name through the view. The order is snapshot.c's actions[].
CREATE TABLE trace_action (
    code            INTEGER PRIMARY KEY,
    name            TEXT NOT NULL UNIQUE
);
INSERT INTO trace_action (code, name) VALUES
    (0, 'alloc'), (1, 'free_requested'), (2, 'free_completed'), (3, 'segment_alloc'),
    (4, 'segment_free'), (5, 'segment_map'), (6, 'segment_unmap'), (7, 'snapshot'),
    (8, 'oom'), (9, 'other');

-- The entries that are not memory events. Columns as migration 5's
-- trace_entry, action a code.
CREATE TABLE trace_entry_other (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL,
    device_id       INTEGER NOT NULL,
    seq             INTEGER NOT NULL,
    action          INTEGER NOT NULL REFERENCES trace_action(code),
    address         INTEGER,
    bytes           INTEGER,
    stream          INTEGER,
    ts_ns           INTEGER NOT NULL,
    device_free_bytes INTEGER,
    stack_id        INTEGER
);

-- A database made before keeps every entry it holds, all of them here
-- (its memory events stay as they are, without seq: the view shows each
-- entry once).
INSERT INTO trace_entry_other (id, source_id, device_id, seq, action, address, bytes,
                               stream, ts_ns, device_free_bytes, stack_id)
SELECT t.id, t.source_id, t.device_id, t.seq,
       coalesce((SELECT a.code FROM trace_action a WHERE a.name = t.action), 9),
       t.address, t.bytes, t.stream, t.ts_ns, t.device_free_bytes, t.stack_id
  FROM trace_entry t ORDER BY t.id;
DROP TABLE trace_entry;

-- A memory event that is a snapshot's alloc (bytes > 0) or free_completed
-- (bytes < 0) entry: its number in the device's list and its stream. NULL
-- for every other event (traces, logs, the snapshot's opening and closing
-- levels).
ALTER TABLE mem_event ADD COLUMN seq INTEGER;
ALTER TABLE mem_event ADD COLUMN stream INTEGER;

-- Every trace entry, as migration 5's table showed it.
CREATE VIEW trace_entry (id, source_id, device_id, seq, action, address, bytes, stream, ts_ns,
                         device_free_bytes, stack_id) AS
SELECT o.id, o.source_id, o.device_id, o.seq, a.name, o.address, o.bytes, o.stream, o.ts_ns,
       o.device_free_bytes, o.stack_id
  FROM trace_entry_other o JOIN trace_action a ON a.code = o.action
UNION ALL
SELECT m.id, m.source_id, m.device_id, m.seq,
       CASE WHEN m.bytes > 0 THEN 'alloc' ELSE 'free_completed' END, m.addr,
       CASE WHEN m.bytes > 0 THEN m.bytes ELSE -m.bytes END, m.stream, m.ts_ns, NULL,
       m.stack_id
  FROM mem_event m WHERE m.seq IS NOT NULL;
