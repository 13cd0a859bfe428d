/* The breakdown pass: where each device's memory went, by PyTorch's
 * memory-profiler categories and kv_cache (parameter, optimizer_state,
 * input, temporary, activation, kv_cache, gradient, autograd_detail,
 * unknown: category.h). It owns peak_category
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
 * The sums are wanted at a few points only: the peak event (the nine
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
 * The reads of every event and every allocation in table order hand each
 * row to a function SQLite calls from the scan (see "the reads through
 * functions"), not back through sqlite3_step().
 * Memory: the points, SAMPLES a device at most, and the chosen sources,
 * of GROUP_DEVICES devices at most: a job of more devices is read a group
 * at a time (in device order), each group's events and allocations by
 * index, its rows written and its memory let go before the next. Nothing
 * is kept of a device past its group, so the memory does not grow with
 * the devices (it held 74 KiB a device, 721 MiB at 10,000 devices). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/category.h"
#include "batch/batch.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/idmap.h"
#include "util/sat.h"
#include "analyze/analyze.h"
#include "analyze/categorize.h"
#include "analyze/explain.h"

#define NCAT VR_CATEGORY_COUNT
#define SAMPLES 400
/* The devices whose points are held at once: 4.7 MiB of buckets (and as
 * much of samples) at most. As many or fewer are read in table order, as
 * before groups. */
#define GROUP_DEVICES 64

static const char sql[] = "schemas/analyze.sql";
/* At most this many allocations live at a source's end are remembered
 * (16 MiB): beyond, no block is taken as live before the record. */
#define LIVE_END_MAX ((size_t)1 << 20)

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
    int64_t device, peak_bytes, peak_event, start, end, width;
    event_key peak;
    tally peak_at;
    int peak_met, seen;
    size_t first, n; /* its samples, smp[first .. first + n), in chart order */
    sample *bucket;  /* step 1, table order: each bucket's best so far */
    /* read in table order: [b], its first sample of bucket b or after
     * (SAMPLES + 1 of them); NULL: read in chart order */
    size_t *from_bucket;
    /* for explain.h, of the peak's source: its allocations never freed,
     * and the blocks from before the record decided by their stacks */
    int64_t end_live[NCAT];
    vr_explain_before before;
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
    /* read a group at a time: the group is the devices after `after` to
     * `last`, included (breakdown_sources' order) */
    int ranged;
    int64_t after, last;
    /* every event of one device and source (one_source()): its chosen
     * source, or NULL when it is none */
    int single;
    chosen *only;
    int failed; /* err holds what a function called from a read met */
    /* the last category text read and its index: an allocation's
     * category is most often its predecessor's */
    char memo_text[32];
    int memo_len, memo_index;
    /* step 1 in chart order: the bucket run being read */
    long bucket;
    sample best;
    sqlite3_stmt *stated_event;
    vr_batch *samples; /* insert_category_sample's rows */
    /* the group's allocations live at the end, by source and address
     * (the blocks they are: "blocks live before the record") */
    vr_idmap live_end;
    int live_full;
} sweep;

static int category_of(sqlite3_stmt *st, int col)
{
    return vr_category_index((const char *)sqlite3_column_text(st, col));
}

/* A category's index through the memo of the last text (comparing it with
 * the names one by one cost 300 instructions an allocation). */
