/* The allocations live at a device's peak (peak_live.h).
 *
 * Three parts of the report read them (top_allocations, the live-at-peak
 * tree by line or by operator, peak_by_module), and diff's rows live at
 * the peak: each scanned the whole
 * allocation table, some 1,700 instructions a row to test whether it was
 * live at the peak, for the few thousand that were. They are found here
 * once a device and peak, in one scan, and kept in a temporary table by
 * (device, peak event, allocation id): the parts read them in the order
 * of their ids, the order of the scan they replace, so their rows come out
 * the same. */
#include "render/results/peak_live.h"

static const char sql[] = "schemas/report.sql";

static int step_bound(vr_db *db, const char *block, long long device, long long peak, int *row,
                      vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, block, err);
    if (!st || vr_db_bind_int(st, ":device", device, err) < 0 ||
        vr_db_bind_int(st, ":peak_event", peak, err) < 0)
        return -1;
    int rc = sqlite3_step(st);
    *row = rc == SQLITE_ROW && sqlite3_column_int(st, 0) != 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE
               ? 0
               : vr_db_fail(db, err, "finding what was live at the peak");
}

int vr_results_peak_live(vr_db *db, long long device, long long peak_event, vr_error *err)
{
    int found = 0, ignored;
    if (vr_db_exec_named(db, sql, "peak_live_tables", err) < 0 ||
        step_bound(db, "peak_live_found", device, peak_event, &found, err) < 0)
        return -1;
    if (found)
        return 0;
    return step_bound(db, "peak_live_fill", device, peak_event, &ignored, err) < 0 ||
                   step_bound(db, "peak_live_mark", device, peak_event, &ignored, err) < 0
               ? -1
               : 0;
}

int vr_results_peak_live_reset(vr_db *db, vr_error *err)
{
    return vr_db_exec_named(db, sql, "peak_live_tables", err) < 0 ||
                   vr_db_exec_named(db, sql, "peak_live_reset", err) < 0
               ? -1
               : 0;
}
