/* The devices past those a side's document holds in full (diff.h): the
 * results document leaves more_devices[] for the JSON writer to stream
 * (render/out/json_out.h); the diff pairs them too, so it reads them here,
 * as that writer does: report.sql's devices rows whose db_id devices[]
 * does not hold, each the row's object (vr_results_row). */
#include "render/diff/diff.h"
#include "render/results/doc.h"

static int in_full(const cJSON *devices, const cJSON *row)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(row, "db_id"), *d;
    cJSON_ArrayForEach(d, devices)
    {
        if (id && cJSON_Compare(id, cJSON_GetObjectItemCaseSensitive(d, "db_id"), 1))
            return 1;
    }
    return 0;
}

int vr_diff_add_more_devices(vr_db *db, cJSON *doc, vr_error *err)
{
    const cJSON *devices = cJSON_GetObjectItemCaseSensitive(doc, "devices");
    cJSON *more = cJSON_GetObjectItemCaseSensitive(doc, "more_devices");
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(doc, "devices_summary");
    if (!cJSON_IsArray(more) || !cJSON_IsObject(summary))
        return 0; /* 16 devices or fewer: all in full */
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/report.sql", "devices", err);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        cJSON *row = vr_results_row(st);
        if (in_full(devices, row))
            cJSON_Delete(row);
        else
            cJSON_AddItemToArray(more, row);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading the devices not in full");
}
