/* The breakdown pass: where each device's memory went, by PyTorch's
 * memory-profiler categories (parameter, optimizer_state, input, temporary,
 * activation, gradient, autograd_detail, unknown). It owns peak_category
 * and category_sample.
 *
 * The figures are running sums per category along each device's chosen
 * sources (the order and the clock of the device chart, report.sql's
 * timeline), reset at each source:
 *   - a source that states categories (mem_event.category: the memory
 *     timeline export) adds each event's bytes to its own category;
 *   - any other source adds an allocation's bytes to its category
 *     (allocation.category, set by the categorize pass; NULL: unknown) at
 *     its allocation event and takes them off at its free event.
 * What the running sums do not explain of the allocated total (memory
 * live before the trace began, events without an address) is unknown.
 * The sums are wanted at a few points only: the peak event (the eight
 * peak_category rows) and, in each of SAMPLES time buckets, the event with
 * the largest total (a sample). Rows always sum to the allocated total
 * they stand for (vr_category_settle()).
 *
 * So the pass reads twice, never joining an event to its allocations:
 *   1. the events in chart order (events only): the points, each with the
 *      stated categories' sums there;
 *   2. the allocations in table order: an allocation counts at the points
 *      of its source from its allocation event (included) to its free
 *      event (excluded); a difference array per source, summed in order
 *      at the end, adds it at all of them at once, and the peak takes it
 *      when it is live there.
 * Memory: the points (at most SAMPLES a device, and the peaks). */
#include <stdlib.h>
#include <string.h>

#include "../db/category.h"
#include "../util/buf.h"
#include "../util/sat.h"
#include "analyze.h"

#define NCAT VR_CATEGORY_COUNT
#define UNKNOWN VR_CATEGORY_UNKNOWN
#define SAMPLES 400

static const char sql[] = "schemas/analyze.sql";

typedef struct {
    int64_t bytes[NCAT], count[NCAT];
} tally;

/* An event of the sweep, ordered within its source by (ts, id). */
typedef struct {
    int64_t source, ts, id;
} event_key;

/* A sample: the event with the largest total of its bucket. `at` holds
 * the stated categories' sums there, then the allocations' differences
 * (step 2), then the allocations' sums (step 3). */
typedef struct {
    event_key ev;
    int64_t chart_ts, total;
    tally stated, at;
} sample;

/* A device: its peak and its samples (samples[first .. first + n), in
 * chart order, source by source). */
typedef struct {
    int64_t device, peak_bytes, peak_event;
    event_key peak;
    tally peak_stated, peak_alloc;
    int peak_met;
    size_t first, n;
} device_points;

/* The samples of one (device, source), for the allocations' lookup. */
typedef struct {
    int64_t device, source;
    size_t first, n;
} segment;

/* A (device, source) with events that state their category (the memory
 * timeline export's: it has no allocations, so the list is read only for
 * a source that would have both). */
typedef struct {
    int64_t device, source;
} stating_source;

typedef struct {
    vr_db *db;
    vr_error *err;
    device_points *dev;
    size_t ndev, dcap;
    sample *smp;
    size_t nsmp, scap;
    segment *seg;
    size_t nseg, gcap;
    stating_source *stating;
    size_t nstating, tcap;
    /* the sweep of step 1 */
    int64_t source, start, end;
    long bucket;
    tally stated;
    sample best;
    int best_set;
    sqlite3_stmt *stated_event;
} sweep;

/* Column order of analyze.sql's breakdown_events. */
enum { C_DEVICE, C_SOURCE, C_EVENT, C_TS, C_CHART_TS, C_TOTAL, C_CAT, C_BYTES, C_START,
       C_END, C_PEAK, C_PEAK_EVENT };
/* Column order of analyze.sql's breakdown_allocations. */
enum { A_DEVICE, A_SOURCE, A_ALLOC_TS, A_ALLOC_EVENT, A_FREE_TS, A_FREE_EVENT, A_BYTES,
       A_CAT };

static int category_of(sqlite3_stmt *st, int col)
{
    return vr_category_index((const char *)sqlite3_column_text(st, col));
}

static void apply(tally *t, int cat, int64_t bytes, int64_t count)
{
    t->bytes[cat] = vr_sat_add(t->bytes[cat], bytes);
    t->count[cat] += count;
}

static void add_tally(tally *t, const tally *u)
{
    for (int i = 0; i < NCAT; i++)
        apply(t, i, u->bytes[i], u->count[i]);
}

