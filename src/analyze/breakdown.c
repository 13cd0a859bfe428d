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
 * peak_category rows) and, in each of SAMPLES time buckets of the chart,
 * the event with the largest total, the first of equals (a sample). Rows
 * always sum to the allocated total they stand for (vr_category_settle()).
 *
 * So the pass never joins an event to its allocations; it reads:
 *   1. the events, for the points. Chart order is source by source, each
 *      source's events in time order, and the chosen sources of a device
 *      are apart in time (analyze.sql's choose_sources), so a bucket's
 *      events are consecutive and its sample is its largest total, the
 *      earliest of equals: the table is read in its own order, no index.
 *      A device whose sources are not apart (never, by that rule) is read
 *      in chart order instead, bucket run by bucket run. When all events
 *      are of one device and source (a snapshot's), their rows do not
 *      say which; whether a source states categories is asked once of
 *      the index of the events that do (migration 18).
 *   2. what changes the sums: the allocations (and the events that state
 *      a category), in table order. A change counts at every point of
 *      its source from its event on: added at the first such point of a
 *      difference array per source, summed in order at the end.
 * Memory: the points, SAMPLES a device at most, and the chosen sources. */
#include <stdlib.h>
#include <string.h>

#include "../db/category.h"
#include "../util/buf.h"
#include "../util/sat.h"
#include "analyze.h"

#define NCAT VR_CATEGORY_COUNT
#define SAMPLES 400

static const char sql[] = "schemas/analyze.sql";

typedef struct {
    int64_t bytes[NCAT], count[NCAT];
} tally;

/* An event, ordered within its source by (ts, id); position: its source's
 * place on the device's axis. */
typedef struct {
    int64_t source, ts, id;
    long position;
} event_key;

/* A point where the sums are wanted. `at`: the differences (step 2),
 * then the sums (step 3). */
typedef struct {
    event_key ev;
    int64_t chart_ts, total;
    tally at;
    int set;
} sample;

typedef struct {
    int64_t device, peak_bytes, peak_event, start, end;
    event_key peak;
    tally peak_at;
    int peak_met, seen;
    size_t first, n;  /* its samples, smp[first .. first + n), in chart order */
    sample *bucket;   /* step 1, table order: each bucket's best so far */
} device_points;

/* A chosen source of a device with a peak: delta takes its times to the
 * chart's clock (the peak's source's). first, n: its samples. */
typedef struct {
    int64_t device, source, delta, start, end;
    long position;
    size_t dev, first, n;
    int stating; /* some of its events state their category */
} chosen;

typedef struct {
    vr_db *db;
    vr_error *err;
    device_points *dev;
    size_t ndev, dcap;
    chosen *src;
    size_t nsrc, ccap;
    sample *smp;
    size_t nsmp, scap;
    int stating, in_order;
    /* the last category text read and its index: an allocation's
     * category is most often its predecessor's */
    char memo_text[32];
    int memo_len, memo_index;
    /* step 1 in chart order: the bucket run being read */
    long bucket;
    sample best;
    sqlite3_stmt *stated_event;
} sweep;

static int category_of(sqlite3_stmt *st, int col)
{
    return vr_category_index((const char *)sqlite3_column_text(st, col));
}

/* category_of() through the memo of the last text (comparing it with the
 * eight names cost 300 instructions an allocation). */
static int category_memo(sweep *s, sqlite3_stmt *st, int col)
{
    const char *text = (const char *)sqlite3_column_text(st, col);
    int len = sqlite3_column_bytes(st, col);
    if (text && len == s->memo_len && memcmp(text, s->memo_text, (size_t)len) == 0)
        return s->memo_index;
    int cat = vr_category_index(text);
    if (text && len < (int)sizeof s->memo_text) {
        memcpy(s->memo_text, text, (size_t)len);
        s->memo_len = len;
        s->memo_index = cat;
    }
    return cat;
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

/* Within one source: the event (ts, id) against k. */
static int key_cmp(const event_key *k, int64_t ts, int64_t id)
{
    return k->ts < ts ? -1 : k->ts > ts ? 1 : k->id < id ? -1 : k->id > id ? 1 : 0;
}

/* Chart order of two events of one device. */
static int earlier(const event_key *a, const event_key *b)
{
    if (a->position != b->position)
        return a->position < b->position;
    return key_cmp(a, b->ts, b->id) < 0;
}

/*-*** the devices and their chosen sources ***/

enum { D_DEVICE, D_POSITION, D_SOURCE, D_DELTA, D_SRC_START, D_SRC_END, D_START, D_END,
       D_PEAK, D_PEAK_EVENT, D_STATING };

static void add_device(sweep *s, sqlite3_stmt *st)
{
    vr_xgrow(&s->dev, &s->dcap, s->ndev + 1, sizeof *s->dev, 8);
    device_points *d = &s->dev[s->ndev++];
    memset(d, 0, sizeof *d);
    d->device = sqlite3_column_int64(st, D_DEVICE);
    d->start = sqlite3_column_int64(st, D_START);
    d->end = sqlite3_column_int64(st, D_END);
    d->peak_bytes = sqlite3_column_int64(st, D_PEAK);
    d->peak_event = sqlite3_column_int64(st, D_PEAK_EVENT);
}

static void add_source(sweep *s, sqlite3_stmt *st)
{
    if (!s->ndev || s->dev[s->ndev - 1].device != sqlite3_column_int64(st, D_DEVICE))
        add_device(s, st);
    vr_xgrow(&s->src, &s->ccap, s->nsrc + 1, sizeof *s->src, 8);
    chosen *c = &s->src[s->nsrc++];
    memset(c, 0, sizeof *c);
    c->device = sqlite3_column_int64(st, D_DEVICE);
    c->source = sqlite3_column_int64(st, D_SOURCE);
    c->delta = sqlite3_column_int64(st, D_DELTA);
    c->start = vr_sat_add(sqlite3_column_int64(st, D_SRC_START), c->delta);
    c->end = vr_sat_add(sqlite3_column_int64(st, D_SRC_END), c->delta);
    c->position = (long)sqlite3_column_int64(st, D_POSITION);
    c->dev = s->ndev - 1;
    if (sqlite3_column_int(st, D_STATING))
        c->stating = s->stating = 1;
    /* Apart in time from the one before, on the chart's clock: table
     * order gives chart order's buckets (see the top). */
    const chosen *prev = s->nsrc > 1 ? &s->src[s->nsrc - 2] : NULL;
    if (prev && prev->device == c->device && prev->end >= c->start)
        s->in_order = 1;
}

static int source_cmp(const void *a, const void *b)
{
    const chosen *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->source < y->source ? -1 : x->source > y->source;
}

/* Loaded in axis order; kept by (device, source) for the lookups. */
static int load_sources(sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "breakdown_sources", s->err);
    if (!st)
        return -1;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        add_source(s, st);
    sqlite3_reset(st);
    if (step != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading the devices' sources");
    if (s->nsrc) /* qsort() and bsearch() want an array, even of none */
        qsort(s->src, s->nsrc, sizeof *s->src, source_cmp);
    return 0;
}

static chosen *find_source(sweep *s, int64_t device, int64_t source)
{
    chosen key = {.device = device, .source = source};
    if (!s->nsrc)
        return NULL;
    return bsearch(&key, s->src, s->nsrc, sizeof *s->src, source_cmp);
}

/*-*** step 1: the points ***/

/* Buckets of equal width over the device's span; times outside it go to
 * the first or last. */
static long bucket_of(const device_points *d, int64_t ts)
{
    int64_t span = vr_sat_add(vr_sat_sub(d->end, d->start), 1);
    int64_t width = span / SAMPLES + 1;
    int64_t b = vr_sat_sub(ts, d->start) / width;
    return b < 0 ? 0 : b >= SAMPLES ? SAMPLES - 1 : (long)b;
}

static void push_sample(sweep *s, device_points *d, const sample *x)
{
    vr_xgrow(&s->smp, &s->scap, s->nsmp + 1, sizeof *s->smp, 256);
    s->smp[s->nsmp++] = *x;
    d->n++;
}

/* Column order of breakdown_events and breakdown_events_in_order;
 * breakdown_event_totals has the last three only. */
enum { C_DEVICE, C_SOURCE, C_EVENT, C_TS, C_TOTAL };

/* The chosen source of a row of breakdown_events(_in_order); NULL: none. */
static chosen *source_of(sweep *s, sqlite3_stmt *st)
{
    return find_source(s, sqlite3_column_int64(st, C_DEVICE), sqlite3_column_int64(st, C_SOURCE));
}

/* What every event says, in whatever order: whether it is the peak. */
static event_key meet(sweep *s, chosen *c, sqlite3_stmt *st, int col)
{
    device_points *d = &s->dev[c->dev];
    event_key ev = {c->source, sqlite3_column_int64(st, col + C_TS - C_EVENT),
                    sqlite3_column_int64(st, col), c->position};
    d->seen = 1;
    if (ev.id == d->peak_event && !d->peak_met) {
        d->peak = ev;
        d->peak_met = 1;
    }
    return ev;
}

/* Table order: each bucket keeps its largest total, the earliest of equals.
 * col: the event id's column, followed by the time's and the total's. */
static void on_event(sweep *s, chosen *c, sqlite3_stmt *st, int col)
{
    event_key ev = meet(s, c, st, col);
    int total_col = col + C_TOTAL - C_EVENT;
    if (sqlite3_column_type(st, total_col) == SQLITE_NULL)
        return;
    device_points *d = &s->dev[c->dev];
    int64_t chart_ts = vr_sat_add(ev.ts, c->delta), total = sqlite3_column_int64(st, total_col);
    if (!d->bucket) {
        d->bucket = vr_xmalloc(SAMPLES * sizeof *d->bucket);
        memset(d->bucket, 0, SAMPLES * sizeof *d->bucket);
    }
    sample *b = &d->bucket[bucket_of(d, chart_ts)];
    if (!b->set || total > b->total || (total == b->total && earlier(&ev, &b->ev)))
        *b = (sample){ev, chart_ts, total, {{0}, {0}}, 1};
}

/* Chart order: a bucket run's sample is its first largest total. */
static void on_event_in_order(sweep *s, sqlite3_stmt *st, device_points **cur)
{
    chosen *c = source_of(s, st);
    if (!c)
        return;
    event_key ev = meet(s, c, st, C_EVENT);
    if (sqlite3_column_type(st, C_TOTAL) == SQLITE_NULL)
        return;
    device_points *d = &s->dev[c->dev];
    int64_t chart_ts = vr_sat_add(ev.ts, c->delta), total = sqlite3_column_int64(st, C_TOTAL);
    long b = bucket_of(d, chart_ts);
    if (d != *cur || b != s->bucket) {
        if (*cur && s->best.set)
            push_sample(s, *cur, &s->best);
        s->best.set = 0;
        s->bucket = b;
        *cur = d;
    }
    if (!s->best.set || total > s->best.total)
        s->best = (sample){ev, chart_ts, total, {{0}, {0}}, 1};
}

/* Whether every event is of one device and source (an allocator
 * snapshot's, the common case): then its rows need not say which, and
 * *only is its chosen source, or NULL when it is none (no event counts). */
static int one_source(sweep *s, int *single, chosen **only)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "breakdown_event_sources", s->err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    *single = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
              sqlite3_column_type(st, 2) != SQLITE_NULL &&
              sqlite3_column_int64(st, 0) == sqlite3_column_int64(st, 1) &&
              sqlite3_column_int64(st, 2) == sqlite3_column_int64(st, 3);
    *only = *single ? find_source(s, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 2))
                    : NULL;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE
               ? 0
               : vr_db_fail(s->db, s->err, "reading the memory events' sources");
}

/* Devices come in id order from every query: samples are pushed device
 * by device, in chart order. */
static int read_points(sweep *s)
{
    int single = 0;
    chosen *only = NULL;
    if (!s->in_order && one_source(s, &single, &only) < 0)
        return -1;
    if (single && !only)
        return 0; /* no event of a chosen source */
    const char *block = s->in_order ? "breakdown_events_in_order"
                        : single    ? "breakdown_event_totals"
                                    : "breakdown_events";
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, block, s->err);
    if (!st)
        return -1;
    device_points *cur = NULL;
    chosen *c;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        if (s->in_order)
            on_event_in_order(s, st, &cur);
        else if (single)
            on_event(s, only, st, 0);
        else if ((c = source_of(s, st)) != NULL)
            on_event(s, c, st, C_EVENT);
    sqlite3_reset(st);
    if (step != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading memory events by category");
    if (cur && s->best.set)
        push_sample(s, cur, &s->best);
    return 0;
}

/* Table order: the buckets' samples, device by device. */
static void gather_buckets(sweep *s)
{
    for (size_t i = 0; i < s->ndev; i++) {
        device_points *d = &s->dev[i];
        d->first = s->nsmp;
        for (long b = 0; d->bucket && b < SAMPLES; b++)
            if (d->bucket[b].set)
                push_sample(s, d, &d->bucket[b]);
        free(d->bucket);
        d->bucket = NULL;
    }
}

/* In chart order each device's samples are pushed together: find where. */
static void mark_firsts(sweep *s)
{
    size_t at = 0;
    for (size_t i = 0; i < s->ndev; i++) {
        s->dev[i].first = at;
        at += s->dev[i].n;
    }
}

/* A source's samples are consecutive (chart order is source by source). */
static void mark_segments(sweep *s)
{
    for (size_t d = 0; d < s->ndev; d++)
        for (size_t i = s->dev[d].first; i < s->dev[d].first + s->dev[d].n; i++) {
            chosen *c = find_source(s, s->dev[d].device, s->smp[i].ev.source);
            if (c && c->n++ == 0)
                c->first = i;
        }
}

/*-*** step 2: the changes ***/

/* The first sample of c at or after the event (ts, id). */
static size_t lower_bound(const sweep *s, const chosen *c, int64_t ts, int64_t id)
{
    size_t lo = c->first, hi = c->first + c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(&s->smp[mid].ev, ts, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A change of the sums at an event of c: at every point from there on. */
static void change_at(sweep *s, const chosen *c, int64_t ts, int64_t id, int cat,
                      int64_t bytes, int64_t count)
{
    size_t i = lower_bound(s, c, ts, id);
    if (i < c->first + c->n)
        apply(&s->smp[i].at, cat, bytes, count);
    device_points *d = &s->dev[c->dev];
    if (d->peak_met && d->peak.source == c->source && key_cmp(&d->peak, ts, id) >= 0)
        apply(&d->peak_at, cat, bytes, count);
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

/* Column order of analyze.sql's breakdown_allocations. */
enum { A_DEVICE, A_SOURCE, A_ALLOC_TS, A_ALLOC_EVENT, A_FREE_TS, A_FREE_EVENT, A_BYTES,
       A_CAT };

/* +bytes at its allocation event, -bytes at its free event (none when
 * never freed), but not at an event that states its own category. */
static int on_allocation(sweep *s, sqlite3_stmt *st)
{
    chosen *c = find_source(s, sqlite3_column_int64(st, A_DEVICE),
                            sqlite3_column_int64(st, A_SOURCE));
    if (!c)
        return 0; /* a source set aside */
    int cat = category_memo(s, st, A_CAT), opens = 1, stated = 0;
    int closes = sqlite3_column_type(st, A_FREE_EVENT) != SQLITE_NULL;
    int64_t bytes = sqlite3_column_int64(st, A_BYTES);
    int64_t alloc_id = sqlite3_column_int64(st, A_ALLOC_EVENT);
    int64_t free_id = sqlite3_column_int64(st, A_FREE_EVENT);
    if (c->stating) {
        if (event_stated(s, alloc_id, &stated) < 0)
            return -1;
        opens = !stated;
        if (closes && event_stated(s, free_id, &stated) < 0)
            return -1;
        closes = closes && !stated;
    }
    if (opens)
        change_at(s, c, sqlite3_column_int64(st, A_ALLOC_TS), alloc_id, cat, bytes, 1);
    if (closes)
        change_at(s, c, sqlite3_column_int64(st, A_FREE_TS), free_id, cat, -bytes, -1);
    return 0;
}

/* Column order of analyze.sql's breakdown_stated_events. */
enum { S_DEVICE, S_SOURCE, S_TS, S_EVENT, S_CAT, S_BYTES };

static int on_stated_event(sweep *s, sqlite3_stmt *st)
{
    chosen *c = find_source(s, sqlite3_column_int64(st, S_DEVICE),
                            sqlite3_column_int64(st, S_SOURCE));
    int64_t b = sqlite3_column_int64(st, S_BYTES);
    if (c)
        change_at(s, c, sqlite3_column_int64(st, S_TS), sqlite3_column_int64(st, S_EVENT),
                  category_of(st, S_CAT), b, b > 0 ? 1 : b < 0 ? -1 : 0);
    return 0;
}

static int read_changes(sweep *s, const char *block, int (*on_row)(sweep *, sqlite3_stmt *))
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, block, s->err);
    if (!st)
        return -1;
    int rc = 0, step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = on_row(s, st);
    sqlite3_reset(st);
    if (rc == 0 && step != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading what the categories' sums are made of");
    return rc;
}

/*-*** step 3: the sums, written ***/

static void sum_sources(sweep *s)
{
    for (size_t i = 0; i < s->nsrc; i++) {
        tally run;
        memset(&run, 0, sizeof run);
        for (size_t k = s->src[i].first; k < s->src[i].first + s->src[i].n; k++) {
            add_tally(&run, &s->smp[k].at);
            s->smp[k].at = run;
        }
    }
}

static int write_peak(sweep *s, const device_points *d)
{
    tally live;
    memset(&live, 0, sizeof live);
    if (d->peak_met) /* else all of it is unknown */
        live = d->peak_at;
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
 * the later, as insert_category_sample replaces. A device none of whose
 * events was read has no rows. */
static int write_device(sweep *s, const device_points *d)
{
    if (!d->seen)
        return 0;
    if (write_peak(s, d) < 0)
        return -1;
    for (size_t i = d->first; i < d->first + d->n; i++)
        if (write_sample(s, d->device, &s->smp[i]) < 0)
            return -1;
    return 0;
}

static int run(sweep *s)
{
    if (vr_db_exec_named(s->db, sql, "breakdown_indexes", s->err) < 0 || load_sources(s) < 0 ||
        read_points(s) < 0)
        return -1;
    if (s->in_order)
        mark_firsts(s);
    else
        gather_buckets(s);
    mark_segments(s);
    s->stated_event = vr_db_stmt(s->db, sql, "breakdown_event_stated", s->err);
    if (!s->stated_event || read_changes(s, "breakdown_allocations", on_allocation) < 0 ||
        (s->stating && read_changes(s, "breakdown_stated_events", on_stated_event) < 0))
        return -1;
    sum_sources(s);
    for (size_t i = 0; i < s->ndev; i++)
        if (write_device(s, &s->dev[i]) < 0)
            return -1;
    return 0;
}

int vr_analyze_breakdown(vr_db *db, vr_error *err)
{
    sweep s;
    memset(&s, 0, sizeof s);
    s.db = db;
    s.err = err;
    s.memo_len = -1; /* no text remembered yet */
    int rc = run(&s);
    for (size_t i = 0; i < s.ndev; i++)
        free(s.dev[i].bucket);
    free(s.dev);
    free(s.src);
    free(s.smp);
    return rc;
}
