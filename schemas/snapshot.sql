-- Statements of the allocator-snapshot reader (src/import/readers/snapshot/snapshot.c).
--
-- The rows written by the million (stack frames, trace entries, memory
-- events: an alloc or free_completed entry is only its memory event, see
-- migration 16) go through multi-row INSERTs (vr_batch), and those say OR
-- FAIL: a multi-row INSERT that may ABORT makes SQLite copy each page it
-- touches to a statement journal first (16 KiB a statement: 770 MB of
-- copies and 94,000 writes to a temporary file for a 92 MiB snapshot).
-- FAIL keeps the rows a failed statement already wrote, which changes
-- nothing here: an error fails the import, and its one transaction rolls
-- back whole.

-- name: insert_frame
INSERT INTO frame (filename_id, line, function_id) VALUES (:file, :line, :function)
ON CONFLICT (filename_id, line, function_id) DO NOTHING;

-- name: select_frame
SELECT id FROM frame WHERE filename_id = :file AND line = :line AND function_id = :function;

-- name: select_stack
SELECT id FROM stack WHERE digest = :digest;

-- name: insert_stack
INSERT INTO stack (digest, depth, user_frame_id) VALUES (:digest, :depth, :user_frame);

-- A stack numbered by the reader (the next id after those stored before),
-- written with the rows by the writer thread; :digest is the XXH64 as a
-- signed integer, stored in hex as insert_stack stores it.
-- name: insert_numbered_stack
INSERT INTO stack (id, digest, depth, user_frame_id)
VALUES (:id, printf('%016x', :digest), :depth, :user_frame);

-- name: known_stacks
SELECT id, digest FROM stack;

-- name: insert_stack_frame
INSERT OR FAIL INTO stack_frame (stack_id, position, frame_id) VALUES (:stack, :position, :frame);

-- name: insert_segment
INSERT INTO segment (source_id, device_id, address, total_bytes, allocated_bytes,
                     active_bytes, requested_bytes, stream, segment_type, pool,
                     is_expandable, stack_id)
VALUES (:source, :device, :address, :total, :allocated, :active, :requested, :stream,
        :type, :pool, :expandable, :stack);

-- name: insert_block
INSERT INTO block (segment_id, address, bytes, requested_bytes, state, stack_id)
VALUES (:segment, :address, :bytes, :requested, :state, :stack);

-- Trace entries are numbered in one sequence across trace_entry_other and
-- mem_event (migration 16), from the largest id either holds: :id.
-- name: first_entry_id
SELECT max(coalesce((SELECT max(id) FROM trace_entry_other), 0),
           coalesce((SELECT max(id) FROM mem_event), 0)) + 1;

-- An entry that is not stored as a memory event (free_requested, segment_*,
-- oom, ...; :action is its code in trace_action). Batched, :source and
-- :device are bound once a statement (/* shared */, src/batch/batch.h): the
-- same in every row of a device's run.
-- name: insert_other_entry
INSERT OR FAIL INTO trace_entry_other (id, source_id, device_id, seq, action, address, bytes,
                                       stream, ts_ns, device_free_bytes, stack_id)
VALUES (:id, :source /* shared */, :device /* shared */, :seq, :action, :address, :bytes,
        :stream, :ts, :device_free, :stack);

-- Running sums of allocated (total_allocated) and reserved (total_reserved)
-- since the first recorded entry; anchor_totals turns them into the
-- allocator's figures once the end state is known. :seq and :stream: the
-- trace entry the event is (an alloc or free_completed stored once), or
-- NULL. :source and :device shared as in insert_other_entry.
-- name: insert_snapshot_event
INSERT OR FAIL INTO mem_event (id, source_id, device_id, ts_ns, bytes, addr, total_allocated,
                               total_reserved, stack_id, seq, stream)
VALUES (:id, :source /* shared */, :device /* shared */, :ts, :bytes, :address, :allocated,
        :reserved, :stack, :seq, :stream);

-- name: insert_snapshot_oom
INSERT INTO oom_event (source_id, device_id, ts_ns, requested_bytes, total_allocated,
                       total_reserved, device_free_bytes, message)
VALUES (:source, :device, :ts, :bytes, :allocated, :reserved, :device_free,
        'recorded by the allocator snapshot');

