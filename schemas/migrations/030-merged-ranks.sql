-- Migration 30: a job database made by `vramreport merge` from per-rank
-- databases (docs/scale.md): a row per rank database merged, in order.
-- Its derived tables are the ranks' own, copied; its memory events are
-- thinned (each bucket's highest points, the peaks' events and those of
-- the allocations live at the peaks), so its analysis is never redone
-- over them: a database with rows here counts as analysed, and nothing is
-- imported into it. A table of its own, not a column of analysis_state:
-- CREATE ... IF NOT EXISTS can be replayed, ALTER TABLE ADD COLUMN cannot.
CREATE TABLE IF NOT EXISTS merged_rank (
    id              INTEGER PRIMARY KEY,  -- the order merged, from 1
    path            TEXT NOT NULL,        -- the rank database, as given
    ranks           TEXT,                 -- its devices' ranks, "0" or "0,1"; NULL: none said
    sources         INTEGER NOT NULL,     -- its sources
    mem_events      INTEGER NOT NULL,     -- its memory events
    kept_events     INTEGER NOT NULL,     -- of those, the ones copied
    merged_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
