/* The breakdown pass: where each device's memory went, by PyTorch's
 * memory-profiler categories (parameter, optimizer_state, input, temporary,
 * activation, gradient, autograd_detail, unknown). It owns peak_category
 * and category_sample.
 *
 * One ordered sweep over each device's chosen sources (the order and the
 * clock of the device chart, report.sql's timeline) keeps a running sum
 * and count per category:
 *   - a source that states categories (mem_event.category: the memory
 *     timeline export) adds each event's bytes to its own category;
 *   - any other source adds an allocation's bytes to its category
 *     (allocation.category, set by the categorize pass; NULL: unknown) at
 *     its allocation event and takes them off at its free event.
 * What the running sums do not explain of the allocated total (memory
 * live before the trace began, events without an address) is unknown.
 * At the peak event the sums become the eight peak_category rows; along
 * the way, the event with the largest total in each of SAMPLES time
 * buckets becomes a sample. Rows always sum to the allocated total they
 * stand for (vr_category_settle()). Memory: one device's sums and one sample. */
#include <string.h>

#include "../db/category.h"
#include "../util/sat.h"
#include "analyze.h"

#define NCAT VR_CATEGORY_COUNT
#define UNKNOWN VR_CATEGORY_UNKNOWN
#define SAMPLES 400

static const char sql[] = "schemas/analyze.sql";

typedef struct {
    int64_t bytes[NCAT], count[NCAT];
} tally;

/* The sample of the current bucket: the event with the largest total. */
typedef struct {
    int64_t ts, total;
    tally at;
    int set;
} sample;

typedef struct {
    vr_db *db;
    vr_error *err;
    sqlite3_stmt *ins_peak, *ins_sample;
    int64_t device, source, start, end, peak_bytes, peak_event;
    long bucket;
    int peak_written;
    tally live;
    sample best;
} sweep;

/* Column order of analyze.sql's breakdown_events. */
enum { C_DEVICE, C_SOURCE, C_EVENT, C_TS, C_TOTAL, C_CAT, C_BYTES, C_ALLOC_CAT,
       C_ALLOC_BYTES, C_FREE_CAT, C_FREE_BYTES, C_START, C_END, C_PEAK, C_PEAK_EVENT };

static int category_of(sqlite3_stmt *st, int col)
{
    return vr_category_index((const char *)sqlite3_column_text(st, col));
}

/*-*** writing ***/

static int write_peak(sweep *s)
{
    int64_t bytes[NCAT];
    vr_category_settle(s->live.bytes, s->peak_bytes, bytes);
    sqlite3_stmt *st = s->ins_peak;
    for (int i = 0; i < NCAT; i++) {
        vr_db_bind_int(st, ":device", s->device);
        vr_db_bind_text(st, ":category", vr_category_names[i], strlen(vr_category_names[i]));
        vr_db_bind_int(st, ":bytes", bytes[i]);
        vr_db_bind_int(st, ":count", s->live.count[i] > 0 ? s->live.count[i] : 0);
        if (vr_db_step_done(s->db, st, s->err) < 0)
            return -1;
    }
    s->peak_written = 1;
    return 0;
}

static int write_sample(sweep *s)
{
    if (!s->best.set)
        return 0;
    s->best.set = 0;
    int64_t bytes[NCAT];
    vr_category_settle(s->best.at.bytes, s->best.total, bytes);
    sqlite3_stmt *st = s->ins_sample;
    for (int i = 0; i < NCAT; i++) {
        vr_db_bind_int(st, ":device", s->device);
        vr_db_bind_int(st, ":ts", s->best.ts);
        vr_db_bind_text(st, ":category", vr_category_names[i], strlen(vr_category_names[i]));
        vr_db_bind_int(st, ":bytes", bytes[i]);
        if (vr_db_step_done(s->db, st, s->err) < 0)
            return -1;
    }
    return 0;
}

/* A device ends: its last sample, and its peak if the sweep never met
 * the peak event (then all of it is unknown). */
