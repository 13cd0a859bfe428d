# tests/trace-entries.sh runs this.
import sqlite3
db = sqlite3.connect("snap.db")
db.executescript("""
CREATE TABLE te AS SELECT * FROM trace_entry;
DROP VIEW trace_entry;
CREATE TABLE trace_entry (
    id INTEGER PRIMARY KEY, source_id INTEGER NOT NULL, device_id INTEGER NOT NULL,
    seq INTEGER NOT NULL, action TEXT NOT NULL, address INTEGER, bytes INTEGER,
    stream INTEGER, ts_ns INTEGER NOT NULL, device_free_bytes INTEGER, stack_id INTEGER);
INSERT INTO trace_entry SELECT * FROM te;
DROP TABLE te; DROP TABLE trace_entry_other; DROP TABLE trace_action;
ALTER TABLE mem_event DROP COLUMN seq;
ALTER TABLE mem_event DROP COLUMN stream;
PRAGMA user_version = 15;
""")
db.close()