static int category_memo(sweep *s, sqlite3_value *v)
{
    const char *text = (const char *)sqlite3_value_text(v);
    int len = sqlite3_value_bytes(v);
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

enum {
    D_DEVICE,
    D_POSITION,
    D_SOURCE,
    D_DELTA,
    D_SRC_START,
    D_SRC_END,
    D_START,
    D_END,
    D_PEAK,
    D_PEAK_EVENT,
    D_STATING
};

static void add_device(sweep *s, sqlite3_stmt *st)
{
    vr_xgrow(&s->dev, &s->dcap, s->ndev + 1, sizeof *s->dev, 8);
    device_points *d = &s->dev[s->ndev++];
    memset(d, 0, sizeof *d);
    d->device = sqlite3_column_int64(st, D_DEVICE);
    d->start = sqlite3_column_int64(st, D_START);
    d->end = sqlite3_column_int64(st, D_END);
    d->width = vr_sat_add(vr_sat_sub(d->end, d->start), 1) / SAMPLES + 1; /* bucket_of() */
    if (d->width < 1) /* an end before the start (never, as summarise_devices makes them) */
        d->width = 1;
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

/* Loaded in axis order; kept by (device, source) for the lookups. Of
 * the devices after s->after: GROUP_DEVICES of them, or all of them. */
static int load_sources(sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "breakdown_sources", s->err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":after", s->after, s->err) < 0 ||
        vr_db_bind_int(st, ":devices", s->ranged ? GROUP_DEVICES : -1, s->err) < 0)
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

/* The group's devices, for a read that names them (`named`: the range
 * reads and the read in order; the others have no such parameters). */
static int bind_group(const sweep *s, sqlite3_stmt *st, int named)
{
    return named && (vr_db_bind_int(st, ":after", s->after, s->err) < 0 ||
                     vr_db_bind_int(st, ":last", s->last, s->err) < 0)
               ? -1
               : 0;
}

/* Steps a read whose rows go through the functions (see "the reads
 * through functions") to its end. */
static int run_read(sweep *s, const char *block, const char *what)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, block, s->err);
    if (!st || bind_group(s, st, s->ranged) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        ;
    sqlite3_reset(st);
    if (rc == SQLITE_DONE)
        return 0;
    return s->failed ? -1 : vr_db_fail(s->db, s->err, what);
}

/*-*** step 1: the points ***/

/* Buckets of equal width over the device's span; times outside it go to
 * the first or last. */
static long bucket_of(const device_points *d, int64_t ts)
{
    int64_t b = vr_sat_sub(ts, d->start) / d->width;
    return b < 0 ? 0 : b >= SAMPLES ? SAMPLES - 1 : (long)b;
}

static void push_sample(sweep *s, device_points *d, const sample *x)
{
    vr_xgrow(&s->smp, &s->scap, s->nsmp + 1, sizeof *s->smp, 256);
    s->smp[s->nsmp++] = *x;
    d->n++;
}

/* What every event says, in whatever order: whether it is the peak. */
static event_key meet(sweep *s, chosen *c, int64_t id, int64_t ts)
{
    device_points *d = &s->dev[c->dev];
    event_key ev = {c->source, ts, id, c->position};
    d->seen = 1;
    if (ev.id == d->peak_event && !d->peak_met) {
        d->peak = ev;
        d->peak_met = 1;
    }
    return ev;
}

/* Table order: each bucket keeps its largest total, the earliest of equals.
 * An event without a total (has_total 0) counts only as the peak. */
static void on_event(sweep *s, chosen *c, int64_t id, int64_t ts, int has_total, int64_t total)
{
    event_key ev = meet(s, c, id, ts);
    if (!has_total)
        return;
    device_points *d = &s->dev[c->dev];
    int64_t chart_ts = vr_sat_add(ev.ts, c->delta);
    if (!d->bucket) {
        d->bucket = vr_xmalloc(SAMPLES * sizeof *d->bucket);
        memset(d->bucket, 0, SAMPLES * sizeof *d->bucket);
    }
    sample *b = &d->bucket[bucket_of(d, chart_ts)];
    if (!b->set || total > b->total || (total == b->total && earlier(&ev, &b->ev)))
        *b = (sample){ev, chart_ts, total, {{0}, {0}}, 1};
}

/* Column order of breakdown_events_in_order. */
enum { C_DEVICE, C_SOURCE, C_EVENT, C_TS, C_TOTAL };

