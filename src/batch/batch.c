/* Batched inserts (batch.h): rows buffered (VR_BATCH_ROWS at a time, or
 * VR_BATCH_WRITER_ROWS with a writer) and
 * written through one INSERT ... SELECT from them (a virtual table), by
 * the caller or by a writer thread.
 *
 * The writer is a queue of full batches and one thread that steps them.
 * Two locks: `lock` guards the queue, the spare buffers and the flags;
 * `conn` is the connection's, held by the thread while it steps a batch
 * and by the caller between vr_batch_writer_enter() and vr_batch_writer_leave().
 * The thread starts no batch while the caller asks for the connection
 * (callers_waiting), so the caller waits for one batch at most (some
 * 5 million instructions), never for the queue. Each batch with a writer
 * has BATCH_BUFFERS buffers (up to BATCH_BUFFERS_MAX for short statements):
 * one the caller fills, the others waiting or being written; a caller
 * with none spare waits, which bounds memory. */
#include "batch/batch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/timing.h"

#define ROWS_TABLE "vr_batch_rows"
#define ROWS_MAX_COLS 16 /* columns c1..c16, then the hidden argument */

typedef struct {
    int type; /* SQLITE_NULL, SQLITE_INTEGER, SQLITE_TEXT */
    int len;  /* SQLITE_TEXT: its bytes (strlen once here, not SQLite's byte loop) */
    int64_t i;
    const char *text;
} batch_value;

/* Buffers of a batch with a writer: one filling, the others queued or
 * being written. The thread is woken when WAKE_AT batches wait (or the
 * caller must wait), not for each one: each wake-up is two context
 * switches, and one per batch was some 25,000 on a million entries. */
#define BATCH_BUFFERS 8
#define WAKE_AT 4
/* A batch of short statements (kineto.c's ops: 64 rows, for their ids)
 * gets more buffers, up to BATCH_ROWS_HELD rows in all: 8 of 64 rows were
 * a millisecond of a trace's reading, less than a time slice, so that the
 * reader waited whenever the writer was not running (docs/performance.md,
 * issue 30: rows waited 0.074 s for the writer, 0.025 s with 32). */
#define BATCH_BUFFERS_MAX 32
#define BATCH_ROWS_HELD (BATCH_BUFFERS * VR_BATCH_WRITER_ROWS)

struct vr_batch {
    vr_db *db;
    sqlite3_stmt *insert;            /* INSERT ... SELECT ... FROM vr_batch_rows(:vr_rows) */
    int rows_param;                  /* the index of :vr_rows in it */
    int shared_param[ROWS_MAX_COLS]; /* ... and of each shared column's parameter */
    int ncols, nrows;
    int cap;                   /* rows a statement writes */
    int shared[ROWS_MAX_COLS]; /* columns (from 0) whose value a statement binds once */
    int nshared;
    batch_value *values;               /* the rows being filled: cap x ncols */
    vr_batch_writer *writer;           /* NULL: the caller writes */
    batch_value *spare[BATCH_BUFFERS_MAX]; /* under writer->lock */
    int nspare;                        /* under writer->lock */
    int queued; /* full buffers handed over, not written yet (writer->lock) */
};

/* Batches one writer takes; a batch beyond is written by its caller. */
#define WRITER_BATCHES 8

typedef struct {
    vr_batch *batch;
    batch_value *values;
    int nrows;
} writer_job;

struct vr_batch_writer {
    vr_db *db;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work; /* to the thread: a job, the connection free again, stop */
    pthread_cond_t done; /* to the caller: a job written, a buffer spare */
    pthread_mutex_t conn;
    writer_job queue[WRITER_BATCHES * BATCH_BUFFERS_MAX];
    size_t head, count;
    vr_batch *batches[WRITER_BATCHES];
    size_t nbatches;
    int callers_waiting, stopping, failed;
    vr_error err; /* the first failure: written by the thread before `failed` */
    int depth;    /* enter/leave nesting: the caller's thread only */
    /* For VRAMREPORT_TIMING: which side waited for the other. */
    double thread_cpu, thread_idle, caller_wait, enter_wait;
};

/*-*** the rows as a table ***/

