/*-*** test_batch.c: bulk inserts (batch/) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "batch/batch.h"
#include "db/db.h"
#include "util/alloc.h"

#include "harness.h"

/* The batches' columns by name: insert_other_entry, insert_stack_frame
 * and insert_numbered_stack (snapshot.sql), insert_frame (snapshot.sql),
 * insert_categorised_mem_event (import.sql). */
enum {
    OE_ID,
    OE_SOURCE,
    OE_DEVICE,
    OE_SEQ,
    OE_ACTION,
    OE_ADDRESS,
    OE_BYTES,
    OE_STREAM,
    OE_TS,
    OE_FREE,
    OE_STACK,
    OE_NCOLS
};
static const char *const other_entry_cols[OE_NCOLS] = {
    ":id",    ":source", ":device", ":seq",         ":action", ":address",
    ":bytes", ":stream", ":ts",     ":device_free", ":stack"};
static const char *const stack_frame_cols[] = {":stack", ":position", ":frame"};
static const char *const numbered_stack_cols[] = {":id", ":digest", ":depth", ":user_frame"};
static const char *const frame_cols[] = {":file", ":line", ":function"};
static const char *const categorised_cols[] = {":source", ":device", ":ts", ":bytes",
                                               ":category"};
/* import.sql's insert_op (the first 8) and insert_python_op (all 9). */
static const char *const op_cols[] = {":source", ":cat", ":name",     ":pid",      ":tid",
                                      ":ts",     ":dur", ":external", ":call_from"};

static vr_batch *other_entries(vr_db *db, vr_error *err)
{
    return vr_batch_new(db, "schemas/snapshot.sql", "insert_other_entry", other_entry_cols,
                        OE_NCOLS, err);
}

/* A row of trace_entry_other (schemas/snapshot.sql insert_other_entry):
 * id NULL (the next rowid), seq and ts_ns = seq, the rest fixed or NULL. */
static int add_other_entry(vr_batch *b, int64_t id, int64_t seq, vr_error *err)
{
    vr_batch_opt_int(b, OE_ID, id > 0, id);
    vr_batch_int(b, OE_SOURCE, 1);
    vr_batch_int(b, OE_DEVICE, 1);
    vr_batch_int(b, OE_SEQ, seq);
    vr_batch_int(b, OE_ACTION, 0);
    for (int c = OE_ADDRESS; c < OE_NCOLS; c++)
        vr_batch_null(b, c);
    vr_batch_int(b, OE_TS, seq);
    return vr_batch_row(b, err);
}

