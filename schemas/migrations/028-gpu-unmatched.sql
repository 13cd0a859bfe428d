-- Migration 28 (PRAGMA user_version = 28): nvidia-smi or gpustat readings
-- that their identity ties to one of the job's devices but that cannot be
-- that device at the job's time. IF NOT EXISTS: a database whose
-- user_version was set back (tests/hardening.sh) runs it again.
--
-- Derived (pass match_gpus, with gpu.device_id): a GPU whose UUID, bus id
-- or index names device_id, left untied because its model or memory
-- disagrees with the device's (rule 'model'), or its readings lie outside
-- the job's time span by more than the margin (rule 'time'). reason is
-- what the report says: 'another GPU model', '268 days from the job'.
-- Its readings stay listed, as not matched, and are evidence of nothing.
CREATE TABLE IF NOT EXISTS gpu_unmatched (
    gpu_id          INTEGER PRIMARY KEY,
    device_id       INTEGER NOT NULL,
    rule            TEXT NOT NULL,
    reason          TEXT NOT NULL
);
