-- Queries the renderers run. Column aliases are the JSON keys of the
-- results document (docs/json.md), so the SQL is the one place a key is
-- named. Integer columns become exact JSON integers; *_ts_ns are
-- nanoseconds since the Unix epoch: the source's clock plus its
-- clock_offset_ns (import.sql: set_source_clock). An unplaced source has
-- no offset: its times stay relative, and its "clock" says "unplaced".
-- A device's figures come from its chosen sources only (device_axis;
-- analyze.sql: choose_sources).

-- name: analysis_complete
SELECT complete FROM analysis_state;

-- name: sources
SELECT s.id AS id, s.path AS path, s.format AS format,
       s.compression AS compression, s.events AS events,
       s.bytes AS bytes, s.raw_bytes AS raw_bytes,
       s.truncated AS truncated, s.truncated_at AS truncated_at_byte,
       coalesce(s.clock_offset_ns, 0) + s.start_ns AS start_ts_ns,
       coalesce(s.clock_offset_ns, 0) + s.end_ns AS end_ts_ns,
       s.clock_rule AS clock, s.clock_offset_ns AS clock_offset_ns,
       s.rank AS rank, s.world_size AS world_size,
       s.content_hash AS content_hash
  FROM source s ORDER BY s.id;

-- Inputs the run did not use: skipped (in a folder, not a format read)
-- or failed (the error).
-- name: unused_inputs
SELECT path AS path, outcome AS outcome, what AS what, message AS message
  FROM input_issue ORDER BY id;

-- name: source_tallies
SELECT kind, count FROM source_tally WHERE source_id = :source ORDER BY kind;

-- name: source_records
SELECT kind, count FROM source_events WHERE source_id = :source ORDER BY count DESC, kind;

-- base_time_ns: the clock offset of the source the device's times are on
-- (device_summary.source_id, that of its peak). Capacity: the trace's, else
-- the most nvidia-smi reported. Headroom: capacity minus peak reserved;
-- near_capacity names the peak (reserved, or allocated when reserved is
-- unknown) that reached 90 % of the capacity, near_capacity_share its share.
-- history_entries: a snapshot without time_us numbers its entries, and
-- the device's times are those numbers (entry 0 first): how many entries
-- its history holds; NULL when its times are times.
-- name: devices
WITH cap AS (
    SELECT device_id, bytes, source FROM device_capacity
), near AS (
    SELECT ds.device_id, c.bytes AS cap,
           coalesce(ds.peak_reserved_bytes, ds.peak_allocated_bytes) AS peak,
           iif(ds.peak_reserved_bytes IS NULL, 'allocated', 'reserved') AS figure
      FROM device_summary ds JOIN cap c ON c.device_id = ds.device_id
     WHERE c.bytes > 0
)
SELECT d.id AS db_id, d.label AS id,
       CASE WHEN trim(d.model) <> '' THEN d.model END AS name, -- "" names nothing
       d.platform AS platform,
       CASE WHEN d.rank >= 0 THEN d.rank END AS rank,
       (SELECT s.path FROM source s WHERE s.id = d.scope) AS source_path,
       c.bytes AS capacity_bytes,
       c.source AS capacity_from,
       ds.events AS memory_events,
       EXISTS (SELECT 1 FROM device_axis a
                 JOIN device_source_summary x ON x.device_id = a.device_id
                                             AND x.source_id = a.source_id
                WHERE a.device_id = d.id AND x.totals_known = 0) AS totals_rebuilt,
       CASE ds.source_choice WHEN 'one' THEN NULL ELSE ds.source_choice END
           AS source_choice,
       src.base AS base_time_ns,
       CASE WHEN src.off IS NULL AND src.format IN ('snapshot', 'snapshot_json') THEN
           (SELECT max(n) + 1
              FROM (SELECT max(o.seq) AS n FROM trace_entry_other o
                     WHERE o.source_id = ds.source_id AND o.device_id = d.id
                    UNION ALL
                    SELECT max(m.seq) FROM mem_event m
                     WHERE m.source_id = ds.source_id AND m.device_id = d.id)) END
           AS history_entries,
       src.base + ds.start_ns AS start_ts_ns,
       src.base + ds.end_ns AS end_ts_ns,
       ds.peak_allocated_bytes AS peak_allocated_bytes,
       src.base + ds.peak_allocated_ts_ns AS peak_allocated_ts_ns,
       CASE WHEN src.off IS NOT NULL THEN
           strftime('%Y-%m-%dT%H:%M:%fZ', (src.off + ds.peak_allocated_ts_ns) / 1000000 / 1000.0, 'unixepoch') END AS peak_allocated_utc,
       ds.peak_allocated_step AS peak_allocated_step,
       (SELECT n.text FROM op o JOIN name n ON n.id = o.name_id
         WHERE o.id = ds.peak_allocated_op_id) AS peak_allocated_op,
       ds.peak_reserved_bytes AS peak_reserved_bytes,
       src.base + ds.peak_reserved_ts_ns AS peak_reserved_ts_ns,
       CASE WHEN src.off IS NOT NULL THEN
           strftime('%Y-%m-%dT%H:%M:%fZ', (src.off + ds.peak_reserved_ts_ns) / 1000000 / 1000.0, 'unixepoch') END AS peak_reserved_utc,
       CASE WHEN c.bytes > 0 AND ds.peak_reserved_bytes IS NOT NULL
            THEN round(1.0 * ds.peak_reserved_bytes / c.bytes, 4) END
           AS peak_reserved_share,
       CASE WHEN c.bytes > 0 AND ds.peak_allocated_bytes IS NOT NULL
            THEN round(1.0 * ds.peak_allocated_bytes / c.bytes, 4) END
           AS peak_allocated_share,
       ds.live_unknown_bytes AS unattributed_at_peak_bytes,
       ds.live_at_peak_count AS live_at_peak_count,
       ds.live_at_peak_bytes AS live_at_peak_bytes,
       ds.cached_at_peak_bytes AS cached_at_peak_bytes,
       CASE WHEN c.bytes > 0 THEN c.bytes - ds.peak_reserved_bytes END AS headroom_bytes,
       CASE WHEN n.peak * 10 >= n.cap * 9 THEN n.figure END AS near_capacity,
       CASE WHEN n.peak * 10 >= n.cap * 9 THEN round(1.0 * n.peak / n.cap, 4) END
           AS near_capacity_share
  FROM device d
  JOIN device_summary ds ON ds.device_id = d.id
  JOIN cap c ON c.device_id = d.id
  LEFT JOIN near n ON n.device_id = d.id
  JOIN (SELECT id, coalesce(clock_offset_ns, 0) AS base, clock_offset_ns AS off, format FROM source) src
    ON src.id = ds.source_id
 ORDER BY d.rank, d.platform, d.idx;

-- The devices an out-of-memory error or a finding names, ascending: a
-- report of many devices shows these in full (src/render/results/many.h).
-- name: flagged_devices
SELECT device_id FROM finding WHERE device_id IS NOT NULL
UNION
SELECT device_id FROM oom_event WHERE device_id IS NOT NULL
 ORDER BY 1;

-- Every source with memory events on the device, with its own figures:
-- the chosen ones make the device's; the others overlap one of them.
-- name: device_sources
SELECT s.id AS source_id, s.path AS path,
       EXISTS (SELECT 1 FROM device_axis a
                WHERE a.device_id = x.device_id AND a.source_id = x.source_id) AS chosen,
       s.clock_rule AS clock,
       x.events AS memory_events,
       coalesce(s.clock_offset_ns, 0) + x.start_ns AS start_ts_ns,
       coalesce(s.clock_offset_ns, 0) + x.end_ns AS end_ts_ns,
       x.totals_known = 0 AS totals_rebuilt,
       x.peak_allocated_bytes AS peak_allocated_bytes,
       coalesce(s.clock_offset_ns, 0) + x.peak_allocated_ts_ns AS peak_allocated_ts_ns,
       x.peak_reserved_bytes AS peak_reserved_bytes,
       coalesce(s.clock_offset_ns, 0) + x.peak_reserved_ts_ns AS peak_reserved_ts_ns
  FROM device_source_summary x JOIN source s ON s.id = x.source_id
 WHERE x.device_id = :device
 ORDER BY s.id;