static int64_t query_int64(vr_db *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(vr_db_handle(db), sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* A temporary database inside a transaction, or NULL (counted as a
 * failed check). */
static vr_db *open_in_transaction(vr_error *err)
{
    vr_db *db = vr_db_open(NULL, err);
    OK(db && vr_db_begin(db, err) == 0, "a database (%s)", err->msg);
    return db;
}

/* The writer thread (src/batch/batch.c): rows come out in the order they were
 * added, whatever the caller does with the connection in between (names
 * interned between enter and leave, with their ids read back at once),
 * and many rows added while the connection is held do not deadlock. */
static void test_batch_writer(void)
{
    vr_error err = VR_ERROR_INIT;
    vr_db *db = open_in_transaction(&err);
    if (!db)
        return;
    vr_batch *rows = other_entries(db, &err);
    vr_batch *frames =
        vr_batch_new(db, "schemas/snapshot.sql", "insert_stack_frame", stack_frame_cols, 3, &err);
    vr_batch_writer *w = vr_batch_writer_start(db, &err);
    OK(rows && frames && w, "two batches and a writer (%s)", err.msg);
    if (!rows || !frames || !w)
        return;
    vr_batch_writer_attach(w, rows);
    vr_batch_writer_attach(w, frames);
    int64_t seq = 0, nframes = 0, bad_names = 0, failed = 0;
    for (; seq < VR_BATCH_WRITER_ROWS * 40 + 13; seq++) {
        failed |= add_other_entry(rows, 0, seq, &err) < 0;
        if (seq % 3 == 0) {
            vr_batch_int(frames, 0, seq); /* :stack */
            vr_batch_int(frames, 1, 0);   /* :position */
            vr_batch_int(frames, 2, seq); /* :frame */
            failed |= vr_batch_row(frames, &err) < 0;
            nframes++;
        }
        if (seq % 100 == 0) {
            char name[32];
            snprintf(name, sizeof name, "name %lld", (long long)seq);
            vr_batch_writer_enter(w);
            vr_batch_writer_enter(w); /* pairs nest */
            int64_t id = vr_db_intern(db, name, strlen(name), &err);
            vr_batch_writer_leave(w);
            bad_names += id != sqlite3_last_insert_rowid(vr_db_handle(db));
            vr_batch_writer_leave(w);
        }
    }
    vr_batch_writer_enter(w);
    for (int i = 0; i < VR_BATCH_WRITER_ROWS * 20;
         i++, seq++) /* more than the writer holds: it is lent the connection */
        failed |= add_other_entry(rows, 0, seq, &err) < 0;
    vr_batch_writer_leave(w);
    OK(!failed, "every row handed over (%s)", err.msg);
    INT_EQ(bad_names, 0, "each name's id read back between enter and leave is its own");
    OK(vr_batch_writer_stop(w, &err) == 0, "the writer stops (%s)", err.msg);
    OK(vr_batch_flush(rows, &err) == 0 && vr_batch_flush(frames, &err) == 0,
       "the rest written by the caller (%s)", err.msg);
    INT_EQ(query_int64(db, "SELECT count(*) FROM trace_entry_other"), seq, "every row stored");
    INT_EQ(query_int64(db,
                       "SELECT count(*) FROM (SELECT seq, row_number() OVER (ORDER BY id) - 1 "
                       "AS k FROM trace_entry_other) WHERE seq != k"),
           0, "rows numbered in the order they were added");
    INT_EQ(query_int64(db, "SELECT count(*) FROM stack_frame WHERE frame_id = stack_id"), nframes,
           "the second batch's rows stored too");
    vr_batch_free(rows);
    vr_batch_free(frames);
    vr_db_rollback(db);
    vr_db_close(db);
}

/* A write the writer thread fails (a duplicate id) comes back to the
 * caller as a database error, and nothing after it is written. */
static void test_batch_writer_failure(void)
{
    vr_error err = VR_ERROR_INIT;
    vr_db *db = open_in_transaction(&err);
    if (!db)
        return;
    vr_batch *rows = other_entries(db, &err);
    vr_batch_writer *w = vr_batch_writer_start(db, &err);
    OK(rows && w, "a batch and a writer (%s)", err.msg);
    if (!rows || !w)
        return;
    vr_batch_writer_attach(w, rows);
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < VR_BATCH_WRITER_ROWS * 100; i++)
        rc = add_other_entry(rows, 7, i, &err); /* every row id 7 */
    if (rc == 0)
        rc = vr_batch_writer_stop(w, &err);
    else
        vr_batch_writer_stop(w, &(vr_error)VR_ERROR_INIT);
    OK(rc < 0, "the failure reaches the caller");
    INT_EQ(err.code, VR_ERR_DATABASE, "as a database error");
    OK(strstr(err.msg, "UNIQUE constraint failed") != NULL, "naming the constraint: %s", err.msg);
    /* INSERT OR FAIL keeps the failing statement's rows before the
     * duplicate: the first row; no later batch is written. */
    INT_EQ(query_int64(db, "SELECT count(*) FROM trace_entry_other"), 1,
           "nothing stored after the failing row");
    vr_batch_free(rows);
    vr_db_rollback(db);
    vr_db_close(db);
}

/* Shared columns (insert_other_entry's source and device): a row with
 * another device ends a statement early, with or without a writer, and
 * every row keeps its own values, in the order added. */
static void test_batch_shared(void)
{
    for (int with_writer = 0; with_writer <= 1; with_writer++) {
        vr_error err = VR_ERROR_INIT;
        vr_db *db = open_in_transaction(&err);
        if (!db)
            return;
        vr_batch *rows = other_entries(db, &err);
        vr_batch_writer *w = with_writer ? vr_batch_writer_start(db, &err) : NULL;
        OK(rows && (w || !with_writer), "a batch (%s)", err.msg);
        if (!rows)
            return;
        vr_batch_writer_attach(w, rows);
        int failed = 0;
        int64_t n = 3 * VR_BATCH_WRITER_ROWS + 5;
        for (int64_t seq = 0; seq < n; seq++) {
            vr_batch_null(rows, OE_ID);
            vr_batch_int(rows, OE_SOURCE, 1 + seq / 1000);  /* a new one each 1000 rows */
            vr_batch_int(rows, OE_DEVICE, 1 + seq / 7 % 3); /* another each 7 rows */
            vr_batch_int(rows, OE_SEQ, seq);
            vr_batch_int(rows, OE_ACTION, 0);
            for (int c = OE_ADDRESS; c < OE_NCOLS; c++)
                vr_batch_null(rows, c);
            vr_batch_int(rows, OE_TS, seq);
            failed |= vr_batch_row(rows, &err) < 0;
        }
        failed |= vr_batch_writer_stop(w, &err) < 0 || vr_batch_flush(rows, &err) < 0;
        OK(!failed, "every row written, writer %d (%s)", with_writer, err.msg);
        INT_EQ(query_int64(db, "SELECT count(*) FROM trace_entry_other"), n, "every row stored");
        INT_EQ(query_int64(db, "SELECT count(*) FROM trace_entry_other WHERE id != seq + 1"
                               " OR source_id != 1 + seq / 1000 OR device_id != 1 + seq / 7 % 3"),
               0, "each row with its own source and device, in the order added");
        vr_batch_free(rows);
        vr_db_rollback(db);
        vr_db_close(db);
    }
}

/* writer 0: none; 1: the two batches at VR_BATCH_ROWS rows a statement
 * (vr_batch_writer_attach_rows); 2: at the writer's own size. The ts of
 * every op in id order, "ts,ts,...", or NULL. */
static char *op_order(int writer)
{
    vr_error err = VR_ERROR_INIT;
    vr_db *db = open_in_transaction(&err);
    if (!db)
        return NULL;
    int64_t name = vr_db_intern(db, "aten::mm", 8, &err);
    vr_batch *ops = vr_batch_new(db, "schemas/import.sql", "insert_op", op_cols, 8, &err);
    vr_batch *py = vr_batch_new(db, "schemas/import.sql", "insert_python_op", op_cols, 9, &err);
    vr_batch_writer *w = writer ? vr_batch_writer_start(db, &err) : NULL;
    OK(name > 0 && ops && py && (w || !writer), "two op batches, writer %d (%s)", writer,
       err.msg);
    if (writer == 1) {
        vr_batch_writer_attach_rows(w, ops, VR_BATCH_ROWS);
        vr_batch_writer_attach_rows(w, py, VR_BATCH_ROWS);
    } else {
        vr_batch_writer_attach(w, ops);
        vr_batch_writer_attach(w, py);
    }
    int failed = !ops || !py;
    /* Runs of ops and python ops of uneven lengths, as a trace has them. */
    for (int64_t ts = 0; ts < 20 * VR_BATCH_WRITER_ROWS && !failed; ts++) {
        vr_batch *b = ts % 7 < 4 || ts % 1000 < 300 ? ops : py;
        vr_batch_int(b, 0, 1);
        vr_batch_static_text(b, 1, b == ops ? "cpu_op" : "python_function");
        vr_batch_int(b, 2, name);
        vr_batch_int(b, 3, 1);
        vr_batch_int(b, 4, 1);
        vr_batch_int(b, 5, ts);
        vr_batch_int(b, 6, 1);
        vr_batch_null(b, 7);
        if (b == py)
            vr_batch_null(b, 8);
        failed |= vr_batch_row(b, &err) < 0;
    }
    failed |= vr_batch_writer_stop(w, &err) < 0 || vr_batch_flush(ops, &err) < 0 ||
              vr_batch_flush(py, &err) < 0;
    OK(!failed, "every op written, writer %d (%s)", writer, err.msg);
    char *order = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(vr_db_handle(db), "SELECT group_concat(ts_ns) FROM op ORDER BY id", -1,
                           &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        order = vr_xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    vr_batch_free(ops);
    vr_batch_free(py);
    vr_db_rollback(db);
    vr_db_close(db);
    return order;
}

/* Two batches that fill one table (kineto.c's ops and python ops): a row's
 * id depends on the rows each statement writes. Attached at VR_BATCH_ROWS
 * rows a statement, every op keeps the id it has without a writer; at the
 * writer's own size, ids change (what attach_rows is for). */
static void test_batch_writer_rows(void)
{
    char *none = op_order(0), *kept = op_order(1), *own = op_order(2);
    OK(none && kept && own, "the ops read back");
    if (none && kept && own) {
        OK(strcmp(none, kept) == 0, "with the writer at %d rows a statement: every id as without",
           VR_BATCH_ROWS);
        OK(strcmp(none, own) != 0, "at %d rows a statement: other ids", VR_BATCH_WRITER_ROWS);
    }
    free(none);
    free(kept);
    free(own);
}

/* Blocks of other shapes through a batch (written as INSERT ... SELECT
 * from the buffered rows): an upsert's ON CONFLICT clause kept after the
 * tuple, text values, expressions around parameters, and a partial batch
 * written by the flush. */
static void test_batch_shapes(void)
{
    vr_error err = VR_ERROR_INIT;
    vr_db *db = open_in_transaction(&err);
    if (!db)
        return;
    vr_batch *frames =
        vr_batch_new(db, "schemas/snapshot.sql", "insert_frame", frame_cols, 3, &err);
    vr_batch *events = vr_batch_new(db, "schemas/import.sql", "insert_categorised_mem_event",
                                    categorised_cols, 5, &err);
    vr_batch *stacks = vr_batch_new(db, "schemas/snapshot.sql", "insert_numbered_stack",
                                    numbered_stack_cols, 4, &err);
    OK(frames && events && stacks, "three batches (%s)", err.msg);
    if (!frames || !events || !stacks)
        return;
    int failed = 0;
    for (int i = 0; i < VR_BATCH_ROWS + 10; i++) { /* every frame twice */
        vr_batch_int(frames, 0, i / 2);            /* :file */
        vr_batch_int(frames, 1, 7);                /* :line */
        vr_batch_int(frames, 2, 1);                /* :function */
        failed |= vr_batch_row(frames, &err) < 0;
        vr_batch_int(events, 0, 1);   /* :source */
        vr_batch_int(events, 1, 1);   /* :device */
        vr_batch_int(events, 2, i);   /* :ts */
        vr_batch_int(events, 3, 100); /* :bytes */
        vr_batch_static_text(events, 4, i % 2 ? "parameter" : "gradient");
        failed |= vr_batch_row(events, &err) < 0;
    }
    vr_batch_int(stacks, 0, 5);  /* :id */
    vr_batch_int(stacks, 1, -1); /* :digest */
    vr_batch_int(stacks, 2, 2);  /* :depth */
    vr_batch_null(stacks, 3);    /* :user_frame */
    failed |= vr_batch_row(stacks, &err) < 0;
    failed |= vr_batch_flush(frames, &err) < 0 || vr_batch_flush(events, &err) < 0 ||
              vr_batch_flush(stacks, &err) < 0;
    OK(!failed, "every row written (%s)", err.msg);
    INT_EQ(query_int64(db, "SELECT count(*) FROM frame"), (VR_BATCH_ROWS + 10) / 2,
           "duplicates skipped by ON CONFLICT DO NOTHING");
    INT_EQ(query_int64(db, "SELECT count(*) FROM mem_event WHERE category = "
                           "CASE ts_ns % 2 WHEN 1 THEN 'parameter' ELSE 'gradient' END"),
           VR_BATCH_ROWS + 10, "each row's text stored");
    INT_EQ(query_int64(db,
                       "SELECT count(*) FROM stack WHERE id = 5 AND digest = 'ffffffffffffffff'"
                       " AND depth = 2 AND user_frame_id IS NULL"),
           1, "an expression of a parameter evaluated");
    vr_batch_free(frames);
    vr_batch_free(events);
    vr_batch_free(stacks);
    vr_db_rollback(db);
    vr_db_close(db);
}

/* Parameters are named, and a name the statement lacks is an error that
 * names the statement and the parameter (a mistyped one would bind
 * nothing, and the row would get NULL there): for a bind, and for a
 * batch's columns either way (one the tuple lacks, or a parameter of the
 * tuple the caller did not name). */
static void test_named_parameters(void)
{
    vr_error err = VR_ERROR_INIT;
    vr_db *db = open_in_transaction(&err);
    if (!db)
        return;
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/import.sql", "insert_tally", &err);
    OK(st && vr_db_bind_int(st, ":source", 1, &err) == 0, "a parameter it has (%s)", err.msg);
    OK(st && vr_db_bind_int(st, ":sourc", 1, &err) < 0, "a mistyped one refused");
    INT_EQ(err.code, VR_ERR_DATABASE, "as a database error");
    OK(strstr(err.msg, "insert_tally") && strstr(err.msg, ":sourc"),
       "naming the statement and the name: %s", err.msg);
    err = (vr_error)VR_ERROR_INIT;
    OK(st && vr_db_bind_null(st, "?1", &err) < 0 &&
           vr_db_bind_text(st, ":kinds", "x", 1, &err) < 0,
       "a number or another name refused too (%s)", err.msg);
    static const char *const missing[] = {":stack", ":position"};
    err = (vr_error)VR_ERROR_INIT;
    OK(!vr_batch_new(db, "schemas/snapshot.sql", "insert_stack_frame", missing, 2, &err),
       "a batch that does not name every parameter of its tuple refused");
    OK(strstr(err.msg, "insert_stack_frame") && strstr(err.msg, ":frame"),
       "naming the parameter: %s", err.msg);
    static const char *const extra[] = {":stack", ":position", ":frame", ":frames"};
    err = (vr_error)VR_ERROR_INIT;
    OK(!vr_batch_new(db, "schemas/snapshot.sql", "insert_stack_frame", extra, 4, &err),
       "a column the tuple lacks refused");
    OK(strstr(err.msg, "insert_stack_frame") && strstr(err.msg, ":frames"),
       "naming the column: %s", err.msg);
    static const char *const reordered[] = {":frame", ":stack", ":position"};
    err = (vr_error)VR_ERROR_INIT;
    vr_batch *b =
        vr_batch_new(db, "schemas/snapshot.sql", "insert_stack_frame", reordered, 3, &err);
    OK(b != NULL, "columns in the caller's order (%s)", err.msg);
    if (b) {
        vr_batch_int(b, 0, 30); /* :frame */
        vr_batch_int(b, 1, 10); /* :stack */
        vr_batch_int(b, 2, 20); /* :position */
        OK(vr_batch_row(b, &err) == 0 && vr_batch_flush(b, &err) == 0, "a row (%s)", err.msg);
        INT_EQ(query_int64(db, "SELECT count(*) FROM stack_frame WHERE stack_id = 10 AND "
                               "position = 20 AND frame_id = 30"),
               1, "each value where its name says");
        vr_batch_free(b);
    }
    vr_db_rollback(db);
    vr_db_close(db);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_batch_writer);
    RUN(test_batch_writer_failure);
    RUN(test_batch_shapes);
    RUN(test_named_parameters);
    RUN(test_batch_shared);
    RUN(test_batch_writer_rows);
    return harness_summary();
}
