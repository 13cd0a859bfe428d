#include "analyze.h"

#include "../util/timing.h"

static const char analyze_sql[] = "schemas/analyze.sql";

static int run(vr_db *db, const char *block, vr_error *err)
{
    double t = vr_now();
    int rc = vr_db_exec_named(db, analyze_sql, block, err);
    vr_timing(block, t);
    return rc;
}

static int timed(int (*pass)(vr_db *, vr_error *), const char *name, vr_db *db,
                 vr_error *err)
{
    double t = vr_now();
    int rc = pass(db, err);
    vr_timing(name, t);
    return rc;
}

int vr_analyze(vr_db *db, vr_error *err)
{
    if (vr_db_begin(db, err) < 0)
        return -1;
    int rc = run(db, "index_mem_by_device", err) < 0 ||
                     run(db, "index_mem_by_thread", err) < 0 ||
                     run(db, "index_ops_by_thread", err) < 0 || run(db, "clear_derived", err) < 0 ||
                     run(db, "rebuild_totals", err) < 0 ||
                     timed(vr_analyze_attribute, "attribute", db, err) < 0 ||
                     timed(vr_analyze_timeline, "timeline", db, err) < 0 ||
                     run(db, "mark_analysis_complete", err) < 0
                 ? -1
                 : 0;
    double t = vr_now();
    if (rc == 0) {
        rc = vr_db_commit(db, err);
        vr_timing("analyze commit", t);
        return rc;
    }
    vr_db_rollback(db);
    return -1;
}

int vr_analyze_is_current(vr_db *db, int *current, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, analyze_sql, "analysis_complete", err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    *current = rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(db, err, "reading the analysis state");
    return 0;
}
