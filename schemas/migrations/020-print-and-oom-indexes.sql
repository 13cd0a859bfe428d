-- Migration 20 (PRAGMA user_version = 20): two indexes kept from the
-- first row, so that the report reads memory prints and a device's OOM
-- errors in order instead of sorting or scanning every row.
--
-- Memory prints by series (source, device, rank, printing code), then
-- step and line: the report's memory_prints groups them by series in
-- this order and finds a series' last print of its first and of its last
-- step by one look-up each. Its window functions sorted every print five
-- times (some 700 bytes a print held in SQLite's sorter: 38 MiB at 4,000
-- ranks of 12 prints, whatever the page cache's size).
CREATE INDEX IF NOT EXISTS memory_print_series
    ON memory_print (source_id, device_id, rank, framework, figure, step, line);

-- OOM errors by device, then source: a device's out_of_memory, the
-- replay's OOM rows of a snapshot device, the peak rule's count and the
-- leak rule's test each read a device's rows, which was a scan of every
-- error for each device (many devices x many errors).
CREATE INDEX IF NOT EXISTS oom_event_by_device ON oom_event (device_id, source_id);
