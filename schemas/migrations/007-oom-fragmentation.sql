-- Migration 7 (PRAGMA user_version = 7): the allocator's layout at each
-- `oom` entry of a snapshot.

-- Derived (analysis, pass snapshot_replay, src/analyze/snapshot_replay.c):
-- at each snapshot OOM, the allocator's segments rebuilt by walking the
-- trace back from the end state, one row per pool and stream. pool:
-- 'large' or 'small' (the default pools, by the segment's type; a
-- segment only the trace names is 'small' when it is 2 MiB, the small
-- pool's segment size), or 'private a,b' (a CUDA graph's or a mempool's,
-- its segment_pool_id). The pool and stream the failed request would be
-- served from (small up to 1 MiB, else large; the OOM's stream) has its
-- row even when it holds nothing, with is_request_pool = 1.
CREATE TABLE oom_fragmentation (
    oom_id                  INTEGER NOT NULL REFERENCES oom_event(id),
    pool                    TEXT NOT NULL,
    stream                  INTEGER,
    is_request_pool         INTEGER NOT NULL,  -- 1: where the request was looked for
    segments                INTEGER NOT NULL,
    expandable_segments     INTEGER NOT NULL,  -- of them, expandable
    reserved_bytes          INTEGER NOT NULL,  -- the segments' size
    allocated_bytes         INTEGER NOT NULL,  -- blocks in use or waiting to be freed
    free_bytes              INTEGER NOT NULL,  -- reserved - allocated: cached
    largest_free_block_bytes INTEGER NOT NULL, -- the largest free run inside a segment
    inactive_split_bytes    INTEGER NOT NULL,  -- free bytes of segments partly in use
    internal_waste_bytes    INTEGER NOT NULL,  -- blocks in use: size - requested (the
                                               -- rounding; 0 for a block whose request
                                               -- the snapshot does not say)
    unmatched_entries       INTEGER NOT NULL,  -- entries after the OOM the layout did not
                                               -- match (0: exact but for block rounding)
    PRIMARY KEY (oom_id, pool, stream)
);
