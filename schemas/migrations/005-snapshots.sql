-- Migration 5 (PRAGMA user_version = 5): CUDA caching-allocator snapshots
-- (torch.cuda.memory._dump_snapshot, docs/formats/allocator-snapshot.md).
-- A snapshot is the state the
-- allocator ends in (segments and their blocks) and, when history was
-- recorded, the entries that led there (trace entries), each with the
-- stack that made it. Its alloc and free entries are also memory events
-- (mem_event), so a snapshot's device has a timeline like a trace's and
-- goes through the same one-job rules (never summed with a trace of the
-- same moments).

-- Code locations, shared by every stack that passes through them.
CREATE TABLE frame (
    id              INTEGER PRIMARY KEY,
    filename_id     INTEGER NOT NULL REFERENCES name(id),
    line            INTEGER NOT NULL,
    function_id     INTEGER NOT NULL REFERENCES name(id),
    UNIQUE (filename_id, line, function_id)
);

-- A call stack, innermost frame first, stored once however often it recurs.
-- user_frame_id: the first frame outside torch (and outside C++), the
-- user's line that asked for the memory; NULL when every frame is torch's.
CREATE TABLE stack (
    id              INTEGER PRIMARY KEY,
    digest          TEXT NOT NULL UNIQUE,     -- XXH64 of its frame ids, hex
    depth           INTEGER NOT NULL,
    user_frame_id   INTEGER REFERENCES frame(id)
);

CREATE TABLE stack_frame (
    stack_id        INTEGER NOT NULL REFERENCES stack(id),
    position        INTEGER NOT NULL,         -- 0: innermost
    frame_id        INTEGER NOT NULL REFERENCES frame(id),
    PRIMARY KEY (stack_id, position)
) WITHOUT ROWID;

-- What the allocator holds from the driver at the end (cudaMalloc'd or
-- mapped, for expandable segments).
CREATE TABLE segment (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL,
    device_id       INTEGER NOT NULL,
    address         INTEGER,
    total_bytes     INTEGER NOT NULL,
    allocated_bytes INTEGER,
    active_bytes    INTEGER,
    requested_bytes INTEGER,
    stream          INTEGER,
    segment_type    TEXT,                     -- 'large', 'small'
    pool            TEXT,                     -- segment_pool_id as "a,b"
    is_expandable   INTEGER,
    stack_id        INTEGER
);

-- The blocks a segment is cut into. state: 'active_allocated' (in use),
-- 'active_pending_free' (freed, waiting on a stream; also written
-- 'active_awaiting_free'), 'inactive' (free, cached).
CREATE TABLE block (
    id              INTEGER PRIMARY KEY,
    segment_id      INTEGER NOT NULL REFERENCES segment(id),
    address         INTEGER,
    bytes           INTEGER NOT NULL,
    requested_bytes INTEGER,
    state           TEXT NOT NULL,
    stack_id        INTEGER
);

-- The allocator's recorded history (a ring buffer: the oldest entries may
-- be gone). action: alloc, free_requested, free_completed, segment_alloc,
-- segment_free, segment_map, segment_unmap, snapshot, oom, or any other
-- the file names. ts_ns: time_us * 1000 (Unix epoch) when the file has
-- time_us, else the entry's number in its list.
CREATE TABLE trace_entry (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL,
    device_id       INTEGER NOT NULL,
    seq             INTEGER NOT NULL,
    action          TEXT NOT NULL,
    address         INTEGER,
    bytes           INTEGER,
    stream          INTEGER,
    ts_ns           INTEGER NOT NULL,
    device_free_bytes INTEGER,                -- oom entries: what CUDA said was free
    stack_id        INTEGER
);

-- The allocator's configuration as the snapshot records it.
CREATE TABLE allocator_setting (
    source_id       INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
    key             TEXT NOT NULL,
    value           TEXT,
    PRIMARY KEY (source_id, key)
) WITHOUT ROWID;

-- A memory event's stack, when its source records one (snapshots).
ALTER TABLE mem_event ADD COLUMN stack_id INTEGER;

-- What the allocator said when an allocation failed.
ALTER TABLE oom_event ADD COLUMN device_free_bytes INTEGER;
ALTER TABLE oom_event ADD COLUMN largest_free_block_bytes INTEGER;

-- Derived (analysis, pass snapshot_state): per snapshot source and device,
-- the state the snapshot ends in.
CREATE TABLE snapshot_summary (
    device_id               INTEGER NOT NULL,
    source_id               INTEGER NOT NULL,
    final_allocated_bytes   INTEGER NOT NULL,  -- blocks in use
    final_reserved_bytes    INTEGER NOT NULL,  -- segments
    segment_count           INTEGER NOT NULL,
    block_count             INTEGER NOT NULL,
    largest_free_block_bytes INTEGER,          -- the largest inactive block
    free_in_segments_bytes  INTEGER NOT NULL,  -- inactive blocks: cached, free
    pending_free_bytes      INTEGER NOT NULL,  -- freed, waiting on a stream
    internal_waste_bytes    INTEGER,           -- in-use blocks: size - requested
    inactive_split_bytes    INTEGER NOT NULL,  -- free blocks in split segments
    expandable_segments     INTEGER,           -- 1 when any segment is expandable
    pre_existing_bytes      INTEGER,           -- live before the first recorded entry
    PRIMARY KEY (device_id, source_id)
) WITHOUT ROWID;

-- Derived (analysis, pass snapshot_state): at each device's peak, the
-- live allocations grouped by their first frame outside torch.
CREATE TABLE alloc_site (
    device_id       INTEGER NOT NULL,
    frame_id        INTEGER,                  -- NULL: no stack, or torch's only
    bytes           INTEGER NOT NULL,
    count           INTEGER NOT NULL,
    example_stack_id INTEGER
);
