-- Migration 2 (PRAGMA user_version = 2): the database says whether its
-- analysis is current, knows its own kind, and recognises content by its
-- decompressed bytes.

-- Marks the file as a vramreport database (PRAGMA application_id,
-- "vrmr"), so a foreign SQLite file is refused whatever its user_version.
PRAGMA application_id = 1987210610;

-- One row. An import sets complete = 0 in its own transaction; the
-- analysis sets it to 1 in the transaction that writes the derived tables.
-- Each change commits with the data it describes, so a run killed between
-- an import and its analysis leaves complete = 0, never a stale "1".
-- Databases upgraded from version 1 start at 0: their analysis is redone.
CREATE TABLE analysis_state (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    complete        INTEGER NOT NULL,         -- 1: derived tables match the sources
    analysed_at     TEXT                      -- UTC, when complete was last set
);
INSERT INTO analysis_state (id, complete) VALUES (1, 0);

-- XXH64 of the decompressed bytes: the same trace as plain, .gz and .zst
-- is one content (content_hash is of the raw bytes, known before reading).
ALTER TABLE source ADD COLUMN data_hash TEXT;
CREATE INDEX source_by_data_hash ON source (data_hash);
