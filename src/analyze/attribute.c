/* Op attribution: a merge of two streams sorted by (source, pid, tid, ts) -
 * the cpu_ops and the memory events - with a stack of the ops open on the
 * current thread. A thread is (source, pid, tid): two files (two ranks in
 * containers, say) often share pid and tid, and an op of one file never
 * encloses an event of another. The innermost open op owns the event
 * ("self"); every op on the stack includes it ("incl"), as the TensorBoard
 * profiler's memory view counted. Figures are summed per (op name, device)
 * in memory and written when the sweep leaves a source: one ordered read of
 * each table, one UPDATE per event whose op changed. */
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/sat.h"
#include "analyze/analyze.h"
#include "analyze/thread_key.h"

static const char sql[] = "schemas/analyze.sql";

typedef struct {
    int64_t name_id, device_id;
    int64_t self_count, self_alloc, self_free;
    int64_t incl_count, incl_alloc, incl_free;
    int64_t next; /* next tally of the same name, or -1 */
} name_tally;

typedef vr_thread_key thread_key;

typedef struct {
    int64_t id, name_id, end_ns;
} frame;

typedef struct {
    thread_key thread;
    int64_t id, ts, dur, name_id;
} op_row;

typedef struct {
    vr_db *db;
    vr_error *err;
    sqlite3_stmt *ops, *set_op;
    op_row next_op;
    int have_op;
    thread_key thread; /* thread of the stack */
    frame *stack;
    size_t depth, cap;
    int64_t tally_source; /* the source the tallies are of, or -1 */
    name_tally *tallies;  /* names x devices that allocate */
    size_t ntallies, tcap;
    int64_t *first_tally; /* by name id: index into tallies, or -1 */
    size_t fcap;
    int64_t calls_source; /* the source the calls are of, or -1 */
    int64_t *calls;       /* by name id: calls in calls_source */
    size_t ccap;
} sweep;

/*-*** calls, per source ***/

static int write_calls(sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "insert_op_calls", s->err);
    if (!st)
        return -1;
    for (size_t i = 0; i < s->ccap; i++) {
        if (!s->calls[i])
            continue;
        if (vr_db_bind_int(st, ":name", (int64_t)i, s->err) < 0 ||
            vr_db_bind_int(st, ":source", s->calls_source, s->err) < 0 ||
            vr_db_bind_int(st, ":calls", s->calls[i], s->err) < 0)
            return -1;
        s->calls[i] = 0;
        if (vr_db_step_done(s->db, st, s->err) < 0)
            return -1;
    }
    return 0;
}

/* Ops come in source order: a new source ends the calls of the last. */
static int count_call(sweep *s, int64_t source, int64_t name_id)
{
    if (source != s->calls_source) {
        if (s->calls_source >= 0 && write_calls(s) < 0)
            return -1;
        s->calls_source = source;
    }
    /* Names are interned in first-seen order, so ids are small and dense:
     * index by id. */
    size_t old = s->ccap;
    vr_xgrow(&s->calls, &s->ccap, (size_t)name_id + 1, sizeof *s->calls, 1024);
    memset(s->calls + old, 0, (s->ccap - old) * sizeof *s->calls);
    s->calls[name_id]++;
    return 0;
}

static int fetch_op(sweep *s)
{
    int rc = sqlite3_step(s->ops);
    s->have_op = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading ops");
    if (!s->have_op)
        return 0;
    op_row *o = &s->next_op;
    o->id = sqlite3_column_int64(s->ops, 0);
    o->thread = (thread_key){sqlite3_column_int64(s->ops, 1), sqlite3_column_int64(s->ops, 2),
                             sqlite3_column_int64(s->ops, 3)};
    o->ts = sqlite3_column_int64(s->ops, 4);
    o->dur = sqlite3_column_int64(s->ops, 5);
    o->name_id = sqlite3_column_int64(s->ops, 6);
    return o->name_id > 0 ? count_call(s, o->thread.source, o->name_id) : 0;
}

/*-*** the stack ***/

static void enter_thread(sweep *s, const thread_key *t)
{
    if (vr_thread_cmp(t, &s->thread) != 0) {
        s->depth = 0;
        s->thread = *t;
    }
}

static void push_op(sweep *s, const op_row *op)
{
    enter_thread(s, &op->thread);
    /* Pop what does not contain the new op: an op that starts where its
     * sibling ends is the sibling's successor, not its child. */
    int64_t end = vr_sat_add(op->ts, op->dur);
    while (s->depth > 0 && s->stack[s->depth - 1].end_ns < end)
        s->depth--;
    vr_xgrow(&s->stack, &s->cap, s->depth + 1, sizeof *s->stack, 64);
    s->stack[s->depth++] = (frame){op->id, op->name_id, end};
}

