/* The phases pass and the phase_peaks pass.
 *
 * phases: each trace's run cut into phases, from its operators, the way
 * an expert reads a trace. Each op's kind (Optimizer.step#...,
 * Optimizer.zero_grad#..., backward: *Backward*, autograd::engine ops and
 * every op of autograd's own thread; forward: the step's main thread;
 * loading: copies at a step's start) comes from its name's class
 * (analyze.sql's select_phase_ops) and its thread's role
 * (select_phase_roles, looked up here); this sweep walks them in time
 * order and joins each run of one kind into a phase. A
 * step's forward and backward phases reach to the next phase (or the
 * step's end), so an allocation between two ops still has its phase;
 * what a step holds before its forward begins (data loading) is in no
 * phase ('other'), as is loading between micro-batches (a copy while no
 * forward phase is open). An allocator snapshot's phases come from its
 * entries' stacks and its annotations instead (snapshot_phases.h). Owns
 * table phase.
 *
 * phase_peaks: the allocated peak of each phase of each step, per device,
 * from the events of its chosen sources (device_axis) that have phases.
 * Owns phase_peak. */
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/sat.h"
#include "analyze/analyze.h"
#include "analyze/phase_map.h"
#include "analyze/rules.h"
#include "analyze/snapshot_phases.h"

static const char sql[] = "schemas/analyze.sql";

/* The ops' kinds beyond the phases. */
enum { KIND_LOADING = VR_PHASE_COUNT, KIND_SKIP };

typedef struct {
    int64_t source, tid, ts, end;
    int kind, has_tid;
} op_row;

/* A thread's role in its source (select_phase_roles); pid and tid compare
 * as SQL's IS does (a NULL matches a NULL). */
enum { ROLE_NONE, ROLE_MAIN, ROLE_AUTOGRAD };

typedef struct {
    int64_t source, pid, tid;
    int has_pid, has_tid, role;
} thread_role;

/* The roles, by source (a source has a few); `at`: the first of the
 * source the ops have come to (they come in source order). */
typedef struct {
    thread_role *v;
    size_t n, cap, at;
} role_list;

typedef struct {
    int active, kind, has_tid;
    long step_idx;
    int64_t source, tid, start, op_end;
} open_phase;

typedef struct {
    vr_db *db;
    vr_error *err;
    vr_phase_map map;
    sqlite3_stmt *ins;
    open_phase cur;
    int64_t loading_until; /* the end of the data loading op open now */
} phase_sweep;

/* The op's thread's role; ROLE_NONE for a thread without one. */
static int role_of(role_list *r, int64_t source, int has_pid, int64_t pid, int has_tid,
                   int64_t tid)
{
    while (r->at < r->n && r->v[r->at].source < source)
        r->at++;
    for (size_t i = r->at; i < r->n && r->v[i].source == source; i++) {
        const thread_role *t = &r->v[i];
        if (t->has_pid == has_pid && (!has_pid || t->pid == pid) && t->has_tid == has_tid &&
            (!has_tid || t->tid == tid))
            return t->role;
    }
    return ROLE_NONE;
}

static int class_is(const char *class, const char *name)
{
    return class && strcmp(class, name) == 0;
}

/* An op's kind from its name's class and its thread's role; -1: none (a
 * step, or an op of a thread without a role that says nothing). */
static int op_kind(const char *class, int role)
{
    if (class_is(class, "step"))
        return -1;
    if (class_is(class, "optimizer"))
        return VR_PHASE_OPTIMIZER;
    if (class_is(class, "zero_grad"))
        return VR_PHASE_ZERO_GRAD;
    if (class_is(class, "engine") || class_is(class, "backward") || role == ROLE_AUTOGRAD)
        return VR_PHASE_BACKWARD;
    if (role != ROLE_MAIN)
        return -1;
    return class_is(class, "loading") ? KIND_LOADING : VR_PHASE_FORWARD;
}

/* A step's forward and backward reach to what follows; the optimizer's
 * and zero_grad's phases are their annotations. Never past `next`. */
