-- Migration 3 (PRAGMA user_version = 3): sources apart, on one clock
-- (one job, many files: docs/schema.md, "One clock").
--
-- Files of one rank share its devices: two profiling windows of a run, or
-- a trace and a memory snapshot of the same moments. Before version 3 the
-- analysis merged every source of a device, and attributed memory events
-- by (pid, tid) across files, so two ranks with the same pid/tid (common
-- in containers) were credited with each other's operators. From version 3
-- every pass that pairs or nests events works within one source, each
-- source is placed on one clock, and a device's figures come from sources
-- that do not overlap in time (docs/schema.md, "Sources of one device").

-- Where a source sits on one clock: nanoseconds since the Unix epoch (UTC)
-- are ts_ns + clock_offset_ns. NULL: the source gives no absolute time
-- ("unplaced"): its times count from its own start of profiling and it is
-- never combined with another source. clock_rule names the rule that set
-- the offset ('absolute', 'baseTimeNanoseconds', 'unplaced'); the rule is
-- applied when an import finishes (schemas/import.sql: set_source_clock).
ALTER TABLE source ADD COLUMN clock_offset_ns INTEGER;
ALTER TABLE source ADD COLUMN clock_rule TEXT;

-- Sources imported before version 3 are placed by the rule of version 3
-- (the same as import.sql's set_source_clock when this was released).
UPDATE source SET
    clock_rule = CASE WHEN start_ns >= 100000000000000000 THEN 'absolute'
                      WHEN base_time_ns <> 0 THEN 'baseTimeNanoseconds'
                      ELSE 'unplaced' END,
    clock_offset_ns = CASE WHEN start_ns >= 100000000000000000 THEN 0
                           WHEN base_time_ns <> 0 THEN base_time_ns END;

-- Imported (written when an import finishes): the devices a source has
-- memory events on, and whether those events carry the allocator's totals.
-- device.totals_known says the same per device, whatever the source; a
-- trace with totals and a memory timeline without them can share a device,
-- and only the timeline's totals are to be rebuilt.
CREATE TABLE source_device (
    source_id       INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
    device_id       INTEGER NOT NULL,
    totals_known    INTEGER NOT NULL,         -- 1: every event had Total Allocated
    PRIMARY KEY (source_id, device_id)
) WITHOUT ROWID;

-- Before version 3 the totals of a device without them were rebuilt over
-- all its sources, overwriting any that one of them carried: such a
-- device's sources are all taken to be without totals.
INSERT INTO source_device (source_id, device_id, totals_known)
SELECT m.source_id, m.device_id, d.totals_known
  FROM (SELECT DISTINCT source_id, device_id FROM mem_event) m
  JOIN device d ON d.id = m.device_id;

-- Derived (analysis): each source's own figures on each device it has
-- memory events on, on the source's clock.
CREATE TABLE device_source_summary (
    device_id               INTEGER NOT NULL,
    source_id               INTEGER NOT NULL,
    events                  INTEGER NOT NULL,
    start_ns                INTEGER,
    end_ns                  INTEGER,
    totals_known            INTEGER NOT NULL, -- 0: allocated was rebuilt from deltas
    peak_allocated_bytes    INTEGER,
    peak_allocated_ts_ns    INTEGER,
    peak_allocated_event_id INTEGER,
    peak_allocated_op_id    INTEGER,
    peak_allocated_step     INTEGER,
    peak_reserved_bytes     INTEGER,
    peak_reserved_ts_ns     INTEGER,
    live_unknown_bytes      INTEGER,
    PRIMARY KEY (device_id, source_id)
) WITHOUT ROWID;

-- Derived (analysis): the sources a device's figures are made of (the
-- chosen ones), in time order on one axis, position 1 first. A source of
-- the device that is not here overlaps a chosen one: it is shown beside
-- it, never added to it. Keyed by position so that reading a device's
-- events in axis order is one ordered walk of an index, not a sort.
CREATE TABLE device_axis (
    device_id               INTEGER NOT NULL,
    position                INTEGER NOT NULL,
    source_id               INTEGER NOT NULL,
    PRIMARY KEY (device_id, position)
) WITHOUT ROWID;

-- device_summary's times are on the clock of source_id (the source of its
-- peak); source_choice says how its sources were used: 'one' source,
-- several 'combined' (apart in time, all counted), or one 'chosen' among
-- sources that overlap.
ALTER TABLE device_summary ADD COLUMN source_id INTEGER;
ALTER TABLE device_summary ADD COLUMN source_choice TEXT;

-- Allocations are paired within one source.
ALTER TABLE allocation ADD COLUMN source_id INTEGER;

-- Per-operator figures are kept per source, so that a device counts only
-- the sources its figures are made of (derived: rebuilt by the analysis).
DROP TABLE op_memory;
CREATE TABLE op_memory (
    name_id             INTEGER NOT NULL,
    device_id           INTEGER NOT NULL,
    source_id           INTEGER NOT NULL,
    self_alloc_count    INTEGER NOT NULL,
    self_alloc_bytes    INTEGER NOT NULL,
    self_free_bytes     INTEGER NOT NULL,
    incl_alloc_count    INTEGER NOT NULL,
    incl_alloc_bytes    INTEGER NOT NULL,
    incl_free_bytes     INTEGER NOT NULL,
    PRIMARY KEY (name_id, device_id, source_id)
) WITHOUT ROWID;

DROP TABLE op_calls;
CREATE TABLE op_calls (
    name_id             INTEGER NOT NULL,
    source_id           INTEGER NOT NULL,
    calls               INTEGER NOT NULL,
    PRIMARY KEY (name_id, source_id)
) WITHOUT ROWID;

-- The indexes the sweeps of version 2 read by, which did not start with
-- the source (analysis creates the new ones).
DROP INDEX IF EXISTS mem_event_device_time;
DROP INDEX IF EXISTS mem_event_thread_time;
DROP INDEX IF EXISTS op_cpu_thread_time;

-- Ops attributed across sources by version 2 are attributed again.
UPDATE mem_event SET op_id = NULL WHERE op_id IS NOT NULL;
UPDATE analysis_state SET complete = 0;
