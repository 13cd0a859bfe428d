-- Statements the importers use, prepared once per import and reused.

-- name: find_source_by_hash
SELECT id, path FROM source WHERE content_hash = :hash;

-- The same content, compressed otherwise (or not at all).
-- name: find_source_by_data_hash
SELECT id, path FROM source WHERE data_hash = :hash;

-- name: insert_source
INSERT INTO source (path, format, compression, content_hash, raw_bytes, bytes)
VALUES (?1, ?2, ?3, ?4, 0, 0);

-- name: finish_source
UPDATE source SET content_hash = ?2, raw_bytes = ?3, bytes = ?4, events = ?5,
       truncated = ?6, truncated_at = ?7, base_time_ns = ?8, start_ns = ?9,
       end_ns = ?10, rank = ?11, world_size = ?12, data_hash = ?13
 WHERE id = ?1;

-- In the import's own transaction: the derived tables no longer match.
-- name: mark_analysis_stale
UPDATE analysis_state SET complete = 0;

-- name: insert_tally
INSERT INTO source_tally (source_id, kind, count) VALUES (?1, ?2, ?3)
ON CONFLICT (source_id, kind) DO UPDATE SET count = count + excluded.count;

-- name: select_tallies
SELECT kind, count FROM source_tally WHERE source_id = :source ORDER BY kind;

-- name: insert_event_count
INSERT INTO source_events (source_id, kind, count) VALUES (?1, ?2, ?3)
ON CONFLICT (source_id, kind) DO UPDATE SET count = count + excluded.count;

-- name: insert_meta
INSERT OR REPLACE INTO source_meta (source_id, key, value) VALUES (?1, ?2, ?3);

-- name: insert_name
INSERT OR IGNORE INTO name (text) VALUES (?1);

-- name: select_name
SELECT id FROM name WHERE text = ?1;

-- name: upsert_device
INSERT INTO device (rank, scope, platform, idx, label) VALUES (?1, ?5, ?2, ?3, ?4)
ON CONFLICT (rank, scope, platform, idx) DO NOTHING;

-- name: select_device
SELECT id FROM device WHERE rank = ?1 AND scope = ?4 AND platform = ?2 AND idx = ?3;

-- name: describe_device
UPDATE device SET model = coalesce(?2, model),
       capacity_bytes = coalesce(?3, capacity_bytes)
 WHERE id = ?1;

-- name: mark_device_totals_unknown
UPDATE device SET totals_known = 0 WHERE id = ?1;

-- name: insert_mem_event
INSERT INTO mem_event (source_id, device_id, ts_ns, bytes, addr,
                       total_allocated, total_reserved, pid, tid)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9);

-- name: insert_op
INSERT INTO op (source_id, cat, name_id, pid, tid, ts_ns, dur_ns, external_id)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8);

-- name: insert_gpu_op
INSERT INTO gpu_op (source_id, cat, name_id, device_idx, stream, ts_ns, dur_ns,
                    correlation, external_id, bytes)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10);

-- name: insert_step
INSERT OR IGNORE INTO step (source_id, number, ts_ns, dur_ns) VALUES (?1, ?2, ?3, ?4);

-- name: insert_oom
INSERT INTO oom_event (source_id, device_id, ts_ns, requested_bytes,
                       total_allocated, total_reserved)
VALUES (?1, ?2, ?3, ?4, ?5, ?6);
