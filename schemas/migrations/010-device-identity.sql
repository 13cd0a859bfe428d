-- Migration 10 (PRAGMA user_version = 10): a snapshot and a trace of one
-- process are one device (docs/schema.md, sources of one device).
--
-- A snapshot does not say its rank, so its devices start as its own
-- (device.scope = its source id). When an import finds that a snapshot's
-- device and a trace's device hold the same allocations (the rule is in
-- schemas/identity.sql, join_rules in src/import/identity.c), the
-- snapshot's rows are moved to the trace's device in that import's
-- transaction and its own device row goes: from then on the device has two
-- sources and choose_sources shows them beside each other, never summed.
-- One row per join, with the figures that decided it, so the report can
-- say why two files were taken to be one device.
CREATE TABLE device_join (
    source_id       INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE, -- the snapshot
    device_id       INTEGER NOT NULL,         -- the device it is now on (the trace's)
    with_source_id  INTEGER NOT NULL,         -- the trace whose allocations matched
    rule            TEXT NOT NULL,            -- 'history' or 'end_state'
    compared        INTEGER NOT NULL,         -- the snapshot's allocations compared (history),
                                              -- or the trace's live at its end (end_state)
    matched         INTEGER NOT NULL,         -- of them, found in the other file
    other_compared  INTEGER,                  -- history: the trace's allocations compared
    other_matched   INTEGER,                  -- and of them, found in the snapshot
    PRIMARY KEY (source_id, device_id)
) WITHOUT ROWID;