/* A batch's rows reach SQLite through an eponymous virtual table,
 * vr_batch_rows(:vr_rows), whose one argument is a pointer to them: the
 * INSERT becomes INSERT ... SELECT c1, c2, ... FROM vr_batch_rows(:vr_rows).
 * A value read
 * from the table costs SQLite a call that copies it into a register,
 * where a bound parameter cost a bind (some 80 instructions) and the
 * Variable opcode that copied it; and one statement writes any number of
 * rows, so a batch is not bounded by SQLite's limit on parameters and a
 * flush needs no statement of its own. */

typedef struct {
    const batch_value *values;
    int ncols, nrows;
} batch_rows;

typedef struct {
    sqlite3_vtab base;
} rows_table;

typedef struct {
    sqlite3_vtab_cursor base;
    const batch_value *row, *end; /* the current row, the end of the rows */
    int ncols;
    sqlite3_int64 rowid;
} rows_cursor;

static int rows_connect(sqlite3 *h, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **vtab, char **errmsg)
{
    (void)aux, (void)argc, (void)argv, (void)errmsg;
    int rc = sqlite3_declare_vtab(h, "CREATE TABLE x(c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, "
                                     "c11, c12, c13, c14, c15, c16, rows HIDDEN)");
    if (rc != SQLITE_OK)
        return rc;
    rows_table *t = sqlite3_malloc(sizeof *t);
    if (!t)
        return SQLITE_NOMEM;
    memset(t, 0, sizeof *t);
    *vtab = &t->base;
    return SQLITE_OK;
}

static int rows_disconnect(sqlite3_vtab *vtab)
{
    sqlite3_free(vtab);
    return SQLITE_OK;
}

/* The one plan: the rows given as the argument (rows = :vr_rows). */
static int rows_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info)
{
    (void)vtab;
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *c = &info->aConstraint[i];
        if (c->usable && c->iColumn == ROWS_MAX_COLS && c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
            info->aConstraintUsage[i].argvIndex = 1;
            info->aConstraintUsage[i].omit = 1;
            info->estimatedCost = 1;
            info->estimatedRows = VR_BATCH_ROWS;
            return SQLITE_OK;
        }
    }
    return SQLITE_CONSTRAINT;
}

static int rows_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **cursor)
{
    (void)vtab;
    rows_cursor *c = sqlite3_malloc(sizeof *c);
    if (!c)
        return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    *cursor = &c->base;
    return SQLITE_OK;
}

static int rows_close(sqlite3_vtab_cursor *cursor)
{
    sqlite3_free(cursor);
    return SQLITE_OK;
}

static int rows_filter(sqlite3_vtab_cursor *cursor, int plan, const char *plan_text, int argc,
                       sqlite3_value **argv)
{
    (void)plan, (void)plan_text;
    rows_cursor *c = (rows_cursor *)cursor;
    const batch_rows *rows = argc == 1 ? sqlite3_value_pointer(argv[0], ROWS_TABLE) : NULL;
    c->row = c->end = NULL;
    c->ncols = 0;
    c->rowid = 0;
    if (rows) {
        c->row = rows->values;
        c->end = rows->values + (size_t)rows->nrows * (size_t)rows->ncols;
        c->ncols = rows->ncols;
    }
    return SQLITE_OK;
}

static int rows_next(sqlite3_vtab_cursor *cursor)
{
    rows_cursor *c = (rows_cursor *)cursor;
    c->row += c->ncols;
    c->rowid++;
    return SQLITE_OK;
}

static int rows_eof(sqlite3_vtab_cursor *cursor)
{
    const rows_cursor *c = (const rows_cursor *)cursor;
    return c->row >= c->end;
}

static int rows_column(sqlite3_vtab_cursor *cursor, sqlite3_context *ctx, int col)
{
    const rows_cursor *c = (const rows_cursor *)cursor;
    if (col >= c->ncols)
        return SQLITE_OK; /* NULL */
    const batch_value *v = &c->row[col];
    if (v->type == SQLITE_INTEGER)
        sqlite3_result_int64(ctx, v->i);
    else if (v->type == SQLITE_TEXT)
        sqlite3_result_text(ctx, v->text, v->len, SQLITE_STATIC);
    return SQLITE_OK; /* else NULL, the result's default */
}

static int rows_rowid(sqlite3_vtab_cursor *cursor, sqlite3_int64 *rowid)
{
    *rowid = ((const rows_cursor *)cursor)->rowid;
    return SQLITE_OK;
}