-- The snapshots joined to this device (schemas/identity.sql), each with
-- the file it was found to be one process with, and why.
-- name: device_joins
SELECT s.path AS path, w.path AS with_path, j.rule AS rule, j.compared AS compared,
       j.matched AS matched, j.other_compared AS other_compared,
       j.other_matched AS other_matched,
       CASE j.rule
           WHEN 'history' THEN printf('%d of the snapshot''s %d allocations in the time '
                                      || 'both files cover are in the trace at the same '
                                      || 'address and size within 1 ms, and %d of the '
                                      || 'trace''s %d are in the snapshot',
                                      j.matched, j.compared, j.other_matched,
                                      j.other_compared)
           ELSE printf('%d of the %d allocations the trace left live at its end are '
                       || 'blocks in use in the snapshot, at the same address and size',
                       j.matched, j.compared) END AS why
  FROM device_join j
  JOIN source s ON s.id = j.source_id
  JOIN source w ON w.id = j.with_source_id
 WHERE j.device_id = :device
 ORDER BY s.id;

-- The allocations live at a device's peak (allocated at or before it,
-- freed after it or never), in the peak's source, found once a device and
-- peak (render/results/peak_live.c) for the four queries below that read
-- them through temp.peak_live, in the order of their ids: each scanned
-- every allocation before. peak_live_of says which are there.
-- name: peak_live_tables
CREATE TEMP TABLE IF NOT EXISTS peak_live (
    device_id       INTEGER NOT NULL,
    peak_event      INTEGER NOT NULL,
    allocation_id   INTEGER NOT NULL,
    PRIMARY KEY (device_id, peak_event, allocation_id)
) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS peak_live_of (
    device_id       INTEGER NOT NULL,
    peak_event      INTEGER NOT NULL,
    PRIMARY KEY (device_id, peak_event)
) WITHOUT ROWID;

-- name: peak_live_reset
DELETE FROM temp.peak_live;
DELETE FROM temp.peak_live_of;

-- name: peak_live_found
SELECT EXISTS (SELECT 1 FROM temp.peak_live_of
                WHERE device_id = :device AND peak_event = :peak_event);

-- name: peak_live_fill
INSERT INTO temp.peak_live (device_id, peak_event, allocation_id)
SELECT :device, :peak_event, a.id
  FROM allocation a, mem_event pe
 WHERE a.device_id = :device AND pe.id = :peak_event AND a.source_id = pe.source_id
   AND (a.alloc_ts_ns < pe.ts_ns OR (a.alloc_ts_ns = pe.ts_ns AND a.alloc_event_id <= pe.id))
   AND (a.free_ts_ns IS NULL OR a.free_ts_ns > pe.ts_ns
        OR (a.free_ts_ns = pe.ts_ns AND a.free_event_id > pe.id));

-- name: peak_live_mark
INSERT INTO temp.peak_live_of (device_id, peak_event) VALUES (:device, :peak_event);

-- The largest allocations live at the peak (allocated at or before it,
-- freed after it or never), in the peak's source: allocations are paired
-- within a source, and what another file left live is not known to be
-- (temp.peak_live).
-- name: top_allocations
SELECT a.bytes AS bytes,
       (SELECT n.text FROM op o JOIN name n ON n.id = o.name_id WHERE o.id = a.op_id) AS op,
       :base_time_ns + a.alloc_ts_ns AS alloc_ts_ns,
       :base_time_ns + a.free_ts_ns AS free_ts_ns,
       a.free_ts_ns - a.alloc_ts_ns AS lifetime_ns,
       a.addr AS addr,
       (SELECT m.stack_id FROM mem_event m WHERE m.id = a.alloc_event_id) AS stack_id,
       (SELECT fn.text || ':' || f.line || ' in ' || nn.text
          FROM frame f JOIN name fn ON fn.id = f.filename_id JOIN name nn ON nn.id = f.function_id
         WHERE f.id = a.frame_id) AS "where",
       coalesce(a.module, (SELECT sm.module FROM mem_event ae
                             JOIN stack_module sm ON sm.stack_id = ae.stack_id
                            WHERE ae.id = a.alloc_event_id)) AS module
  FROM temp.peak_live pl CROSS JOIN allocation a ON a.id = pl.allocation_id
 WHERE pl.device_id = :device AND pl.peak_event = :peak_event
 ORDER BY a.bytes DESC, a.alloc_ts_ns
 LIMIT :limit;

