-- Migration 31: cpu_ops and annotations by source and time, with what the
-- phases pass reads of each (analyze.sql's select_phase_ops: thread and
-- name, and the category its WHERE names), so that it walks them in time order without sorting every op of
-- the trace: its sort was most of the pass (0.11 s of a 200 MB trace's
-- 0.47 s of analysis). Kept from the first row, as the thread indexes of
-- migration 21 are: an insert on the writer thread, which waits for the
-- reader most of an import. A partial index: the query's WHERE holds the
-- same `cat IN (...)` term, which is how SQLite knows it may use it.
CREATE INDEX IF NOT EXISTS op_phase_order
    ON op (source_id, ts_ns, dur_ns DESC, id, pid, tid, name_id, cat)
    WHERE cat IN ('cpu_op', 'user_annotation');
