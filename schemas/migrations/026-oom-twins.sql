-- Migration 26 (PRAGMA user_version = 26): one OOM is one OOM everywhere.
-- Derived (pass diagnose): each OOM event that tells again an OOM an
-- event of another source told first (a trace's [OutOfMemory] and the
-- log's message, a snapshot's oom entry: diagnosis.md's twin rule), and
-- that first event. The report counts and lists the OOMs without them,
-- each with the sources that told it.
CREATE TABLE IF NOT EXISTS oom_twin (
    oom_id          INTEGER PRIMARY KEY,
    first_id        INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS oom_twin_by_first ON oom_twin (first_id);
