-- Migration 24 (PRAGMA user_version = 24): an inference server's memory
-- lines in a job log (docs/formats/job-log-oom.md, "Inference servers'
-- memory lines"): what vLLM and SGLang say at start-up of where their GPU
-- memory goes, "model weights take 14.96GiB", "Available KV cache memory:
-- 8.11 GiB", "# GPU blocks: 189945", "KV Cache is allocated. #tokens:
-- 300288, K size: 8.38 GB, V size: 5.59 GB" (src/scan/servermem.c). One
-- row per figure of such a line: the grounds the analysis has for
-- memory a server reserved before a trace or a snapshot began.
--
-- figure: weights (as loaded), kv_cache (vLLM: the memory it leaves the
-- KV cache; SGLang: K and V together), activation_peak (the profiling
-- run's), non_torch (outside PyTorch's allocator), torch_peak (PyTorch's
-- peak in the profiling run), total (the device's memory as the server
-- saw it): `bytes`, the printed number times its unit read 1024-based
-- (both servers divide by 2**30 and print "GB" or "GiB"), rounded to the
-- nearest byte: approximate, as printed with 2 to 4 decimals. gpu_blocks,
-- cpu_blocks (KV cache blocks on the GPU, for swapping to the host),
-- kv_tokens (tokens the KV cache holds): `count`. Exactly one of `bytes`
-- and `count` is set.
CREATE TABLE IF NOT EXISTS server_memory (
    id          INTEGER PRIMARY KEY,
    source_id   INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
    line        INTEGER NOT NULL,     -- 1-based line of the log
    ts_ns       INTEGER,              -- the line's stamp, else the nearest before it (3 lines)
    rank        INTEGER,              -- its "[rankN]:" prefix, else the TP rank it names ("TP1]")
    framework   TEXT NOT NULL CHECK (framework IN ('vllm', 'sglang')),
    figure      TEXT NOT NULL CHECK (figure IN ('weights', 'kv_cache', 'activation_peak',
                                                'non_torch', 'torch_peak', 'total',
                                                'gpu_blocks', 'cpu_blocks', 'kv_tokens')),
    bytes       INTEGER CHECK (bytes >= 0),
    count       INTEGER CHECK (count >= 0),
    unit        TEXT,                 -- of a size, as printed: 'GiB', 'GB', 'MB'; NULL for a count
    CHECK ((bytes IS NULL) <> (count IS NULL))
);
CREATE INDEX IF NOT EXISTS server_memory_source ON server_memory(source_id, line);