-- The end state, per device of the source: allocated (blocks in use or
-- waiting to be freed: their free_completed is not recorded yet) and
-- reserved (segments).
-- name: final_state
SELECT s.device_id,
       coalesce(sum(s.total_bytes), 0),
       coalesce((SELECT sum(b.bytes) FROM block b JOIN segment t ON t.id = b.segment_id
                  WHERE t.source_id = :source AND t.device_id = s.device_id
                    AND b.state <> 'inactive'), 0)
  FROM segment s WHERE s.source_id = :source GROUP BY s.device_id;

-- The timeline ends where the segments say: each running sum is lifted by
-- the end state minus the sum of all the recorded changes (:allocated and
-- :reserved are those lifts). What was live before the first recorded
-- entry is that lift: memory_viz calls it pre-existing. NOT INDEXED: a
-- scan of the table, as before mem_event_device_source_time was kept
-- during the import (migration 17); through it each event would cost a
-- look-up of its row.
-- name: anchor_totals
UPDATE mem_event NOT INDEXED SET total_allocated = total_allocated + :allocated,
                     total_reserved = total_reserved + :reserved
 WHERE source_id = :source AND device_id = :device;

-- name: anchor_ooms
UPDATE oom_event SET total_allocated = total_allocated + :allocated,
                     total_reserved = total_reserved + :reserved
 WHERE source_id = :source AND device_id = :device;

-- name: insert_setting
INSERT OR REPLACE INTO allocator_setting (source_id, key, value) VALUES (:source, :key, :value);

-- Each new stack's first frame outside torch: the user's line that asked
-- for the memory. C++ frames ("??", .cpp, .h) and torch's Python files
-- (any path through a torch folder, / or \ separated) are passed over.
-- The user's frames are found once (the IN list is not correlated: SQLite
-- builds it once), not once per stack and frame: a stack is some 20
-- frames, and the file names' LIKEs per stack frame were most of the
-- cost.
-- name: user_frames
UPDATE stack SET user_frame_id = (
    SELECT sf.frame_id FROM stack_frame sf
     WHERE sf.stack_id = stack.id
       AND sf.frame_id IN (
           SELECT f.id FROM frame f JOIN name n ON n.id = f.filename_id
            WHERE n.text LIKE '%.py'
              AND n.text NOT LIKE '%/torch/%' AND n.text NOT LIKE '%\torch\%'
              AND n.text NOT LIKE 'torch/%' AND n.text NOT LIKE '<frozen%')
     ORDER BY sf.position LIMIT 1)
 WHERE user_frame_id IS NULL;

-- Stages (external_annotations): a START without its END (dur_ns -1) runs
-- to the source's last time, an END without its START (dur_ns -2, ts_ns
-- its time) from the source's first; :first is the first such row's id.
-- name: close_stages
UPDATE op SET ts_ns = CASE dur_ns WHEN -2 THEN min(:start, ts_ns) ELSE ts_ns END,
              dur_ns = CASE dur_ns WHEN -2 THEN ts_ns - min(:start, ts_ns)
                                   ELSE max(0, :end - ts_ns) END
 WHERE id >= :first AND source_id = :source AND cat = 'user_annotation' AND dur_ns < 0;

-- Allocs and frees at an address no segment holds (snapshot_bounds.c):
-- their rows go, and the running sums of the device's later events are
-- put back as if they had never been (:cum, the sum of the removed
-- changes up to each removed entry's rows, by the id after them).
-- name: bad_table
CREATE TEMP TABLE IF NOT EXISTS snapshot_bad (device_id INTEGER NOT NULL, id INTEGER NOT NULL,
                                              cum INTEGER NOT NULL,
                                              PRIMARY KEY (device_id, id)) WITHOUT ROWID;

-- name: bad_table_clear
DELETE FROM temp.snapshot_bad;

-- name: insert_bad
INSERT OR REPLACE INTO temp.snapshot_bad (device_id, id, cum) VALUES (:device, :id, :cum);

-- name: delete_bad_entry
DELETE FROM trace_entry_other WHERE id >= :first AND id < :end AND source_id = :source;

-- name: delete_bad_event
DELETE FROM mem_event WHERE id >= :first AND id < :end AND source_id = :source;

-- name: unapply_bad
UPDATE mem_event SET total_allocated = total_allocated - coalesce(
    (SELECT b.cum FROM temp.snapshot_bad b
      WHERE b.device_id = mem_event.device_id AND b.id <= mem_event.id
      ORDER BY b.id DESC LIMIT 1), 0)
 WHERE source_id = :source AND id >= :first;

-- name: unapply_bad_oom
UPDATE oom_event SET total_allocated = total_allocated - :fix WHERE id = :id;