/* Brings the stack to the state at an event of thread t at time ts. */
static int advance(sweep *s, const thread_key *t, int64_t ts)
{
    while (s->have_op) {
        int c = vr_thread_cmp(&s->next_op.thread, t);
        if (c > 0 || (c == 0 && s->next_op.ts > ts))
            break;
        push_op(s, &s->next_op);
        if (fetch_op(s) < 0)
            return -1;
    }
    enter_thread(s, t);
    while (s->depth > 0 && s->stack[s->depth - 1].end_ns < ts)
        s->depth--;
    return 0;
}

/*-*** figures per name and device, per source ***/

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

static int write_tallies(sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "insert_op_memory", s->err);
    if (!st)
        return -1;
    for (size_t i = 0; i < s->ntallies; i++) {
        const name_tally *t = &s->tallies[i];
        if (vr_db_bind_int(st, ":name", t->name_id, s->err) < 0 ||
            vr_db_bind_int(st, ":device", t->device_id, s->err) < 0 ||
            vr_db_bind_int(st, ":source", s->tally_source, s->err) < 0 ||
            vr_db_bind_int(st, ":self_count", t->self_count, s->err) < 0 ||
            vr_db_bind_int(st, ":self_alloc", t->self_alloc, s->err) < 0 ||
            vr_db_bind_int(st, ":self_free", t->self_free, s->err) < 0 ||
            vr_db_bind_int(st, ":incl_count", t->incl_count, s->err) < 0 ||
            vr_db_bind_int(st, ":incl_alloc", t->incl_alloc, s->err) < 0 ||
            vr_db_bind_int(st, ":incl_free", t->incl_free, s->err) < 0)
            return -1;
        if (vr_db_step_done(s->db, st, s->err) < 0)
            return -1;
    }
    s->ntallies = 0;
    for (size_t i = 0; i < s->fcap; i++)
        s->first_tally[i] = -1;
    return 0;
}

/*-*** events ***/

/* Writes the event's op only where it changed: a second analysis (after
 * another import) rewrites nothing for the files it saw before. */
static int set_op(sweep *s, sqlite3_stmt *ev, int64_t id)
{
    int had = sqlite3_column_type(ev, 7) != SQLITE_NULL;
    int64_t was = sqlite3_column_int64(ev, 7);
    int has = s->depth > 0;
    int64_t op = has ? s->stack[s->depth - 1].id : 0;
    if (had == has && was == op)
        return 0;
    if (vr_db_bind_int(s->set_op, ":event", id, s->err) < 0 ||
        vr_db_bind_opt_int(s->set_op, ":op", has, op, s->err) < 0)
        return -1;
    return vr_db_step_done(s->db, s->set_op, s->err);
}

static int on_event(sweep *s, sqlite3_stmt *ev)
{
    int64_t id = sqlite3_column_int64(ev, 0);
    thread_key t = {sqlite3_column_int64(ev, 1), sqlite3_column_int64(ev, 2),
                    sqlite3_column_int64(ev, 3)};
    if (t.source != s->tally_source) { /* events come in source order */
        if (s->tally_source >= 0 && write_tallies(s) < 0)
            return -1;
        s->tally_source = t.source;
    }
    if (advance(s, &t, sqlite3_column_int64(ev, 4)) < 0)
        return -1;
    if (s->depth > 0)
        count_event(s, sqlite3_column_int64(ev, 5), sqlite3_column_int64(ev, 6));
    return set_op(s, ev, id);
}

/* The sweep proper; the tallies and calls of the last source are written
 * by the caller. */
static int run_sweep(sweep *s)
{
    sqlite3_stmt *ev = vr_db_stmt(s->db, sql, "select_mem_events_by_thread", s->err);
    if (!ev)
        return -1;
    int rc = fetch_op(s), step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(ev)) == SQLITE_ROW)
        rc = on_event(s, ev);
    if (rc == 0 && step != SQLITE_DONE)
        rc = vr_db_fail(s->db, s->err, "reading memory events");
    while (rc == 0 && s->have_op) /* the calls of ops after the last event */
        rc = fetch_op(s);
    sqlite3_reset(ev);
    sqlite3_reset(s->ops);
    return rc;
}

int vr_analyze_attribute(vr_db *db, vr_error *err)
{
    sweep s;
    memset(&s, 0, sizeof s);
    s.db = db;
    s.err = err;
    s.thread = (thread_key){INT64_MIN, INT64_MIN, INT64_MIN};
    s.tally_source = s.calls_source = -1;
    s.ops = vr_db_stmt(db, sql, "select_cpu_ops_by_thread", err);
    s.set_op = vr_db_stmt(db, sql, "set_event_op", err);
    int rc = !s.ops || !s.set_op ? -1 : run_sweep(&s);
    if (rc == 0 && s.tally_source >= 0)
        rc = write_tallies(&s);
    if (rc == 0 && s.calls_source >= 0)
        rc = write_calls(&s);
    /* Ops without a thread cannot enclose events but are still calls. */
    if (rc == 0)
        rc = vr_db_exec_named(db, sql, "count_unthreaded_cpu_ops", err);
    free(s.stack);
    free(s.tallies);
    free(s.first_tally);
    free(s.calls);
    return rc;
}
