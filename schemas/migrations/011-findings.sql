-- Migration 11 (PRAGMA user_version = 11): the diagnosis
-- (docs/diagnosis.md). A finding is one
-- cause: each out-of-memory event has exactly one (its primary cause,
-- with the other causes that also hold as `secondary`), and peaks without
-- an OOM may have some (near-capacity, rank-imbalance, leak). Written by
-- the analysis pass `diagnose` (src/analyze/diagnose.c); the rules are
-- docs/diagnosis.md's.
--
--   oom_id: the OOM event it explains (NULL: a finding about a peak)
--   ts_ns: when (the OOM's or the peak's time, on the source's clock plus
--     its offset: comparable across sources)
--   rank: the process's rank (-1: unknown or a single process)
--   confidence: 'high', 'medium' or 'low'
--   secondary: a JSON array of the other kinds that also hold, e.g.
--     '["fragmentation"]' ('[]' when none)
--   data (migration 1): a JSON object of the evidence, one member per
--     figure: {"requested_bytes": {"value": 2147483648, "source": "log"}};
--     sources: 'log', 'snapshot', 'trace', 'nvidia-smi', 'memory_stats',
--     'device' (a device's own properties), 'derived' (computed from the
--     others, said how in the finding's detail).
ALTER TABLE finding ADD COLUMN oom_id INTEGER;
ALTER TABLE finding ADD COLUMN ts_ns INTEGER;
ALTER TABLE finding ADD COLUMN rank INTEGER;
ALTER TABLE finding ADD COLUMN confidence TEXT;
ALTER TABLE finding ADD COLUMN secondary TEXT NOT NULL DEFAULT '[]';

-- The diagnosis reads an OOM's processes, and the nvidia-smi readings of
-- a GPU near a time, once per OOM.
CREATE INDEX oom_process_by_oom ON oom_process (oom_id);
CREATE INDEX gpu_sample_by_gpu_time ON gpu_sample (gpu_id, ts_ns);
