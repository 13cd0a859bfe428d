-- Migration 6 (PRAGMA user_version = 6): what runs beside a job:
-- nvidia-smi logs, job logs with out-of-memory errors, and the allocator's
-- own statistics (memory_stats(), memory_summary()). Also the identity of
-- a device when a source knows it (docs/schema.md, sources of one device).

-- A device's identity, where a source knows it. nvidia-smi numbers GPUs
-- physically, PyTorch after CUDA_VISIBLE_DEVICES: the UUID or the PCI bus
-- id ties the two together; the index alone is the fallback (and said so).
ALTER TABLE device ADD COLUMN uuid TEXT;          -- 'GPU-6a5d...'
ALTER TABLE device ADD COLUMN pci_bus_id TEXT;    -- '00000000:18:00.0', as nvidia-smi writes it

-- A GPU as a monitoring source saw it. idx: nvidia-smi's own (physical)
-- index, NULL when the file does not give it. A MIG instance is a GPU of
-- its own (mig: 'GI 1 / CI 0'), with its own memory, beside its parent.
-- device_id: the device it was matched to (analysis), NULL when none.
CREATE TABLE gpu (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
    host            TEXT,
    idx             INTEGER,
    uuid            TEXT,
    pci_bus_id      TEXT,
    name            TEXT,                     -- 'NVIDIA A100-SXM4-80GB'
    mig             TEXT,
    memory_total_bytes INTEGER,
    device_id       INTEGER,
    match_rule      TEXT                      -- 'uuid', 'pci_bus_id', 'index' (analysis)
);

-- One reading of one GPU. ts_ns: on the source's clock (see
-- source.clock_offset_ns; a wall-clock stamp without a zone is stored as
-- written, read as UTC, and the source's offset applies --tz), NULL when
-- the reading has no time. A figure the file leaves out ([N/A],
-- [Not Supported], a field not queried) is NULL.
CREATE TABLE gpu_sample (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
    gpu_id          INTEGER NOT NULL REFERENCES gpu(id),
    seq             INTEGER NOT NULL,         -- order in the file
    ts_ns           INTEGER,
    memory_used_bytes     INTEGER,
    memory_total_bytes    INTEGER,
    memory_free_bytes     INTEGER,
    memory_reserved_bytes INTEGER,            -- memory.reserved (driver's own)
    utilization_gpu_pct   INTEGER,
    utilization_memory_pct INTEGER
);

-- A process using a GPU, as a monitoring source listed it (the table's
-- process rows, --query-compute-apps, -q's Processes). sample_id ties it
-- to the reading it came with, when there was one.
CREATE TABLE process_sample (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
    gpu_id          INTEGER REFERENCES gpu(id),
    sample_id       INTEGER REFERENCES gpu_sample(id),
    ts_ns           INTEGER,
    pid             INTEGER,
    process_name    TEXT,
    process_type    TEXT,                     -- 'C', 'G', 'C+G'
    used_bytes      INTEGER
);

-- Out-of-memory events from every source. A job log's OOM may not say
-- which device (device_id NULL) and carries the message's figures; the
-- table is rebuilt to let device_id be NULL and to hold them.
--   device_idx: the index the message names ("GPU 0"), as PyTorch numbers it
--   rank: from a "[rank3]:" prefix or the source
--   capacity_bytes: "total capacity"; device_free_bytes: "free"
--   total_allocated: "allocated by PyTorch" / "already allocated"
--   total_reserved: "reserved in total by PyTorch", or allocated plus
--     "reserved by PyTorch but unallocated"
--   reserved_unallocated_bytes: as the message says it
--   allowed_bytes: set_per_process_memory_fraction's limit ("allowed")
--   private_pools_bytes: "allocated in private pools (e.g., CUDA Graphs)"
--   line: the log line the message starts on (NULL: not from a log)
--   wording: which pattern read it ('current', 'capacty-2.1', 'reserved-in-total',
--     'cached', 'bare', ...); user_frame: the traceback's last frame outside
--     torch ('train.py:42 in forward'), when the log has one.
CREATE TABLE oom_event_v6 (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL,
    device_id       INTEGER,
    ts_ns           INTEGER,
    requested_bytes INTEGER,
    total_allocated INTEGER,
    total_reserved  INTEGER,
    op_id           INTEGER,
    message         TEXT,
    device_free_bytes INTEGER,
    largest_free_block_bytes INTEGER,
    device_idx      INTEGER,
    rank            INTEGER,
    capacity_bytes  INTEGER,
    reserved_unallocated_bytes INTEGER,
    allowed_bytes   INTEGER,
    private_pools_bytes INTEGER,
    line            INTEGER,
    wording         TEXT,
    user_frame      TEXT
);
INSERT INTO oom_event_v6 (id, source_id, device_id, ts_ns, requested_bytes, total_allocated,
                          total_reserved, op_id, message, device_free_bytes,
                          largest_free_block_bytes)
SELECT id, source_id, device_id, ts_ns, requested_bytes, total_allocated, total_reserved,
       op_id, message, device_free_bytes, largest_free_block_bytes
  FROM oom_event;
DROP TABLE oom_event;
ALTER TABLE oom_event_v6 RENAME TO oom_event;

-- The processes an OOM message lists ("Process 20398 has 14.52 GiB memory
-- in use"; pid NULL: "this process").
CREATE TABLE oom_process (
    oom_id          INTEGER NOT NULL REFERENCES oom_event(id),
    pid             INTEGER,
    used_bytes      INTEGER NOT NULL
);

-- Lines of a job log worth showing: each OOM message and the lines
-- around it (role 'oom', 'context', 'traceback'), with their number.
CREATE TABLE log_line (
    source_id       INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
    line            INTEGER NOT NULL,
    ts_ns           INTEGER,
    role            TEXT NOT NULL,
    oom_id          INTEGER,
    text            TEXT NOT NULL,
    PRIMARY KEY (source_id, line)
) WITHOUT ROWID;

-- The caching allocator's statistics, one row per figure, under
-- memory_stats()'s own flat keys ('allocated_bytes.all.peak',
-- 'num_ooms', 'inactive_split_bytes.large_pool.current'): a
-- memory_summary() box is read into the same keys. device_idx: as the
-- dump says (memory_summary's "device: 0"), NULL when it does not.
CREATE TABLE allocator_stat (
    source_id       INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
    device_idx      INTEGER,
    dump            INTEGER NOT NULL DEFAULT 0,  -- nth dump in the file
    key             TEXT NOT NULL,
    value           INTEGER NOT NULL
);
CREATE INDEX allocator_stat_by_source ON allocator_stat (source_id, dump, key);