/* Eponymous only (no xCreate): no CREATE VIRTUAL TABLE can name it. */
static const sqlite3_module rows_module = {
    .xConnect = rows_connect,
    .xBestIndex = rows_best_index,
    .xDisconnect = rows_disconnect,
    .xOpen = rows_open,
    .xClose = rows_close,
    .xFilter = rows_filter,
    .xNext = rows_next,
    .xEof = rows_eof,
    .xColumn = rows_column,
    .xRowid = rows_rowid,
};

/* The table on the connection, registered by the first batch made on it:
 * registering it again would replace it under statements prepared
 * already, so a probe that compiles says it is there. An SQLite code. */
static int register_rows_table(sqlite3 *h)
{
    sqlite3_stmt *probe;
    if (sqlite3_prepare_v2(h, "SELECT 1 FROM " ROWS_TABLE "(NULL)", -1, &probe, NULL) ==
        SQLITE_OK) {
        sqlite3_finalize(probe);
        return SQLITE_OK;
    }
    return sqlite3_create_module_v2(h, ROWS_TABLE, &rows_module, NULL, NULL);
}

/*-*** the batch ***/

/* The end of the parenthesised tuple starting at p ('('), or NULL: string
 * literals and nested parentheses skipped. */
static const char *tuple_end(const char *p, const char *end)
{
    int depth = 0;
    for (; p < end; p++) {
        if (*p == '\'') {
            for (p++; p < end && *p != '\''; p++)
                ;
        } else if (*p == '(') {
            depth++;
        } else if (*p == ')' && --depth == 0) {
            return p;
        }
    }
    return NULL;
}

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

#define SHARED_MARK "/* shared */"

/* Whether the parameter ending at p is marked shared (SHARED_MARK after it,
 * blanks between): *p moved to the mark's end. */
static int is_shared(const char **p, const char *close)
{
    const char *q = *p + 1;
    while (q < close && (*q == ' ' || *q == '\n'))
        q++;
    size_t n = strlen(SHARED_MARK);
    if ((size_t)(close - q) < n || strncmp(q, SHARED_MARK, n) != 0)
        return 0;
    *p = q + n - 1;
    return 1;
}

/* The batch's columns as rows_insert_sql finds them in the tuple. */
typedef struct {
    const char *const *names; /* the caller's, in its order */
    int ncols;
    int seen[ROWS_MAX_COLS]; /* each name met in the tuple */
    const char *bad;         /* a parameter that is no column, or "?" */
    size_t bad_len;
} tuple_cols;

/* Column k (from 0) into b: column c(k+1) of vr_batch_rows, or, when
 * shared, parameter :vr_shared_N (N its place among the shared ones), its column
 * recorded in shared[] (once, however often the tuple names it). */
static void put_param(vr_buf *b, int k, int shared, vr_batch *batch)
{
    if (!shared) {
        vr_buf_printf(b, "c%d", k + 1);
        return;
    }
    int n = 0;
    while (n < batch->nshared && batch->shared[n] != k)
        n++;
    if (n == batch->nshared)
        batch->shared[batch->nshared++] = k;
    vr_buf_printf(b, ":vr_shared_%d", n);
}

/* The column named by the parameter p[0..len), or -1. */
static int column_of(const tuple_cols *t, const char *p, size_t len)
{
    for (int k = 0; k < t->ncols; k++)
        if (strlen(t->names[k]) == len && strncmp(t->names[k], p, len) == 0)
            return k;
    return -1;
}

/* The expressions between the tuple's parentheses (open, close) with each
 * :name as its column of vr_batch_rows (or a parameter of the statement
 * when shared), into b. -1 with t->bad set: a parameter that is not one
 * of the columns, or one by number (?N: the columns are named). */
