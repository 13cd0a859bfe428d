-- Migration 25 (PRAGMA user_version = 25): the weights a forward pass
-- reads, from traces recorded with record_shapes=True. IF NOT EXISTS: a
-- database whose user_version was set back (tests/hardening.sh) runs it
-- again over its tables.
--
-- Imported (kineto): one row per op that reads weights (aten::linear,
-- aten::conv*, aten::embedding, aten::embedding_bag, aten::layer_norm,
-- aten::group_norm, aten::batch_norm, aten::instance_norm, aten::rms_norm)
-- whose "Input Dims" and "Input type" name at least one of its weight
-- operands (kineto.c's table of operand positions); no other op keeps its
-- shapes. bytes: the weight operands' bytes (elements x the dtype's size,
-- a dimension of stride 0 counted once; saturated at 2^63 - 1), tensors:
-- how many were counted, buffer_bytes: batch_norm's and instance_norm's
-- running statistics (buffers, not parameters), uncounted: weight
-- operands present but not counted (a dtype of unknown size, dims that are
-- not a list of non-negative integers). weight_bytes and shape are the
-- first weight operand's (the matrix of a linear, the table of an
-- embedding): "c10::BFloat16[30522,512]", for telling a head that may
-- share an embedding's matrix.
CREATE TABLE IF NOT EXISTS op_weight (
    op_id           INTEGER PRIMARY KEY,      -- op.id (a cpu_op)
    source_id       INTEGER NOT NULL,
    bytes           INTEGER NOT NULL,
    tensors         INTEGER NOT NULL,
    buffer_bytes    INTEGER NOT NULL DEFAULT 0,
    uncounted       INTEGER NOT NULL DEFAULT 0,
    weight_bytes    INTEGER,
    shape           TEXT
);
CREATE INDEX IF NOT EXISTS op_weight_by_source ON op_weight (source_id);

-- Derived (pass forward_weights): per source with op_weight rows and the
-- device its memory events are on (NULL: none, or several, so the weights
-- cannot be placed), the weight bytes ONE forward pass reads, each weight
-- counted once. how: 'module' (each nn.Module instance's weight ops in its
-- call that read the most; traces with with_modules or with_stack), or,
-- for ops outside every module, the window they were counted in:
-- 'forward_phase' (the first forward phase), 'step' (the first
-- ProfilerStep), 'source' (the whole trace); 'module+step' and the like
-- when both. ops: the weight ops counted, reads: every weight op of the
-- source (nested ones, as aten::convolution under aten::conv2d, never
-- count), modules: the module instances counted. tied_candidate_bytes: of
-- bytes, the matrices of aten::linear ops with the shape and dtype of an
-- embedding's table counted too, where as many linears as embeddings
-- have that shape: a head that shares the embedding's matrix (tied
-- weights) is read twice, which a trace cannot tell from two matrices of
-- one shape; bytes - tied_candidate_bytes is the figure if they are tied.
CREATE TABLE IF NOT EXISTS forward_weights (
    source_id            INTEGER NOT NULL,
    device_id            INTEGER,
    bytes                INTEGER NOT NULL,
    tensors              INTEGER NOT NULL,
    buffer_bytes         INTEGER NOT NULL,
    uncounted            INTEGER NOT NULL,
    tied_candidate_bytes INTEGER NOT NULL,
    ops                  INTEGER NOT NULL,
    reads                INTEGER NOT NULL,
    modules              INTEGER NOT NULL,
    how                  TEXT NOT NULL,
    PRIMARY KEY (source_id)
);
