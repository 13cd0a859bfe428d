/*-*** batch.h: batched inserts, written here or by a writer thread ***/
/*
 * A batch of rows for one INSERT block: rows are buffered and written
 * VR_BATCH_ROWS at a time by one statement built from the block, whose
 * VALUES tuple becomes a SELECT of the same expressions from the buffered
 * rows (a virtual table, batch.c), which costs SQLite a fraction of one
 * statement per row and no bound parameter per value. The tuple's
 * parameters are the batch's columns, named: the caller gives their
 * names (":source", ...) once, and sets a row's values by their place in
 * that list (an enum of the caller's), so that no caller counts
 * parameters and the SQL may write them in any order. A
 * parameter followed by the SQL comment "shared" (as in :device, then
 * that word between slash-star and star-slash) is bound once a statement
 * instead: a run of rows with one value there (a device's) costs SQLite
 * one copy a row, where a column costs a call; a row with another value
 * there ends the run's statement early (the single-row statement reads
 * the comment as a comment). Text values must outlive the next flush
 * (pass static strings; NULL stores NULL). Row ids follow the order rows
 * were added.
 *
 * A writer (vr_batch_writer) moves the writing of full batches to a thread of
 * its own, so that an importer reads and decodes its input while SQLite
 * writes the rows before: on two cores the slower of the two sets the
 * pace, not their sum (a snapshot's import spends two thirds of its time
 * in SQLite's inserts, docs/performance.md). Once a batch is attached to
 * a writer, the caller's thread no longer steps its statement; everything
 * else the caller does with the connection while the writer runs goes
 * between vr_batch_writer_enter() and vr_batch_writer_leave(), which give the
 * caller the connection (SQLite allows one thread at a time on it; ours is
 * opened without SQLite's own mutex). The caller's thread is the only one
 * that adds rows, enters, flushes or stops.
 *
 * A batch is a client of the database (db.h), one floor above it: the
 * virtual table is registered on a connection by the first batch made on
 * it, not by db.c.
 *
 * Ownership: vr_batch_new() returns a batch freed with
 * vr_batch_free(); call vr_batch_flush() before the transaction
 * commits or anything reads the table. vr_batch_writer_start() returns a
 * writer that vr_batch_writer_stop() ends and frees, after every batch
 * attached to it is flushed and before any of them is freed.
 */
#ifndef VR_BATCH_H
#define VR_BATCH_H

#include "db/db.h"

/* Rows a statement writes. With a writer the statement's own cost
 * (opening its cursors, some 10,000 instructions) is spread over more
 * rows (the writer holds 8 buffers of them a batch). Without one, rows
 * go out as before: where two batches fill one table (kineto.c's ops),
 * the rows' ids depend on how many rows a statement writes. */
#define VR_BATCH_ROWS 64
#define VR_BATCH_WRITER_ROWS 1024
typedef struct vr_batch vr_batch;
/* A batch for INSERT block `name` of `file`, whose VALUES tuple names
 * exactly the ncols parameters `cols` (each at least once, no other):
 * NULL with err naming the statement and the parameter otherwise. */
vr_batch *vr_batch_new(vr_db *db, const char *file, const char *name, const char *const *cols,
                       int ncols, vr_error *err);
/* Rows a statement writes without a writer (default VR_BATCH_ROWS),
 * before the first row: a batch that alone fills its table may take more
 * (the statement's own cost spread wider). */
void vr_batch_set_rows(vr_batch *b, int rows);
/* col: the place of the column's name in the batch's cols (from 0). */
void vr_batch_int(vr_batch *b, int col, int64_t v);
void vr_batch_null(vr_batch *b, int col);
void vr_batch_opt_int(vr_batch *b, int col, int has, int64_t v); /* NULL unless has */
void vr_batch_static_text(vr_batch *b, int col, const char *text);
/* Ends the current row; writes the batch when it is full (or hands it to
 * its writer). -1 with err set when the write, or an earlier one of the
 * writer's, failed. */
int vr_batch_row(vr_batch *b, vr_error *err);
/* Writes the rows not written yet (with a writer: waits for it to write
 * every full batch it holds first). */
int vr_batch_flush(vr_batch *b, vr_error *err);
/* Drops the rows not written yet (a caller that starts over; only on a
 * batch without a writer, whose rows written are the caller's to undo). */
void vr_batch_discard(vr_batch *b);
void vr_batch_free(vr_batch *b);

typedef struct vr_batch_writer vr_batch_writer;
/* NULL with err set when no thread could be started (the caller then
 * writes its batches itself). */
vr_batch_writer *vr_batch_writer_start(vr_db *db, vr_error *err);
/* From now on the writer steps b's full batches, in the order they fill,
 * VR_BATCH_WRITER_ROWS rows a statement. */
void vr_batch_writer_attach(vr_batch_writer *w, vr_batch *b);
/* The same, `rows` rows a statement: where two batches fill one table,
 * the rows a statement writes without a writer (VR_BATCH_ROWS) keep
 * their ids what they were without one (the writer writes the full
 * batches in the order they fill). */
void vr_batch_writer_attach_rows(vr_batch_writer *w, vr_batch *b, int rows);
/* The connection for the caller's thread until the matching leave; pairs
 * nest. Both do nothing when w is NULL. */
void vr_batch_writer_enter(vr_batch_writer *w);
void vr_batch_writer_leave(vr_batch_writer *w);
/* Waits for every batch handed over, ends the thread and frees w; its
 * batches are written by their caller again. -1 with err set when a
 * write failed (the first failure). NULL w: 0. */
int vr_batch_writer_stop(vr_batch_writer *w, vr_error *err);

#endif
