/*-*** fuzz_nvsmi.h: the body of the nvidia-smi -q and -q -x fuzz targets ***/
/*
 * The input is written to a temporary file and imported into a fresh
 * in-memory database with vr_import_file, as the CLI does. So that the
 * reader under test is the one picked, an input whose first 64 KiB lack
 * its marker gets `prefix` in front (for XML a whole empty document, so
 * the rest is a second document: the reset between documents is fuzzed
 * too).
 *
 * Invariants (abort on failure): an error is one line naming the file;
 * after a success by this reader every reading stored was counted
 * (gpu_sample rows == events) and every process belongs to a GPU of the
 * source. Included by fuzz_nvsmi_xml.c and fuzz_nvsmi_q.c only.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "import/import.h"
#include "util/error.h"

static int64_t fuzz_count(vr_db *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t n = -1;
    if (sqlite3_prepare_v2(vr_db_handle(db), sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static int fuzz_write(const char *path, const char *prefix, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t head = size < 65536 ? size : 65536; /* what the registry sniffs */
    int has_marker = memmem(data, head, FUZZ_MARKER, strlen(FUZZ_MARKER)) != NULL;
    int ok = (has_marker || fputs(prefix, f) >= 0) && fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static void fuzz_check(vr_db *db, const vr_import_result *res, const char *reader)
{
    if (!res->format || strcmp(res->format, reader) != 0)
        return; /* another reader was surer: not this target's business */
    if (fuzz_count(db, "SELECT count(*) FROM gpu_sample") != (int64_t)res->events)
        abort();
    if (fuzz_count(db, "SELECT count(*) FROM process_sample p WHERE gpu_id IS NULL OR "
                       "NOT EXISTS (SELECT 1 FROM gpu g WHERE g.id = p.gpu_id AND "
                       "g.source_id = p.source_id)") != 0)
        abort();
}

static int fuzz_nvsmi(const uint8_t *data, size_t size, const char *prefix, const char *reader)
{
    char path[] = "/tmp/fuzz_nvsmi.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    close(fd);
    if (fuzz_write(path, prefix, data, size) < 0) {
        unlink(path);
        return 0;
    }
    vr_error err;
    vr_db *db = vr_db_open(NULL, &err);
    if (!db) {
        unlink(path);
        return 0;
    }
    vr_import_opts opts = {0};
    vr_import_result res;
    if (vr_import_file(db, path, &opts, &res, &err) == 0)
        fuzz_check(db, &res, reader);
    else if (strchr(err.msg, '\n') || !strstr(err.msg, path))
        abort(); /* an error is one line naming the file */
    vr_db_close(db);
    unlink(path);
    return 0;
}
