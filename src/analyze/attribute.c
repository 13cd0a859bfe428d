/* Op attribution: a merge of two streams sorted by (pid, tid, ts) - the
 * cpu_ops and the memory events - with a stack of the ops open on the
 * current thread. The innermost open op owns the event ("self"); every op
 * on the stack includes it ("incl"), as the TensorBoard profiler's memory
 * view counted. Figures are summed per (op name, device) in memory and
 * written once at the end: one ordered read of each table, one UPDATE per
 * attributed event. */
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/sat.h"
#include "analyze.h"

typedef struct {
    int64_t name_id, device_id;
    int64_t self_count, self_alloc, self_free;
    int64_t incl_count, incl_alloc, incl_free;
    int64_t next;              /* next tally of the same name, or -1 */
} name_tally;

typedef struct {
    int64_t name_id, calls;
} name_calls;

typedef struct {
    int64_t id, name_id, end_ns;
} frame;

typedef struct {
    int64_t id, pid, tid, ts, dur, name_id;
} op_row;

typedef struct {
    vr_db *db;
    vr_error *err;
    sqlite3_stmt *ops, *set_op;
    op_row next_op;
    int have_op;
    int64_t pid, tid;          /* thread of the stack */
    frame *stack;
    size_t depth, cap;
    name_tally *tallies;       /* names x devices that allocate */
    size_t ntallies, tcap;
    int64_t *first_tally;      /* by name id: index into tallies, or -1 */
    size_t fcap;
    name_calls *calls;         /* one per cpu_op name */
    size_t ncalls, ccap;
} sweep;

static void count_call(sweep *s, int64_t name_id, int64_t n)
{
    /* Names are interned in first-seen order, so ids are small and dense:
     * index by id. */
    size_t old = s->ccap;
    vr_xgrow(&s->calls, &s->ccap, (size_t)name_id + 1, sizeof *s->calls, 1024);
    memset(s->calls + old, 0, (s->ccap - old) * sizeof *s->calls);
    s->calls[name_id].name_id = name_id;
    s->calls[name_id].calls += n;
}

static int fetch_op(sweep *s)
{
    int rc = sqlite3_step(s->ops);
    s->have_op = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading ops");
    if (s->have_op) {
        op_row *o = &s->next_op;
        o->id = sqlite3_column_int64(s->ops, 0);
        o->pid = sqlite3_column_int64(s->ops, 1);
        o->tid = sqlite3_column_int64(s->ops, 2);
        o->ts = sqlite3_column_int64(s->ops, 3);
        o->dur = sqlite3_column_int64(s->ops, 4);
        o->name_id = sqlite3_column_int64(s->ops, 5);
        if (o->name_id > 0)
            count_call(s, o->name_id, 1);
    }
    return 0;
}

static void push_op(sweep *s, const op_row *op)
{
    if (op->pid != s->pid || op->tid != s->tid) {
        s->depth = 0;
        s->pid = op->pid;
        s->tid = op->tid;
    }
    /* Pop what does not contain the new op: an op that starts where its
     * sibling ends is the sibling's successor, not its child. */
    int64_t end = vr_sat_add(op->ts, op->dur);
    while (s->depth > 0 && s->stack[s->depth - 1].end_ns < end)
        s->depth--;
    vr_xgrow(&s->stack, &s->cap, s->depth + 1, sizeof *s->stack, 64);
    s->stack[s->depth++] = (frame){op->id, op->name_id, end};
}

static name_tally *tally_for(sweep *s, int64_t name_id, int64_t device_id)
{
    size_t old = s->fcap;
    vr_xgrow(&s->first_tally, &s->fcap, (size_t)name_id + 1, sizeof *s->first_tally, 1024);
    for (size_t i = old; i < s->fcap; i++)
        s->first_tally[i] = -1;
    for (int64_t i = s->first_tally[name_id]; i >= 0; i = s->tallies[i].next)
        if (s->tallies[i].device_id == device_id)
            return &s->tallies[i];
    vr_xgrow(&s->tallies, &s->tcap, s->ntallies + 1, sizeof *s->tallies, 256);
    name_tally *t = &s->tallies[s->ntallies++];
    memset(t, 0, sizeof *t);
    t->name_id = name_id;
    t->device_id = device_id;
    t->next = s->first_tally[name_id];
    s->first_tally[name_id] = (int64_t)(s->ntallies - 1);
    return t;
}

