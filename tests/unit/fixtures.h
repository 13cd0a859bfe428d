/*-*** fixtures.h: what several unit tests share ***/
/* A temporary folder and files in it, gzip and zstd bytes, a hash of
 * bytes, one integer from SQL. Each is static and marked unused: a test
 * program takes the ones it needs. */
#ifndef VR_TEST_FIXTURES_H
#define VR_TEST_FIXTURES_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <zlib.h>
#include <zstd.h>

#include "util/buf.h"
#include "util/hash.h"

static __attribute__((unused)) char tmpdir[64];

static __attribute__((unused)) void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/vr-unit.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        exit(2);
    }
}

/* Path of `name` inside the temporary directory (static buffer rotation). */
static __attribute__((unused)) const char *tmp_path(const char *name)
{
    static char bufs[8][256];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", tmpdir, name);
    return b;
}

static __attribute__((unused)) void remove_tmpdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (tmpdir[0] && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
}

static __attribute__((unused)) int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = len ? fwrite(data, 1, len, f) : 0;
    int rc = fclose(f);
    return n == len && rc == 0 ? 0 : -1;
}

static __attribute__((unused)) int read_file(const char *path, vr_buf *out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        vr_buf_append(out, tmp, n);
    fclose(f);
    return 0;
}

/* gzip (RFC 1952) via deflate with windowBits 15 + 16. */
static __attribute__((unused)) void gzip_bytes(const void *src, size_t n, vr_buf *out, int level)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        abort();
    size_t bound = deflateBound(&z, (uLong)n) + 64;
    vr_buf_reserve(out, bound);
    z.next_in = (Bytef *)(uintptr_t)src;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)out->data + out->len;
    z.avail_out = (uInt)bound;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        abort();
    out->len += z.total_out;
    out->data[out->len] = '\0';
    deflateEnd(&z);
}

static __attribute__((unused)) void zstd_bytes(const void *src, size_t n, vr_buf *out, int level)
{
    size_t bound = ZSTD_compressBound(n);
    vr_buf_reserve(out, bound);
    size_t got = ZSTD_compress(out->data + out->len, bound, src, n, level);
    if (ZSTD_isError(got))
        abort();
    out->len += got;
    out->data[out->len] = '\0';
}

/* Deterministic, moderately compressible trace-like text. */
static __attribute__((unused)) void make_content(vr_buf *b, size_t approx)
{
    uint32_t x = 12345;
    while (b->len < approx) {
        x = x * 1103515245u + 12345u;
        vr_buf_printf(b, "{\"ph\": \"X\", \"name\": \"op%u\", \"ts\": %u.%03u},\n",
                      (x >> 16) % 977, x, x % 1000);
    }
}

static __attribute__((unused)) uint64_t hash_of(const void *p, size_t n)
{
    vr_hash h;
    vr_hash_init(&h, 0);
    vr_hash_update(&h, p, n);
    return vr_hash_digest(&h);
}

/* First column of the first row: LLONG_MIN for NULL, LLONG_MIN + 1 for no
 * row or an error. */
static __attribute__((unused)) long long q_int(sqlite3 *h, const char *sql)
{
    sqlite3_stmt *st;
    long long v = LLONG_MIN + 1;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        printf("# SQL error: %s: %s\n", sqlite3_errmsg(h), sql);
        return v;
    }
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_type(st, 0) == SQLITE_NULL ? LLONG_MIN : sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

#endif
