/* Op attribution: a merge of two streams sorted by (pid, tid, ts) - the
 * cpu_ops and the memory events - with a stack of the ops open on the
 * current thread. The innermost open op owns the event ("self"); every op
 * on the stack includes it ("incl"), as the TensorBoard profiler's memory
 * view counted. One pass, memory bounded by the nesting depth. */
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "analyze.h"

#define FRAME_DEVICES 8

typedef struct {
    int64_t device_id;
    int64_t self_count, self_alloc, self_free;
    int64_t incl_count, incl_alloc, incl_free;
} op_tally;

typedef struct {
    int64_t id, end_ns;
    op_tally dev[FRAME_DEVICES];
    int ndev;
} frame;

typedef struct {
    int64_t id, pid, tid, ts, dur;
} op_row;

typedef struct {
    vr_db *db;
    vr_error *err;
    sqlite3_stmt *ops, *set_op, *ins;
    op_row next_op;
    int have_op;
    int64_t pid, tid;          /* thread of the stack */
    frame *stack;
    size_t depth, cap;
} sweep;

static int fetch_op(sweep *s)
{
    int rc = sqlite3_step(s->ops);
    s->have_op = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading ops");
    if (s->have_op) {
        s->next_op.id = sqlite3_column_int64(s->ops, 0);
        s->next_op.pid = sqlite3_column_int64(s->ops, 1);
        s->next_op.tid = sqlite3_column_int64(s->ops, 2);
        s->next_op.ts = sqlite3_column_int64(s->ops, 3);
        s->next_op.dur = sqlite3_column_int64(s->ops, 4);
    }
    return 0;
}

static int flush_frame(sweep *s, const frame *f)
{
    for (int i = 0; i < f->ndev; i++) {
        const op_tally *t = &f->dev[i];
        sqlite3_stmt *st = s->ins;
        sqlite3_bind_int64(st, 1, f->id);
        sqlite3_bind_int64(st, 2, t->device_id);
        sqlite3_bind_int64(st, 3, t->self_count);
        sqlite3_bind_int64(st, 4, t->self_alloc);
        sqlite3_bind_int64(st, 5, t->self_free);
        sqlite3_bind_int64(st, 6, t->incl_count);
        sqlite3_bind_int64(st, 7, t->incl_alloc);
        sqlite3_bind_int64(st, 8, t->incl_free);
        if (vr_db_step_done(s->db, st, s->err) < 0)
            return -1;
    }
    return 0;
}

/* Pops ops that ended before `t` (all of them for INT64_MAX). */
static int pop_until(sweep *s, int64_t t)
{
    while (s->depth > 0 && (t == INT64_MAX || s->stack[s->depth - 1].end_ns < t)) {
        if (flush_frame(s, &s->stack[--s->depth]) < 0)
            return -1;
    }
    return 0;
}

static int push_op(sweep *s, const op_row *op)
{
    if (op->pid != s->pid || op->tid != s->tid) {
        if (pop_until(s, INT64_MAX) < 0)
            return -1;
        s->pid = op->pid;
        s->tid = op->tid;
    }
    if (pop_until(s, op->ts) < 0)
        return -1;
    if (s->depth == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->stack = vr_xrealloc(s->stack, s->cap * sizeof *s->stack);
    }
    frame *f = &s->stack[s->depth++];
    f->id = op->id;
    f->end_ns = op->ts + op->dur;
    f->ndev = 0;
    return 0;
}

static op_tally *tally_for(frame *f, int64_t device_id)
{
    for (int i = 0; i < f->ndev; i++)
        if (f->dev[i].device_id == device_id)
            return &f->dev[i];
    if (f->ndev == FRAME_DEVICES)
        return NULL;
    op_tally *t = &f->dev[f->ndev++];
    memset(t, 0, sizeof *t);
    t->device_id = device_id;
    return t;
}

static void count_event(sweep *s, int64_t device_id, int64_t bytes)
{
    for (size_t i = 0; i < s->depth; i++) {
        op_tally *t = tally_for(&s->stack[i], device_id);
        if (!t)
            continue;
        int self = i == s->depth - 1;
        if (bytes > 0) {
            t->incl_count++;
            t->incl_alloc += bytes;
            t->self_count += self;
            t->self_alloc += self ? bytes : 0;
        } else {
            t->incl_free -= bytes;
            t->self_free -= self ? bytes : 0;
        }
    }
}

/* Brings the stack to the state at event (pid, tid, ts). */
static int advance(sweep *s, int64_t pid, int64_t tid, int64_t ts)
{
    while (s->have_op && (s->next_op.pid < pid ||
                          (s->next_op.pid == pid && (s->next_op.tid < tid ||
                                                     (s->next_op.tid == tid &&
                                                      s->next_op.ts <= ts))))) {
        if (push_op(s, &s->next_op) < 0 || fetch_op(s) < 0)
            return -1;
    }
    if (pid != s->pid || tid != s->tid) {
        if (pop_until(s, INT64_MAX) < 0)
            return -1;
        s->pid = pid;
        s->tid = tid;
    }
    return pop_until(s, ts);
}

static int on_event(sweep *s, sqlite3_stmt *ev)
{
    int64_t id = sqlite3_column_int64(ev, 0);
    int64_t pid = sqlite3_column_int64(ev, 1), tid = sqlite3_column_int64(ev, 2);
    int64_t ts = sqlite3_column_int64(ev, 3);
    if (advance(s, pid, tid, ts) < 0)
        return -1;
    if (s->depth == 0)
        return 0;
    count_event(s, sqlite3_column_int64(ev, 4), sqlite3_column_int64(ev, 5));
    sqlite3_bind_int64(s->set_op, 1, id);
    sqlite3_bind_int64(s->set_op, 2, s->stack[s->depth - 1].id);
    return vr_db_step_done(s->db, s->set_op, s->err);
}

int vr_analyze_attribute(vr_db *db, vr_error *err)
{
    static const char f[] = "schemas/analyze.sql";
    sweep s;
    memset(&s, 0, sizeof s);
    s.db = db;
    s.err = err;
    s.pid = s.tid = INT64_MIN;
    s.ops = vr_db_stmt(db, f, "select_cpu_ops_by_thread", err);
    sqlite3_stmt *ev = vr_db_stmt(db, f, "select_mem_events_by_thread", err);
    s.set_op = vr_db_stmt(db, f, "set_event_op", err);
    s.ins = vr_db_stmt(db, f, "insert_op_memory", err);
    if (!s.ops || !ev || !s.set_op || !s.ins)
        return -1;
    int rc = fetch_op(&s);
    int step;
    while (rc == 0 && (step = sqlite3_step(ev)) == SQLITE_ROW)
        rc = on_event(&s, ev);
    if (rc == 0 && step != SQLITE_DONE)
        rc = vr_db_fail(db, err, "reading memory events");
    if (rc == 0)
        rc = pop_until(&s, INT64_MAX);
    sqlite3_reset(ev);
    sqlite3_reset(s.ops);
    free(s.stack);
    return rc;
}
