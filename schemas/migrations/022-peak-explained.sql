-- Migration 22 (PRAGMA user_version = 22): how the part of a device's peak
-- that no live allocation explains was explained, and what is still not
-- (docs/breakdown.md, "How we know"). Derived, written by the breakdown
-- pass (src/analyze/explain.c decides the rows).
--
-- One row per inference: `bytes` of the peak it explains as `category`,
-- `moved_bytes` of them taken out of unknown by it (0 for a row that says
-- why bytes are in their category already: blocks decided by their
-- stacks), `confidence` high, medium or low.
CREATE TABLE IF NOT EXISTS peak_explained (
    device_id       INTEGER NOT NULL,
    position        INTEGER NOT NULL,
    rule            TEXT NOT NULL,
    category        TEXT NOT NULL,
    bytes           INTEGER NOT NULL,
    moved_bytes     INTEGER NOT NULL,
    confidence      TEXT NOT NULL,
    PRIMARY KEY (device_id, position)
) WITHOUT ROWID;

-- The figures an inference stands on, in the order it gives them: `value`
-- an integer (bytes, counts) or a text, `source` where it was read
-- (`snapshot`, `trace`, `frames`, `annotations`, `phases`, `breakdown`).
CREATE TABLE IF NOT EXISTS peak_evidence (
    device_id       INTEGER NOT NULL,
    position        INTEGER NOT NULL,
    seq             INTEGER NOT NULL,
    name            TEXT NOT NULL,
    value,
    source          TEXT NOT NULL,
    PRIMARY KEY (device_id, position, seq)
) WITHOUT ROWID;

-- What stays unknown at the peak, by why: live since before the record
-- with nothing in the files to say what it was; events without addresses
-- (a record that cannot pair its frees); allocations of the record that
-- no category rule decided.
CREATE TABLE IF NOT EXISTS peak_unknown (
    device_id           INTEGER PRIMARY KEY,
    before_record_bytes INTEGER NOT NULL,
    unplaced_bytes      INTEGER NOT NULL,
    undecided_bytes     INTEGER NOT NULL
);