static int close_phase(phase_sweep *s, int64_t next)
{
    open_phase *c = &s->cur;
    if (!c->active)
        return 0;
    c->active = 0;
    int tiled = c->step_idx >= 0 && (c->kind == VR_PHASE_FORWARD || c->kind == VR_PHASE_BACKWARD);
    int64_t end = tiled ? next : c->op_end < next ? c->op_end : next;
    if (end < c->start)
        end = c->start;
    sqlite3_stmt *st = s->ins;
    if (vr_db_bind_int(st, ":source", c->source, s->err) < 0 ||
        vr_db_bind_opt_int(st, ":step", c->step_idx >= 0,
                           c->step_idx >= 0 ? s->map.steps[c->step_idx].number : 0, s->err) < 0 ||
        vr_db_bind_text(st, ":kind", vr_phase_name(c->kind), strlen(vr_phase_name(c->kind)),
                        s->err) < 0 ||
        vr_db_bind_opt_int(st, ":tid", c->has_tid, c->tid, s->err) < 0 ||
        vr_db_bind_int(st, ":start", c->start, s->err) < 0 ||
        vr_db_bind_int(st, ":end", end, s->err) < 0)
        return -1;
    return vr_db_step_done(s->db, st, s->err);
}

/* Where the open phase must end when nothing of its step follows. */
static int64_t step_end_of(const phase_sweep *s)
{
    const open_phase *c = &s->cur;
    return c->step_idx >= 0 ? s->map.steps[c->step_idx].end : c->op_end;
}

static void open_new(phase_sweep *s, const op_row *o, int kind, long step_idx)
{
    s->cur = (open_phase){1, kind, o->has_tid, step_idx, o->source, o->tid, o->ts, o->end};
}

/* A copy or data loading op is forward work while a forward phase is open
 * (or inside another phase's op); otherwise it is loading a (micro-)batch,
 * which is in no phase, and so is the work inside it (the collate). */
static int effective_kind(const open_phase *c, const op_row *o, int nested)
{
    if (o->kind != KIND_LOADING)
        return o->kind;
    return nested || (c->active && c->kind == VR_PHASE_FORWARD) ? VR_PHASE_FORWARD : KIND_SKIP;
}

static int on_op(phase_sweep *s, const op_row *o)
{
    open_phase *c = &s->cur;
    if (c->active && c->source != o->source && close_phase(s, step_end_of(s)) < 0)
        return -1;
    if (c->source != o->source)
        s->loading_until = INT64_MIN;
    c->source = o->source;
    long step_idx = vr_phase_map_step(&s->map, o->source, o->ts);
    if (c->active && c->step_idx != step_idx && close_phase(s, step_end_of(s)) < 0)
        return -1;
    int nested = c->active && o->ts < c->op_end;
    int kind = effective_kind(c, o, nested);
    if (kind == VR_PHASE_FORWARD && (step_idx < 0 || o->ts < s->loading_until))
        return 0; /* forward work is the steps'; inside data loading, it is loading */
    if (kind == KIND_SKIP && o->kind == KIND_LOADING && o->end > s->loading_until)
        s->loading_until = o->end;
    if (c->active && (kind == c->kind || (kind == VR_PHASE_FORWARD && nested))) {
        if (o->end > c->op_end)
            c->op_end = o->end; /* the same phase goes on, or an op nested in it */
        return 0;
    }
    if (close_phase(s, o->ts) < 0)
        return -1;
    if (kind != KIND_SKIP)
        open_new(s, o, kind, step_idx);
    return 0;
}

/* 0 for an op without a kind, which says nothing. */
static int read_op(sqlite3_stmt *st, role_list *roles, op_row *o)
{
    o->source = sqlite3_column_int64(st, 0);
    int has_pid = sqlite3_column_type(st, 1) != SQLITE_NULL;
    o->has_tid = sqlite3_column_type(st, 2) != SQLITE_NULL;
    o->tid = sqlite3_column_int64(st, 2);
    int role =
        role_of(roles, o->source, has_pid, sqlite3_column_int64(st, 1), o->has_tid, o->tid);
    o->kind = op_kind((const char *)sqlite3_column_text(st, 5), role);
    if (o->kind < 0)
        return 0;
    o->ts = sqlite3_column_int64(st, 3);
    o->end = vr_sat_add(o->ts, sqlite3_column_int64(st, 4));
    return 1;
}