-- What was live at the peak (as top_allocations: in the peak's source),
-- grouped by category (NULL: not categorized, 'unknown'), then module,
-- then the user's frame, each group with its parent groups' totals so the
-- tree is built in one pass: largest category first, largest module in
-- it, largest frame in that. Sums through total() (sizes come from the
-- file); ties by the module's text (capped by the locate pass) and the
-- frame's id, never by a name that may be huge.
-- A snapshot's allocation has no allocation.module: its stack's module
-- path is stack_module's. The blocks in use since before the record
-- (block_before) were live at the peak too, in the category the breakdown
-- counted them in, placed by their stack.
-- name: live_at_peak_by_line
WITH live AS (
    SELECT coalesce(a.category, 'unknown') AS category,
           coalesce(a.module, (SELECT sm.module FROM mem_event ae
                                 JOIN stack_module sm ON sm.stack_id = ae.stack_id
                                WHERE ae.id = a.alloc_event_id)) AS module,
           a.frame_id, a.bytes
      FROM temp.peak_live pl CROSS JOIN allocation a ON a.id = pl.allocation_id
     WHERE pl.device_id = :device AND pl.peak_event = :peak_event
    UNION ALL
    SELECT bb.category, sm.module, st.user_frame_id, b.bytes
      FROM mem_event pe
      JOIN block_before bb ON bb.device_id = :device AND bb.source_id = pe.source_id
      JOIN block b ON b.id = bb.block_id
      LEFT JOIN stack st ON st.id = b.stack_id
      LEFT JOIN stack_module sm ON sm.stack_id = b.stack_id
     WHERE pe.id = :peak_event
), g AS (
    SELECT category, module, frame_id, total(bytes) AS bytes, count(*) AS n
      FROM live GROUP BY category, module, frame_id
), t AS (
    SELECT g.*, total(bytes) OVER (PARTITION BY category) AS cat_bytes,
           total(n) OVER (PARTITION BY category) AS cat_n,
           total(bytes) OVER (PARTITION BY category, module) AS mod_bytes,
           total(n) OVER (PARTITION BY category, module) AS mod_n
      FROM g
)
SELECT t.category, CAST(t.cat_bytes AS INTEGER), CAST(t.cat_n AS INTEGER),
       t.module, CAST(t.mod_bytes AS INTEGER), CAST(t.mod_n AS INTEGER),
       fn.text, f.line, nn.text, CAST(t.bytes AS INTEGER), t.n
  FROM t
  LEFT JOIN frame f ON f.id = t.frame_id
  LEFT JOIN name fn ON fn.id = f.filename_id
  LEFT JOIN name nn ON nn.id = f.function_id
 ORDER BY t.cat_bytes DESC, t.category, t.mod_bytes DESC, t.module IS NULL, t.module,
          t.bytes DESC, t.frame_id IS NULL, t.frame_id;

-- The same, by category and then the innermost CPU operator (op_id), for
-- sources without Python frames: ties by the name's id.
-- name: live_at_peak_by_operator
WITH live AS (
    SELECT coalesce(a.category, 'unknown') AS category,
           (SELECT o.name_id FROM op o WHERE o.id = a.op_id) AS name_id, a.bytes
      FROM temp.peak_live pl CROSS JOIN allocation a ON a.id = pl.allocation_id
     WHERE pl.device_id = :device AND pl.peak_event = :peak_event
    UNION ALL
    SELECT bb.category, NULL, b.bytes
      FROM mem_event pe
      JOIN block_before bb ON bb.device_id = :device AND bb.source_id = pe.source_id
      JOIN block b ON b.id = bb.block_id
     WHERE pe.id = :peak_event
), g AS (
    SELECT category, name_id, total(bytes) AS bytes, count(*) AS n
      FROM live GROUP BY category, name_id
), t AS (
    SELECT g.*, total(bytes) OVER (PARTITION BY category) AS cat_bytes,
           total(n) OVER (PARTITION BY category) AS cat_n
      FROM g
)
SELECT t.category, CAST(t.cat_bytes AS INTEGER), CAST(t.cat_n AS INTEGER),
       n.text, CAST(t.bytes AS INTEGER), t.n
  FROM t LEFT JOIN name n ON n.id = t.name_id
 ORDER BY t.cat_bytes DESC, t.category, t.bytes DESC, t.name_id IS NULL, t.name_id;

-- Of what live_at_peak_by_line and _by_operator count, the blocks in use
-- since before the record (block_before, known from a snapshot's
-- segments, not from an entry of its history): how many and their bytes.
-- name: live_at_peak_before
SELECT count(*), CAST(total(b.bytes) AS INTEGER)
  FROM mem_event pe
  JOIN block_before bb ON bb.device_id = :device AND bb.source_id = pe.source_id
  JOIN block b ON b.id = bb.block_id
 WHERE pe.id = :peak_event;

-- Whether the peak's source records where its allocations were made:
-- Python frames (python_function events, with_stack=True) or allocation
-- stacks (allocator snapshots); and whether any allocation of the device
-- was placed (allocation.frame_id or module), or a block in use since
-- before the record has a frame of the user's code.
-- name: locations_recorded
SELECT EXISTS (SELECT 1 FROM op o WHERE o.cat = 'python_function'
                  AND o.source_id = pe.source_id)
       OR ((SELECT s.format FROM source s WHERE s.id = pe.source_id)
               IN ('snapshot', 'snapshot_json')
           AND EXISTS (SELECT 1 FROM mem_event m WHERE m.source_id = pe.source_id
                          AND m.device_id = :device AND m.stack_id IS NOT NULL)),
       EXISTS (SELECT 1 FROM allocation a WHERE a.device_id = :device
                  AND a.source_id = pe.source_id
                  AND (a.frame_id IS NOT NULL OR a.module IS NOT NULL))
       OR EXISTS (SELECT 1 FROM block_before bb
                    JOIN block b ON b.id = bb.block_id
                    JOIN stack st ON st.id = b.stack_id
                   WHERE bb.device_id = :device AND bb.source_id = pe.source_id
                     AND st.user_frame_id IS NOT NULL)
  FROM mem_event pe WHERE pe.id = :peak_event;

-- What was live at the peak (live_at_peak_by_line's allocations and
-- blocks) by module path, kind (0: the profiler's with_modules path,
-- "A_0.B_1"; 1: a snapshot stack's forward frames, "a.py:3 › b.py:9";
-- NULL: in no module) and category, for the by-module view
-- (peak_by_module.c); paths in text order.
-- name: peak_by_module
WITH live AS (
    SELECT coalesce(a.category, 'unknown') AS category, a.module AS module,
           a.alloc_event_id AS event, a.bytes
      FROM temp.peak_live pl CROSS JOIN allocation a ON a.id = pl.allocation_id
     WHERE pl.device_id = :device AND pl.peak_event = :peak_event
), placed AS (
    SELECT category, 0 AS kind, module, bytes FROM live WHERE module IS NOT NULL
    UNION ALL
    SELECT l.category, 1, (SELECT sm.module FROM mem_event ae
                             JOIN stack_module sm ON sm.stack_id = ae.stack_id
                            WHERE ae.id = l.event), l.bytes
      FROM live l WHERE l.module IS NULL
    UNION ALL
    SELECT bb.category, 1, sm.module, b.bytes
      FROM mem_event pe
      JOIN block_before bb ON bb.device_id = :device AND bb.source_id = pe.source_id
      JOIN block b ON b.id = bb.block_id
      LEFT JOIN stack_module sm ON sm.stack_id = b.stack_id
     WHERE pe.id = :peak_event
)
SELECT module, CASE WHEN module IS NULL THEN NULL ELSE kind END, category,
       CAST(total(bytes) AS INTEGER), count(*)
  FROM placed
 GROUP BY module IS NULL, module, 2, category
 ORDER BY module IS NULL, module, 2, category;

-- name: peak_event
SELECT peak_allocated_event_id FROM device_summary WHERE device_id = :device;

-- name: steps
SELECT st.step AS step, st.peak_allocated_bytes AS peak_allocated_bytes,
       st.peak_reserved_bytes AS peak_reserved_bytes,
       st.start_allocated_bytes AS start_allocated_bytes,
       st.end_allocated_bytes AS end_allocated_bytes,
       st.end_allocated_bytes - st.start_allocated_bytes AS growth_bytes,
       st.alloc_count AS alloc_count, st.alloc_bytes AS alloc_bytes
  FROM step_summary st
  JOIN device_axis a ON a.device_id = st.device_id AND a.source_id = st.source_id
 WHERE st.device_id = :device
 ORDER BY a.position, st.step;

-- The allocated peak of each phase of each step (phases pass): forward,
-- backward, optimizer (with zero_grad), other; step NULL: outside steps.
-- name: phase_peaks
SELECT p.step AS step, p.phase AS phase, p.peak_allocated_bytes AS peak_allocated_bytes
  FROM phase_peak p
  JOIN device_axis a ON a.device_id = p.device_id AND a.source_id = p.source_id
 WHERE p.device_id = :device
 ORDER BY a.position, p.step IS NULL, p.step,
          CASE p.phase WHEN 'forward' THEN 0 WHEN 'backward' THEN 1
                       WHEN 'optimizer' THEN 2 ELSE 3 END;

-- Per operator name, as the TensorBoard profiler's memory view showed it:
-- calls, and allocations made by the op itself (self) and with its
-- children (incl). Live at the peak: the op's own allocations live at the
-- device's peak, in the peak's source (the rule of top_allocations); NULL
-- when that source's events carry no address (device_summary). Allocated
-- minus freed is not shown: memory one op allocates and another frees
-- would read as a leak.
-- Summed over the device's chosen sources (apart in time); one source's
-- figures are taken as they are, several through total(), which cannot
-- fail on overflow (exact below 2^53). The top rows are chosen before
-- their names are read whole: a sort carries every column of its rows,
-- and a name can be 100 MiB (ties are broken by the name's first 256
-- bytes, then its id).
-- name: operators
WITH m AS (
    SELECT m.* FROM op_memory m
      JOIN device_axis a ON a.device_id = m.device_id AND a.source_id = m.source_id
     WHERE m.device_id = :device
), calls AS (
    SELECT c.name_id, CAST(total(c.calls) AS INTEGER) AS calls FROM op_calls c
      JOIN device_axis a ON a.source_id = c.source_id
     WHERE a.device_id = :device GROUP BY c.name_id
), per_name AS (
    SELECT name_id,
           iif(count(*) = 1, max(self_alloc_count), CAST(total(self_alloc_count) AS INTEGER)) AS sac,
           iif(count(*) = 1, max(self_alloc_bytes), CAST(total(self_alloc_bytes) AS INTEGER)) AS sab,
           iif(count(*) = 1, max(incl_alloc_count), CAST(total(incl_alloc_count) AS INTEGER)) AS iac,
           iif(count(*) = 1, max(incl_alloc_bytes), CAST(total(incl_alloc_bytes) AS INTEGER)) AS iab
      FROM m GROUP BY name_id
), top AS (
    SELECT p.*, substr(n.text, 1, 256) AS name_key FROM per_name p JOIN name n ON n.id = p.name_id
     ORDER BY p.sab DESC, p.iab DESC, name_key, p.name_id
     LIMIT :limit
), live AS (
    SELECT o.name_id, count(*) AS n, CAST(total(a.bytes) AS INTEGER) AS bytes
      FROM device_summary ds
      JOIN mem_event pe ON pe.id = ds.peak_allocated_event_id
      JOIN allocation a ON a.device_id = ds.device_id AND a.source_id = ds.source_id
      JOIN op o ON o.id = a.op_id
     WHERE ds.device_id = :device AND o.name_id IN (SELECT name_id FROM top)
       AND (a.alloc_ts_ns < pe.ts_ns OR (a.alloc_ts_ns = pe.ts_ns AND a.alloc_event_id <= pe.id))
       AND (a.free_ts_ns IS NULL OR a.free_ts_ns > pe.ts_ns
            OR (a.free_ts_ns = pe.ts_ns AND a.free_event_id > pe.id))
     GROUP BY o.name_id
)
SELECT n.text AS name, coalesce(c.calls, 0) AS calls,
       p.sac AS self_alloc_count,
       p.sab AS self_alloc_bytes,
       p.iac AS incl_alloc_count,
       p.iab AS incl_alloc_bytes,
       CASE WHEN ds.live_at_peak_count IS NOT NULL THEN coalesce(l.n, 0) END
           AS live_at_peak_count,
       CASE WHEN ds.live_at_peak_count IS NOT NULL THEN coalesce(l.bytes, 0) END
           AS live_at_peak_bytes
  FROM top p JOIN name n ON n.id = p.name_id
  LEFT JOIN calls c ON c.name_id = p.name_id
  LEFT JOIN live l ON l.name_id = p.name_id
  LEFT JOIN device_summary ds ON ds.device_id = :device
 ORDER BY p.sab DESC, p.iab DESC, p.name_key, p.name_id;

-- Failed allocations, but none of a source set aside on the device (it
-- overlaps a chosen one, whose record of the same moments counts), in
-- time order; more than :limit are thinned to every k-th, evenly over the
-- run (the chart's markers and the JSON of a device that failed 20,000
-- times would otherwise grow with them); n: how many there are.
-- name: out_of_memory
WITH o AS (
SELECT coalesce(s.clock_offset_ns, 0) + e.ts_ns AS ts_ns,
       strftime('%Y-%m-%dT%H:%M:%fZ', (s.clock_offset_ns + e.ts_ns) / 1000000 / 1000.0, 'unixepoch') AS utc,
       e.requested_bytes AS requested_bytes,
       e.total_allocated AS total_allocated_bytes,
       e.total_reserved AS total_reserved_bytes,
       e.device_free_bytes AS device_free_bytes,
       e.largest_free_block_bytes AS largest_free_block_bytes,
       f.largest_free_block_bytes AS largest_free_block_in_pool_bytes,
       row_number() OVER (ORDER BY coalesce(s.clock_offset_ns, 0) + e.ts_ns, e.id) - 1 AS k,
       count(*) OVER () AS n
  FROM oom_event e JOIN source s ON s.id = e.source_id
  LEFT JOIN oom_fragmentation f ON f.oom_id = e.id AND f.is_request_pool = 1
 WHERE e.device_id = :device
   AND NOT EXISTS (SELECT 1 FROM oom_twin t JOIN oom_event w ON w.id = t.first_id
                    WHERE t.oom_id = e.id AND w.device_id = e.device_id)
   AND (e.source_id IN (SELECT a.source_id FROM device_axis a WHERE a.device_id = :device)
        OR e.source_id NOT IN (SELECT x.source_id FROM device_source_summary x
                                WHERE x.device_id = :device)))
SELECT ts_ns, utc, requested_bytes, total_allocated_bytes, total_reserved_bytes, device_free_bytes,
       largest_free_block_bytes, largest_free_block_in_pool_bytes, n
  FROM o WHERE k % ((n + :limit - 1) / :limit) = 0
 ORDER BY k;

-- The diagnosis, by severity (critical, warning, info), the OOMs' findings
-- before any other of their severity, then time (undated last: the first
-- dated OOM is the verdict's primary cause, an undated one cannot be
-- placed before it): each OOM's finding is its primary cause. Only the
-- ids are sorted (a log of 20,000 errors has 20,000 findings, of which
-- the report lists a few: sorting whole rows held 33 MiB); results.c
-- reads those it lists by finding_row.
-- name: findings
SELECT f.id AS finding_id, f.oom_id AS oom_id
  FROM finding f
 ORDER BY CASE f.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END,
          f.oom_id IS NULL, f.ts_ns IS NULL, f.ts_ns, f.id;

-- A finding (secondary: a JSON array, evidence: the data JSON object,
-- both parsed by results.c).
-- name: finding_row
SELECT f.kind AS kind, f.secondary AS secondary, f.severity AS severity,
       f.confidence AS confidence, d.label AS device, f.device_id AS device_db_id,
       nullif(f.rank, -1) AS rank, f.ts_ns AS ts_ns,
       f.data AS evidence, f.title AS title, f.detail AS detail
  FROM finding f LEFT JOIN device d ON d.id = f.device_id
 WHERE f.id = :finding;

-- A finding's advice (the advise pass, schemas/remedies.sql), best
-- saving first; figures: a JSON object, parsed by results.c.
-- name: finding_advice
SELECT a.remedy AS id, a.title AS title, a.saving_bytes AS saving_bytes,
       a.would_fit AS would_fit, a.setting AS setting, a.evidence AS evidence,
       a.figures AS figures, a.source AS source
  FROM advice a WHERE a.finding_id = :finding ORDER BY a.rank;

-- All the advice, by saving across findings (ties in the findings'
-- order), savings on inferred figures last (as rank_advice): the keys of
-- each (results.c leaves out the advice of the OOM findings it folds into
-- their group's first, and reads the others by advice_row), sorted
-- alone, as findings.
-- name: advice
SELECT a.finding_id AS finding_id, f.oom_id AS oom_id, a.remedy AS remedy
  FROM advice a JOIN finding f ON f.id = a.finding_id
 ORDER BY json_extract(a.figures, '$.inferred') IS 1, a.saving_bytes DESC,
          CASE f.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END,
          f.oom_id IS NULL, f.ts_ns, f.id, a.rank;

-- An advice with the finding it answers.
-- name: advice_row
SELECT a.remedy AS id, a.title AS title, a.saving_bytes AS saving_bytes,
       a.would_fit AS would_fit, a.setting AS setting, a.evidence AS evidence,
       a.figures AS figures, a.source AS source, f.kind AS kind, d.label AS device,
       f.title AS finding
  FROM advice a JOIN finding f ON f.id = a.finding_id
  LEFT JOIN device d ON d.id = f.device_id
 WHERE a.finding_id = :finding AND a.remedy = :remedy;

-- The chart's series, in time order: the chosen sources' events, on the
-- clock of the device's times (that of device_summary.source_id), which
-- the chart offsets by the device's base_time_ns.
-- name: timeline
SELECT m.ts_ns + (coalesce(s.clock_offset_ns, 0) - coalesce(ps.clock_offset_ns, 0)) AS ts_ns,
       m.total_allocated, m.total_reserved
  FROM device_axis a
  JOIN source s ON s.id = a.source_id
  JOIN device_summary ds ON ds.device_id = a.device_id
  JOIN source ps ON ps.id = ds.source_id
  JOIN mem_event m ON m.device_id = a.device_id AND m.source_id = a.source_id
 WHERE a.device_id = :device
 ORDER BY a.position, m.ts_ns, m.id;

-- The same in table order (render/out/chart_timeline.c), when every event
-- is the device's and its one chosen source's: the source's clock against
-- the device's (the :clock of the two blocks below), as timeline adds it;
-- no row otherwise. The first and the last (device, source) of the index
-- tell, as in the timeline pass (timeline_first_last_group).
-- name: timeline_one_source
SELECT coalesce(s.clock_offset_ns, 0) - coalesce(ps.clock_offset_ns, 0)
  FROM device_axis a
  JOIN source s ON s.id = a.source_id
  JOIN device_summary ds ON ds.device_id = a.device_id
  JOIN source ps ON ps.id = ds.source_id,
       (SELECT device_id, source_id FROM mem_event INDEXED BY mem_event_device_source_time
         ORDER BY device_id, source_id LIMIT 1) f,
       (SELECT device_id, source_id FROM mem_event INDEXED BY mem_event_device_source_time
         ORDER BY device_id DESC, source_id DESC LIMIT 1) l
 WHERE a.device_id = :device AND f.device_id = :device AND l.device_id = :device
   AND f.source_id = a.source_id AND l.source_id = a.source_id
   AND (SELECT count(*) FROM device_axis WHERE device_id = :device) = 1;

-- The table's last :rows events, in table order: those out of time order
-- are guessed among them.
-- name: timeline_last_events
SELECT id, ts_ns, ts_ns + :clock, total_allocated, total_reserved
  FROM (SELECT id, ts_ns, total_allocated, total_reserved FROM mem_event
         ORDER BY id DESC LIMIT :rows)
 ORDER BY id;

-- Every event in table order (no seek into the table a row), each handed
-- to vr_chart_event() as SQLite reads it: no row comes back but the one
-- it finds out of order, which ends the read.
-- name: timeline_in_table_order
SELECT 1 FROM mem_event NOT INDEXED
 WHERE vr_chart_event(id, ts_ns, ts_ns + :clock, total_allocated, total_reserved)
 ORDER BY id LIMIT 1;

-- The Ranks section: the devices of processes that said their rank, when
-- there are at least :min_ranks ranks (one rank is a one-process report).
-- A row per device (a rank may drive several), in the devices' order.
-- peak_allocated_ts_ns is the devices block's, on the common clock: the
-- same expression on the same row (the offset of device_summary.source_id,
-- 0 when unplaced; NULL when that source is not there, where the devices
-- block has no row). Keep the two the same: a report holds neither list
-- (a row per device or rank), so the time is not copied from one to the
-- other.
-- name: rank_devices
SELECT d.rank AS rank, d.label AS device, d.id AS device_db_id,
       c.bytes AS capacity_bytes,
       ds.peak_allocated_bytes AS peak_allocated_bytes,
       (SELECT coalesce(s.clock_offset_ns, 0) FROM source s WHERE s.id = ds.source_id)
           + ds.peak_allocated_ts_ns AS peak_allocated_ts_ns,
       ds.peak_allocated_step AS peak_allocated_step,
       (SELECT n.text FROM op o JOIN name n ON n.id = o.name_id
         WHERE o.id = ds.peak_allocated_op_id) AS peak_allocated_op,
       CASE WHEN c.bytes > 0 AND ds.peak_allocated_bytes IS NOT NULL
            THEN round(1.0 * ds.peak_allocated_bytes / c.bytes, 4) END
           AS peak_allocated_share,
       ds.peak_reserved_bytes AS peak_reserved_bytes,
       CASE WHEN c.bytes > 0 AND ds.peak_reserved_bytes IS NOT NULL
            THEN round(1.0 * ds.peak_reserved_bytes / c.bytes, 4) END
           AS peak_reserved_share
  FROM device d JOIN device_summary ds ON ds.device_id = d.id
  JOIN device_capacity c ON c.device_id = d.id
 WHERE d.rank >= 0
   AND (SELECT count(DISTINCT d2.rank) FROM device d2
          JOIN device_summary s2 ON s2.device_id = d2.id WHERE d2.rank >= 0) >= :min_ranks
 ORDER BY d.rank, d.platform, d.idx;

-- Each rank's peak (its highest device's), in rank order: the HTML's
-- chart of the ranks side by side (html_charts.c), every rank of the job.
-- name: rank_peaks
SELECT d.rank AS rank, max(ds.peak_allocated_bytes) AS peak
  FROM device d JOIN device_summary ds ON ds.device_id = d.id
 WHERE d.rank >= 0 AND ds.peak_allocated_bytes IS NOT NULL
 GROUP BY d.rank ORDER BY d.rank;

-- The ranks compared: a rank's peak is that of its highest device. The
-- median of an even count is the mean of the two middle peaks, rounded
-- down to a whole byte (halves first: no overflow); imbalance is the
-- largest peak over the median. Which rank peaked first: named here,
-- filled by results (ranks.c) from rank_devices' times.
-- name: ranks_summary
WITH peaks AS (
    SELECT d.rank AS rank, max(ds.peak_allocated_bytes) AS peak
      FROM device d JOIN device_summary ds ON ds.device_id = d.id
     WHERE d.rank >= 0 GROUP BY d.rank
), ordered AS (
    SELECT rank, peak, row_number() OVER (ORDER BY peak, rank) AS k,
           count(*) OVER () AS n
      FROM peaks WHERE peak IS NOT NULL
), median AS (
    SELECT CASE WHEN max(n) % 2 = 1 THEN max(peak)
                ELSE sum(peak / 2) + sum(peak % 2) / 2 END AS bytes
      FROM ordered WHERE k IN ((n + 1) / 2, n / 2 + 1)
), largest AS (
    SELECT rank, peak FROM ordered ORDER BY peak DESC, rank LIMIT 1
), smallest AS (
    SELECT rank, peak FROM ordered ORDER BY peak, rank LIMIT 1
)
SELECT (SELECT count(*) FROM peaks) AS count,
       m.bytes AS median_peak_allocated_bytes,
       l.peak AS largest_peak_allocated_bytes,
       l.rank AS largest_rank,
       CASE WHEN m.bytes > 0 THEN round(1.0 * l.peak / m.bytes, 4) END AS imbalance,
       NULL AS first_rank, NULL AS first_peak_ts_ns,
       NULL AS next_rank, NULL AS first_lead_ns,
       (SELECT peak FROM smallest) AS smallest_peak_allocated_bytes,
       (SELECT rank FROM smallest) AS smallest_rank,
       -- ranks 20 % or more off the median (rankdist_svg.h's rule)
       (SELECT count(*) FROM ordered o
         WHERE m.bytes > 0 AND abs(o.peak - m.bytes) * 1000.0 >= m.bytes * 200.0)
           AS off_median_ranks
  FROM median m LEFT JOIN largest l
 WHERE (SELECT count(*) FROM peaks) >= :min_ranks;

-- The state an allocator snapshot of the device ends in (the latest
-- snapshot source when there are several).
-- name: device_snapshot
SELECT final_allocated_bytes AS final_allocated_bytes,
       final_reserved_bytes AS final_reserved_bytes,
       segment_count AS segment_count, block_count AS block_count,
       largest_free_block_bytes AS largest_free_block_bytes,
       free_in_segments_bytes AS free_in_segments_bytes,
       internal_waste_bytes AS internal_waste_bytes,
       inactive_split_bytes AS inactive_split_bytes,
       pending_free_bytes AS pending_free_bytes,
       expandable_segments AS expandable_segments,
       pre_existing_bytes AS pre_existing_bytes
  FROM snapshot_summary WHERE device_id = :device
 ORDER BY source_id DESC LIMIT 1;

-- Who held the memory at the peak, by the user's line (the first frame
-- outside torch); NULL frame: stacks that are torch's only.
-- name: top_sites
SELECT CASE WHEN f.id IS NULL THEN NULL
            ELSE fn.text || ':' || f.line || ' in ' || nn.text END AS frame,
       s.bytes AS bytes, s.count AS count,
       s.example_stack_id AS stack_id,
       (SELECT k.depth FROM stack k WHERE k.id = s.example_stack_id) AS stack_depth
  FROM alloc_site s
  LEFT JOIN frame f ON f.id = s.frame_id
  LEFT JOIN name fn ON fn.id = f.filename_id
  LEFT JOIN name nn ON nn.id = f.function_id
 WHERE s.device_id = :device
 ORDER BY s.bytes DESC, frame
 LIMIT :limit;

-- A stack, innermost frame first, as "file:line in function".
-- name: stack_frames
SELECT fn.text || ':' || f.line || ' in ' || nn.text
  FROM stack_frame sf JOIN frame f ON f.id = sf.frame_id
  JOIN name fn ON fn.id = f.filename_id JOIN name nn ON nn.id = f.function_id
 WHERE sf.stack_id = :stack ORDER BY sf.position LIMIT :limit;

-- What nvidia-smi saw of a device: the GPUs the analysis matched to it
-- (match_gpus, and by which rule), their readings and the most used.
-- name: device_smi
SELECT count(s.id) AS smi_samples, max(s.memory_used_bytes) AS smi_max_used_bytes,
       max(s.utilization_gpu_pct) AS smi_max_util_pct,
       (SELECT group_concat(DISTINCT g2.match_rule) FROM gpu g2 WHERE g2.device_id = :device)
           AS smi_match
  FROM gpu g JOIN gpu_sample s ON s.gpu_id = g.id
 WHERE g.device_id = :device;

-- The processes nvidia-smi listed on the device, each once, at the most
-- memory it was seen using; without a pid (gpustat's "python(11696M)"),
-- each name is a process of its own.
-- name: device_smi_processes
SELECT p.pid AS pid, max(p.process_name) AS name, max(p.used_bytes) AS used_bytes
  FROM process_sample p JOIN gpu g ON g.id = p.gpu_id
 WHERE g.device_id = :device
 GROUP BY p.pid, CASE WHEN p.pid IS NULL THEN p.process_name END
 ORDER BY max(p.used_bytes) DESC, p.pid
 LIMIT 32;

-- nvidia-smi's readings of the GPUs matched to a device, on the device's
-- clock (the clock of the source its figures come from), within
-- [:lo, :hi], and the reading in force at :lo; none when either clock is
-- unplaced. In time order.
-- name: smi_timeline
WITH dev AS (
    SELECT s.clock_offset_ns AS base FROM device_summary ds JOIN source s ON s.id = ds.source_id
     WHERE ds.device_id = :device AND s.clock_offset_ns IS NOT NULL
), readings AS (
    SELECT gs.ts_ns + src.clock_offset_ns - dev.base AS ts_ns, gs.memory_used_bytes AS used,
           gs.id AS id
      FROM dev, gpu g
      JOIN gpu_sample gs ON gs.gpu_id = g.id
      JOIN source src ON src.id = gs.source_id
     WHERE g.device_id = :device AND gs.ts_ns IS NOT NULL AND src.clock_offset_ns IS NOT NULL
       AND gs.memory_used_bytes IS NOT NULL
)
SELECT ts_ns, used FROM (
    SELECT * FROM (SELECT ts_ns, used, id FROM readings WHERE ts_ns < :lo
                    ORDER BY ts_ns DESC, id DESC LIMIT 1)
    UNION ALL
    SELECT ts_ns, used, id FROM readings WHERE ts_ns BETWEEN :lo AND :hi
) ORDER BY ts_ns, id;
-- A top site's example stack as the report shows it: its Python frames,
-- innermost first; the C++ frames (the allocator's, the interpreter's)
-- say little about who asked and are counted instead (skipped). A stack
-- without Python frames is shown whole.
-- name: site_stack_frames
WITH frames AS (
    SELECT sf.position, fn.text || ':' || f.line || ' in ' || nn.text AS text,
           fn.text LIKE '%.py' AS python
      FROM stack_frame sf JOIN frame f ON f.id = sf.frame_id
      JOIN name fn ON fn.id = f.filename_id JOIN name nn ON nn.id = f.function_id
     WHERE sf.stack_id = :stack
), shown AS (
    SELECT * FROM frames
     WHERE python OR NOT EXISTS (SELECT 1 FROM frames WHERE python)
)
SELECT text, (SELECT count(*) FROM frames) - (SELECT count(*) FROM shown) AS skipped
  FROM shown ORDER BY position LIMIT :limit;

-- The segment map (segmap_svg.h): the segments of the device's latest
-- snapshot, largest first, each followed by its blocks in address order
-- (a segment without blocks: one row with NULL block columns).
-- name: segment_map
SELECT g.total_bytes, g.segment_type, g.pool, g.is_expandable,
       b.bytes, b.state, g.id
  FROM segment g LEFT JOIN block b ON b.segment_id = g.id
 WHERE g.device_id = :device
   AND g.source_id = (SELECT source_id FROM snapshot_summary
                       WHERE device_id = :device ORDER BY source_id DESC LIMIT 1)
 ORDER BY g.total_bytes DESC, g.address, g.id, b.address, b.id;
-- The stage the device's peak fell in: of the user's annotations an
-- allocator snapshot recorded (external_annotations, stored as
-- user_annotation ops of the snapshot's source), the innermost (latest
-- starting) that spans the peak's event.
-- name: peak_stage
SELECT n.text AS stage
  FROM device_summary ds
  JOIN mem_event e ON e.id = ds.peak_allocated_event_id
  JOIN source s ON s.id = e.source_id AND s.format IN ('snapshot', 'snapshot_json')
  JOIN op o ON o.source_id = e.source_id AND o.cat = 'user_annotation'
   AND o.ts_ns <= e.ts_ns AND e.ts_ns <= o.ts_ns + o.dur_ns
  JOIN name n ON n.id = o.name_id
 WHERE ds.device_id = :device
 ORDER BY o.ts_ns DESC, o.dur_ns, o.id
 LIMIT 1;
-- The caching allocator's own figures (memory_stats() JSON or
-- memory_summary() text), one row per source and dump, under stable
-- names (docs/json.md, allocator_stats[]); a figure the dump lacks (a
-- partial copy) is NULL.
-- The capacity --capacity gave the analysis (migration 27), if any.
-- name: capacity_given
SELECT bytes, said FROM capacity_given;

-- name: allocator_stats
SELECT s.path AS source, s.format AS format, a.dump AS dump, a.device_idx AS device,
       count(*) AS figures,
       max(CASE a.key WHEN 'allocated_bytes.all.current' THEN a.value END) AS allocated_bytes_current,
       max(CASE a.key WHEN 'allocated_bytes.all.peak' THEN a.value END) AS allocated_bytes_peak,
       max(CASE a.key WHEN 'reserved_bytes.all.current' THEN a.value END) AS reserved_bytes_current,
       max(CASE a.key WHEN 'reserved_bytes.all.peak' THEN a.value END) AS reserved_bytes_peak,
       max(CASE a.key WHEN 'active_bytes.all.current' THEN a.value END) AS active_bytes_current,
       max(CASE a.key WHEN 'active_bytes.all.peak' THEN a.value END) AS active_bytes_peak,
       max(CASE a.key WHEN 'requested_bytes.all.peak' THEN a.value END) AS requested_bytes_peak,
       max(CASE a.key WHEN 'inactive_split_bytes.all.current' THEN a.value END) AS inactive_split_bytes_current,
       max(CASE a.key WHEN 'inactive_split_bytes.all.peak' THEN a.value END) AS inactive_split_bytes_peak,
       max(CASE a.key WHEN 'num_alloc_retries' THEN a.value END) AS num_alloc_retries,
       max(CASE a.key WHEN 'num_ooms' THEN a.value END) AS num_ooms,
       max(CASE a.key WHEN 'oversize_allocations.current' THEN a.value END) AS oversize_allocations_current,
       max(CASE a.key WHEN 'oversize_allocations.peak' THEN a.value END) AS oversize_allocations_peak,
       max(CASE a.key WHEN 'oversize_segments.peak' THEN a.value END) AS oversize_segments_peak,
       max(CASE a.key WHEN 'segment.all.peak' THEN a.value END) AS segment_peak
  FROM allocator_stat a JOIN source s ON s.id = a.source_id
 GROUP BY a.source_id, a.dump
 ORDER BY a.source_id, a.dump;
-- What nvidia-smi saw (docs/formats/): each GPU of a monitoring source, its
-- readings counted and the most memory in use. memory_total_bytes: the
-- GPU's, else the largest total a reading gave. gpu_id is the database's
-- (results.c reads the processes by it and drops it). not_matched_*: the
-- device its identity named and why its readings cannot be that device's
-- (gpu_unmatched, match_gpus).
-- name: gpus
SELECT g.id AS gpu_id, g.source_id AS source,
       (SELECT s.path FROM source s WHERE s.id = g.source_id) AS source_path,
       g.idx AS idx, g.uuid AS uuid,
       g.pci_bus_id AS pci_bus_id, g.name AS name, g.mig AS mig,
       coalesce(g.memory_total_bytes,
                (SELECT max(s.memory_total_bytes) FROM gpu_sample s WHERE s.gpu_id = g.id))
           AS memory_total_bytes,
       (SELECT count(*) FROM gpu_sample s WHERE s.gpu_id = g.id) AS smi_samples,
       (SELECT max(s.memory_used_bytes) FROM gpu_sample s WHERE s.gpu_id = g.id)
           AS smi_max_used_bytes,
       (SELECT max(s.utilization_gpu_pct) FROM gpu_sample s WHERE s.gpu_id = g.id)
           AS smi_max_util_pct,
       g.device_id AS device_db_id, g.match_rule AS match_rule,
       (SELECT d.label || CASE WHEN d.rank >= 0 THEN ', rank ' || d.rank ELSE '' END
          FROM device d WHERE d.id = g.device_id) AS device,
       (SELECT d.label || CASE WHEN d.rank >= 0 THEN ', rank ' || d.rank ELSE '' END
          FROM gpu_unmatched u JOIN device d ON d.id = u.device_id WHERE u.gpu_id = g.id)
           AS not_matched_device,
       (SELECT u.reason FROM gpu_unmatched u WHERE u.gpu_id = g.id) AS not_matched_reason
  FROM gpu g
 ORDER BY g.source_id, g.idx IS NULL, g.idx, g.mig IS NOT NULL, g.mig, g.id;

-- The processes seen on a GPU, one row per pid: the longest name any
-- sighting gave (the table cuts names, --query-compute-apps does not) and
-- the most memory any gave (null when none said: Windows' WDDM). A
-- process without a pid (gpustat's "matrixMul(112M) python(11696M)") is
-- one per name, not one for all of them.
-- name: gpu_processes
SELECT p.pid AS pid,
       CASE WHEN p.pid IS NULL THEN p.process_name
            ELSE (SELECT q.process_name FROM process_sample q
                   WHERE q.gpu_id = p.gpu_id AND q.pid = p.pid
                   ORDER BY length(q.process_name) DESC, q.id LIMIT 1) END AS name,
       max(p.used_bytes) AS used_bytes
  FROM process_sample p
 WHERE p.gpu_id = :gpu
 GROUP BY p.pid, CASE WHEN p.pid IS NULL THEN p.process_name END
 ORDER BY max(p.used_bytes) IS NULL, max(p.used_bytes) DESC, p.pid;

-- The first :limit out-of-memory errors from every source (traces,
-- snapshots, job logs), in time order where known, then by source and
-- line (oom_shapes groups all of them). A figure the source lacks is
-- NULL. How the device's memory was
-- spent when it failed: allocated, cached but free (reserved minus
-- allocated), other processes (the "Process N" the message lists), and
-- the rest of what was in use (capacity minus free, minus this process's
-- use: "this process has", else reserved, minus the other processes):
-- NULL when it comes out negative, as it does when a listed process is
-- this one seen from outside its container's pid namespace.
-- name: oom_events
WITH proc AS (
    SELECT oom_id,
           max(CASE WHEN pid IS NULL THEN used_bytes END) AS self_used,
           sum(CASE WHEN pid IS NOT NULL THEN used_bytes END) AS others
      FROM oom_process GROUP BY oom_id
), e AS (
    SELECT e.*, s.path AS source_path, s.id AS sid, s.clock_offset_ns AS clock_offset_ns,
           coalesce(s.clock_offset_ns, 0) + e.ts_ns AS at_ns,
           p.self_used, p.others,
           e.capacity_bytes - e.device_free_bytes
               - coalesce(p.self_used, e.total_reserved) - coalesce(p.others, 0) AS rest,
           coalesce(e.rank, s.rank) AS the_rank
      FROM oom_event e JOIN source s ON s.id = e.source_id
      LEFT JOIN proc p ON p.oom_id = e.id
     WHERE e.id NOT IN (SELECT oom_id FROM oom_twin)
)
SELECT e.id AS oom_id, e.source_path AS source, e.line AS line, d.label AS device,
       coalesce(e.the_rank, CASE WHEN d.rank >= 0 THEN d.rank END) AS rank,
       e.at_ns AS ts_ns,
       strftime('%Y-%m-%dT%H:%M:%fZ', (e.clock_offset_ns + e.ts_ns) / 1000000 / 1000.0, 'unixepoch') AS utc,
       e.wording AS wording,
       e.requested_bytes AS requested_bytes, e.capacity_bytes AS capacity_bytes,
       e.device_free_bytes AS free_bytes, e.total_allocated AS allocated_bytes,
       e.total_reserved AS reserved_bytes,
       e.reserved_unallocated_bytes AS reserved_unallocated_bytes,
       e.allowed_bytes AS allowed_bytes, e.private_pools_bytes AS private_pools_bytes,
       e.largest_free_block_bytes AS largest_free_block_bytes,
       e.total_reserved - e.total_allocated AS cached_free_bytes,
       e.self_used AS this_process_bytes,
       e.others AS other_processes_bytes,
       CASE WHEN e.rest >= 0 THEN e.rest END AS rest_bytes,
       e.user_frame AS user_frame, e.message AS message
  FROM e LEFT JOIN device d ON d.id = e.device_id
 ORDER BY e.at_ns IS NULL, e.at_ns, e.sid, e.line, e.id
 LIMIT :limit;

-- How many errors there are (oom_events lists the first of them): an
-- OOM two sources told (oom_twin) is one.
-- name: oom_event_count
SELECT count(*) FROM oom_event WHERE id NOT IN (SELECT oom_id FROM oom_twin);

-- The sources that told an error: its own event and its twins, in order.
-- name: oom_told_by
SELECT s.path AS source, e.line AS line, e.wording AS wording
  FROM oom_event e JOIN source s ON s.id = e.source_id
 WHERE e.id = :oom OR e.id IN (SELECT oom_id FROM oom_twin WHERE first_id = :oom)
 ORDER BY e.id;

-- The OOM findings by shape (oom_groups.c): each with what makes its
-- shape (device, rank, kind, the request) and the figures a group ranges
-- over (the finding's evidence, which has a twin's figures merged), in
-- the findings block's order, so that a group's first is the one the
-- findings list shows. finding joins oom_event by its primary key.
-- name: oom_shapes
SELECT f.id AS finding_id, f.device_id AS device_id, d.label AS device,
       nullif(f.rank, -1) AS rank, f.kind AS kind,
       json_extract(f.data, '$.requested_bytes.value') AS requested,
       json_extract(f.data, '$.device_free_bytes.value') AS free,
       json_extract(f.data, '$.reserved_bytes.value') AS reserved,
       f.ts_ns AS ts_ns, s.path AS source, e.line AS line
  FROM finding f JOIN oom_event e ON e.id = f.oom_id
  JOIN source s ON s.id = e.source_id
  LEFT JOIN device d ON d.id = f.device_id
 ORDER BY CASE f.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END,
          f.ts_ns IS NULL, f.ts_ns, f.id;

-- The processes an error lists; pid NULL: "this process".
-- name: oom_processes
SELECT pid, used_bytes FROM oom_process WHERE oom_id = :oom ORDER BY rowid;

-- The log lines kept with an error, in order: its own and the 30 before
-- it (a line shared with an earlier error's context is stored once, under
-- the earlier error). Its own lines start at its line and span at most
-- JOIN_MAX (12, joblog_scan.c) lines: the last of them is looked for in
-- the 64 lines from its line on, through log_line's primary key (a search
-- of every line the log kept for the error's id made a log of 20,000
-- errors quadratic: 80 s to write the report of 10,000).
-- name: oom_excerpt
SELECT l.line AS line, l.role AS role, l.text AS text
  FROM oom_event e
  JOIN log_line l ON l.source_id = e.source_id
                 AND l.line BETWEEN e.line - 30
                                AND (SELECT max(k.line) FROM log_line k
                                      WHERE k.source_id = e.source_id
                                        AND k.line BETWEEN e.line AND e.line + 64
                                        AND k.oom_id = e.id)
 WHERE e.id = :oom AND l.role IN ('oom', 'traceback', 'context')
 ORDER BY l.line;

-- Where the memory went (docs/breakdown.md, breakdown.c): the device's allocated
-- memory at its peak by category; eight rows summing to the peak.
-- name: peak_breakdown
SELECT category, bytes FROM peak_category WHERE device_id = :device;

-- How the report knows (docs/breakdown.md, explain.c): the inferences made
-- of the peak's memory no live allocation explains, in their order; each
-- one's figures; what stays unknown, by why.
-- name: peak_explained
SELECT position, category, bytes, rule, confidence
  FROM peak_explained WHERE device_id = :device ORDER BY position;

-- name: peak_evidence
SELECT name, value, source FROM peak_evidence
 WHERE device_id = :device AND position = :position ORDER BY seq;

-- name: peak_unknown
SELECT before_record_bytes, unplaced_bytes, undecided_bytes
  FROM peak_unknown WHERE device_id = :device;

-- Whether a counted source states PyTorch's own categories (the memory
-- timeline export) rather than the categorize pass's.
-- name: categories_stated
SELECT EXISTS (SELECT 1 FROM device_axis a JOIN source s ON s.id = a.source_id
                WHERE a.device_id = :device AND s.format = 'memory_timeline');

-- The categories over time, for the chart (times on the device's clock,
-- as report.sql's timeline).
-- name: category_samples
SELECT ts_ns, category, bytes FROM category_sample WHERE device_id = :device
 ORDER BY ts_ns;

-- Profiler tables found in job logs, in file order; columns is
-- split into columns[] by results.c, truncated made a boolean there.
-- name: profiler_tables
SELECT t.id AS table_id, s.path AS source, t.line AS line, t.columns AS columns,
       t.row_count AS row_count, t.truncated AS truncated
  FROM profiler_table t JOIN source s ON s.id = t.source_id
 ORDER BY s.id, t.line;

-- A table's op rows as printed; NULL where the table lacks the column.
-- name: profiler_table_ops
SELECT o.name, o.calls, o.self_cuda_mem_bytes, o.cuda_mem_bytes, o.self_cpu_mem_bytes,
       o.cpu_mem_bytes, s.source_location
  FROM profiler_table_op o
  LEFT JOIN profiler_op_source s ON s.table_id = o.table_id AND s.position = o.position
 WHERE o.table_id = :table ORDER BY o.position;

-- Where each step of a device's sources starts, on the device's clock
-- (as timeline): the memory chart's step boundaries.
-- name: step_marks
SELECT st.ts_ns + (coalesce(s.clock_offset_ns, 0) - coalesce(ps.clock_offset_ns, 0)) AS ts_ns,
       st.number AS step
  FROM device_axis a
  JOIN source s ON s.id = a.source_id
  JOIN device_summary ds ON ds.device_id = a.device_id
  JOIN source ps ON ps.id = ds.source_id
  JOIN step st ON st.source_id = a.source_id
 WHERE a.device_id = :device
 ORDER BY 1, 2;
-- An inference server's own account of its memory (server_memory,
-- scan/servermem.c): one row a line the log printed, in its order, the
-- figure in our words; sizes in bytes, token and block counts in count.
-- name: server_memory
SELECT s.path AS source_path, m.line AS line, m.rank AS rank,
       CASE m.framework WHEN 'vllm' THEN 'vLLM' WHEN 'sglang' THEN 'SGLang' END AS server,
       CASE m.figure
            WHEN 'weights' THEN 'model weights loaded'
            WHEN 'kv_cache' THEN 'memory given to the KV cache'
            WHEN 'kv_tokens' THEN 'tokens the KV cache holds'
            WHEN 'activation_peak' THEN 'activations at the profiling run''s peak'
            WHEN 'non_torch' THEN 'memory outside PyTorch (CUDA context, NCCL, graphs)'
            WHEN 'torch_peak' THEN 'PyTorch''s peak in the profiling run'
            WHEN 'total' THEN 'the GPU''s memory'
            WHEN 'gpu_blocks' THEN 'KV cache blocks on the GPU'
            WHEN 'cpu_blocks' THEN 'KV cache blocks in host memory (swap)'
       END AS what,
       m.figure AS figure, m.bytes AS bytes, m.count AS tokens_or_blocks
  FROM server_memory m JOIN source s ON s.id = m.source_id
 ORDER BY m.source_id, m.line, m.id
 LIMIT :limit;

-- name: server_memory_count
SELECT count(*) FROM server_memory;

-- Bandwidth or capacity (the bound pass, docs/bandwidth.md):
-- each GPU's verdict, the figures behind it, its memory type and peak
-- bandwidth, and a trace's copy throughput. gpu: the monitored GPU
-- ('GPU 0', with its MIG instance), NULL for a trace's device alone;
-- device: the job's device it is ('cuda:0, rank 1').
-- name: bandwidth_or_capacity
SELECT CASE WHEN b.gpu_id IS NOT NULL
            THEN 'GPU ' || coalesce(g.idx, '?') || coalesce(' (' || g.mig || ')', '') END AS gpu,
       (SELECT s.path FROM source s WHERE s.id = g.source_id) AS source_path,
       (SELECT d.label || CASE WHEN d.rank >= 0 THEN ', rank ' || d.rank ELSE '' END
          FROM device d WHERE d.id = b.device_id) AS device,
       b.reported_name AS name, b.spec AS spec, b.memory_type AS memory_type,
       b.bandwidth_bytes_per_s AS bandwidth_bytes_per_s,
       b.spec_capacity_bytes AS spec_capacity_bytes, b.capacity_bytes AS capacity_bytes,
       b.verdict AS verdict, b.reason AS reason,
       b.readings AS readings, b.memory_readings AS memory_readings,
       b.memory_full_readings AS memory_full_readings,
       b.memory_full_share AS memory_full_share, b.memory_max_share AS memory_max_share,
       b.util_readings AS util_readings, b.util_median_pct AS util_median_pct,
       b.util_mean_pct AS util_mean_pct, b.ooms AS ooms,
       b.copy_ops AS copy_ops, b.copy_bytes AS copy_bytes, b.copy_busy_ns AS copy_busy_ns,
       b.achieved_copy_bytes_per_s AS achieved_copy_bytes_per_s,
       b.achieved_copy_share AS achieved_copy_share,
       b.best_copy_name AS best_copy_name, b.best_copy_bytes AS best_copy_bytes,
       b.best_copy_ns AS best_copy_ns, b.best_copy_bytes_per_s AS best_copy_bytes_per_s,
       b.best_copy_share AS best_copy_share,
       -- faster than the peak: a suspect timing (diagnose's suspect-input)
       coalesce(b.best_copy_share > 1.0, 0) AS best_copy_above_peak,
       b.host_copy_ops AS host_copy_ops, b.host_copy_bytes AS host_copy_bytes,
       b.host_copy_busy_ns AS host_copy_busy_ns,
       b.host_copy_bytes_per_s AS host_copy_bytes_per_s
  FROM bandwidth_or_capacity b LEFT JOIN gpu g ON g.id = b.gpu_id
 ORDER BY b.id;
-- Memory printed by the job (docs/formats/memory-print.md): one row per
-- source, device, rank
-- and printing code (framework, figure), in file order. A print's figure
-- is its allocated, or its max_allocated when it prints only the peak
-- (mmcv, detectron2); growth per step: between the last prints of the
-- first and the last step that have one (NULL without two steps). Times
-- on the source's clock, as oom_events'.
-- One read of memory_print in series order (memory_print_series,
-- migration 20), which groups without a sort; then each group's first and
-- last print by line (a line has one print: memory_print_source gives it)
-- and the last print of its first and of its last step by the series
-- index, a look-up each. (Window functions over every print sorted them
-- all five times: 700 bytes a print held in SQLite's sorter.) The
-- unary + keeps the series' columns from choosing the series index for
-- the look-up by line, which would read the whole series.
-- name: memory_prints
WITH ends AS (
    SELECT source_id, device_id, rank, framework, figure, count(*) AS samples,
           min(line) AS first_line, max(line) AS last_line,
           max(coalesce(max_allocated_bytes, allocated_bytes)) AS max_allocated_bytes,
           max(coalesce(max_reserved_bytes, reserved_bytes)) AS max_reserved_bytes,
           min(step) AS first_step, max(step) AS last_step, min(ts_ns) AS first_ts,
           max(ts_ns) AS last_ts, min(unit) AS unit, min(unit_reading) AS unit_reading
      FROM memory_print GROUP BY source_id, device_id, rank, framework, figure
), v AS (
    SELECT e.*,
           (SELECT coalesce(m.allocated_bytes, m.max_allocated_bytes) FROM memory_print m
             WHERE m.source_id = e.source_id AND m.line = e.first_line AND +m.device_id IS e.device_id
               AND +m.rank IS e.rank AND +m.framework = e.framework AND +m.figure = e.figure) AS first_v,
           (SELECT coalesce(m.allocated_bytes, m.max_allocated_bytes) FROM memory_print m
             WHERE m.source_id = e.source_id AND m.line = e.last_line AND +m.device_id IS e.device_id
               AND +m.rank IS e.rank AND +m.framework = e.framework AND +m.figure = e.figure) AS last_v,
           (SELECT coalesce(m.allocated_bytes, m.max_allocated_bytes) FROM memory_print m
             WHERE m.source_id = e.source_id AND m.device_id IS e.device_id AND m.rank IS e.rank
               AND m.framework = e.framework AND m.figure = e.figure AND m.step = e.first_step
             ORDER BY m.line DESC LIMIT 1) AS first_step_v,
           (SELECT coalesce(m.allocated_bytes, m.max_allocated_bytes) FROM memory_print m
             WHERE m.source_id = e.source_id AND m.device_id IS e.device_id AND m.rank IS e.rank
               AND m.framework = e.framework AND m.figure = e.figure AND m.step = e.last_step
             ORDER BY m.line DESC LIMIT 1) AS last_step_v
      FROM ends e
)
SELECT e.source_id AS source_id, s.path AS source, e.device_id AS device_db_id,
       d.label AS device, e.rank AS rank, e.framework AS framework,
       e.figure AS figure, e.samples AS samples, e.first_line AS first_line,
       e.last_line AS last_line,
       coalesce(s.clock_offset_ns, 0) + e.first_ts AS first_ts_ns,
       coalesce(s.clock_offset_ns, 0) + e.last_ts AS last_ts_ns,
       e.first_step AS first_step, e.last_step AS last_step,
       e.first_v AS first_allocated_bytes, e.last_v AS last_allocated_bytes,
       e.max_allocated_bytes AS max_allocated_bytes, e.max_reserved_bytes AS max_reserved_bytes,
       CASE WHEN e.last_step > e.first_step
            THEN (e.last_step_v - e.first_step_v) / (e.last_step - e.first_step) END
           AS growth_per_step_bytes,
       e.unit AS unit, e.unit_reading AS unit_reading
  FROM v e JOIN source s ON s.id = e.source_id
  LEFT JOIN device d ON d.id = e.device_id
 ORDER BY s.id, e.first_line;

-- One memory_prints[] row's prints, for the timeline (at most 2000, the
-- first ones); times on the source's clock.
-- name: memory_print_points
SELECT m.line AS line, coalesce(s.clock_offset_ns, 0) + m.ts_ns AS ts_ns, m.step AS step,
       m.epoch AS epoch, m.allocated_bytes AS allocated_bytes,
       m.reserved_bytes AS reserved_bytes, m.max_allocated_bytes AS max_allocated_bytes,
       m.max_reserved_bytes AS max_reserved_bytes
  FROM memory_print m JOIN source s ON s.id = m.source_id
 WHERE m.source_id = :source AND m.device_id IS :device AND m.rank IS :rank
   AND m.framework = :framework AND m.figure = :figure
 ORDER BY m.line LIMIT 2000;

-- A device's memory prints with a time, for its chart's
-- markers: on the report's clock, as oom_events'; allocated, else the
-- peak printed; reserved likewise, NULL when the line prints neither.
-- A log without ranks has devices of its own (vr_reader_device): its
-- prints of "cuda:0" are drawn on the chart of a cuda:0 of the same rank
-- that has no timeline of their source.
-- name: device_print_marks
SELECT coalesce(s.clock_offset_ns, 0) + m.ts_ns AS ts_ns, m.line AS line, m.step AS step,
       m.figure AS figure, coalesce(m.allocated_bytes, m.max_allocated_bytes) AS allocated,
       coalesce(m.reserved_bytes, m.max_reserved_bytes) AS reserved
  FROM memory_print m JOIN source s ON s.id = m.source_id
 WHERE m.device_id IN (SELECT d2.id FROM device d JOIN device d2
                          ON d2.label = d.label AND d2.rank = d.rank
                        WHERE d.id = :device)
   AND (m.device_id = :device OR m.source_id NOT IN
        (SELECT x.source_id FROM device_source_summary x WHERE x.device_id = :device))
   AND m.ts_ns IS NOT NULL
   AND coalesce(m.allocated_bytes, m.max_allocated_bytes) IS NOT NULL
 ORDER BY ts_ns, m.line;
