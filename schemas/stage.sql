-- `--jobs`: a file imported on a worker into its own staging database
-- (import/staging.c) is copied into the run's database, attached as
-- vr_stage, in input order (db/stage.c). Every id comes out as the
-- sequential import of the same files in the same order gives it: rows
-- of the file's own are shifted past the run's (rows are numbered from
-- one in a staging database, as max(id) + 1 numbers them here), names
-- are shared by their text and devices by their key.

-- name: staging_pragmas
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;

-- name: attach
ATTACH DATABASE :path AS vr_stage;

-- name: detach
DETACH DATABASE vr_stage;

-- name: drop_maps
DROP TABLE IF EXISTS temp.vr_stage_base;
DROP TABLE IF EXISTS temp.vr_stage_name;
DROP TABLE IF EXISTS temp.vr_stage_device;

-- Each table's largest id so far, by space (db/merge.c's spaces).
-- name: create_bases
CREATE TEMP TABLE vr_stage_base (space TEXT PRIMARY KEY, base INTEGER NOT NULL);

-- New names in the order the file met them, as vr_db_intern numbers them.
-- name: copy_names
INSERT OR IGNORE INTO main.name (text) SELECT text FROM vr_stage.name ORDER BY id;

-- name: map_names
CREATE TEMP TABLE vr_stage_name (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);
INSERT INTO temp.vr_stage_name
SELECT o.id, n.id FROM vr_stage.name o JOIN main.name n ON n.text = o.text;

-- A device the run has already (its rank, or its source's scope, its
-- platform and index) is the file's: what the file said of it fills in
-- as describe_device and mark_device_totals_unknown would have.
-- name: copy_devices
INSERT INTO main.device (rank, scope, platform, idx, label, model, capacity_bytes, totals_known)
SELECT rank, iif(scope = 0, 0, scope + (SELECT base FROM temp.vr_stage_base
                                         WHERE space = 'source')),
       platform, idx, label, model, capacity_bytes, totals_known
  FROM vr_stage.device WHERE true ORDER BY id
    ON CONFLICT (rank, scope, platform, idx) DO UPDATE
   SET model = coalesce(excluded.model, model),
       capacity_bytes = coalesce(excluded.capacity_bytes, capacity_bytes),
       totals_known = min(totals_known, excluded.totals_known);

-- name: map_devices
CREATE TEMP TABLE vr_stage_device (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);
INSERT INTO temp.vr_stage_device
SELECT o.id, d.id FROM vr_stage.device o
  JOIN main.device d ON d.rank = o.rank AND d.platform = o.platform AND d.idx = o.idx
   AND d.scope = iif(o.scope = 0, 0, o.scope + (SELECT base FROM temp.vr_stage_base
                                                 WHERE space = 'source'));

-- The source copied: the staging database holds one.
-- name: staged_source
SELECT id + (SELECT base FROM temp.vr_stage_base WHERE space = 'source') FROM vr_stage.source;

-- The statements below are read row by row (db/stage.c).

-- name: device_map_rows
SELECT old, new FROM temp.vr_stage_device ORDER BY old;

-- name: staged_columns
SELECT name FROM pragma_table_info(:table, 'vr_stage') ORDER BY cid;

-- name: staged_tables
SELECT name FROM vr_stage.sqlite_schema WHERE type = 'table' ORDER BY name;

-- name: has_id
SELECT count(*) FROM pragma_table_info(:table, 'main') WHERE name = 'id';