static int finish_device(sweep *s)
{
    if (s->device < 0)
        return 0;
    if (write_sample(s) < 0)
        return -1;
    if (!s->peak_written) {
        memset(&s->live, 0, sizeof s->live);
        return write_peak(s);
    }
    return 0;
}

/*-*** the sweep ***/

static void start_device(sweep *s, sqlite3_stmt *st)
{
    s->device = sqlite3_column_int64(st, C_DEVICE);
    s->source = -1;
    s->start = sqlite3_column_int64(st, C_START);
    s->end = sqlite3_column_int64(st, C_END);
    s->peak_bytes = sqlite3_column_int64(st, C_PEAK);
    s->peak_event = sqlite3_column_int64(st, C_PEAK_EVENT);
    s->bucket = -1;
    s->peak_written = 0;
    s->best.set = 0;
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

static void apply(tally *t, int cat, int64_t bytes, int64_t count)
{
    t->bytes[cat] = vr_sat_add(t->bytes[cat], bytes);
    t->count[cat] += count;
}

/* The event's change to the running sums: its own category's, or its
 * allocation's (opened here) and its freed allocation's (closed here). */
static void account(sweep *s, sqlite3_stmt *st)
{
    if (sqlite3_column_type(st, C_CAT) != SQLITE_NULL) {
        int64_t b = sqlite3_column_int64(st, C_BYTES);
        apply(&s->live, category_of(st, C_CAT), b, b > 0 ? 1 : b < 0 ? -1 : 0);
        return;
    }
    if (sqlite3_column_type(st, C_ALLOC_BYTES) != SQLITE_NULL)
        apply(&s->live, category_of(st, C_ALLOC_CAT), sqlite3_column_int64(st, C_ALLOC_BYTES), 1);
    if (sqlite3_column_type(st, C_FREE_BYTES) != SQLITE_NULL)
        apply(&s->live, category_of(st, C_FREE_CAT),
              -sqlite3_column_int64(st, C_FREE_BYTES), -1);
}

static int observe(sweep *s, int64_t ts, int64_t total)
{
    long b = bucket_of(s, ts);
    if (b != s->bucket) {
        if (write_sample(s) < 0)
            return -1;
        s->bucket = b;
    }
    if (!s->best.set || total > s->best.total)
        s->best = (sample){ts, total, s->live, 1};
    return 0;
}

static int on_event(sweep *s, sqlite3_stmt *st)
{
    if (sqlite3_column_int64(st, C_DEVICE) != s->device) {
        if (finish_device(s) < 0)
            return -1;
        start_device(s, st);
    }
    int64_t source = sqlite3_column_int64(st, C_SOURCE);
    if (source != s->source) { /* allocations are never paired across sources */
        memset(&s->live, 0, sizeof s->live);
        s->source = source;
    }
    account(s, st);
    if (sqlite3_column_int64(st, C_EVENT) == s->peak_event && write_peak(s) < 0)
        return -1;
    if (sqlite3_column_type(st, C_TOTAL) == SQLITE_NULL)
        return 0;
    return observe(s, sqlite3_column_int64(st, C_TS), sqlite3_column_int64(st, C_TOTAL));
}

int vr_analyze_breakdown(vr_db *db, vr_error *err)
{
    sweep s;
    memset(&s, 0, sizeof s);
    s.db = db;
    s.err = err;
    s.device = -1;
    if (vr_db_exec_named(db, sql, "breakdown_indexes", err) < 0)
        return -1;
    s.ins_peak = vr_db_stmt(db, sql, "insert_peak_category", err);
    s.ins_sample = vr_db_stmt(db, sql, "insert_category_sample", err);
    sqlite3_stmt *ev = vr_db_stmt(db, sql, "breakdown_events", err);
    if (!s.ins_peak || !s.ins_sample || !ev)
        return -1;
    int rc = 0, step;
    while (rc == 0 && (step = sqlite3_step(ev)) == SQLITE_ROW)
        rc = on_event(&s, ev);
    if (rc == 0 && step != SQLITE_DONE)
        rc = vr_db_fail(db, err, "reading memory events by category");
    sqlite3_reset(ev);
    if (rc == 0)
        rc = finish_device(&s);
    return rc;
}
