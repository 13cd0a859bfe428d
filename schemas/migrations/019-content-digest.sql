-- Migration 19 (PRAGMA user_version = 19): a digest of each source's
-- content that cannot be forged.
--
-- content_hash and data_hash are XXH64, fast but not cryptographic: two
-- different files of one length can be made to share one, and the second
-- was then refused as "already imported". data_blake2b is the BLAKE2b-256
-- of the decompressed bytes the reader read, hex: a file whose XXH64 is an
-- earlier source's is that source only when this digest is the same too
-- (src/import/import.c).
--
-- A source imported before this migration has no data_blake2b (NULL): its
-- file may be gone or changed since, so it cannot be computed now. For such
-- a source the 64-bit hash alone decides, as it did when it was imported.
--
-- content_hash was UNIQUE (migration 1), which would refuse the second of
-- two contents with one XXH64. SQLite cannot drop a constraint in place,
-- so the table is made again without it, with every row and column it had
-- (the tables that refer to source do so by name, and keep referring to the
-- new one; foreign keys are not enforced while it is replaced).
CREATE TABLE source_19 (
    id              INTEGER PRIMARY KEY,
    path            TEXT NOT NULL,            -- as given on the command line
    format          TEXT NOT NULL,            -- reader name, e.g. 'kineto'
    compression     TEXT NOT NULL,            -- 'plain', 'gzip', 'zstd'
    content_hash    TEXT NOT NULL,            -- XXH64 of the raw bytes, hex
    raw_bytes       INTEGER NOT NULL,         -- bytes read from the file
    bytes           INTEGER NOT NULL,         -- bytes after decompression
    events          INTEGER NOT NULL DEFAULT 0, -- records read (all kinds)
    truncated       INTEGER NOT NULL DEFAULT 0, -- 1: the file was cut short
    truncated_at    INTEGER,                  -- decompressed byte offset of the cut
    base_time_ns    INTEGER NOT NULL DEFAULT 0,
    start_ns        INTEGER,                  -- first and last event time seen
    end_ns          INTEGER,
    rank            INTEGER,                  -- distributedInfo.rank
    world_size      INTEGER,
    imported_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    data_hash       TEXT,                     -- XXH64 of the decompressed bytes (migration 2)
    clock_offset_ns INTEGER,                  -- migration 3
    clock_rule      TEXT,
    data_blake2b    TEXT                      -- BLAKE2b-256 of the decompressed bytes, hex
);
INSERT INTO source_19 (id, path, format, compression, content_hash, raw_bytes, bytes, events,
                       truncated, truncated_at, base_time_ns, start_ns, end_ns, rank,
                       world_size, imported_at, data_hash, clock_offset_ns, clock_rule)
SELECT id, path, format, compression, content_hash, raw_bytes, bytes, events, truncated,
       truncated_at, base_time_ns, start_ns, end_ns, rank, world_size, imported_at, data_hash,
       clock_offset_ns, clock_rule
  FROM source;
DROP TABLE source;
ALTER TABLE source_19 RENAME TO source;
CREATE INDEX source_by_content_hash ON source (content_hash);
CREATE INDEX source_by_data_hash ON source (data_hash);
