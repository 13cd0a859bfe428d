/* An allocator snapshot's phases (snapshot_phases.h), the way an expert
 * reads its record (docs/categories.md, "Phases of an allocator
 * snapshot"):
 *
 * - each alloc entry's stack has a kind, from the roles the category
 *   rules' `role` lines give its frames (the categorizer decides them, so
 *   a stack is read one way everywhere): backward when some frame has the
 *   backward role (the autograd engine, or .backward(), runs it: a forward
 *   recomputed inside backward included); otherwise by the innermost frame
 *   with a role: forward and replica are forward, optimizer is the
 *   optimizer's, weights and data are forward inside a forward (a frame
 *   has the forward role) and in no phase outside one; without a role (or
 *   a stack) it is undecided;
 * - an Optimizer.step# or Optimizer.zero_grad# annotation is a phase of
 *   its own over its span: the entries inside it that are undecided, the
 *   optimizer's or in no phase are its; forward and backward entries keep
 *   theirs (a step run as optimizer.step(closure)); where annotations
 *   nest, the innermost decides; its end begins a stretch in no phase;
 * - consecutive entries of one kind make a phase, which begins at the
 *   first of them and reaches to the first entry (or annotation edge) of
 *   another kind: the undecided entries between belong to the phase before
 *   them; the last reaches to the record's end;
 * - except in a record without forward entries (a model of plain
 *   functions, no nn.Module): there, the undecided entries just before a
 *   backward, after anything but a forward (or at the record's start), are
 *   its forward.
 *
 * A snapshot of several devices takes its phases from the first device
 * whose entries decide a kind (one program drives them all). The entries
 * are read by one scan of the events in table order; each source's runs
 * of one kind (a few a step) are held until its end, when the rule above
 * can tell a plain-function forward. */
#include "analyze/snapshot_phases.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/sat.h"
#include "analyze/categorize.h"
#include "analyze/rules.h"

static const char sql[] = "schemas/analyze.sql";

/* An entry no role decides (VR_PHASE_OTHER: decided, in no phase). */
enum { KIND_UNDECIDED = -1 };

typedef struct {
    int64_t start, end;
    int kind;
} ann_seg; /* a flattened annotation: its innermost one's kind */

typedef struct {
    int64_t ts;
    int kind;
} ann_edge; /* where a segment begins (its kind) or ends (VR_PHASE_OTHER) */

typedef struct {
    int kind, has_undecided;
    int64_t start, undecided; /* undecided: the first such entry after the run's last */
} kind_run;

/* The roles that decide a kind: indices into the rules, -1: not declared. */
enum { R_FORWARD, R_BACKWARD, R_OPTIMIZER, R_REPLICA, R_WEIGHTS, R_DATA, R_COUNT };
static const char *const role_names[R_COUNT] = {"forward", "backward", "optimizer",
                                                "replica", "weights",  "data"};

typedef struct {
    vr_db *db;
    vr_error *err;
    const vr_snap_phase_input *in;
    vr_categorizer *cat;
    int role[R_COUNT];
    long src;             /* index into in->sources of the source being read, or -1 */
    int64_t not_snapshot; /* the last source met that is not a snapshot */
    int64_t device;       /* the device being read */
    int decided;          /* an entry of this device decided a kind */
    int failed;           /* err holds what vr_snapshot_phase_entry() met */
    int skip;             /* the rest of the source's entries say nothing more */
    ann_seg *segs;
    size_t nsegs, cap_segs, seg_at;
    ann_edge *edges;
    size_t nedges, cap_edges, edge_at;
    int64_t *open; /* the annotations open while flattening: their indices */
    size_t cap_open;
    kind_run *runs;
    size_t nruns, cap_runs;
    int has_lead, has_forward;
    int64_t lead, last_ts;
    unsigned char *written; /* per source: its phases are written */
} snap_sweep;

/*-*** the input ***/

int vr_snap_phases_sources(vr_db *db, vr_snap_phase_input *in, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "select_snapshot_sources", err);
    if (!st)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_xgrow(&in->sources, &cap, in->nsources + 1, sizeof *in->sources, 8);
        in->sources[in->nsources++] =
            (vr_snap_source){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1)};
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading the snapshot sources");
}

static long source_index(const vr_snap_phase_input *in, int64_t source)
{
    size_t lo = 0, hi = in->nsources;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (in->sources[mid].id < source)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < in->nsources && in->sources[lo].id == source ? (long)lo : -1;
}

int vr_snap_phases_is_snapshot(const vr_snap_phase_input *in, int64_t source)
{
    return source_index(in, source) >= 0;
}

