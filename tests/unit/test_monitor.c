/*-*** test_monitor.c: the monitor readings and GPU identity of import/monitor ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>
#include <string.h>
#include <sqlite3.h>

#include "db/db.h"
#include "import/monitor.h"
#include "import/reader.h"

#include "harness.h"

/* nvidia-smi's sizes and stamps (src/import/monitor.c). */
static void test_monitor_values(void)
{
    static const struct {
        const char *text;
        int64_t unit;
        int ok;
        int64_t bytes;
    } sizes[] = {
        {"81559 MiB", 1, 1, INT64_C(81559) << 20},
        {" 479MiB ", 1, 1, INT64_C(479) << 20},
        {"4096", 1 << 20, 1, INT64_C(4096) << 20},
        {"0 B", 1, 1, 0},
        {"1.5 GiB", 1, 1, INT64_C(3) << 29},
        {"2 KB", 1, 1, 2048},
        {"[N/A]", 1, 0, 0},
        {"N/A", 1 << 20, 0, 0},
        {"[Not Supported]", 1, 0, 0},
        {"", 1, 0, 0},
        {"12 parsecs", 1, 0, 0},
        {"MiB", 1, 0, 0},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        int64_t b = -7;
        int ok = vr_monitor_size(sizes[i].text, strlen(sizes[i].text), sizes[i].unit, &b);
        INT_EQ(ok, sizes[i].ok, "size '%s' read or refused", sizes[i].text);
        if (sizes[i].ok)
            INT_EQ(b, sizes[i].bytes, "bytes of '%s'", sizes[i].text);
    }
    int64_t v = 0, ns = 0;
    OK(vr_monitor_int(" 87 % ", 6, &v) && v == 87, "a percentage");
    OK(!vr_monitor_int("8x", 2, &v), "not an integer");
    /* 2024-03-12 10:15:32.123 read as UTC: 1710238532.123 s */
    OK(vr_monitor_stamp("2024/03/12 10:15:32.123", 23, &ns) && ns == INT64_C(1710238532123000000),
       "a CSV timestamp");
    /* Tue Jul 14 08:12:53 2026: 1784016773 s (Python's calendar.timegm) */
    OK(vr_monitor_stamp("Tue Jul 14 08:12:53 2026", 24, &ns) &&
           ns == INT64_C(1784016773000000000),
       "a ctime timestamp");
    OK(vr_monitor_stamp("Fri Jan  6 01:02:03 2023", 24, &ns) &&
           ns == INT64_C(1672966923000000000),
       "a padded day");
    OK(!vr_monitor_stamp("2024/13/12 10:15:32", 19, &ns), "month 13 refused");
    OK(!vr_monitor_stamp("yesterday", 9, &ns), "not a stamp");
}

/* One GPU however a file names it (src/import/monitor.c): the table's
 * (index, bus id), the CSV's (uuid, bus id with another domain width,
 * index), --query-compute-apps' (uuid); another UUID at the same index is
 * another GPU, and a MIG instance is its own. */
static vr_monitor_text mtext(const char *s)
{
    vr_monitor_text t = {s, s ? strlen(s) : 0};
    return t;
}

static int64_t sighting(vr_monitor *m, const char *uuid, const char *bus, int64_t idx,
                        const char *mig)
{
    vr_error err = VR_ERROR_INIT;
    vr_monitor_gpu g;
    vr_monitor_gpu_clear(&g);
    g.uuid = mtext(uuid);
    g.bus_id = mtext(bus);
    g.mig = mtext(mig);
    g.idx = idx;
    return vr_monitor_gpu_id(m, &g, &err);
}

static void test_monitor_identity(void)
{
    vr_error err = VR_ERROR_INIT;
    vr_db *db = vr_db_open(NULL, &err);
    OK(db != NULL && vr_db_begin(db, &err) == 0, "a database (%s)", err.msg);
    if (!db)
        return;
    sqlite3_exec(vr_db_handle(db),
                 "INSERT INTO source (path, format, compression, content_hash, raw_bytes, bytes)"
                 " VALUES ('t', 'nvsmi_table', 'plain', 'x', 0, 0)",
                 NULL, NULL, NULL);
    vr_import_ctx ctx = {.db = db, .source_id = 1};
    vr_monitor m;
    vr_monitor_init(&m, &ctx);
    const char *u0 = "GPU-6a5d1c2e-0000-4000-8000-000000000001";
    int64_t table = sighting(&m, NULL, "0000:18:00.0", 0, NULL);
    OK(table > 0, "the table's GPU");
    INT_EQ(sighting(&m, u0, "00000000:18:00.0", 0, NULL), table, "the CSV's sighting is it");
    INT_EQ(sighting(&m, u0, NULL, VR_MONITOR_NONE, NULL), table, "so is compute-apps' (uuid)");
    int64_t other = sighting(&m, "GPU-other", NULL, 0, NULL);
    OK(other > 0 && other != table, "another UUID at index 0 is another GPU");
    int64_t mig = sighting(&m, NULL, "00000000:18:00.0", 0, "GI 1 / CI 0");
    OK(mig > 0 && mig != table, "a MIG instance is a GPU of its own");
    INT_EQ(sighting(&m, NULL, NULL, 0, "GI 1 / CI 0"), mig, "found again by index and instance");
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(vr_db_handle(db), "SELECT uuid, idx FROM gpu WHERE id = ?", -1, &st, NULL);
    sqlite3_bind_int64(st, 1, table);
    OK(st && sqlite3_step(st) == SQLITE_ROW &&
           strcmp((const char *)sqlite3_column_text(st, 0), u0) == 0 &&
           sqlite3_column_int64(st, 1) == 0,
       "the table's row gained the CSV's UUID");
    sqlite3_finalize(st);
    vr_monitor_free(&m);
    vr_db_rollback(db);
    vr_db_close(db);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_monitor_values);
    RUN(test_monitor_identity);
    return harness_summary();
}
