/*-*** test_input.c: vr_input: bytes in, decompressed (input/) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "input/input.h"
#include "util/buf.h"
#include "util/utf8.h"

#include "fixtures.h"
#include "harness.h"

/*-*** vr_input ***/

typedef struct {
    int rc; /* 0 ok, -1 read error */
    vr_buf data;
    int truncated;
    uint64_t digest, raw_offset, offset;
    vr_compression comp;
    char err[768];
} read_result;

static void read_all(const char *path, size_t chunk, read_result *r)
{
    memset(r, 0, sizeof *r);
    vr_error err = VR_ERROR_INIT;
    vr_input *in = vr_input_open(path, &err);
    if (!in) {
        r->rc = -2;
        snprintf(r->err, sizeof r->err, "%s", err.msg);
        return;
    }
    char *buf = vr_xmalloc(chunk);
    ptrdiff_t n;
    while ((n = vr_input_read(in, buf, chunk, &err)) > 0)
        vr_buf_append(&r->data, buf, (size_t)n);
    free(buf);
    r->rc = n < 0 ? -1 : 0;
    snprintf(r->err, sizeof r->err, "%s", n < 0 ? err.msg : "");
    r->truncated = vr_input_truncated(in);
    r->digest = vr_input_digest(in);
    r->raw_offset = vr_input_raw_offset(in);
    r->offset = vr_input_offset(in);
    r->comp = vr_input_compression(in);
    vr_input_close(in);
}

