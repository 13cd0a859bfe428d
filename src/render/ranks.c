#include "ranks.h"

#include <stdio.h>
#include <stdlib.h>

#include "../util/buf.h"
#include "../util/sat.h"
#include "many.h"
#include "results.h"

/* One rank is a one-process report: comparing needs two. */
static const int min_ranks = 2;

static cJSON *query(vr_db *db, const char *block, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/report.sql", block, err);
    if (!st)
        return NULL;
    sqlite3_bind_int(st, sqlite3_bind_parameter_index(st, ":min_ranks"), min_ranks);
    return vr_results_rows(db, st, err);
}

static int get_int(const cJSON *obj, const char *key, long long *out)
{
    return vr_results_int(cJSON_GetObjectItemCaseSensitive(obj, key), out);
}

static void set_int(cJSON *obj, const char *key, long long v)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", v);
    cJSON_ReplaceItemInObjectCaseSensitive(obj, key, cJSON_CreateRaw(num));
}

/* A device's id and its peak time (devices[] and more_devices[]), sorted
 * by id: each rank row finds its device by binary search (a walk of the
 * list per row was ranks x devices). */
typedef struct {
    long long id;
    const cJSON *ts;
} device_time;

static int by_id(const void *a, const void *b)
{
    const device_time *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static size_t collect_times(const cJSON *list, device_time *out, size_t n)
{
    const cJSON *d;
    cJSON_ArrayForEach(d, list)
    {
        long long id;
        if (get_int(d, "db_id", &id))
            out[n++] = (device_time){id, cJSON_GetObjectItemCaseSensitive(d, "peak_allocated_ts_ns")};
    }
    return n;
}

/* Each row's peak time is its device's, as the devices block put it on
 * the common clock. */
static void copy_times(cJSON *ranks, const cJSON *devices, const cJSON *more)
{
    size_t cap = (size_t)cJSON_GetArraySize(devices) + (size_t)cJSON_GetArraySize(more) + 1;
    device_time *t = vr_xmalloc(cap * sizeof *t);
    size_t n = collect_times(more, t, collect_times(devices, t, 0));
    qsort(t, n, sizeof *t, by_id);
    cJSON *row;
    cJSON_ArrayForEach(row, ranks)
    {
        device_time key = {0, NULL};
        const device_time *d =
            get_int(row, "device_db_id", &key.id) ? bsearch(&key, t, n, sizeof *t, by_id) : NULL;
        if (d && d->ts)
            cJSON_ReplaceItemInObjectCaseSensitive(row, "peak_allocated_ts_ns",
                                                   cJSON_Duplicate(d->ts, 1));
    }
    free(t);
}

/*-*** which rank peaked first ***/

typedef struct {
    long long rank, bytes, ts;
} rank_peak;

/* A rank's peak is its highest device's (the earlier of equal ones). Rows
 * come ordered by rank; a row without a peak or a time is left out. */
static size_t rank_peaks(const cJSON *ranks, rank_peak *out)
{
    size_t n = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, ranks)
    {
        rank_peak p;
        if (!get_int(row, "rank", &p.rank) || !get_int(row, "peak_allocated_bytes", &p.bytes) ||
            !get_int(row, "peak_allocated_ts_ns", &p.ts))
            continue;
        rank_peak *last = n ? &out[n - 1] : NULL;
        if (!last || last->rank != p.rank)
            out[n++] = p;
        else if (p.bytes > last->bytes || (p.bytes == last->bytes && p.ts < last->ts))
            *last = p;
    }
    return n;
}

/* The earliest peak but `skip` (ties: the lower rank, which comes first);
 * -1 when there is none. */
static long earliest(const rank_peak *p, size_t n, long skip)
{
    long best = -1;
    for (size_t i = 0; i < n; i++)
        if ((long)i != skip && (best < 0 || p[i].ts < p[best].ts))
            best = (long)i;
    return best;
}

static void fill_first(cJSON *summary, const cJSON *ranks)
{
    rank_peak *p = vr_xmalloc(((size_t)cJSON_GetArraySize(ranks) + 1) * sizeof *p);
    size_t n = rank_peaks(ranks, p);
    long first = earliest(p, n, -1);
    long next = first < 0 ? -1 : earliest(p, n, first);
    if (first >= 0) {
        set_int(summary, "first_rank", p[first].rank);
        set_int(summary, "first_peak_ts_ns", p[first].ts);
    }
    if (next >= 0) {
        set_int(summary, "next_rank", p[next].rank);
        set_int(summary, "first_lead_ns", vr_sat_sub(p[next].ts, p[first].ts));
    }
    free(p);
}

/* The one row of ranks_summary, or NULL (then err says why, if anything
 * failed). */
static cJSON *summary_row(vr_db *db, vr_error *err, int *failed)
{
    cJSON *rows = query(db, "ranks_summary", err);
    *failed = rows == NULL;
    cJSON *row = rows ? cJSON_DetachItemFromArray(rows, 0) : NULL;
    cJSON_Delete(rows);
    return row;
}

int vr_ranks_add(vr_db *db, cJSON *doc, vr_error *err)
{
    cJSON *ranks = query(db, "rank_devices", err);
    if (!ranks)
        return -1;
    int failed = 0;
    cJSON *summary = ranks->child ? summary_row(db, err, &failed) : NULL;
    if (!summary) {
        cJSON_Delete(ranks);
        return failed ? -1 : 0;
    }
    copy_times(ranks, cJSON_GetObjectItemCaseSensitive(doc, "devices"),
               cJSON_GetObjectItemCaseSensitive(doc, "more_devices"));
    fill_first(summary, ranks);
    cJSON_AddItemToObject(doc, "ranks", ranks);
    cJSON_AddItemToObject(doc, "ranks_summary", summary);
    return 0;
}

/*-*** what a report shows of many ranks ***/

/* A rank the summary names (the largest, the first, the next) is shown. */
static int named_rank(const cJSON *summary, long long rank)
{
    static const char *const keys[] = {"largest_rank", "first_rank", "next_rank"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        long long v;
        if (get_int(summary, keys[k], &v) && v == rank)
            return 1;
    }
    return 0;
}

void vr_ranks_view(cJSON *view)
{
    cJSON *ranks = cJSON_GetObjectItemCaseSensitive(view, "ranks");
    size_t n = (size_t)cJSON_GetArraySize(ranks), i = 0;
    if (n <= VR_MANY_IN_FULL)
        return;
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(view, "ranks_summary");
    vr_many_rank *r = vr_xmalloc(n * sizeof *r);
    unsigned char *keep = vr_xmalloc(n);
    const cJSON *row;
    cJSON_ArrayForEach(row, ranks)
    {
        long long rank = -1, peak = 0;
        get_int(row, "rank", &rank);
        r[i].flagged = named_rank(summary, rank);
        r[i].has_weight = get_int(row, "peak_allocated_bytes", &peak);
        r[i].weight = peak;
        i++;
    }
    vr_many_choose(r, n, VR_MANY_IN_FULL, keep);
    cJSON *more = vr_many_split(ranks, keep);
    cJSON_AddItemToObject(view, "ranks_more",
                          vr_many_summary((size_t)cJSON_GetArraySize(ranks), more,
                                          "peak_allocated_bytes"));
    cJSON_Delete(more);
    free(keep);
    free(r);
}
