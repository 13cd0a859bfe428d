-- Analysis passes. Each block reads the raw tables and (re)writes derived
-- ones, so running the analysis twice gives the same database.

-- name: indexes
CREATE INDEX IF NOT EXISTS mem_event_device_time ON mem_event (device_id, ts_ns, id);
CREATE INDEX IF NOT EXISTS mem_event_thread_time ON mem_event (pid, tid, ts_ns, id);
CREATE INDEX IF NOT EXISTS op_cpu_thread_time ON op (pid, tid, ts_ns, dur_ns DESC, id)
    WHERE cat = 'cpu_op';
CREATE INDEX IF NOT EXISTS op_name ON op (name_id);

-- name: clear_derived
DELETE FROM allocation;
DELETE FROM device_summary;
DELETE FROM step_summary;
DELETE FROM op_memory;

-- Old traces (and the memory timeline export) give no allocator totals:
-- rebuild allocated as the running sum of the deltas. Memory allocated
-- before profiling began is unknown, so a running sum can dip below zero;
-- the lowest dip is the least that must have been allocated already, and
-- becomes the baseline.
-- name: rebuild_totals
WITH running AS (
    SELECT m.id, m.device_id,
           sum(m.bytes) OVER (PARTITION BY m.device_id ORDER BY m.ts_ns, m.id) AS total
      FROM mem_event m JOIN device d ON d.id = m.device_id
     WHERE d.totals_known = 0
), baseline AS (
    SELECT device_id, max(0, -min(total)) AS bytes FROM running GROUP BY device_id
)
UPDATE mem_event SET total_allocated = running.total + baseline.bytes
  FROM running JOIN baseline ON baseline.device_id = running.device_id
 WHERE mem_event.id = running.id;

-- name: assign_steps
UPDATE mem_event SET step = step.number
  FROM step
 WHERE step.source_id = mem_event.source_id
   AND mem_event.ts_ns >= step.ts_ns
   AND mem_event.ts_ns < step.ts_ns + step.dur_ns;

-- name: select_cpu_ops_by_thread
SELECT id, pid, tid, ts_ns, dur_ns FROM op
 WHERE cat = 'cpu_op' AND pid IS NOT NULL AND tid IS NOT NULL
 ORDER BY pid, tid, ts_ns, dur_ns DESC, id;

-- name: select_mem_events_by_thread
SELECT id, pid, tid, ts_ns, device_id, bytes FROM mem_event
 WHERE pid IS NOT NULL AND tid IS NOT NULL
 ORDER BY pid, tid, ts_ns, id;

-- name: set_event_op
UPDATE mem_event SET op_id = ?2 WHERE id = ?1;

-- name: insert_op_memory
INSERT INTO op_memory (op_id, device_id, self_alloc_count, self_alloc_bytes,
                       self_free_bytes, incl_alloc_count, incl_alloc_bytes,
                       incl_free_bytes)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8);

-- Each allocation is paired with the next event at its address on its
-- device: a free (negative bytes) ends it; anything else means the free was
-- not recorded.
-- name: pair_allocations
INSERT INTO allocation (device_id, addr, bytes, alloc_ts_ns, free_ts_ns,
                        alloc_event_id, free_event_id, op_id)
SELECT device_id, addr, bytes, ts_ns,
       CASE WHEN next_bytes < 0 THEN next_ts END,
       id,
       CASE WHEN next_bytes < 0 THEN next_id END,
       op_id
  FROM (SELECT device_id, addr, bytes, ts_ns, id, op_id,
               lead(bytes) OVER w AS next_bytes,
               lead(ts_ns) OVER w AS next_ts,
               lead(id) OVER w AS next_id
          FROM mem_event
         WHERE addr IS NOT NULL
        WINDOW w AS (PARTITION BY device_id, addr ORDER BY ts_ns, id))
 WHERE bytes > 0;

-- The peak is the first event that reaches the highest allocated figure.
-- name: summarize_devices
WITH peak_alloc AS (
    SELECT device_id, id, ts_ns, total_allocated, op_id, step
      FROM (SELECT device_id, id, ts_ns, total_allocated, op_id, step,
                   row_number() OVER (PARTITION BY device_id
                                      ORDER BY total_allocated DESC, ts_ns, id) AS rn
              FROM mem_event WHERE total_allocated IS NOT NULL)
     WHERE rn = 1
), peak_res AS (
    SELECT device_id, ts_ns, total_reserved
      FROM (SELECT device_id, ts_ns, total_reserved,
                   row_number() OVER (PARTITION BY device_id
                                      ORDER BY total_reserved DESC, ts_ns, id) AS rn
              FROM mem_event WHERE total_reserved IS NOT NULL)
     WHERE rn = 1
), span AS (
    SELECT device_id, count(*) AS events, min(ts_ns) AS start_ns, max(ts_ns) AS end_ns
      FROM mem_event GROUP BY device_id
)
INSERT INTO device_summary (device_id, events, start_ns, end_ns,
                            peak_allocated_bytes, peak_allocated_ts_ns,
                            peak_allocated_event_id, peak_allocated_op_id,
                            peak_allocated_step, peak_reserved_bytes,
                            peak_reserved_ts_ns)
SELECT span.device_id, span.events, span.start_ns, span.end_ns,
       pa.total_allocated, pa.ts_ns, pa.id, pa.op_id, pa.step,
       pr.total_reserved, pr.ts_ns
  FROM span
  LEFT JOIN peak_alloc pa ON pa.device_id = span.device_id
  LEFT JOIN peak_res pr ON pr.device_id = span.device_id;

-- What was live at the peak but never seen allocated (allocated before
-- the trace began, or in a trace without addresses).
-- name: live_unknown
UPDATE device_summary SET live_unknown_bytes = peak_allocated_bytes - coalesce((
    SELECT sum(a.bytes) FROM allocation a
      JOIN mem_event pe ON pe.id = device_summary.peak_allocated_event_id
     WHERE a.device_id = device_summary.device_id
       AND (a.alloc_ts_ns < pe.ts_ns OR (a.alloc_ts_ns = pe.ts_ns AND a.alloc_event_id <= pe.id))
       AND (a.free_ts_ns IS NULL OR a.free_ts_ns > pe.ts_ns
            OR (a.free_ts_ns = pe.ts_ns AND a.free_event_id > pe.id))), 0)
 WHERE peak_allocated_event_id IS NOT NULL;

-- name: summarize_steps
INSERT INTO step_summary (device_id, source_id, step, peak_allocated_bytes,
                          peak_reserved_bytes, start_allocated_bytes,
                          end_allocated_bytes, alloc_count, alloc_bytes)
SELECT device_id, source_id, step, max(total_allocated), max(total_reserved),
       max(CASE WHEN first_rn = 1 THEN total_allocated - bytes END),
       max(CASE WHEN last_rn = 1 THEN total_allocated END),
       sum(bytes > 0), sum(CASE WHEN bytes > 0 THEN bytes ELSE 0 END)
  FROM (SELECT device_id, source_id, step, bytes, total_allocated, total_reserved,
               row_number() OVER (PARTITION BY device_id, source_id, step
                                  ORDER BY ts_ns, id) AS first_rn,
               row_number() OVER (PARTITION BY device_id, source_id, step
                                  ORDER BY ts_ns DESC, id DESC) AS last_rn
          FROM mem_event WHERE step IS NOT NULL)
 GROUP BY device_id, source_id, step;
