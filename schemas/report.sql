-- Queries the renderers run. Column aliases are the JSON keys of the
-- results document (docs/json.md), so the SQL is the one place a key is
-- named. Integer columns become exact JSON integers; *_ts_ns are
-- nanoseconds since the Unix epoch (source clock + base_time_ns).

-- name: analysis_complete
SELECT complete FROM analysis_state;

-- name: sources
SELECT s.id AS id, s.path AS path, s.format AS format,
       s.compression AS compression, s.events AS events,
       s.bytes AS bytes, s.raw_bytes AS raw_bytes,
       s.truncated AS truncated, s.truncated_at AS truncated_at_byte,
       s.base_time_ns + s.start_ns AS start_ts_ns,
       s.base_time_ns + s.end_ns AS end_ts_ns,
       s.rank AS rank, s.world_size AS world_size,
       s.content_hash AS content_hash
  FROM source s ORDER BY s.id;

-- name: source_tallies
SELECT kind, count FROM source_tally WHERE source_id = ?1 ORDER BY kind;

-- name: source_records
SELECT kind, count FROM source_events WHERE source_id = ?1 ORDER BY count DESC, kind;

-- name: devices
SELECT d.id AS db_id, d.label AS id, d.model AS name, d.platform AS platform,
       CASE WHEN d.rank >= 0 THEN d.rank END AS rank,
       (SELECT s.path FROM source s WHERE s.id = d.scope) AS source_path,
       d.capacity_bytes AS capacity_bytes,
       ds.events AS memory_events,
       d.totals_known = 0 AS totals_rebuilt,
       src.base AS base_time_ns,
       src.base + ds.start_ns AS start_ts_ns,
       src.base + ds.end_ns AS end_ts_ns,
       ds.peak_allocated_bytes AS peak_allocated_bytes,
       src.base + ds.peak_allocated_ts_ns AS peak_allocated_ts_ns,
       ds.peak_allocated_step AS peak_allocated_step,
       (SELECT n.text FROM op o JOIN name n ON n.id = o.name_id
         WHERE o.id = ds.peak_allocated_op_id) AS peak_allocated_op,
       ds.peak_reserved_bytes AS peak_reserved_bytes,
       src.base + ds.peak_reserved_ts_ns AS peak_reserved_ts_ns,
       CASE WHEN d.capacity_bytes > 0 AND ds.peak_reserved_bytes IS NOT NULL
            THEN round(1.0 * ds.peak_reserved_bytes / d.capacity_bytes, 4) END
           AS peak_reserved_share,
       CASE WHEN d.capacity_bytes > 0 AND ds.peak_allocated_bytes IS NOT NULL
            THEN round(1.0 * ds.peak_allocated_bytes / d.capacity_bytes, 4) END
           AS peak_allocated_share,
       ds.live_unknown_bytes AS unattributed_at_peak_bytes
  FROM device d
  JOIN device_summary ds ON ds.device_id = d.id
  LEFT JOIN (SELECT m.device_id, max(s.base_time_ns) AS base
               FROM (SELECT DISTINCT device_id, source_id FROM mem_event) m
               JOIN source s ON s.id = m.source_id GROUP BY m.device_id) src
         ON src.device_id = d.id
 ORDER BY d.rank, d.platform, d.idx;

-- The largest allocations live at the peak (allocated at or before it,
-- freed after it or never).
-- name: top_allocations
SELECT a.bytes AS bytes,
       (SELECT n.text FROM op o JOIN name n ON n.id = o.name_id WHERE o.id = a.op_id) AS op,
       ?3 + a.alloc_ts_ns AS alloc_ts_ns,
       ?3 + a.free_ts_ns AS free_ts_ns,
       a.free_ts_ns - a.alloc_ts_ns AS lifetime_ns,
       a.addr AS addr
  FROM allocation a, mem_event pe
 WHERE a.device_id = ?1 AND pe.id = ?2
   AND (a.alloc_ts_ns < pe.ts_ns OR (a.alloc_ts_ns = pe.ts_ns AND a.alloc_event_id <= pe.id))
   AND (a.free_ts_ns IS NULL OR a.free_ts_ns > pe.ts_ns
        OR (a.free_ts_ns = pe.ts_ns AND a.free_event_id > pe.id))
 ORDER BY a.bytes DESC, a.alloc_ts_ns
 LIMIT ?4;

-- name: peak_event
SELECT peak_allocated_event_id FROM device_summary WHERE device_id = ?1;

-- name: steps
SELECT st.step AS step, st.peak_allocated_bytes AS peak_allocated_bytes,
       st.peak_reserved_bytes AS peak_reserved_bytes,
       st.start_allocated_bytes AS start_allocated_bytes,
       st.end_allocated_bytes AS end_allocated_bytes,
       st.end_allocated_bytes - st.start_allocated_bytes AS growth_bytes,
       st.alloc_count AS alloc_count, st.alloc_bytes AS alloc_bytes
  FROM step_summary st WHERE st.device_id = ?1
 ORDER BY st.source_id, st.step;

-- Per operator name, as the TensorBoard profiler's memory view showed it:
-- calls, and allocations made by the op itself (self) and with its
-- children (incl). Increase = allocated minus freed.
-- name: operators
SELECT n.text AS name, coalesce(c.calls, 0) AS calls,
       m.self_alloc_count AS self_alloc_count,
       m.self_alloc_bytes AS self_alloc_bytes,
       m.self_alloc_bytes - m.self_free_bytes AS self_increase_bytes,
       m.incl_alloc_count AS incl_alloc_count,
       m.incl_alloc_bytes AS incl_alloc_bytes,
       m.incl_alloc_bytes - m.incl_free_bytes AS incl_increase_bytes
  FROM op_memory m JOIN name n ON n.id = m.name_id
  LEFT JOIN op_calls c ON c.name_id = m.name_id
 WHERE m.device_id = ?1
 ORDER BY m.self_alloc_bytes DESC, m.incl_alloc_bytes DESC, n.text
 LIMIT ?2;

-- name: out_of_memory
SELECT s.base_time_ns + e.ts_ns AS ts_ns, e.requested_bytes AS requested_bytes,
       e.total_allocated AS total_allocated_bytes,
       e.total_reserved AS total_reserved_bytes
  FROM oom_event e JOIN source s ON s.id = e.source_id
 WHERE e.device_id = ?1 ORDER BY e.ts_ns;

-- name: findings
SELECT f.kind AS kind, f.severity AS severity, f.title AS title,
       f.detail AS detail, d.label AS device
  FROM finding f LEFT JOIN device d ON d.id = f.device_id ORDER BY f.id;

-- The chart's series, in time order.
-- name: timeline
SELECT ts_ns, total_allocated, total_reserved FROM mem_event
 WHERE device_id = ?1 ORDER BY ts_ns, id;
