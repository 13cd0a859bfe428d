-- Migration 8 (PRAGMA user_version = 8): where the memory went (docs/breakdown.md).
-- Categories are spelled as PyTorch's memory profiler spells them:
-- parameter, optimizer_state, input, temporary, activation, gradient,
-- autograd_detail, unknown.

-- The category a source states for a memory event (export_memory_timeline
-- files state PyTorch's own). NULL: the source does not say.
ALTER TABLE mem_event ADD COLUMN category TEXT;

-- Derived (pass phases): the phases of each source's run, from its ops:
-- kind is forward, backward, optimizer or zero_grad; step is the
-- ProfilerStep#N the phase lies in (NULL outside steps); tid: the thread
-- the phase ran on (backward runs on autograd's own thread).
CREATE TABLE phase (
    source_id       INTEGER NOT NULL,
    step            INTEGER,
    kind            TEXT NOT NULL,
    tid             INTEGER,
    start_ns        INTEGER NOT NULL,
    end_ns          INTEGER NOT NULL
);

-- Derived (pass categorize): each allocation's category, the phases it was
-- allocated and freed in (forward, backward, optimizer, zero_grad, other;
-- 'before' for the time before the first step; free_phase NULL: never
-- freed) and the rule that decided (its name in the rules file).
ALTER TABLE allocation ADD COLUMN category TEXT;
ALTER TABLE allocation ADD COLUMN alloc_phase TEXT;
ALTER TABLE allocation ADD COLUMN free_phase TEXT;
ALTER TABLE allocation ADD COLUMN category_rule TEXT;

-- Derived (pass locate): where in the user's code the allocation was made:
-- the innermost user frame (frame.id: file, line, function) and the
-- module path (model.layers.3.mlp), when the source records them.
ALTER TABLE allocation ADD COLUMN frame_id INTEGER;
ALTER TABLE allocation ADD COLUMN module TEXT;

-- Derived (pass breakdown): at each device's peak, allocated bytes per
-- category: the eight rows of a device sum exactly to
-- device_summary.peak_allocated_bytes. count: live allocations of that
-- category (memory known only as a total counts none).
CREATE TABLE peak_category (
    device_id       INTEGER NOT NULL,
    category        TEXT NOT NULL,
    bytes           INTEGER NOT NULL,
    count           INTEGER NOT NULL,
    PRIMARY KEY (device_id, category)
) WITHOUT ROWID;

-- Derived (pass breakdown): the categories over time, for the chart: at
-- each sample time, the bytes of each category allocated then.
CREATE TABLE category_sample (
    device_id       INTEGER NOT NULL,
    ts_ns           INTEGER NOT NULL,
    category        TEXT NOT NULL,
    bytes           INTEGER NOT NULL,
    PRIMARY KEY (device_id, ts_ns, category)
) WITHOUT ROWID;

-- Derived (pass phases): the allocated peak of each phase of each step
-- (phase: forward, backward, optimizer, other; step NULL: outside steps).
CREATE TABLE phase_peak (
    device_id       INTEGER NOT NULL,
    source_id       INTEGER NOT NULL,
    step            INTEGER,
    phase           TEXT NOT NULL,
    peak_allocated_bytes INTEGER NOT NULL,
    peak_ts_ns      INTEGER NOT NULL
);

-- Derived (pass summarise_devices): at the allocated peak, every live
-- allocation (not only the top ten) and the cache: reserved minus
-- allocated at that moment (NULL when reserved is unknown).
ALTER TABLE device_summary ADD COLUMN live_at_peak_count INTEGER;
ALTER TABLE device_summary ADD COLUMN live_at_peak_bytes INTEGER;
ALTER TABLE device_summary ADD COLUMN cached_at_peak_bytes INTEGER;

-- Derived (pass categorize): the digest (XXH64, hex) of the category rules
-- the analysis used; a report asked for with other rules analyses again.
ALTER TABLE analysis_state ADD COLUMN category_rules TEXT;
