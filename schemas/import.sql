-- Statements the importers use, prepared once per import and reused.

-- Candidates for the same content: the XXH64 finds them, data_blake2b
-- (NULL before migration 19) decides (import.c, find_source).
-- name: find_source_by_hash
SELECT id, data_blake2b FROM source WHERE content_hash = :hash ORDER BY id;

-- The same content, compressed otherwise (or not at all).
-- name: find_source_by_data_hash
SELECT id, data_blake2b FROM source WHERE data_hash = :hash ORDER BY id;

-- name: set_source_digest
UPDATE source SET data_blake2b = :digest WHERE id = :source;

-- name: insert_source
INSERT INTO source (path, format, compression, content_hash, raw_bytes, bytes)
VALUES (:path, :format, :compression, :content_hash, 0, 0);

-- name: finish_source
UPDATE source SET content_hash = :content_hash, raw_bytes = :raw_bytes, bytes = :bytes,
       events = :events, truncated = :truncated, truncated_at = :truncated_at,
       base_time_ns = :base_time_ns, start_ns = :start_ns, end_ns = :end_ns, rank = :rank,
       world_size = :world_size, data_hash = :data_hash
 WHERE id = :source;

-- The clock rule: where a source sits on one clock, nanoseconds since the
-- Unix epoch (UTC) = ts_ns + clock_offset_ns. Set when an import finishes,
-- from what the reader found; analysis applies it, readers never do. In
-- order:
--   'absolute'             times are already since the epoch (Kineto before
--                          2024 wrote absolute microseconds; the memory
--                          timeline export, absolute nanoseconds): offset 0.
--                          "Already" means from 1973-03-03 on (10^17 ns), as
--                          kineto.c's base-time check; adding a base time
--                          to such times would put them past 2050.
--   'baseTimeNanoseconds'  times relative to the trace's baseTimeNanoseconds
--                          (Kineto 2024+): offset = that base.
--   'unplaced'             neither (a 2024 trace cut before its base time,
--                          a file without absolute times): offset NULL. The
--                          source keeps its own relative clock and is never
--                          combined with another source of its device.
-- Migration 003 placed the sources of older databases by this same rule.
-- :clock is what the reader says its times are (reader.h, vr_clock_kind):
-- profiler times are absolute (after 1973) or relative to
-- baseTimeNanoseconds; wall-clock stamps are UTC when the text named the
-- zone, else local time in the zone --tz gives (:tz_offset, local minus
-- UTC, named :tz_name), said in the rule so the report says it.
-- name: set_source_clock
UPDATE source SET
    clock_rule = CASE
        WHEN :clock = 'none' OR start_ns IS NULL THEN 'unplaced'
        WHEN :clock = 'wall_utc' THEN 'wall clock (zone in the file)'
        WHEN :clock = 'wall_local' THEN 'wall clock (--tz ' || :tz_name || ')'
        WHEN start_ns >= 100000000000000000 THEN 'absolute'
        WHEN base_time_ns <> 0 THEN 'baseTimeNanoseconds'
        ELSE 'unplaced' END,
    clock_offset_ns = CASE
        WHEN :clock = 'none' OR start_ns IS NULL THEN NULL
        WHEN :clock = 'wall_utc' THEN 0
        WHEN :clock = 'wall_local' THEN -:tz_offset
        WHEN start_ns >= 100000000000000000 THEN 0
        WHEN base_time_ns <> 0 THEN base_time_ns END
 WHERE id = :source;

-- The devices the source has memory events on, and whether every one of
-- those events carried the allocator's totals (analysis rebuilds them per
-- source and device where not). One read of the memory events, whose
-- totals the rebuild will overwrite. DISTINCT keeps at most two rows per
-- device (an ephemeral index of a few keys) where a GROUP BY over the
-- events sorted them all: 4 times faster. NOT INDEXED: a scan of the table;
-- through mem_event_device_source_time (kept from the first row on,
-- migration 17) each event would be one more look-up of its row.
-- name: record_source_devices
INSERT INTO source_device (source_id, device_id, totals_known)
SELECT :source, device_id, min(known)
  FROM (SELECT DISTINCT device_id, total_allocated IS NOT NULL AS known
          FROM mem_event NOT INDEXED WHERE source_id = :source)
 GROUP BY device_id;

