-- Migration 29: a profiler table's "Source Location" cell (tables printed
-- with group_by_stack_n): the first frame of the op's stack as printed,
-- one row per op row that has one (none where the table has no such
-- column or the cell is blank). Two rows of one op (two aten::cat) are
-- told apart by it. A table of its own, not a column: migrations are
-- replayed on databases that may hold it already, and CREATE ... IF NOT
-- EXISTS can be, where ALTER TABLE ADD COLUMN cannot.
CREATE TABLE IF NOT EXISTS profiler_op_source (
    table_id        INTEGER NOT NULL REFERENCES profiler_table(id) ON DELETE CASCADE,
    position        INTEGER NOT NULL,     -- the op row's (profiler_table_op.position)
    source_location TEXT NOT NULL,        -- as printed
    PRIMARY KEY (table_id, position)
) WITHOUT ROWID;
