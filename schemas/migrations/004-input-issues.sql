-- Migration 4 (PRAGMA user_version = 4): the inputs a run did not use,
-- so the report can list them beside the sources it read.

CREATE TABLE input_issue (
    id              INTEGER PRIMARY KEY,
    path            TEXT NOT NULL,            -- as found (a folder's files by their path)
    outcome         TEXT NOT NULL,            -- 'skipped' or 'failed'
    what            TEXT,                     -- skipped: what it is ("a zip archive ...")
    message         TEXT,                     -- the error, one line
    noted_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