-- In the import's own transaction: the derived tables no longer match.
-- name: mark_analysis_stale
UPDATE analysis_state SET complete = 0;

-- name: insert_tally
INSERT INTO source_tally (source_id, kind, count) VALUES (:source, :kind, :count)
ON CONFLICT (source_id, kind) DO UPDATE SET count = count + excluded.count;

-- name: select_tallies
SELECT kind, count FROM source_tally WHERE source_id = :source ORDER BY kind;

-- name: insert_event_count
INSERT INTO source_events (source_id, kind, count) VALUES (:source, :kind, :count)
ON CONFLICT (source_id, kind) DO UPDATE SET count = count + excluded.count;

-- name: insert_meta
INSERT OR REPLACE INTO source_meta (source_id, key, value) VALUES (:source, :key, :value);

-- name: insert_name
INSERT OR IGNORE INTO name (text) VALUES (:text);

-- name: select_name
SELECT id FROM name WHERE text = :text;

-- name: upsert_device
INSERT INTO device (rank, scope, platform, idx, label)
VALUES (:rank, :scope, :platform, :idx, :label)
ON CONFLICT (rank, scope, platform, idx) DO NOTHING;

-- name: select_device
SELECT id FROM device WHERE rank = :rank AND scope = :scope AND platform = :platform AND idx = :idx;

-- name: describe_device
UPDATE device SET model = coalesce(:model, model),
       capacity_bytes = coalesce(:capacity, capacity_bytes)
 WHERE id = :device;

-- name: mark_device_totals_unknown
UPDATE device SET totals_known = 0 WHERE id = :device;

-- name: insert_mem_event
INSERT INTO mem_event (source_id, device_id, ts_ns, bytes, addr,
                       total_allocated, total_reserved, pid, tid)
VALUES (:source, :device, :ts, :bytes, :addr, :total_allocated, :total_reserved, :pid, :tid);

-- The memory timeline export states each row's category (memtimeline.c).
-- name: insert_categorised_mem_event
INSERT INTO mem_event (source_id, device_id, ts_ns, bytes, category)
VALUES (:source, :device, :ts, :bytes, :category);

-- Rows of memory that existed before profiling are stored at ts -1 until
-- the first timed row says when profiling began (ids first..last).
-- name: place_preexisting_mem_events
UPDATE mem_event SET ts_ns = :ts WHERE id BETWEEN :first AND :last AND ts_ns = -1;

-- name: insert_op
INSERT INTO op (source_id, cat, name_id, pid, tid, ts_ns, dur_ns, external_id)
VALUES (:source, :cat, :name, :pid, :tid, :ts, :dur, :external);

-- A python_function event, with the caller's "file:line" (CallFrom).
-- name: insert_python_op
INSERT INTO op (source_id, cat, name_id, pid, tid, ts_ns, dur_ns, external_id,
                call_from_id)
VALUES (:source, :cat, :name, :pid, :tid, :ts, :dur, :external, :call_from);

-- The weight operands of ops that read weights (kineto_weights.c), staged
-- with their op's key until the op batches are written.
-- name: begin_op_weight_stage
DROP TABLE IF EXISTS temp.op_weight_stage;
CREATE TEMP TABLE op_weight_stage (
    id INTEGER PRIMARY KEY, source_id INTEGER NOT NULL, name_id INTEGER NOT NULL, pid INTEGER,
    tid INTEGER, ts_ns INTEGER NOT NULL, dur_ns INTEGER NOT NULL, bytes INTEGER NOT NULL,
    tensors INTEGER NOT NULL, buffer_bytes INTEGER NOT NULL, uncounted INTEGER NOT NULL,
    weight_bytes INTEGER, shape TEXT);