/* Chart order: a bucket run's sample is its first largest total. */
static void on_event_in_order(sweep *s, sqlite3_stmt *st, device_points **cur)
{
    chosen *c =
        find_source(s, sqlite3_column_int64(st, C_DEVICE), sqlite3_column_int64(st, C_SOURCE));
    if (!c)
        return;
    event_key ev = meet(s, c, sqlite3_column_int64(st, C_EVENT), sqlite3_column_int64(st, C_TS));
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
 * s->only is its chosen source, or NULL when it is none (no event
 * counts). */
static int one_source(sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "breakdown_event_sources", s->err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    s->single = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
                sqlite3_column_type(st, 2) != SQLITE_NULL &&
                sqlite3_column_int64(st, 0) == sqlite3_column_int64(st, 1) &&
                sqlite3_column_int64(st, 2) == sqlite3_column_int64(st, 3);
    s->only = s->single ? find_source(s, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 2))
                        : NULL;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE
               ? 0
               : vr_db_fail(s->db, s->err, "reading the memory events' sources");
}

/* Devices come in id order: samples are pushed device by device, in
 * chart order. */
static int read_points_in_order(sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "breakdown_events_in_order", s->err);
    if (!st || bind_group(s, st, 1) < 0)
        return -1;
    device_points *cur = NULL;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        on_event_in_order(s, st, &cur);
    sqlite3_reset(st);
    if (step != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading memory events by category");
    if (cur && s->best.set)
        push_sample(s, cur, &s->best);
    return 0;
}

/* Table order, through vr_breakdown_event() or, of one source,
 * vr_breakdown_group_event(). */
static int read_points(sweep *s)
{
    if (s->in_order)
        return read_points_in_order(s);
    if (s->ranged)
        return run_read(s, "breakdown_range_events", "reading memory events by category");
    if (one_source(s) < 0)
        return -1;
    if (s->single && !s->only)
        return 0; /* no event of a chosen source */
    return run_read(s, s->single ? "breakdown_group_events" : "breakdown_events",
                    "reading memory events by category");
}

/* Table order: the buckets' samples, device by device, and where each
 * bucket's are (lower_bound()). */
