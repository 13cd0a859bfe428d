-- Migration 17 (PRAGMA user_version = 17): memory events by device, source
-- and time from the start (the speed of snapshot imports, docs/performance.md).
--
-- The analysis's `indexes` pass built this index over every memory event
-- once the import was done: a sort of every event (some 3,800
-- instructions an event, most of the pass). An importer writes a device's
-- events in time order, so an index kept from the first row only appends
-- to the end of that device's part of it (some 2,000 an event) and needs
-- no sort. Same definition as the index create_indexes made before, which
-- a database analysed before already has.
CREATE INDEX IF NOT EXISTS mem_event_device_source_time
    ON mem_event (device_id, source_id, ts_ns, id);