static int role_code(const char *role)
{
    return role && strcmp(role, "main") == 0       ? ROLE_MAIN
           : role && strcmp(role, "autograd") == 0 ? ROLE_AUTOGRAD
                                                   : ROLE_NONE;
}

static int load_roles(vr_db *db, role_list *r, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "select_phase_roles", err);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_xgrow(&r->v, &r->cap, r->n + 1, sizeof *r->v, 16);
        r->v[r->n++] = (thread_role){sqlite3_column_int64(st, 0),
                                     sqlite3_column_int64(st, 1),
                                     sqlite3_column_int64(st, 2),
                                     sqlite3_column_type(st, 1) != SQLITE_NULL,
                                     sqlite3_column_type(st, 2) != SQLITE_NULL,
                                     role_code((const char *)sqlite3_column_text(st, 3))};
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading the threads' roles for phases");
}

/* An op of an allocator snapshot (its annotations): the optimizer's are
 * kept for its phases (snapshot_phases.h), the rest say nothing. */
static void on_snapshot_op(vr_snap_phase_input *snaps, const op_row *o)
{
    if (o->kind == VR_PHASE_OPTIMIZER || o->kind == VR_PHASE_ZERO_GRAD)
        vr_snap_phases_stage(snaps, o->source, o->kind, o->ts, o->end);
}

/* The ops in time order through the sweep (a snapshot's to its own). */
static int sweep_ops(phase_sweep *s, role_list *roles, vr_snap_phase_input *snaps)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "select_phase_ops", s->err);
    if (!st)
        return -1;
    int rc = 0, step = SQLITE_DONE;
    op_row o;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if (!read_op(st, roles, &o))
            continue;
        if (snaps->nsources && vr_snap_phases_is_snapshot(snaps, o.source))
            on_snapshot_op(snaps, &o);
        else
            rc = on_op(s, &o);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = vr_db_fail(s->db, s->err, "reading operators for phases");
    sqlite3_reset(st);
    if (rc == 0 && s->cur.active)
        rc = close_phase(s, step_end_of(s));
    return rc;
}

int vr_analyze_phases(vr_db *db, vr_error *err)
{
    phase_sweep s;
    vr_snap_phase_input snaps;
    role_list roles = {0};
    memset(&s, 0, sizeof s);
    memset(&snaps, 0, sizeof snaps);
    s.db = db;
    s.err = err;
    s.loading_until = INT64_MIN;
    s.ins = vr_db_stmt(db, sql, "insert_phase", err);
    int rc = s.ins ? vr_db_exec_named(db, sql, "begin_phase_names", err) : -1;
    if (rc == 0)
        rc = load_roles(db, &roles, err);
    if (rc == 0)
        rc = vr_phase_map_load_steps(db, &s.map, err);
    if (rc == 0)
        rc = vr_snap_phases_sources(db, &snaps, err);
    if (rc == 0)
        rc = sweep_ops(&s, &roles, &snaps);
    if (rc == 0)
        rc = vr_db_exec_named(db, sql, "end_phase_names", err);
    if (rc == 0)
        rc = vr_snap_phases_write(db, &snaps, err);
    vr_snap_phases_free(&snaps);
    vr_phase_map_free(&s.map);
    free(roles.v);
    return rc;
}

/*-*** phase peaks ***/

/* The peak of one (step, phase) of a chosen (device, source).
 * zero_grad counts as the optimizer's; before and other as 'other'. */
