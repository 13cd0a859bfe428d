-- Migration 18 (PRAGMA user_version = 18): two partial indexes of memory
-- events kept from the first row (the speed of snapshot imports,
-- docs/performance.md).
--
-- Memory events with a thread, by source, thread and time: the
-- attribution sweep's order (analyze.c's `attribute`). The analysis's
-- `indexes` pass built it after every import, a read of every event (some
-- 500 instructions an event) even where none has a thread, as in every
-- allocator snapshot. Kept from the first row, an event without a thread
-- costs a test of two columns of the row being written, and one with a
-- thread an insert that a later build would have sorted. Same definition
-- as the index create_indexes made before, which a database analysed
-- before already has.
CREATE INDEX IF NOT EXISTS mem_event_source_thread_time
    ON mem_event (source_id, pid, tid, ts_ns, id) WHERE pid IS NOT NULL AND tid IS NOT NULL;

-- The events that state their own category (the memory timeline export),
-- by device and source: the breakdown pass asks whether a source has any
-- with one look-up, where reading `category` of every event cost some 380
-- instructions an event. Empty but for such sources.
CREATE INDEX IF NOT EXISTS mem_event_stated_category
    ON mem_event (device_id, source_id) WHERE category IS NOT NULL;
