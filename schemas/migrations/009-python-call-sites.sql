-- Migration 9 (PRAGMA user_version = 9): where a Python call was made.
-- Recent PyTorch writes on each python_function event the caller's file
-- and line at the moment of the call ("CallFrom": "model.py:34"): the line
-- inside the calling function, where the event's own name
-- ("model.py(30): forward") gives only the line its function begins on.
-- The locate pass reads it for the line of each allocation. Interned in
-- name; NULL when the trace does not say (older PyTorch, other events).
ALTER TABLE op ADD COLUMN call_from_id INTEGER REFERENCES name(id);