void vr_snap_phases_stage(vr_snap_phase_input *in, int64_t source, int kind, int64_t start,
                          int64_t end)
{
    vr_xgrow(&in->stages, &in->cap_stages, in->nstages + 1, sizeof *in->stages, 16);
    in->stages[in->nstages++] = (vr_snap_stage){source, start, end, kind};
}

void vr_snap_phases_free(vr_snap_phase_input *in)
{
    free(in->sources);
    free(in->stages);
    memset(in, 0, sizeof *in);
}

/*-*** a source's annotations, flattened ***/

static void add_seg(snap_sweep *s, int64_t a, int64_t b, int kind)
{
    if (b <= a)
        return;
    ann_seg *last = s->nsegs ? &s->segs[s->nsegs - 1] : NULL;
    if (last && last->kind == kind && last->end == a) {
        last->end = b;
        return;
    }
    vr_xgrow(&s->segs, &s->cap_segs, s->nsegs + 1, sizeof *s->segs, 16);
    s->segs[s->nsegs++] = (ann_seg){a, b, kind};
}

/* The source's annotations (by start, the longest first) as segments in
 * time order, each the kind of the innermost (latest begun) annotation
 * open over it. */
static void flatten(snap_sweep *s, const vr_snap_stage *st, size_t n)
{
    size_t depth = 0;
    int64_t t = INT64_MIN;
    s->nsegs = 0;
    for (size_t i = 0; i <= n; i++) {
        int64_t next = i < n ? st[i].start : INT64_MAX;
        while (depth && st[s->open[depth - 1]].end <= next) {
            const vr_snap_stage *top = &st[s->open[--depth]];
            add_seg(s, t, top->end, top->kind);
            if (top->end > t)
                t = top->end;
        }
        if (i == n)
            break;
        if (depth)
            add_seg(s, t, next, st[s->open[depth - 1]].kind);
        t = next;
        vr_xgrow(&s->open, &s->cap_open, depth + 1, sizeof *s->open, 8);
        s->open[depth++] = (int64_t)i;
    }
    s->nedges = 0;
    for (size_t i = 0; i < s->nsegs; i++) {
        vr_xgrow(&s->edges, &s->cap_edges, s->nedges + 2, sizeof *s->edges, 16);
        s->edges[s->nedges++] = (ann_edge){s->segs[i].start, s->segs[i].kind};
        if (i + 1 == s->nsegs || s->segs[i + 1].start != s->segs[i].end)
            s->edges[s->nedges++] = (ann_edge){s->segs[i].end, VR_PHASE_OTHER};
    }
}

