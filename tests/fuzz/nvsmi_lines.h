/*-*** nvsmi_lines.h: what the nvidia-smi line parsers' fuzz targets share ***/
/*
 * One temporary database for the whole run (its migrations are slow to
 * repeat); each input is one transaction, rolled back: a source row, the
 * input cut into lines by the splitter the readers' driver uses
 * (parse/lines.h: LF, a CR before it dropped, lines over 64 KiB passed
 * cut), fed to the parser, then its finish. Errors are fine (a CSV without a header); crashes, sanitizer
 * reports and leaks are not. Included by fuzz_nvsmi_csv.c and
 * fuzz_nvsmi_table.c only.
 */
#ifndef VR_FUZZ_NVSMI_LINES_H
#define VR_FUZZ_NVSMI_LINES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "import/monitor.h"
#include "import/reader.h"
#include "parse/lines.h"

#define FUZZ_MAX_LINE ((size_t)64 << 10)

typedef struct fuzz_parser fuzz_parser;
static void fuzz_init(fuzz_parser *p, vr_monitor *m);
static int fuzz_line(fuzz_parser *p, const char *s, size_t len, uint64_t number, int cut,
                     vr_error *err);
static int fuzz_finish(fuzz_parser *p, vr_error *err);
static void fuzz_free(fuzz_parser *p);

static vr_db *fuzz_db(void)
{
    static vr_db *db;
    vr_error err;
    if (!db && !(db = vr_db_open(NULL, &err)))
        abort();
    return db;
}

static int64_t fuzz_source(vr_db *db)
{
    sqlite3 *h = vr_db_handle(db);
    if (sqlite3_exec(h,
                     "INSERT INTO source (path, format, compression, content_hash, raw_bytes, "
                     "bytes) VALUES ('fuzz', 'fuzz', 'plain', 'x', 0, 0)",
                     NULL, NULL, NULL) != SQLITE_OK)
        abort();
    return sqlite3_last_insert_rowid(h);
}

static void fuzz_feed(fuzz_parser *p, const uint8_t *data, size_t size, vr_error *err)
{
    char *buf = malloc(FUZZ_MAX_LINE + 1);
    if (!buf)
        abort();
    const char *s = (const char *)data;
    vr_lines ls;
    vr_line line;
    int rc = 0;
    vr_lines_init(&ls, buf, FUZZ_MAX_LINE + 1);
    while (rc == 0 && vr_lines_next(&ls, &s, &size, &line))
        rc = fuzz_line(p, line.text, line.len, line.number, line.cut, err) < 0;
    if (rc == 0 && vr_lines_end(&ls, &line))
        rc = fuzz_line(p, line.text, line.len, line.number, line.cut, err) < 0;
    if (rc == 0)
        fuzz_finish(p, err);
    free(buf);
}

static int fuzz_run(fuzz_parser *p, const uint8_t *data, size_t size)
{
    vr_db *db = fuzz_db();
    vr_error err = VR_ERROR_INIT;
    if (vr_db_begin(db, &err) < 0)
        abort();
    vr_import_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.db = db;
    ctx.source_id = fuzz_source(db);
    ctx.start_ns = INT64_MAX;
    ctx.end_ns = INT64_MIN;
    vr_monitor m;
    vr_monitor_init(&m, &ctx);
    fuzz_init(p, &m);
    fuzz_feed(p, data, size, &err);
    fuzz_free(p);
    vr_monitor_free(&m);
    vr_db_rollback(db);
    return 0;
}

#endif
