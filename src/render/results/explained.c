/* The device's "explained" and "unknown_at_peak" (explained.h). */
#include "render/results/explained.h"

#include "render/results/doc.h"

static const char report_sql[] = "schemas/report.sql";

/* Each inference's figures, in its own order. */
static int add_evidence(vr_db *db, cJSON *row, long long id, vr_error *err)
{
    long long position = 0;
    cJSON *pos = cJSON_DetachItemFromObjectCaseSensitive(row, "position");
    vr_results_int(pos, &position);
    cJSON_Delete(pos);
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "peak_evidence", err);
    if (!st || vr_db_bind_int(st, ":device", id, err) < 0 ||
        vr_db_bind_int(st, ":position", position, err) < 0)
        return -1;
    cJSON *list = vr_results_rows(db, st, err);
    if (!list)
        return -1;
    cJSON_AddItemToObject(row, "evidence", list);
    return 0;
}

static int add_unknown(vr_db *db, cJSON *dev, long long id, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "peak_unknown", err);
    if (!st || vr_db_bind_int(st, ":device", id, err) < 0)
        return -1;
    cJSON *list = vr_results_rows(db, st, err);
    if (!list)
        return -1;
    cJSON *row = cJSON_DetachItemFromArray(list, 0);
    cJSON_Delete(list);
    cJSON_AddItemToObject(dev, "unknown_at_peak", row ? row : cJSON_CreateNull());
    return 0;
}

int vr_explained_add(vr_db *db, cJSON *dev, long long id, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "peak_explained", err);
    if (!st || vr_db_bind_int(st, ":device", id, err) < 0)
        return -1;
    cJSON *list = vr_results_rows(db, st, err);
    if (!list)
        return -1;
    cJSON_AddItemToObject(dev, "explained", list);
    cJSON *row;
    cJSON_ArrayForEach(row, list) if (add_evidence(db, row, id, err) < 0) return -1;
    return add_unknown(db, dev, id, err);
}