static void gather_buckets(sweep *s)
{
    for (size_t i = 0; i < s->ndev; i++) {
        device_points *d = &s->dev[i];
        d->first = s->nsmp;
        d->from_bucket = vr_xmalloc((SAMPLES + 1) * sizeof *d->from_bucket);
        for (long b = 0; b < SAMPLES; b++) {
            d->from_bucket[b] = s->nsmp;
            if (d->bucket && d->bucket[b].set)
                push_sample(s, d, &d->bucket[b]);
        }
        d->from_bucket[SAMPLES] = s->nsmp;
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

/* The first sample of c at or after the event (ts, id). Read in table
 * order, a device has one sample a bucket at most, in bucket order, and
 * a bucket's times all come before the next's: the event's bucket tells
 * (its sample if not before the event, else the next), a division where
 * a search of 400 samples took nine comparisons. A device read in chart
 * order may have several a bucket: searched. */
static size_t lower_bound(const sweep *s, const chosen *c, int64_t ts, int64_t id)
{
    const device_points *d = &s->dev[c->dev];
    size_t lo = c->first, hi = c->first + c->n;
    if (d->from_bucket) {
        size_t i = d->from_bucket[bucket_of(d, vr_sat_add(ts, c->delta))];
        i = i < lo ? lo : i > hi ? hi : i; /* the bucket's samples are another source's */
        return i < hi && key_cmp(&s->smp[i].ev, ts, id) < 0 ? i + 1 : i;
    }
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
static void change_at(sweep *s, const chosen *c, int64_t ts, int64_t id, int cat, int64_t bytes,
                      int64_t count)
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
    if (vr_db_bind_int(st, ":id", id, s->err) < 0)
        return -1;
    int rc = sqlite3_step(st);
    *stated = rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0
                                                 : vr_db_fail(s->db, s->err, "reading an event");
}

/* An allocation as vr_breakdown_allocation() is given it. */
typedef struct {
    int64_t alloc_ts, alloc_id, free_ts, free_id, bytes;
    int closes; /* freed: it has a free event */
    int cat;
} alloc_row;

/* +bytes at its allocation event, -bytes at its free event (none when
 * never freed), but not at an event that states its own category. */
static int on_allocation(sweep *s, const chosen *c, const alloc_row *a)
{
    int opens = 1, closes = a->closes, stated = 0;
    if (c->stating) {
        if (event_stated(s, a->alloc_id, &stated) < 0)
            return -1;
        opens = !stated;
        if (closes && event_stated(s, a->free_id, &stated) < 0)
            return -1;
        closes = closes && !stated;
    }
    if (opens)
        change_at(s, c, a->alloc_ts, a->alloc_id, a->cat, a->bytes, 1);
    if (closes)
        change_at(s, c, a->free_ts, a->free_id, a->cat, -a->bytes, -1);
    return 0;
}

/* Every allocation, through vr_breakdown_allocation() or, when every
 * event is of one device and source, vr_breakdown_group_allocation():
 * the allocations are the timeline pass's, each of its events' device
 * and source, so theirs too. */
static int read_allocations(sweep *s)
{
    if (s->single && !s->only)
        return 0; /* none of a chosen source */
    if (s->ranged)
        return run_read(s, "breakdown_range_allocations",
                        "reading what the categories' sums are made of");
    return run_read(s, s->single ? "breakdown_group_allocations" : "breakdown_allocations",
                    "reading what the categories' sums are made of");
}

/* Column order of analyze.sql's breakdown_stated_events. */
enum { S_DEVICE, S_SOURCE, S_TS, S_EVENT, S_CAT, S_BYTES };

static void on_stated_event(sweep *s, sqlite3_stmt *st)
{
    chosen *c =
        find_source(s, sqlite3_column_int64(st, S_DEVICE), sqlite3_column_int64(st, S_SOURCE));
    int64_t b = sqlite3_column_int64(st, S_BYTES);
    if (c)
        change_at(s, c, sqlite3_column_int64(st, S_TS), sqlite3_column_int64(st, S_EVENT),
                  category_of(st, S_CAT), b,
                  b > 0   ? 1
                  : b < 0 ? -1
                          : 0);
}

/* Read only when a chosen source states categories. */
static int read_stated_events(sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(
        s->db, sql, s->ranged ? "breakdown_range_stated_events" : "breakdown_stated_events",
        s->err);
    if (!st || bind_group(s, st, s->ranged) < 0)
        return -1;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        on_stated_event(s, st);
    sqlite3_reset(st);
    if (step != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading what the categories' sums are made of");
    return 0;
}

/*-*** the reads through functions ***/

/* The events and the allocations come to the sweep through functions
 * SQLite calls on each row as the scan reads it (the block's WHERE, as
 * timeline.c's vr_timeline_event()): no row is handed back, so neither
 * sqlite3_step() nor a column call is paid per row, and the arguments
 * are read straight from SQLite's registers. Each returns 0 (no row
 * comes back) or an error, which ends the read. Their arguments, as
 * analyze.sql passes them: */
enum { EV_DEVICE, EV_SOURCE, EV_ID, EV_TS, EV_TOTAL, EV_COUNT };
enum {
    AL_DEVICE,
    AL_SOURCE,
    AL_ALLOC_TS,
    AL_ALLOC_EVENT,
    AL_FREE_TS,
    AL_FREE_EVENT,
    AL_BYTES,
    AL_CAT,
    AL_ADDR,
    AL_COUNT
};
/* The group functions, when every event is of one device and source
 * (s->only): the same less those two, two columns a row fewer. */
enum { GROUP_SKIPS = 2 };

/* v: the event's id, then its time and its total. */
static void take_event(sweep *s, chosen *c, sqlite3_value **v)
{
    enum { ID, TS, TOTAL };
    if (c)
        on_event(s, c, sqlite3_value_int64(v[ID]), sqlite3_value_int64(v[TS]),
                 sqlite3_value_type(v[TOTAL]) != SQLITE_NULL, sqlite3_value_int64(v[TOTAL]));
}

static void sql_breakdown_event(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    sweep *s = sqlite3_user_data(ctx);
    (void)argc;
    take_event(s,
               find_source(s, sqlite3_value_int64(argv[EV_DEVICE]),
                           sqlite3_value_int64(argv[EV_SOURCE])),
               argv + EV_ID);
    sqlite3_result_int(ctx, 0);
}

static void sql_breakdown_group_event(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    sweep *s = sqlite3_user_data(ctx);
    (void)argc;
    take_event(s, s->only, argv + EV_ID - GROUP_SKIPS);
    sqlite3_result_int(ctx, 0);
}

/* The key of an address of a source in s->live_end. */
static uint64_t live_key(int64_t source, int64_t addr)
{
    const int64_t k[2] = {source, addr};
    return vr_hash_once(k, sizeof k, 0x11fe);
}

/* An allocation still live at the end, so the block at its address is
 * the record's (its bytes are counted already). A map full: which
 * blocks are the record's is not known, and none is taken as before. */
static void note_live_end(sweep *s, int64_t source, int64_t addr)
{
    if (s->live_end.len >= s->live_end.max)
        s->live_full = 1;
    else
        vr_idmap_put(&s->live_end, live_key(source, addr), 1);
}

/* An allocation of the peak's source never freed, by category (what
 * explain.h weighs the optimizer's state by). */
static void note_end_live(device_points *d, const chosen *c, const alloc_row *a)
{
    if (!a->closes && d->peak_met && d->peak.source == c->source)
        d->end_live[a->cat] = vr_sat_add(d->end_live[a->cat], a->bytes);
}

/* v: the allocation's time and event, its free time and event, its
 * bytes, its category and its address. */
static void take_allocation(sqlite3_context *ctx, sweep *s, const chosen *c, sqlite3_value **v)
{
    enum { ALLOC_TS, ALLOC_EVENT, FREE_TS, FREE_EVENT, BYTES, CAT, ADDR };
    if (!c) { /* a source set aside */
        sqlite3_result_int(ctx, 0);
        return;
    }
    if (sqlite3_value_type(v[FREE_EVENT]) == SQLITE_NULL &&
        sqlite3_value_type(v[ADDR]) != SQLITE_NULL)
        note_live_end(s, c->source, sqlite3_value_int64(v[ADDR]));
    alloc_row a = {
        sqlite3_value_int64(v[ALLOC_TS]), sqlite3_value_int64(v[ALLOC_EVENT]),
        sqlite3_value_int64(v[FREE_TS]),  sqlite3_value_int64(v[FREE_EVENT]),
        sqlite3_value_int64(v[BYTES]),    sqlite3_value_type(v[FREE_EVENT]) != SQLITE_NULL,
        category_memo(s, v[CAT])};
    note_end_live(&s->dev[c->dev], c, &a);
    if (on_allocation(s, c, &a) < 0) {
        s->failed = 1;
        sqlite3_result_error(ctx, s->err->msg, -1);
        return;
    }
    sqlite3_result_int(ctx, 0);
}

static void sql_breakdown_allocation(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    sweep *s = sqlite3_user_data(ctx);
    (void)argc;
    take_allocation(ctx, s,
                    find_source(s, sqlite3_value_int64(argv[AL_DEVICE]),
                                sqlite3_value_int64(argv[AL_SOURCE])),
                    argv + AL_ALLOC_TS);
}

static void sql_breakdown_group_allocation(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    sweep *s = sqlite3_user_data(ctx);
    (void)argc;
    take_allocation(ctx, s, s->only, argv + AL_ALLOC_TS - GROUP_SKIPS);
}

static const vr_db_function breakdown_functions[] = {
    {"vr_breakdown_event", EV_COUNT, sql_breakdown_event, NULL, NULL},
    {"vr_breakdown_group_event", EV_COUNT - GROUP_SKIPS, sql_breakdown_group_event, NULL, NULL},
    {"vr_breakdown_allocation", AL_COUNT, sql_breakdown_allocation, NULL, NULL},
    {"vr_breakdown_group_allocation", AL_COUNT - GROUP_SKIPS, sql_breakdown_group_allocation,
     NULL, NULL},
};

/* s NULL: removes them, so nothing can call them with a finished sweep. */
static int register_functions(vr_db *db, sweep *s, vr_error *err)
{
    size_t n = sizeof breakdown_functions / sizeof *breakdown_functions;
    return vr_db_functions(db, breakdown_functions, n, s, err);
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

/* What explain.h is told of the peak: `bytes` as settled from `live`. */
static void explain_in(const device_points *d, const tally *live, const int64_t bytes[NCAT],
                       vr_explain_in *in)
{
    memset(in, 0, sizeof *in);
    in->device = d->device;
    in->source = d->peak.source;
    in->peak_ts = d->peak.ts;
    in->peak_id = d->peak.id;
    in->undecided = live->bytes[VR_CATEGORY_UNKNOWN] > 0 ? live->bytes[VR_CATEGORY_UNKNOWN] : 0;
    in->residual = bytes[VR_CATEGORY_UNKNOWN] - in->undecided;
    if (in->residual < 0) /* scaled down: the record holds more than the total */
        in->residual = 0;
    memcpy(in->end_live, d->end_live, sizeof in->end_live);
    in->before = d->before;
}

/* Whether the peak's source states its categories (then they are taken
 * as stated: nothing is inferred). */
static int peak_source_states(sweep *s, const device_points *d)
{
    const chosen *c = find_source(s, d->device, d->peak.source);
    return c && c->stating;
}

/* The peak's eight rows, after explain.h's moves (out). */
static int write_peak(sweep *s, const device_points *d, vr_explain_out *out)
{
    tally live;
    memset(&live, 0, sizeof live);
    if (d->peak_met) /* else all of it is unknown */
        live = d->peak_at;
    int64_t bytes[NCAT];
    vr_category_settle(live.bytes, d->peak_bytes, bytes);
    if (d->peak_met) {
        vr_explain_in in;
        explain_in(d, &live, bytes, &in);
        in.stated = peak_source_states(s, d);
        if (vr_explain_device(s->db, &in, out, s->err) < 0)
            return -1;
        vr_explain_apply(out, d->peak.ts, 0, bytes);
    }
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "insert_peak_category", s->err);
    if (!st)
        return -1;
    for (int i = 0; i < NCAT; i++) {
        if (vr_db_bind_int(st, ":device", d->device, s->err) < 0 ||
            vr_db_bind_text(st, ":category", vr_category_names[i], strlen(vr_category_names[i]),
                            s->err) < 0 ||
            vr_db_bind_int(st, ":bytes", bytes[i], s->err) < 0 ||
            vr_db_bind_int(st, ":count", live.count[i] > 0 ? live.count[i] : 0, s->err) < 0)
            return -1;
        if (vr_db_step_done(s->db, st, s->err) < 0)
            return -1;
    }
    return 0;
}

/* The columns of insert_category_sample, by their names there. */
enum { SAMPLE_DEVICE, SAMPLE_TS, SAMPLE_CATEGORY, SAMPLE_BYTES, SAMPLE_NCOLS };
static const char *const sample_cols[SAMPLE_NCOLS] = {":device", ":ts", ":category", ":bytes"};

/* Batched: a statement a row cost 6,000 instructions of 400 x 8. */
static int write_sample(sweep *s, const device_points *d, const sample *x,
                        const vr_explain_out *moves)
{
    int64_t device = d->device;
    int64_t bytes[NCAT];
    vr_category_settle(x->at.bytes, x->total, bytes);
    if (d->peak_met && x->ev.source == d->peak.source)
        vr_explain_apply(moves, x->ev.ts, key_cmp(&d->peak, x->ev.ts, x->ev.id) < 0, bytes);
    for (int i = 0; i < NCAT; i++) {
        vr_batch_int(s->samples, SAMPLE_DEVICE, device);
        vr_batch_int(s->samples, SAMPLE_TS, x->chart_ts);
        vr_batch_static_text(s->samples, SAMPLE_CATEGORY, vr_category_names[i]);
        vr_batch_int(s->samples, SAMPLE_BYTES, bytes[i]);
        if (vr_batch_row(s->samples, s->err) < 0)
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
    vr_explain_out moves;
    memset(&moves, 0, sizeof moves);
    int rc = write_peak(s, d, &moves);
    for (size_t i = d->first; rc == 0 && i < d->first + d->n; i++)
        rc = write_sample(s, d, &s->smp[i], &moves);
    vr_explain_out_free(&moves);
    return rc;
}

/*-*** blocks live before the record ***/

/* A block in use at a snapshot's end that no allocation of its record
 * made: allocated before the record began and never freed, so live at
 * each of its points. Its stack (a legacy snapshot's history, a current
 * one's block frames) is decided as an allocation's would be, by the
 * category rules; what they cannot decide stays unknown. */
typedef struct {
    int64_t device, source, bytes, stack, address, id;
    int has_stack;
} block_before;

static int read_blocks_before(sweep *s, block_before **out, size_t *n)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "breakdown_blocks_before", s->err);
    if (!st)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        block_before b = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                          sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                          sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5),
                          sqlite3_column_int(st, 6)};
        if (!find_source(s, b.device, b.source) ||
            vr_idmap_get(&s->live_end, live_key(b.source, b.address)))
            continue; /* another group's, no chosen source, or the record's */
        vr_xgrow(out, &cap, *n + 1, sizeof **out, 16);
        (*out)[(*n)++] = b;
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(s->db, s->err, "reading the blocks live before");
}

