#include "ranks.h"

#include <stdio.h>
#include <stdlib.h>

#include "../util/buf.h"
#include "../util/sat.h"
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

static const cJSON *device_of(const cJSON *devices, long long db_id)
{
    const cJSON *d;
    long long id;
    cJSON_ArrayForEach(d, devices)
    {
        if (get_int(d, "db_id", &id) && id == db_id)
            return d;
    }
    return NULL;
}

/* Each row's peak time is its device's, as the devices block put it on
 * the common clock. */
static void copy_times(cJSON *ranks, const cJSON *devices)
{
    cJSON *row;
    cJSON_ArrayForEach(row, ranks)
    {
        long long id;
        const cJSON *d = get_int(row, "device_db_id", &id) ? device_of(devices, id) : NULL;
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(d, "peak_allocated_ts_ns");
        if (ts)
            cJSON_ReplaceItemInObjectCaseSensitive(row, "peak_allocated_ts_ns",
                                                   cJSON_Duplicate(ts, 1));
    }
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
    copy_times(ranks, cJSON_GetObjectItemCaseSensitive(doc, "devices"));
    fill_first(summary, ranks);
    cJSON_AddItemToObject(doc, "ranks", ranks);
    cJSON_AddItemToObject(doc, "ranks_summary", summary);
    return 0;
}