enum { PEAK_FORWARD, PEAK_BACKWARD, PEAK_OPTIMIZER, PEAK_OTHER, PEAK_KINDS };
static const char *const peak_names[PEAK_KINDS] = {"forward", "backward", "optimizer", "other"};
static const int peak_of_phase[VR_PHASE_COUNT] = {
    [VR_PHASE_BEFORE] = PEAK_OTHER,        [VR_PHASE_FORWARD] = PEAK_FORWARD,
    [VR_PHASE_BACKWARD] = PEAK_BACKWARD,   [VR_PHASE_OPTIMIZER] = PEAK_OPTIMIZER,
    [VR_PHASE_ZERO_GRAD] = PEAK_OPTIMIZER, [VR_PHASE_OTHER] = PEAK_OTHER,
};

typedef struct {
    int64_t bytes, ts;
    int seen;
} peak_slot;

/* A chosen (device, source) with phases: its slots, a row of PEAK_KINDS
 * per step of its source (from map.steps[first_step]) and one last row
 * for no step. */
typedef struct {
    int64_t device, source;
    size_t first_step, nsteps, slot;
} peak_group;

/* A group's key, for the look-up of an event's group. */
typedef struct {
    int64_t device, source;
    size_t group;
} group_key;

typedef struct {
    vr_db *db;
    vr_error *err;
    vr_phase_map map;
    peak_group *group; /* in (device, position) order */
    size_t ngroups;
    group_key *keys; /* by (device, source) */
    size_t last;     /* the group of the event before */
    int has_miss;    /* the last pair looked up without a group */
    int64_t miss_device, miss_source;
    peak_slot *slot;
} peak_sweep;

/* A source's steps: map.steps are by (source, ts). */
static void steps_of(const vr_phase_map *m, int64_t source, size_t *first, size_t *n)
{
    size_t lo = 0, hi = m->nsteps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->steps[mid].source < source)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < m->nsteps && m->steps[end].source == source)
        end++;
    *first = lo;
    *n = end - lo;
}

static int key_cmp(int64_t device, int64_t source, const group_key *k)
{
    if (device != k->device)
        return device < k->device ? -1 : 1;
    return (source > k->source) - (source < k->source);
}

static int by_key(const void *a, const void *b)
{
    const group_key *x = a;
    return key_cmp(x->device, x->source, b);
}

static int load_groups(peak_sweep *p)
{
    sqlite3_stmt *st = vr_db_stmt(p->db, sql, "select_phase_peak_groups", p->err);
    if (!st)
        return -1;
    size_t cap = 0, nslots = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_xgrow(&p->group, &cap, p->ngroups + 1, sizeof *p->group, 8);
        peak_group *g = &p->group[p->ngroups++];
        g->device = sqlite3_column_int64(st, 0);
        g->source = sqlite3_column_int64(st, 1);
        steps_of(&p->map, g->source, &g->first_step, &g->nsteps);
        g->slot = nslots;
        nslots += (g->nsteps + 1) * PEAK_KINDS;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return vr_db_fail(p->db, p->err, "reading the sources with phases");
    p->slot = vr_xcalloc(nslots ? nslots : 1, sizeof *p->slot);
    p->keys = vr_xcalloc(p->ngroups ? p->ngroups : 1, sizeof *p->keys);
    for (size_t i = 0; i < p->ngroups; i++)
        p->keys[i] = (group_key){p->group[i].device, p->group[i].source, i};
    qsort(p->keys, p->ngroups, sizeof *p->keys, by_key);
    return 0;
}