static int any_stack(const block_before *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i].has_stack)
            return 1;
    return 0;
}

/* A block without a stack of the peak's source, for explain.h. */
static void note_stackless(device_points *d, const chosen *c, int64_t bytes)
{
    if (d->peak_met && d->peak.source == c->source)
        d->before.stackless = vr_sat_add(d->before.stackless, bytes);
}

/* Such a block of the peak's source, for explain.h's rows. */
static void note_before(device_points *d, const chosen *c, int category, int64_t bytes,
                        const char *rule)
{
    vr_explain_before *b = &d->before;
    if (!d->peak_met || d->peak.source != c->source)
        return;
    if (category == VR_CATEGORY_UNKNOWN) {
        b->undecided = vr_sat_add(b->undecided, bytes);
        return;
    }
    b->bytes[category] = vr_sat_add(b->bytes[category], bytes);
    b->count[category]++;
    if (!b->rule[category][0] && rule)
        snprintf(b->rule[category], sizeof b->rule[category], "%s", rule);
}

/* The block as block_before says it (the report groups what was live at
 * the peak by module with it), unknown ones too: they are the peak's. */
static int note_block_before(sweep *s, const block_before *b, int category)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "insert_block_before", s->err);
    if (!st)
        return -1;
    const char *name = vr_category_names[category];
    if (vr_db_bind_int(st, ":block", b->id, s->err) < 0 ||
        vr_db_bind_int(st, ":device", b->device, s->err) < 0 ||
        vr_db_bind_int(st, ":source", b->source, s->err) < 0 ||
        vr_db_bind_text(st, ":category", name, strlen(name), s->err) < 0)
        return -1;
    return vr_db_step_done(s->db, st, s->err);
}

