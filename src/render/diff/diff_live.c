/* Each device's allocation sites live at its peak, in full (diff.h), read
 * from its database by the report's own queries (report.sql) with no
 * limit, by the report's rule: a snapshot's by the first frame outside
 * torch (top_sites: its alloc_site rows), else, when the peak's
 * allocations were placed, by module (live_at_peak_by_line, summed over
 * the categories and lines), else by operator (live_at_peak_by_operator).
 * Names are kept as the document keeps text (vr_results_text), so they
 * match the single report's; a name may have several rows (a module in
 * several categories), which the comparison sums (diff_sites.c). */
#include <stdlib.h>
#include <string.h>

#include "render/diff/diff.h"
#include "render/results/doc.h"
#include "render/results/peak_live.h"
#include "util/alloc.h"

static const char report_sql[] = "schemas/report.sql";

typedef struct {
    char *name;
    long long bytes;
} row;

typedef struct {
    row *v;
    int n, cap;
} rows;

/* How each rule names its sites and where the query holds them. */
typedef struct {
    const char *by, *query, *none;
    int name_col, bytes_col, needs_peak;
} rule;

static const rule rules[] = {
    {"frame", "top_sites", "(torch's own frames)", 0, 1, 0},
    {"module", "live_at_peak_by_line", "(outside any module)", 3, 9, 1},
    {"operator", "live_at_peak_by_operator", "(no operator)", 3, 4, 1},
};

static void add_row(rows *r, sqlite3_stmt *st, const rule *how)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->v = vr_xrealloc(r->v, (size_t)r->cap * sizeof *r->v);
    }
    vr_buf b = VR_BUF_INIT;
    if (sqlite3_column_type(st, how->name_col) == SQLITE_NULL)
        vr_buf_puts(&b, how->none);
    else
        vr_results_text(&b, (const char *)sqlite3_column_text(st, how->name_col),
                        (size_t)sqlite3_column_bytes(st, how->name_col));
    r->v[r->n].name = b.data ? vr_buf_detach(&b) : vr_xstrdup("");
    r->v[r->n++].bytes = sqlite3_column_int64(st, how->bytes_col);
}

static int read_rows(vr_db *db, const rule *how, long long device, long long peak, rows *r,
                     vr_error *err)
{
    if (how->needs_peak && vr_results_peak_live(db, device, peak, err) < 0)
        return -1;
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, how->query, err);
    if (!st || vr_db_bind_int(st, ":device", device, err) < 0)
        return -1;
    if (how->needs_peak ? vr_db_bind_int(st, ":peak_event", peak, err) < 0
                        : vr_db_bind_int(st, ":limit", -1, err) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        add_row(r, st, how);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading the sites live at the peak");
}

/* One scalar of a one-row query on the device (and its peak). */
static int scalar(vr_db *db, const char *query, long long device, long long peak, int col,
                  long long *v, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, query, err);
    if (!st || vr_db_bind_int(st, ":device", device, err) < 0 ||
        (peak >= 0 && vr_db_bind_int(st, ":peak_event", peak, err) < 0))
        return -1;
    int rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW && sqlite3_column_type(st, col) != SQLITE_NULL
             ? sqlite3_column_int64(st, col)
             : -1;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, query);
}

/* The rule the device's peak is read by (*how), its rows read into r;
 * -1 when the database fails (err set). */
static int device_rows(vr_db *db, long long device, rows *r, const rule **how, vr_error *err)
{
    long long peak, placed;
    *how = &rules[0];
    if (read_rows(db, &rules[0], device, -1, r, err) < 0)
        return -1;
    if (r->n > 0)
        return 0;
    if (scalar(db, "peak_event", device, -1, 0, &peak, err) < 0)
        return -1;
    if (peak < 0)
        return 0;
    if (scalar(db, "locations_recorded", device, peak, 1, &placed, err) < 0)
        return -1;
    *how = placed > 0 ? &rules[1] : &rules[2];
    return read_rows(db, *how, device, peak, r, err);
}

static int device_sites(vr_db *db, cJSON *dev, vr_error *err)
{
    long long id;
    rows r = {NULL, 0, 0};
    const rule *how = NULL;
    int rc = vr_results_member_int(dev, "db_id", &id) ? device_rows(db, id, &r, &how, err) : 0;
    if (rc < 0 || !how) {
        for (int i = 0; i < r.n; i++)
            free(r.v[i].name);
        free(r.v);
        return rc;
    }
    cJSON *out = cJSON_AddObjectToObject(dev, "diff_sites");
    cJSON_AddStringToObject(out, "by", how->by);
    cJSON *list = cJSON_AddArrayToObject(out, "sites");
    for (int i = 0; i < r.n; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "site", r.v[i].name);
        cJSON_AddItemToObject(s, "bytes", vr_diff_int(r.v[i].bytes));
        cJSON_AddItemToArray(list, s);
        free(r.v[i].name);
    }
    free(r.v);
    return 0;
}

int vr_diff_add_sites(vr_db *db, cJSON *doc, vr_error *err)
{
    cJSON *dev;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(doc, "devices"))
    {
        if (device_sites(db, dev, err) < 0)
            return -1;
    }
    return 0;
}