static void test_input(void)
{
    make_tmpdir();
    vr_buf content = VR_BUF_INIT, gz = VR_BUF_INIT, zs = VR_BUF_INIT;
    make_content(&content, 400 * 1024); /* over the 256 KiB raw chunk */
    gzip_bytes(content.data, content.len, &gz, 6);
    zstd_bytes(content.data, content.len, &zs, 3);

    static const struct {
        const char *name;
        vr_compression comp;
    } files[] = {
        {"plain.json", VR_COMPRESSION_NONE},      {"trace.json.gz", VR_COMPRESSION_GZIP},
        {"trace.json.zst", VR_COMPRESSION_ZSTD},  {"gzip-named.txt", VR_COMPRESSION_GZIP},
        {"zstd-named.json", VR_COMPRESSION_ZSTD}, {"plain-named.gz", VR_COMPRESSION_NONE},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        const vr_buf *b = files[i].comp == VR_COMPRESSION_GZIP   ? &gz
                          : files[i].comp == VR_COMPRESSION_ZSTD ? &zs
                                                                 : &content;
        OK(write_file(tmp_path(files[i].name), b->data, b->len) == 0, "wrote %s", files[i].name);
    }

    static const size_t chunks[] = {1, 7, 4096, 65536, 1u << 20};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        const char *path = tmp_path(files[i].name);
        vr_buf raw = VR_BUF_INIT;
        read_file(path, &raw);
        uint64_t want_digest = hash_of(raw.data, raw.len);
        for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
            read_result r;
            read_all(path, chunks[c], &r);
            OK(r.rc == 0 && r.data.len == content.len &&
                   memcmp(r.data.data, content.data, content.len) == 0 && !r.truncated,
               "%s in reads of %zu: identical bytes (%zu of %zu, rc %d%s%s)", files[i].name,
               chunks[c], r.data.len, content.len, r.rc, r.truncated ? ", truncated" : "",
               r.err[0] ? r.err : "");
            if (c == 2) {
                OK(r.comp == files[i].comp, "%s: compression %s detected by magic", files[i].name,
                   vr_compression_name(files[i].comp));
                OK(r.digest == want_digest,
                   "%s: digest of the raw bytes equals vr_hash of the file", files[i].name);
                INT_EQ(r.raw_offset, raw.len, "%s: all raw bytes consumed", files[i].name);
                INT_EQ(r.offset, content.len, "%s: offset counts decompressed bytes",
                       files[i].name);
            }
            vr_buf_free(&r.data);
        }
        /* prehash, raw size, path */
        vr_error err;
        vr_input *in = vr_input_open(path, &err);
        uint64_t pre = 0;
        OK(in && vr_input_prehash(in, &pre, &err) == 0 && pre == want_digest,
           "%s: vr_input_prehash equals the file's digest", files[i].name);
        OK(in && vr_input_raw_size(in) == (int64_t)raw.len, "%s: raw size", files[i].name);
        OK(in && strcmp(vr_input_path(in), path) == 0, "%s: path kept", files[i].name);
        vr_input_close(in);
        vr_buf_free(&raw);
    }
    STR_EQ(vr_compression_name(VR_COMPRESSION_NONE), "plain", "name of NONE");
    STR_EQ(vr_compression_name(VR_COMPRESSION_GZIP), "gzip", "name of GZIP");
    STR_EQ(vr_compression_name(VR_COMPRESSION_ZSTD), "zstd", "name of ZSTD");

    /* Truncated at half its bytes: reads end without error, flagged. */
    const struct {
        const char *name;
        const vr_buf *b;
    } cut[] = {{"half.gz", &gz}, {"half.zst", &zs}};
    for (size_t i = 0; i < 2; i++) {
        const char *path = tmp_path(cut[i].name);
        write_file(path, cut[i].b->data, cut[i].b->len / 2);
        for (size_t c = 0; c < 3; c++) {
            size_t chunk = c == 0 ? 1 << 20 : c == 1 ? 4096 : 13;
            read_result r;
            read_all(path, chunk, &r);
            OK(r.rc == 0 && r.truncated && r.data.len > 0 && r.data.len < content.len &&
                   memcmp(r.data.data, content.data, r.data.len) == 0,
               "%s (reads of %zu): no error, truncated, a correct prefix (%zu bytes%s%s)",
               cut[i].name, chunk, r.data.len, r.err[0] ? ": " : "", r.err);
            vr_buf_free(&r.data);
        }
    }
    /* Truncated right after the header, and at every short length. */
    int short_ok = 1;
    for (size_t n = 1; n < 64; n++) {
        write_file(tmp_path("short.gz"), gz.data, n);
        read_result r;
        read_all(tmp_path("short.gz"), 4096, &r);
        if (r.rc != 0 || (n >= 2 && !r.truncated))
            short_ok = 0;
        vr_buf_free(&r.data);
        write_file(tmp_path("short.zst"), zs.data, n);
        read_all(tmp_path("short.zst"), 4096, &r);
        if (r.rc != 0 || (n >= 4 && !r.truncated))
            short_ok = 0;
        vr_buf_free(&r.data);
    }
    OK(short_ok, "gzip and zstd cut to 1..63 bytes: no error, truncated");

    /* Two concatenated gzip members read as the concatenation. */
    vr_buf two = VR_BUF_INIT, want = VR_BUF_INIT;
    static const char second[] = "second member\n";
    gzip_bytes(content.data, content.len, &two, 1);
    gzip_bytes(second, sizeof second - 1, &two, 9);
    vr_buf_append(&want, content.data, content.len);
    vr_buf_append(&want, second, sizeof second - 1);
    write_file(tmp_path("two.gz"), two.data, two.len);
    for (size_t c = 0; c < 3; c++) {
        size_t chunk = c == 0 ? 1 << 20 : c == 1 ? 4096 : 3;
        read_result r;
        read_all(tmp_path("two.gz"), chunk, &r);
        OK(r.rc == 0 && !r.truncated && r.data.len == want.len &&
               memcmp(r.data.data, want.data, want.len) == 0,
           "two gzip members (reads of %zu) read as their concatenation", chunk);
        vr_buf_free(&r.data);
    }
    /* Trailing zeros after a gzip member are ignored, like gzip does. */
    vr_buf padded = VR_BUF_INIT;
    vr_buf_append(&padded, two.data, two.len);
    vr_buf_append(&padded, "\0\0\0\0\0\0\0\0", 8);
    write_file(tmp_path("padded.gz"), padded.data, padded.len);
    read_result r;
    read_all(tmp_path("padded.gz"), 65536, &r);
    OK(r.rc == 0 && !r.truncated && r.data.len == want.len, "trailing zeros after gzip ignored");
    vr_buf_free(&r.data);
    vr_buf_free(&padded);
    vr_buf_free(&two);
    vr_buf_free(&want);

    /* Two concatenated zstd frames. */
    vr_buf zz = VR_BUF_INIT;
    zstd_bytes("frame one\n", 10, &zz, 1);
    zstd_bytes("frame two\n", 10, &zz, 19);
    write_file(tmp_path("two.zst"), zz.data, zz.len);
    read_all(tmp_path("two.zst"), 4, &r);
    OK(r.rc == 0 && !r.truncated && r.data.len == 20 &&
           memcmp(r.data.data, "frame one\nframe two\n", 20) == 0,
       "two zstd frames read as their concatenation");
    vr_buf_free(&r.data);
    vr_buf_free(&zz);

    /* Peek, then read: the same bytes again. */
    const char *peek_files[] = {"plain.json", "trace.json.gz", "trace.json.zst"};
    for (size_t i = 0; i < 3; i++) {
        vr_error err;
        vr_input *in = vr_input_open(tmp_path(peek_files[i]), &err);
        char a[100000], b2[64];
        ptrdiff_t n1 = in ? vr_input_peek(in, a, sizeof a, &err) : -1;
        ptrdiff_t n2 = in ? vr_input_peek(in, b2, sizeof b2, &err) : -1;
        OK(n1 == (ptrdiff_t)sizeof a && memcmp(a, content.data, sizeof a) == 0 && n2 == 64 &&
               memcmp(b2, content.data, 64) == 0,
           "%s: peek 100000 then 64 returns the start twice", peek_files[i]);
        OK(in && vr_input_offset(in) == 0, "%s: peek does not advance the offset", peek_files[i]);
        vr_buf all = VR_BUF_INIT;
        char chunk[777];
        ptrdiff_t n;
        while (in && (n = vr_input_read(in, chunk, sizeof chunk, &err)) > 0)
            vr_buf_append(&all, chunk, (size_t)n);
        OK(all.len == content.len && memcmp(all.data, content.data, content.len) == 0,
           "%s: reading after peeks returns every byte once", peek_files[i]);
        OK(in && !vr_input_truncated(in), "%s: not truncated", peek_files[i]);
        vr_buf_free(&all);
        vr_input_close(in);
    }
    /* Peek past the end of a small input. */
    write_file(tmp_path("small.json"), "{\"a\":1}", 7);
    {
        vr_error err;
        vr_input *in = vr_input_open(tmp_path("small.json"), &err);
        char a[100];
        ptrdiff_t n = in ? vr_input_peek(in, a, sizeof a, &err) : -1;
        ptrdiff_t m = in ? vr_input_read(in, a, 3, &err) : -1;
        ptrdiff_t k = in ? vr_input_read(in, a + 3, 50, &err) : -1;
        ptrdiff_t z = in ? vr_input_read(in, a, 50, &err) : -1;
        OK(n == 7 && m == 3 && k == 4 && z == 0 && memcmp(a, "{\"a\":1}", 7) == 0,
           "peek of 100 on a 7-byte file gives 7; reads then give them once");
        vr_input_close(in);
    }

    /* Empty file. */
    write_file(tmp_path("empty"), "", 0);
    read_all(tmp_path("empty"), 100, &r);
    OK(r.rc == 0 && r.data.len == 0 && !r.truncated && r.comp == VR_COMPRESSION_NONE,
       "empty file reads 0 bytes, plain, not truncated");
    OK(r.digest == hash_of("", 0), "empty file digest is XXH64 of nothing");
    vr_buf_free(&r.data);

    /* Corrupt compressed data fails with a message. */
    vr_buf bad = VR_BUF_INIT;
    vr_buf_append(&bad, gz.data, gz.len);
    for (size_t i = gz.len / 3; i < gz.len / 3 + 64; i++)
        bad.data[i] ^= 0x5a;
    write_file(tmp_path("corrupt.gz"), bad.data, bad.len);
    read_all(tmp_path("corrupt.gz"), 65536, &r);
    OK(r.rc == -1 && strstr(r.err, "corrupt gzip data") && strstr(r.err, "corrupt.gz"),
       "corrupt gzip: error naming the file (%s)", r.err);
    vr_buf_free(&r.data);
    /* zstd detects corruption only with a checksum (as zstd -t does). */
    vr_buf_clear(&bad);
    {
        ZSTD_CCtx *cc = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
        size_t bound = ZSTD_compressBound(content.len);
        vr_buf_reserve(&bad, bound);
        size_t got = ZSTD_compress2(cc, bad.data, bound, content.data, content.len);
        ZSTD_freeCCtx(cc);
        bad.len = ZSTD_isError(got) ? 0 : got;
    }
    for (size_t i = bad.len / 3; i < bad.len / 3 + 64; i++)
        bad.data[i] ^= 0x5a;
    write_file(tmp_path("corrupt.zst"), bad.data, bad.len);
    read_all(tmp_path("corrupt.zst"), 65536, &r);
    OK(r.rc == -1 && strstr(r.err, "corrupt zstd data"), "corrupt zstd: error (%s)", r.err);
    vr_buf_free(&r.data);
    vr_buf_free(&bad);

    /* Open errors. */
    read_all(tmp_path("does-not-exist"), 10, &r);
    OK(r.rc == -2 && strstr(r.err, "cannot open"), "missing file: cannot open (%s)", r.err);
    read_all(tmpdir, 10, &r);
    OK(r.rc == -2 && strstr(r.err, "is a directory"), "directory: refused (%s)", r.err);

    vr_buf_free(&content);
    vr_buf_free(&gz);
    vr_buf_free(&zs);
    remove_tmpdir();
}