static int put_selected(vr_buf *b, const char *open, const char *close, tuple_cols *t,
                        vr_batch *batch)
{
    for (const char *p = open + 1; p < close; p++) {
        if (*p == '\'') {
            const char *q = p + 1;
            while (q < close && *q != '\'')
                q++;
            vr_buf_append(b, p, (size_t)(q - p) + 1);
            p = q;
        } else if (*p == ':' && p + 1 < close && is_name_char(p[1])) {
            const char *name = p;
            while (p + 1 < close && is_name_char(p[1]))
                p++;
            int k = column_of(t, name, (size_t)(p + 1 - name));
            if (k < 0) {
                t->bad = name, t->bad_len = (size_t)(p + 1 - name);
                return -1;
            }
            t->seen[k] = 1;
            put_param(b, k, is_shared(&p, close), batch);
        } else if (*p == '?') {
            t->bad = p, t->bad_len = 1;
            return -1;
        } else {
            vr_buf_putc(b, *p);
        }
    }
    return 0;
}

/* "INSERT ... VALUES (:a, f(:b), ...) rest" -> "INSERT ... SELECT c1,
 * f(c2), ... FROM vr_batch_rows(:vr_rows) WHERE true rest" (WHERE: an upsert's
 * ON CONFLICT may follow a SELECT only after one), or NULL with err set
 * when the block has no tuple after VALUES or its parameters are not the
 * columns. The shared columns are recorded in batch. */
static char *rows_insert_sql(const char *block, size_t len, const char *file, const char *name,
                             tuple_cols *t, vr_batch *batch, vr_error *err)
{
    const char *values = NULL, *end = block + len;
    for (const char *p = block; p + 6 <= end; p++)
        if (strncmp(p, "VALUES", 6) == 0)
            values = p;
    const char *open = values ? memchr(values, '(', (size_t)(end - values)) : NULL;
    const char *close = open ? tuple_end(open, end) : NULL;
    if (!close || t->ncols > ROWS_MAX_COLS) {
        vr_fail_code(err, VR_ERR_DATABASE,
                     "internal: SQL %s in %s has no VALUES list of at most %d parameters", name,
                     file, ROWS_MAX_COLS);
        return NULL;
    }
    vr_buf b = VR_BUF_INIT;
    vr_buf_append(&b, block, (size_t)(values - block));
    vr_buf_puts(&b, "SELECT ");
    int k = 0;
    if (put_selected(&b, open, close, t, batch) == 0)
        while (k < t->ncols && t->seen[k])
            k++;
    if (t->bad || k < t->ncols) {
        vr_buf_free(&b);
        if (t->bad)
            vr_fail_code(err, VR_ERR_DATABASE,
                         "internal: SQL %s in %s (batched): parameter %.*s is not one of "
                         "the batch's columns",
                         name, file, (int)t->bad_len, t->bad);
        else
            vr_fail_code(err, VR_ERR_DATABASE,
                         "internal: SQL %s in %s (batched) has no parameter %s", name, file,
                         t->names[k]);
        return NULL;
    }
    vr_buf_puts(&b, " FROM " ROWS_TABLE "(:vr_rows) WHERE true");
    vr_buf_append(&b, close + 1, (size_t)(end - close - 1));
    return vr_buf_detach(&b);
}

static batch_value *new_values(int ncols, int rows)
{
    return vr_xmalloc(sizeof(batch_value) * (size_t)ncols * (size_t)rows);
}

vr_batch *vr_batch_new(vr_db *db, const char *file, const char *name, const char *const *cols,
                       int ncols, vr_error *err)
{
    sqlite3 *h = vr_db_handle(db);
    size_t len;
    const char *block = vr_db_sql_block(file, name, &len);
    if (!block) {
        vr_fail_code(err, VR_ERR_DATABASE, "internal: no SQL block %s in %s", name, file);
        return NULL;
    }
    if (register_rows_table(h) != SQLITE_OK) {
        vr_fail_code(err, VR_ERR_DATABASE, "internal: the batches' table: %s", sqlite3_errmsg(h));
        return NULL;
    }
    vr_batch *b = vr_xmalloc(sizeof *b);
    memset(b, 0, sizeof *b);
    tuple_cols t = {.names = cols, .ncols = ncols};
    char *sql = rows_insert_sql(block, len, file, name, &t, b, err);
    if (!sql) {
        free(b);
        return NULL;
    }
    int rc = sqlite3_prepare_v3(h, sql, -1, SQLITE_PREPARE_PERSISTENT, &b->insert, NULL);
    free(sql);
    if (rc != SQLITE_OK) {
        free(b);
        vr_fail_code(err, VR_ERR_DATABASE, "internal: SQL %s in %s (batched): %s", name, file,
                     sqlite3_errmsg(h));
        return NULL;
    }
    /* The statement's own parameters, looked up once: a flush binds them. */
    b->rows_param = vr_db_param(b->insert, ":vr_rows", err);
    for (int n = 0; n < b->nshared && b->rows_param > 0; n++) {
        char param[32];
        snprintf(param, sizeof param, ":vr_shared_%d", n);
        b->shared_param[n] = vr_db_param(b->insert, param, err);
        if (b->shared_param[n] < 0)
            b->rows_param = -1;
    }
    if (b->rows_param < 0) {
        sqlite3_finalize(b->insert);
        free(b);
        return NULL;
    }
    b->db = db;
    b->ncols = ncols;
    b->cap = VR_BATCH_ROWS;
    b->values = new_values(ncols, b->cap);
    return b;
}

