-- Migration 23 (PRAGMA user_version = 23): which part of the model held
-- the memory at the peak (docs/breakdown.md, "By module").

-- Derived (pass stack_modules): the module path of a snapshot's stack,
-- from its module `forward` frames, outer to inner, each named by its
-- file's name and line ("transformer_lm.py:56 › transformer_block.py:43"):
-- a snapshot's frames say which forward ran, not which instance, so the
-- path names code, as the profiler's with_modules names instances
-- (allocation.module). Written for the stacks a report groups: those of
-- the allocations live at a device's peak and of the blocks in use since
-- before the record (block_before); a stack without a module forward
-- frame has no row.
CREATE TABLE IF NOT EXISTS stack_module (
    stack_id        INTEGER PRIMARY KEY,
    module          TEXT NOT NULL
);

-- Derived (pass breakdown): the blocks in use at a snapshot's end that no
-- allocation of its record made (allocated before the record began, never
-- freed), which the breakdown counts as live at every point of their
-- source, with the category their stack gave them ('unknown' when no rule
-- decided it).
CREATE TABLE IF NOT EXISTS block_before (
    block_id        INTEGER PRIMARY KEY,
    device_id       INTEGER NOT NULL,
    source_id       INTEGER NOT NULL,
    category        TEXT NOT NULL
);
