-- Analysis passes. Each block reads the raw tables and (re)writes derived
-- ones, so running the analysis twice gives the same database. The two
-- sweeps over the memory events (by thread, and by device and time) are in
-- C (src/analyze/attribute.c, timeline.c): one ordered read each instead of
-- many SQL passes with sorts.

-- name: index_mem_by_device
CREATE INDEX IF NOT EXISTS mem_event_device_time ON mem_event (device_id, ts_ns, id);

-- name: index_mem_by_thread
CREATE INDEX IF NOT EXISTS mem_event_thread_time ON mem_event (pid, tid, ts_ns, id);

-- name: index_ops_by_thread
CREATE INDEX IF NOT EXISTS op_cpu_thread_time ON op (pid, tid, ts_ns, dur_ns DESC, id)
    WHERE cat = 'cpu_op';

-- name: clear_derived
DELETE FROM allocation;
DELETE FROM device_summary;
DELETE FROM step_summary;
DELETE FROM op_memory;
DELETE FROM op_calls;

-- Old traces (and the memory timeline export) give no allocator totals:
-- rebuild allocated as the running sum of the deltas. Memory allocated
-- before profiling began is unknown, so a running sum can dip below zero;
-- the lowest dip is the least that must have been allocated already, and
-- becomes the baseline.
-- name: rebuild_totals
WITH running AS (
    SELECT m.id, m.device_id,
           -- total(), not sum(): a float that cannot fail on overflow
           -- (sizes come from the file); exact below 2^53 bytes.
           CAST(total(m.bytes) OVER (PARTITION BY m.device_id
                                     ORDER BY m.ts_ns, m.id) AS INTEGER) AS total
      FROM mem_event m JOIN device d ON d.id = m.device_id
     WHERE d.totals_known = 0
), baseline AS (
    SELECT device_id, max(0, -min(total)) AS bytes FROM running GROUP BY device_id
)
UPDATE mem_event SET total_allocated = running.total + baseline.bytes
  FROM running JOIN baseline ON baseline.device_id = running.device_id
 WHERE mem_event.id = running.id;

-- Attribution sweep (attribute.c): ops and memory events by thread and time.
-- name: select_cpu_ops_by_thread
SELECT id, pid, tid, ts_ns, dur_ns, name_id FROM op
 WHERE cat = 'cpu_op' AND pid IS NOT NULL AND tid IS NOT NULL
 ORDER BY pid, tid, ts_ns, dur_ns DESC, id;

-- name: select_mem_events_by_thread
SELECT id, pid, tid, ts_ns, device_id, bytes FROM mem_event
 WHERE pid IS NOT NULL AND tid IS NOT NULL
 ORDER BY pid, tid, ts_ns, id;

-- name: count_unthreaded_cpu_ops
SELECT name_id, count(*) FROM op
 WHERE cat = 'cpu_op' AND (pid IS NULL OR tid IS NULL) GROUP BY name_id;

-- name: set_event_op
UPDATE mem_event SET op_id = ?2 WHERE id = ?1;

-- name: insert_op_memory
INSERT INTO op_memory (name_id, device_id, self_alloc_count, self_alloc_bytes,
                       self_free_bytes, incl_alloc_count, incl_alloc_bytes,
                       incl_free_bytes)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
ON CONFLICT (name_id, device_id) DO UPDATE SET
    self_alloc_count = self_alloc_count + excluded.self_alloc_count,
    self_alloc_bytes = self_alloc_bytes + excluded.self_alloc_bytes,
    self_free_bytes = self_free_bytes + excluded.self_free_bytes,
    incl_alloc_count = incl_alloc_count + excluded.incl_alloc_count,
    incl_alloc_bytes = incl_alloc_bytes + excluded.incl_alloc_bytes,
    incl_free_bytes = incl_free_bytes + excluded.incl_free_bytes;

-- name: insert_op_calls
INSERT INTO op_calls (name_id, calls) VALUES (?1, ?2)
ON CONFLICT (name_id) DO UPDATE SET calls = calls + excluded.calls;

-- Timeline sweep (timeline.c): each device's events in time order.
-- name: select_steps
SELECT source_id, number, ts_ns, dur_ns FROM step ORDER BY source_id, ts_ns;

-- name: select_mem_events_by_device
SELECT id, device_id, source_id, ts_ns, bytes, addr, total_allocated,
       total_reserved, op_id
  FROM mem_event ORDER BY device_id, ts_ns, id;

-- name: insert_allocation
INSERT INTO allocation (device_id, addr, bytes, alloc_ts_ns, free_ts_ns,
                        alloc_event_id, free_event_id, op_id)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8);

-- name: insert_device_summary
INSERT INTO device_summary (device_id, events, start_ns, end_ns,
                            peak_allocated_bytes, peak_allocated_ts_ns,
                            peak_allocated_event_id, peak_allocated_op_id,
                            peak_allocated_step, peak_reserved_bytes,
                            peak_reserved_ts_ns, live_unknown_bytes)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12);

-- name: insert_step_summary
INSERT INTO step_summary (device_id, source_id, step, peak_allocated_bytes,
                          peak_reserved_bytes, start_allocated_bytes,
                          end_allocated_bytes, alloc_count, alloc_bytes)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9);

-- Last, in the analysis transaction: the derived tables match the sources.
-- name: mark_analysis_complete
UPDATE analysis_state SET complete = 1,
       analysed_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now');

-- name: analysis_complete
SELECT complete FROM analysis_state;
