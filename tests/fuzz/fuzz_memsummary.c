/*-*** fuzz_memsummary.c: libFuzzer target for the memory_summary() line parser ***/
/*
 * The input is text cut into lines at '\n'; each line is fed to
 * vr_memsummary_feed as an exact-size heap copy (a read past a line's end
 * is an ASan report), then vr_memsummary_finish. The bytes of the first
 * line are also parsed as one cell, as a size and as a count.
 *
 * Invariants checked (abort on failure): feed returns 0 or 1; every
 * figure has a dump >= 0 that never goes back, a device >= -1, and a key
 * that is one of memory_stats()'s shapes ("metric.pool.stat",
 * "metric.stat", "num_ooms", "num_alloc_retries"); the parser's `stats`
 * counts the figures passed on; a box line never makes `skipped` grow by
 * more than one row's cells. Built by `make fuzz` with the library.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "import/readers/memsummary.h"

typedef struct {
    uint64_t figures;
    int64_t last_dump;
} fuzz_ctx;

static int dots(const char *key)
{
    int n = 0;
    for (; *key; key++)
        n += *key == '.';
    return n;
}

static int on_stat(void *ud, int64_t dump, int64_t device_idx, const char *key, int64_t value,
                   vr_error *err)
{
    fuzz_ctx *c = ud;
    (void)value;
    (void)err;
    if (dump < 0 || dump < c->last_dump || device_idx < -1)
        abort();
    size_t len = strlen(key);
    int d = dots(key);
    if (len == 0 || len > 64 ||
        (d == 0 && strcmp(key, "num_ooms") != 0 && strcmp(key, "num_alloc_retries") != 0) ||
        (d == 1 && strncmp(key, "oversize_", 9) != 0) || d > 2)
        abort();
    c->last_dump = dump;
    c->figures++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_ctx c = {0, 0};
    vr_memsummary s;
    vr_error err = {{0}, VR_ERR_NONE};
    vr_memsummary_init(&s, on_stat, &c);
    const char *text = (const char *)data;
    for (size_t at = 0; at <= size;) {
        const char *nl = memchr(text + at, '\n', size - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : size - at;
        char *line = malloc(n ? n : 1);
        if (!line)
            abort();
        memcpy(line, text + at, n);
        if (at == 0) {
            int64_t v;
            vr_memsummary_cell(line, n, 1, &v);
            vr_memsummary_cell(line, n, 0, &v);
        }
        uint64_t skipped = s.skipped;
        int rc = vr_memsummary_feed(&s, line, n, &err);
        free(line);
        /* A line skips at most 8 figures of its own; one that starts a
         * new dump also ends the last, whose allocated/reserved pairs that
         * contradict are dropped then: 3 pools x 2 stats x 2 figures. */
        if ((rc != 0 && rc != 1) || s.skipped - skipped > 8 + 12)
            abort();
        at += n + 1;
    }
    if (vr_memsummary_finish(&s, &err) != 0 || s.stats != c.figures)
        abort();
    return 0;
}