/* Each such block's bytes, in its category, at every point of its source
 * (the running sums' start): out of what was unknown. */
static int add_blocks_before(sweep *s)
{
    block_before *b = NULL;
    size_t n = 0;
    vr_categorizer *cat = NULL;
    if (s->live_full)
        return 0;
    int rc = read_blocks_before(s, &b, &n);
    if (rc == 0 && any_stack(b, n))
        rc = vr_categorizer_open(s->db, &cat, s->err);
    for (size_t i = 0; rc == 0 && i < s->ndev; i++)
        s->dev[i].before.blocks_read = 1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const chosen *c = find_source(s, b[i].device, b[i].source);
        if (!b[i].has_stack) { /* nothing to decide by: explain.h weighs it */
            note_stackless(&s->dev[c->dev], c, b[i].bytes);
            continue;
        }
        vr_categorize_in in = {.source = b[i].source,
                               .alloc_ts = INT64_MIN,
                               .has_stack = 1,
                               .stack = b[i].stack,
                               .stated = -1};
        vr_categorize_out out;
        rc = vr_categorizer_decide(cat, &in, &out, s->err);
        int category = rc == 0 ? vr_category_index(out.category) : VR_CATEGORY_UNKNOWN;
        if (rc == 0 && category != VR_CATEGORY_UNKNOWN)
            change_at(s, c, INT64_MIN, INT64_MIN, category, b[i].bytes, 1);
        if (rc == 0) {
                note_before(&s->dev[c->dev], c, category, b[i].bytes, out.rule);
                rc = note_block_before(s, &b[i], category);
        }
    }
    vr_categorizer_free(cat);
    free(b);
    return rc;
}

