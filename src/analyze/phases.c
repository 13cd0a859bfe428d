/* The phases pass and the phase_peaks pass.
 *
 * phases: each source's run cut into phases, from its operators, the way
 * an expert reads a trace. analyze.sql's select_phase_ops names each op's
 * kind (Optimizer.step#..., Optimizer.zero_grad#..., backward: *Backward*,
 * autograd::engine ops and every op of autograd's own thread; forward:
 * the step's main thread; loading: copies at a step's start); this sweep
 * walks them in time order and joins each run of one kind into a phase. A
 * step's forward and backward phases reach to the next phase (or the
 * step's end), so an allocation between two ops still has its phase;
 * what a step holds before its forward begins (data loading) is in no
 * phase ('other'), as is loading between micro-batches (a copy while no
 * forward phase is open). Owns table phase.
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

static const char sql[] = "schemas/analyze.sql";

/* select_phase_ops' kinds beyond the phases. */
enum { KIND_LOADING = VR_PHASE_COUNT, KIND_SKIP };

typedef struct {
    int64_t source, tid, ts, end;
    int kind, has_tid;
} op_row;

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

static int op_kind(const char *name)
{
    if (name && strcmp(name, "loading") == 0)
        return KIND_LOADING;
    int k = vr_phase_kind(name);
    return k < 0 ? KIND_SKIP : k;
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

static void read_op(sqlite3_stmt *st, op_row *o)
{
    o->source = sqlite3_column_int64(st, 0);
    o->has_tid = sqlite3_column_type(st, 1) != SQLITE_NULL;
    o->tid = sqlite3_column_int64(st, 1);
    o->ts = sqlite3_column_int64(st, 2);
    o->end = vr_sat_add(o->ts, sqlite3_column_int64(st, 3));
    o->kind = op_kind((const char *)sqlite3_column_text(st, 4));
}

int vr_analyze_phases(vr_db *db, vr_error *err)
{
    phase_sweep s;
    memset(&s, 0, sizeof s);
    s.db = db;
    s.err = err;
    s.loading_until = INT64_MIN;
    s.ins = vr_db_stmt(db, sql, "insert_phase", err);
    sqlite3_stmt *st = s.ins ? vr_db_stmt(db, sql, "select_phase_ops", err) : NULL;
    int rc = st ? vr_phase_map_load_steps(db, &s.map, err) : -1;
    int step = SQLITE_DONE;
    op_row o;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        read_op(st, &o);
        rc = on_op(&s, &o);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = vr_db_fail(db, err, "reading operators for phases");
    if (rc == 0 && s.cur.active)
        rc = close_phase(&s, step_end_of(&s));
    if (st)
        sqlite3_reset(st);
    vr_phase_map_free(&s.map);
    return rc;
}

/*-*** phase peaks ***/

/* The peak of one (step, phase) of the (device, source) being swept.
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

typedef struct {
    vr_db *db;
    vr_error *err;
    vr_phase_map map;
    int64_t device, source;
    int active, has_phases;
    peak_slot *slot; /* (steps + 1) * PEAK_KINDS; the last row: no step */
    size_t nslots;
} peak_sweep;

static int write_peaks(peak_sweep *p)
{
    sqlite3_stmt *st = vr_db_stmt(p->db, sql, "insert_phase_peak", p->err);
    if (!st)
        return -1;
    for (size_t i = 0; i < p->nslots; i++) {
        if (!p->slot[i].seen)
            continue;
        size_t step = i / PEAK_KINDS;
        if (vr_db_bind_int(st, ":device", p->device, p->err) < 0 ||
            vr_db_bind_int(st, ":source", p->source, p->err) < 0 ||
            vr_db_bind_opt_int(st, ":step", step < p->map.nsteps,
                               step < p->map.nsteps ? p->map.steps[step].number : 0, p->err) < 0)
            return -1;
        const char *name = peak_names[i % PEAK_KINDS];
        if (vr_db_bind_text(st, ":phase", name, strlen(name), p->err) < 0 ||
            vr_db_bind_int(st, ":peak", p->slot[i].bytes, p->err) < 0 ||
            vr_db_bind_int(st, ":peak_ts", p->slot[i].ts, p->err) < 0)
            return -1;
        if (vr_db_step_done(p->db, st, p->err) < 0)
            return -1;
    }
    memset(p->slot, 0, p->nslots * sizeof *p->slot);
    return 0;
}

static int on_event(peak_sweep *p, int64_t device, int64_t source, int64_t ts, int64_t total)
{
    int next = !p->active || device != p->device || source != p->source;
    if (next && p->active && write_peaks(p) < 0)
        return -1;
    if (next)
        p->has_phases = vr_phase_map_has_phases(&p->map, source);
    p->active = 1;
    p->device = device;
    p->source = source;
    if (!p->has_phases)
        return 0; /* a source without phases: its steps say it all */
    vr_phase_at at;
    vr_phase_map_at(&p->map, source, ts, &at);
    size_t row = at.step_idx >= 0 ? (size_t)at.step_idx : p->map.nsteps;
    peak_slot *s = &p->slot[row * PEAK_KINDS + (size_t)peak_of_phase[at.phase]];
    if (!s->seen || total > s->bytes)
        *s = (peak_slot){total, ts, 1};
    return 0;
}

int vr_analyze_phase_peaks(vr_db *db, vr_error *err)
{
    peak_sweep p;
    memset(&p, 0, sizeof p);
    p.db = db;
    p.err = err;
    sqlite3_stmt *st = vr_db_stmt(db, sql, "select_chosen_totals", err);
    int rc = st ? vr_phase_map_load_steps(db, &p.map, err) : -1;
    if (rc == 0)
        rc = vr_phase_map_load_phases(db, &p.map, err);
    p.nslots = (p.map.nsteps + 1) * PEAK_KINDS;
    p.slot = vr_xcalloc(p.nslots, sizeof *p.slot);
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = on_event(&p, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                      sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
    if (rc == 0 && step != SQLITE_DONE)
        rc = vr_db_fail(db, err, "reading memory events for phase peaks");
    if (rc == 0 && p.active)
        rc = write_peaks(&p);
    if (st)
        sqlite3_reset(st);
    free(p.slot);
    vr_phase_map_free(&p.map);
    return rc;
}
