-- Migration 13 (PRAGMA user_version = 13): advice with this job's numbers
-- (docs/remedies.md).
-- Each finding's remedies from the catalogue schemas/remedies.sql, written
-- by the analysis pass `advise` (src/analyze/advise.c), which owns this
-- table; docs/remedies.md says what each remedy is and when it is given.
--
--   finding_id: the finding it answers (finding.id)
--   remedy: the catalogue's id ('8bit-optimizer'), the block's name
--   rank: 1 for the largest saving of the finding, then down; ties by id
--   saving_bytes: the bytes it would save, from this job's own figures
--   would_fit: 1/0 for an OOM whose request is known (saving >= requested
--     - device free), NULL when there is no failed request
--   title, setting, evidence: the catalogue's texts, the setting and the
--     evidence sentence filled in with this job's figures
--   figures: a JSON object of the figures the estimate rests on
--   source: where the remedy and its formula come from (a URL)
CREATE TABLE advice (
    finding_id      INTEGER NOT NULL,
    remedy          TEXT NOT NULL,
    rank            INTEGER NOT NULL DEFAULT 0,
    saving_bytes    INTEGER NOT NULL,
    would_fit       INTEGER,
    title           TEXT NOT NULL,
    setting         TEXT NOT NULL,
    evidence        TEXT NOT NULL,
    figures         TEXT NOT NULL,
    source          TEXT NOT NULL,
    PRIMARY KEY (finding_id, remedy)
) WITHOUT ROWID;

-- The advice is derived: a database analysed before it existed is
-- analysed again by its next report, which writes it.
UPDATE analysis_state SET complete = 0;
