/*-*** test_db.c: the database connection's caches (db/) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "db/db.h"
#include "util/buf.h"

#include "harness.h"

/* The statement cache keys on the block's name by value: callers build
 * names in buffers (advise.c takes a remedy's from a column), so a cache that kept the
 * caller's pointer would find the first statement under whatever the
 * buffer says next. */
static void test_stmt_cache_names(void)
{
    vr_error err = VR_ERROR_INIT;
    vr_db *db = vr_db_open(NULL, &err);
    OK(db != NULL, "a database (%s)", err.msg);
    if (!db)
        return;
    const char *file = "schemas/import.sql";
    char name[64];
    snprintf(name, sizeof name, "%s", "select_name");
    sqlite3_stmt *first = vr_db_stmt(db, file, name, &err);
    snprintf(name, sizeof name, "%s", "insert_name");
    sqlite3_stmt *second = vr_db_stmt(db, file, name, &err);
    OK(first && second && first != second, "a name reused in one buffer: two statements");
    OK(second && strstr(sqlite3_sql(second), "INSERT OR IGNORE INTO name") != NULL,
       "the second is insert_name's block");
    OK(vr_db_stmt(db, file, "select_name", &err) == first,
       "the first found again by a name in another buffer");
    vr_db_close(db);
}

/* The name cache is bounded in bytes: distinct long names cost
 * SQLite pages, not unbounded heap, and every id stays right. */
static void test_name_cache_bytes(void)
{
    vr_error err = VR_ERROR_INIT;
    vr_db *db = vr_db_open(NULL, &err);
    OK(db != NULL, "temporary database (%s)", db ? "ok" : err.msg);
    if (!db)
        return;
    enum { NAMES = 40000, LEN = 1024 }; /* 39 MiB of distinct names */
    char *name = vr_xmalloc(LEN);
    int64_t first_id = -1, ok = 1;
    for (int i = 0; i < NAMES && ok; i++) {
        memset(name, 'a' + i % 26, LEN);
        snprintf(name, 16, "%08d", i);
        name[8] = '#';
        int64_t id = vr_db_intern(db, name, LEN, &err);
        ok = id > 0;
        if (i == 0)
            first_id = id;
    }
    OK(ok, "40,000 distinct 1 KiB names interned (%s)", ok ? "ok" : err.msg);
    OK(vr_db_name_cache_bytes(db) <= (size_t)32 << 20,
       "the cache holds at most 32 MiB of text (holds %zu bytes of 39 MiB)",
       vr_db_name_cache_bytes(db));
    OK(vr_db_name_cache_bytes(db) > 0, "the cache is used");
    memset(name, 'a', LEN);
    snprintf(name, 16, "%08d", 0);
    name[8] = '#';
    INT_EQ(vr_db_intern(db, name, LEN, &err), first_id, "the first name keeps its id");
    memset(name, 'a' + (NAMES - 1) % 26, LEN);
    snprintf(name, 16, "%08d", NAMES - 1);
    name[8] = '#';
    INT_EQ(vr_db_intern(db, name, LEN, &err), NAMES, "a name past the bound is found in SQLite");
    free(name);
    vr_db_close(db);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_stmt_cache_names);
    RUN(test_name_cache_bytes);
    return harness_summary();
}