-- name: insert_op_weight_stage
INSERT INTO temp.op_weight_stage (source_id, name_id, pid, tid, ts_ns, dur_ns, bytes, tensors,
                                  buffer_bytes, uncounted, weight_bytes, shape)
VALUES (:source, :name, :pid, :tid, :ts, :dur, :bytes, :tensors, :buffer_bytes, :uncounted,
        :weight_bytes, :shape);

-- Each staged row's op: the n-th staged row of a key (thread, time,
-- duration, name) is the n-th cpu_op of that key by id (both in the
-- file's order), found through op_cpu_source_thread_time; the first (all
-- but never two) without counting. MATERIALIZED: each op looked up once.
-- name: resolve_op_weights
INSERT INTO op_weight (op_id, source_id, bytes, tensors, buffer_bytes, uncounted, weight_bytes,
                       shape)
WITH staged AS (
    SELECT *, row_number() OVER (PARTITION BY pid, tid, ts_ns, dur_ns, name_id ORDER BY id) - 1
              AS dup
      FROM temp.op_weight_stage WHERE source_id = :source),
found AS MATERIALIZED (
    SELECT s.*,
           CASE WHEN s.dup = 0 THEN
                (SELECT min(o.id) FROM op o
                  WHERE o.source_id = s.source_id AND o.cat = 'cpu_op' AND o.pid IS s.pid
                    AND o.tid IS s.tid AND o.ts_ns = s.ts_ns AND o.dur_ns = s.dur_ns
                    AND o.name_id = s.name_id)
           ELSE
                (SELECT o.id FROM op o
                  WHERE o.source_id = s.source_id AND o.cat = 'cpu_op' AND o.pid IS s.pid
                    AND o.tid IS s.tid AND o.ts_ns = s.ts_ns AND o.dur_ns = s.dur_ns
                    AND o.name_id = s.name_id
                    AND (SELECT count(*) FROM op p
                          WHERE p.source_id = s.source_id AND p.cat = 'cpu_op'
                            AND p.pid IS s.pid AND p.tid IS s.tid AND p.ts_ns = s.ts_ns
                            AND p.dur_ns = s.dur_ns AND p.name_id = s.name_id
                            AND p.id < o.id) = s.dup)
           END AS op_id
      FROM staged s)
SELECT op_id, source_id, bytes, tensors, buffer_bytes, uncounted, weight_bytes, shape
  FROM found WHERE op_id IS NOT NULL ORDER BY op_id;

-- name: end_op_weight_stage
DROP TABLE IF EXISTS temp.op_weight_stage;

-- name: insert_gpu_op
INSERT INTO gpu_op (source_id, cat, name_id, device_idx, stream, ts_ns, dur_ns,
                    correlation, external_id, bytes)
VALUES (:source, :cat, :name, :device_idx, :stream, :ts, :dur, :correlation, :external, :bytes);

-- name: insert_step
INSERT OR IGNORE INTO step (source_id, number, ts_ns, dur_ns) VALUES (:source, :number, :ts, :dur);

-- name: insert_oom
INSERT INTO oom_event (source_id, device_id, ts_ns, requested_bytes,
                       total_allocated, total_reserved)
VALUES (:source, :device, :ts, :requested, :total_allocated, :total_reserved);

-- An input the run did not use: skipped (in a folder, not a format read)
-- or failed (named, or broken). Written in its own transaction after the
-- input's import was rolled back.
-- name: insert_input_issue
INSERT INTO input_issue (path, outcome, what, message)
VALUES (:path, :outcome, :what, :message);

-- Allocator statistics (memstats.c, memsummary.c): one row per figure,
-- under memory_stats()'s flat key.
-- name: insert_allocator_stat
INSERT INTO allocator_stat (source_id, device_idx, dump, key, value)
VALUES (:source, :device, :dump, :key, :value);