/* The group of (device, source), or NULL: not chosen, or no phases. */
static peak_group *group_of(peak_sweep *p, int64_t device, int64_t source)
{
    const peak_group *g = p->last < p->ngroups ? &p->group[p->last] : NULL;
    if (g && g->device == device && g->source == source)
        return &p->group[p->last];
    if (p->has_miss && p->miss_device == device && p->miss_source == source)
        return NULL; /* the events of a pair come together */
    size_t lo = 0, hi = p->ngroups;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = key_cmp(device, source, &p->keys[mid]);
        if (c == 0) {
            p->last = p->keys[mid].group;
            return &p->group[p->last];
        }
        if (c > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    p->has_miss = 1;
    p->miss_device = device;
    p->miss_source = source;
    return NULL;
}

/* Events come in table order, not time order: the first in time of equal
 * peaks is kept, as a read in time order would keep it. */
static void on_event(peak_sweep *p, int64_t device, int64_t source, int64_t ts, int64_t total)
{
    peak_group *g = group_of(p, device, source);
    if (!g)
        return;
    vr_phase_at at;
    vr_phase_map_at(&p->map, source, ts, &at);
    size_t row = at.step_idx >= 0 ? (size_t)at.step_idx - g->first_step : g->nsteps;
    peak_slot *s = &p->slot[g->slot + row * PEAK_KINDS + (size_t)peak_of_phase[at.phase]];
    if (!s->seen || total > s->bytes || (total == s->bytes && ts < s->ts))
        *s = (peak_slot){total, ts, 1};
}

static int write_group(peak_sweep *p, const peak_group *g, sqlite3_stmt *st)
{
    for (size_t i = 0; i < (g->nsteps + 1) * PEAK_KINDS; i++) {
        const peak_slot *s = &p->slot[g->slot + i];
        if (!s->seen)
            continue;
        size_t step = i / PEAK_KINDS;
        const char *name = peak_names[i % PEAK_KINDS];
        if (vr_db_bind_int(st, ":device", g->device, p->err) < 0 ||
            vr_db_bind_int(st, ":source", g->source, p->err) < 0 ||
            vr_db_bind_opt_int(st, ":step", step < g->nsteps,
                               step < g->nsteps ? p->map.steps[g->first_step + step].number : 0,
                               p->err) < 0 ||
            vr_db_bind_text(st, ":phase", name, strlen(name), p->err) < 0 ||
            vr_db_bind_int(st, ":peak", s->bytes, p->err) < 0 ||
            vr_db_bind_int(st, ":peak_ts", s->ts, p->err) < 0 ||
            vr_db_step_done(p->db, st, p->err) < 0)
            return -1;
    }
    return 0;
}

/* vr_phase_peak_event(device, source, ts, total): hands an event to the
 * sweep as SQLite reads its row (no row is handed back); returns 0. */
static void sql_peak_event(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    on_event(sqlite3_user_data(ctx), sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[1]),
             sqlite3_value_int64(argv[2]), sqlite3_value_int64(argv[3]));
    sqlite3_result_int(ctx, 0);
}

static const vr_db_function peak_functions[] = {
    {"vr_phase_peak_event", 4, sql_peak_event, NULL, NULL},
};

static int run_read(peak_sweep *p)
{
    sqlite3_stmt *st = vr_db_stmt(p->db, sql, "select_chosen_totals", p->err);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        ;
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0
                             : vr_db_fail(p->db, p->err, "reading memory events for phase peaks");
}

/* One scan of the events in table order (a read in time order seeks the
 * table a row: three times the cost); the function is this sweep's for
 * the scan alone. */
static int read_events(peak_sweep *p)
{
    size_t n = sizeof peak_functions / sizeof *peak_functions;
    vr_error unused = VR_ERROR_INIT; /* removing fails only while a statement runs */
    int rc = vr_db_functions(p->db, peak_functions, n, p, p->err);
    if (rc == 0)
        rc = run_read(p);
    vr_db_functions(p->db, peak_functions, n, NULL, &unused);
    return rc;
}

int vr_analyze_phase_peaks(vr_db *db, vr_error *err)
{
    peak_sweep p;
    memset(&p, 0, sizeof p);
    p.db = db;
    p.err = err;
    int rc = vr_phase_map_load_steps(db, &p.map, err);
    if (rc == 0)
        rc = vr_phase_map_load_phases(db, &p.map, err);
    if (rc == 0)
        rc = load_groups(&p);
    if (rc == 0 && p.ngroups)
        rc = read_events(&p);
    sqlite3_stmt *st =
        rc == 0 && p.ngroups ? vr_db_stmt(db, sql, "insert_phase_peak", err) : NULL;
    if (rc == 0 && p.ngroups && !st)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < p.ngroups; i++)
        rc = write_group(&p, &p.group[i], st);
    free(p.group);
    free(p.keys);
    free(p.slot);
    vr_phase_map_free(&p.map);
    return rc;
}