static batch_value *cell(vr_batch *b, int col)
{
    return &b->values[b->nrows * b->ncols + col];
}

void vr_batch_set_rows(vr_batch *b, int rows)
{
    free(b->values);
    b->cap = rows;
    b->values = new_values(b->ncols, rows);
}

void vr_batch_int(vr_batch *b, int col, int64_t v)
{
    *cell(b, col) = (batch_value){SQLITE_INTEGER, 0, v, NULL};
}

void vr_batch_null(vr_batch *b, int col)
{
    *cell(b, col) = (batch_value){SQLITE_NULL, 0, 0, NULL};
}

void vr_batch_opt_int(vr_batch *b, int col, int has, int64_t v)
{
    if (has)
        vr_batch_int(b, col, v);
    else
        vr_batch_null(b, col);
}

void vr_batch_static_text(vr_batch *b, int col, const char *text)
{
    *cell(b, col) = text ? (batch_value){SQLITE_TEXT, (int)strlen(text), 0, text}
                         : (batch_value){SQLITE_NULL, 0, 0, NULL};
}

static void bind_value(sqlite3_stmt *st, int param, const batch_value *v)
{
    if (v->type == SQLITE_INTEGER)
        sqlite3_bind_int64(st, param, v->i);
    else if (v->type == SQLITE_TEXT)
        sqlite3_bind_text(st, param, v->text, v->len, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, param);
}

/* nrows rows (1 or more) through the INSERT ... SELECT, the shared
 * columns bound from the first (every row holds the same there); the
 * pointer is unbound after, so the statement never holds one to rows
 * gone. */
static int write_rows(vr_batch *b, const batch_value *values, int nrows, vr_error *err)
{
    batch_rows rows = {values, b->ncols, nrows};
    for (int k = 0; k < b->nshared; k++)
        bind_value(b->insert, b->shared_param[k], &values[b->shared[k]]);
    sqlite3_bind_pointer(b->insert, b->rows_param, &rows, ROWS_TABLE, NULL);
    int rc = vr_db_step_done(b->db, b->insert, err);
    sqlite3_bind_null(b->insert, b->rows_param);
    return rc;
}

static int hand_over(vr_batch *b, int nrows, vr_error *err);

/* The filled buffer's first nrows rows out: written, or handed over. */
static int write_out(vr_batch *b, int nrows, vr_error *err)
{
    return b->writer ? hand_over(b, nrows, err) : write_rows(b, b->values, nrows, err);
}

/* Whether row r holds row 0's values in every shared column. */
static int same_shared(const vr_batch *b, int r)
{
    const batch_value *first = b->values, *row = b->values + (size_t)r * (size_t)b->ncols;
    for (int k = 0; k < b->nshared; k++) {
        const batch_value *x = &first[b->shared[k]], *y = &row[b->shared[k]];
        if (x->type != y->type || x->i != y->i || x->text != y->text)
            return 0;
    }
    return 1;
}

/* The row just added differs from the buffer's in a shared column: the
 * rows before it go out, and it starts the next buffer. */
static int cut_before_last(vr_batch *b, vr_error *err)
{
    batch_value row[ROWS_MAX_COLS];
    size_t size = sizeof *row * (size_t)b->ncols;
    memcpy(row, b->values + (size_t)b->nrows * (size_t)b->ncols, size);
    int rc = write_out(b, b->nrows, err);
    memcpy(b->values, row, size); /* a buffer of its own again after a hand-over */
    b->nrows = 1;
    return rc;
}

