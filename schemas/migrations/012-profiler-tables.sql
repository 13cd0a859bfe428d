-- Migration 12 (PRAGMA user_version = 12): profiler tables printed in job
-- logs (docs/formats/profiler-table.md): what key_averages().table(...)
-- printed, one row per
-- table found and one per op row, with its memory figures as printed.
--
-- A figure is the printed value times its unit (b, Kb, Mb, Gb: 1024
-- factors) rounded to the nearest byte; the print keeps two decimals, so
-- above 1 Kb it is approximate (within 0.005 of the unit). NULL where the
-- table lacks the column (or the cell could not be read).
CREATE TABLE profiler_table (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
    line            INTEGER NOT NULL,         -- the log line of the rule above its header
    columns         TEXT NOT NULL,            -- header names as printed, in order, tab-joined
    row_count       INTEGER NOT NULL DEFAULT 0, -- op rows read
    truncated       INTEGER NOT NULL DEFAULT 0  -- 1: cut short (no closing rule, or the bound)
);
CREATE INDEX profiler_table_source ON profiler_table(source_id);

CREATE TABLE profiler_table_op (
    table_id            INTEGER NOT NULL REFERENCES profiler_table(id) ON DELETE CASCADE,
    position            INTEGER NOT NULL,     -- 0-based, in printed order
    name                TEXT NOT NULL,        -- as printed (perhaps cut with "...")
    calls               INTEGER,
    self_cuda_mem_bytes INTEGER,              -- "Self CUDA Mem" (or the device's, e.g. "Self XPU Mem")
    cuda_mem_bytes      INTEGER,              -- "CUDA Mem"
    self_cpu_mem_bytes  INTEGER,              -- "Self CPU Mem"
    cpu_mem_bytes       INTEGER,              -- "CPU Mem"
    PRIMARY KEY (table_id, position)
) WITHOUT ROWID;
