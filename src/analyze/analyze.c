#include "analyze.h"

static const char analyze_sql[] = "schemas/analyze.sql";

static int run(vr_db *db, const char *block, vr_error *err)
{
    return vr_db_exec_named(db, analyze_sql, block, err);
}

int vr_analyze(vr_db *db, vr_error *err)
{
    if (vr_db_begin(db, err) < 0)
        return -1;
    int rc = run(db, "indexes", err) < 0 || run(db, "clear_derived", err) < 0 ||
                     run(db, "rebuild_totals", err) < 0 || vr_analyze_attribute(db, err) < 0 ||
                     vr_analyze_timeline(db, err) < 0
                 ? -1
                 : 0;
    if (rc == 0)
        return vr_db_commit(db, err);
    vr_db_rollback(db);
    return -1;
}