/* The loaded devices' points, sums and rows. */
static int run_group(sweep *s)
{
    s->last = s->dev[s->ndev - 1].device;
    if (read_points(s) < 0)
        return -1;
    if (s->in_order)
        mark_firsts(s);
    else
        gather_buckets(s);
    mark_segments(s);
    if (read_allocations(s) < 0 || (s->stating && read_stated_events(s) < 0) ||
        add_blocks_before(s) < 0)
        return -1;
    sum_sources(s);
    for (size_t i = 0; i < s->ndev; i++)
        if (write_device(s, &s->dev[i]) < 0)
            return -1;
    return 0;
}

/* Lets go of a group (its rows are written): the next starts empty. */
static void free_group(sweep *s)
{
    for (size_t i = 0; i < s->ndev; i++) {
        free(s->dev[i].bucket);
        free(s->dev[i].from_bucket);
    }
    s->ndev = s->nsrc = s->nsmp = 0;
    vr_idmap_free(&s->live_end);
    vr_idmap_init(&s->live_end, LIVE_END_MAX);
    s->live_full = 0;
    s->stating = s->in_order = s->single = 0;
    s->only = NULL;
    s->best.set = 0;
}

/* Whether the devices are more than a group: then s->ranged, and the
 * index the groups' reads of allocations want. */
