-- Migration 16 (PRAGMA user_version = 16): bandwidth or capacity (issue
-- 13). For each GPU of the job, whether it ran short of memory
-- (capacity-bound), waited for work with memory to spare (starved: the
-- input pipeline, host transfers or memory bandwidth), or neither (fine),
-- with the figures behind the verdict, the device's memory type and peak
-- bandwidth from the built-in GPU table (src/estimate/estimate.c), and
-- what a profiler trace's copies and memsets achieved against that peak.
-- Written by the analysis pass `bound` (src/analyze/bandwidth.c); thresholds
-- and their reasons: docs/bandwidth.md.
--
-- One row per GPU a monitoring source (nvidia-smi, gpustat) read
-- (gpu_id, with device_id when match_gpus tied it to the job's device),
-- and one per trace device with a name that no monitored GPU was matched
-- to (gpu_id NULL): its verdict rests on out-of-memory errors alone.
CREATE TABLE bandwidth_or_capacity (
    id                  INTEGER PRIMARY KEY,
    gpu_id              INTEGER,              -- gpu.id; NULL: a trace's device alone
    device_id           INTEGER,              -- device.id, when known
    reported_name       TEXT,                 -- the name matched: 'NVIDIA A100-SXM4-80GB'
    spec                TEXT,                 -- the table's entry: 'A100-80GB'; NULL: none matched
    memory_type         TEXT,                 -- 'HBM2e', 'GDDR6X'
    bandwidth_bytes_per_s INTEGER,            -- the datasheet's peak (decimal)
    spec_capacity_bytes INTEGER,              -- the table's capacity
    capacity_bytes      INTEGER,              -- what the readings or the device said
    readings            INTEGER NOT NULL DEFAULT 0, -- the job's readings (bound.c: held memory)
    memory_readings     INTEGER NOT NULL DEFAULT 0, -- of them, with memory used and a total
    memory_full_readings INTEGER NOT NULL DEFAULT 0, -- of those, used >= 90% of total
    memory_full_share   REAL,                 -- memory_full_readings / memory_readings
    memory_max_share    REAL,                 -- the most used / total of any reading
    util_readings       INTEGER NOT NULL DEFAULT 0, -- readings with utilization.gpu
    util_median_pct     REAL,
    util_mean_pct       REAL,
    ooms                INTEGER NOT NULL DEFAULT 0, -- out-of-memory errors of this GPU
    verdict             TEXT NOT NULL,        -- 'capacity-bound', 'starved', 'fine', 'unknown'
    reason              TEXT NOT NULL,        -- one sentence with the figures
    -- A trace's memcpy/memset on the device (Kineto's bytes and durations):
    -- on the device (device to device, memset) against its peak, and
    -- to or from the host (HtoD, DtoH: bound by the host link) apart.
    copy_ops            INTEGER NOT NULL DEFAULT 0,
    copy_bytes          INTEGER,
    copy_busy_ns        INTEGER,              -- the union of their intervals
    achieved_copy_bytes_per_s INTEGER,        -- copy_bytes / copy_busy_ns
    achieved_copy_share REAL,                 -- of bandwidth_bytes_per_s
    best_copy_name      TEXT,                 -- the fastest one ('Memcpy DtoD (Device -> Device)')
    best_copy_bytes     INTEGER,
    best_copy_ns        INTEGER,
    best_copy_bytes_per_s INTEGER,
    best_copy_share     REAL,
    host_copy_ops       INTEGER NOT NULL DEFAULT 0,
    host_copy_bytes     INTEGER,
    host_copy_busy_ns   INTEGER,
    host_copy_bytes_per_s INTEGER
);
