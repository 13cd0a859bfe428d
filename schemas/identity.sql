-- Device identity across files (src/import/identity.c): is a snapshot's
-- device the device of a trace of the same process? Run at the end of each
-- import, in its transaction, whichever of the two came first.
--
-- The evidence is the allocations both files recorded. CUDA addresses are
-- virtual addresses of the process (mapped at a randomised place), so two
-- processes, even two ranks of one job running the same code, do not
-- allocate the same addresses at the same moments; one process's snapshot
-- and trace do, for every allocation both saw. Sizes agree up to the
-- allocator's rounding: the snapshot's alloc entry states the request, the
-- profiler's [memory] event the block that served it, which is larger by
-- at most 20 MiB (kLargeBuffer: the most a cached block is allowed to
-- exceed a request). :slack is that bound.

-- The pairs to weigh when source :source was just imported: a device that
-- is still a snapshot's own (rank unknown, scoped to the snapshot) and a
-- device on which a source that is not a snapshot has memory events, of
-- the same platform and index, one of the two files being :source. Each
-- half starts from :source's own devices: pairing every snapshot device
-- with every other device first cost devices x devices per import.
-- name: join_candidates
WITH snap AS MATERIALIZED (
    SELECT d.id AS device_id, d.scope AS source_id, d.platform, d.idx
      FROM device d JOIN source s ON s.id = d.scope
     WHERE d.rank = -1 AND s.format IN ('snapshot', 'snapshot_json')
), other AS MATERIALIZED (
    SELECT sd.source_id, sd.device_id, d.platform, d.idx
      FROM source_device sd
      JOIN device d ON d.id = sd.device_id
      JOIN source s ON s.id = sd.source_id
     WHERE s.format NOT IN ('snapshot', 'snapshot_json')
), pair AS (
    SELECT n.source_id AS n_source, n.device_id AS n_device,
           o.source_id AS o_source, o.device_id AS o_device
      FROM snap n JOIN other o ON o.platform = n.platform AND o.idx = n.idx
                              AND o.device_id <> n.device_id
     WHERE n.source_id = :source
    UNION
    SELECT n.source_id, n.device_id, o.source_id, o.device_id
      FROM other o JOIN snap n ON o.platform = n.platform AND o.idx = n.idx
                              AND o.device_id <> n.device_id
     WHERE o.source_id = :source
)
SELECT n_source, n_device, o_source, o_device FROM pair ORDER BY n_device, o_device;

-- Rule 'history': the two files recorded the same moments. Each file's
-- allocations (memory events with an address and a positive size) are
-- placed on one clock (both sources must be placed); those inside the
-- span both files' allocations cover are compared. An allocation matches
-- when the other file has one at the same address, of an agreeing size,
-- within :tolerance ns. Yields, for the snapshot then the trace: compared,
-- matched.
-- name: history_evidence
WITH s AS (
    SELECT m.id, m.addr, m.bytes, m.ts_ns + src.clock_offset_ns AS t
      FROM mem_event m JOIN source src ON src.id = m.source_id
     WHERE m.source_id = :snap_source AND m.device_id = :snap_device
       AND m.bytes > 0 AND m.addr IS NOT NULL AND src.clock_offset_ns IS NOT NULL
), o AS (
    SELECT m.id, m.addr, m.bytes, m.ts_ns + src.clock_offset_ns AS t
      FROM mem_event m JOIN source src ON src.id = m.source_id
     WHERE m.source_id = :trace_source AND m.device_id = :trace_device
       AND m.bytes > 0 AND m.addr IS NOT NULL AND src.clock_offset_ns IS NOT NULL
), span AS (
    SELECT max((SELECT min(t) FROM s), (SELECT min(t) FROM o)) AS lo,
           min((SELECT max(t) FROM s), (SELECT max(t) FROM o)) AS hi
)
-- Joins, not EXISTS: a join gets an automatic index on the address.
SELECT (SELECT count(*) FROM s, span WHERE s.t BETWEEN span.lo AND span.hi),
       (SELECT count(DISTINCT s.id) FROM s, span
          JOIN o ON o.addr = s.addr AND o.t BETWEEN s.t - :tolerance AND s.t + :tolerance
                AND abs(o.bytes - s.bytes) <= :slack
         WHERE s.t BETWEEN span.lo AND span.hi),
       (SELECT count(*) FROM o, span WHERE o.t BETWEEN span.lo AND span.hi),
       (SELECT count(DISTINCT o.id) FROM o, span
          JOIN s ON s.addr = o.addr AND s.t BETWEEN o.t - :tolerance AND o.t + :tolerance
                AND abs(s.bytes - o.bytes) <= :slack
         WHERE o.t BETWEEN span.lo AND span.hi);

