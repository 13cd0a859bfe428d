/* The memory chart's series (chart_timeline.h).
 *
 * In time order, report.sql's timeline reads the events through
 * mem_event_device_source_time and seeks the table for each one's totals:
 * some 3,700 instructions an event, half the report of a large snapshot.
 * When every event is the device's one chosen source's (an allocator
 * snapshot's database, or a single trace's), the table is read in its own
 * order instead, as the timeline pass reads it (src/analyze/timeline.c): a
 * snapshot writes its events in time order but for its start marker,
 * written last. The rows out of place are guessed among the table's last
 * TAIL_ROWS (those that come before a row ahead of them there), taken
 * aside and put back at their places in time order; every other row is
 * checked to come after the one before it. When one does not, the points
 * added are cleared and the events read in time order as before, so the
 * chart is the same either way. */
#include "render/out/chart_timeline.h"

#include <stdlib.h>

#include "util/sat.h"

static const char sql[] = "schemas/report.sql";

#define TAIL_ROWS 64

/* An event as the chart takes it, with its keys in time order. */
typedef struct {
    int64_t id, ts;
    int64_t t; /* ts_ns plus the clock shift, as the query adds it */
    int64_t allocated, reserved;
    int has_allocated, has_reserved;
} chart_row;

typedef struct {
    vr_db *db;
    vr_chart *c;
    int64_t shift; /* the caller's, added to every time */
    int64_t clock; /* the source's clock against the device's, in SQL */
    vr_error *err;
    chart_row aside[TAIL_ROWS]; /* the rows out of place, in time order */
    size_t naside, next_aside;
    int64_t ids[TAIL_ROWS]; /* their ids, rising: skipped in the table's order */
    size_t nids, next_id;
    chart_row top; /* the last row taken in table order */
    int seen, out_of_order;
} table_read;

static int row_before(const chart_row *a, const chart_row *b)
{
    return a->ts < b->ts || (a->ts == b->ts && a->id < b->id);
}

static int compare_rows(const void *a, const void *b)
{
    const chart_row *x = a, *y = b;
    return row_before(x, y) ? -1 : row_before(y, x) ? 1 : 0;
}

static int64_t opt_value(sqlite3_value *v, int *has)
{
    *has = sqlite3_value_type(v) != SQLITE_NULL;
    return *has ? sqlite3_value_int64(v) : 0;
}

/* Values id, ts_ns, ts_ns + clock, total_allocated, total_reserved (a
 * function's arguments, or a row's columns); 0 when ts_ns is not an
 * integer (SQLite's order is then not C's). */
static int read_values(sqlite3_value **v, chart_row *r)
{
    r->id = sqlite3_value_int64(v[0]);
    r->ts = sqlite3_value_int64(v[1]);
    r->t = sqlite3_value_int64(v[2]);
    r->allocated = opt_value(v[3], &r->has_allocated);
    r->reserved = opt_value(v[4], &r->has_reserved);
    return sqlite3_value_type(v[1]) == SQLITE_INTEGER;
}

static int read_row(sqlite3_stmt *st, chart_row *r)
{
    sqlite3_value *v[5];
    for (int i = 0; i < 5; i++)
        v[i] = sqlite3_column_value(st, i);
    return read_values(v, r);
}

static void add_row(const table_read *tr, const chart_row *r)
{
    int64_t t = vr_sat_add(r->t, tr->shift);
    if (r->has_allocated)
        vr_chart_add_point(tr->c, 0, t, r->allocated);
    if (r->has_reserved)
        vr_chart_add_point(tr->c, 1, t, r->reserved);
}

/* The read by time (report.sql's timeline): the chosen sources' events. */
static int fill_by_time(vr_db *db, vr_chart *c, int64_t device, int64_t shift, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "timeline", err);
    if (!st || vr_db_bind_int(st, ":device", device, err) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t t = vr_sat_add(sqlite3_column_int64(st, 0), shift);
        if (sqlite3_column_type(st, 1) != SQLITE_NULL)
            vr_chart_add_point(c, 0, t, sqlite3_column_int64(st, 1));
        if (sqlite3_column_type(st, 2) != SQLITE_NULL)
            vr_chart_add_point(c, 1, t, sqlite3_column_int64(st, 2));
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading the timeline");
}

/* Whether every event is the device's and its one chosen source's
 * (*one), and that source's clock against the device's (tr->clock). */
static int one_source(table_read *tr, int64_t device, int *one)
{
    sqlite3_stmt *st = vr_db_stmt(tr->db, sql, "timeline_one_source", tr->err);
    if (!st || vr_db_bind_int(st, ":device", device, tr->err) < 0)
        return -1;
    int rc = sqlite3_step(st);
    *one = rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER;
    tr->clock = *one ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE
               ? 0
               : vr_db_fail(tr->db, tr->err, "reading the timeline");
}