int vr_batch_row(vr_batch *b, vr_error *err)
{
    if (b->nshared && b->nrows > 0 && !same_shared(b, b->nrows))
        return cut_before_last(b, err);
    if (++b->nrows < b->cap)
        return 0;
    b->nrows = 0;
    return write_out(b, b->cap, err);
}

static int wait_written(vr_batch *b, vr_error *err);

int vr_batch_flush(vr_batch *b, vr_error *err)
{
    if (b->writer && wait_written(b, err) < 0)
        return -1;
    if (b->nrows == 0)
        return 0;
    vr_batch_writer_enter(b->writer);
    int rc = write_rows(b, b->values, b->nrows, err);
    vr_batch_writer_leave(b->writer);
    b->nrows = 0;
    return rc;
}

void vr_batch_discard(vr_batch *b)
{
    b->nrows = 0;
}

void vr_batch_free(vr_batch *b)
{
    if (!b)
        return;
    sqlite3_finalize(b->insert);
    free(b->values);
    for (int i = 0; i < b->nspare; i++)
        free(b->spare[i]);
    free(b);
}

/*-*** the writer ***/

static writer_job next_job(vr_batch_writer *w)
{
    writer_job j = w->queue[w->head];
    w->head = (w->head + 1) % (sizeof w->queue / sizeof *w->queue);
    w->count--;
    return j;
}

/* The thread: steps the jobs in order until stopped with none left. After
 * a failure the rest are not written, only given back. */