static void count_event(sweep *s, int64_t device_id, int64_t bytes)
{
    for (size_t i = 0; i < s->depth; i++) {
        if (s->stack[i].name_id <= 0)
            continue;
        name_tally *t = tally_for(s, s->stack[i].name_id, device_id);
        int self = i == s->depth - 1;
        if (bytes > 0) {
            t->incl_count++;
            t->incl_alloc = vr_sat_add(t->incl_alloc, bytes);
            t->self_count += self;
            t->self_alloc = vr_sat_add(t->self_alloc, self ? bytes : 0);
        } else {
            t->incl_free = vr_sat_sub(t->incl_free, bytes);
            t->self_free = vr_sat_sub(t->self_free, self ? bytes : 0);
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
        push_op(s, &s->next_op);
        if (fetch_op(s) < 0)
            return -1;
    }
    if (pid != s->pid || tid != s->tid) {
        s->depth = 0;
        s->pid = pid;
        s->tid = tid;
    }
    while (s->depth > 0 && s->stack[s->depth - 1].end_ns < ts)
        s->depth--;
    return 0;
}

static int on_event(sweep *s, sqlite3_stmt *ev)
{
    int64_t id = sqlite3_column_int64(ev, 0);
    if (advance(s, sqlite3_column_int64(ev, 1), sqlite3_column_int64(ev, 2),
                sqlite3_column_int64(ev, 3)) < 0)
        return -1;
    if (s->depth == 0)
        return 0;
    count_event(s, sqlite3_column_int64(ev, 4), sqlite3_column_int64(ev, 5));
    sqlite3_bind_int64(s->set_op, 1, id);
    sqlite3_bind_int64(s->set_op, 2, s->stack[s->depth - 1].id);
    return vr_db_step_done(s->db, s->set_op, s->err);
}

static int write_tallies(sweep *s)
{
    static const char f[] = "schemas/analyze.sql";
    sqlite3_stmt *ins = vr_db_stmt(s->db, f, "insert_op_memory", s->err);
    sqlite3_stmt *calls = vr_db_stmt(s->db, f, "insert_op_calls", s->err);
    if (!ins || !calls)
        return -1;
    for (size_t i = 0; i < s->ntallies; i++) {
        const name_tally *t = &s->tallies[i];
        const int64_t v[8] = {t->name_id,    t->device_id,  t->self_count, t->self_alloc,
                              t->self_free,  t->incl_count, t->incl_alloc, t->incl_free};
        for (int c = 0; c < 8; c++)
            sqlite3_bind_int64(ins, c + 1, v[c]);
        if (vr_db_step_done(s->db, ins, s->err) < 0)
            return -1;
    }
    for (size_t i = 0; i < s->ccap; i++) {
        if (!s->calls[i].calls)
            continue;
        sqlite3_bind_int64(calls, 1, s->calls[i].name_id);
        sqlite3_bind_int64(calls, 2, s->calls[i].calls);
        if (vr_db_step_done(s->db, calls, s->err) < 0)
            return -1;
    }
    return 0;
}

/* Ops without a thread cannot enclose events but are still calls. */
static int count_unthreaded(sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, "schemas/analyze.sql", "count_unthreaded_cpu_ops", s->err);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        count_call(s, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(s->db, s->err, "counting ops");
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
    if (!s.ops || !ev || !s.set_op)
        return -1;
    int rc = fetch_op(&s), step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(ev)) == SQLITE_ROW)
        rc = on_event(&s, ev);
    if (rc == 0 && step != SQLITE_DONE)
        rc = vr_db_fail(db, err, "reading memory events");
    while (rc == 0 && s.have_op) /* the calls of ops after the last event */
        rc = fetch_op(&s);
    sqlite3_reset(ev);
    sqlite3_reset(s.ops);
    if (rc == 0)
        rc = count_unthreaded(&s) < 0 || write_tallies(&s) < 0 ? -1 : 0;
    free(s.stack);
    free(s.tallies);
    free(s.first_tally);
    free(s.calls);
    return rc;
}
