/* The forward_weights pass: the weight bytes ONE forward pass reads, per
 * source whose trace was recorded with record_shapes=True (op_weight).
 *
 * A forward reads every weight once, but a trace may hold many forwards
 * (steps, a generate loop calling the model for every token) and ops
 * nested in one another that carry the same weights (aten::convolution
 * under aten::conv2d). One merge of the weight ops with the module calls
 * ("nn.Module: Linear_166" python_function events: with_modules or
 * with_stack), both by source, thread and time as locate.c reads them,
 * keeps the modules open on the thread: each weight op that no other
 * weight op encloses is given its innermost module call (temp.weight_read).
 * analyze.sql's insert_forward_weights then counts, for each module
 * instance (its name: PyTorch numbers each instance of a class), the
 * call that read the most, once, and the ops outside every module in
 * one window (the first forward phase, else the first step, else the
 * whole trace). Owns forward_weights.
 *
 * Memory: the stack of open module calls of one thread. */
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/sat.h"
#include "analyze/analyze.h"
#include "analyze/thread_key.h"

static const char sql[] = "schemas/analyze.sql";

typedef vr_thread_key thread_key;

typedef struct {
    thread_key thread;
    int64_t ts, end, name_id, id;
} span_row;

/* One open module call. */
typedef struct {
    int64_t end, name_id, call_id;
} open_module;

typedef struct {
    vr_db *db;
    vr_error *err;
    sqlite3_stmt *modules, *ins;
    span_row next; /* the next module call not yet pushed */
    int have_module;
    thread_key thread;
    open_module *stack;
    size_t depth, cap;
    int64_t weight_end; /* the end of the counted weight ops open on the thread */
} sweep;

/* Columns source, pid, tid, ts, dur, then name or op id, then id; a NULL
 * pid or tid (which no module call has) sorts first, as in SQL. */
static void read_span(sqlite3_stmt *st, span_row *r)
{
    r->thread.source = sqlite3_column_int64(st, 0);
    r->thread.pid =
        sqlite3_column_type(st, 1) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(st, 1);
    r->thread.tid =
        sqlite3_column_type(st, 2) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(st, 2);
    r->ts = sqlite3_column_int64(st, 3);
    r->end = vr_sat_add(r->ts, sqlite3_column_int64(st, 4));
    r->name_id = sqlite3_column_int64(st, 5);
    r->id = sqlite3_column_int64(st, 6);
}

static int fetch_module(sweep *s)
{
    int rc = sqlite3_step(s->modules);
    s->have_module = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading module calls");
    if (s->have_module)
        read_span(s->modules, &s->next);
    return 0;
}

static void enter_thread(sweep *s, const thread_key *t)
{
    if (vr_thread_cmp(t, &s->thread) != 0) {
        s->depth = 0;
        s->weight_end = INT64_MIN;
        s->thread = *t;
    }
}

static void push_module(sweep *s, const span_row *m)
{
    enter_thread(s, &m->thread);
    while (s->depth > 0 && s->stack[s->depth - 1].end < m->end)
        s->depth--;
    vr_xgrow(&s->stack, &s->cap, s->depth + 1, sizeof *s->stack, 64);
    s->stack[s->depth++] = (open_module){m->end, m->name_id, m->id};
}

/* Brings the stack of module calls to time ts on thread t. */
static int advance(sweep *s, const thread_key *t, int64_t ts)
{
    while (s->have_module) {
        int c = vr_thread_cmp(&s->next.thread, t);
        if (c > 0 || (c == 0 && s->next.ts > ts))
            break;
        push_module(s, &s->next);
        if (fetch_module(s) < 0)
            return -1;
    }
    enter_thread(s, t);
    while (s->depth > 0 && s->stack[s->depth - 1].end < ts)
        s->depth--;
    return 0;
}

/* A weight op: skipped when a counted weight op encloses it, else
 * written with its innermost module call (none: NULL). */
static int on_weight_op(sweep *s, const span_row *w)
{
    if (advance(s, &w->thread, w->ts) < 0)
        return -1;
    if (w->end <= s->weight_end)
        return 0; /* nested: its weights are the enclosing op's */
    s->weight_end = w->end;
    const open_module *m = s->depth ? &s->stack[s->depth - 1] : NULL;
    sqlite3_stmt *st = s->ins;
    return vr_db_bind_int(st, ":op", w->id, s->err) < 0 ||
                   vr_db_bind_opt_int(st, ":module", m != NULL, m ? m->name_id : 0, s->err) < 0 ||
                   vr_db_bind_opt_int(st, ":call", m != NULL, m ? m->call_id : 0, s->err) < 0 ||
                   vr_db_step_done(s->db, st, s->err) < 0
               ? -1
               : 0;
}

static int run_sweep(sweep *s)
{
    sqlite3_stmt *ops = vr_db_stmt(s->db, sql, "select_weight_ops", s->err);
    if (!ops || fetch_module(s) < 0)
        return -1;
    int rc = 0, step;
    span_row w;
    while (rc == 0 && (step = sqlite3_step(ops)) == SQLITE_ROW) {
        read_span(ops, &w);
        rc = on_weight_op(s, &w);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = vr_db_fail(s->db, s->err, "reading weight ops");
    sqlite3_reset(ops);
    sqlite3_reset(s->modules);
    return rc;
}

/* 1 when some source has op_weight rows, 0 when none, -1 on error. */
static int any_weights(vr_db *db, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "any_op_weight", err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    int any = rc == SQLITE_ROW && sqlite3_column_int(st, 0);
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? any : vr_db_fail(db, err, "reading op_weight");
}

int vr_analyze_forward_weights(vr_db *db, vr_error *err)
{
    int any = any_weights(db, err);
    if (any <= 0)
        return any; /* a trace without shapes: nothing to count */
    if (vr_db_exec_named(db, sql, "begin_weight_read", err) < 0)
        return -1;
    sweep s;
    memset(&s, 0, sizeof s);
    s.db = db;
    s.err = err;
    s.thread = (thread_key){INT64_MIN, INT64_MIN, INT64_MIN};
    s.weight_end = INT64_MIN;
    s.modules = vr_db_stmt(db, sql, "select_weight_modules", err);
    s.ins = vr_db_stmt(db, sql, "insert_weight_read", err);
    int rc = !s.modules || !s.ins ? -1 : run_sweep(&s);
    free(s.stack);
    if (rc == 0)
        rc = vr_db_exec_named(db, sql, "insert_forward_weights", err);
    return rc;
}