static void *writer_main(void *arg)
{
    vr_batch_writer *w = arg;
    pthread_setname_np(pthread_self(), "vr-writer"); /* for top and perf; nothing depends on it */
    pthread_mutex_lock(&w->lock);
    for (;;) {
        double t = vr_now();
        while (!w->stopping && (w->count == 0 || w->callers_waiting))
            pthread_cond_wait(&w->work, &w->lock);
        w->thread_idle += vr_now() - t;
        if (w->count == 0)
            break;
        writer_job j = next_job(w);
        int failed = w->failed;
        pthread_mutex_unlock(&w->lock);
        if (!failed) {
            pthread_mutex_lock(&w->conn);
            failed = write_rows(j.batch, j.values, j.nrows, &w->err) < 0;
            pthread_mutex_unlock(&w->conn);
        }
        pthread_mutex_lock(&w->lock);
        w->failed = failed;
        j.batch->spare[j.batch->nspare++] = j.values;
        j.batch->queued--;
        pthread_cond_broadcast(&w->done);
    }
    w->thread_cpu = vr_thread_cpu();
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* The writer's failure as the caller's error; -1. Under w->lock. */
static int writer_failure(vr_batch_writer *w, vr_error *err)
{
    *err = w->err;
    return -1;
}

/* Waits (under w->lock) for the writer to give a buffer of b back (all:
 * every buffer b handed over), or to fail. A caller
 * between enter and leave lends it the connection meanwhile, else neither
 * could go on: rows come in while the connection is held (a new stack's
 * frames, a segment's blocks), and whatever the caller did before with the
 * connection is done (its statements reset, its ids read). */
static void wait_written_by(vr_batch_writer *w, vr_batch *b, int all)
{
    if (w->failed || (all ? b->queued == 0 : b->nspare > 0))
        return;
    pthread_cond_signal(&w->work); /* it may be waiting for WAKE_AT batches */
    int lend = w->depth > 0;
    if (lend) {
        pthread_mutex_unlock(&w->conn);
        w->callers_waiting = 0;
        pthread_cond_signal(&w->work);
    }
    double t = vr_now();
    while (!w->failed && (all ? b->queued > 0 : b->nspare == 0))
        pthread_cond_wait(&w->done, &w->lock);
    w->caller_wait += vr_now() - t;
    if (lend) {
        w->callers_waiting = 1;
        pthread_mutex_unlock(&w->lock);
        pthread_mutex_lock(&w->conn);
        pthread_mutex_lock(&w->lock);
    }
}

/* A filled buffer (its first nrows rows) to the queue, a spare one to
 * fill (waiting for one). */
static int hand_over(vr_batch *b, int nrows, vr_error *err)
{
    vr_batch_writer *w = b->writer;
    pthread_mutex_lock(&w->lock);
    wait_written_by(w, b, 0);
    int rc = 0;
    if (w->failed) {
        rc = writer_failure(w, err);
    } else {
        size_t cap = sizeof w->queue / sizeof *w->queue;
        w->queue[(w->head + w->count++) % cap] = (writer_job){b, b->values, nrows};
        b->queued++;
        b->values = b->spare[--b->nspare];
        if (w->count >= WAKE_AT)
            pthread_cond_signal(&w->work);
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

/* Until every full buffer of b handed over is written. */
static int wait_written(vr_batch *b, vr_error *err)
{
    vr_batch_writer *w = b->writer;
    pthread_mutex_lock(&w->lock);
    wait_written_by(w, b, 1);
    int rc = w->failed ? writer_failure(w, err) : 0;
    pthread_mutex_unlock(&w->lock);
    return rc;
}

vr_batch_writer *vr_batch_writer_start(vr_db *db, vr_error *err)
{
    vr_batch_writer *w = vr_xmalloc(sizeof *w);
    memset(w, 0, sizeof *w);
    w->db = db;
    w->err = (vr_error)VR_ERROR_INIT;
    pthread_mutex_init(&w->lock, NULL);
    pthread_mutex_init(&w->conn, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->done, NULL);
    int rc = pthread_create(&w->thread, NULL, writer_main, w);
    if (rc == 0)
        return w;
    pthread_mutex_destroy(&w->lock);
    pthread_mutex_destroy(&w->conn);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
    free(w);
    vr_fail_code(err, VR_ERR_FAILED, "cannot start a writer thread: %s", strerror(rc));
    return NULL;
}

void vr_batch_writer_attach(vr_batch_writer *w, vr_batch *b)
{
    vr_batch_writer_attach_rows(w, b, VR_BATCH_WRITER_ROWS);
}

void vr_batch_writer_attach_rows(vr_batch_writer *w, vr_batch *b, int rows)
{
    if (!w || b->writer || w->nbatches == WRITER_BATCHES || rows < 1 || rows < b->nrows)
        return;
    /* Statements of `rows` rows from now on; the rows already added are kept. */
    batch_value *values = new_values(b->ncols, rows);
    memcpy(values, b->values, sizeof *values * (size_t)b->nrows * (size_t)b->ncols);
    free(b->values);
    b->values = values;
    b->cap = rows;
    int buffers = BATCH_ROWS_HELD / rows;
    buffers = buffers < BATCH_BUFFERS       ? BATCH_BUFFERS
              : buffers > BATCH_BUFFERS_MAX ? BATCH_BUFFERS_MAX
                                            : buffers;
    for (int i = 0; i < buffers - 1; i++)
        b->spare[b->nspare++] = new_values(b->ncols, b->cap);
    w->batches[w->nbatches++] = b;
    b->writer = w;
}

void vr_batch_writer_enter(vr_batch_writer *w)
{
    if (!w || w->depth++ > 0)
        return;
    double t = vr_now();
    pthread_mutex_lock(&w->lock);
    w->callers_waiting = 1;
    pthread_mutex_unlock(&w->lock);
    pthread_mutex_lock(&w->conn);
    w->enter_wait += vr_now() - t;
}

void vr_batch_writer_leave(vr_batch_writer *w)
{
    if (!w || --w->depth > 0)
        return;
    pthread_mutex_unlock(&w->conn);
    pthread_mutex_lock(&w->lock);
    w->callers_waiting = 0;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
}

int vr_batch_writer_stop(vr_batch_writer *w, vr_error *err)
{
    if (!w)
        return 0;
    pthread_mutex_lock(&w->lock);
    w->stopping = 1;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    vr_timing_figure("writer thread: cpu", w->thread_cpu);
    vr_timing_figure("writer thread: waited for rows", w->thread_idle);
    vr_timing_figure("writer thread: rows waited for it", w->caller_wait);
    vr_timing_figure("writer thread: the connection waited for it", w->enter_wait);
    for (size_t i = 0; i < w->nbatches; i++)
        w->batches[i]->writer = NULL;
    int rc = w->failed ? writer_failure(w, err) : 0;
    pthread_mutex_destroy(&w->lock);
    pthread_mutex_destroy(&w->conn);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
    free(w);
    return rc;
}