/* A complete zstd stream read through small buffers must come out whole:
 * the decoder may hold decoded bytes after it has consumed the last input. */
static void test_input_zstd_small_reads(void)
{
    make_tmpdir();
    vr_buf content = VR_BUF_INIT, zs = VR_BUF_INIT;
    for (int i = 0; i < 200000; i++)
        vr_buf_puts(&content, "abcdefgh");
    zstd_bytes(content.data, content.len, &zs, 19);
    write_file(tmp_path("rep.zst"), zs.data, zs.len);
    static const size_t chunks[] = {1, 100, 4096, 1 << 20};
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
        read_result r;
        read_all(tmp_path("rep.zst"), chunks[c], &r);
        OK(r.rc == 0 && !r.truncated && r.data.len == content.len,
           "highly compressible zstd (%zu -> %zu bytes) in reads of %zu: whole, not truncated "
           "(got %zu bytes%s)",
           content.len, zs.len, chunks[c], r.data.len, r.truncated ? ", truncated" : "");
        vr_buf_free(&r.data);
    }
    vr_buf_free(&content);
    vr_buf_free(&zs);
    remove_tmpdir();
}

/* Text with a UTF-16 byte order mark (PowerShell's `>`) reads as its
 * UTF-8, without the mark, in reads of any size, after a peek, compressed
 * or not; broken UTF-16 becomes U+FFFD, never a crash. */
