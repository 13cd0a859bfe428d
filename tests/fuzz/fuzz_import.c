/*-*** fuzz_import.c: libFuzzer target for the whole pipeline ***/
/*
 * The input is written to a temporary file and goes through what the CLI
 * does with it: a temporary database, vr_import_file, vr_analyze, then the
 * Markdown, HTML and JSON reports rendered into a vr_buf. Errors are
 * expected and fine (most inputs are not traces); crashes, sanitizer
 * reports and leaks are not. A second import of the same file must be
 * refused as already imported when the first one succeeded.
 *
 * Built by `make fuzz` with every library source and src/resources/resources.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "db/db.h"
#include "import/import.h"
#include "render/report.h"
#include "util/buf.h"
#include "util/error.h"

static void drop_warning(void *userdata, const char *line)
{
    size_t *n = userdata;
    *n += strlen(line) > 0;
}

static int write_all(int fd, const uint8_t *data, size_t size)
{
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n <= 0)
            return -1;
        data += n;
        size -= (size_t)n;
    }
    return 0;
}

static void render(vr_db *db, vr_format format)
{
    vr_error err;
    vr_buf out = VR_BUF_INIT;
    vr_report_opts opts = {.format = format};
    if (vr_report_render(db, &opts, &out, &err) == 0 && out.len == 0)
        abort(); /* success with nothing written */
    vr_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/fuzz_import.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    int wrote = write_all(fd, data, size);
    close(fd);
    if (wrote < 0) {
        unlink(path);
        return 0;
    }

    vr_error err;
    vr_db *db = vr_db_open(NULL, &err);
    if (!db) {
        unlink(path);
        return 0;
    }
    size_t warnings = 0;
    vr_warner warner = {drop_warning, &warnings};
    vr_import_opts opts = {&warner, 0};
    vr_import_result res;
    int rc = vr_import_file(db, path, &opts, &res, &err);
    if (rc == 0) {
        if (res.status != VR_IMPORTED)
            abort(); /* a fresh database cannot hold this content yet */
        vr_import_result again;
        if (vr_import_file(db, path, &opts, &again, &err) != 0 ||
            again.status != VR_ALREADY_IMPORTED || again.source_id != res.source_id)
            abort();
    }
    if (vr_analyze(db, &err) == 0) {
        render(db, VR_FORMAT_MARKDOWN);
        render(db, VR_FORMAT_HTML);
        render(db, VR_FORMAT_JSON);
    }
    vr_db_close(db);
    unlink(path);
    return 0;
}
