-- Analysis passes (the list is in src/analyze/analyze.c). Each pass reads
-- the raw tables and rewrites the derived ones it owns, clearing them first
-- (its clear_* block), so running the analysis twice gives the same
-- database. The two sweeps over the memory events (by thread, and by device
-- and time) are in C (src/analyze/attribute.c, timeline.c): one ordered read
-- each instead of many SQL passes with sorts.

-- Every pass keeps sources apart: the sweeps read events by source first,
-- so nothing of one file is paired with, nested in or summed into another.

-- The indexes the passes read by are the schema's (migrations 17, 18 and
-- 21), kept from the first row: memory events by device, source and time
-- (mem_event_device_source_time, read by timeline, summarise_devices,
-- breakdown, snapshot_state, phase_peaks and the report), memory events
-- and ops with a thread by source, thread and time (the attribution
-- sweep's order; Python frames for locate), a snapshot's blocks by their
-- segment. The only indexes made here are built and dropped around a
-- pass's own writes: an allocation by its event (allocation_by_alloc_event,
-- for locate; timeline_indexes) and by device (breakdown_range_index).

-- Old traces (and the memory timeline export) give no allocator totals:
-- rebuild allocated as the running sum of the deltas, per source and
-- device (import.sql's record_source_devices says which lack them), so a
-- rebuilt file never takes in another's events. Memory allocated before
-- profiling began is unknown, so a running sum can dip below zero; the
-- lowest dip is the least that must have been allocated already, and
-- becomes the baseline. Rewrites only the rows it rebuilds: no clear.
-- The CROSS JOIN reads source_device first and only the events of the
-- pairs it rebuilds (by mem_event_device_source_time, already in the
-- window's order: no sort); a plain JOIN let SQLite walk every event of
-- every source through the index and look its pair up, which cost a
-- snapshot (totals known) 1,400 instructions an event for nothing.
-- name: rebuild_totals
WITH running AS (
    SELECT m.id, m.device_id, m.source_id,
           -- total(), not sum(): a float that cannot fail on overflow
           -- (sizes come from the file); exact below 2^53 bytes.
           CAST(total(m.bytes) OVER (PARTITION BY sd.source_id, sd.device_id
                                     ORDER BY m.ts_ns, m.id) AS INTEGER) AS total
      FROM source_device sd
      CROSS JOIN mem_event m ON m.device_id = sd.device_id AND m.source_id = sd.source_id
     WHERE sd.totals_known = 0
), baseline AS (
    SELECT device_id, source_id, max(0, -min(total)) AS bytes
      FROM running GROUP BY device_id, source_id
)
UPDATE mem_event SET total_allocated = running.total + baseline.bytes
  FROM running JOIN baseline ON baseline.device_id = running.device_id
                            AND baseline.source_id = running.source_id
 WHERE mem_event.id = running.id;

-- The attribution pass owns op_memory, op_calls and mem_event.op_id (which
-- the sweep rewrites only where it changes, so it needs no clearing).
-- name: clear_attribution
DELETE FROM op_memory;
DELETE FROM op_calls;

-- Attribution sweep (attribute.c): ops and memory events by source,
-- thread and time. A thread is (source, pid, tid): two ranks in containers
-- often share pid and tid.
-- name: select_cpu_ops_by_thread
SELECT id, source_id, pid, tid, ts_ns, dur_ns, name_id FROM op
 WHERE cat = 'cpu_op' AND pid IS NOT NULL AND tid IS NOT NULL
 ORDER BY source_id, pid, tid, ts_ns, dur_ns DESC, id;

-- name: select_mem_events_by_thread
SELECT id, source_id, pid, tid, ts_ns, device_id, bytes, op_id FROM mem_event
 WHERE pid IS NOT NULL AND tid IS NOT NULL
 ORDER BY source_id, pid, tid, ts_ns, id;

-- name: count_unthreaded_cpu_ops
INSERT INTO op_calls (name_id, source_id, calls)
SELECT name_id, source_id, count(*) FROM op
 WHERE cat = 'cpu_op' AND (pid IS NULL OR tid IS NULL) GROUP BY source_id, name_id
    ON CONFLICT (name_id, source_id) DO UPDATE SET calls = calls + excluded.calls;

-- name: set_event_op
UPDATE mem_event SET op_id = :op WHERE id = :event;

-- name: insert_op_memory
INSERT INTO op_memory (name_id, device_id, source_id, self_alloc_count,
                       self_alloc_bytes, self_free_bytes, incl_alloc_count,
                       incl_alloc_bytes, incl_free_bytes)
VALUES (:name, :device, :source, :self_count, :self_alloc, :self_free,
        :incl_count, :incl_alloc, :incl_free)
ON CONFLICT (name_id, device_id, source_id) DO UPDATE SET
    self_alloc_count = self_alloc_count + excluded.self_alloc_count,
    self_alloc_bytes = self_alloc_bytes + excluded.self_alloc_bytes,
    self_free_bytes = self_free_bytes + excluded.self_free_bytes,
    incl_alloc_count = incl_alloc_count + excluded.incl_alloc_count,
    incl_alloc_bytes = incl_alloc_bytes + excluded.incl_alloc_bytes,
    incl_free_bytes = incl_free_bytes + excluded.incl_free_bytes;

-- name: insert_op_calls
INSERT INTO op_calls (name_id, source_id, calls) VALUES (:name, :source, :calls)
ON CONFLICT (name_id, source_id) DO UPDATE SET calls = calls + excluded.calls;

-- The timeline pass owns allocation, step_summary and device_source_summary.
-- The index of allocations by their event goes first: rows inserted in
-- the order of their frees would each update it at a scattered place;
-- built from the finished table (timeline_indexes) it is one sort.
-- name: clear_timeline
DROP INDEX IF EXISTS allocation_by_alloc_event;
DELETE FROM allocation;
DELETE FROM step_summary;
DELETE FROM device_source_summary;

-- Timeline sweep (timeline.c): each device's events, source by source, in
-- time order.
-- name: select_steps
SELECT source_id, number, ts_ns, dur_ns FROM step ORDER BY source_id, ts_ns;

-- The events reach the sweep through vr_timeline_event() (timeline.c),
-- called by SQLite on each row as it reads it: no row is handed back, so
-- neither sqlite3_step() nor a column call is paid an event. Its
-- arguments are the columns below, in this order, in every block.
-- The table's last rows, in table order: the displaced rows are guessed
-- among them (and the guess checked as the rest is read).
-- name: timeline_last_events
SELECT id, device_id, source_id, ts_ns
  FROM (SELECT id, device_id, source_id, ts_ns FROM mem_event ORDER BY id DESC LIMIT :rows)
 ORDER BY id;

-- In table order (no seek into the table a row) when the rows are
-- already in time order but for a few: a walk of the index backwards
-- (its ids alone) finds the rows a row after them in time order
-- precedes in the table (vr_timeline_displaced(): a snapshot's start
-- marker, written last), which the sweep reads by id and places among the
-- others. The function returns 1 once they are too many.
-- name: timeline_displaced_events
SELECT 1 FROM mem_event INDEXED BY mem_event_device_source_time
 WHERE vr_timeline_displaced(id)
 ORDER BY device_id DESC, source_id DESC, ts_ns DESC, id DESC;

-- name: timeline_event_by_id
SELECT vr_timeline_event(id, device_id, source_id, ts_ns, bytes, addr, total_allocated,
                         total_reserved, op_id, stack_id, category)
  FROM mem_event WHERE id = :id;

-- name: timeline_events_in_table_order
SELECT id FROM mem_event NOT INDEXED
 WHERE vr_timeline_event(id, device_id, source_id, ts_ns, bytes, addr, total_allocated,
                         total_reserved, op_id, stack_id, category)
 ORDER BY id;

-- The same when every event is of one device and source (every
-- allocator snapshot): the first and the last (device, source) of the
-- index tell, and the function is given the others.
-- name: timeline_first_last_group
SELECT f.device_id, f.source_id, l.device_id, l.source_id
  FROM (SELECT device_id, source_id FROM mem_event INDEXED BY mem_event_device_source_time
         ORDER BY device_id, source_id LIMIT 1) f,
       (SELECT device_id, source_id FROM mem_event INDEXED BY mem_event_device_source_time
         ORDER BY device_id DESC, source_id DESC LIMIT 1) l;

-- name: timeline_group_events_in_table_order
SELECT id FROM mem_event NOT INDEXED
 WHERE vr_timeline_group_event(id, ts_ns, bytes, addr, total_allocated, total_reserved, op_id,
                               stack_id, category)
 ORDER BY id;

-- Otherwise by the index, in (device, source, time, id) order.
-- name: timeline_events_in_time_order
SELECT id FROM mem_event INDEXED BY mem_event_device_source_time
 WHERE vr_timeline_event(id, device_id, source_id, ts_ns, bytes, addr, total_allocated,
                         total_reserved, op_id, stack_id, category)
 ORDER BY device_id, source_id, ts_ns, id;

-- The rows the sweep made, batched (src/batch/batch.h: written many rows a
-- statement from memory; :device and :source bound once a statement, the
-- same for every row of a device and source). OR FAIL, as the snapshot
-- reader's inserts, so a statement of many rows needs no statement
-- journal (any error fails the whole analysis, whose one transaction is
-- rolled back).
-- name: insert_allocations
INSERT OR FAIL INTO allocation (device_id, source_id, addr, bytes, alloc_ts_ns, free_ts_ns,
                        alloc_event_id, free_event_id, op_id, category, alloc_phase,
                        free_phase, category_rule, frame_id)
VALUES (:device /* shared */, :source /* shared */, :addr, :bytes, :alloc_ts, :free_ts,
        :alloc_event, :free_event, :op, :category, :alloc_phase, :free_phase, :rule, :frame);

-- After the sweep: an allocation by its event. Its one reader is locate's
-- select_allocations_by_thread, whose rows are the allocations of events
-- with a thread, read only while Python frames are open: so the index is
-- built only when both exist (timeline_needs_index; not for a snapshot,
-- whose events have no thread, nor for a trace without with_stack). No
-- other statement's plan uses it (EXPLAIN QUERY PLAN of every block).
-- name: timeline_needs_index
SELECT EXISTS (SELECT 1 FROM mem_event WHERE pid IS NOT NULL AND tid IS NOT NULL)
   AND EXISTS (SELECT 1 FROM op WHERE cat = 'python_function'
                                 AND pid IS NOT NULL AND tid IS NOT NULL);

-- name: timeline_indexes
CREATE INDEX IF NOT EXISTS allocation_by_alloc_event ON allocation (alloc_event_id);

-- One source's own figures on one device, on the source's clock.
-- name: insert_device_source_summary
INSERT INTO device_source_summary (device_id, source_id, events, start_ns, end_ns,
                                   totals_known, peak_allocated_bytes,
                                   peak_allocated_ts_ns, peak_allocated_event_id,
                                   peak_allocated_op_id, peak_allocated_step,
                                   peak_reserved_bytes, peak_reserved_ts_ns,
                                   live_unknown_bytes)
VALUES (:device, :source, :events, :start, :end,
        coalesce((SELECT totals_known FROM source_device
                   WHERE source_id = :source AND device_id = :device), 1),
        :peak_alloc, :peak_alloc_ts, :peak_alloc_event, :peak_alloc_op,
        :peak_step, :peak_res, :peak_res_ts, :unknown_at_peak);

-- name: insert_step_summary
INSERT INTO step_summary (device_id, source_id, step, peak_allocated_bytes,
                          peak_reserved_bytes, start_allocated_bytes,
                          end_allocated_bytes, alloc_count, alloc_bytes)
VALUES (:device, :source, :step, :peak_alloc, :peak_res, :start_alloc,
        :end_alloc, :alloc_count, :alloc_bytes);

-- The locate pass (locate.c) owns allocation.frame_id and
-- allocation.module of the allocations it places by Python frames (the
-- timeline pass has just rewritten the rows: this finds nothing to clear
-- unless a pass between them wrote them). A snapshot allocation's frame_id
-- (its stack's user frame) is written by the categorize pass, in the one
-- rewrite of the row that gives it its category.
-- name: clear_location
UPDATE allocation SET module = NULL WHERE module IS NOT NULL;

-- Locate sweep: the Python frames (with_stack=True) and the allocations
-- of the threads, by source, thread and time, as attribute.c reads ops.
-- name: select_python_frames_by_thread
SELECT o.source_id, o.pid, o.tid, o.ts_ns, o.dur_ns, o.name_id, n.text,
       o.call_from_id, cf.text
  FROM op o JOIN name n ON n.id = o.name_id
  LEFT JOIN name cf ON cf.id = o.call_from_id
 WHERE o.cat = 'python_function' AND o.pid IS NOT NULL AND o.tid IS NOT NULL
 ORDER BY o.source_id, o.pid, o.tid, o.ts_ns, o.dur_ns DESC, o.id;

-- The events first (CROSS JOIN), by their partial index: allocation's
-- index by alloc event exists only when some event has a thread
-- (timeline_needs_index), and without such an event this reads nothing.
-- name: select_allocations_by_thread
SELECT a.id, e.source_id, e.pid, e.tid, e.ts_ns
  FROM mem_event e CROSS JOIN allocation a ON a.alloc_event_id = e.id
 WHERE e.pid IS NOT NULL AND e.tid IS NOT NULL
 ORDER BY e.source_id, e.pid, e.tid, e.ts_ns, e.id;

-- A user frame's file (text) and function, to place a call in it.
-- name: select_frame_parts
SELECT n.text, f.filename_id, f.function_id
  FROM frame f JOIN name n ON n.id = f.filename_id WHERE f.id = :frame;

-- name: set_allocation_location
UPDATE allocation SET frame_id = ifnull(frame_id, :frame), module = :module WHERE id = :allocation;

-- The choose_sources pass owns device_axis.
-- name: clear_choice
DELETE FROM device_axis;

-- Which sources a device's figures are made of (docs/schema.md, "Sources
-- of one device"), written to device_axis in time order. Sources are
-- placed on one axis (the span of their events + clock offset) and grouped
-- where they overlap in time: a source that starts at or before the latest
-- end of those before it joins their group. Sources of different groups
-- are apart in time and all count, on one axis. Within a group one source
-- counts, by this rule, in order:
--   1. allocator totals: a source whose events carried them, over one
--      whose allocated memory had to be rebuilt from the deltas;
--   2. coverage: the most memory events, then the longest span;
--   3. the lowest source id (the first imported).
-- An unplaced source (no clock offset) cannot be put beside another: on a
-- device with several sources, it makes them all one group.
-- name: choose_sources
WITH placed AS (
    SELECT x.device_id, x.source_id, x.events, x.totals_known,
           x.end_ns - x.start_ns AS span,
           x.start_ns + s.clock_offset_ns AS t0,
           x.end_ns + s.clock_offset_ns AS t1,
           s.clock_offset_ns IS NULL AS unplaced
      FROM device_source_summary x JOIN source s ON s.id = x.source_id
), mixed AS (
    SELECT device_id FROM placed GROUP BY device_id
    HAVING count(*) > 1 AND max(unplaced) = 1
), before AS (
    SELECT p.*, max(t1) OVER (PARTITION BY device_id ORDER BY t0, source_id
                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                    AS latest_end
      FROM placed p
), grouped AS (
    SELECT b.*,
           CASE WHEN b.device_id IN (SELECT device_id FROM mixed) THEN 0
                ELSE sum(b.latest_end IS NULL OR b.t0 > b.latest_end)
                         OVER (PARTITION BY b.device_id ORDER BY b.t0, b.source_id
                               ROWS UNBOUNDED PRECEDING) END AS grp
      FROM before b
), ranked AS (
    SELECT device_id, source_id, t0,
           row_number() OVER (PARTITION BY device_id, grp
                              ORDER BY totals_known DESC, events DESC, span DESC,
                                       source_id) AS place
      FROM grouped
)
INSERT INTO device_axis (device_id, position, source_id)
SELECT device_id, row_number() OVER (PARTITION BY device_id ORDER BY t0, source_id),
       source_id
  FROM ranked WHERE place = 1;

-- The summarise_devices pass owns device_summary and the transaction's
-- temporary table peak_live: the allocations live at each device's peak,
-- read by this pass, snapshot_sites and advise_facts (one read of
-- allocation for the three; each read it whole before, some 1,000
-- instructions a row).
-- name: clear_device_summary
DELETE FROM device_summary;
DROP TABLE IF EXISTS temp.peak_live;

-- A device's figures, from its chosen sources: the peak (the highest, the
-- earliest on the axis when equal) with its source, whose clock the row's
-- times are on; events summed; the span from the first start to the last
-- end. Offsets only differ between sources that are all placed (see
-- choose_sources), so coalesce() never mixes a relative clock in.
-- At the peak: every allocation of the peak's source live then, in the
-- timeline sweep's order (ts_ns, then event id: allocated at or before
-- the peak event, freed after it or never); NULL when the source's
-- events carry no address, so none could be paired. Cached: reserved
-- minus allocated at the peak event (NULL when it does not say reserved).
-- The row is written first, the allocations live at its peak (peak_live)
-- from it, then their count and bytes.
-- name: summarise_devices
CREATE TEMP TABLE peak_live (
    id        INTEGER PRIMARY KEY,  -- allocation.id
    device_id INTEGER NOT NULL,
    bytes     INTEGER NOT NULL
);
WITH chosen AS (
    SELECT x.*, coalesce(s.clock_offset_ns, 0) AS off
      FROM device_axis a
      JOIN device_source_summary x ON x.device_id = a.device_id AND x.source_id = a.source_id
      JOIN source s ON s.id = x.source_id
), peak AS (
    SELECT c.*, row_number() OVER (PARTITION BY device_id
                                   ORDER BY peak_allocated_bytes DESC,
                                            peak_allocated_ts_ns + off, source_id) AS place
      FROM chosen c
), res AS (
    SELECT c.device_id, c.peak_reserved_bytes, c.peak_reserved_ts_ns, c.off,
           row_number() OVER (PARTITION BY device_id
                              ORDER BY peak_reserved_bytes DESC,
                                       peak_reserved_ts_ns + off, source_id) AS place
      FROM chosen c
), counted AS (
    SELECT device_id, count(*) AS sources,
           (SELECT count(*) FROM device_axis a WHERE a.device_id = x.device_id) AS chosen
      FROM device_source_summary x GROUP BY device_id
)
INSERT INTO device_summary (device_id, source_id, source_choice, events, start_ns,
                            end_ns, peak_allocated_bytes, peak_allocated_ts_ns,
                            peak_allocated_event_id, peak_allocated_op_id,
                            peak_allocated_step, peak_reserved_bytes,
                            peak_reserved_ts_ns, live_unknown_bytes,
                            cached_at_peak_bytes)
SELECT p.device_id, p.source_id,
       CASE WHEN n.sources = 1 THEN 'one'
            WHEN n.chosen = n.sources THEN 'combined' ELSE 'chosen' END,
       (SELECT sum(c.events) FROM chosen c WHERE c.device_id = p.device_id),
       (SELECT min(c.start_ns + (c.off - p.off)) FROM chosen c WHERE c.device_id = p.device_id),
       (SELECT max(c.end_ns + (c.off - p.off)) FROM chosen c WHERE c.device_id = p.device_id),
       p.peak_allocated_bytes, p.peak_allocated_ts_ns, p.peak_allocated_event_id,
       p.peak_allocated_op_id, p.peak_allocated_step,
       r.peak_reserved_bytes, r.peak_reserved_ts_ns + (r.off - p.off),
       p.live_unknown_bytes,
       pe.total_reserved - pe.total_allocated
  FROM peak p
  JOIN counted n ON n.device_id = p.device_id
  LEFT JOIN res r ON r.device_id = p.device_id AND r.place = 1
  LEFT JOIN mem_event pe ON pe.id = p.peak_allocated_event_id
 WHERE p.place = 1;
-- One read of allocation (CROSS JOIN: the outer loop), each row's peak
-- found by its device: the peak's time and event id are the peak event's
-- own (device_source_summary), so no event is read. The first two terms,
-- on the row alone, pass little more than the live ones to the peak's
-- lookup.
INSERT INTO temp.peak_live (id, device_id, bytes)
SELECT a.id, a.device_id, a.bytes
  FROM allocation a
 CROSS JOIN device_summary ds
 WHERE a.alloc_ts_ns <= (SELECT max(peak_allocated_ts_ns) FROM device_summary)
   AND (a.free_ts_ns IS NULL
        OR a.free_ts_ns >= (SELECT min(peak_allocated_ts_ns) FROM device_summary))
   AND ds.device_id = a.device_id AND ds.source_id = a.source_id
   AND (a.alloc_ts_ns < ds.peak_allocated_ts_ns
        OR (a.alloc_ts_ns = ds.peak_allocated_ts_ns
            AND a.alloc_event_id <= ds.peak_allocated_event_id))
   AND (a.free_ts_ns IS NULL OR a.free_ts_ns > ds.peak_allocated_ts_ns
        OR (a.free_ts_ns = ds.peak_allocated_ts_ns
            AND a.free_event_id > ds.peak_allocated_event_id));
-- Counted only where the peak's source's events carry an address: 0 for
-- each such device, then each device's sums from one grouped read of
-- peak_live (a subquery per device read all of peak_live for each:
-- devices x allocations).
-- total(): sizes come from the file; the CAST clamps, never fails.
UPDATE device_summary
   SET live_at_peak_count = 0, live_at_peak_bytes = 0
 WHERE peak_allocated_event_id IS NOT NULL
   AND EXISTS (SELECT 1 FROM mem_event m WHERE m.device_id = device_summary.device_id
                  AND m.source_id = device_summary.source_id AND m.addr IS NOT NULL);
UPDATE device_summary
   SET live_at_peak_count = g.n, live_at_peak_bytes = g.b
  FROM (SELECT device_id, count(*) AS n, CAST(total(bytes) AS INTEGER) AS b
          FROM temp.peak_live GROUP BY device_id) g
 WHERE g.device_id = device_summary.device_id
   AND device_summary.live_at_peak_count IS NOT NULL;

-- The breakdown pass (breakdown.c) owns peak_category, category_sample and
-- block_before.
-- name: clear_breakdown
DELETE FROM peak_category;
DELETE FROM category_sample;
DELETE FROM peak_explained;
DELETE FROM peak_evidence;
DELETE FROM peak_unknown;
DELETE FROM block_before;

-- The pass reads events and allocations apart (breakdown.c), never one
-- through the other: the covering indexes earlier versions built for that
-- are dropped by migration 21.

-- The devices with a peak: more than breakdown.c holds at once, and the
-- pass reads them a group at a time, each group's rows by index
-- (the breakdown_range_ blocks).
-- name: breakdown_device_count
SELECT count(*) FROM device_summary WHERE peak_allocated_bytes IS NOT NULL;

-- Read a group at a time, the allocations are found by device: built for
-- the pass and dropped after it (breakdown_drop_index), as the timeline
-- pass's inserts of a database analysed again would pay for it.
-- name: breakdown_range_index
CREATE INDEX IF NOT EXISTS allocation_by_device ON allocation (device_id);

-- name: breakdown_drop_index
DROP INDEX IF EXISTS allocation_by_device;

-- Each device with a peak (in id order), its chosen sources in axis order:
-- what takes a source's times to the chart's clock (the peak's source's,
-- as report.sql's timeline), the source's span and the device's, and
-- whether some of the source's events state their category (one look-up
-- in mem_event_stated_category, migration 18). A group: the :devices
-- devices after :after (-1: all of them).
-- Blocks in use at a snapshot's end with a stack (breakdown.c, "blocks
-- live before the record", keeps those no allocation live at the end is).
-- name: breakdown_blocks_before
SELECT g.device_id, g.source_id, b.bytes, b.stack_id, b.address, b.id, b.stack_id IS NOT NULL
  FROM block b JOIN segment g ON g.id = b.segment_id
 WHERE b.state = 'active_allocated' AND b.address IS NOT NULL;

-- Each block the breakdown takes as in use since before the record, with
-- the category it counted it in (read by the report's groups of the peak).
-- name: insert_block_before
INSERT INTO block_before (block_id, device_id, source_id, category)
VALUES (:block, :device, :source, :category);

-- name: breakdown_sources
SELECT ds.device_id, a.position, a.source_id,
       coalesce(s.clock_offset_ns, 0) - coalesce(ps.clock_offset_ns, 0),
       x.start_ns, x.end_ns, ds.start_ns, ds.end_ns,
       ds.peak_allocated_bytes, ds.peak_allocated_event_id,
       EXISTS (SELECT 1 FROM mem_event m
                WHERE m.device_id = a.device_id AND m.source_id = a.source_id
                  AND m.category IS NOT NULL)
  FROM device_summary ds
  JOIN device_axis a ON a.device_id = ds.device_id
  JOIN device_source_summary x ON x.device_id = a.device_id AND x.source_id = a.source_id
  JOIN source s ON s.id = a.source_id
  JOIN source ps ON ps.id = ds.source_id
 WHERE ds.device_id IN (SELECT device_id FROM device_summary
                         WHERE peak_allocated_bytes IS NOT NULL AND device_id > :after
                         ORDER BY device_id LIMIT :devices)
 ORDER BY ds.device_id, a.position;

-- Every event, in table order, handed to vr_breakdown_event() (breakdown.c
-- keeps the chosen sources'), which SQLite calls as the scan reads the
-- row and which returns 0: no row comes back, no sqlite3_step() or
-- column call a row.
-- name: breakdown_events
SELECT 1 FROM mem_event NOT INDEXED
 WHERE vr_breakdown_event(device_id, source_id, id, ts_ns, total_allocated)
 ORDER BY id;

-- The lowest and highest device of the events, and the lowest and highest
-- source of the lowest device's: one seek each in
-- mem_event_device_source_time (one min() or max() a query). All equal:
-- every event is of one device and source (an allocator snapshot's), and
-- breakdown_group_events, two columns fewer a row, is read instead.
-- name: breakdown_event_sources
SELECT (SELECT min(device_id) FROM mem_event),
       (SELECT max(device_id) FROM mem_event),
       (SELECT min(source_id) FROM mem_event
         WHERE device_id = (SELECT min(device_id) FROM mem_event)),
       (SELECT max(source_id) FROM mem_event
         WHERE device_id = (SELECT min(device_id) FROM mem_event));

-- name: breakdown_group_events
SELECT 1 FROM mem_event NOT INDEXED
 WHERE vr_breakdown_group_event(id, ts_ns, total_allocated)
 ORDER BY id;

-- The same, of the chosen sources only, in chart order: read instead when
-- a device's chosen sources overlap in time (choose_sources never lets
-- them). Its rows do come back: a function in the WHERE would see them
-- in the scan's order, not the sort's.
-- The devices from :after (not included) to :last.
-- name: breakdown_events_in_order
SELECT m.device_id, m.source_id, m.id, m.ts_ns, m.total_allocated
  FROM device_summary ds
  JOIN device_axis a ON a.device_id = ds.device_id
  JOIN mem_event m ON m.device_id = a.device_id AND m.source_id = a.source_id
 WHERE ds.peak_allocated_bytes IS NOT NULL AND ds.device_id > :after AND ds.device_id <= :last
 ORDER BY a.device_id, a.position, m.ts_ns, m.id;

-- Every allocation, in table order, handed to vr_breakdown_allocation()
-- (breakdown.c keeps the chosen sources'), as breakdown_events.
-- name: breakdown_allocations
SELECT 1 FROM allocation NOT INDEXED
 WHERE vr_breakdown_allocation(device_id, source_id, alloc_ts_ns, alloc_event_id, free_ts_ns,
                               free_event_id, bytes, category, addr)
 ORDER BY id;

-- The same when every event is of one device and source, so every
-- allocation (the timeline pass makes them of its events' device and
-- source): two columns fewer a row.
-- name: breakdown_group_allocations
SELECT 1 FROM allocation NOT INDEXED
 WHERE vr_breakdown_group_allocation(alloc_ts_ns, alloc_event_id, free_ts_ns, free_event_id,
                                     bytes, category, addr)
 ORDER BY id;

-- The events that state their category (read when a chosen source has
-- some), in table order as before mem_event_stated_category.
-- name: breakdown_stated_events
SELECT device_id, source_id, ts_ns, id, category, bytes
  FROM mem_event NOT INDEXED WHERE category IS NOT NULL;

-- A group's devices, from :after (not included) to :last, read by index
-- in place of the three reads above: each row is read once over all the
-- groups, where a read of the table a group would read it once a group.
-- Any order does (breakdown.c: a bucket keeps the largest total, the
-- earliest of equals; the changes are sums).
-- name: breakdown_range_events
SELECT 1 FROM mem_event INDEXED BY mem_event_device_source_time
 WHERE device_id > :after AND device_id <= :last
   AND vr_breakdown_event(device_id, source_id, id, ts_ns, total_allocated);

-- name: breakdown_range_allocations
SELECT 1 FROM allocation INDEXED BY allocation_by_device
 WHERE device_id > :after AND device_id <= :last
   AND vr_breakdown_allocation(device_id, source_id, alloc_ts_ns, alloc_event_id, free_ts_ns,
                               free_event_id, bytes, category, addr);

-- name: breakdown_range_stated_events
SELECT device_id, source_id, ts_ns, id, category, bytes
  FROM mem_event INDEXED BY mem_event_stated_category
 WHERE category IS NOT NULL AND device_id > :after AND device_id <= :last;

-- name: breakdown_event_stated
SELECT category IS NOT NULL FROM mem_event WHERE id = :id;

-- What explain.c reads of a device's peak source (docs/breakdown.md,
-- "How we know"). The allocated total when the record began: the first
-- event's total before its own bytes.
-- name: explain_level_at_start
SELECT total_allocated - bytes FROM mem_event
 WHERE device_id = :device AND source_id = :source AND total_allocated IS NOT NULL
 ORDER BY ts_ns, id LIMIT 1;

-- Whether the peak's source's events carry addresses (summarise_devices
-- counts the allocations live at the peak only then).
-- name: explain_addresses
SELECT live_at_peak_count IS NOT NULL FROM device_summary WHERE device_id = :device;

-- The phases the source was cut into (phases pass).
-- name: explain_phase_kinds
SELECT DISTINCT kind FROM phase WHERE source_id = :source;

-- The phases where memory is let go of by the optimizer, in time order.
-- name: explain_release_phases
SELECT kind, start_ns, end_ns FROM phase
 WHERE source_id = :source AND kind IN ('optimizer', 'zero_grad')
 ORDER BY start_ns;

-- Whether the source is an allocator snapshot (it has segments): only
-- a snapshot's events have stacks.
-- name: explain_has_segments
SELECT 1 FROM segment WHERE source_id = :source LIMIT 1;

-- How many sources have stacks (snapshots: they have segments): with one,
-- every stack's frames are the source's (explain_stacked_frames); and
-- whether a trace's Python frames are in the frame table too (the locate
-- pass puts them there), so that it holds frames of no stack.
-- name: explain_stacked_sources
SELECT (SELECT count(DISTINCT source_id) FROM segment),
       EXISTS (SELECT 1 FROM op WHERE cat = 'python_function');

-- name: explain_stacked_frames
SELECT fn.text, ff.text
  FROM frame f
  JOIN name fn ON fn.id = f.function_id
  JOIN name ff ON ff.id = f.filename_id
 WHERE :all OR f.id IN (SELECT frame_id FROM stack_frame);

-- Every frame of the stacks of the source's events and of its blocks,
-- once (a snapshot's; a trace has none).
-- name: explain_source_frames
SELECT DISTINCT fn.text, ff.text
  FROM stack_frame sf
  JOIN frame f ON f.id = sf.frame_id
  JOIN name fn ON fn.id = f.function_id
  JOIN name ff ON ff.id = f.filename_id
 WHERE sf.stack_id IN (SELECT stack_id FROM mem_event
                        WHERE device_id = :device AND source_id = :source
                          AND stack_id IS NOT NULL
                       UNION
                       SELECT b.stack_id FROM block b JOIN segment g ON g.id = b.segment_id
                        WHERE g.device_id = :device AND g.source_id = :source
                          AND b.stack_id IS NOT NULL);

-- The frames of one stack.
-- name: explain_stack_frames
SELECT fn.text, ff.text
  FROM stack_frame sf
  JOIN frame f ON f.id = sf.frame_id
  JOIN name fn ON fn.id = f.function_id
  JOIN name ff ON ff.id = f.filename_id
 WHERE sf.stack_id = :stack;

-- The optimizer the source names: PyTorch's record_function label of its
-- step (`Optimizer.step#AdamW.step`), an op or annotation of the source.
-- name: explain_optimizer_name
SELECT n.text FROM name n
 WHERE n.text GLOB 'Optimizer.step#*'
   AND EXISTS (SELECT 1 FROM op o WHERE o.name_id = n.id AND o.source_id = :source)
 LIMIT 1;

-- What an inference server's log says it reserved at start-up (its
-- weights, its KV cache: server_memory), for the device: a line of the
-- device's rank, or, where either does not say its rank (a device's
-- unknown rank is -1), of a job with one device with a peak. In the log's order: the last start-up counts.
-- name: explain_server_figures
SELECT m.framework, m.figure, m.bytes, m.line
  FROM server_memory m, device d
 WHERE d.id = :device AND m.bytes IS NOT NULL AND m.figure IN ('weights', 'kv_cache')
   AND (m.rank = d.rank
        OR ((m.rank IS NULL OR d.rank IS NULL OR d.rank < 0)
            AND (SELECT count(*) FROM device_summary
                  WHERE peak_allocated_bytes IS NOT NULL) = 1))
 ORDER BY m.source_id, m.line;

-- The weight bytes one forward of the source reads (forward_weights,
-- record_shapes), and the dtype most of them are held in (op_weight's
-- first operand's type: `c10::BFloat16[30522,512]`).
-- name: explain_forward_weights
SELECT w.bytes, w.tied_candidate_bytes, w.modules,
       (SELECT substr(o.shape, 1, instr(o.shape, '[') - 1) FROM op_weight o
         WHERE o.source_id = w.source_id AND instr(o.shape, '[') > 1
         GROUP BY 1 ORDER BY total(o.weight_bytes) DESC LIMIT 1)
  FROM forward_weights w
 WHERE w.source_id = :source AND (w.device_id = :device OR w.device_id IS NULL) AND w.bytes > 0;

-- The source's memory events in time order, to pair frees with what
-- the record allocated: a free of an address the record never allocated
-- lets go of memory from before the record.
-- name: explain_events
SELECT id, ts_ns, bytes, addr, stack_id FROM mem_event
 WHERE device_id = :device AND source_id = :source
 ORDER BY ts_ns, id;

-- name: insert_peak_explained
INSERT INTO peak_explained (device_id, position, rule, category, bytes, moved_bytes, confidence)
VALUES (:device, :position, :rule, :category, :bytes, :moved, :confidence);

-- name: insert_peak_evidence
INSERT INTO peak_evidence (device_id, position, seq, name, value, source)
VALUES (:device, :position, :seq, :name, :value, :source);

-- name: insert_peak_unknown
INSERT INTO peak_unknown (device_id, before_record_bytes, unplaced_bytes, undecided_bytes)
VALUES (:device, :before, :unplaced, :undecided);

-- name: insert_peak_category
INSERT INTO peak_category (device_id, category, bytes, count)
VALUES (:device, :category, :bytes, :count);

-- Two samples at one time (clocks that step back) keep the later: rows
-- are batched (src/batch/batch.h), and a statement of many rows replaces
-- in their order as one a row did.
-- name: insert_category_sample
INSERT OR REPLACE INTO category_sample (device_id, ts_ns, category, bytes)
VALUES (:device /* shared */, :ts, :category, :bytes);

-- The snapshot_state pass owns snapshot_summary and alloc_site.
-- name: clear_snapshot_state
DELETE FROM snapshot_summary;
DELETE FROM alloc_site;

-- The state each snapshot ends in, per device: what the allocator holds
-- (segments), what is in use, and how the rest is cut up. Free space in
-- segments is what a request that does not fit the largest free block
-- cannot use; internal waste is rounding inside blocks in use; inactive
-- split bytes are free blocks of segments already cut (memory_stats'
-- inactive_split). Pre-existing: what was live before the first recorded
-- entry (the timeline's first total before its first change).
-- name: snapshot_state
-- Each block read once (by block_by_segment), its figures summed per
-- segment, then per device. (A join of blocks to segments per figure,
-- each a subquery in the list of an aggregate query, ran once per
-- segment, each reading every block: 42 M instructions for 421 segments.)
WITH per_segment AS (
    SELECT segment_id, count(*) AS blocks,
           sum(bytes) FILTER (WHERE state = 'active_allocated') AS allocated,
           max(bytes) FILTER (WHERE state = 'inactive') AS largest_free,
           sum(bytes) FILTER (WHERE state = 'inactive') AS free,
           sum(bytes) FILTER (WHERE state = 'active_pending_free') AS pending,
           sum(bytes - requested_bytes)
               FILTER (WHERE state = 'active_allocated' AND requested_bytes IS NOT NULL)
               AS waste
      FROM block GROUP BY segment_id
)
INSERT INTO snapshot_summary (device_id, source_id, final_allocated_bytes,
                              final_reserved_bytes, segment_count, block_count,
                              largest_free_block_bytes, free_in_segments_bytes,
                              pending_free_bytes, internal_waste_bytes,
                              inactive_split_bytes, expandable_segments, pre_existing_bytes)
SELECT s.device_id, s.source_id, coalesce(sum(b.allocated), 0), sum(s.total_bytes),
       count(*), sum(coalesce(b.blocks, 0)), max(b.largest_free), coalesce(sum(b.free), 0),
       coalesce(sum(b.pending), 0), sum(b.waste),
       -- Free blocks of segments already cut.
       coalesce(sum(b.free) FILTER (WHERE b.blocks > 1), 0),
       max(coalesce(s.is_expandable, 0)),
       -- The first event by mem_event_device_source_time: one seek, not
       -- a sort of every event of the source.
       (SELECT max(0, m.total_allocated - m.bytes) FROM mem_event m
         WHERE m.device_id = s.device_id AND m.source_id = s.source_id
         ORDER BY m.ts_ns, m.id LIMIT 1)
  FROM segment s LEFT JOIN per_segment b ON b.segment_id = s.id
 GROUP BY s.source_id, s.device_id;

-- The snapshot_replay pass (snapshot_replay.c) owns oom_fragmentation and
-- the largest free block of snapshot OOMs. Only the snapshot readers write
-- trace entries (trace_entry's two tables, migration 16), and each of a
-- snapshot's OOM rows is one of its oom entries, so its sources are named
-- by format: reading them from the trace entries cost a scan of both
-- tables and a sort.
-- name: clear_snapshot_replay
DELETE FROM oom_fragmentation;
UPDATE oom_event SET largest_free_block_bytes = NULL
 WHERE source_id IN (SELECT id FROM source WHERE format IN ('snapshot', 'snapshot_json'));

-- Whether any OOM row exists: without any the replay writes nothing.
-- name: replay_any_oom
SELECT EXISTS (SELECT 1 FROM oom_event);

-- The trace entries' action codes (an integer in trace_entry_other).
-- name: replay_actions
SELECT code, name FROM trace_action;

-- Each snapshot device with an OOM row (one per oom entry).
-- name: replay_devices
SELECT DISTINCT o.source_id, o.device_id
  FROM oom_event o JOIN source s ON s.id = o.source_id
 WHERE s.format IN ('snapshot', 'snapshot_json') AND o.device_id IS NOT NULL
 ORDER BY o.source_id, o.device_id;

-- The OOM rows of a device's oom entries, in the entries' order.
-- name: replay_ooms
SELECT id FROM oom_event WHERE source_id = :source AND device_id = :device ORDER BY id;

-- The device's segments, by address (those without one first: only their
-- id is used, to know their blocks).
-- name: replay_segments
SELECT address, total_bytes, stream, segment_type, pool, coalesce(is_expandable, 0), id
  FROM segment
 WHERE source_id = :source AND device_id = :device
 ORDER BY address;

-- Blocks in use or waiting to be freed (the free ones are what is left),
-- in table order: a snapshot lists them by address, and sorting them
-- cost some 3,500 instructions a block. snapshot_replay.c loads them as
-- they come while their addresses rise, and reads them again sorted
-- (replay_blocks) when they do not. Every block row is read, the device's
-- kept by their segment_id (replay_segments' ids): looking each block's
-- segment up by a join cost some 3,000 instructions a block.
-- name: replay_blocks_in_table_order
SELECT address, bytes, state = 'active_pending_free', requested_bytes, segment_id
  FROM block
 WHERE address IS NOT NULL AND state <> 'inactive'
 ORDER BY id;

-- name: replay_blocks
SELECT b.address, b.bytes, b.state = 'active_pending_free', b.requested_bytes
  FROM segment s JOIN block b ON b.segment_id = s.id
 WHERE s.source_id = :source AND s.device_id = :device AND b.address IS NOT NULL
   AND b.state <> 'inactive'
 ORDER BY b.address;

-- A device's entries, newest first: each table read backwards by id (the
-- importer numbers a device's entries in their order across both tables;
-- the walk merges the two by id and stops at the device's first oom). The
-- unary + keeps SQLite off mem_event's device index, which is in time
-- order and would need a sort. These read only the device's rows; the
-- walk reads every row first (replay_other_rows, replay_event_rows, from
-- the device's last entry down) and checks at each oom that they were the
-- device's entries (snapshot_replay.c, walk_check): filtering each row
-- cost about as much as reading it.
-- The trace_entry_other rows from :upper down are held by
-- vr_replay_other(), which is true at the row that ends a run (an oom):
-- the scan stops there.
-- name: replay_other_entries
SELECT 1 FROM trace_entry_other
 WHERE +source_id = :source AND +device_id = :device AND id <= :upper
   AND vr_replay_other(id, action, address, bytes, stream)
 ORDER BY id DESC LIMIT 1;

-- The memory events that are entries (alloc: bytes above 0, else
-- free_completed of -bytes) with ids in (:lower, :upper], undone by
-- vr_replay_event() as SQLite reads them (it returns false: no row comes
-- back). The function is the last term, called for the device's rows only.
-- name: replay_event_entries
SELECT 1 FROM mem_event
 WHERE +source_id = :source AND +device_id = :device AND seq IS NOT NULL
   AND id > :lower AND id <= :upper AND vr_replay_event(id, bytes, addr)
 ORDER BY id DESC;

-- name: replay_other_rows
SELECT 1 FROM trace_entry_other
 WHERE id <= :upper AND vr_replay_other(id, action, address, bytes, stream)
 ORDER BY id DESC LIMIT 1;

-- name: replay_event_rows
SELECT 1 FROM mem_event
 WHERE id > :lower AND id <= :upper AND vr_replay_event(id, bytes, addr) ORDER BY id DESC;

-- The device's last entry in each table: id, seq.
-- name: replay_last_other
SELECT id, seq FROM trace_entry_other
 WHERE +source_id = :source AND +device_id = :device ORDER BY id DESC LIMIT 1;

-- name: replay_last_event
SELECT id, seq FROM mem_event
 WHERE +source_id = :source AND +device_id = :device AND seq IS NOT NULL ORDER BY id DESC LIMIT 1;

-- Whether an oom row is the device's (1), and its seq.
-- name: replay_entry_owner
SELECT source_id = :source AND device_id = :device, seq FROM trace_entry_other WHERE id = :id;

-- name: set_oom_largest_free_block
UPDATE oom_event SET largest_free_block_bytes = :largest WHERE id = :oom;

-- name: insert_oom_fragmentation
INSERT INTO oom_fragmentation (oom_id, pool, stream, is_request_pool, segments,
                               expandable_segments, reserved_bytes, allocated_bytes,
                               free_bytes, largest_free_block_bytes, inactive_split_bytes,
                               internal_waste_bytes, unmatched_entries)
VALUES (:oom, :pool, :stream, :is_request, :segments, :expandable, :reserved, :allocated,
        :free, :largest, :split, :waste, :unmatched);

-- At each device's peak, the live allocations whose stacks are known,
-- grouped by the first frame outside torch (the user's line), largest
-- first: who held the memory when it ran highest. The live allocations
-- are summarise_devices' peak_live: no other row of allocation is read.
-- name: snapshot_sites
INSERT INTO alloc_site (device_id, frame_id, bytes, count, example_stack_id)
SELECT a.device_id, st.user_frame_id, sum(a.bytes), count(*), min(st.id)
  FROM temp.peak_live l
  JOIN allocation a ON a.id = l.id
  JOIN mem_event ae ON ae.id = a.alloc_event_id
  JOIN stack st ON st.id = ae.stack_id
 GROUP BY a.device_id, st.user_frame_id;

-- Last, in the analysis transaction: the derived tables match the sources.
-- (summarise_devices' peak_live is read by no later pass.)
-- name: mark_analysis_complete
DROP TABLE IF EXISTS temp.peak_live;
UPDATE analysis_state SET complete = 1,
       analysed_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now');

-- name: analysis_complete
SELECT complete FROM analysis_state;

-- The match_gpus pass owns gpu.device_id, gpu.match_rule and gpu_unmatched.
-- name: clear_gpu_match
UPDATE gpu SET device_id = NULL, match_rule = NULL WHERE device_id IS NOT NULL
    OR match_rule IS NOT NULL;
DELETE FROM gpu_unmatched;

-- Which of the job's devices an nvidia-smi GPU is. nvidia-smi numbers
-- GPUs physically, PyTorch after CUDA_VISIBLE_DEVICES, so the identity
-- decides: the UUID, else the PCI bus id (compared as the domain's number
-- and the rest, so '0000:18:00.0' is '00000000:18:00.0'), and only then
-- the index, when exactly one CUDA device with memory figures has it and
-- no identifier both sides give differs (one process, one host:
-- match_rule says so). A device two GPUs could be is matched by none of
-- them through that rule; a MIG instance is matched by its own UUID only.
--
-- Whatever the identity says, the readings are evidence about the device
-- only when they can be it at the job's time (docs/diagnosis.md, "Which
-- readings are the job's"): this is the one place that decides it, and
-- every use of a GPU's readings (a device's capacity, the diagnosis's
-- other processes, the timeline's nvidia-smi series, the verdict) goes
-- through gpu.device_id. A candidate is set aside:
-- - 'model' ("another GPU model"), when the device's capacity (its own,
--   else the largest an OOM message on it states) and the GPU's total
--   differ by more than 5 % (the driver's total is a little above CUDA's),
--   or what the job held at an OOM (free plus reserved) or at its peak
--   (reserved) is more than the GPU's total and 1 %, or, with no capacity
--   to compare, the device's model and the GPU's name differ (compared
--   without case, spaces, dashes, "NVIDIA" and a table's "..." cut: one
--   within the other); unless the other of the two agrees.
-- - 'time' ("268 days from the job"), when the readings (their first to
--   last stamp, on the common clock) end more than 10 minutes (the margin,
--   600000000000 ns below: a monitor started a little before the job or
--   stopped a little after it, clocks of two hosts apart by seconds) before
--   the job's span (the device's timeline and its OOMs) starts, or begin
--   more than 10 minutes after it ends. Without placed times on either side the
--   time cannot be judged and does not set a GPU aside.
-- The GPU, left untied, is written to gpu_unmatched with the candidate's
-- device and reason (the surest rule's, then the lowest device id).
-- name: match_gpus
CREATE TEMP TABLE gpu_candidate AS
SELECT g.id AS gpu_id, d.id AS device_id,
       CASE WHEN g.uuid = d.uuid THEN 'uuid'
            WHEN g.mig IS NULL AND (g.uuid IS NULL OR d.uuid IS NULL)
                 AND lower(substr(g.pci_bus_id, instr(g.pci_bus_id, ':') + 1))
                     = lower(substr(d.pci_bus_id, instr(d.pci_bus_id, ':') + 1))
                 AND ltrim(substr(g.pci_bus_id, 1, instr(g.pci_bus_id, ':') - 1), '0')
                     = ltrim(substr(d.pci_bus_id, 1, instr(d.pci_bus_id, ':') - 1), '0')
                THEN 'pci_bus_id'
            WHEN g.mig IS NULL AND d.platform = 'cuda' AND g.idx = d.idx
                 AND (g.uuid IS NULL OR d.uuid IS NULL)
                 AND (g.pci_bus_id IS NULL OR d.pci_bus_id IS NULL)
                 AND d.id IN (SELECT device_id FROM device_summary)
                THEN 'index'
       END AS rule,
       CAST(NULL AS TEXT) AS why_rule, CAST(NULL AS TEXT) AS why
  FROM gpu g JOIN device d;
DELETE FROM gpu_candidate WHERE rule IS NULL;
WITH gpu_side AS (
  SELECT g.id AS gpu_id,
         coalesce(g.memory_total_bytes,
                  (SELECT max(s.memory_total_bytes) FROM gpu_sample s WHERE s.gpu_id = g.id))
             AS total,
         nullif(replace(replace(replace(replace(lower(trim(g.name)), 'nvidia', ''), ' ', ''),
                                '-', ''), '...', ''), '') AS name,
         (SELECT min(s.ts_ns) + src.clock_offset_ns FROM gpu_sample s
           WHERE s.gpu_id = g.id AND s.ts_ns IS NOT NULL) AS lo,
         (SELECT max(s.ts_ns) + src.clock_offset_ns FROM gpu_sample s
           WHERE s.gpu_id = g.id AND s.ts_ns IS NOT NULL) AS hi
    FROM gpu g JOIN source src ON src.id = g.source_id
   WHERE g.id IN (SELECT gpu_id FROM gpu_candidate)
), job_time AS (
  SELECT ds.device_id, ds.start_ns + s.clock_offset_ns AS t
    FROM device_summary ds JOIN source s ON s.id = ds.source_id
   WHERE s.clock_offset_ns IS NOT NULL AND ds.start_ns IS NOT NULL
  UNION ALL
  SELECT ds.device_id, ds.end_ns + s.clock_offset_ns
    FROM device_summary ds JOIN source s ON s.id = ds.source_id
   WHERE s.clock_offset_ns IS NOT NULL AND ds.end_ns IS NOT NULL
  UNION ALL
  SELECT e.device_id, e.ts_ns + s.clock_offset_ns
    FROM oom_event e JOIN source s ON s.id = e.source_id
   WHERE s.clock_offset_ns IS NOT NULL AND e.ts_ns IS NOT NULL AND e.device_id IS NOT NULL
), device_side AS (
  SELECT d.id AS device_id,
         coalesce(d.capacity_bytes,
                  (SELECT max(e.capacity_bytes) FROM oom_event e WHERE e.device_id = d.id))
             AS capacity,
         max(coalesce((SELECT max(e.device_free_bytes + e.total_reserved) FROM oom_event e
                        WHERE e.device_id = d.id), 0),
             coalesce((SELECT ds.peak_reserved_bytes FROM device_summary ds
                        WHERE ds.device_id = d.id), 0)) AS held,
         nullif(replace(replace(replace(lower(trim(d.model)), 'nvidia', ''), ' ', ''), '-', ''),
                '') AS name,
         (SELECT min(t) FROM job_time j WHERE j.device_id = d.id) AS lo,
         (SELECT max(t) FROM job_time j WHERE j.device_id = d.id) AS hi
    FROM device d WHERE d.id IN (SELECT device_id FROM gpu_candidate)
), judged AS (
  SELECT c.gpu_id, c.device_id,
         CASE WHEN v.capacity IS NOT NULL AND g.total IS NOT NULL
                   THEN abs(v.capacity - g.total) <= g.total / 20
              WHEN g.total IS NOT NULL AND v.held > g.total + g.total / 100 THEN 0
         END AS size_agrees,
         CASE WHEN g.name IS NOT NULL AND v.name IS NOT NULL
                   THEN instr(g.name, v.name) > 0 OR instr(v.name, g.name) > 0
         END AS name_agrees,
         CASE WHEN g.lo IS NULL OR v.lo IS NULL THEN 0
              ELSE max(g.lo - v.hi, v.lo - g.hi, 0) END AS gap
    FROM gpu_candidate c JOIN gpu_side g ON g.gpu_id = c.gpu_id
    JOIN device_side v ON v.device_id = c.device_id
)
UPDATE gpu_candidate SET (why_rule, why) = (
    SELECT CASE WHEN (j.size_agrees = 0 OR j.name_agrees = 0)
                     AND coalesce(j.size_agrees, 0) + coalesce(j.name_agrees, 0) = 0
                     THEN 'model'
                WHEN j.gap > 600000000000 THEN 'time' END,
           CASE WHEN (j.size_agrees = 0 OR j.name_agrees = 0)
                     AND coalesce(j.size_agrees, 0) + coalesce(j.name_agrees, 0) = 0
                     THEN 'another GPU model'
                WHEN j.gap >= 86400000000000
                     THEN printf('%d days from the job', (j.gap + 43200000000000) / 86400000000000)
                WHEN j.gap >= 3600000000000
                     THEN printf('%d hours from the job', (j.gap + 1800000000000) / 3600000000000)
                WHEN j.gap > 600000000000
                     THEN printf('%d minutes from the job', (j.gap + 30000000000) / 60000000000)
           END
      FROM judged j WHERE j.gpu_id = gpu_candidate.gpu_id AND j.device_id = gpu_candidate.device_id);
-- The surest rule a GPU has a usable candidate by, and only when it is one
-- device.
UPDATE gpu SET (device_id, match_rule) = (
    SELECT min(c.device_id), c.rule FROM gpu_candidate c
     WHERE c.gpu_id = gpu.id AND c.why IS NULL
       AND c.rule = (SELECT x.rule FROM gpu_candidate x WHERE x.gpu_id = gpu.id AND x.why IS NULL
                      ORDER BY CASE x.rule WHEN 'uuid' THEN 0 WHEN 'pci_bus_id' THEN 1 ELSE 2 END
                      LIMIT 1)
     GROUP BY c.rule HAVING count(*) = 1)
 WHERE id IN (SELECT gpu_id FROM gpu_candidate WHERE why IS NULL);
INSERT INTO gpu_unmatched (gpu_id, device_id, rule, reason)
SELECT g.id, c.device_id, c.why_rule, c.why
  FROM gpu g JOIN gpu_candidate c ON c.rowid = (
         SELECT x.rowid FROM gpu_candidate x WHERE x.gpu_id = g.id AND x.why IS NOT NULL
          ORDER BY CASE x.rule WHEN 'uuid' THEN 0 WHEN 'pci_bus_id' THEN 1 ELSE 2 END,
                   x.device_id LIMIT 1)
 WHERE g.device_id IS NULL;
DROP TABLE gpu_candidate;

-- The forward_weights pass (weights.c) owns forward_weights.
-- name: clear_forward_weights
DELETE FROM forward_weights;

-- Whether any source has weight ops (else the pass has nothing to do).
-- name: any_op_weight
SELECT EXISTS (SELECT 1 FROM op_weight);

-- The weight ops that no other weight op encloses, each with its
-- innermost module call (module: the call's name id, "nn.Module:
-- Linear_3", one per instance; call: the call's op id), NULL outside
-- every module.
-- name: begin_weight_read
DROP TABLE IF EXISTS temp.weight_read;
CREATE TEMP TABLE weight_read (op_id INTEGER PRIMARY KEY, module_id INTEGER, call_id INTEGER);

-- name: insert_weight_read
INSERT INTO temp.weight_read (op_id, module_id, call_id) VALUES (:op, :module, :call);

-- The weight ops by source, thread and time (an enclosing op first).
-- name: select_weight_ops
SELECT o.source_id, o.pid, o.tid, o.ts_ns, o.dur_ns, 0, w.op_id
  FROM op_weight w JOIN op o ON o.id = w.op_id
 ORDER BY o.source_id, o.pid, o.tid, o.ts_ns, o.dur_ns DESC, o.id;

-- The module calls of the sources with weight ops, in the same order,
-- by op_python_source_thread_time; "nn.Module: " names through name's
-- own index (';' follows ':').
-- name: select_weight_modules
SELECT o.source_id, o.pid, o.tid, o.ts_ns, o.dur_ns, o.name_id, o.id
  FROM op o
 WHERE o.cat = 'python_function' AND o.pid IS NOT NULL AND o.tid IS NOT NULL
   AND o.source_id IN (SELECT DISTINCT source_id FROM op_weight)
   AND o.name_id IN (SELECT id FROM name WHERE text >= 'nn.Module: ' AND text < 'nn.Module;')
 ORDER BY o.source_id, o.pid, o.tid, o.ts_ns, o.dur_ns DESC, o.id;

-- One forward's weights per source: each module instance's call that
-- read the most (the first of equal ones), and the ops outside every
-- module that lie in the window: the source's first forward phase, else
-- its first ProfilerStep, else the whole trace. Sums saturate at
-- 2^63 - 1 (total() is exact below 2^53 bytes, 8 PiB). The tied
-- candidates: the aten::linear matrices of a shape and dtype that as many
-- embedding tables have, where no other linear has it (a head that may
-- share the embedding's matrix, not a position table the size of the
-- attention's matrices). The device: the one the source has memory
-- events on (NULL: none, or several). The parts are MATERIALIZED: a
-- join with one that is not computes it again for every row.
-- name: insert_forward_weights
INSERT INTO forward_weights (source_id, device_id, bytes, tensors, buffer_bytes, uncounted,
                             tied_candidate_bytes, ops, reads, modules, how)
WITH r AS MATERIALIZED (
    SELECT wr.op_id, wr.module_id, wr.call_id, w.source_id, w.bytes, w.tensors,
           w.buffer_bytes, w.uncounted, w.weight_bytes, w.shape, n.text AS op_name, o.ts_ns
      FROM temp.weight_read wr JOIN op_weight w ON w.op_id = wr.op_id
      JOIN op o ON o.id = wr.op_id JOIN name n ON n.id = o.name_id),
calls AS MATERIALIZED (
    SELECT source_id, module_id, call_id, total(bytes) AS b, min(op_id) AS first_op
      FROM r WHERE module_id IS NOT NULL GROUP BY source_id, module_id, call_id),
chosen AS MATERIALIZED (
    SELECT source_id, module_id, call_id
      FROM (SELECT source_id, module_id, call_id,
                   row_number() OVER (PARTITION BY source_id, module_id
                                      ORDER BY b DESC, first_op) AS rk FROM calls)
     WHERE rk = 1),
sources AS MATERIALIZED (SELECT DISTINCT source_id FROM r),
win AS MATERIALIZED (
    SELECT s.source_id,
           coalesce(f.start_ns, st.ts_ns, -9223372036854775808) AS lo,
           coalesce(f.end_ns, st.ts_ns + st.dur_ns, 9223372036854775807) AS hi,
           CASE WHEN f.start_ns IS NOT NULL THEN 'forward_phase'
                WHEN st.ts_ns IS NOT NULL THEN 'step' ELSE 'source' END AS how
      FROM sources s
      LEFT JOIN (SELECT source_id, start_ns, end_ns,
                        row_number() OVER (PARTITION BY source_id ORDER BY start_ns) AS rk
                   FROM phase WHERE kind = 'forward') f ON f.source_id = s.source_id AND f.rk = 1
      LEFT JOIN (SELECT source_id, ts_ns, dur_ns,
                        row_number() OVER (PARTITION BY source_id ORDER BY ts_ns, number) AS rk
                   FROM step) st ON st.source_id = s.source_id AND st.rk = 1),
counted AS MATERIALIZED (
    SELECT r.* FROM r WHERE r.call_id IN (SELECT call_id FROM chosen) -- an op id: one source's
    UNION ALL
    SELECT r.* FROM r JOIN win ON win.source_id = r.source_id
     WHERE r.module_id IS NULL AND r.ts_ns >= win.lo AND r.ts_ns <= win.hi),
tied AS (
    SELECT source_id, total(pairs * weight_bytes) AS b
      FROM (SELECT source_id, shape, max(weight_bytes) AS weight_bytes,
                   CASE WHEN sum(op_name = 'aten::linear') =
                             sum(op_name IN ('aten::embedding', 'aten::embedding_bag'))
                        THEN sum(op_name = 'aten::linear') ELSE 0 END AS pairs
              FROM counted WHERE shape IS NOT NULL GROUP BY source_id, shape)
     GROUP BY source_id),
figures AS (
    SELECT source_id, total(bytes) AS bytes, total(tensors) AS tensors,
           total(buffer_bytes) AS buffer_bytes, total(uncounted) AS uncounted, count(*) AS ops,
           sum(module_id IS NOT NULL) AS in_modules, sum(module_id IS NULL) AS outside
      FROM counted GROUP BY source_id)
SELECT s.source_id,
       (SELECT CASE WHEN count(*) = 1 THEN max(device_id) END
          FROM source_device d WHERE d.source_id = s.source_id),
       CASE WHEN coalesce(f.bytes, 0) >= 9223372036854775807.0 THEN 9223372036854775807
            ELSE CAST(coalesce(f.bytes, 0) AS INTEGER) END,
       CASE WHEN coalesce(f.tensors, 0) >= 9223372036854775807.0 THEN 9223372036854775807
            ELSE CAST(coalesce(f.tensors, 0) AS INTEGER) END,
       CASE WHEN coalesce(f.buffer_bytes, 0) >= 9223372036854775807.0 THEN 9223372036854775807
            ELSE CAST(coalesce(f.buffer_bytes, 0) AS INTEGER) END,
       CASE WHEN coalesce(f.uncounted, 0) >= 9223372036854775807.0 THEN 9223372036854775807
            ELSE CAST(coalesce(f.uncounted, 0) AS INTEGER) END,
       CASE WHEN coalesce(t.b, 0) >= 9223372036854775807.0 THEN 9223372036854775807
            ELSE CAST(coalesce(t.b, 0) AS INTEGER) END,
       coalesce(f.ops, 0),
       (SELECT count(*) FROM r WHERE r.source_id = s.source_id),
       (SELECT count(*) FROM chosen c WHERE c.source_id = s.source_id),
       CASE WHEN coalesce(f.outside, 0) = 0 THEN 'module'
            WHEN coalesce(f.in_modules, 0) = 0 THEN win.how
            ELSE 'module+' || win.how END
  FROM sources s JOIN win ON win.source_id = s.source_id
  LEFT JOIN figures f ON f.source_id = s.source_id
  LEFT JOIN tied t ON t.source_id = s.source_id;
DROP TABLE IF EXISTS temp.weight_read;

-- The phases pass (phases.c) owns phase.
-- name: clear_phases
DELETE FROM phase;

-- The phases pass reads each source's operators in time order, each
-- with its name's class and its thread's role, and phases.c gives it its
-- kind: 'optimizer' and 'zero_grad' (the optimizer's annotations,
-- user_annotation since 2022, cpu_op "Operator" before), 'backward'
-- (autograd's ops, and every op of autograd's own thread: a thread with
-- autograd::engine ops that is not the steps' thread), 'forward' (the
-- steps' main thread), 'loading' (copies and data loading on the main
-- thread: phases.c counts them as forward work only while a forward phase
-- is open). Ops of other threads say nothing. An allocator snapshot's ops
-- are its external_annotations: phases.c keeps their 'optimizer' and
-- 'zero_grad' for the snapshot's own phases (snapshot_phases.c), and drops
-- the rest. Names are classed once (class NULL: none of these), into a
-- table looked up by id.
-- name: begin_phase_names
DROP TABLE IF EXISTS temp.phase_name;
CREATE TEMP TABLE phase_name (id INTEGER PRIMARY KEY, class TEXT);
INSERT INTO temp.phase_name (id, class)
SELECT id, CASE WHEN text GLOB 'ProfilerStep#*' THEN 'step'
                WHEN text GLOB 'Optimizer.step#*' THEN 'optimizer'
                WHEN text GLOB 'Optimizer.zero_grad#*' THEN 'zero_grad'
                WHEN text GLOB 'autograd::engine::evaluate_function*' THEN 'engine'
                WHEN text GLOB '*Backward*' THEN 'backward'
                WHEN text GLOB 'enumerate(DataLoader)*'
                     OR text IN ('aten::to', 'aten::_to_copy', 'aten::copy_',
                                 'aten::empty_strided', 'aten::empty', 'aten::pin_memory',
                                 'aten::_pin_memory', 'aten::is_pinned') THEN 'loading'
            END AS class
  FROM name;

-- The threads with a role, by source: 'main' (the thread with the most
-- steps, the first by pid and tid of a tie) and 'autograd' (another with
-- engine ops). Only a thread with a step or an engine op can have one, so
-- the group holds those ops alone, not every op.
-- name: select_phase_roles
WITH threads AS MATERIALIZED (
    SELECT o.source_id, o.pid, o.tid, total(nm.class = 'step') AS steps,
           max(nm.class = 'engine') AS engine
      FROM op o CROSS JOIN temp.phase_name nm ON nm.id = o.name_id
     WHERE o.cat IN ('cpu_op', 'user_annotation') AND nm.class IN ('step', 'engine')
     GROUP BY o.source_id, o.pid, o.tid
), roles AS (
    SELECT source_id, pid, tid,
           CASE WHEN steps > 0 AND row_number() OVER (PARTITION BY source_id
                                                      ORDER BY steps DESC, pid, tid) = 1
                THEN 'main'
                WHEN engine THEN 'autograd' END AS role
      FROM threads
)
SELECT source_id, pid, tid, role FROM roles WHERE role IS NOT NULL ORDER BY source_id;

-- Every CPU op and annotation in time order with its name's class (NULL:
-- none): phases.c looks its thread's role up itself (a join here cost a
-- third of the pass on a 200 MB trace). Steps say no kind.
-- CROSS JOIN: one scan of op, each op's name looked up.
-- name: select_phase_ops
SELECT o.source_id, o.pid, o.tid, o.ts_ns, o.dur_ns, nm.class
  FROM op o CROSS JOIN temp.phase_name nm ON nm.id = o.name_id
 WHERE o.cat IN ('cpu_op', 'user_annotation') AND nm.class IS NOT 'step'
 ORDER BY o.source_id, o.ts_ns, o.dur_ns DESC, o.id;

-- name: end_phase_names
DROP TABLE IF EXISTS temp.phase_name;

-- The allocator snapshots (their phases come from their entries' stacks
-- and annotations: snapshot_phases.c), and the end of each one's record.
-- name: select_snapshot_sources
SELECT id, coalesce(end_ns, 0) FROM source
 WHERE format IN ('snapshot', 'snapshot_json') ORDER BY id;

-- The alloc entries, with their stacks, in table order (the import
-- writes a source's entries together, device by device, each device's in
-- the order of its record: one scan, no sort), each handed to
-- vr_snapshot_phase_entry() (snapshot_phases.c) as SQLite reads it, which
-- keeps the snapshots' (cheaper there than a look-up a row here): no row
-- comes back.
-- name: select_snapshot_phase_entries
SELECT id FROM mem_event NOT INDEXED
 WHERE bytes > 0 AND vr_snapshot_phase_entry(source_id, device_id, ts_ns, stack_id)
 ORDER BY id;

-- name: insert_phase
INSERT INTO phase (source_id, step, kind, tid, start_ns, end_ns)
VALUES (:source, :step, :kind, :tid, :start, :end);

-- name: select_phases
SELECT source_id, kind, start_ns, end_ns FROM phase ORDER BY source_id, start_ns;

-- The categorize pass (categorize.c) owns allocation.category,
-- alloc_phase, free_phase, category_rule, the frame_id of allocations with
-- a stack (allocation is rewritten by the timeline pass, so nothing is
-- left to clear) and analysis_state.category_rules.
-- The category rules of this analysis (src/analyze/analyze.c hands them
-- over at its start, already checked), read by the categorize pass.
-- name: begin_analysis_rules
CREATE TEMP TABLE IF NOT EXISTS analysis_rules (origin TEXT NOT NULL, text BLOB NOT NULL);
DELETE FROM temp.analysis_rules;

-- name: insert_analysis_rules
INSERT INTO temp.analysis_rules (origin, text) VALUES (:origin, CAST(:text AS BLOB));

-- --capacity, rewritten by each analysis (migration 27).
-- name: clear_capacity_given
DELETE FROM capacity_given;

-- name: insert_capacity_given
INSERT INTO capacity_given (id, bytes, said) VALUES (1, :bytes, :said);

-- Each device's capacity, one rule for every pass and the report
-- (migration 27): the device's own, else the largest total of the GPUs
-- match_gpus tied to it, else --capacity.
-- name: clear_capacities
DELETE FROM device_capacity;

-- name: capacities
INSERT INTO device_capacity (device_id, bytes, source)
SELECT d.id, coalesce(d.capacity_bytes, m.bytes, (SELECT bytes FROM capacity_given)),
       CASE WHEN d.capacity_bytes IS NOT NULL THEN 'device'
            WHEN m.bytes IS NOT NULL THEN 'nvidia-smi'
            WHEN EXISTS (SELECT 1 FROM capacity_given) THEN '--capacity' END
  FROM device d
  LEFT JOIN (SELECT device_id, max(memory_total_bytes) AS bytes FROM gpu
              WHERE device_id IS NOT NULL GROUP BY device_id) m ON m.device_id = d.id;

-- The capacity the last analysis was given, 0 without one.
-- name: analysis_capacity_given
SELECT coalesce((SELECT bytes FROM capacity_given), 0);

-- name: select_analysis_rules
SELECT origin, text FROM temp.analysis_rules;

-- The trace_kv_cache pass (kv_modules.c): a trace's allocations in a
-- module path that the phase and lifetime rules called temporary or kept
-- (the built-in rules' names), made in the forward and freed in it or
-- never; kv_modules.c keeps those of an attention module that outlive
-- their layer. By source, so that one source's module extents are read
-- at a time.
-- name: kv_candidates
SELECT id, source_id, module, free_ts_ns FROM allocation
 WHERE module IS NOT NULL AND category_rule IN ('temporary-in-phase', 'forward-kept')
   AND alloc_phase = 'forward' AND (free_ts_ns IS NULL OR free_phase = 'forward')
 ORDER BY source_id, module, id;

-- When each module path of a source made its first and last allocation.
-- name: kv_module_extents
SELECT module, min(alloc_ts_ns), max(alloc_ts_ns) FROM allocation
 WHERE source_id = :source AND module IS NOT NULL
 GROUP BY module ORDER BY module;

-- name: set_trace_kv_cache
UPDATE allocation SET category = 'kv_cache', category_rule = 'trace-kv-cache'
 WHERE id = :allocation;

-- Every allocation's results in one UPDATE: vr_categorize() (categorize.c)
-- decides the allocation from these columns and returns its category, and
-- vr_categorized() the other results of that allocation (it must come
-- after it in the subquery's columns, which SQLite evaluates once a row,
-- in order). The same rewrite of the row writes frame_id: a stack's user
-- frame (snapshots), else the locate pass's. Every allocation has its
-- alloc event (the timeline pass paired it from there). The op's name and
-- the free event's op are looked up only for an allocation with an op (a
-- snapshot's have none); the free event's op is compared with the
-- allocating op (same_op). A join in the subquery for them (LEFT JOIN
-- from a constant row) cost a third more than these lookups.
-- Only the rows still without a category: a pass that writes allocation
-- rows may decide them as it writes them (categorize.h), and such a row,
-- written at its final size, is not rewritten here (the timeline pass
-- rewrites every row before, so none is left from an earlier analysis).
-- name: any_undecided_allocation
SELECT EXISTS (SELECT 1 FROM allocation WHERE category IS NULL);

-- name: categorize_allocations
UPDATE allocation
   SET (category, alloc_phase, free_phase, category_rule, frame_id) = (
       SELECT vr_categorize(allocation.id, allocation.source_id, allocation.alloc_ts_ns,
                            allocation.free_ts_ns, allocation.op_id,
                            CASE WHEN allocation.op_id IS NOT NULL
                                 THEN (SELECT o.name_id FROM op o
                                        WHERE o.id = allocation.op_id) END,
                            CASE WHEN allocation.op_id IS NOT NULL
                                 THEN (SELECT fe.op_id FROM mem_event fe
                                        WHERE fe.id = allocation.free_event_id) END,
                            ae.stack_id, ae.category, allocation.frame_id),
              vr_categorized(allocation.id, 1), vr_categorized(allocation.id, 2),
              vr_categorized(allocation.id, 3), vr_categorized(allocation.id, 4)
         FROM mem_event ae WHERE ae.id = allocation.alloc_event_id)
 WHERE category IS NULL;

-- A stack's first frame outside torch and the rules' bits of its frames
-- (vr_frames_mask(), categorize.c, ORs each frame's), and a frame's
-- function and file or an op's name for the rules' globs: read only for
-- a stack, frame or name not in categorize.c's caches (a snapshot's
-- allocations share some tens of thousands of stacks over a few thousand
-- frames).
-- Every stack, frame and stack frame in one scan each (categorize.c
-- preload_stacks), when their ids are few enough to be held by id.
-- name: stack_frame_extent
SELECT (SELECT ifnull(max(id), 0) FROM stack), (SELECT ifnull(max(id), 0) FROM frame);

-- name: scan_frames_for_rules
SELECT f.id, fn.text, ff.text
  FROM frame f
  JOIN name fn ON fn.id = f.function_id
  JOIN name ff ON ff.id = f.filename_id;

-- name: scan_stacks_for_rules
SELECT id, user_frame_id FROM stack;

-- name: scan_stack_frames_for_rules
SELECT stack_id, frame_id, position FROM stack_frame;

-- name: select_stack_for_rules
SELECT s.user_frame_id, vr_frames_mask(sf.frame_id), vr_frames_roles(sf.position, sf.frame_id)
  FROM stack s LEFT JOIN stack_frame sf ON sf.stack_id = s.id
 WHERE s.id = :stack;

-- An op's name, for an allocation decided one at a time (categorize.h).
-- name: select_op_name_for_rules
SELECT name_id FROM op WHERE id = :op;

-- name: select_name_for_rules
SELECT text FROM name WHERE id = :name;

-- name: select_frame_for_rules
SELECT fn.text, ff.text
  FROM frame f
  JOIN name fn ON fn.id = f.function_id
  JOIN name ff ON ff.id = f.filename_id
 WHERE f.id = :frame;

-- name: set_category_rules_digest
UPDATE analysis_state SET category_rules = :digest;

-- The rules the current analysis was made with (NULL: none yet).
-- name: analysis_category_rules
SELECT category_rules FROM analysis_state;

-- The phase_peaks pass (phases.c) owns phase_peak.
-- name: clear_phase_peaks
DELETE FROM phase_peak;

-- The chosen (device, source) pairs whose source has phases, in the
-- report's order: only they have phase peaks.
-- name: select_phase_peak_groups
SELECT device_id, source_id FROM device_axis
 WHERE source_id IN (SELECT source_id FROM phase)
 ORDER BY device_id, position;

-- Allocated totals in table order, each handed to vr_phase_peak_event()
-- (phases.c) as SQLite reads the row, which keeps those of the pairs
-- above (a read in time order seeks the table a row: three times the
-- cost). Not read when no pair has phases.
-- name: select_chosen_totals
SELECT id FROM mem_event NOT INDEXED
 WHERE total_allocated IS NOT NULL
   AND vr_phase_peak_event(device_id, source_id, ts_ns, total_allocated)
 ORDER BY id;

-- name: insert_phase_peak
INSERT INTO phase_peak (device_id, source_id, step, phase, peak_allocated_bytes, peak_ts_ns)
VALUES (:device, :source, :step, :phase, :peak, :peak_ts);

-- The diagnose pass (src/analyze/diagnose.c) owns finding.
-- name: clear_findings
DELETE FROM finding;
DELETE FROM oom_twin;

-- An OOM event that tells again the OOM of its group's first (diagnose.c).
-- name: insert_oom_twin
INSERT OR REPLACE INTO oom_twin (oom_id, first_id) VALUES (:oom, :first);

-- The OOM events on one clock, indexed by source and time, for
-- diagnose_ooms' twin search (dropped by diagnose_oom_times_done).
-- name: diagnose_oom_times
DROP TABLE IF EXISTS temp.oom_time;
CREATE TEMP TABLE oom_time (id INTEGER PRIMARY KEY, source_id INTEGER, req INTEGER,
                            t INTEGER, idx INTEGER, rk INTEGER, dump INTEGER);
INSERT INTO temp.oom_time (id, source_id, req, t, idx, rk, dump)
SELECT e.id, e.source_id, e.requested_bytes, e.ts_ns + coalesce(s.clock_offset_ns, 0),
       coalesce(d.idx, e.device_idx), coalesce(e.rank, nullif(d.rank, -1), s.rank),
       coalesce(e.wording IN ('memory_summary', 'memory_stats'), 0)
  FROM oom_event e JOIN source s ON s.id = e.source_id
  LEFT JOIN device d ON d.id = e.device_id;
CREATE INDEX temp.oom_time_by_source_t ON oom_time (source_id, t);

-- name: diagnose_oom_times_done
DROP TABLE IF EXISTS temp.oom_time;

-- Each OOM event with the figures its own source gives. A snapshot's
-- totals are the replay's (oom_fragmentation, summed over pools) when
-- it ran; its request pool gives the free cache and the largest free
-- block the request could have used (the job-log reader stores the old
-- 'cached' wording's figure as reserved minus allocated, which is what
-- PyTorch printed, and reserved as allocated plus it). capacity: the
-- message's, else the device's own, else the matched nvidia-smi GPU's.
-- twin_of: one OOM said by two sources (a trace's [OutOfMemory] and the
-- log's message, a snapshot's oom entry): the first event of another
-- source with the same request (within the message's rounding, 1 %),
-- within :window ns, on the same device index and rank where both say;
-- the pass merges their figures into one finding. Rows come by group,
-- the group's first event first.
-- One source with OOMs (the common case: a log of 30,000 of them) has no
-- twins: the search is skipped; the condition is computed once. Else each
-- OOM looks, in each other source, at the :near events nearest before it
-- and the :near nearest from its time on, within :window (two walks of
-- oom_time_by_source_t, each cut by its LIMIT): two sources of thousands
-- of OOMs in the same seconds looked at every pair (115 s of CPU for two
-- logs of 8,000 errors in one second, 1.1 s this way). Where a source
-- has no more than :near events on each side of it in the window, that is
-- every candidate. The sources with OOMs: a CTE materialized once (a
-- second temporary table spilled the temporary database to its file).
-- name: diagnose_ooms
WITH src AS MATERIALIZED (SELECT DISTINCT source_id AS sid FROM temp.oom_time),
twin AS (
  SELECT a.id,
         CASE WHEN (SELECT count(*) FROM src) > 1 THEN
         (SELECT min((SELECT min(c.id)
                        FROM (SELECT * FROM (SELECT b.id, b.req, b.idx, b.rk FROM temp.oom_time b
                                              WHERE b.source_id = p.sid AND b.t < a.t
                                                AND b.t >= a.t - :window
                                              ORDER BY b.t DESC LIMIT :near)
                              UNION ALL
                              SELECT * FROM (SELECT b.id, b.req, b.idx, b.rk FROM temp.oom_time b
                                              WHERE b.source_id = p.sid AND b.t >= a.t
                                                AND b.t <= a.t + :window
                                              ORDER BY b.t LIMIT :near)) c
                       WHERE c.id < a.id AND abs(c.req - a.req) <= max(a.req, c.req) / 100
                         AND (a.idx IS NULL OR c.idx IS NULL OR a.idx = c.idx)
                         AND (a.rk IS NULL OR c.rk IS NULL OR a.rk = c.rk)))
            FROM src p WHERE p.sid <> a.source_id) END AS twin_of
    FROM temp.oom_time a),
-- An allocator dump's count of its OOMs (no time, no request) tells again
-- the OOM another source tells of the same device index and rank: the
-- first such event, whichever was imported first.
dump AS (
  SELECT a.id,
         (SELECT min(c.id) FROM temp.oom_time c
           WHERE c.source_id <> a.source_id AND NOT c.dump
             AND (a.idx IS NULL OR c.idx IS NULL OR a.idx = c.idx)
             AND (a.rk IS NULL OR c.rk IS NULL OR a.rk = c.rk)) AS twin_of
    FROM temp.oom_time a
   WHERE a.dump AND (SELECT count(*) FROM src) > 1)
SELECT e.id AS oom_id, e.device_id AS device_id,
       coalesce(d.label, 'cuda:' || e.device_idx, 'the GPU') AS label,
       e.ts_ns + coalesce(s.clock_offset_ns, 0) AS ts_ns,
       coalesce(e.rank, nullif(d.rank, -1), s.rank, -1) AS rank,
       CASE s.format WHEN 'job_log' THEN 'log' WHEN 'kineto' THEN 'trace'
                     WHEN 'snapshot_json' THEN 'snapshot' ELSE s.format END AS source,
       e.requested_bytes AS requested,
       coalesce((SELECT sum(x.allocated_bytes) FROM oom_fragmentation x WHERE x.oom_id = e.id),
                e.total_allocated) AS allocated,
       coalesce((SELECT sum(x.reserved_bytes) FROM oom_fragmentation x WHERE x.oom_id = e.id),
                e.total_reserved) AS reserved,
       e.device_free_bytes AS free,
       coalesce(e.allowed_bytes, e.capacity_bytes) AS capacity_own,
       (SELECT c.bytes FROM device_capacity c WHERE c.device_id = e.device_id)
           AS capacity_device,
       f.free_bytes AS pool_free,
       coalesce(f.largest_free_block_bytes, e.largest_free_block_bytes) AS largest_free_block,
       e.allowed_bytes IS NOT NULL AS has_allowed,
       coalesce(tw.twin_of, dm.twin_of) AS twin_of,
       (SELECT c.source FROM device_capacity c WHERE c.device_id = e.device_id)
           AS capacity_device_from,
       e.wording AS wording
  FROM oom_event e JOIN source s ON s.id = e.source_id
  JOIN twin tw ON tw.id = e.id
  LEFT JOIN dump dm ON dm.id = e.id
  LEFT JOIN device d ON d.id = e.device_id
  LEFT JOIN oom_fragmentation f ON f.oom_id = e.id AND f.is_request_pool = 1
 ORDER BY coalesce(tw.twin_of, dm.twin_of, e.id), coalesce(tw.twin_of, dm.twin_of) IS NOT NULL,
          e.id;

-- The processes an OOM message lists (pid NULL: "this process"), with
-- how many lines have a pid and how many there are (a lone "Process N").
-- name: diagnose_oom_processes
SELECT pid, used_bytes, count(pid) OVER () AS pids, count(*) OVER () AS lines
  FROM oom_process WHERE oom_id = :oom ORDER BY used_bytes DESC;

-- The nvidia-smi reading of the OOM's GPU nearest to its time, within
-- :window ns, and the processes listed with it (and, as for a message's,
-- how many rows have a pid and how many have a figure).
-- name: diagnose_smi_processes
WITH nearest AS (
  SELECT gs.id, gs.memory_used_bytes
    FROM gpu g JOIN source s ON s.id = g.source_id
    JOIN gpu_sample gs ON gs.gpu_id = g.id
     AND gs.ts_ns BETWEEN :ts - coalesce(s.clock_offset_ns, 0) - :window
                      AND :ts - coalesce(s.clock_offset_ns, 0) + :window
   WHERE g.device_id = :device
   ORDER BY abs(gs.ts_ns + coalesce(s.clock_offset_ns, 0) - :ts), gs.id LIMIT 1)
SELECT n.memory_used_bytes, p.pid, p.used_bytes, count(p.pid) OVER () AS pids,
       count(p.used_bytes) OVER () AS rows_used
  FROM nearest n LEFT JOIN process_sample p ON p.sample_id = n.id
 ORDER BY p.used_bytes DESC;

-- A merged job's rank-imbalance findings (each rank's own, copied), to be
-- made again over all its ranks (vr_analyze_rank_imbalance).
-- name: clear_rank_imbalance
DELETE FROM advice WHERE finding_id IN (SELECT id FROM finding WHERE kind = 'rank-imbalance');
DELETE FROM finding WHERE kind = 'rank-imbalance';

-- Devices whose peak came near their capacity, without an OOM.
-- name: diagnose_peaks
SELECT d.id AS device_id, d.label, d.rank,
       ds.peak_allocated_ts_ns + coalesce(s.clock_offset_ns, 0) AS ts_ns,
       ds.peak_allocated_bytes, ds.peak_reserved_bytes,
       c.bytes AS capacity, c.source AS capacity_source,
       (SELECT count(*) FROM oom_event e WHERE e.device_id = d.id) AS ooms
  FROM device_summary ds JOIN device d ON d.id = ds.device_id
  JOIN device_capacity c ON c.device_id = d.id
  LEFT JOIN source s ON s.id = ds.source_id
 ORDER BY d.rank, d.idx;

-- Allocator dumps (memory_stats, memory_summary) whose peak reserved (else
-- allocated) is at 90 % of the --capacity given or more, without an OOM
-- counted in the dump (diagnose.c, diagnose_dump_peaks). label: what
-- made the dump.
-- name: diagnose_dump_peaks
SELECT * FROM (
SELECT CASE s.format WHEN 'memory_summary' THEN 'memory_summary()'
                       ELSE 'memory_stats()' END AS label,
       coalesce(max(CASE a.key WHEN 'allocated_bytes.all.peak' THEN a.value END), 0) AS alloc,
       coalesce(max(CASE a.key WHEN 'reserved_bytes.all.peak' THEN a.value END), 0) AS res,
       g.bytes AS cap, s.format AS format,
       coalesce(max(CASE a.key WHEN 'num_ooms' THEN a.value END), 0) AS ooms
  FROM allocator_stat a JOIN source s ON s.id = a.source_id CROSS JOIN capacity_given g
 GROUP BY a.source_id, a.dump)
 WHERE ooms = 0 AND max(res, alloc) * 10 >= cap * 9;

-- GPUs the bound pass found capacity-bound by their readings alone (no
-- OOM of the GPU or its device), whose device has no near-capacity
-- finding of its own peak (diagnose.c, diagnose_full_readings). The
-- label: the device's, else "GPU N" of the monitoring source.
-- name: diagnose_full_readings
SELECT b.device_id, coalesce(d.label, 'GPU ' || coalesce(g.idx, '?')) AS label,
       coalesce(nullif(d.rank, -1), -1) AS rank, b.capacity_bytes, b.memory_full_readings,
       b.memory_readings,
       (SELECT max(s.memory_used_bytes) FROM gpu_sample s WHERE s.gpu_id = b.gpu_id),
       coalesce(b.reported_name, '')
  FROM bandwidth_or_capacity b
  LEFT JOIN device d ON d.id = b.device_id
  LEFT JOIN gpu g ON g.id = b.gpu_id
 WHERE b.verdict = 'capacity-bound' AND b.ooms = 0 AND b.memory_full_readings > 0
   AND b.capacity_bytes > 0
   -- readings set aside as not the job's (another model, another time)
   -- are evidence of nothing
   AND (b.gpu_id IS NULL OR b.gpu_id NOT IN (SELECT gpu_id FROM gpu_unmatched))
   AND (b.device_id IS NULL OR NOT EXISTS (
        SELECT 1 FROM finding f WHERE f.kind = 'near-capacity' AND f.device_id = b.device_id))
   AND (b.device_id IS NULL OR NOT EXISTS (
        SELECT 1 FROM oom_event e WHERE e.device_id = b.device_id))
 ORDER BY b.id;

-- Figures of the inputs that contradict each other (diagnose.c,
-- diagnose_suspect): memory used above the GPU's total in a reading;
-- a device's peak allocated above its peak reserved, or an OOM's
-- allocated above its reserved (the allocator's tensors live in what it
-- reserved); a device's peak reserved above the capacity its inputs give
-- (not --capacity: a what-if); a copy faster than the GPU's peak
-- bandwidth. what: the kind
-- of contradiction; a, b: the two figures (a should not exceed b);
-- n: how many readings or rows show it; about: the file or the copy.
-- name: diagnose_suspect
SELECT NULL AS device_id, 'GPU ' || coalesce(g.idx, '?') AS label, 'used-above-total' AS what,
       max(s.memory_used_bytes) AS a, max(s.memory_total_bytes) AS b, count(*) AS n,
       src.path AS about
  FROM gpu_sample s JOIN gpu g ON g.id = s.gpu_id JOIN source src ON src.id = g.source_id
 WHERE s.memory_total_bytes > 0 AND s.memory_used_bytes > s.memory_total_bytes
 GROUP BY g.id
UNION ALL
SELECT d.id, d.label, 'allocated-above-reserved', ds.peak_allocated_bytes,
       ds.peak_reserved_bytes, 1, NULL
  FROM device_summary ds JOIN device d ON d.id = ds.device_id
 WHERE ds.peak_reserved_bytes > 0 AND ds.peak_allocated_bytes > ds.peak_reserved_bytes
UNION ALL
SELECT d.id, d.label, 'reserved-above-capacity', ds.peak_reserved_bytes, c.bytes, 1,
       CASE c.source WHEN 'device' THEN 'the capacity an OOM message or the file states'
                     ELSE 'the total nvidia-smi read' END
  FROM device_summary ds JOIN device d ON d.id = ds.device_id
  JOIN device_capacity c ON c.device_id = d.id
 WHERE c.source IN ('device', 'nvidia-smi') AND c.bytes > 0
   AND ds.peak_reserved_bytes > c.bytes
UNION ALL
SELECT e.device_id, coalesce(d.label, 'an OOM'), 'oom-allocated-above-reserved',
       e.total_allocated, e.total_reserved, 1, src.path
  FROM oom_event e JOIN source src ON src.id = e.source_id
  LEFT JOIN device d ON d.id = e.device_id
 WHERE e.total_reserved > 0 AND e.total_allocated > e.total_reserved
UNION ALL
SELECT b.device_id, coalesce(d.label, 'GPU ' || coalesce(g.idx, '?')), 'copy-above-peak',
       b.best_copy_bytes_per_s, b.bandwidth_bytes_per_s, 1, b.best_copy_name
  FROM bandwidth_or_capacity b
  LEFT JOIN device d ON d.id = b.device_id
  LEFT JOIN gpu g ON g.id = b.gpu_id
 WHERE b.best_copy_share > 1.0;

-- The devices with a peak, by process (device_imbalance.c): one (rank,
-- scope) is one process, the same rank or, for a source that names none,
-- the same source; only processes of two devices or more.
-- name: device_imbalance_devices
SELECT d.id AS device_id, d.label, d.rank, d.scope, ds.peak_allocated_bytes,
       ds.peak_allocated_ts_ns + coalesce(s.clock_offset_ns, 0) AS ts_ns
  FROM device_summary ds JOIN device d ON d.id = ds.device_id
  LEFT JOIN source s ON s.id = ds.source_id
 WHERE ds.peak_allocated_bytes > 0
   AND (SELECT count(*) FROM device x JOIN device_summary y ON y.device_id = x.id
         WHERE x.rank = d.rank AND x.scope = d.scope AND y.peak_allocated_bytes > 0) >= 2
 ORDER BY d.rank, d.scope, d.idx, d.id;

-- The site whose bytes live at the two devices' peaks differ most: by
-- the stack's user frame (kind 1: a snapshot's, alloc_site), else by
-- module (2: a trace's with_modules path, allocation.module), else by
-- operator (3), the first kind either device has; a site on one device
-- only counts 0 on the other. name_json: the name as a JSON string.
-- name: device_imbalance_site
WITH site AS (
    SELECT 1 AS kind, CAST(frame_id AS TEXT) AS key, device_id, bytes FROM alloc_site
     WHERE device_id IN (:high, :low) AND frame_id IS NOT NULL
    UNION ALL
    SELECT 2, a.module, l.device_id, l.bytes FROM temp.peak_live l
      JOIN allocation a ON a.id = l.id
     WHERE l.device_id IN (:high, :low) AND a.module IS NOT NULL
    UNION ALL
    SELECT 3, n.text, l.device_id, l.bytes FROM temp.peak_live l
      JOIN allocation a ON a.id = l.id JOIN op o ON o.id = a.op_id JOIN name n ON n.id = o.name_id
     WHERE l.device_id IN (:high, :low)
), per AS (
    SELECT kind, key, CAST(total(CASE WHEN device_id = :high THEN bytes END) AS INTEGER) AS hb,
           CAST(total(CASE WHEN device_id = :low THEN bytes END) AS INTEGER) AS lb
      FROM site WHERE kind = (SELECT min(kind) FROM site) GROUP BY kind, key
), best AS (
    SELECT * FROM per ORDER BY abs(hb - lb) DESC, key LIMIT 1
), named AS (
    SELECT kind, hb, lb,
           CASE kind WHEN 1 THEN (SELECT fn.text || ':' || f.line || ' in ' || fu.text
                                    FROM frame f JOIN name fn ON fn.id = f.filename_id
                                    JOIN name fu ON fu.id = f.function_id
                                   WHERE f.id = CAST(key AS INTEGER))
                     ELSE key END AS name
      FROM best
)
SELECT kind, name, json_quote(name) AS name_json, hb, lb FROM named WHERE name IS NOT NULL;

-- name: insert_finding
INSERT INTO finding (device_id, kind, severity, title, detail, data, oom_id, ts_ns, rank,
                     confidence, secondary)
VALUES (:device, :kind, :severity, :title, :detail, :data, :oom, :ts, :rank, :confidence,
        :secondary);

-- Findings of the kinds --fail-on names (comma-separated; 'any': all).
-- name: count_findings
SELECT count(*) FROM finding
 WHERE :kinds = 'any' OR instr(',' || :kinds || ',', ',' || kind || ',') > 0;

-- A device's steps in order, per source: allocated at each step's end.
-- name: diagnose_steps
SELECT source_id, step, end_allocated_bytes FROM step_summary
 WHERE device_id = :device AND end_allocated_bytes IS NOT NULL
 ORDER BY source_id, step;

-- The memory prints of an OOM's log before it, for the leak
-- rule: per printing code (series), one point per step (its last print)
-- or per print where the log gives no step; the value is allocated, else
-- the peak printed. Prints of another rank or device are not the OOM's.
-- The OOM's prints are read by the series index (memory_print_series,
-- migration 20), a seek for each device and rank that can be the OOM's
-- (its own or none): a scan of the log's prints for each OOM cost prints
-- x OOMs (30 s for 48,000 prints of 4,000 ranks beside 3,000 errors).
-- Only an OOM that names no device still reads all of its log's prints.
-- name: diagnose_print_steps
WITH o AS (SELECT source_id, line, rank, device_id FROM oom_event WHERE id = :oom),
m AS MATERIALIZED (
  SELECT m.* FROM o JOIN memory_print m ON m.source_id = o.source_id
     AND m.device_id = o.device_id AND m.rank = o.rank AND +m.line < o.line
  UNION ALL
  SELECT m.* FROM o JOIN memory_print m ON m.source_id = o.source_id
     AND m.device_id = o.device_id AND m.rank IS NULL AND +m.line < o.line
   WHERE o.rank IS NOT NULL
  UNION ALL
  SELECT m.* FROM o JOIN memory_print m ON m.source_id = o.source_id
     AND m.device_id IS NULL AND m.rank = o.rank AND +m.line < o.line
   WHERE o.device_id IS NOT NULL
  UNION ALL
  SELECT m.* FROM o JOIN memory_print m ON m.source_id = o.source_id
     AND m.device_id IS NULL AND m.rank IS NULL AND +m.line < o.line
   WHERE o.device_id IS NOT NULL AND o.rank IS NOT NULL
  UNION ALL
  SELECT m.* FROM o JOIN memory_print m ON m.source_id = o.source_id
     AND m.device_id = o.device_id AND +m.line < o.line
   WHERE o.rank IS NULL
  UNION ALL
  SELECT m.* FROM o JOIN memory_print m ON m.source_id = o.source_id
     AND m.device_id IS NULL AND +m.line < o.line
   WHERE o.device_id IS NOT NULL AND o.rank IS NULL
  UNION ALL
  SELECT m.* FROM o JOIN memory_print m ON m.source_id = o.source_id AND m.line < o.line
   WHERE o.device_id IS NULL AND (o.rank IS NULL OR m.rank IS NULL OR m.rank = o.rank)),
p AS MATERIALIZED (
  SELECT m.framework || ', ' || m.figure AS series, m.step, m.epoch, m.line,
         coalesce(m.allocated_bytes, m.max_allocated_bytes) AS v
    FROM m)
SELECT series, coalesce(step, line) AS point, v, step IS NOT NULL AS stepped FROM p
 WHERE step IS NULL
    OR line = (SELECT max(q.line) FROM p q
                WHERE q.series = p.series AND q.step = p.step AND q.epoch IS p.epoch)
 ORDER BY series, line;

-- Memory prints no OOM explains (a leak without an OOM, docs/diagnosis.md): per
-- log, rank and device the prints name, where that log has no OOM of
-- theirs, no device of theirs ran out of memory, and the timeline has
-- not already found a leak there (diagnose_peaks' leak findings come
-- first; a rankless log's "cuda:0" is its own device row, so the same
-- label and rank count as the device). ts_ns: the last print's, on the
-- report's clock. The tests are of the group, so they are made once a
-- group, against the OOMs' distinct source, rank and device (made once):
-- made for each print against each OOM, they cost prints x OOMs (48 s
-- for 48,000 prints of 4,000 ranks beside 3,000 errors).
-- name: diagnose_print_groups
WITH oom_of AS MATERIALIZED (SELECT DISTINCT source_id, rank, device_id FROM oom_event)
SELECT m.source_id, m.rank, m.device_id, d.label,
       max(m.ts_ns) + coalesce(s.clock_offset_ns, 0) AS ts_ns
  FROM memory_print m JOIN source s ON s.id = m.source_id
  LEFT JOIN device d ON d.id = m.device_id
 GROUP BY m.source_id, m.rank, m.device_id
HAVING NOT EXISTS (SELECT 1 FROM oom_of o WHERE o.source_id = m.source_id
                      AND (o.rank IS NULL OR m.rank IS NULL OR o.rank = m.rank)
                      AND (o.device_id IS NULL OR m.device_id IS NULL OR o.device_id = m.device_id))
   AND NOT EXISTS (SELECT 1 FROM oom_event o WHERE o.device_id = m.device_id)
   AND NOT EXISTS (SELECT 1 FROM finding f LEFT JOIN device fd ON fd.id = f.device_id
                    WHERE f.kind = 'leak' AND f.oom_id IS NULL
                      AND (m.device_id IS NULL OR f.device_id = m.device_id
                           OR (fd.label = d.label AND fd.rank = d.rank))
                      AND (m.rank IS NULL OR f.rank = m.rank))
 ORDER BY m.source_id, m.rank, m.device_id;

-- Every group's prints (diagnose_print_groups) as diagnose_print_steps
-- gives an OOM's, in one read of memory_print: per printing code, one
-- point per step (its last print: the first of its step, epoch and code
-- counted from the end) or per print; ordered by group (source, rank,
-- device, as diagnose_print_groups), then code, then line. Columns 4-6
-- name the group.
-- name: diagnose_all_group_print_steps
WITH p AS (
  SELECT m.source_id, m.rank, m.device_id, m.framework || ', ' || m.figure AS series,
         m.step, m.line, coalesce(m.allocated_bytes, m.max_allocated_bytes) AS v,
         row_number() OVER (PARTITION BY m.source_id, m.rank, m.device_id, m.framework,
                                         m.figure, m.step, m.epoch
                            ORDER BY m.line DESC) AS from_end
    FROM memory_print m
   WHERE coalesce(m.allocated_bytes, m.max_allocated_bytes) IS NOT NULL)
SELECT series, coalesce(step, line) AS point, v, step IS NOT NULL AS stepped,
       source_id, rank, device_id
  FROM p
 WHERE step IS NULL OR from_end = 1
 ORDER BY source_id, rank, device_id, series, line;

-- Allocations made during steps :first..:last of a source on a device
-- and never freed in it, by the operator that made them (the leak's sites).
-- The allocations never freed are picked first, in one scan: joined to
-- the steps directly, SQLite scanned every allocation once a step (3.7 s
-- of a 1.1 GB trace's 223 steps and 300,000 allocations; 0.03 s so).
-- name: diagnose_leak_sites
WITH a AS MATERIALIZED (
  SELECT alloc_ts_ns, bytes, op_id FROM allocation
   WHERE device_id = :device AND source_id = :source AND free_ts_ns IS NULL)
SELECT coalesce(n.text, '(no operator)') AS site, count(*) AS allocations,
       sum(a.bytes) AS bytes
  FROM a
  JOIN step st ON st.source_id = :source AND st.number BETWEEN :first AND :last
               AND a.alloc_ts_ns >= st.ts_ns AND a.alloc_ts_ns < st.ts_ns + st.dur_ns
  LEFT JOIN op o ON o.id = a.op_id LEFT JOIN name n ON n.id = o.name_id
 GROUP BY site ORDER BY bytes DESC, site LIMIT 3;

-- The advise pass (src/analyze/advise.c) owns advice; its catalogue is
-- schemas/remedies.sql, whose blocks read the facts below.
-- name: clear_advice
DELETE FROM advice;

-- One row of facts per finding, for the remedies' triggers and savings
-- (docs/remedies.md): the finding's own evidence (the JSON diagnose
-- wrote), its device's categories at the peak (peak_category), the
-- device's peak (device_summary), the job's ranks, phases and modules.
-- Bytes are 0 where a category holds none, NULL where a figure is unknown.
-- name: advise_facts
DROP TABLE IF EXISTS temp.advice_facts;
CREATE TEMP TABLE advice_facts AS
WITH ev AS (
    SELECT f.id AS finding_id, f.kind, f.oom_id IS NOT NULL AS is_oom, f.device_id,
           (f.kind = 'fragmentation' OR instr(f.secondary, '"fragmentation"') > 0) AS fragmented,
           (f.kind = 'other-process' OR instr(f.secondary, '"other-process"') > 0) AS other_process,
           (f.kind = 'leak' OR instr(f.secondary, '"leak"') > 0) AS leaking,
           -- The job's demand is the finding's matter: an OOM with figures,
           -- or a peak near capacity (not a leak's or an imbalance's).
           ((f.oom_id IS NOT NULL AND f.kind NOT IN ('inconsistent', 'insufficient-evidence'))
            OR f.kind = 'near-capacity') AS about_demand,
           json_extract(f.data, '$.requested_bytes.value') AS requested_bytes,
           json_extract(f.data, '$.device_free_bytes.value') AS device_free_bytes,
           coalesce(json_extract(f.data, '$.capacity_bytes.value'),
                    (SELECT c.bytes FROM device_capacity c WHERE c.device_id = f.device_id))
               AS capacity_bytes,
           coalesce(json_extract(f.data, '$.allocated_bytes.value'),
                    json_extract(f.data, '$.peak_allocated_bytes.value'),
                    ds.peak_allocated_bytes) AS allocated_bytes,
           coalesce(json_extract(f.data, '$.reserved_bytes.value'),
                    json_extract(f.data, '$.peak_reserved_bytes.value'),
                    ds.peak_reserved_bytes) AS reserved_bytes,
           coalesce(json_extract(f.data, '$.cache_free_bytes.value'),
                    ds.cached_at_peak_bytes) AS cache_free_bytes,
           json_extract(f.data, '$.largest_free_block_bytes.value') AS largest_free_block_bytes,
           json_extract(f.data, '$.other_processes_bytes.value') AS other_processes_bytes,
           json_extract(f.data, '$.other_pid.value') AS other_pid,
           json_extract(f.data, '$.nvidia_smi_used_bytes.value') AS smi_used_bytes,
           json_extract(f.data, '$.outside_allocator_bytes.value') AS outside_allocator_bytes,
           json_extract(f.data, '$.leak_per_step_bytes.value') AS leak_per_step_bytes,
           json_extract(f.data, '$.leak_steps.value') AS leak_steps,
           ds.peak_allocated_bytes AS peak_allocated_bytes,
           ds.peak_allocated_event_id AS peak_event_id,
           f.rank AS finding_rank,
           (f.kind = 'oversized-request' OR instr(f.secondary, '"oversized-request"') > 0)
               AS oversized,
           json_extract(f.data, '$.cache_free_bytes.source') AS cache_free_source,
           oe.private_pools_bytes AS message_private_pools_bytes,
           s.format AS oom_format
      FROM finding f
      LEFT JOIN device d ON d.id = f.device_id
      LEFT JOIN device_summary ds ON ds.device_id = f.device_id
      LEFT JOIN oom_event oe ON oe.id = f.oom_id
      LEFT JOIN source s ON s.id = oe.source_id
), server AS (
    -- An inference server's start-up lines (server_memory) of a rank, or
    -- where either does not say its rank: the last of each figure (the
    -- last start-up). Per rank of the findings, not per finding: a log of
    -- thousands of OOMs has a few ranks (and ev is read once).
    SELECT r.rank,
           (SELECT m.framework FROM server_memory m
             WHERE m.rank = r.rank OR m.rank IS NULL OR r.rank < 0
             ORDER BY m.source_id DESC, m.line DESC LIMIT 1) AS framework,
           (SELECT m.bytes FROM server_memory m
             WHERE (m.rank = r.rank OR m.rank IS NULL OR r.rank < 0) AND m.figure = 'kv_cache'
             ORDER BY m.source_id DESC, m.line DESC LIMIT 1) AS kv_bytes,
           (SELECT m.count FROM server_memory m
             WHERE (m.rank = r.rank OR m.rank IS NULL OR r.rank < 0) AND m.figure = 'kv_tokens'
             ORDER BY m.source_id DESC, m.line DESC LIMIT 1) AS kv_tokens,
           (SELECT m.bytes FROM server_memory m
             WHERE (m.rank = r.rank OR m.rank IS NULL OR r.rank < 0)
               AND m.figure = 'activation_peak'
             ORDER BY m.source_id DESC, m.line DESC LIMIT 1) AS activation_peak
      FROM (SELECT DISTINCT rank FROM finding) r
     WHERE EXISTS (SELECT 1 FROM server_memory)
), private_pools AS (
    -- The free bytes of a device's segments in private pools (a CUDA
    -- graph's or a mempool's segment_pool_id, not the default "0,0"): in
    -- the allocator's reserved memory, but usable by their owner alone.
    SELECT device_id, sum(total_bytes - coalesce(allocated_bytes, 0)) AS bytes
      FROM segment
     WHERE pool IS NOT NULL AND pool <> '0,0' AND device_id IN (SELECT device_id FROM finding)
     GROUP BY device_id
), cat AS (
    SELECT device_id,
           sum(bytes) FILTER (WHERE category = 'parameter') AS parameter_bytes,
           sum(bytes) FILTER (WHERE category = 'optimizer_state') AS optimizer_state_bytes,
           sum(bytes) FILTER (WHERE category = 'gradient') AS gradient_bytes,
           sum(bytes) FILTER (WHERE category = 'activation') AS activation_bytes,
           sum(bytes) FILTER (WHERE category = 'kv_cache') AS kv_cache_bytes,
           sum(bytes) FILTER (WHERE category = 'temporary') AS temporary_bytes,
           sum(bytes) FILTER (WHERE category = 'input') AS input_bytes,
           sum(bytes) FILTER (WHERE category = 'autograd_detail') AS autograd_detail_bytes
      FROM peak_category GROUP BY device_id
), live AS (
    -- The allocations live at each finding's device's peak
    -- (summarise_devices' peak_live).
    SELECT ev.finding_id, a.bytes, a.category, a.module, a.op_id
      FROM ev
      JOIN temp.peak_live l ON l.device_id = ev.device_id
      JOIN allocation a ON a.id = l.id
), never_freed AS (
    SELECT device_id, sum(bytes) AS bytes FROM allocation
     WHERE free_ts_ns IS NULL AND category = 'activation'
       AND device_id IN (SELECT device_id FROM finding)
     GROUP BY device_id
), layered AS (
    SELECT finding_id, count(DISTINCT module) AS layers FROM live
     WHERE category = 'activation' AND module IS NOT NULL GROUP BY finding_id
), attention AS (
    -- Attention's score matrices as unfused attention makes them: the
    -- temporaries of softmax and batched matmuls live at the peak.
    SELECT l.finding_id, sum(l.bytes) AS bytes FROM live l
      JOIN op o ON o.id = l.op_id JOIN name n ON n.id = o.name_id
     WHERE l.category = 'temporary'
       AND (n.text LIKE '%softmax%' OR n.text IN ('aten::bmm', 'aten::baddbmm'))
     GROUP BY l.finding_id
), served AS (
    -- A KV cache live at a device's peak made under vLLM's or SGLang's
    -- own frames (the kv_cache category's rules, schemas/categories.rules).
    SELECT a.device_id,
           CASE WHEN max(instr(fn.text, '/vllm/') > 0) THEN 'vllm'
                WHEN max(instr(fn.text, '/sglang/') > 0) THEN 'sglang' END AS framework,
           (SELECT sum(x.bytes) FROM temp.peak_live x JOIN allocation y ON y.id = x.id
             WHERE x.device_id = a.device_id AND y.category = 'kv_cache') AS kv_bytes
      FROM temp.peak_live l
      JOIN allocation a ON a.id = l.id
      JOIN mem_event ae ON ae.id = a.alloc_event_id
      JOIN stack_frame sf ON sf.stack_id = ae.stack_id
      JOIN frame fr ON fr.id = sf.frame_id
      JOIN name fn ON fn.id = fr.filename_id
     WHERE a.category = 'kv_cache'
     GROUP BY a.device_id
)
SELECT ev.*,
       coalesce(c.parameter_bytes, 0) AS parameter_bytes,
       coalesce(c.optimizer_state_bytes, 0) AS optimizer_state_bytes,
       coalesce(c.gradient_bytes, 0) AS gradient_bytes,
       coalesce(c.activation_bytes, 0) AS activation_bytes,
       coalesce(c.kv_cache_bytes, 0) AS kv_cache_bytes,
       coalesce(c.temporary_bytes, 0) AS temporary_bytes,
       coalesce(c.input_bytes, 0) AS input_bytes,
       coalesce(c.autograd_detail_bytes, 0) AS autograd_detail_bytes,
       coalesce(c.parameter_bytes, 0) + coalesce(c.gradient_bytes, 0)
           + coalesce(c.optimizer_state_bytes, 0) AS model_state_bytes,
       ly.layers AS layers,
       coalesce(at.bytes, 0) AS attention_temporary_bytes,
       max(coalesce((SELECT max(world_size) FROM source), 1),
           (SELECT count(DISTINCT rank) FROM device WHERE rank >= 0)) AS ranks,
       EXISTS (SELECT 1 FROM phase WHERE kind = 'forward') AS has_forward,
       EXISTS (SELECT 1 FROM phase WHERE kind = 'backward') AS has_backward,
       coalesce(nf.bytes, 0) AS activation_never_freed_bytes,
       ev.leak_per_step_bytes * ev.leak_steps AS leak_bytes,
       -- Memory other processes hold, as the diagnosis counted it.
       CASE WHEN ev.other_process THEN
            coalesce(ev.other_processes_bytes,
                     ev.smi_used_bytes - ev.reserved_bytes - 1073741824,
                     ev.outside_allocator_bytes - 1073741824) END AS other_bytes,
       -- What the failed request lacked: NULL without a failed request.
       CASE WHEN ev.is_oom THEN
            ev.requested_bytes - coalesce(ev.device_free_bytes, 0) END AS shortfall_bytes,
       -- An inference server (docs/remedies.md): its log's start-up lines,
       -- else a KV cache its own frames made; the KV cache it reserved.
       coalesce(sv.framework, sd.framework) AS server_framework,
       coalesce(sv.framework, sd.framework) IS NOT NULL AS inference_server,
       coalesce(sv.kv_bytes, sd.kv_bytes) AS server_kv_cache_bytes,
       sv.kv_tokens AS server_kv_tokens,
       sv.activation_peak AS server_activation_peak_bytes,
       -- Private pools' free memory: the message's figure (PyTorch counts
       -- it as allocated, outside its "reserved but unallocated"), else
       -- the device's snapshot segments'. Counted in cache_free_bytes
       -- only where that is reserved minus allocated of a snapshot or a
       -- timeline, not a log's and not the request pool's own.
       coalesce(ev.message_private_pools_bytes, pp.bytes, 0) AS private_pool_free_bytes,
       CASE WHEN ev.oom_format = 'job_log' OR ev.cache_free_source = 'snapshot' THEN 0
            ELSE min(coalesce(pp.bytes, 0), coalesce(ev.cache_free_bytes, 0)) END
           AS private_in_cache_bytes
  FROM ev
  LEFT JOIN cat c ON c.device_id = ev.device_id
  LEFT JOIN layered ly ON ly.finding_id = ev.finding_id
  LEFT JOIN attention at ON at.finding_id = ev.finding_id
  LEFT JOIN never_freed nf ON nf.device_id = ev.device_id
  LEFT JOIN server sv ON sv.rank = ev.finding_rank
  LEFT JOIN served sd ON sd.device_id = ev.device_id
  LEFT JOIN private_pools pp ON pp.device_id = ev.device_id;

-- name: insert_advice
INSERT INTO advice (finding_id, remedy, saving_bytes, title, setting, evidence, figures, source)
VALUES (:finding, :remedy, :saving, :title, :setting, :evidence, :figures, :source);

-- Ranked by saving within each finding (ties by id), and whether the
-- saving covers what the failed request lacked.
-- name: rank_advice
-- Each finding's advice in order of saving (then remedy id: ties never
-- share a rank), a saving that rests on an inferred figure after those
-- the job's figures measure (remedies.sql's `inferred`), and whether it would have made the failed request fit:
-- one sort and one look-up of the finding's facts by their index. A count
-- per row and a scan of the facts per row were quadratic in the findings
-- (1.2 s for a log of 6,000 OOM errors). OR FAIL, as insert_allocations:
-- an UPDATE of every row that may abort keeps a statement journal of every
-- page it changes (36 MiB of peak RSS at 80,000 errors without --db);
-- any error fails the whole analysis, whose transaction is rolled back.
CREATE INDEX temp.advice_facts_by_finding ON advice_facts (finding_id);
UPDATE OR FAIL advice SET rank = r.rank, would_fit = r.would_fit
  FROM (SELECT a.finding_id, a.remedy,
               row_number() OVER (PARTITION BY a.finding_id
                                  ORDER BY json_extract(a.figures, '$.inferred') IS 1,
                                           a.saving_bytes DESC, a.remedy) AS rank,
               CASE WHEN f.shortfall_bytes IS NOT NULL
                    THEN a.saving_bytes >= f.shortfall_bytes END AS would_fit
          FROM advice a LEFT JOIN advice_facts f ON f.finding_id = a.finding_id) AS r
 WHERE advice.finding_id = r.finding_id AND advice.remedy = r.remedy;
DROP TABLE IF EXISTS temp.advice_facts;
-- The bound pass (bound.c) owns bandwidth_or_capacity (migration 14;
-- docs/bandwidth.md).
-- name: clear_bound
DELETE FROM bandwidth_or_capacity;

-- What is judged: each GPU a monitoring source read (with the job's
-- device match_gpus tied it to), then each trace device with a name that
-- no monitored GPU was tied to. name: the monitor's, else the trace's;
-- capacity: the GPU's total, else the largest a reading gave, else the
-- device's. gpus_alike: GPUs of the same source without MIG (an OOM that
-- names no index is this GPU's only when it is the source's one GPU).
-- name: bound_subjects
SELECT * FROM (
SELECT g.id AS gpu_id, g.device_id AS device_id,
       coalesce(nullif(trim(g.name), ''), nullif(trim(d.model), '')) AS name,
       coalesce(g.memory_total_bytes,
                (SELECT max(s.memory_total_bytes) FROM gpu_sample s WHERE s.gpu_id = g.id),
                d.capacity_bytes) AS capacity,
       g.idx AS idx, coalesce(src.clock_offset_ns, 0) AS offset_ns,
       (SELECT count(*) FROM gpu x WHERE x.source_id = g.source_id AND x.mig IS NULL)
           AS gpus_alike
  FROM gpu g JOIN source src ON src.id = g.source_id
  LEFT JOIN device d ON d.id = g.device_id
UNION ALL
SELECT NULL, d.id, trim(d.model),
       (SELECT c.bytes FROM device_capacity c WHERE c.device_id = d.id), d.idx, 0, 0
  FROM device d
 WHERE trim(d.model) <> ''
   AND d.id NOT IN (SELECT device_id FROM gpu WHERE device_id IS NOT NULL))
 ORDER BY gpu_id IS NULL, gpu_id, device_id;

-- A GPU's readings while the job held memory: at least 1 GiB, or a tenth
-- of the GPU when that is less (an idle GPU before or after the job holds
-- a few MiB; its 0% would say nothing of the job), or no memory figure.
-- full: used at 90% of the total or more. first/last: the readings'
-- times (on the common clock), for tying a log's OOM to the GPU.
-- name: bound_readings
WITH r0 AS (
  SELECT s.memory_used_bytes AS used, coalesce(s.memory_total_bytes, :capacity) AS total,
         s.utilization_gpu_pct AS util, s.ts_ns AS ts
    FROM gpu_sample s WHERE s.gpu_id = :gpu),
-- A reading of more used than the total is suspect input (diagnose's
-- suspect-input): its memory figure is not evidence of fullness.
r AS (
  SELECT CASE WHEN total > 0 AND used > total THEN NULL ELSE used END AS used, total, util, ts
    FROM r0),
job AS (
  SELECT * FROM r
   WHERE used IS NULL OR used >= min(1073741824, coalesce(total / 10, 1073741824)))
SELECT count(*) AS readings,
       count(CASE WHEN used IS NOT NULL AND total > 0 THEN 1 END) AS memory_readings,
       count(CASE WHEN total > 0 AND used * 10 >= total * 9 THEN 1 END) AS full_readings,
       max(CASE WHEN total > 0 THEN 1.0 * used / total END) AS max_share,
       count(util) AS util_readings, avg(util) AS util_mean,
       (SELECT min(ts) FROM r) + :offset AS first_ts, (SELECT max(ts) FROM r) + :offset AS last_ts
  FROM job;

-- The median utilisation of the same readings: the middle one, or the
-- mean of the middle two (:n is util_readings).
-- name: bound_util_median
WITH job AS (
  SELECT s.utilization_gpu_pct AS util FROM gpu_sample s
   WHERE s.gpu_id = :gpu AND s.utilization_gpu_pct IS NOT NULL
     AND (s.memory_used_bytes IS NULL
          OR s.memory_used_bytes >= min(1073741824,
                                        coalesce(coalesce(s.memory_total_bytes, :capacity) / 10,
                                                 1073741824))))
SELECT avg(util) FROM (SELECT util FROM job ORDER BY util LIMIT 2 - :n % 2 OFFSET (:n - 1) / 2);

-- The out-of-memory errors of a GPU: those on its device; for a GPU tied
-- to no device, those on no device a GPU was tied to whose index is the
-- GPU's (or that name none, when the source has one GPU), within a
-- minute of its readings when both have times.
-- name: bound_ooms
SELECT count(*) FROM oom_event e JOIN source s ON s.id = e.source_id
  LEFT JOIN device d ON d.id = e.device_id
 WHERE (:device IS NOT NULL AND e.device_id = :device)
    OR (:device IS NULL AND :gpu IS NOT NULL
        AND (e.device_id IS NULL
             OR e.device_id NOT IN (SELECT device_id FROM gpu WHERE device_id IS NOT NULL))
        AND (coalesce(e.device_idx, d.idx) = :idx
             OR (coalesce(e.device_idx, d.idx) IS NULL AND :alike = 1))
        AND (e.ts_ns IS NULL OR :first IS NULL
             OR e.ts_ns + coalesce(s.clock_offset_ns, 0)
                BETWEEN :first - 60000000000 AND :last + 60000000000));

-- Each trace's copies and memsets with bytes and a duration, on the
-- device of the trace's memory events with their index, by device, then
-- host transfers (HtoD, DtoH, HtoH: bound by the host link) apart from
-- on-device ones, in time order (bound.c takes the union of intervals).
-- name: bound_copies
SELECT sd.device_id AS device_id,
       (n.text GLOB '*HtoD*' OR n.text GLOB '*DtoH*' OR n.text GLOB '*HtoH*') AS host,
       o.ts_ns, o.dur_ns, o.bytes, n.text
  FROM gpu_op o
  JOIN source_device sd ON sd.source_id = o.source_id
  JOIN device d ON d.id = sd.device_id AND d.idx = o.device_idx
  JOIN name n ON n.id = o.name_id
 WHERE o.cat IN ('gpu_memcpy', 'gpu_memset') AND o.bytes > 0 AND o.dur_ns > 0
 ORDER BY sd.device_id, host, o.ts_ns, o.id;

-- name: insert_bound
INSERT INTO bandwidth_or_capacity (
    gpu_id, device_id, reported_name, spec, memory_type, bandwidth_bytes_per_s,
    spec_capacity_bytes, capacity_bytes, readings, memory_readings, memory_full_readings,
    memory_full_share, memory_max_share, util_readings, util_median_pct, util_mean_pct, ooms,
    verdict, reason, copy_ops, copy_bytes, copy_busy_ns, achieved_copy_bytes_per_s,
    achieved_copy_share, best_copy_name, best_copy_bytes, best_copy_ns, best_copy_bytes_per_s,
    best_copy_share, host_copy_ops, host_copy_bytes, host_copy_busy_ns, host_copy_bytes_per_s)
VALUES (
    :gpu, :device, :name, :spec, :memory_type, :bandwidth, :spec_capacity, :capacity, :readings,
    :memory_readings, :full_readings, :full_share, :max_share, :util_readings, :util_median,
    :util_mean, :ooms, :verdict, :reason, :copy_ops, :copy_bytes, :copy_busy, :copy_rate,
    :copy_share, :best_name, :best_bytes, :best_ns, :best_rate, :best_share, :host_ops,
    :host_bytes, :host_busy, :host_rate);

-- The stack_modules pass (stack_modules.c) owns stack_module.
-- name: clear_stack_modules
DELETE FROM stack_module;

-- The module forward frames (function `forward`, name :forward) of the
-- stacks a report groups: those of the allocations live at a device's
-- peak (peak_live) and of the blocks in use since before the record
-- (block_before), each stack's outer to inner (position 0 is the
-- innermost). CROSS JOIN keeps the few stacks the outer loop: the planner
-- otherwise scans every stack's frames.
-- name: stack_module_frames
WITH needed AS (
    SELECT ae.stack_id AS id
      FROM temp.peak_live l
      CROSS JOIN allocation a
      CROSS JOIN mem_event ae
     WHERE a.id = l.id AND ae.id = a.alloc_event_id AND ae.stack_id IS NOT NULL
    UNION
    SELECT b.stack_id
      FROM block_before bb CROSS JOIN block b
     WHERE b.id = bb.block_id AND b.stack_id IS NOT NULL
)
SELECT sf.stack_id, fn.text, f.line
  FROM needed n
  CROSS JOIN stack_frame sf
  CROSS JOIN frame f
  CROSS JOIN name fn
 WHERE sf.stack_id = n.id AND f.id = sf.frame_id AND f.function_id = :forward
   AND fn.id = f.filename_id
 ORDER BY sf.stack_id, sf.position DESC;

-- name: stack_module_forward_name
SELECT id FROM name WHERE text = 'forward';

-- name: insert_stack_module
INSERT INTO stack_module (stack_id, module) VALUES (:stack, :module);