-- Rule 'end_state', when the files share too little history: what the
-- trace left allocated at its end (addresses whose last event is an
-- allocation) against the blocks the snapshot's segments hold in use. A
-- snapshot taken before the trace ended (both placed) is not compared: its
-- blocks are an earlier state. Yields compared (the trace's live
-- allocations), matched (of them, held by the snapshot at the same address
-- with an agreeing size), whether the comparison holds at all, and NULL
-- (there is no other direction).
-- name: end_state_evidence
WITH last AS (
    SELECT id, addr, bytes,
           row_number() OVER (PARTITION BY addr ORDER BY ts_ns DESC, id DESC) AS place
      FROM mem_event
     WHERE source_id = :trace_source AND device_id = :trace_device
       AND addr IS NOT NULL AND bytes <> 0
), live AS (
    SELECT id, addr, bytes FROM last WHERE place = 1 AND bytes > 0
), held AS (
    SELECT b.address AS addr, b.bytes
      FROM segment g JOIN block b ON b.segment_id = g.id
     WHERE g.source_id = :snap_source AND g.device_id = :snap_device
       AND b.state <> 'inactive' AND b.address IS NOT NULL
)
SELECT (SELECT count(*) FROM live),
       (SELECT count(DISTINCT live.id) FROM live
          JOIN held ON held.addr = live.addr AND abs(held.bytes - live.bytes) <= :slack),
       coalesce((SELECT a.end_ns + a.clock_offset_ns >= b.end_ns + b.clock_offset_ns
                   FROM source a, source b
                  WHERE a.id = :snap_source AND b.id = :trace_source), 1),
       NULL;

-- Joining: the snapshot's rows move from its own device (:from) to the
-- trace's (:to), the device's description is completed from it, and its
-- row goes. Each block is one statement (identity.c lists them in order).
-- name: move_mem_events
UPDATE mem_event SET device_id = :to WHERE source_id = :source AND device_id = :from;

-- name: move_oom_events
UPDATE oom_event SET device_id = :to WHERE source_id = :source AND device_id = :from;

-- name: move_segments
UPDATE segment SET device_id = :to WHERE source_id = :source AND device_id = :from;

-- The trace entries that are not memory events (the others moved with
-- them: trace_entry is a view of both, migration 16).
-- name: move_trace_entries
UPDATE trace_entry_other SET device_id = :to WHERE source_id = :source AND device_id = :from;

-- name: move_source_devices
UPDATE source_device SET device_id = :to WHERE source_id = :source AND device_id = :from;

-- name: describe_joined_device
UPDATE device SET
    model = coalesce(model, (SELECT model FROM device WHERE id = :from)),
    capacity_bytes = coalesce(capacity_bytes, (SELECT capacity_bytes FROM device
                                                WHERE id = :from)),
    uuid = coalesce(uuid, (SELECT uuid FROM device WHERE id = :from)),
    pci_bus_id = coalesce(pci_bus_id, (SELECT pci_bus_id FROM device WHERE id = :from)),
    totals_known = min(totals_known, (SELECT totals_known FROM device WHERE id = :from))
 WHERE id = :to;

-- name: delete_joined_device
DELETE FROM device WHERE id = :from;

-- name: insert_device_join
INSERT OR REPLACE INTO device_join (source_id, device_id, with_source_id, rule, compared,
                                    matched, other_compared, other_matched)
VALUES (:source, :to, :with, :rule, :compared, :matched, :other_compared, :other_matched);