static int key_cmp(const event_key *a, int64_t ts, int64_t id)
{
    return a->ts < ts ? -1 : a->ts > ts ? 1 : a->id < id ? -1 : a->id > id ? 1 : 0;
}

/*-*** step 1: the points, in chart order ***/

static device_points *current_device(sweep *s)
{
    return s->ndev ? &s->dev[s->ndev - 1] : NULL;
}

/* The bucket's sample is final: it joins the device's samples. */
static void push_sample(sweep *s)
{
    if (!s->best_set)
        return;
    s->best_set = 0;
    vr_xgrow(&s->smp, &s->scap, s->nsmp + 1, sizeof *s->smp, 256);
    s->smp[s->nsmp++] = s->best;
    current_device(s)->n++;
}

static void start_device(sweep *s, sqlite3_stmt *st)
{
    push_sample(s);
    vr_xgrow(&s->dev, &s->dcap, s->ndev + 1, sizeof *s->dev, 8);
    device_points *d = &s->dev[s->ndev++];
    memset(d, 0, sizeof *d);
    d->device = sqlite3_column_int64(st, C_DEVICE);
    d->peak_bytes = sqlite3_column_int64(st, C_PEAK);
    d->peak_event = sqlite3_column_int64(st, C_PEAK_EVENT);
    d->first = s->nsmp;
    s->source = -1;
    s->start = sqlite3_column_int64(st, C_START);
    s->end = sqlite3_column_int64(st, C_END);
    s->bucket = -1;
}

/* Buckets of equal width over the device's span; times outside it go to
 * the first or last. */
static long bucket_of(const sweep *s, int64_t ts)
{
    int64_t span = vr_sat_add(vr_sat_sub(s->end, s->start), 1);
    int64_t width = span / SAMPLES + 1;
    int64_t b = vr_sat_sub(ts, s->start) / width;
    return b < 0 ? 0 : b >= SAMPLES ? SAMPLES - 1 : (long)b;
}

static void observe(sweep *s, const event_key *ev, int64_t chart_ts, int64_t total)
{
    long b = bucket_of(s, chart_ts);
    if (b != s->bucket) {
        push_sample(s);
        s->bucket = b;
    }
    if (!s->best_set || total > s->best.total) {
        s->best = (sample){*ev, chart_ts, total, s->stated, {{0}, {0}}};
        s->best_set = 1;
    }
}

static void note_stating(sweep *s, int64_t device, int64_t source)
{
    stating_source *last = s->nstating ? &s->stating[s->nstating - 1] : NULL;
    if (last && last->device == device && last->source == source)
        return;
    vr_xgrow(&s->stating, &s->tcap, s->nstating + 1, sizeof *s->stating, 8);
    s->stating[s->nstating++] = (stating_source){device, source};
}

static int is_stating(const sweep *s, int64_t device, int64_t source)
{
    for (size_t i = 0; i < s->nstating; i++)
        if (s->stating[i].device == device && s->stating[i].source == source)
            return 1;
    return 0;
}

static void on_event(sweep *s, sqlite3_stmt *st)
{
    device_points *d = current_device(s);
    if (!d || sqlite3_column_int64(st, C_DEVICE) != d->device) {
        start_device(s, st);
        d = current_device(s);
    }
    event_key ev = {sqlite3_column_int64(st, C_SOURCE), sqlite3_column_int64(st, C_TS),
                    sqlite3_column_int64(st, C_EVENT)};
    if (ev.source != s->source) { /* allocations are never paired across sources */
        memset(&s->stated, 0, sizeof s->stated);
        s->source = ev.source;
    }
    if (sqlite3_column_type(st, C_CAT) != SQLITE_NULL) {
        note_stating(s, d->device, ev.source);
        int64_t b = sqlite3_column_int64(st, C_BYTES);
        apply(&s->stated, category_of(st, C_CAT), b, b > 0 ? 1 : b < 0 ? -1 : 0);
    }
    if (ev.id == d->peak_event && !d->peak_met) {
        d->peak = ev;
        d->peak_stated = s->stated;
        d->peak_met = 1;
    }
    if (sqlite3_column_type(st, C_TOTAL) != SQLITE_NULL)
        observe(s, &ev, sqlite3_column_int64(st, C_CHART_TS), sqlite3_column_int64(st, C_TOTAL));
}