static int choose_groups(sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "breakdown_device_count", s->err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    s->ranged = rc == SQLITE_ROW && sqlite3_column_int64(st, 0) > GROUP_DEVICES;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW)
        return vr_db_fail(s->db, s->err, "counting the devices");
    return s->ranged ? vr_db_exec_named(s->db, sql, "breakdown_range_index", s->err) : 0;
}

static int run(sweep *s)
{
    if (choose_groups(s) < 0)
        return -1;
    s->stated_event = vr_db_stmt(s->db, sql, "breakdown_event_stated", s->err);
    s->samples =
        vr_batch_new(s->db, sql, "insert_category_sample", sample_cols, SAMPLE_NCOLS, s->err);
    if (!s->stated_event || !s->samples)
        return -1;
    s->after = INT64_MIN;
    do {
        if (load_sources(s) < 0)
            return -1;
        if (!s->ndev)
            break;
        if (run_group(s) < 0)
            return -1;
        s->after = s->last;
        free_group(s);
    } while (s->ranged);
    if (vr_batch_flush(s->samples, s->err) < 0)
        return -1;
    return s->ranged ? vr_db_exec_named(s->db, sql, "breakdown_drop_index", s->err) : 0;
}

int vr_analyze_breakdown(vr_db *db, vr_error *err)
{
    sweep s;
    memset(&s, 0, sizeof s);
    s.db = db;
    s.err = err;
    s.memo_len = -1; /* no text remembered yet */
    vr_idmap_init(&s.live_end, LIVE_END_MAX);
    int registered = register_functions(db, &s, err) == 0;
    int rc = registered ? run(&s) : -1;
    /* Also after a registration that failed part way. Fails only while
     * a statement runs; then the pass fails (a function left would point
     * at this frame's sweep). */
    vr_error ignored = VR_ERROR_INIT;
    if (register_functions(db, NULL, rc < 0 ? &ignored : err) < 0)
        rc = -1;
    free_group(&s);
    vr_idmap_free(&s.live_end);
    free(s.dev);
    free(s.src);
    free(s.smp);
    vr_batch_free(s.samples);
    return rc;
}