/* The first annotation of `source` (in->stages are by source). */
static size_t stages_from(const vr_snap_phase_input *in, int64_t source)
{
    size_t lo = 0, hi = in->nstages;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (in->stages[mid].source < source)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*-*** the runs of one kind ***/

static void restart(snap_sweep *s, int64_t device)
{
    s->device = device;
    s->decided = 0;
    s->nruns = 0;
    s->has_lead = s->has_forward = 0;
    s->edge_at = s->seg_at = 0;
    s->last_ts = INT64_MIN;
}

static void begin_source(snap_sweep *s, long idx, int64_t device)
{
    s->src = idx;
    s->skip = s->written[idx];
    size_t from = stages_from(s->in, s->in->sources[idx].id), to = from;
    while (to < s->in->nstages && s->in->stages[to].source == s->in->sources[idx].id)
        to++;
    /* no stages at all: no array to point into (NULL + 0 is undefined) */
    flatten(s, s->in->nstages ? s->in->stages + from : NULL, to - from);
    restart(s, device);
}

/* One moment of a kind (an entry's, after its annotation; an edge's). */
static void mark(snap_sweep *s, int64_t ts, int kind)
{
    kind_run *last = s->nruns ? &s->runs[s->nruns - 1] : NULL;
    if (kind == KIND_UNDECIDED) {
        if (last && !last->has_undecided)
            *last = (kind_run){last->kind, 1, last->start, ts};
        else if (!last && !s->has_lead) {
            s->has_lead = 1;
            s->lead = ts;
        }
        return;
    }
    if (last && last->kind == kind) {
        last->has_undecided = 0; /* what came between is this run's */
        return;
    }
    vr_xgrow(&s->runs, &s->cap_runs, s->nruns + 1, sizeof *s->runs, 16);
    s->runs[s->nruns++] = (kind_run){kind, 0, ts, 0};
}

/* The annotation edges at or before ts (an edge before an entry of its
 * time, as the phase map places that entry). */
static void edges_until(snap_sweep *s, int64_t ts)
{
    while (s->edge_at < s->nedges && s->edges[s->edge_at].ts <= ts) {
        mark(s, s->edges[s->edge_at].ts, s->edges[s->edge_at].kind);
        s->edge_at++;
    }
}

/* The kind of the annotation segment over ts, or -1. */
static int annotation_at(snap_sweep *s, int64_t ts)
{
    while (s->seg_at < s->nsegs && s->segs[s->seg_at].end <= ts)
        s->seg_at++;
    return s->seg_at < s->nsegs && s->segs[s->seg_at].start <= ts ? s->segs[s->seg_at].kind : -1;
}

static unsigned role_bit(const snap_sweep *s, int r)
{
    return s->role[r] >= 0 ? 1u << s->role[r] : 0;
}

static int is_role(const snap_sweep *s, int role, int r)
{
    return role >= 0 && role == s->role[r];
}

static int stack_kind(snap_sweep *s, int64_t stack, int *kind)
{
    int role;
    unsigned within;
    if (vr_categorizer_stack_roles(s->cat, stack, &role, &within, s->err) < 0)
        return -1;
    if (within & role_bit(s, R_BACKWARD))
        *kind = VR_PHASE_BACKWARD;
    else if (is_role(s, role, R_FORWARD) || is_role(s, role, R_REPLICA))
        *kind = VR_PHASE_FORWARD;
    else if (is_role(s, role, R_OPTIMIZER))
        *kind = VR_PHASE_OPTIMIZER;
    else if (is_role(s, role, R_WEIGHTS) || is_role(s, role, R_DATA))
        *kind = within & role_bit(s, R_FORWARD) ? VR_PHASE_FORWARD : VR_PHASE_OTHER;
    else
        *kind = KIND_UNDECIDED;
    return 0;
}

/*-*** writing a source's phases ***/

static int insert_phase(snap_sweep *s, int kind, int64_t start, int64_t end)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "insert_phase", s->err);
    const char *name = vr_phase_name(kind);
    if (!st || vr_db_bind_int(st, ":source", s->in->sources[s->src].id, s->err) < 0 ||
        vr_db_bind_null(st, ":step", s->err) < 0 ||
        vr_db_bind_text(st, ":kind", name, strlen(name), s->err) < 0 ||
        vr_db_bind_null(st, ":tid", s->err) < 0 ||
        vr_db_bind_int(st, ":start", start, s->err) < 0 ||
        vr_db_bind_int(st, ":end", end, s->err) < 0)
        return -1;
    return vr_db_step_done(s->db, st, s->err);
}

/* Whether the undecided entries after run i (and before the backward
 * that follows) are a plain-function model's forward. */
static int forward_before(const snap_sweep *s, size_t i)
{
    const kind_run *r = &s->runs[i];
    return i + 1 < s->nruns && s->runs[i + 1].kind == VR_PHASE_BACKWARD && !s->has_forward &&
           r->kind != VR_PHASE_FORWARD && r->has_undecided;
}

static int write_runs(snap_sweep *s)
{
    int64_t end = vr_sat_add(s->in->sources[s->src].end, 1);
    const kind_run *first = s->nruns ? &s->runs[0] : NULL;
    if (first && first->kind == VR_PHASE_BACKWARD && !s->has_forward && s->has_lead &&
        first->start > s->lead && insert_phase(s, VR_PHASE_FORWARD, s->lead, first->start) < 0)
        return -1;
    for (size_t i = 0; i < s->nruns; i++) {
        const kind_run *r = &s->runs[i];
        int last = i + 1 == s->nruns, split = forward_before(s, i);
        int64_t to = last ? end : split ? r->undecided : s->runs[i + 1].start;
        if (r->kind != VR_PHASE_OTHER && (to > r->start || last) &&
            insert_phase(s, r->kind, r->start, to) < 0)
            return -1;
        if (split && s->runs[i + 1].start > r->undecided &&
            insert_phase(s, VR_PHASE_FORWARD, r->undecided, s->runs[i + 1].start) < 0)
            return -1;
    }
    return 0;
}

/* The source's end: a record in which no entry decided a kind has its
 * annotations' phases alone. */
static int finish_source(snap_sweep *s)
{
    if (s->src < 0 || s->written[s->src])
        return 0;
    if (!s->decided)
        restart(s, s->device);
    edges_until(s, INT64_MAX);
    s->written[s->src] = 1;
    return write_runs(s);
}

/*-*** the scan ***/