static int read_points(sweep *s)
{
    sqlite3_stmt *ev = vr_db_stmt(s->db, sql, "breakdown_events", s->err);
    if (!ev)
        return -1;
    int step;
    while ((step = sqlite3_step(ev)) == SQLITE_ROW)
        on_event(s, ev);
    sqlite3_reset(ev);
    if (step != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading memory events by category");
    if (s->ndev)
        push_sample(s);
    return 0;
}

/*-*** the segments: each (device, source)'s samples ***/

static int segment_cmp(const void *a, const void *b)
{
    const segment *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->source < y->source ? -1 : x->source > y->source;
}

static segment *add_segment(sweep *s, int64_t device, int64_t source)
{
    vr_xgrow(&s->seg, &s->gcap, s->nseg + 1, sizeof *s->seg, 8);
    segment *g = &s->seg[s->nseg++];
    *g = (segment){device, source, 0, 0};
    return g;
}

/* Samples of a source are consecutive (chart order is source by
 * source); a peak's source gets a segment even without samples. */
static void build_segments(sweep *s)
{
    for (size_t d = 0; d < s->ndev; d++) {
        const device_points *dp = &s->dev[d];
        segment *g = NULL;
        for (size_t i = dp->first; i < dp->first + dp->n; i++) {
            if (!g || g->source != s->smp[i].ev.source) {
                g = add_segment(s, dp->device, s->smp[i].ev.source);
                g->first = i;
            }
            g->n++;
        }
    }
    qsort(s->seg, s->nseg, sizeof *s->seg, segment_cmp);
}

static segment *find_segment(sweep *s, int64_t device, int64_t source)
{
    segment key = {device, source, 0, 0};
    return bsearch(&key, s->seg, s->nseg, sizeof *s->seg, segment_cmp);
}

static device_points *find_device(sweep *s, int64_t device)
{
    size_t lo = 0, hi = s->ndev; /* devices come in id order (breakdown_events) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->dev[mid].device < device)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->ndev && s->dev[lo].device == device ? &s->dev[lo] : NULL;
}

/*-*** step 2: the allocations ***/

/* The first sample of g at or after the event (ts, id). */
static size_t lower_bound(const sweep *s, const segment *g, int64_t ts, int64_t id)
{
    size_t lo = g->first, hi = g->first + g->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(&s->smp[mid].ev, ts, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether an event states its own category (then its allocation's bytes
 * do not count at it): asked only of sources that state some. */
static int event_stated(sweep *s, int64_t id, int *stated)
{
    sqlite3_stmt *st = s->stated_event;
    vr_db_bind_int(st, ":id", id);
    int rc = sqlite3_step(st);
    *stated = rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : vr_db_fail(s->db, s->err, "reading an event");
}

/* One allocation's two changes: +bytes at its allocation event, -bytes
 * at its free event (none when never freed or when the event states its
 * own category), as the running sums would have taken them. */
typedef struct {
    int cat, opens, closes;
    int64_t bytes, alloc_ts, alloc_id, free_ts, free_id;
} change;

static void count_at_samples(sweep *s, const segment *g, const change *c)
{
    size_t i = lower_bound(s, g, c->alloc_ts, c->alloc_id);
    if (c->opens && i < g->first + g->n)
        apply(&s->smp[i].at, c->cat, c->bytes, 1);
    size_t j = c->closes ? lower_bound(s, g, c->free_ts, c->free_id) : g->first + g->n;
    if (c->closes && j < g->first + g->n)
        apply(&s->smp[j].at, c->cat, -c->bytes, -1);
}

static void count_at_peak(device_points *d, const change *c)
{
    if (c->opens && key_cmp(&d->peak, c->alloc_ts, c->alloc_id) >= 0)
        apply(&d->peak_alloc, c->cat, c->bytes, 1);
    if (c->closes && key_cmp(&d->peak, c->free_ts, c->free_id) >= 0)
        apply(&d->peak_alloc, c->cat, -c->bytes, -1);
}

static int on_allocation(sweep *s, sqlite3_stmt *st)
{
    int64_t source = sqlite3_column_int64(st, A_SOURCE);
    device_points *d = find_device(s, sqlite3_column_int64(st, A_DEVICE));
    if (!d)
        return 0;
    segment *g = find_segment(s, d->device, source);
    int at_peak = d->peak_met && d->peak.source == source;
    if (!g && !at_peak)
        return 0; /* a source set aside */
    change c = {category_of(st, A_CAT), 1, sqlite3_column_type(st, A_FREE_EVENT) != SQLITE_NULL,
                sqlite3_column_int64(st, A_BYTES), sqlite3_column_int64(st, A_ALLOC_TS),
                sqlite3_column_int64(st, A_ALLOC_EVENT), sqlite3_column_int64(st, A_FREE_TS),
                sqlite3_column_int64(st, A_FREE_EVENT)};
    if (s->nstating && is_stating(s, d->device, source)) {
        int stated;
        if (event_stated(s, c.alloc_id, &stated) < 0)
            return -1;
        c.opens = !stated;
        if (c.closes && event_stated(s, c.free_id, &stated) < 0)
            return -1;
        c.closes = c.closes && !stated;
    }
    if (g)
        count_at_samples(s, g, &c);
    if (at_peak)
        count_at_peak(d, &c);
    return 0;
}

static int read_allocations(sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "breakdown_allocations", s->err);
    s->stated_event = vr_db_stmt(s->db, sql, "breakdown_event_stated", s->err);
    if (!st || !s->stated_event)
        return -1;
    int rc = 0, step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = on_allocation(s, st);
    sqlite3_reset(st);
    if (rc == 0 && step != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading allocations by category");
    return rc;
}

/*-*** step 3: the sums, written ***/

/* Each segment's differences become running sums, plus the stated ones. */
static void sum_segments(sweep *s)
{
    for (size_t i = 0; i < s->nseg; i++) {
        tally run;
        memset(&run, 0, sizeof run);
        for (size_t k = s->seg[i].first; k < s->seg[i].first + s->seg[i].n; k++) {
            add_tally(&run, &s->smp[k].at);
            s->smp[k].at = s->smp[k].stated;
            add_tally(&s->smp[k].at, &run);
        }
    }
}

static int write_peak(sweep *s, const device_points *d)
{
    tally live;
    memset(&live, 0, sizeof live);
    if (d->peak_met) { /* else all of it is unknown */
        live = d->peak_stated;
        add_tally(&live, &d->peak_alloc);
    }
    int64_t bytes[NCAT];
    vr_category_settle(live.bytes, d->peak_bytes, bytes);
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "insert_peak_category", s->err);
    if (!st)
        return -1;
    for (int i = 0; i < NCAT; i++) {
        vr_db_bind_int(st, ":device", d->device);
        vr_db_bind_text(st, ":category", vr_category_names[i], strlen(vr_category_names[i]));
        vr_db_bind_int(st, ":bytes", bytes[i]);
        vr_db_bind_int(st, ":count", live.count[i] > 0 ? live.count[i] : 0);
        if (vr_db_step_done(s->db, st, s->err) < 0)
            return -1;
    }
    return 0;
}

static int write_sample(sweep *s, int64_t device, const sample *x)
{
    int64_t bytes[NCAT];
    vr_category_settle(x->at.bytes, x->total, bytes);
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "insert_category_sample", s->err);
    if (!st)
        return -1;
    for (int i = 0; i < NCAT; i++) {
        vr_db_bind_int(st, ":device", device);
        vr_db_bind_int(st, ":ts", x->chart_ts);
        vr_db_bind_text(st, ":category", vr_category_names[i], strlen(vr_category_names[i]));
        vr_db_bind_int(st, ":bytes", bytes[i]);
        if (vr_db_step_done(s->db, st, s->err) < 0)
            return -1;
    }
    return 0;
}

/* Samples in chart order: two at one time (clocks that step back) keep
 * the later, as insert_category_sample replaces. */
static int write_device(sweep *s, const device_points *d)
{
    if (write_peak(s, d) < 0)
        return -1;
    for (size_t i = d->first; i < d->first + d->n; i++)
        if (write_sample(s, d->device, &s->smp[i]) < 0)
            return -1;
    return 0;
}

int vr_analyze_breakdown(vr_db *db, vr_error *err)
{
    sweep s;
    memset(&s, 0, sizeof s);
    s.db = db;
    s.err = err;
    int rc = vr_db_exec_named(db, sql, "breakdown_indexes", err);
    if (rc == 0)
        rc = read_points(&s);
    if (rc == 0) {
        build_segments(&s);
        rc = read_allocations(&s);
    }
    if (rc == 0)
        sum_segments(&s);
    for (size_t i = 0; rc == 0 && i < s.ndev; i++)
        rc = write_device(&s, &s.dev[i]);
    free(s.dev);
    free(s.smp);
    free(s.seg);
    free(s.stating);
    return rc;
}
