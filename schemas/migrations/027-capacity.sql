-- Migration 27 (PRAGMA user_version = 27): one capacity per device.
-- capacity_given: the capacity the user states with --capacity (80GiB, or
-- a GPU of vramreport estimate --list-gpus) for devices no input states;
-- rewritten by each analysis from its options (analyze.c), empty without.
-- device_capacity (derived, pass capacities after match_gpus): each device's capacity and where it comes from, the one
-- rule every pass and the report read: the device's own (a trace's device
-- properties), else the largest total of the nvidia-smi or gpustat GPU the
-- match_gpus pass tied to it, else the given one. NULL when none is known.
CREATE TABLE IF NOT EXISTS capacity_given (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    bytes           INTEGER NOT NULL CHECK (bytes > 0),
    said            TEXT NOT NULL             -- as given: "80GiB", "A100-80GB"
);
CREATE TABLE IF NOT EXISTS device_capacity (
    device_id       INTEGER PRIMARY KEY,
    bytes           INTEGER,                  -- NULL: no capacity known
    source          TEXT                      -- 'device', 'nvidia-smi', '--capacity'
);