static void utf16_of(const char *u8, size_t n, int big_endian, vr_buf *out)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        size_t k = vr_utf8_decode(u8 + i, n - i, &cp);
        i += k ? k : 1;
        unsigned units[2] = {cp, 0};
        size_t count = 1;
        if (cp >= 0x10000) {
            units[0] = 0xd800 + ((cp - 0x10000) >> 10);
            units[1] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
            count = 2;
        }
        for (size_t u = 0; u < count; u++) {
            unsigned char b[2] = {(unsigned char)(units[u] & 0xff),
                                  (unsigned char)(units[u] >> 8)};
            if (big_endian)
                b[0] = (unsigned char)(units[u] >> 8), b[1] = (unsigned char)(units[u] & 0xff);
            vr_buf_append(out, b, 2);
        }
    }
}

static void test_input_utf16(void)
{
    make_tmpdir();
    static const char line[] =
        "epoch 3 \xc3\xa9t\xc3\xa9 \xf0\x9f\x94\xa5 \xe4\xb8\xad CUDA out of memory\r\n";
    vr_buf text = VR_BUF_INIT, le = VR_BUF_INIT, be = VR_BUF_INIT, gz = VR_BUF_INIT;
    for (int i = 0; i < 9000; i++) /* over the 256 KiB raw chunk as UTF-16 */
        vr_buf_append(&text, line, sizeof line - 1);
    vr_buf_append(&le, "\xff\xfe", 2);
    utf16_of(text.data, text.len, 0, &le);
    vr_buf_append(&be, "\xfe\xff", 2);
    utf16_of(text.data, text.len, 1, &be);
    gzip_bytes(le.data, le.len, &gz, 6);
    write_file(tmp_path("le.log"), le.data, le.len);
    write_file(tmp_path("be.log"), be.data, be.len);
    write_file(tmp_path("le.log.gz"), gz.data, gz.len);
    static const char *const names[] = {"le.log", "be.log", "le.log.gz"};
    static const size_t chunks[] = {1, 3, 7, 4096, 1u << 20};
    for (size_t f = 0; f < 3; f++)
        for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
            read_result r;
            read_all(tmp_path(names[f]), chunks[c], &r);
            OK(r.rc == 0 && r.data.len == text.len &&
                   memcmp(r.data.data, text.data, text.len) == 0,
               "%s in reads of %zu: its UTF-8 (%zu of %zu bytes%s%s)", names[f], chunks[c],
               r.data.len, text.len, r.err[0] ? ": " : "", r.err);
            if (c == 0)
                INT_EQ(r.offset, text.len, "%s: the offset counts the UTF-8 bytes", names[f]);
            vr_buf_free(&r.data);
        }
    /* A peek sees the UTF-8 too, and the reads after it every byte once. */
    {
        vr_error err;
        vr_input *in = vr_input_open(tmp_path("le.log"), &err);
        char head[100];
        ptrdiff_t n = in ? vr_input_peek(in, head, sizeof head, &err) : -1;
        OK(n == 100 && memcmp(head, text.data, 100) == 0, "UTF-16: the peek is UTF-8");
        vr_buf all = VR_BUF_INIT;
        char chunk[777];
        while (in && (n = vr_input_read(in, chunk, sizeof chunk, &err)) > 0)
            vr_buf_append(&all, chunk, (size_t)n);
        OK(all.len == text.len && memcmp(all.data, text.data, text.len) == 0,
           "UTF-16: reading after the peek returns every byte once");
        vr_buf_free(&all);
        vr_input_close(in);
    }
    /* Broken UTF-16: a lone high and a lone low surrogate, a cut last unit. */
    static const struct {
        const char *name, *bytes;
        size_t len;
        const char *want;
    } broken[] = {
        {"lone-high",
         "\xff\xfe"
         "\x00\xd8"
         "A\x00",
         6,
         "\xef\xbf\xbd"
         "A"},
        {"lone-low",
         "\xff\xfe"
         "\x00\xdc"
         "B\x00",
         6,
         "\xef\xbf\xbd"
         "B"},
        {"high-at-end",
         "\xff\xfe"
         "C\x00"
         "\x00\xd8",
         6, "C\xef\xbf\xbd"},
        {"odd-byte",
         "\xfe\xff"
         "\x00"
         "D"
         "\x00",
         5, "D\xef\xbf\xbd"},
        {"mark-only", "\xff\xfe", 2, ""},
        {"one-byte", "\xff", 1, "\xff"},
        {"no-mark",
         "\xfe\xfd"
         "x",
         3,
         "\xfe\xfd"
         "x"},
    };
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++) {
        write_file(tmp_path(broken[i].name), broken[i].bytes, broken[i].len);
        for (size_t c = 0; c < 2; c++) {
            read_result r;
            read_all(tmp_path(broken[i].name), c ? 1 : 4096, &r);
            size_t n = strlen(broken[i].want);
            OK(r.rc == 0 && r.data.len == n &&
                   (n == 0 || memcmp(r.data.data, broken[i].want, n) == 0),
               "%s (reads of %d): as expected (%zu bytes)", broken[i].name, c ? 1 : 4096,
               r.data.len);
            vr_buf_free(&r.data);
        }
    }
    vr_buf_free(&text);
    vr_buf_free(&le);
    vr_buf_free(&be);
    vr_buf_free(&gz);
    remove_tmpdir();
}

