#include "render/results/ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/sat.h"
#include "render/results/doc.h"

/* One rank is a one-process report: comparing needs two. */
static const int min_ranks = 2;

static sqlite3_stmt *bound(vr_db *db, const char *block, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/report.sql", block, err);
    return st && vr_db_bind_int(st, ":min_ranks", min_ranks, err) == 0 ? st : NULL;
}

sqlite3_stmt *vr_ranks_stmt(vr_db *db, vr_error *err)
{
    return bound(db, "rank_devices", err);
}

static void set_int(cJSON *obj, const char *key, long long v)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", v);
    cJSON_ReplaceItemInObjectCaseSensitive(obj, key, cJSON_CreateRaw(num));
}

/*-*** which rank peaked first ***/

typedef struct {
    long long rank, bytes, ts;
} rank_peak;

/* Kept as the rows come, ordered by rank: the rank being read (its peak
 * is its highest device's, the earlier of equal ones), the earliest of
 * the ranks' peaks and the earliest but that one (ties: the lower rank,
 * which comes first). Three records, however many ranks. */
typedef struct {
    rank_peak cur, first, next;
    int has_cur, has_first, has_next;
} first_peaks;

static void rank_done(first_peaks *f, rank_peak p)
{
    if (!f->has_first || p.ts < f->first.ts) {
        f->next = f->first;
        f->has_next = f->has_first;
        f->first = p;
        f->has_first = 1;
    } else if (!f->has_next || p.ts < f->next.ts) {
        f->next = p;
        f->has_next = 1;
    }
}

/* A row without a peak or a time is left out. */
static void peak_row(first_peaks *f, const rank_peak *p)
{
    if (f->has_cur && f->cur.rank == p->rank) {
        if (p->bytes > f->cur.bytes || (p->bytes == f->cur.bytes && p->ts < f->cur.ts))
            f->cur = *p;
        return;
    }
    if (f->has_cur)
        rank_done(f, f->cur);
    f->cur = *p;
    f->has_cur = 1;
}

static void fill_first(cJSON *summary, first_peaks *f)
{
    if (f->has_cur)
        rank_done(f, f->cur);
    f->has_cur = 0;
    if (f->has_first) {
        set_int(summary, "first_rank", f->first.rank);
        set_int(summary, "first_peak_ts_ns", f->first.ts);
    }
    if (f->has_next) {
        set_int(summary, "next_rank", f->next.rank);
        set_int(summary, "first_lead_ns", vr_sat_sub(f->next.ts, f->first.ts));
    }
}

/*-*** the rows, read once ***/

/* What the first read keeps: the peaks, and for a view each row's rank
 * and small record (many.h; flagged once the summary is known). */
typedef struct {
    first_peaks peaks;
    size_t n, rank_cap, r_cap;
    long long *rank;
    vr_many_rank *r;
} rows_read;

static void keep_record(rows_read *rr, long long rank, int has_peak, long long peak)
{
    vr_xgrow(&rr->rank, &rr->rank_cap, rr->n + 1, sizeof *rr->rank, 64);
    vr_xgrow(&rr->r, &rr->r_cap, rr->n + 1, sizeof *rr->r, 64);
    rr->rank[rr->n] = rank;
    rr->r[rr->n] = (vr_many_rank){0, has_peak, peak};
}

static int read_rows(vr_db *db, sqlite3_stmt *st, int view, rows_read *rr, vr_error *err)
{
    int rank_col = vr_results_column(st, "rank"),
        peak_col = vr_results_column(st, "peak_allocated_bytes"),
        ts_col = vr_results_column(st, "peak_allocated_ts_ns");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rank_peak p = {-1, 0, 0};
        int has_rank = vr_results_column_int(st, rank_col, &p.rank);
        int has_peak = vr_results_column_int(st, peak_col, &p.bytes);
        if (has_rank && has_peak && vr_results_column_int(st, ts_col, &p.ts))
            peak_row(&rr->peaks, &p);
        if (view)
            keep_record(rr, has_rank ? p.rank : -1, has_peak, has_peak ? p.bytes : 0);
        rr->n++;
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading results");
}

/* The one row of ranks_summary, or NULL (then err says why, if anything
 * failed). */
static cJSON *summary_row(vr_db *db, vr_error *err, int *failed)
{
    sqlite3_stmt *st = bound(db, "ranks_summary", err);
    cJSON *rows = st ? vr_results_rows(db, st, err) : NULL;
    *failed = rows == NULL;
    cJSON *row = rows ? cJSON_DetachItemFromArray(rows, 0) : NULL;
    cJSON_Delete(rows);
    return row;
}

/*-*** what a report shows of many ranks ***/

/* A rank the summary names (the largest, the first, the next) is shown. */
static int named_rank(const cJSON *summary, long long rank)
{
    static const char *const keys[] = {"largest_rank", "first_rank", "next_rank"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        long long v;
        if (vr_results_member_int(summary, keys[k], &v) && v == rank)
            return 1;
    }
    return 0;
}

/* The rows shown, read again; `more` when some are left out. */
static int shown_rows(vr_db *db, sqlite3_stmt *st, rows_read *rr, vr_ranks *out, vr_error *err)
{
    for (size_t i = 0; i < rr->n; i++)
        rr->r[i].flagged = named_rank(out->summary, rr->rank[i]);
    unsigned char *keep = vr_xmalloc(rr->n + 1);
    vr_many_choose(rr->r, rr->n, VR_MANY_IN_FULL, keep);
    out->rows = vr_results_rows_kept(db, st, keep, rr->n, err);
    if (out->rows && !vr_many_all_kept(keep, rr->n))
        out->more = vr_many_summary(rr->r, rr->n, keep, "peak_allocated_bytes");
    free(keep);
    const cJSON *row;
    cJSON_ArrayForEach(row, out->rows)
    {
        long long id;
        if (out->ndevices < VR_MANY_IN_FULL && vr_results_member_int(row, "device_db_id", &id))
            out->devices[out->ndevices++] = id;
    }
    return out->rows ? 0 : -1;
}

int vr_ranks_read(vr_db *db, int view, vr_ranks *out, vr_error *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st = vr_ranks_stmt(db, err);
    rows_read rr = {0};
    int rc = st ? read_rows(db, st, view, &rr, err) : -1, failed = 0;
    if (rc == 0 && rr.n)
        out->summary = summary_row(db, err, &failed);
    if (failed)
        rc = -1;
    if (out->summary) {
        fill_first(out->summary, &rr.peaks);
        rc = view ? shown_rows(db, st, &rr, out, err) : (out->rows = cJSON_CreateArray(), 0);
    }
    free(rr.rank);
    free(rr.r);
    if (rc < 0)
        vr_ranks_free(out);
    return rc;
}

void vr_ranks_attach(cJSON *doc, vr_ranks *r)
{
    if (!r->summary || !r->rows)
        return;
    cJSON_AddItemToObject(doc, "ranks", r->rows);
    cJSON_AddItemToObject(doc, "ranks_summary", r->summary);
    if (r->more)
        cJSON_AddItemToObject(doc, "ranks_more", r->more);
    r->rows = r->summary = r->more = NULL;
}

void vr_ranks_free(vr_ranks *r)
{
    cJSON_Delete(r->rows);
    cJSON_Delete(r->summary);
    cJSON_Delete(r->more);
    r->rows = r->summary = r->more = NULL;
}