-- An allocator dump's own count of its process's out-of-memory errors
-- (memory_summary()'s "CUDA OOMs: N", memory_stats()'s num_ooms): N > 0 is
-- an OOM that happened, told with the figures the dump gives (what was
-- allocated and reserved when it was taken); one event a dump, its count
-- in the message. A box of a job log is not one: the log's own message is.
-- name: insert_dump_ooms
INSERT INTO oom_event (source_id, device_idx, total_allocated, total_reserved, message, wording)
SELECT n.source_id, n.device_idx,
       (SELECT a.value FROM allocator_stat a
         WHERE a.source_id = n.source_id AND a.dump = n.dump
           AND a.key = 'allocated_bytes.all.current'),
       (SELECT a.value FROM allocator_stat a
         WHERE a.source_id = n.source_id AND a.dump = n.dump
           AND a.key = 'reserved_bytes.all.current'),
       :label || ': ' || n.value, :wording
  FROM allocator_stat n
 WHERE n.source_id = :source AND n.key = 'num_ooms' AND n.value > 0
 ORDER BY n.dump;

-- A memory_stats() JSON's top-level "device": N, read after its figures.
-- name: set_allocator_stat_device
UPDATE allocator_stat SET device_idx = :device WHERE source_id = :source AND dump = :dump;

-- A job log's out-of-memory error (joblog.c): the message's figures as
-- bytes, NULL when the message lacks one.
-- name: insert_log_oom
INSERT INTO oom_event (source_id, device_id, ts_ns, requested_bytes, total_allocated,
                       total_reserved, message, device_free_bytes, device_idx, rank,
                       capacity_bytes, reserved_unallocated_bytes, allowed_bytes,
                       private_pools_bytes, line, wording, user_frame)
VALUES (:source, :device, :ts, :requested, :allocated, :reserved, :message, :free,
        :device_idx, :rank, :capacity, :reserved_unallocated, :allowed, :private_pools,
        :line, :wording, :user_frame);

-- name: insert_oom_process
INSERT INTO oom_process (oom_id, pid, used_bytes) VALUES (:oom, :pid, :used);

-- A line of a job log worth showing; a line already kept (the context of
-- two errors) keeps its first role.
-- name: insert_log_line
INSERT OR IGNORE INTO log_line (source_id, line, ts_ns, role, oom_id, text)
VALUES (:source, :line, :ts, :role, :oom, :text);

-- A profiler table found in a job log; its counts are set at its end.
-- name: insert_profiler_table
INSERT INTO profiler_table (source_id, line, columns) VALUES (:source, :line, :columns);

-- name: end_profiler_table
UPDATE profiler_table SET row_count = :rows, truncated = :truncated WHERE id = :id;

-- name: insert_profiler_op
INSERT INTO profiler_table_op (table_id, position, name, calls, self_cuda_mem_bytes,
                               cuda_mem_bytes, self_cpu_mem_bytes, cpu_mem_bytes)
VALUES (:table, :position, :name, :calls, :self_cuda, :cuda, :self_cpu, :cpu);

-- An op row's Source Location cell (migration 29), when it has one.
-- name: insert_profiler_op_source
INSERT INTO profiler_op_source (table_id, position, source_location)
VALUES (:table, :position, :source);

-- A memory print line of a job log (docs/formats/memory-print.md).
-- An inference server's memory line's figure (migration 24).
-- name: insert_server_memory
INSERT INTO server_memory (source_id, line, ts_ns, rank, framework, figure, bytes, count, unit)
VALUES (:source, :line, :ts, :rank, :framework, :figure, :bytes, :count, :unit);

-- name: insert_memory_print
INSERT INTO memory_print (source_id, line, ts_ns, step, epoch, rank, device_id, framework,
                          figure, allocated_bytes, reserved_bytes, max_allocated_bytes,
                          max_reserved_bytes, unit, unit_reading)
VALUES (:source, :line, :ts, :step, :epoch, :rank, :device, :framework, :figure, :allocated,
        :reserved, :max_allocated, :max_reserved, :unit, :reading);
