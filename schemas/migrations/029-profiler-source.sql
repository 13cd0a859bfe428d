-- Migration 29: a profiler table's "Source Location" cell (tables printed
-- with group_by_stack_n): the first frame of the op's stack as printed,
-- NULL where the table has no such column or the cell is blank. Two rows
-- of one op (two aten::cat) are told apart by it.
ALTER TABLE profiler_table_op ADD COLUMN source_location TEXT;