/* The guess: the table's last rows that come before a row ahead of them
 * there, kept aside in time order. *ok 0: a time that is not an integer. */
static int guess_aside(table_read *tr, int *ok)
{
    sqlite3_stmt *st = vr_db_stmt(tr->db, sql, "timeline_last_events", tr->err);
    if (!st || vr_db_bind_int(st, ":rows", TAIL_ROWS, tr->err) < 0 ||
        vr_db_bind_int(st, ":clock", tr->clock, tr->err) < 0)
        return -1;
    chart_row top = {0}, r;
    int rc, seen = 0;
    *ok = 1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        *ok &= read_row(st, &r);
        if (seen && row_before(&r, &top) && tr->naside < TAIL_ROWS) {
            tr->ids[tr->nids++] = r.id; /* rising: the rows come by id */
            tr->aside[tr->naside++] = r;
        } else {
            top = r;
            seen = 1;
        }
    }
    sqlite3_reset(st);
    qsort(tr->aside, tr->naside, sizeof *tr->aside, compare_rows);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(tr->db, tr->err, "reading the timeline");
}

/* One row of the table's order: a row aside is skipped, those due
 * before this one go first. 1: it comes before the row before it. */
static int on_table_row(table_read *tr, const chart_row *r, int is_int, chart_row *top, int *seen)
{
    if (tr->next_id < tr->nids && tr->ids[tr->next_id] == r->id) {
        tr->next_id++;
        return 0;
    }
    if (!is_int || (*seen && row_before(r, top)))
        return 1;
    *top = *r;
    *seen = 1;
    while (tr->next_aside < tr->naside && row_before(&tr->aside[tr->next_aside], r))
        add_row(tr, &tr->aside[tr->next_aside++]);
    add_row(tr, r);
    return 0;
}

/* vr_chart_event(id, ts_ns, ts_ns + clock, total_allocated,
 * total_reserved): one row of the read in table order, taken inside
 * SQLite's scan (no row handed back, no column calls: a row a step cost
 * three times as much); true at a row out of order, which stops the scan. */
static void sql_chart_event(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    table_read *tr = sqlite3_user_data(ctx);
    chart_row r;
    int is_int = read_values(argv, &r);
    tr->out_of_order = on_table_row(tr, &r, is_int, &tr->top, &tr->seen);
    sqlite3_result_int(ctx, tr->out_of_order);
}

static const vr_db_function chart_functions[] = {
    {"vr_chart_event", 5, sql_chart_event, NULL, NULL},
};

/* tr NULL: removes them, so that none points at a read gone. */
static int register_functions(vr_db *db, table_read *tr, vr_error *err)
{
    return vr_db_functions(db, chart_functions, sizeof chart_functions / sizeof *chart_functions,
                           tr, err);
}

/* Every row in table order, those aside at their places; 1: a row was
 * out of order (the points added are then to be cleared). */
static int scan_table(table_read *tr)
{
    sqlite3_stmt *st = vr_db_stmt(tr->db, sql, "timeline_in_table_order", tr->err);
    if (!st || vr_db_bind_int(st, ":clock", tr->clock, tr->err) < 0)
        return -1;
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (tr->out_of_order)
        return 1;
    if (rc != SQLITE_DONE)
        return vr_db_fail(tr->db, tr->err, "reading the timeline");
    while (tr->next_aside < tr->naside)
        add_row(tr, &tr->aside[tr->next_aside++]);
    return 0;
}

static int read_in_table_order(table_read *tr)
{
    if (register_functions(tr->db, tr, tr->err) < 0)
        return -1;
    int rc = scan_table(tr);
    vr_error ignored = VR_ERROR_INIT;
    if (register_functions(tr->db, NULL, rc < 0 ? &ignored : tr->err) < 0)
        return -1; /* still registered: they would point at this frame's read */
    return rc;
}

int vr_chart_fill_timeline(vr_db *db, vr_chart *c, int64_t device, int64_t shift, vr_error *err)
{
    table_read tr = {.db = db, .c = c, .shift = shift, .err = err};
    int one = 0, ok = 0, rc = one_source(&tr, device, &one);
    if (rc == 0 && one)
        rc = guess_aside(&tr, &ok);
    if (rc == 0 && one && ok)
        rc = read_in_table_order(&tr);
    if (rc < 0)
        return -1;
    if (rc == 1)
        vr_chart_clear_points(c);
    return rc == 1 || !one || !ok ? fill_by_time(db, c, device, shift, err) : 0;
}
