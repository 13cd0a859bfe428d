/* Each device's allocated memory over time, kept in its results document
 * for the diff's chart (diff.h): the report's timeline (report.sql's
 * `timeline`, as the report's chart reads it) in VR_DIFF_TIMELINE_POINTS
 * buckets over the device's span, each bucket's highest point, so that
 * the peak is never lost; and where each profiler step starts
 * (report.sql's `step_marks`, the report chart's step lines), the first
 * mark of each step, so that the diff can align two runs on a step. Times
 * count from the device's first memory event. */
#include <stdlib.h>
#include <string.h>

#include "render/diff/diff.h"
#include "render/results/doc.h"
#include "util/alloc.h"
#include "util/sat.h"

typedef struct {
    int64_t t, bytes;
    int used;
} bucket;

static void put_point(bucket *b, int64_t lo, int64_t span, int64_t t, int64_t bytes)
{
    int64_t off = t < lo ? 0 : vr_sat_sub(t, lo);
    int i = span > 0 ? (int)((double)off / (double)span * (VR_DIFF_TIMELINE_POINTS - 1)) : 0;
    if (i < 0)
        i = 0;
    if (i >= VR_DIFF_TIMELINE_POINTS)
        i = VR_DIFF_TIMELINE_POINTS - 1;
    if (!b[i].used || bytes > b[i].bytes)
        b[i] = (bucket){off, bytes, 1};
}

typedef struct {
    int64_t step, t;
} mark;

static int by_step(const void *x, const void *y)
{
    const mark *a = x, *b = y;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    return a->t < b->t ? -1 : a->t > b->t;
}

/* "diff_step_starts": [[step, ns since the first memory event]], each
 * step once (its earliest mark), by step. */
static int step_starts(vr_db *db, cJSON *dev, int64_t lo, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/report.sql", "step_marks", err);
    if (!st || vr_db_bind_int(st, ":device", vr_results_int_or(dev, "db_id", -1), err) < 0)
        return -1;
    mark *m = NULL;
    size_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 1) == SQLITE_NULL)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            m = vr_xrealloc(m, cap * sizeof *m);
        }
        int64_t t = sqlite3_column_int64(st, 0);
        m[n++] = (mark){sqlite3_column_int64(st, 1), t < lo ? 0 : vr_sat_sub(t, lo)};
    }
    sqlite3_reset(st);
    if (n > 1)
        qsort(m, n, sizeof *m, by_step);
    cJSON *marks = cJSON_AddArrayToObject(dev, "diff_step_starts");
    for (size_t i = 0; i < n; i++)
        if (i == 0 || m[i].step != m[i - 1].step) {
            cJSON *p = cJSON_CreateArray();
            cJSON_AddItemToArray(p, vr_diff_int(m[i].step));
            cJSON_AddItemToArray(p, vr_diff_int(m[i].t));
            cJSON_AddItemToArray(marks, p);
        }
    free(m);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading where the steps start");
}

static int device_timeline(vr_db *db, cJSON *dev, bucket *b, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/report.sql", "timeline", err);
    if (!st || vr_db_bind_int(st, ":device", vr_results_int_or(dev, "db_id", -1), err) < 0)
        return -1;
    int64_t base = vr_results_int_or(dev, "base_time_ns", 0);
    int64_t lo = vr_sat_sub(vr_results_int_or(dev, "start_ts_ns", 0), base);
    int64_t span = vr_sat_sub(vr_sat_sub(vr_results_int_or(dev, "end_ts_ns", 0), base), lo);
    memset(b, 0, VR_DIFF_TIMELINE_POINTS * sizeof *b);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (sqlite3_column_type(st, 1) != SQLITE_NULL)
            put_point(b, lo, span, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return vr_db_fail(db, err, "reading the timeline");
    cJSON *points = cJSON_AddArrayToObject(dev, "diff_timeline");
    for (int i = 0; i < VR_DIFF_TIMELINE_POINTS; i++)
        if (b[i].used) {
            cJSON *p = cJSON_CreateArray();
            cJSON_AddItemToArray(p, vr_diff_int(b[i].t));
            cJSON_AddItemToArray(p, vr_diff_int(b[i].bytes));
            cJSON_AddItemToArray(points, p);
        }
    return step_starts(db, dev, lo, err);
}

int vr_diff_add_timelines(vr_db *db, cJSON *doc, vr_error *err)
{
    bucket *b = vr_xcalloc(VR_DIFF_TIMELINE_POINTS, sizeof *b);
    cJSON *dev;
    int rc = 0;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(doc, "devices"))
    {
        if ((rc = device_timeline(db, dev, b, err)) < 0)
            break;
    }
    free(b);
    return rc;
}
