-- Migration 15 (PRAGMA user_version = 15): memory print lines of job logs
-- (docs/formats/memory-print.md): "allocated: 12.34 GB, reserved: 14.00 GB", DeepSpeed's
-- "MA ... Max_MA ...", Megatron's memory report, mmcv's "memory: 6836",
-- detectron2's "max_mem: 8277M", ... (schemas/memprint.patterns). One row
-- per print line.
--
-- Figures are bytes: the printed number times its unit (as printed, or
-- the rule's default for a bare number), read 1024-based ("GB" = 2^30:
-- what these prints compute, / 1024**3), rounded to the nearest byte; a
-- print keeps 2 decimals or so, so they are approximate. NULL where the
-- line does not print that figure. `figure`: 'current' (the figures are
-- the allocator's at the print) or 'peak' (the printing code reports the
-- peak since the start or a reset: mmcv, detectron2).
CREATE TABLE memory_print (
    id                  INTEGER PRIMARY KEY,
    source_id           INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
    line                INTEGER NOT NULL,     -- 1-based line of the log
    ts_ns               INTEGER,              -- the line's stamp, else the nearest before it (3 lines)
    step                INTEGER,              -- the line's step, else the nearest before it
    epoch               INTEGER,
    rank                INTEGER,
    device_id           INTEGER REFERENCES device(id),  -- NULL: the line names none
    framework           TEXT NOT NULL,        -- the rule's: deepspeed, megatron, mmcv, generic, ...
    figure              TEXT NOT NULL CHECK (figure IN ('current', 'peak')),
    allocated_bytes     INTEGER,
    reserved_bytes      INTEGER,
    max_allocated_bytes INTEGER,
    max_reserved_bytes  INTEGER,
    unit                TEXT NOT NULL,        -- of the first figure: 'GB', 'MB', 'M', 'B', ...
    unit_reading        TEXT NOT NULL         -- '1024-based'
);
CREATE INDEX memory_print_source ON memory_print(source_id, line);