/* A zstd file may start with a skippable frame (pzstd writes one before
 * each frame); frames and skippable frames back to back read as zstd -dc
 * reads them. */
static void test_input_zstd_skippable(void)
{
    make_tmpdir();
    vr_buf zs = VR_BUF_INIT;
    for (unsigned magic = 0; magic < 16; magic += 15) {
        vr_buf_clear(&zs);
        unsigned char skip[12] = {
            (unsigned char)(0x50 + magic), 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 'a', 'b', 'c', 'd'};
        vr_buf_append(&zs, skip, sizeof skip);
        zstd_bytes("frame one\n", 10, &zs, 1);
        vr_buf_append(&zs, skip, sizeof skip);
        zstd_bytes("frame two\n", 10, &zs, 3);
        vr_buf_append(&zs, skip, sizeof skip);
        write_file(tmp_path("skippable.zst"), zs.data, zs.len);
        for (size_t c = 0; c < 2; c++) {
            read_result r;
            read_all(tmp_path("skippable.zst"), c ? 3 : 4096, &r);
            OK(r.rc == 0 && r.comp == VR_COMPRESSION_ZSTD && !r.truncated && r.data.len == 20 &&
                   memcmp(r.data.data, "frame one\nframe two\n", 20) == 0,
               "skippable frames (magic 0x184D2A%X) around two frames, reads of %d: zstd, "
               "their concatenation (%zu bytes, %s%s)",
               0x50 + magic, c ? 3 : 4096, r.data.len, vr_compression_name(r.comp), r.err);
            vr_buf_free(&r.data);
        }
    }
    vr_buf_free(&zs);
    remove_tmpdir();
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_input);
    RUN(test_input_zstd_small_reads);
    RUN(test_input_utf16);
    RUN(test_input_zstd_skippable);
    return harness_summary();
}