static int on_entry(snap_sweep *s, int64_t source, int64_t device, int64_t ts, int has_stack,
                    int64_t stack)
{
    if (source == s->not_snapshot)
        return 0;
    if (s->src < 0 || s->in->sources[s->src].id != source) {
        long idx = source_index(s->in, source);
        if (idx < 0) {
            s->not_snapshot = source; /* a trace's events, together */
            return 0;
        }
        if (finish_source(s) < 0)
            return -1;
        begin_source(s, idx, device);
    }
    if (s->skip)
        return 0;
    if (device != s->device) {
        if (s->decided) {
            s->skip = 1; /* the first device that decides gives the phases */
            return 0;
        }
        restart(s, device);
    }
    if (ts < s->last_ts)
        ts = s->last_ts; /* out of order: taken as at the one before */
    s->last_ts = ts;
    int kind = KIND_UNDECIDED;
    if (has_stack && stack_kind(s, stack, &kind) < 0)
        return -1;
    s->decided |= kind != KIND_UNDECIDED;
    edges_until(s, ts);
    int ann = annotation_at(s, ts);
    if (ann >= 0 &&
        (kind == KIND_UNDECIDED || kind == VR_PHASE_OPTIMIZER || kind == VR_PHASE_OTHER))
        kind = ann;
    s->has_forward |= kind == VR_PHASE_FORWARD;
    mark(s, ts, kind);
    return 0;
}

/* Whether some frame has a role that can decide a phase: else the
 * entries say nothing, and are not read. */
static int roles_decide(const snap_sweep *s)
{
    unsigned seen = vr_categorizer_roles_seen(s->cat);
    return (seen & (role_bit(s, R_FORWARD) | role_bit(s, R_BACKWARD) | role_bit(s, R_OPTIMIZER) |
                    role_bit(s, R_REPLICA))) != 0;
}

/* vr_snapshot_phase_entry(source, device, ts, stack): hands an entry to
 * the sweep, called by SQLite as it reads the row (no row is handed back,
 * so no sqlite3_step() or column call is paid an entry); returns 0. */
static void sql_entry(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    snap_sweep *s = sqlite3_user_data(ctx);
    (void)argc;
    if (on_entry(s, sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[1]),
                 sqlite3_value_int64(argv[2]), sqlite3_value_type(argv[3]) != SQLITE_NULL,
                 sqlite3_value_int64(argv[3])) < 0) {
        s->failed = 1;
        sqlite3_result_error(ctx, s->err->msg, -1);
        return;
    }
    sqlite3_result_int(ctx, 0);
}

static const vr_db_function entry_functions[] = {
    {"vr_snapshot_phase_entry", 4, sql_entry, NULL, NULL},
};

static int run_scan(snap_sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "select_snapshot_phase_entries", s->err);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        ;
    sqlite3_reset(st);
    if (rc == SQLITE_DONE)
        return 0;
    return s->failed ? -1
                     : vr_db_fail(s->db, s->err, "reading the snapshots' entries for phases");
}

/* The functions are this sweep's for the scan alone. */
static int scan_entries(snap_sweep *s)
{
    size_t n = sizeof entry_functions / sizeof *entry_functions;
    vr_error unused = VR_ERROR_INIT; /* removing fails only while a statement runs */
    int rc = vr_db_functions(s->db, entry_functions, n, s, s->err);
    if (rc == 0)
        rc = run_scan(s);
    vr_db_functions(s->db, entry_functions, n, NULL, &unused);
    return rc;
}

static int sweep(snap_sweep *s)
{
    if (vr_categorizer_open(s->db, &s->cat, s->err) < 0)
        return -1;
    for (int r = 0; r < R_COUNT; r++)
        s->role[r] = vr_categorizer_role_index(s->cat, role_names[r]);
    int rc = roles_decide(s) ? scan_entries(s) : 0;
    if (rc == 0)
        rc = finish_source(s);
    /* Sources the scan did not meet: their annotations alone. */
    for (size_t i = 0; rc == 0 && i < s->in->nsources; i++) {
        if (s->written[i])
            continue;
        begin_source(s, (long)i, -1);
        rc = finish_source(s);
    }
    return rc;
}

int vr_snap_phases_write(vr_db *db, const vr_snap_phase_input *in, vr_error *err)
{
    if (!in->nsources)
        return 0;
    snap_sweep s;
    memset(&s, 0, sizeof s);
    s.db = db;
    s.err = err;
    s.in = in;
    s.src = -1;
    s.not_snapshot = INT64_MIN;
    s.written = vr_xcalloc(in->nsources, 1);
    int rc = sweep(&s);
    vr_categorizer_free(s.cat);
    free(s.written);
    free(s.segs);
    free(s.edges);
    free(s.open);
    free(s.runs);
    return rc;
}
