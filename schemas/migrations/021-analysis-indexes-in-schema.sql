-- Migration 21 (PRAGMA user_version = 21): the indexes the analysis's
-- `indexes` pass made after every import (analyze.sql's create_indexes)
-- are the schema's, as every other index that stays in the database is.
-- A database holds one definition of its indexes, the migrations', and
-- the analysis writes only its derived tables (and the indexes it builds
-- and drops around its own writes: allocation_by_alloc_event,
-- allocation_by_device).
--
-- Ops with a thread by source, thread and time: cpu_ops for the
-- attribution sweep, python_function events for locate. Kept from the
-- first row, an op of another category costs a test of its category,
-- one of these an insert into a part of the index its thread keeps in
-- time order. Same definitions as create_indexes made, which a database
-- analysed before already has.
CREATE INDEX IF NOT EXISTS op_cpu_source_thread_time
    ON op (source_id, pid, tid, ts_ns, dur_ns DESC, id) WHERE cat = 'cpu_op';
CREATE INDEX IF NOT EXISTS op_python_source_thread_time
    ON op (source_id, pid, tid, ts_ns, dur_ns DESC, id) WHERE cat = 'python_function';

-- A snapshot's blocks by their segment (snapshot_state, snapshot_replay).
CREATE INDEX IF NOT EXISTS block_by_segment ON block (segment_id);

-- Covering indexes of allocation that earlier versions built and kept
-- (by allocation event with its category, by free event, by device): the
-- breakdown pass dropped them at every analysis, as they only slowed the
-- timeline pass's inserts. Dropped once, here.
DROP INDEX IF EXISTS allocation_by_alloc_event_category;
DROP INDEX IF EXISTS allocation_by_free_event;
DROP INDEX IF EXISTS allocation_by_device;
