-- Migration 1: the foundation's schema (PRAGMA user_version = 1).
-- A database is brought to the current version by running every migration
-- after its user_version in order (src/db/db.c); a migration is never
-- edited once released: change the schema with a new numbered file.
--
-- The database is the only way the stages talk: importers write sources and
-- raw facts (devices, memory events, ops, steps, OOM events); analysis passes
-- read those and write derived tables (allocations, peaks, per-step and
-- per-operator figures, findings); renderers only read.
--
-- Times: every *_ns column is integer nanoseconds on its source's clock.
-- Add source.base_time_ns to get nanoseconds since the Unix epoch. A
-- device's timeline is ordered by ts_ns: today each device's events come
-- from one source; aligning several sources' clocks is the job of the
-- reader that brings them (multi-rank import).
-- Sizes: every *bytes column is an integer count of bytes.

CREATE TABLE IF NOT EXISTS source (
    id              INTEGER PRIMARY KEY,
    path            TEXT NOT NULL,            -- as given on the command line
    format          TEXT NOT NULL,            -- reader name, e.g. 'kineto'
    compression     TEXT NOT NULL,            -- 'plain', 'gzip', 'zstd'
    content_hash    TEXT NOT NULL UNIQUE,     -- XXH64 of the raw bytes, hex
    raw_bytes       INTEGER NOT NULL,         -- bytes read from the file
    bytes           INTEGER NOT NULL,         -- bytes after decompression
    events          INTEGER NOT NULL DEFAULT 0, -- records read (all kinds)
    truncated       INTEGER NOT NULL DEFAULT 0, -- 1: the file was cut short
    truncated_at    INTEGER,                  -- decompressed byte offset of the cut
    base_time_ns    INTEGER NOT NULL DEFAULT 0,
    start_ns        INTEGER,                  -- first and last event time seen
    end_ns          INTEGER,
    rank            INTEGER,                  -- distributedInfo.rank
    world_size      INTEGER,
    imported_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

-- What a reader tolerated (counted, never fatal): kind is one of
-- 'invalid_utf8', 'control_char', 'int_overflow', 'unknown_key',
-- 'repaired_quote', 'malformed_event', 'oversized_value', 'cpu_memory_event',
-- 'unpaired_free', ...
CREATE TABLE IF NOT EXISTS source_tally (
    source_id       INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    count           INTEGER NOT NULL,
    PRIMARY KEY (source_id, kind)
) WITHOUT ROWID;

-- How many records of each kind a source held ('cpu_op', 'kernel',
-- 'memory', 'flow', ...), as the reader classified them.
CREATE TABLE IF NOT EXISTS source_events (
    source_id       INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    count           INTEGER NOT NULL,
    PRIMARY KEY (source_id, kind)
) WITHOUT ROWID;

-- Top-level metadata a reader found (e.g. 'displayTimeUnit', 'backend').
CREATE TABLE IF NOT EXISTS source_meta (
    source_id       INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
    key             TEXT NOT NULL,
    value           TEXT,
    PRIMARY KEY (source_id, key)
) WITHOUT ROWID;

-- One accelerator. The same physical device seen by several sources (a
-- trace and a snapshot of one rank) is one row: (rank, platform, idx).
-- When a source does not say its rank, nothing tells that two files came
-- from one process, so its devices are its own: `scope` is then the
-- source's id (0 for devices shared by rank).
CREATE TABLE IF NOT EXISTS device (
    id              INTEGER PRIMARY KEY,
    rank            INTEGER NOT NULL DEFAULT -1,  -- -1: unknown / single process
    scope           INTEGER NOT NULL DEFAULT 0,   -- 0, or the source id when rank = -1
    platform        TEXT NOT NULL,            -- 'cuda' or 'rocm'
    idx             INTEGER NOT NULL,         -- device index, as in cuda:N
    label           TEXT NOT NULL,            -- 'cuda:0'
    model           TEXT,                     -- 'NVIDIA H100 80GB HBM3'
    capacity_bytes  INTEGER,                  -- totalGlobalMem
    totals_known    INTEGER NOT NULL DEFAULT 1, -- 0: allocated was rebuilt from deltas
    UNIQUE (rank, scope, platform, idx)
);

-- Every allocator event on a device, as recorded ('[memory]' in Kineto).
-- bytes > 0 allocates, < 0 frees. total_* are the allocator's figures
-- after the event; for old traces without them, analysis fills
-- total_allocated from the running sum and leaves total_reserved NULL.
CREATE TABLE IF NOT EXISTS mem_event (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL,
    device_id       INTEGER NOT NULL,
    ts_ns           INTEGER NOT NULL,
    bytes           INTEGER NOT NULL,
    addr            INTEGER,
    total_allocated INTEGER,
    total_reserved  INTEGER,
    pid             INTEGER,
    tid             INTEGER,
    op_id           INTEGER                   -- innermost enclosing cpu_op (analysis)
);

-- CPU-side ranges: cpu_op, user_annotation, python_function, ...
CREATE TABLE IF NOT EXISTS op (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL,
    cat             TEXT NOT NULL,
    name_id         INTEGER NOT NULL REFERENCES name(id),
    pid             INTEGER,
    tid             INTEGER,
    ts_ns           INTEGER NOT NULL,
    dur_ns          INTEGER NOT NULL,
    external_id     INTEGER
);

-- Interned event names: traces repeat a few thousand names millions of times.
CREATE TABLE IF NOT EXISTS name (
    id              INTEGER PRIMARY KEY,
    text            TEXT NOT NULL UNIQUE
);

-- GPU-side activity: kernels, memcpy, memset.
CREATE TABLE IF NOT EXISTS gpu_op (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL,
    cat             TEXT NOT NULL,            -- 'kernel', 'gpu_memcpy', 'gpu_memset'
    name_id         INTEGER NOT NULL REFERENCES name(id),
    device_idx      INTEGER,
    stream          INTEGER,
    ts_ns           INTEGER NOT NULL,
    dur_ns          INTEGER NOT NULL,
    correlation     INTEGER,
    external_id     INTEGER,
    bytes           INTEGER                   -- memcpy/memset size
);

-- ProfilerStep#N ranges.
CREATE TABLE IF NOT EXISTS step (
    source_id       INTEGER NOT NULL,
    number          INTEGER NOT NULL,
    ts_ns           INTEGER NOT NULL,
    dur_ns          INTEGER NOT NULL,
    PRIMARY KEY (source_id, number)
) WITHOUT ROWID;

-- An allocation that failed ('[OutOfMemory]' in Kineto; later also from
-- job logs and snapshots).
CREATE TABLE IF NOT EXISTS oom_event (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL,
    device_id       INTEGER NOT NULL,
    ts_ns           INTEGER,
    requested_bytes INTEGER,
    total_allocated INTEGER,
    total_reserved  INTEGER,
    op_id           INTEGER,
    message         TEXT
);

-- Derived (analysis): each allocation paired with its free by address.
CREATE TABLE IF NOT EXISTS allocation (
    id              INTEGER PRIMARY KEY,
    device_id       INTEGER NOT NULL,
    addr            INTEGER,
    bytes           INTEGER NOT NULL,
    alloc_ts_ns     INTEGER NOT NULL,
    free_ts_ns      INTEGER,                  -- NULL: still live when the trace ended
    alloc_event_id  INTEGER NOT NULL,
    free_event_id   INTEGER,
    op_id           INTEGER
);

-- Derived (analysis): per device figures.
CREATE TABLE IF NOT EXISTS device_summary (
    device_id               INTEGER PRIMARY KEY,
    events                  INTEGER NOT NULL,
    start_ns                INTEGER,
    end_ns                  INTEGER,
    peak_allocated_bytes    INTEGER,
    peak_allocated_ts_ns    INTEGER,
    peak_allocated_event_id INTEGER,
    peak_allocated_op_id    INTEGER,
    peak_allocated_step     INTEGER,
    peak_reserved_bytes     INTEGER,
    peak_reserved_ts_ns     INTEGER,
    live_unknown_bytes      INTEGER  -- at the peak: allocated before tracing began
);

-- Derived (analysis): per step and device.
CREATE TABLE IF NOT EXISTS step_summary (
    device_id               INTEGER NOT NULL,
    source_id               INTEGER NOT NULL,
    step                    INTEGER NOT NULL,
    peak_allocated_bytes    INTEGER,
    peak_reserved_bytes     INTEGER,
    start_allocated_bytes   INTEGER,
    end_allocated_bytes     INTEGER,
    alloc_count             INTEGER,
    alloc_bytes             INTEGER,
    PRIMARY KEY (device_id, source_id, step)
) WITHOUT ROWID;

-- Derived (analysis): memory per operator name and device, as the
-- TensorBoard profiler's memory view showed it. self: events whose
-- innermost cpu_op has this name; incl: events inside such an op at any
-- depth (an event nested in two ops of one name counts twice, as there).
CREATE TABLE IF NOT EXISTS op_memory (
    name_id             INTEGER NOT NULL,
    device_id           INTEGER NOT NULL,
    self_alloc_count    INTEGER NOT NULL,
    self_alloc_bytes    INTEGER NOT NULL,
    self_free_bytes     INTEGER NOT NULL,
    incl_alloc_count    INTEGER NOT NULL,
    incl_alloc_bytes    INTEGER NOT NULL,
    incl_free_bytes     INTEGER NOT NULL,
    PRIMARY KEY (name_id, device_id)
) WITHOUT ROWID;

-- Derived (analysis): calls of each cpu_op name.
CREATE TABLE IF NOT EXISTS op_calls (
    name_id             INTEGER PRIMARY KEY,
    calls               INTEGER NOT NULL
);

-- Diagnosis output: one row per finding (empty until diagnosis exists).
CREATE TABLE IF NOT EXISTS finding (
    id              INTEGER PRIMARY KEY,
    device_id       INTEGER,
    kind            TEXT NOT NULL,
    severity        TEXT NOT NULL,            -- 'info', 'warning', 'critical'
    title           TEXT NOT NULL,
    detail          TEXT,
    data            TEXT                      -- JSON object with the figures cited
);
