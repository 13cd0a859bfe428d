/*-*** test_core.c: unit tests for the core library ***/
/*
 * One function per feature: hashing, units, the JSON pull reader, the
 * streaming scanner, input decompression, Markdown escaping, and an
 * end-to-end import + analysis through the library API checked with SQL.
 * Each function runs in its own child process (see harness.h), so a crash
 * or sanitizer abort is reported against the feature that caused it.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>
#include <zlib.h>
#include <zstd.h>

#include "analyze/analyze.h"
#include "batch/batch.h"
#include "db/db.h"
#include "import/import.h"
#include "parse/json_scan.h"
#include "parse/json_pull.h"
#include "import/monitor.h"
#include "import/readers/memsummary.h"
#include "import/reader.h"
#include "input/input.h"
#include "util/blake2b.h"
#include "render/results/many.h"
#include "render/report.h"
#include "render/results/results.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/idmap.h"
#include "util/ordmap.h"
#include "util/slots.h"
#include "util/units.h"
#include "util/tz.h"
#include "util/utf8.h"

#include "harness.h"

/*-*** helpers ***/

static char tmpdir[64];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/vr-test-core.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        exit(2);
    }
}

/* Path of `name` inside the temporary directory (static buffer rotation). */
static const char *tmp_path(const char *name)
{
    static char bufs[8][256];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", tmpdir, name);
    return b;
}

static void remove_tmpdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (tmpdir[0] && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
}

static int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = len ? fwrite(data, 1, len, f) : 0;
    int rc = fclose(f);
    return n == len && rc == 0 ? 0 : -1;
}

static int read_file(const char *path, vr_buf *out)
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
static void gzip_bytes(const void *src, size_t n, vr_buf *out, int level)
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

static void zstd_bytes(const void *src, size_t n, vr_buf *out, int level)
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
static void make_content(vr_buf *b, size_t approx)
{
    uint32_t x = 12345;
    while (b->len < approx) {
        x = x * 1103515245u + 12345u;
        vr_buf_printf(b, "{\"ph\": \"X\", \"name\": \"op%u\", \"ts\": %u.%03u},\n",
                      (x >> 16) % 977, x, x % 1000);
    }
}

static uint64_t hash_of(const void *p, size_t n)
{
    vr_hash h;
    vr_hash_init(&h, 0);
    vr_hash_update(&h, p, n);
    return vr_hash_digest(&h);
}

/*-*** vr_hash ***/

static void test_hash(void)
{
    static const struct {
        const char *text;
        uint64_t digest;
    } vectors[] = {
        {"", 0xef46db3751d8e999ULL},
        {"a", 0xd24ec4f1a98c6e5bULL},
        {"Nobody inspects the spammish repetition", 0xfbcea83c8a378bf1ULL},
    };
    for (size_t i = 0; i < sizeof vectors / sizeof *vectors; i++) {
        uint64_t d = hash_of(vectors[i].text, strlen(vectors[i].text));
        OK(d == vectors[i].digest, "XXH64(\"%s\") = %016llx", vectors[i].text,
           (unsigned long long)vectors[i].digest);
    }

    char hex[17];
    vr_hash_hex(0xef46db3751d8e999ULL, hex);
    STR_EQ(hex, "ef46db3751d8e999", "vr_hash_hex writes 16 lowercase digits");
    vr_hash_hex(0x1ULL, hex);
    STR_EQ(hex, "0000000000000001", "vr_hash_hex pads with zeros");

    unsigned char buf[1000];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 31 + 7);
    uint64_t whole = hash_of(buf, sizeof buf);
    int all_same = 1;
    for (size_t piece = 1; piece <= 64; piece++) {
        vr_hash h;
        vr_hash_init(&h, 0);
        for (size_t off = 0; off < sizeof buf; off += piece)
            vr_hash_update(&h, buf + off, sizeof buf - off < piece ? sizeof buf - off : piece);
        if (vr_hash_digest(&h) != whole) {
            all_same = 0;
            printf("# pieces of %zu differ\n", piece);
        }
    }
    OK(all_same, "streaming in pieces of 1..64 bytes matches one update (1000 bytes)");

    /* Digest can be taken mid-stream without disturbing the state. */
    vr_hash h;
    vr_hash_init(&h, 0);
    vr_hash_update(&h, buf, 500);
    uint64_t half = vr_hash_digest(&h);
    vr_hash_update(&h, buf + 500, 500);
    OK(half == hash_of(buf, 500) && vr_hash_digest(&h) == whole,
       "vr_hash_digest mid-stream does not disturb the state");

    vr_hash_init(&h, 1);
    vr_hash_update(&h, "a", 1);
    OK(vr_hash_digest(&h) != 0xd24ec4f1a98c6e5bULL, "the seed changes the digest");

    /* vr_hash_once: the streaming digest, every length and a few seeds */
    int once_same = 1;
    for (size_t len = 0; len <= 200 && once_same; len++) {
        for (uint64_t seed = 0; seed < 0x57ad; seed += 0x57ac) {
            vr_hash_init(&h, seed);
            vr_hash_update(&h, buf + len, len);
            if (vr_hash_once(buf + len, len, seed) != vr_hash_digest(&h)) {
                once_same = 0;
                printf("# vr_hash_once differs at %zu bytes, seed %llx\n", len,
                       (unsigned long long)seed);
            }
        }
    }
    OK(once_same && vr_hash_once("a", 1, 0) == 0xd24ec4f1a98c6e5bULL,
       "vr_hash_once gives the streaming digest (0 to 200 bytes, two seeds)");
}

/*-*** BLAKE2b-256 ***/

static void blake2b_of(const void *data, size_t len, char hex[VR_BLAKE2B_HEX])
{
    vr_blake2b s;
    vr_blake2b_init(&s);
    vr_blake2b_update(&s, data, len);
    vr_blake2b_hex(&s, hex);
}

/* The digests are Python's hashlib.blake2b(data, digest_size=32). The
 * lengths 128, 129 and 256 are where a block ends or the last is kept. */
static void test_blake2b(void)
{
    unsigned char buf[1000];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 31 + 7);
    static const struct {
        const char *text; /* NULL: the first len bytes of buf */
        size_t len;
        const char *digest;
    } vectors[] = {
        {"", 0, "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"},
        {"abc", 3, "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319"},
        {NULL, 128, "82783c69cecd49386e8825c6b20f3b41a43b4c9e3a21b627d88bf025046e4c72"},
        {NULL, 129, "b71e24c47c2d5cc68a99732abb05b9f80f2ecdd7744e9d111f453bb26f917e69"},
        {NULL, 256, "39041a8098f94c795b569a413ef8f0477df2ee6c974e77c065ca884b008f6b3d"},
        {NULL, 1000, "5d0119acc3b3fb1d1e878b458ef4140eee7d2ecaec6cdbe8a095b6c2da4b06b7"},
    };
    char hex[VR_BLAKE2B_HEX];
    for (size_t i = 0; i < sizeof vectors / sizeof *vectors; i++) {
        blake2b_of(vectors[i].text ? (const void *)vectors[i].text : buf, vectors[i].len, hex);
        STR_EQ(hex, vectors[i].digest, "BLAKE2b-256 of %zu bytes (%s)", vectors[i].len,
               vectors[i].text ? "text" : "pattern");
    }

    int all_same = 1;
    for (size_t piece = 1; piece <= 300; piece++) {
        vr_blake2b s;
        vr_blake2b_init(&s);
        for (size_t off = 0; off < sizeof buf; off += piece)
            vr_blake2b_update(&s, buf + off, sizeof buf - off < piece ? sizeof buf - off : piece);
        vr_blake2b_hex(&s, hex);
        if (strcmp(hex, vectors[5].digest) != 0) {
            all_same = 0;
            printf("# pieces of %zu differ\n", piece);
        }
    }
    OK(all_same, "streaming in pieces of 1..300 bytes matches one update (1000 bytes)");

    vr_blake2b s;
    vr_blake2b_init(&s);
    vr_blake2b_update(&s, buf, 256);
    vr_blake2b_hex(&s, hex);
    vr_blake2b_update(&s, buf + 256, sizeof buf - 256);
    char whole[VR_BLAKE2B_HEX];
    vr_blake2b_hex(&s, whole);
    OK(strcmp(hex, vectors[4].digest) == 0 && strcmp(whole, vectors[5].digest) == 0,
       "a digest taken mid-stream does not disturb the state");
}

/*-*** vr_units ***/

static void test_units(void)
{
    char out[64];
    static const struct {
        int64_t v;
        const char *want;
    } bytes[] = {
        {0, "0 B"},
        {1, "1 B"},
        {1023, "1023 B"},
        {1024, "1.00 KiB"},
        {1536, "1.50 KiB"},
        {15360, "15.0 KiB"},
        {1023 * 1024, "1023 KiB"},
        {1048575, "1.00 MiB"},
        {536870912, "512 MiB"},
        {123456789, "118 MiB"},
        {5433000000LL, "5.06 GiB"},
        {1099511627776LL, "1.00 TiB"},
        {1125899906842624LL, "1.00 PiB"},
        {INT64_MAX, "8.00 EiB"},
        {-5, "-5 B"},
        {-1536, "-1.50 KiB"},
        {-5433000000LL, "-5.06 GiB"},
    };
    for (size_t i = 0; i < sizeof bytes / sizeof *bytes; i++) {
        vr_units_bytes(bytes[i].v, out, sizeof out);
        STR_EQ(out, bytes[i].want, "vr_units_bytes(%lld)", (long long)bytes[i].v);
    }

    static const struct {
        int64_t ns;
        const char *want;
    } durs[] = {
        {0, "0 ns"},
        {850, "850 ns"},
        {999, "999 ns"},
        {1000, "1.00 \xC2\xB5s"},
        {12300, "12.3 \xC2\xB5s"},
        {123000, "123 \xC2\xB5s"},
        {1230000, "1.23 ms"},
        {2450000000LL, "2.45 s"},
        {60000000000LL, "60.0 s"},
        {119000000000LL, "119 s"},
        {120000000000LL, "2.00 min"},
        {210000000000LL, "3.50 min"},
        {7190000000000LL, "120 min"},
        {7200000000000LL, "2.00 h"},
        {172000000000000LL, "47.8 h"},
        {172800000000000LL, "2.00 days"},
        {30215400000000000LL, "350 days"},
        {-850, "-850 ns"},
        {-2450000000LL, "-2.45 s"},
    };
    for (size_t i = 0; i < sizeof durs / sizeof *durs; i++) {
        vr_units_duration(durs[i].ns, out, sizeof out);
        STR_EQ(out, durs[i].want, "vr_units_duration(%lld)", (long long)durs[i].ns);
    }

    /* Points in time keep enough digits to order events a few µs apart. */
    static const struct {
        int64_t ns;
        const char *want;
    } times[] = {
        {0, "0 ns"},
        {850, "850 ns"},
        {300000, "300.0 \xC2\xB5s"},
        {520210, "520.2 \xC2\xB5s"},
        {194213000, "194.21 ms"},
        {55714250000LL, "55.714 s"},
        {-1500000000LL, "-1.500 s"},
    };
    for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
        vr_units_time(times[i].ns, out, sizeof out);
        STR_EQ(out, times[i].want, "vr_units_time(%lld)", (long long)times[i].ns);
    }

    static const struct {
        int64_t v;
        const char *want;
    } counts[] = {
        {0, "0"},
        {7, "7"},
        {999, "999"},
        {1000, "1,000"},
        {12345, "12,345"},
        {123456, "123,456"},
        {1234567, "1,234,567"},
        {-1, "-1"},
        {-999, "-999"},
        {-1000, "-1,000"},
        {-1234567, "-1,234,567"},
        {INT64_MAX, "9,223,372,036,854,775,807"},
        {-INT64_MAX, "-9,223,372,036,854,775,807"},
    };
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        vr_units_count(counts[i].v, out, sizeof out);
        STR_EQ(out, counts[i].want, "vr_units_count(%lld)", (long long)counts[i].v);
    }

    /* Small buffers: always NUL-terminated, never overrun. */
    char small[8];
    memset(small, 'x', sizeof small);
    vr_units_count(1234567890, small, 5);
    OK(memchr(small, '\0', 5) != NULL && small[5] == 'x',
       "vr_units_count truncates into a 5-byte buffer (\"%.5s\")", small);
    memset(small, 'x', sizeof small);
    vr_units_bytes(5433000000LL, small, 4);
    OK(memchr(small, '\0', 4) != NULL && small[4] == 'x',
       "vr_units_bytes truncates into a 4-byte buffer");
    memset(small, 'x', sizeof small);
    vr_units_duration(2450000000LL, small, 3);
    OK(memchr(small, '\0', 3) != NULL && small[3] == 'x',
       "vr_units_duration truncates into a 3-byte buffer");
}

/* A value that rounds up to 1024 of a unit is shown in the next unit, as
 * 1048575 bytes is "1.00 MiB" (not "1024 KiB"): three significant digits. */
/* --tz zones, and civil dates against values from Python's
 * datetime(..., tzinfo=timezone.utc).timestamp(). */
static void test_tz(void)
{
    static const struct {
        const char *text;
        int ok;
        int64_t seconds;
    } zones[] = {
        {"UTC", 1, 0},        {"z", 1, 0},          {"GMT", 1, 0},
        {"+02:00", 1, 7200},  {"-0530", 1, -19800}, {"+2", 1, 7200},
        {"UTC+01:00", 1, 3600}, {"GMT-3", 1, -10800}, {"+14:00", 1, 50400},
        {"Europe/Berlin", 0, 0}, {"+15", 0, 0},     {"+02:60", 0, 0},
        {"02:00", 0, 0},      {"", 0, 0},           {"+02:0", 0, 0},
        {"+", 0, 0},          {"UTC+", 0, 0},
    };
    for (size_t i = 0; i < sizeof zones / sizeof *zones; i++) {
        int64_t off = -1;
        int rc = vr_tz_parse(zones[i].text, &off);
        OK(rc == (zones[i].ok ? 0 : -1), "zone %s parsed as expected", zones[i].text);
        if (zones[i].ok)
            INT_EQ(off, zones[i].seconds * INT64_C(1000000000), "offset of %s", zones[i].text);
    }
    int64_t ns = 0;
    OK(vr_tz_civil_to_ns(1970, 1, 1, 0, 0, 0, 0, &ns) == 0 && ns == 0, "civil date");
    /* 2024-03-12 10:15:32.123 UTC = 1710238532.123 */
    OK(vr_tz_civil_to_ns(2024, 3, 12, 10, 15, 32, 123000000, &ns) == 0 &&
          ns == INT64_C(1710238532123000000), "civil date");
    /* 2000-02-29 (a leap day of a century year) 23:59:59 = 951868799 */
    OK(vr_tz_civil_to_ns(2000, 2, 29, 23, 59, 59, 0, &ns) == 0 &&
          ns == INT64_C(951868799000000000), "civil date");
    OK(vr_tz_civil_to_ns(2024, 13, 1, 0, 0, 0, 0, &ns) == -1, "civil date");
    OK(vr_tz_civil_to_ns(2024, 1, 1, 24, 0, 0, 0, &ns) == -1, "civil date");
    OK(vr_tz_civil_to_ns(1800, 1, 1, 0, 0, 0, 0, &ns) == -1, "civil date");
    OK(vr_tz_civil_to_ns(7505, 7, 14, 8, 12, 53, 0, &ns) == -1, "a year past 64-bit ns refused");
    OK(vr_tz_civil_to_ns(2261, 12, 31, 23, 59, 59, 0, &ns) == 0, "2261 still fits");
}

/* nvidia-smi's sizes and stamps (src/import/monitor.c). */
static void test_monitor_values(void)
{
    static const struct {
        const char *text;
        int64_t unit;
        int ok;
        int64_t bytes;
    } sizes[] = {
        {"81559 MiB", 1, 1, INT64_C(81559) << 20}, {" 479MiB ", 1, 1, INT64_C(479) << 20},
        {"4096", 1 << 20, 1, INT64_C(4096) << 20}, {"0 B", 1, 1, 0},
        {"1.5 GiB", 1, 1, INT64_C(3) << 29},       {"2 KB", 1, 1, 2048},
        {"[N/A]", 1, 0, 0}, {"N/A", 1 << 20, 0, 0}, {"[Not Supported]", 1, 0, 0},
        {"", 1, 0, 0},      {"12 parsecs", 1, 0, 0}, {"MiB", 1, 0, 0},
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
    OK(vr_monitor_stamp("2024/03/12 10:15:32.123", 23, &ns) &&
           ns == INT64_C(1710238532123000000), "a CSV timestamp");
    /* Tue Jul 14 08:12:53 2026: 1784016773 s (Python's calendar.timegm) */
    OK(vr_monitor_stamp("Tue Jul 14 08:12:53 2026", 24, &ns) &&
           ns == INT64_C(1784016773000000000), "a ctime timestamp");
    OK(vr_monitor_stamp("Fri Jan  6 01:02:03 2023", 24, &ns) &&
           ns == INT64_C(1672966923000000000), "a padded day");
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

/* The batches' columns by name: insert_other_entry, insert_stack_frame
 * and insert_numbered_stack (snapshot.sql), insert_frame (snapshot.sql),
 * insert_categorised_mem_event (import.sql). */
enum { OE_ID, OE_SOURCE, OE_DEVICE, OE_SEQ, OE_ACTION, OE_ADDRESS, OE_BYTES, OE_STREAM, OE_TS,
       OE_FREE, OE_STACK, OE_NCOLS };
static const char *const other_entry_cols[OE_NCOLS] = {
    ":id", ":source", ":device", ":seq", ":action", ":address",
    ":bytes", ":stream", ":ts", ":device_free", ":stack"};
static const char *const stack_frame_cols[] = {":stack", ":position", ":frame"};
static const char *const numbered_stack_cols[] = {":id", ":digest", ":depth", ":user_frame"};
static const char *const frame_cols[] = {":file", ":line", ":function"};
static const char *const categorised_cols[] = {":source", ":device", ":ts", ":bytes", ":category"};

static vr_db_batch *other_entries(vr_db *db, vr_error *err)
{
    return vr_db_batch_new(db, "schemas/snapshot.sql", "insert_other_entry", other_entry_cols,
                           OE_NCOLS, err);
}

/* A row of trace_entry_other (schemas/snapshot.sql insert_other_entry):
 * id NULL (the next rowid), seq and ts_ns = seq, the rest fixed or NULL. */
static int add_other_entry(vr_db_batch *b, int64_t id, int64_t seq, vr_error *err)
{
    vr_db_batch_opt_int(b, OE_ID, id > 0, id);
    vr_db_batch_int(b, OE_SOURCE, 1);
    vr_db_batch_int(b, OE_DEVICE, 1);
    vr_db_batch_int(b, OE_SEQ, seq);
    vr_db_batch_int(b, OE_ACTION, 0);
    for (int c = OE_ADDRESS; c < OE_NCOLS; c++)
        vr_db_batch_null(b, c);
    vr_db_batch_int(b, OE_TS, seq);
    return vr_db_batch_row(b, err);
}

static int64_t query_int64(vr_db *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(vr_db_handle(db), sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* A temporary database inside a transaction, or NULL (counted as a
 * failed check). */
static vr_db *open_in_transaction(vr_error *err)
{
    vr_db *db = vr_db_open(NULL, err);
    OK(db && vr_db_begin(db, err) == 0, "a database (%s)", err->msg);
    return db;
}

/* The writer thread (src/batch/batch.c): rows come out in the order they were
 * added, whatever the caller does with the connection in between (names
 * interned between enter and leave, with their ids read back at once),
 * and many rows added while the connection is held do not deadlock. */
static void test_batch_writer(void)
{
    vr_error err = VR_ERROR_INIT;
    vr_db *db = open_in_transaction(&err);
    if (!db)
        return;
    vr_db_batch *rows = other_entries(db, &err);
    vr_db_batch *frames = vr_db_batch_new(db, "schemas/snapshot.sql", "insert_stack_frame",
                                          stack_frame_cols, 3, &err);
    vr_db_writer *w = vr_db_writer_start(db, &err);
    OK(rows && frames && w, "two batches and a writer (%s)", err.msg);
    if (!rows || !frames || !w)
        return;
    vr_db_writer_attach(w, rows);
    vr_db_writer_attach(w, frames);
    int64_t seq = 0, nframes = 0, bad_names = 0, failed = 0;
    for (; seq < VR_DB_WRITER_BATCH_ROWS * 40 + 13; seq++) {
        failed |= add_other_entry(rows, 0, seq, &err) < 0;
        if (seq % 3 == 0) {
            vr_db_batch_int(frames, 0, seq); /* :stack */
            vr_db_batch_int(frames, 1, 0);   /* :position */
            vr_db_batch_int(frames, 2, seq); /* :frame */
            failed |= vr_db_batch_row(frames, &err) < 0;
            nframes++;
        }
        if (seq % 100 == 0) {
            char name[32];
            snprintf(name, sizeof name, "name %lld", (long long)seq);
            vr_db_writer_enter(w);
            vr_db_writer_enter(w); /* pairs nest */
            int64_t id = vr_db_intern(db, name, strlen(name), &err);
            vr_db_writer_leave(w);
            bad_names += id != sqlite3_last_insert_rowid(vr_db_handle(db));
            vr_db_writer_leave(w);
        }
    }
    vr_db_writer_enter(w);
    for (int i = 0; i < VR_DB_WRITER_BATCH_ROWS * 20; i++, seq++) /* more than the writer holds: it is lent the connection */
        failed |= add_other_entry(rows, 0, seq, &err) < 0;
    vr_db_writer_leave(w);
    OK(!failed, "every row handed over (%s)", err.msg);
    INT_EQ(bad_names, 0, "each name's id read back between enter and leave is its own");
    OK(vr_db_writer_stop(w, &err) == 0, "the writer stops (%s)", err.msg);
    OK(vr_db_batch_flush(rows, &err) == 0 && vr_db_batch_flush(frames, &err) == 0,
       "the rest written by the caller (%s)", err.msg);
    INT_EQ(query_int64(db, "SELECT count(*) FROM trace_entry_other"), seq, "every row stored");
    INT_EQ(query_int64(db, "SELECT count(*) FROM (SELECT seq, row_number() OVER (ORDER BY id) - 1 "
                           "AS k FROM trace_entry_other) WHERE seq != k"),
           0, "rows numbered in the order they were added");
    INT_EQ(query_int64(db, "SELECT count(*) FROM stack_frame WHERE frame_id = stack_id"), nframes,
           "the second batch's rows stored too");
    vr_db_batch_free(rows);
    vr_db_batch_free(frames);
    vr_db_rollback(db);
    vr_db_close(db);
}

/* A write the writer thread fails (a duplicate id) comes back to the
 * caller as a database error, and nothing after it is written. */
static void test_batch_writer_failure(void)
{
    vr_error err = VR_ERROR_INIT;
    vr_db *db = open_in_transaction(&err);
    if (!db)
        return;
    vr_db_batch *rows = other_entries(db, &err);
    vr_db_writer *w = vr_db_writer_start(db, &err);
    OK(rows && w, "a batch and a writer (%s)", err.msg);
    if (!rows || !w)
        return;
    vr_db_writer_attach(w, rows);
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < VR_DB_WRITER_BATCH_ROWS * 100; i++)
        rc = add_other_entry(rows, 7, i, &err); /* every row id 7 */
    if (rc == 0)
        rc = vr_db_writer_stop(w, &err);
    else
        vr_db_writer_stop(w, &(vr_error)VR_ERROR_INIT);
    OK(rc < 0, "the failure reaches the caller");
    INT_EQ(err.code, VR_ERR_DATABASE, "as a database error");
    OK(strstr(err.msg, "UNIQUE constraint failed") != NULL, "naming the constraint: %s", err.msg);
    /* INSERT OR FAIL keeps the failing statement's rows before the
     * duplicate: the first row; no later batch is written. */
    INT_EQ(query_int64(db, "SELECT count(*) FROM trace_entry_other"), 1,
           "nothing stored after the failing row");
    vr_db_batch_free(rows);
    vr_db_rollback(db);
    vr_db_close(db);
}

/* Shared columns (insert_other_entry's source and device): a row with
 * another device ends a statement early, with or without a writer, and
 * every row keeps its own values, in the order added. */
static void test_batch_shared(void)
{
    for (int with_writer = 0; with_writer <= 1; with_writer++) {
        vr_error err = VR_ERROR_INIT;
        vr_db *db = open_in_transaction(&err);
        if (!db)
            return;
        vr_db_batch *rows = other_entries(db, &err);
        vr_db_writer *w = with_writer ? vr_db_writer_start(db, &err) : NULL;
        OK(rows && (w || !with_writer), "a batch (%s)", err.msg);
        if (!rows)
            return;
        vr_db_writer_attach(w, rows);
        int failed = 0;
        int64_t n = 3 * VR_DB_WRITER_BATCH_ROWS + 5;
        for (int64_t seq = 0; seq < n; seq++) {
            vr_db_batch_null(rows, OE_ID);
            vr_db_batch_int(rows, OE_SOURCE, 1 + seq / 1000);  /* a new one each 1000 rows */
            vr_db_batch_int(rows, OE_DEVICE, 1 + seq / 7 % 3); /* another each 7 rows */
            vr_db_batch_int(rows, OE_SEQ, seq);
            vr_db_batch_int(rows, OE_ACTION, 0);
            for (int c = OE_ADDRESS; c < OE_NCOLS; c++)
                vr_db_batch_null(rows, c);
            vr_db_batch_int(rows, OE_TS, seq);
            failed |= vr_db_batch_row(rows, &err) < 0;
        }
        failed |= vr_db_writer_stop(w, &err) < 0 || vr_db_batch_flush(rows, &err) < 0;
        OK(!failed, "every row written, writer %d (%s)", with_writer, err.msg);
        INT_EQ(query_int64(db, "SELECT count(*) FROM trace_entry_other"), n, "every row stored");
        INT_EQ(query_int64(db, "SELECT count(*) FROM trace_entry_other WHERE id != seq + 1"
                               " OR source_id != 1 + seq / 1000 OR device_id != 1 + seq / 7 % 3"),
               0, "each row with its own source and device, in the order added");
        vr_db_batch_free(rows);
        vr_db_rollback(db);
        vr_db_close(db);
    }
}

/* Blocks of other shapes through a batch (written as INSERT ... SELECT
 * from the buffered rows): an upsert's ON CONFLICT clause kept after the
 * tuple, text values, expressions around parameters, and a partial batch
 * written by the flush. */
static void test_batch_shapes(void)
{
    vr_error err = VR_ERROR_INIT;
    vr_db *db = open_in_transaction(&err);
    if (!db)
        return;
    vr_db_batch *frames =
        vr_db_batch_new(db, "schemas/snapshot.sql", "insert_frame", frame_cols, 3, &err);
    vr_db_batch *events = vr_db_batch_new(db, "schemas/import.sql", "insert_categorised_mem_event",
                                          categorised_cols, 5, &err);
    vr_db_batch *stacks = vr_db_batch_new(db, "schemas/snapshot.sql", "insert_numbered_stack",
                                          numbered_stack_cols, 4, &err);
    OK(frames && events && stacks, "three batches (%s)", err.msg);
    if (!frames || !events || !stacks)
        return;
    int failed = 0;
    for (int i = 0; i < VR_DB_BATCH_ROWS + 10; i++) { /* every frame twice */
        vr_db_batch_int(frames, 0, i / 2); /* :file */
        vr_db_batch_int(frames, 1, 7);     /* :line */
        vr_db_batch_int(frames, 2, 1);     /* :function */
        failed |= vr_db_batch_row(frames, &err) < 0;
        vr_db_batch_int(events, 0, 1);   /* :source */
        vr_db_batch_int(events, 1, 1);   /* :device */
        vr_db_batch_int(events, 2, i);   /* :ts */
        vr_db_batch_int(events, 3, 100); /* :bytes */
        vr_db_batch_static_text(events, 4, i % 2 ? "parameter" : "gradient");
        failed |= vr_db_batch_row(events, &err) < 0;
    }
    vr_db_batch_int(stacks, 0, 5);  /* :id */
    vr_db_batch_int(stacks, 1, -1); /* :digest */
    vr_db_batch_int(stacks, 2, 2);  /* :depth */
    vr_db_batch_null(stacks, 3);    /* :user_frame */
    failed |= vr_db_batch_row(stacks, &err) < 0;
    failed |= vr_db_batch_flush(frames, &err) < 0 || vr_db_batch_flush(events, &err) < 0 ||
              vr_db_batch_flush(stacks, &err) < 0;
    OK(!failed, "every row written (%s)", err.msg);
    INT_EQ(query_int64(db, "SELECT count(*) FROM frame"), (VR_DB_BATCH_ROWS + 10) / 2,
           "duplicates skipped by ON CONFLICT DO NOTHING");
    INT_EQ(query_int64(db, "SELECT count(*) FROM mem_event WHERE category = "
                           "CASE ts_ns % 2 WHEN 1 THEN 'parameter' ELSE 'gradient' END"),
           VR_DB_BATCH_ROWS + 10, "each row's text stored");
    INT_EQ(query_int64(db, "SELECT count(*) FROM stack WHERE id = 5 AND digest = 'ffffffffffffffff'"
                           " AND depth = 2 AND user_frame_id IS NULL"),
           1, "an expression of a parameter evaluated");
    vr_db_batch_free(frames);
    vr_db_batch_free(events);
    vr_db_batch_free(stacks);
    vr_db_rollback(db);
    vr_db_close(db);
}

/* Parameters are named, and a name the statement lacks is an error that
 * names the statement and the parameter (a mistyped one would bind
 * nothing, and the row would get NULL there): for a bind, and for a
 * batch's columns either way (one the tuple lacks, or a parameter of the
 * tuple the caller did not name). */
static void test_named_parameters(void)
{
    vr_error err = VR_ERROR_INIT;
    vr_db *db = open_in_transaction(&err);
    if (!db)
        return;
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/import.sql", "insert_tally", &err);
    OK(st && vr_db_bind_int(st, ":source", 1, &err) == 0, "a parameter it has (%s)", err.msg);
    OK(st && vr_db_bind_int(st, ":sourc", 1, &err) < 0, "a mistyped one refused");
    INT_EQ(err.code, VR_ERR_DATABASE, "as a database error");
    OK(strstr(err.msg, "insert_tally") && strstr(err.msg, ":sourc"),
       "naming the statement and the name: %s", err.msg);
    err = (vr_error)VR_ERROR_INIT;
    OK(st && vr_db_bind_null(st, "?1", &err) < 0 && vr_db_bind_text(st, ":kinds", "x", 1, &err) < 0,
       "a number or another name refused too (%s)", err.msg);
    static const char *const missing[] = {":stack", ":position"};
    err = (vr_error)VR_ERROR_INIT;
    OK(!vr_db_batch_new(db, "schemas/snapshot.sql", "insert_stack_frame", missing, 2, &err),
       "a batch that does not name every parameter of its tuple refused");
    OK(strstr(err.msg, "insert_stack_frame") && strstr(err.msg, ":frame"),
       "naming the parameter: %s", err.msg);
    static const char *const extra[] = {":stack", ":position", ":frame", ":frames"};
    err = (vr_error)VR_ERROR_INIT;
    OK(!vr_db_batch_new(db, "schemas/snapshot.sql", "insert_stack_frame", extra, 4, &err),
       "a column the tuple lacks refused");
    OK(strstr(err.msg, "insert_stack_frame") && strstr(err.msg, ":frames"),
       "naming the column: %s", err.msg);
    static const char *const reordered[] = {":frame", ":stack", ":position"};
    err = (vr_error)VR_ERROR_INIT;
    vr_db_batch *b =
        vr_db_batch_new(db, "schemas/snapshot.sql", "insert_stack_frame", reordered, 3, &err);
    OK(b != NULL, "columns in the caller's order (%s)", err.msg);
    if (b) {
        vr_db_batch_int(b, 0, 30); /* :frame */
        vr_db_batch_int(b, 1, 10); /* :stack */
        vr_db_batch_int(b, 2, 20); /* :position */
        OK(vr_db_batch_row(b, &err) == 0 && vr_db_batch_flush(b, &err) == 0, "a row (%s)",
           err.msg);
        INT_EQ(query_int64(db, "SELECT count(*) FROM stack_frame WHERE stack_id = 10 AND "
                               "position = 20 AND frame_id = 30"),
               1, "each value where its name says");
        vr_db_batch_free(b);
    }
    vr_db_rollback(db);
    vr_db_close(db);
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

static void test_units_rollover(void)
{
    char out[64];
    vr_units_bytes(1048064, out, sizeof out); /* 1023.5 KiB */
    STR_EQ(out, "1.00 MiB", "vr_units_bytes(1048064) (1023.5 KiB) rolls over to MiB");
    vr_units_duration(999999, out, sizeof out); /* 999.999 us */
    STR_EQ(out, "1.00 ms", "vr_units_duration(999999) rolls over to ms");
    vr_units_duration(999999999, out, sizeof out);
    STR_EQ(out, "1.00 s", "vr_units_duration(999999999) rolls over to s");
}

/* INT64_MIN has no positive counterpart: -v overflows. */
static void test_units_count_min(void)
{
    char out[64];
    vr_units_count(INT64_MIN, out, sizeof out);
    STR_EQ(out, "-9,223,372,036,854,775,808", "vr_units_count(INT64_MIN)");
}

/*-*** vr_json ***/

/* Runs `text` as one value through the reader, from a heap copy of exactly
 * its size (so ASan sees any read past the end). */
typedef struct {
    char *copy;
    vr_json j;
    vr_json_tally t;
} jdoc;

static void jdoc_open(jdoc *d, const char *text, size_t len)
{
    d->copy = vr_xmalloc(len ? len : 1);
    memcpy(d->copy, text, len);
    memset(&d->t, 0, sizeof d->t);
    vr_json_init(&d->j, d->copy, len, &d->t);
}

static void jdoc_close(jdoc *d) { free(d->copy); }

static int us_to_ns(const char *text, int64_t *out, vr_json_tally *t)
{
    jdoc d;
    jdoc_open(&d, text, strlen(text));
    int ok = vr_json_us_to_ns(&d.j, out);
    if (t)
        *t = d.t;
    jdoc_close(&d);
    return ok;
}

static char *str_dup(const vr_json_str *s) { return vr_xstrndup(s->s, s->len); }

static char *unescaped(const char *raw, vr_json_tally *t)
{
    vr_json_str s = {raw, strlen(raw), strchr(raw, '\\') != NULL};
    vr_buf out = VR_BUF_INIT;
    vr_json_unescape(&s, &out, t);
    vr_buf_putc(&out, '\0');
    return vr_buf_detach(&out);
}

/* Reads every value in the document the way an importer would, following
 * each kind; returns how many values were read. Never loops forever: each
 * step must consume bytes or fail. */
static int walk(vr_json *j, vr_buf *scratch, int depth)
{
    int n = 0;
    vr_json_str s;
    int64_t v;
    int b;
    switch (vr_json_peek(j)) {
    case VR_JSON_OBJECT:
        if (depth > 64) {
            vr_json_skip(j);
            return 1;
        }
        if (vr_json_enter_object(j)) {
            const char *last = NULL;
            while (vr_json_next_member(j, &s)) {
                vr_buf_clear(scratch);
                vr_json_unescape(&s, scratch, j->tally);
                if (j->p == last)
                    break;
                last = j->p;
                n += walk(j, scratch, depth + 1);
            }
        }
        return n + 1;
    case VR_JSON_ARRAY:
        if (depth > 64) {
            vr_json_skip(j);
            return 1;
        }
        if (vr_json_enter_array(j)) {
            const char *last = NULL;
            while (vr_json_next_element(j)) {
                if (j->p == last)
                    break;
                last = j->p;
                n += walk(j, scratch, depth + 1);
            }
        }
        return n + 1;
    case VR_JSON_STRING:
        if (vr_json_string(j, &s)) {
            vr_buf_clear(scratch);
            vr_json_unescape(&s, scratch, j->tally);
        }
        return 1;
    case VR_JSON_NUMBER: {
        vr_json copy = *j;
        vr_json_us_to_ns(&copy, &v);
        vr_json_int64(j, &v);
        return 1;
    }
    case VR_JSON_TRUE:
    case VR_JSON_FALSE:
        vr_json_bool(j, &b);
        return 1;
    case VR_JSON_NULL:
        vr_json_skip(j);
        return 1;
    default:
        return 0;
    }
}

static void test_json_reader(void)
{
    static const char ev[] =
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 12, "
        "\"tid\": \"25738\", \"ts\": 1712195495519689.047, \"dur\": 63.813,\n"
        "  \"args\": {\"External id\": 7, \"nested\": {\"a\": [1, 2, {\"b\": null}]},"
        " \"flag\": true, \"off\": false}, \"id\": 9}";
    jdoc d;
    jdoc_open(&d, ev, sizeof ev - 1);
    vr_json *j = &d.j;
    vr_json_str key, s, args = {0};
    int64_t pid = 0, tid = 0, ts = 0, dur = 0, id = 0;
    char *ph = NULL, *cat = NULL, *name = NULL;
    int members = 0;
    OK(vr_json_peek(j) == VR_JSON_OBJECT, "peek sees an object");
    OK(vr_json_enter_object(j), "enter_object");
    while (vr_json_next_member(j, &key)) {
        members++;
        if (vr_json_str_eq(&key, "ph") && vr_json_string(j, &s))
            ph = str_dup(&s);
        else if (vr_json_str_eq(&key, "cat") && vr_json_string(j, &s))
            cat = str_dup(&s);
        else if (vr_json_str_eq(&key, "name") && vr_json_string(j, &s))
            name = str_dup(&s);
        else if (vr_json_str_eq(&key, "pid"))
            vr_json_int64(j, &pid);
        else if (vr_json_str_eq(&key, "tid"))
            vr_json_int64(j, &tid);
        else if (vr_json_str_eq(&key, "ts"))
            vr_json_us_to_ns(j, &ts);
        else if (vr_json_str_eq(&key, "dur"))
            vr_json_us_to_ns(j, &dur);
        else if (vr_json_str_eq(&key, "args"))
            vr_json_raw(j, &args);
        else if (vr_json_str_eq(&key, "id"))
            vr_json_int64(j, &id);
        else
            vr_json_skip(j);
    }
    OK(!j->failed, "the event reads without failure");
    INT_EQ(members, 9, "nine members");
    INT_EQ(j->depth, 0, "depth back to 0 after the closing brace");
    OK(j->p == j->end, "reader consumed the whole event");
    STR_EQ(ph, "X", "ph");
    STR_EQ(cat, "cpu_op", "cat");
    STR_EQ(name, "aten::mm", "name");
    INT_EQ(pid, 12, "pid as a number");
    INT_EQ(tid, 25738, "tid as a numeric string \"25738\"");
    INT_EQ(ts, 1712195495519689047LL, "ts 1712195495519689.047 us in ns");
    INT_EQ(dur, 63813, "dur 63.813 us in ns");
    INT_EQ(id, 9, "member after args still read");
    free(ph);
    free(cat);
    free(name);

    /* args: nested objects and arrays, read from the raw span. */
    OK(args.s && args.len > 0 && args.s[0] == '{' && args.s[args.len - 1] == '}',
       "vr_json_raw returns the args object's bytes");
    vr_json a;
    vr_json_init(&a, args.s, args.len, NULL);
    int64_t ext = 0;
    int flag = -1, off = -1, saw_nested = 0;
    OK(vr_json_enter_object(&a), "enter args");
    while (vr_json_next_member(&a, &key)) {
        if (vr_json_str_eq(&key, "External id")) {
            vr_json_int64(&a, &ext);
        } else if (vr_json_str_eq(&key, "flag")) {
            vr_json_bool(&a, &flag);
        } else if (vr_json_str_eq(&key, "off")) {
            vr_json_bool(&a, &off);
        } else if (vr_json_str_eq(&key, "nested")) {
            OK(vr_json_enter_object(&a), "enter nested");
            OK(vr_json_next_member(&a, &key) && vr_json_str_eq(&key, "a"), "nested.a");
            OK(vr_json_enter_array(&a), "enter nested.a");
            int64_t v1 = 0, v2 = 0;
            OK(vr_json_next_element(&a) && vr_json_int64(&a, &v1) && v1 == 1, "a[0] == 1");
            OK(vr_json_next_element(&a) && vr_json_int64(&a, &v2) && v2 == 2, "a[1] == 2");
            OK(vr_json_next_element(&a) && vr_json_peek(&a) == VR_JSON_OBJECT, "a[2] is an object");
            vr_json_skip(&a);
            OK(!vr_json_next_element(&a), "a ends after 3 elements");
            OK(!vr_json_next_member(&a, &key), "nested ends");
            saw_nested = 1;
        } else {
            vr_json_skip(&a);
        }
    }
    OK(!a.failed && saw_nested, "args walked without failure");
    INT_EQ(ext, 7, "args.External id");
    INT_EQ(flag, 1, "args.flag true");
    INT_EQ(off, 0, "args.off false");
    jdoc_close(&d);

    /* Arrays of mixed numbers: numeric strings, exponents, and fractions
     * that are no integer (skipped: got[] keeps its 0). */
    static const char arr[] = "[1, \"2\", 3.9, -4.2, 1e3, \"-17\"]";
    jdoc_open(&d, arr, sizeof arr - 1);
    int64_t want[] = {1, 2, 0, 0, 1000, -17}, got[6] = {0};
    int k = 0;
    OK(vr_json_enter_array(&d.j), "enter array");
    while (vr_json_next_element(&d.j) && k < 6)
        vr_json_int64(&d.j, &got[k++]);
    INT_EQ(k, 6, "six elements");
    for (int i = 0; i < 6; i++)
        INT_EQ(got[i], want[i], "array element %d as int64", i);
    OK(!d.j.failed, "array read without failure");
    INT_EQ(d.t.inexact_number, 2, "3.9 and -4.2 counted as inexact numbers");
    jdoc_close(&d);

    /* Kind mismatch: the value is skipped and 0 returned; reading goes on. */
    static const char mm[] = "{\"a\": 5, \"b\": {\"x\": [1]}, \"c\": \"s\", \"d\": 8}";
    jdoc_open(&d, mm, sizeof mm - 1);
    int64_t dv = 0;
    vr_json_enter_object(&d.j);
    vr_json_next_member(&d.j, &key);
    OK(!vr_json_string(&d.j, &s), "vr_json_string on a number returns 0");
    vr_json_next_member(&d.j, &key);
    OK(!vr_json_int64(&d.j, &dv), "vr_json_int64 on an object returns 0");
    vr_json_next_member(&d.j, &key);
    OK(!vr_json_int64(&d.j, &dv), "vr_json_int64 on a non-numeric string returns 0");
    OK(vr_json_next_member(&d.j, &key) && vr_json_str_eq(&key, "d") && vr_json_int64(&d.j, &dv) &&
           dv == 8,
       "the member after the mismatches is read");
    OK(!vr_json_next_member(&d.j, &key) && !d.j.failed, "object closes cleanly");
    jdoc_close(&d);
}

static void test_json_numbers(void)
{
    static const struct {
        const char *text;
        int64_t ns;
    } ts[] = {
        {"1712195495519689.047", 1712195495519689047LL},
        {"\"1712195495519689.047\"", 1712195495519689047LL},
        {"1712195495519689", 1712195495519689000LL},
        {"63.813", 63813},
        {"63.8", 63800},
        {"63.", 63000},
        {"0", 0},
        {"0.001", 1},
        {"63.8125", 63813}, /* fourth decimal rounds: 63812.5 ns -> 63813 */
        {"63.8124", 63812},
        {"63.81249", 63812},
        {"63.9995", 64000},
        {"0.0005", 1},
        {"-63.813", -63813},
        {"-0.5", -500},
        {"-1712195495519689.047", -1712195495519689047LL},
        {"9223372036854775.807", INT64_MAX},
        {"\"25\"", 25000},
    };
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) {
        int64_t v = 12345;
        vr_json_tally t;
        int ok = us_to_ns(ts[i].text, &v, &t);
        OK(ok && v == ts[i].ns && t.int_overflow == 0, "us_to_ns(%s) = %lld (got %lld)",
           ts[i].text, (long long)ts[i].ns, (long long)v);
    }

    vr_json_tally t;
    int64_t v;
    OK(!us_to_ns("9223372036854776", &v, &t) && t.int_overflow == 1,
       "us_to_ns beyond int64 ns: refused and counted");
    OK(!us_to_ns("99999999999999999999999", &v, &t) && t.int_overflow == 1,
       "us_to_ns beyond int64 us: refused and counted");
    OK(!us_to_ns("\"abc\"", &v, &t), "us_to_ns on a non-numeric string returns 0");
    OK(!us_to_ns("null", &v, &t), "us_to_ns on null returns 0");

    /* vr_json_int64: overflow clamps and counts, returns 1. */
    jdoc d;
    static const char big[] = "[99999999999999999999, -99999999999999999999, "
                              "9223372036854775807, -9223372036854775808, "
                              "\"18446744073709551616\"]";
    jdoc_open(&d, big, sizeof big - 1);
    int64_t got[5] = {0};
    int n = 0;
    vr_json_enter_array(&d.j);
    while (vr_json_next_element(&d.j) && n < 5) {
        OK(vr_json_int64(&d.j, &got[n]), "int64 element %d returns 1", n);
        n++;
    }
    INT_EQ(got[0], INT64_MAX, "positive overflow clamps to INT64_MAX");
    OK(got[1] == INT64_MIN, "negative overflow clamps to INT64_MIN");
    INT_EQ(got[2], INT64_MAX, "INT64_MAX itself");
    OK(got[3] == INT64_MIN, "INT64_MIN itself");
    INT_EQ(got[4], INT64_MAX, "overflow in a numeric string clamps too");
    INT_EQ(d.t.int_overflow, 3, "three overflows counted");
    jdoc_close(&d);

    /* vr_json_parse_int64 directly. */
    static const struct {
        const char *s;
        int ok, overflow;
        int64_t v;
    } p[] = {
        {"123", 1, 0, 123},
        {"-0", 1, 0, 0},
        {"+5", 1, 0, 5},
        {"12abc", 1, 0, 12},
        {"007", 1, 0, 7},
        {"9223372036854775807", 1, 0, INT64_MAX},
        {"9223372036854775808", 1, 1, INT64_MAX},
        {"-9223372036854775808", 1, 0, INT64_MIN},
        {"-9223372036854775809", 1, 1, INT64_MIN},
        {"", 0, 0, 0},
        {"-", 0, 0, 0},
        {"abc", 0, 0, 0},
        {" 1", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) {
        int64_t out = 42;
        int of = -1;
        size_t len = strlen(p[i].s);
        char *copy = vr_xmalloc(len ? len : 1);
        memcpy(copy, p[i].s, len);
        int ok = vr_json_parse_int64(copy, len, &out, &of);
        free(copy);
        OK(ok == p[i].ok && (!ok || (of == p[i].overflow && out == p[i].v)),
           "parse_int64(\"%s\") -> ok %d overflow %d value %lld", p[i].s, p[i].ok,
           p[i].overflow, (long long)p[i].v);
    }
}

/* us * 1000 + frac must not overflow at the top of the range: a timestamp
 * just above INT64_MAX ns is refused and counted like the others. */
static void test_json_ts_edge(void)
{
    vr_json_tally t;
    int64_t v = 0;
    int ok = us_to_ns("9223372036854775.808", &v, &t);
    OK(!ok && t.int_overflow == 1,
       "us_to_ns(9223372036854775.808) (1 ns above INT64_MAX) is refused and counted "
       "(got ok=%d v=%lld)",
       ok, (long long)v);
    ok = us_to_ns("-9223372036854775.809", &v, &t);
    OK(!ok && t.int_overflow == 1,
       "us_to_ns(-9223372036854775.809) (1 ns below INT64_MIN) is refused and counted "
       "(got ok=%d v=%lld)",
       ok, (long long)v);
}

/*-*** numbers with a fraction or an exponent ***/

/* Reads `text` with vr_json_int64 as the first element of [text, 7]; sets
 * *next_ok when the 7 after it is still read (a skipped value is consumed,
 * as for a kind mismatch). */
static int int64_first_of_two(const char *text, int64_t *out, vr_json_tally *t, int *next_ok)
{
    size_t n = strlen(text);
    char *arr = vr_xmalloc(n + 6);
    arr[0] = '[';
    memcpy(arr + 1, text, n);
    memcpy(arr + 1 + n, ", 7]", 5);
    jdoc d;
    jdoc_open(&d, arr, n + 5);
    free(arr);
    int64_t seven = 0;
    int ok = vr_json_enter_array(&d.j) && vr_json_next_element(&d.j) &&
             vr_json_int64(&d.j, out);
    *next_ok = vr_json_next_element(&d.j) && vr_json_int64(&d.j, &seven) && seven == 7 &&
               !vr_json_next_element(&d.j) && !d.j.failed;
    *t = d.t;
    jdoc_close(&d);
    return ok;
}

/* head, then `count` copies of `fill`, then tail (heap). */
static char *long_number(const char *head, char fill, size_t count, const char *tail)
{
    size_t h = strlen(head), t = strlen(tail);
    char *s = vr_xmalloc(h + count + t + 1);
    memcpy(s, head, h);
    memset(s + h, fill, count);
    memcpy(s + h + count, tail, t + 1);
    return s;
}

/* Integral values within int64 are read exactly, whatever their form:
 * decimal arithmetic on the digits, no double (which would lose
 * 9223372036854775807 and misread "2.5e9" as 2 before). */
static void test_json_exponents_exact(void)
{
    static const struct {
        const char *text;
        int64_t v;
    } exact[] = {
        {"2.5e9", 2500000000LL},
        {"2.5E+9", 2500000000LL},
        {"\"2.5e9\"", 2500000000LL},
        {"1E3", 1000},
        {"1e+3", 1000},
        {"1.0", 1},
        {"4096.0", 4096},
        {"63.", 63},
        {"-4.096e3", -4096},
        {"0e0", 0},
        {"1.0e0", 1},
        {"-0.0", 0},
        {"0.000e-5", 0},
        {"0e999999999999", 0},
        {"0.00120e4", 12},
        {"120e-1", 12},
        {"1e18", 1000000000000000000LL},
        {"9.223372036854775807e18", INT64_MAX},
        {"92233720368547758.07e2", INT64_MAX},
        {"-9.223372036854775808e18", INT64_MIN},
        {"123456789012345678900000000000e-11", 1234567890123456789LL},
        {"1e0000000000000000000003", 1000},
    };
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
        int64_t v = 42;
        vr_json_tally t;
        int next_ok;
        int ok = int64_first_of_two(exact[i].text, &v, &t, &next_ok);
        OK(ok && v == exact[i].v && next_ok && t.inexact_number == 0 && t.int_overflow == 0,
           "int64(%s) = %lld exactly (got ok=%d v=%lld inexact=%llu)", exact[i].text,
           (long long)exact[i].v, ok, (long long)v, (unsigned long long)t.inexact_number);
    }

    /* Beyond the 20 digits kept: trailing zeros still count, in the point. */
    static const struct {
        const char *head;
        size_t zeros;
        const char *tail;
        int64_t v;
    } longs[] = {
        {"1", 3000, "e-3000", 1},
        {"1", 3000, "e-2999", 10},
        {"0.", 2999, "1e3000", 1},
        {"-0.", 2999, "25e3002", -250},
    };
    for (size_t i = 0; i < sizeof longs / sizeof *longs; i++) {
        char *text = long_number(longs[i].head, '0', longs[i].zeros, longs[i].tail);
        int64_t v = 42;
        vr_json_tally t;
        int next_ok;
        int ok = int64_first_of_two(text, &v, &t, &next_ok);
        OK(ok && v == longs[i].v && next_ok && t.inexact_number == 0,
           "int64(%s + %zu zeros + %s) = %lld (got ok=%d v=%lld)", longs[i].head,
           longs[i].zeros, longs[i].tail, (long long)longs[i].v, ok, (long long)v);
        free(text);
    }
}

/* Not an integer, or beyond int64, in fraction/exponent form: skipped and
 * counted, never rounded, truncated or clamped. */
static void test_json_exponents_inexact(void)
{
    static const char *const inexact[] = {
        "1e309",
        "-1e309",
        "1e999999999999",
        "1e99999999999999999999999999",
        "9.223372036854775808e18",
        "-9.223372036854775809e18",
        "1e19",
        "99999999999999999999.0",
        "1e-400",
        "1e-999999999999",
        "12e-1",
        "3.7",
        "-4.2",
        "0.5",
        "\"3.7\"",
        "123456789012345678901234567890e-10",
        "1.00000000000000000000001",
        "2.5e-1",
    };
    for (size_t i = 0; i < sizeof inexact / sizeof *inexact; i++) {
        int64_t v = 42;
        vr_json_tally t;
        int next_ok;
        int ok = int64_first_of_two(inexact[i], &v, &t, &next_ok);
        OK(!ok && v == 42 && next_ok && t.inexact_number == 1 && t.int_overflow == 0,
           "int64(%s) skipped and counted as inexact (got ok=%d v=%lld inexact=%llu)",
           inexact[i], ok, (long long)v, (unsigned long long)t.inexact_number);
    }

    /* A nonzero digit far beyond the 20 kept makes it no integer. */
    char *text = long_number("1", '0', 3000, "1e-3001");
    int64_t v = 42;
    vr_json_tally t;
    int next_ok;
    int ok = int64_first_of_two(text, &v, &t, &next_ok);
    OK(!ok && next_ok && t.inexact_number == 1, "int64(1 + 3000 zeros + 1e-3001) is inexact");
    free(text);
}

/* Timestamps: microseconds to nanoseconds with the exponent applied
 * exactly, then rounded to the nearest ns as for plain fractions. */
static void test_json_exponents_ts(void)
{
    static const struct {
        const char *text;
        int64_t ns;
    } ts[] = {
        {"1.5e1", 15000},
        {"\"1.5e1\"", 15000},
        {"2E+3", 2000000},
        {"1.712195495519689047e15", 1712195495519689047LL},
        {"1712195495519689047e-3", 1712195495519689047LL},
        {"1.5e-3", 2},  /* 1.5 ns: halves away from zero, as "0.0015" */
        {"-1.5e-3", -2},
        {"4.4e-4", 0},
        {"5e-4", 1},
        {"1e-400", 0},
        {"0e999999999999", 0},
        {"1e0000000000000000000003", 1000000},
        {"9.223372036854775807e15", INT64_MAX},
        {"-9.223372036854775808e15", INT64_MIN},
    };
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) {
        int64_t v = 12345;
        vr_json_tally t;
        int ok = us_to_ns(ts[i].text, &v, &t);
        OK(ok && v == ts[i].ns && t.int_overflow == 0 && t.inexact_number == 0,
           "us_to_ns(%s) = %lld (got ok=%d v=%lld)", ts[i].text, (long long)ts[i].ns, ok,
           (long long)v);
    }

    static const char *const beyond[] = {"1e309", "-1e309", "1e999999999999",
                                         "9.223372036854775808e15", "1e16"};
    for (size_t i = 0; i < sizeof beyond / sizeof *beyond; i++) {
        int64_t v = 12345;
        vr_json_tally t;
        int ok = us_to_ns(beyond[i], &v, &t);
        OK(!ok && v == 12345 && t.int_overflow == 1,
           "us_to_ns(%s) beyond int64 ns: refused and counted (got ok=%d v=%lld)", beyond[i],
           ok, (long long)v);
    }
}

static long long q_int(sqlite3 *h, const char *sql);

static const char exp_trace[] =
    "{\"schemaVersion\": 1,\n"
    " \"deviceProperties\": [{\"id\": 0, \"name\": \"Exp GPU\", \"totalGlobalMem\": 85899345920}],\n"
    " \"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 7, \"tid\": 7, "
    "\"ts\": 1e3, \"dur\": 1.0e3},\n"
    "  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1.25e3, \"args\": {\"Total Reserved\": 4.194304e9, "
    "\"Total Allocated\": 2.5e9, \"Bytes\": 2.5E+9, \"Addr\": 1.0e1, \"Device Id\": 0e0, "
    "\"Device Type\": 1}},\n"
    "  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1500, \"args\": {\"Total Reserved\": 2097152, "
    "\"Total Allocated\": 0, \"Bytes\": 3.7, \"Addr\": 11, \"Device Id\": 0, "
    "\"Device Type\": 1}},\n"
    "  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1.6e3, \"args\": {\"Total Reserved\": 2097152, "
    "\"Total Allocated\": 0, \"Bytes\": -25e8, \"Addr\": 10, \"Device Id\": 0, "
    "\"Device Type\": 1}}\n"
    " ]}\n";

/* Through an import: exponent forms reach the database exactly, and an
 * inexact "Bytes" skips its event and is tallied. */
static void test_json_exponents_import(void)
{
    make_tmpdir();
    vr_error err = VR_ERROR_INIT;
    vr_db *db = vr_db_open(NULL, &err);
    OK(db != NULL, "vr_db_open(NULL) (%s)", err.msg);
    if (!db) {
        remove_tmpdir();
        return;
    }
    sqlite3 *h = vr_db_handle(db);
    const char *path = tmp_path("exp.pt.trace.json");
    write_file(path, exp_trace, sizeof exp_trace - 1);
    vr_import_result res;
    int rc = vr_import_file(db, path, NULL, &res, &err);
    OK(rc == 0 && res.status == VR_IMPORTED, "import of the exponent trace (%s)",
       rc ? err.msg : "ok");
    INT_EQ(q_int(h, "SELECT count(*) FROM mem_event"), 2, "two memory events kept");
    INT_EQ(q_int(h, "SELECT bytes FROM mem_event WHERE ts_ns = 1250000"), 2500000000LL,
           "Bytes 2.5E+9 at ts 1.25e3 us");
    INT_EQ(q_int(h, "SELECT addr FROM mem_event WHERE ts_ns = 1250000"), 10, "Addr 1.0e1");
    INT_EQ(q_int(h, "SELECT total_reserved FROM mem_event WHERE ts_ns = 1250000"), 4194304000LL,
           "Total Reserved 4.194304e9");
    INT_EQ(q_int(h, "SELECT bytes FROM mem_event WHERE ts_ns = 1600000"), -2500000000LL,
           "Bytes -25e8 at ts 1.6e3 us");
    INT_EQ(q_int(h, "SELECT count FROM source_tally WHERE kind = 'inexact_number'"), 1,
           "Bytes 3.7 tallied as inexact_number");
    INT_EQ(q_int(h, "SELECT count(*) FROM source_tally WHERE kind = 'int_overflow'"), 0,
           "no int_overflow tallied");
    vr_db_close(db);
    remove_tmpdir();
}

static void test_json_strings(void)
{
    vr_json_tally t;
    char *u;

    memset(&t, 0, sizeof t);
    u = unescaped("plain text", &t);
    STR_EQ(u, "plain text", "plain string unchanged");
    free(u);

    u = unescaped("q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t", &t);
    STR_EQ(u, "q\" b\\ s/ \b\f\n\r\t", "the two-character escapes");
    INT_EQ(t.invalid_utf8, 0, "no invalid UTF-8 so far");
    free(u);

    u = unescaped("a\\u00e9b\\u20AC\\u0041", &t);
    STR_EQ(u, "a\xC3\xA9" "b\xE2\x82\xAC" "A", "\\uXXXX in 2- and 3-byte UTF-8, either case");
    free(u);

    u = unescaped("\\ud83d\\ude00!", &t);
    STR_EQ(u, "\xF0\x9F\x98\x80!", "surrogate pair -> U+1F600 in 4 bytes");
    INT_EQ(t.invalid_utf8, 0, "valid escapes are not counted");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("x\\ud83dy", &t);
    STR_EQ(u, "x\xEF\xBF\xBDy", "lone high surrogate -> U+FFFD");
    INT_EQ(t.invalid_utf8, 1, "lone surrogate counted as invalid_utf8");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("\\ude00", &t);
    STR_EQ(u, "\xEF\xBF\xBD", "lone low surrogate -> U+FFFD");
    INT_EQ(t.invalid_utf8, 1, "lone low surrogate counted");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("\\ud83d\\u0041", &t);
    STR_EQ(u, "\xEF\xBF\xBD" "A", "high surrogate followed by a non-surrogate escape");
    INT_EQ(t.invalid_utf8, 1, "counted once per string");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("a\xff" "b", &t);
    STR_EQ(u, "a\xEF\xBF\xBD" "b", "invalid byte 0xFF -> U+FFFD");
    INT_EQ(t.invalid_utf8, 1, "invalid UTF-8 counted");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("\xC0\xAF|\xED\xA0\x80|\xE2\x82", &t);
    STR_EQ(u, "\xEF\xBF\xBD\xEF\xBF\xBD|\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD|"
              "\xEF\xBF\xBD\xEF\xBF\xBD",
           "overlong, encoded surrogate and cut sequence -> one U+FFFD per byte");
    INT_EQ(t.invalid_utf8, 1, "one string with invalid UTF-8 counted once");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", &t);
    STR_EQ(u, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", "valid multibyte UTF-8 passes through");
    INT_EQ(t.invalid_utf8, 0, "valid UTF-8 not counted");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("nul\\u0000here", &t);
    STR_EQ(u, "nul\xEF\xBF\xBDhere", "\\u0000 -> U+FFFD (no NUL in C strings)");
    free(u);

    u = unescaped("tab\x01" "x", &t);
    STR_EQ(u, "tab x", "a raw control character becomes a space");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("bad\\q", &t);
    STR_EQ(u, "badq", "an unknown escape keeps its character");
    INT_EQ(t.invalid_utf8, 1, "an unknown escape is counted");
    free(u);

    /* Escapes cut at the end of the span never read past it. */
    static const char *const cut[] = {"\\", "a\\u", "a\\u12", "a\\ud83d\\u", "a\\ud83d\\ude0"};
    for (size_t i = 0; i < sizeof cut / sizeof *cut; i++) {
        size_t n = strlen(cut[i]);
        char *copy = vr_xmalloc(n);
        memcpy(copy, cut[i], n);
        vr_json_str s = {copy, n, 1};
        vr_buf out = VR_BUF_INIT;
        memset(&t, 0, sizeof t);
        vr_json_unescape(&s, &out, &t);
        OK(t.invalid_utf8 == 1, "cut escape \"%s\" handled and counted", cut[i]);
        vr_buf_free(&out);
        free(copy);
    }

    /* Raw control characters inside a string are counted by the reader. */
    static const char ctl[] = "{\"name\": \"a\tb\x01" "c\", \"x\": 1}";
    jdoc d;
    jdoc_open(&d, ctl, sizeof ctl - 1);
    vr_json_str key, s;
    vr_json_enter_object(&d.j);
    OK(vr_json_next_member(&d.j, &key) && vr_json_string(&d.j, &s) && s.len == 5,
       "string with raw control characters read");
    INT_EQ(d.t.control_chars, 2, "two raw control characters counted");
    jdoc_close(&d);

    /* An unescaped quote inside a string is taken as part of it. */
    static const char rq[] = "{\"name\": \"a\"b\", \"ph\": \"X\"}";
    jdoc_open(&d, rq, sizeof rq - 1);
    char *name = NULL, *ph = NULL;
    vr_json_enter_object(&d.j);
    while (vr_json_next_member(&d.j, &key)) {
        if (vr_json_str_eq(&key, "name") && vr_json_string(&d.j, &s))
            name = str_dup(&s);
        else if (vr_json_str_eq(&key, "ph") && vr_json_string(&d.j, &s))
            ph = str_dup(&s);
        else
            vr_json_skip(&d.j);
    }
    STR_EQ(name, "a\"b", "unescaped quote repaired: name is a\"b");
    STR_EQ(ph, "X", "member after the repaired string read");
    INT_EQ(d.t.repaired_quotes, 1, "repaired quote counted");
    OK(!d.j.failed, "no failure");
    free(name);
    free(ph);
    jdoc_close(&d);

    /* has_escapes is set only when there are escapes. */
    static const char he[] = "[\"a\\nb\", \"ab\"]";
    jdoc_open(&d, he, sizeof he - 1);
    vr_json_str s1 = {0}, s2 = {0};
    vr_json_enter_array(&d.j);
    vr_json_next_element(&d.j);
    vr_json_string(&d.j, &s1);
    vr_json_next_element(&d.j);
    vr_json_string(&d.j, &s2);
    OK(s1.has_escapes && !s2.has_escapes && s1.len == 4 && s2.len == 2,
       "spans are raw; has_escapes marks escaped ones");
    jdoc_close(&d);

    vr_json_str lit = {"abc", 3, 0};
    OK(vr_json_str_eq(&lit, "abc") && !vr_json_str_eq(&lit, "ab") && !vr_json_str_eq(&lit, "abcd"),
       "vr_json_str_eq compares length and bytes");
}

static void test_json_skip_and_truncation(void)
{
    /* Skipping a deeply nested value is iterative: 100000 levels. */
    enum { DEEP = 100000 };
    vr_buf doc = VR_BUF_INIT;
    vr_buf_puts(&doc, "{\"a\": ");
    for (int i = 0; i < DEEP; i++)
        vr_buf_puts(&doc, i % 2 ? "{\"k\":" : "[");
    vr_buf_puts(&doc, "\"}]\"");
    for (int i = DEEP - 1; i >= 0; i--)
        vr_buf_puts(&doc, i % 2 ? "}" : "]");
    vr_buf_puts(&doc, ", \"b\": 5}");
    jdoc d;
    jdoc_open(&d, doc.data, doc.len);
    vr_json_str key;
    int64_t b = 0;
    vr_json_enter_object(&d.j);
    OK(vr_json_next_member(&d.j, &key) && vr_json_str_eq(&key, "a"), "key a");
    vr_json_skip(&d.j);
    OK(!d.j.failed, "skipped %d nested levels", DEEP);
    OK(vr_json_next_member(&d.j, &key) && vr_json_str_eq(&key, "b") && vr_json_int64(&d.j, &b) &&
           b == 5,
       "member after the deep value read");
    jdoc_close(&d);
    vr_buf_free(&doc);

    /* Skip/raw of scalars and junk stop at delimiters. */
    static const char junk[] = "[true, null, @#!, -1.5e+3, \"x\"]";
    jdoc_open(&d, junk, sizeof junk - 1);
    int count = 0;
    vr_json_enter_array(&d.j);
    while (vr_json_next_element(&d.j) && count < 10) {
        vr_json_str raw;
        vr_json_raw(&d.j, &raw);
        count++;
    }
    INT_EQ(count, 5, "five elements skipped as raw values");
    OK(!d.j.failed, "junk scalar skipped without failure");
    jdoc_close(&d);

    /* Every proper prefix of an event is reported as failed, and the
     * reader stays within the prefix (the copy has exactly its size). */
    static const char ev[] =
        "{\"ph\": \"X\", \"name\": \"a\\\"b\\u00e9\\ud83d\\ude00\", \"ok\": true, \"no\": false, "
        "\"nil\": null, \"tid\": \"25738\", \"ts\": -1712195495519689.047, "
        "\"args\": {\"list\": [1, [2, {\"x\": \"}]\"}], 3e5], \"q\": \"a\"b\"}}";
    vr_buf scratch = VR_BUF_INIT;
    int all_failed = 1, walked = 0;
    for (size_t len = 1; len < sizeof ev - 1; len++) {
        jdoc_open(&d, ev, len);
        walk(&d.j, &scratch, 0);
        if (!d.j.failed) {
            all_failed = 0;
            printf("# prefix of %zu bytes not reported as failed\n", len);
        }
        jdoc_close(&d);
        walked++;
    }
    OK(all_failed, "all %d truncated prefixes set failed", walked);
    jdoc_open(&d, ev, sizeof ev - 1);
    int values = walk(&d.j, &scratch, 0);
    OK(!d.j.failed && values > 10, "the whole event walks without failure (%d values)", values);
    jdoc_close(&d);

    /* Truncated in the middle of a skip, a string, a bool. */
    static const char *const cuts[] = {"{\"a\": [1, [2", "{\"a\": \"abc", "{\"a\": tr", "[", "{",
                                       "{\"a\"", "{\"a\":", "\"", "{\"a\": \"x\\"};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        jdoc_open(&d, cuts[i], strlen(cuts[i]));
        walk(&d.j, &scratch, 0);
        OK(d.j.failed, "truncated \"%s\" sets failed", cuts[i]);
        jdoc_close(&d);
    }
    /* Empty input: nothing to read. */
    jdoc_open(&d, "", 0);
    OK(vr_json_peek(&d.j) == VR_JSON_NONE && !vr_json_enter_object(&d.j), "empty input: NONE");
    jdoc_close(&d);
    vr_buf_free(&scratch);
}

/*-*** vr_jscan ***/

typedef struct {
    vr_buf log;
    int members, elements;
    int stop_after; /* stop when this many elements were seen (0: never) */
} scan_log;

static int log_member(void *ud, const char *key, size_t keylen, const char *val, size_t vallen,
                      uint64_t offset)
{
    scan_log *l = ud;
    l->members++;
    vr_buf_printf(&l->log, "M %.*s @%llu = %.*s\n", (int)keylen, key ? key : "",
                  (unsigned long long)offset, (int)vallen, val);
    return 0;
}

static int log_element(void *ud, const char *val, size_t vallen, uint64_t offset)
{
    scan_log *l = ud;
    l->elements++;
    vr_buf_printf(&l->log, "E @%llu = %.*s\n", (unsigned long long)offset, (int)vallen, val);
    return l->stop_after && l->elements >= l->stop_after;
}

/* Feeds `doc` in chunks of `chunk` bytes, each from its own heap copy. */
static vr_jscan_status feed_chunks(vr_jscan *s, const char *doc, size_t len, size_t chunk)
{
    if (len == 0)
        return vr_jscan_feed(s, "", 0);
    for (size_t i = 0; i < len; i += chunk) {
        size_t n = len - i < chunk ? len - i : chunk;
        char *c = vr_xmalloc(n);
        memcpy(c, doc + i, n);
        vr_jscan_status st = vr_jscan_feed(s, c, n);
        free(c);
        if (st != VR_JSCAN_OK)
            return st;
    }
    return VR_JSCAN_OK;
}

typedef struct {
    vr_jscan_status st;
    int complete, in_stream, stream_seen;
    uint64_t elements, repaired, control;
    uint64_t err_offset;
    char err[160];
    char *log;
} scan_result;

static void scan_doc(const char *doc, size_t len, size_t chunk, scan_result *r)
{
    scan_log l;
    memset(&l, 0, sizeof l);
    vr_jscan s;
    vr_jscan_init(&s, "traceEvents", log_member, log_element, &l);
    r->st = feed_chunks(&s, doc, len, chunk);
    r->complete = vr_jscan_complete(&s);
    r->in_stream = vr_jscan_in_stream(&s);
    r->stream_seen = vr_jscan_stream_seen(&s);
    r->elements = s.elements;
    r->repaired = s.repaired_quotes;
    r->control = s.control_chars;
    r->err_offset = r->st == VR_JSCAN_SYNTAX ? vr_jscan_error_offset(&s) : 0;
    snprintf(r->err, sizeof r->err, "%s", r->st == VR_JSCAN_SYNTAX ? vr_jscan_error(&s) : "");
    vr_buf_putc(&l.log, '\0');
    r->log = vr_buf_detach(&l.log);
    vr_jscan_free(&s);
}

/* Same outcome for every chunk size 1..40 as for one feed. */
static void check_chunking(const char *what, const char *doc, int check_counts)
{
    size_t len = strlen(doc);
    scan_result one, r;
    scan_doc(doc, len, len ? len : 1, &one);
    int same = 1, counts_same = 1;
    for (size_t chunk = 1; chunk <= 40; chunk++) {
        scan_doc(doc, len, chunk, &r);
        if (r.st != one.st || r.complete != one.complete || r.elements != one.elements ||
            strcmp(r.log, one.log) != 0 || r.err_offset != one.err_offset) {
            if (same)
                printf("# %s: chunks of %zu differ from one feed:\n# one:\n%s# chunked:\n%s", what,
                       chunk, one.log, r.log);
            same = 0;
        }
        if (r.repaired != one.repaired || r.control != one.control) {
            if (counts_same)
                printf("# %s: chunks of %zu count %llu repaired quotes, one feed %llu\n", what,
                       chunk, (unsigned long long)r.repaired, (unsigned long long)one.repaired);
            counts_same = 0;
        }
        free(r.log);
    }
    OK(same, "%s: chunks of 1..40 bytes deliver what one feed delivers", what);
    if (check_counts)
        OK(counts_same, "%s: chunks of 1..40 bytes count what one feed counts", what);
    free(one.log);
}

static const char sample_trace[] =
    "\xEF\xBB\xBF{\n"
    "  \"schemaVersion\": 1,\n"
    "  \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU \\\"x\\\" [0] {y}\"}],\n"
    "  \"k\\\"ey\": \"v]}\",\n"
    "  \"traceEvents\": [\n"
    "    {\"ph\": \"X\", \"name\": \"a{b[c\", \"args\": {\"s\": \"}]\\\"\", \"n\": [1, {\"x\": 2}]}},\n"
    "    {\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 12.5},\n"
    "    42,\n"
    "    \"str\\\"ing]\",\n"
    "    [1, [2]],\n"
    "    {\"e\": \"\\\\\"},\n"
    "    {\"ctl\": \"a\tb\"}\n"
    "  ],\n"
    "  \"baseTimeNanoseconds\": 1712195495000000000,\n"
    "  \"displayTimeUnit\": \"ms\"\n"
    "}\n";

static void test_jscan_chunks(void)
{
    size_t len = sizeof sample_trace - 1;
    scan_result r;
    scan_doc(sample_trace, len, len, &r);
    INT_EQ(r.st, VR_JSCAN_OK, "sample trace scans OK");
    OK(r.complete, "sample trace complete");
    OK(!r.in_stream && r.stream_seen, "stream seen and closed");
    INT_EQ(r.elements, 7, "seven elements");
    INT_EQ(r.control, 1, "one raw control character counted");
    INT_EQ(r.repaired, 0, "no quote repaired in the sample");

    /* The log holds exact values at exact offsets. */
    char want[512];
    const char *p;
    p = strstr(sample_trace, "{\"ph\": \"X\"");
    snprintf(want, sizeof want,
             "E @%zu = {\"ph\": \"X\", \"name\": \"a{b[c\", \"args\": {\"s\": \"}]\\\"\", \"n\": [1, "
             "{\"x\": 2}]}}\n",
             (size_t)(p - sample_trace));
    OK(strstr(r.log, want) != NULL, "first event delivered whole with its offset");
    p = strstr(sample_trace, "42,");
    snprintf(want, sizeof want, "E @%zu = 42\n", (size_t)(p - sample_trace));
    OK(strstr(r.log, want) != NULL, "bare number element delivered");
    p = strstr(sample_trace, "\"str");
    snprintf(want, sizeof want, "E @%zu = \"str\\\"ing]\"\n", (size_t)(p - sample_trace));
    OK(strstr(r.log, want) != NULL, "string element with escaped quote and bracket delivered");
    snprintf(want, sizeof want, "M schemaVersion @%zu = 1\n",
             (size_t)(strstr(sample_trace, "1,\n") - sample_trace));
    OK(strstr(r.log, want) != NULL, "scalar member schemaVersion delivered");
    OK(strstr(r.log, "M deviceProperties @") &&
           strstr(r.log, "= [{\"id\": 0, \"name\": \"GPU \\\"x\\\" [0] {y}\"}]\n"),
       "array member deviceProperties delivered whole");
    OK(strstr(r.log, "M k\\\"ey @") && strstr(r.log, "= \"v]}\"\n"),
       "key with an escaped quote and value with brackets");
    OK(strstr(r.log, "M baseTimeNanoseconds @") && strstr(r.log, "= 1712195495000000000\n"),
       "member after traceEvents (baseTimeNanoseconds) delivered");
    OK(strstr(r.log, "M displayTimeUnit @") && strstr(r.log, "= \"ms\"\n"), "last member delivered");
    OK(strstr(r.log, "M traceEvents") == NULL, "the stream array is not delivered as a member");
    OK(strstr(r.log, "E @") < strstr(r.log, "M baseTimeNanoseconds"),
       "callbacks arrive in document order");
    free(r.log);

    check_chunking("sample trace", sample_trace, 1);

    /* The top-level array form. */
    static const char bare[] = "[{\"ph\": \"X\", \"name\": \"]\"}, {\"ph\": \"i\"}, [1], \"s\", 7]";
    scan_doc(bare, sizeof bare - 1, sizeof bare - 1, &r);
    OK(r.st == VR_JSCAN_OK && r.complete && r.elements == 5 && r.stream_seen && !r.in_stream,
       "bare array: five elements, complete");
    OK(strstr(r.log, "M ") == NULL, "bare array: no members");
    OK(strncmp(r.log, "E @1 = {\"ph\": \"X\", \"name\": \"]\"}\n", 32) == 0,
       "bare array: first element at offset 1");
    free(r.log);
    check_chunking("bare array", bare, 1);

    /* Object without traceEvents, and an empty stream. */
    scan_doc("{\"a\": {\"b\": 1}}", 15, 15, &r);
    OK(r.st == VR_JSCAN_OK && r.complete && !r.stream_seen && r.elements == 0,
       "object without traceEvents: complete, stream not seen");
    free(r.log);
    scan_doc("{\"traceEvents\": []}", 19, 19, &r);
    OK(r.st == VR_JSCAN_OK && r.complete && r.stream_seen && r.elements == 0,
       "empty traceEvents: complete, seen, no elements");
    free(r.log);
    /* A traceEvents that is not an array is delivered as a member. */
    scan_doc("{\"traceEvents\": {\"x\": 1}}", 25, 25, &r);
    OK(r.st == VR_JSCAN_OK && !r.stream_seen && strstr(r.log, "M traceEvents @16 = {\"x\": 1}"),
       "traceEvents as an object is a plain member");
    free(r.log);
    /* Trailing bytes after the document are ignored. */
    scan_doc("{\"traceEvents\": [1]} trailing junk", 34, 34, &r);
    OK(r.st == VR_JSCAN_OK && r.complete && r.elements == 1, "trailing bytes after the end ignored");
    free(r.log);

    /* A callback can stop the scan. */
    scan_log l;
    memset(&l, 0, sizeof l);
    l.stop_after = 2;
    vr_jscan s;
    vr_jscan_init(&s, "traceEvents", log_member, log_element, &l);
    vr_jscan_status st = vr_jscan_feed(&s, sample_trace, sizeof sample_trace - 1);
    OK(st == VR_JSCAN_STOPPED && l.elements == 2, "callback non-zero stops with VR_JSCAN_STOPPED");
    vr_jscan_free(&s);
    vr_buf_free(&l.log);
}

static void test_jscan_truncation(void)
{
    scan_result r;
    const char *cut = "{\"traceEvents\": [{\"ph\": \"X\"}, {\"ph\": \"X\", \"na";
    scan_doc(cut, strlen(cut), 7, &r);
    OK(r.st == VR_JSCAN_OK, "cut inside an event: no error");
    OK(!r.complete, "cut inside an event: vr_jscan_complete() == 0");
    OK(r.in_stream, "cut inside an event: vr_jscan_in_stream() == 1");
    INT_EQ(r.elements, 1, "the complete event before the cut was delivered");
    free(r.log);

    vr_jscan s;
    vr_jscan_init(&s, "traceEvents", NULL, NULL, NULL);
    vr_jscan_feed(&s, cut, strlen(cut));
    STR_EQ(vr_jscan_where(&s), "inside an event", "where: inside an event");
    vr_jscan_free(&s);

    static const struct {
        const char *doc, *where;
        int in_stream;
    } cases[] = {
        {"", "before the document began", 0},
        {"  ", "before the document began", 0},
        {"{\"traceEvents\": [{\"a\": 1},", "between events", 1},
        {"{\"traceEvents\": [", "between events", 1},
        {"{\"traceEvents\": []", "outside the event list", 0},
        {"{\"schemaVersion\": 1, \"devi", "outside the event list", 0},
        {"{\"traceEvents\": [], \"baseTimeNanoseconds\": 17", "outside the event list", 0},
        {"[{\"a\": 1}, {\"b", "inside an event", 1},
        {"{\"traceEvents\": []}", "after the end", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        vr_jscan_init(&s, "traceEvents", NULL, NULL, NULL);
        vr_jscan_status st = feed_chunks(&s, cases[i].doc, strlen(cases[i].doc), 3);
        int complete = vr_jscan_complete(&s);
        OK(st == VR_JSCAN_OK && complete == (strcmp(cases[i].where, "after the end") == 0) &&
               vr_jscan_in_stream(&s) == cases[i].in_stream &&
               strcmp(vr_jscan_where(&s), cases[i].where) == 0,
           "\"%s\": complete %d, in_stream %d, where \"%s\" (got %d, %d, \"%s\")", cases[i].doc,
           strcmp(cases[i].where, "after the end") == 0, cases[i].in_stream, cases[i].where,
           complete, vr_jscan_in_stream(&s), vr_jscan_where(&s));
        vr_jscan_free(&s);
    }

    /* Every prefix of the sample: no error, and complete only at the end. */
    size_t len = sizeof sample_trace - 1;
    int ok = 1;
    for (size_t n = 0; n < len; n++) {
        scan_doc(sample_trace, n, 5, &r);
        /* The document ends at its '}'; only the final newline may be cut. */
        int should_complete = n >= len - 1;
        if (r.st != VR_JSCAN_OK || r.complete != should_complete) {
            if (ok)
                printf("# prefix %zu: st %d complete %d\n", n, r.st, r.complete);
            ok = 0;
        }
        free(r.log);
    }
    OK(ok, "every prefix of the sample scans without error and is incomplete");
}

static void expect_syntax(const char *doc, uint64_t offset, const char *msg)
{
    size_t chunks[] = {strlen(doc), 1, 4};
    for (size_t i = 0; i < 3; i++) {
        scan_result r;
        scan_doc(doc, strlen(doc), chunks[i] ? chunks[i] : 1, &r);
        OK(r.st == VR_JSCAN_SYNTAX && r.err_offset == offset && strstr(r.err, msg) != NULL,
           "syntax error in '%s' (chunks of %zu) at byte %llu: \"%s\" (got st %d at %llu: \"%s\")",
           doc, chunks[i], (unsigned long long)offset, msg, r.st,
           (unsigned long long)r.err_offset, r.err);
        free(r.log);
    }
}

static void test_jscan_errors(void)
{
    expect_syntax("x", 0, "expected '{' or '[' (a JSON trace), found 'x'");
    expect_syntax("   \n<html>", 4, "found '<'");
    expect_syntax("\x01", 0, "found byte 0x01");
    expect_syntax("{\"traceEvents\":[{]}", 17, "expected '}', found ']'");
    expect_syntax("{\"traceEvents\":[[}]]}", 17, "expected ']', found '}'");
    expect_syntax("{\"a\": {\"b\": [1}}", 14, "expected ']', found '}'");
    expect_syntax("{\"a\" 1}", 5, "expected ':', found '1'");
    expect_syntax("{\"a\": 1 \"b\": 2}", 8, "expected ',' or '}', found '\"'");
    expect_syntax("{\"a\": ,}", 6, "expected a value, found ','");
    expect_syntax("{\"traceEvents\": [}", 17, "expected an array element, ',' or ']', found '}'");
    expect_syntax("{1: 2}", 1, "expected a key string or '}', found '1'");
    expect_syntax("{\"traceEvents\": [{\"a\": \"}\"}, {\"b\": [}]}", 36, "expected ']', found '}'");

    /* After an error the scanner refuses further input. */
    vr_jscan s;
    vr_jscan_init(&s, "traceEvents", NULL, NULL, NULL);
    OK(vr_jscan_feed(&s, "x", 1) == VR_JSCAN_SYNTAX && vr_jscan_feed(&s, "{}", 2) == VR_JSCAN_SYNTAX &&
           !vr_jscan_complete(&s),
       "after a syntax error every feed returns VR_JSCAN_SYNTAX");
    vr_jscan_free(&s);

    /* Nesting: exactly MAX_DEPTH levels is fine, one more is an error. */
    for (int extra = 0; extra <= 1; extra++) {
        int levels = VR_JSCAN_MAX_DEPTH + extra;
        vr_buf doc = VR_BUF_INIT;
        vr_buf_puts(&doc, "{\"traceEvents\":[");
        for (int i = 0; i < levels; i++)
            vr_buf_putc(&doc, '[');
        for (int i = 0; i < levels; i++)
            vr_buf_putc(&doc, ']');
        vr_buf_puts(&doc, "]}");
        const size_t sizes[] = {doc.len, 64, 1};
        for (size_t k = 0; k < 3; k++) {
            size_t chunk = sizes[k];
            scan_result r;
            scan_doc(doc.data, doc.len, chunk, &r);
            if (extra == 0)
                OK(r.st == VR_JSCAN_OK && r.complete && r.elements == 1,
                   "%d levels deep (chunks of %zu): scanned", levels, chunk);
            else
                OK(r.st == VR_JSCAN_SYNTAX && r.err_offset == 16 + VR_JSCAN_MAX_DEPTH &&
                       strstr(r.err, "nesting at most 1024 levels deep") != NULL,
                   "%d levels deep (chunks of %zu): syntax error at byte %d (got st %d at %llu: %s)",
                   levels, chunk, 16 + VR_JSCAN_MAX_DEPTH, r.st, (unsigned long long)r.err_offset,
                   r.err);
            free(r.log);
        }
        vr_buf_free(&doc);
    }
    /* Far deeper, with objects: an error, never a crash. */
    vr_buf doc = VR_BUF_INIT;
    vr_buf_puts(&doc, "{\"meta\": ");
    for (int i = 0; i < 100000; i++)
        vr_buf_puts(&doc, "{\"a\":[");
    scan_result r;
    scan_doc(doc.data, doc.len, 4096, &r);
    OK(r.st == VR_JSCAN_SYNTAX && strstr(r.err, "nesting") != NULL,
       "100000-level nesting in a member: syntax error");
    free(r.log);
    vr_buf_free(&doc);

    /* An overlong key is refused. */
    vr_buf key = VR_BUF_INIT;
    vr_buf_puts(&key, "{\"");
    for (int i = 0; i < 5000; i++)
        vr_buf_putc(&key, 'k');
    vr_buf_puts(&key, "\": 1}");
    scan_doc(key.data, key.len, 1000, &r);
    OK(r.st == VR_JSCAN_SYNTAX && strstr(r.err, "key shorter than 4096") != NULL,
       "a 5000-byte key is a syntax error");
    free(r.log);
    vr_buf_free(&key);
}

/* Strings holding brackets, escaped quotes and escaped backslashes at every
 * chunk boundary, and unescaped quotes (repaired) whose next byte lies in
 * the next chunk. */
/* The nested stream (a snapshot's device_traces): each inner array's
 * elements, one at a time, with the inner array's index; an outer element
 * that is not an array whole, flagged; the same in chunks of any size. */
static int log_nested(void *ud, size_t outer, int inner, const char *val, size_t vallen,
                      uint64_t offset)
{
    scan_log *l = ud;
    l->elements++;
    vr_buf_printf(&l->log, "N%d %zu @%llu = %.*s\n", inner, outer, (unsigned long long)offset,
                  (int)vallen, val);
    return 0;
}

static char *scan_nested(const char *doc, size_t chunk, vr_jscan_status *st, int *complete,
                         int *in_stream)
{
    scan_log l;
    memset(&l, 0, sizeof l);
    vr_jscan s;
    vr_jscan_init(&s, "segments", log_member, log_element, &l);
    vr_jscan_nest(&s, "device_traces", log_nested);
    *st = feed_chunks(&s, doc, strlen(doc), chunk);
    *complete = vr_jscan_complete(&s);
    *in_stream = vr_jscan_in_stream(&s);
    if (*st == VR_JSCAN_SYNTAX)
        vr_buf_printf(&l.log, "error @%llu: %s\n", (unsigned long long)vr_jscan_error_offset(&s),
                      vr_jscan_error(&s));
    vr_buf_putc(&l.log, '\0');
    vr_jscan_free(&s);
    return vr_buf_detach(&l.log);
}

static void test_jscan_nested(void)
{
    static const char doc[] =
        "{\"segments\": [{\"a\": [1]}, {\"b\": \"]\"}],\n"
        " \"device_traces\": [[{\"x\": 1}, {\"y\": [2, {\"z\": \"[\"}]}], [], [{\"w\": 3}], "
        "{\"flat\": 4}, 5],\n"
        " \"other\": [[1], [2]]}";
    static const char want[] =
        "E @14 = {\"a\": [1]}\n"
        "E @26 = {\"b\": \"]\"}\n"
        "N1 0 @59 = {\"x\": 1}\n"
        "N1 0 @69 = {\"y\": [2, {\"z\": \"[\"}]}\n"
        "N1 2 @99 = {\"w\": 3}\n"
        "N0 3 @110 = {\"flat\": 4}\n"
        "N0 4 @123 = 5\n"
        "M other @137 = [[1], [2]]\n";
    vr_jscan_status st;
    int complete, in_stream, same = 1;
    for (size_t chunk = 1;; chunk = chunk == 40 ? sizeof doc : chunk + 1) {
        char *log = scan_nested(doc, chunk, &st, &complete, &in_stream);
        if (strcmp(log, want) != 0 || st != VR_JSCAN_OK || !complete || in_stream) {
            if (same)
                printf("# chunks of %zu:\n%s", chunk, log);
            same = 0;
        }
        free(log);
        if (chunk == sizeof doc)
            break;
    }
    OK(same, "nested stream: inner elements by their array's index, outer non-arrays flagged, "
             "in chunks of 1..40 bytes and whole");

    char *log = scan_nested("{\"device_traces\": [[{\"x\": 1}, {\"y\"", 7, &st, &complete, &in_stream);
    OK(st == VR_JSCAN_OK && !complete && in_stream && strcmp(log, "N1 0 @20 = {\"x\": 1}\n") == 0,
       "nested stream cut inside an entry: what came before, incomplete, in the stream (%s)", log);
    free(log);
    log = scan_nested("{\"device_traces\": [[1], }", 64, &st, &complete, &in_stream);
    OK(st == VR_JSCAN_SYNTAX && strstr(log, "error @24: expected an array, ',' or ']'"),
       "nested stream: a '}' in the outer array is a syntax error at its offset (%s)", log);
    free(log);
    log = scan_nested("[{\"device_traces\": [[1]]}]", 64, &st, &complete, &in_stream);
    OK(st == VR_JSCAN_OK && complete && strcmp(log, "E @1 = {\"device_traces\": [[1]]}\n") == 0,
       "nested stream: only a top-level member is nested (%s)", log);
    free(log);
}

static void test_jscan_strings(void)
{
    check_chunking("escapes at chunk ends",
                   "{\"traceEvents\": [{\"n\": \"\\\\\"}, {\"n\": \"\\\"]\\\\\\\"}\"}, "
                   "{\"n\": \"\\\\\\\\\", \"m\": \"{[\"}], \"k\\\\\": \"\\\"\"}",
                   1);

    /* Unescaped quote: a quote followed by a byte that cannot follow a
     * string is part of the string, wherever the chunk boundary falls. */
    static const char rq[] =
        "{\"traceEvents\": [{\"name\": \"say \"hi\" now\", \"ph\": \"X\"}, {\"ph\": \"i\"}]}";
    scan_result r;
    scan_doc(rq, sizeof rq - 1, sizeof rq - 1, &r);
    OK(r.st == VR_JSCAN_OK && r.complete && r.elements == 2 && r.repaired == 2,
       "unescaped quotes repaired in one feed (2 counted)");
    free(r.log);
    check_chunking("unescaped quotes (\"say \"hi\" now\")", rq, 1);

    static const char rq2[] =
        "{\"traceEvents\": [{\"name\": \"f\"x{y\", \"ph\": \"X\"}, {\"ph\": \"i\"}]}";
    scan_doc(rq2, sizeof rq2 - 1, sizeof rq2 - 1, &r);
    OK(r.st == VR_JSCAN_OK && r.complete && r.elements == 2 && r.repaired == 1,
       "unescaped quote before a bracket repaired in one feed");
    free(r.log);
    check_chunking("unescaped quote before a bracket (\"f\"x{y\")", rq2, 1);
}

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
        {"plain.json", VR_COMPRESSION_NONE},
        {"trace.json.gz", VR_COMPRESSION_GZIP},
        {"trace.json.zst", VR_COMPRESSION_ZSTD},
        {"gzip-named.txt", VR_COMPRESSION_GZIP},
        {"zstd-named.json", VR_COMPRESSION_ZSTD},
        {"plain-named.gz", VR_COMPRESSION_NONE},
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
                OK(r.digest == want_digest, "%s: digest of the raw bytes equals vr_hash of the file",
                   files[i].name);
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
            unsigned char b[2] = {(unsigned char)(units[u] & 0xff), (unsigned char)(units[u] >> 8)};
            if (big_endian)
                b[0] = (unsigned char)(units[u] >> 8), b[1] = (unsigned char)(units[u] & 0xff);
            vr_buf_append(out, b, 2);
        }
    }
}

static void test_input_utf16(void)
{
    make_tmpdir();
    static const char line[] = "epoch 3 \xc3\xa9t\xc3\xa9 \xf0\x9f\x94\xa5 \xe4\xb8\xad CUDA out of memory\r\n";
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
            OK(r.rc == 0 && r.data.len == text.len && memcmp(r.data.data, text.data, text.len) == 0,
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
        {"lone-high", "\xff\xfe" "\x00\xd8" "A\x00", 6, "\xef\xbf\xbd" "A"},
        {"lone-low", "\xff\xfe" "\x00\xdc" "B\x00", 6, "\xef\xbf\xbd" "B"},
        {"high-at-end", "\xff\xfe" "C\x00" "\x00\xd8", 6, "C\xef\xbf\xbd"},
        {"odd-byte", "\xfe\xff" "\x00" "D" "\x00", 5, "D\xef\xbf\xbd"},
        {"mark-only", "\xff\xfe", 2, ""},
        {"one-byte", "\xff", 1, "\xff"},
        {"no-mark", "\xfe\xfd" "x", 3, "\xfe\xfd" "x"},
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
        unsigned char skip[12] = {(unsigned char)(0x50 + magic), 0x2a, 0x4d, 0x18, 4, 0, 0, 0,
                                  'a', 'b', 'c', 'd'};
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

/* vr_utf8_encode is vr_utf8_decode's inverse at every length. */
static void test_utf8_encode(void)
{
    static const uint32_t cps[] = {0, 0x41, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfffd,
                                   0xffff, 0x10000, 0x1f525, 0x10ffff};
    int ok = 1;
    for (size_t i = 0; i < sizeof cps / sizeof *cps; i++) {
        char u[4];
        uint32_t back = 0xffffffffu;
        size_t n = vr_utf8_encode(cps[i], u);
        ok &= vr_utf8_decode(u, n, &back) == n && back == cps[i];
    }
    OK(ok, "vr_utf8_encode then vr_utf8_decode gives the code point back");
}

/*-*** Markdown escaping ***/

/* The text rules of the results document (cut, UTF-8), which the escapers
 * rely on; included here so this section stays self-contained. */

static char *md_escape(const char *s, size_t n)
{
    vr_buf out = VR_BUF_INIT;
    vr_report_escape_markdown(&out, vr_buf_append_cb, s, n);
    vr_buf_putc(&out, '\0');
    return vr_buf_detach(&out);
}

/* UTF-8 of code point cp into out (NUL-terminated); its length. */
static size_t utf8_of(uint32_t cp, char *out)
{
    size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    static const unsigned char lead[] = {0, 0, 0xc0, 0xe0, 0xf0};
    for (size_t i = n - 1; i > 0; i--, cp >>= 6)
        out[i] = (char)(0x80 | (cp & 0x3f));
    out[0] = (char)(n == 1 ? cp : lead[n] | cp);
    out[n] = '\0';
    return n;
}

/* Every control and bidi character shows as the text \uXXXX (its
 * backslash escaped for Markdown), between ordinary text; none of its
 * bytes is left. Tab, LF and CR stay whitespace (spaces). */
static void test_markdown_escape_controls(void)
{
    static const struct {
        uint32_t lo, hi;
    } controls[] = {{0x00, 0x08}, {0x0b, 0x0c}, {0x0e, 0x1f}, {0x7f, 0x9f},
                    {0x061c, 0x061c}, {0x200e, 0x200f}, {0x202a, 0x202e}, {0x2066, 0x2069}};
    int bad = 0;
    for (size_t r = 0; r < sizeof controls / sizeof *controls; r++)
        for (uint32_t cp = controls[r].lo; cp <= controls[r].hi; cp++) {
            char in[16] = "a", ch[8], want[32];
            size_t n = utf8_of(cp, ch);
            memcpy(in + 1, ch, n);
            in[n + 1] = 'b';
            snprintf(want, sizeof want, "a\\\\u%04xb", (unsigned)cp);
            char *got = md_escape(in, n + 2);
            if (strcmp(got, want) != 0 || (n > 1 && strstr(got, ch))) {
                if (bad++ < 5)
                    printf("# U+%04X: got \"%s\", want \"%s\"\n", (unsigned)cp, got, want);
            }
            free(got);
        }
    INT_EQ(bad, 0, "C0, DEL, C1 and bidi controls show as \\\\uXXXX");
    char *got = md_escape("\x1b[2Jx\xc2\x9b\x08" "9\xe2\x80\xae", 12);
    STR_EQ(got, "\\\\u001b\\[2Jx\\\\u009b\\\\u00089\\\\u202e", "ESC [2J, CSI, BS, RLO");
    free(got);
    got = md_escape("a\0b", 3);
    STR_EQ(got, "a\\\\u0000b", "NUL within the length shows");
    free(got);
    /* Neighbours of the ranges are ordinary text: NBSP, ZWJ, U+202F, U+2065, U+061B. */
    static const char neighbours[] = "\xc2\xa0 \xe2\x80\x8d \xe2\x80\xaf \xe2\x81\xa5 \xd8\x9b";
    got = md_escape(neighbours, sizeof neighbours - 1);
    STR_EQ(got, neighbours, "characters next to the control ranges unchanged");
    free(got);
}

/* Bytes that are not well-formed UTF-8 show as \xFF, one escape a byte;
 * the characters around them are kept. */
static void test_markdown_escape_invalid_utf8(void)
{
    static const struct {
        const char *in, *want, *what;
    } cases[] = {
        {"bad\xffname", "bad\\\\xFFname", "a stray 0xFF"},
        {"x\xe2\x82", "x\\\\xE2\\\\x82", "a sequence cut at the end"},
        {"\xc0\xaf/", "\\\\xC0\\\\xAF/", "an overlong '/'"},
        {"\xed\xa0\x80", "\\\\xED\\\\xA0\\\\x80", "a surrogate"},
        {"\xf4\x90\x80\x80", "\\\\xF4\\\\x90\\\\x80\\\\x80", "beyond U+10FFFF"},
        {"\x80\xc3\xa9", "\\\\x80\xc3\xa9", "a lone continuation byte, then \xc3\xa9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = md_escape(cases[i].in, strlen(cases[i].in));
        STR_EQ(got, cases[i].want, "invalid UTF-8: %s", cases[i].what);
        free(got);
    }
}

static char *text_of(const char *s, size_t n)
{
    vr_buf out = VR_BUF_INIT;
    vr_results_text(&out, s, n);
    vr_buf_putc(&out, '\0');
    return vr_buf_detach(&out);
}

static int valid_utf8(const char *s)
{
    uint32_t cp;
    for (size_t left = strlen(s), n; left; s += n, left -= n)
        if (!(n = vr_utf8_decode(s, left, &cp)))
            return 0;
    return 1;
}

/* Text from the database: up to 256 bytes whole; longer, its first 120
 * and last 40 characters around the cut's size; never split in a
 * character; repaired to valid UTF-8. */
static void test_results_text_cut(void)
{
    char in[601], want[400];
    memset(in, 'a', 256);
    char *got = text_of(in, 256);
    INT_EQ((long long)strlen(got), 256, "256 bytes are kept whole");
    free(got);
    memset(in, 'h', 120);
    memset(in + 120, 'm', 97);
    memset(in + 217, 't', 40);
    snprintf(want, sizeof want, "%.120s \xe2\x80\xa6 (97 bytes cut) \xe2\x80\xa6 %.40s", in,
             in + 217);
    got = text_of(in, 257);
    STR_EQ(got, want, "257 bytes: the first 120 and last 40 characters, the cut marked");
    free(got);
    for (int i = 0; i < 300; i++)
        memcpy(in + 2 * i, "\xc3\xa9", 2);
    in[600] = '\0';
    got = text_of(in, 600);
    OK(valid_utf8(got) && strstr(got, "(280 bytes cut)") &&
           strncmp(got, in, 240) == 0 && strcmp(got + strlen(got) - 80, in + 520) == 0,
       "two-byte characters are cut whole (%s)", got);
    free(got);
    for (int i = 0; i < 70; i++)
        memcpy(in + 4 * i, "\xf0\x9f\x98\x80", 4);
    got = text_of(in, 280);
    OK(strlen(got) == 280 && memcmp(got, in, 280) == 0,
       "text the kept characters cover is not cut");
    free(got);
    got = text_of("bad\xffname", 8);
    STR_EQ(got, "bad\\xFFname", "invalid UTF-8 as \\xFF");
    free(got);
    size_t big = (size_t)20 << 20;
    char *huge = malloc(big);
    memset(huge, 'x', big);
    memcpy(huge, "HEAD", 4);
    memcpy(huge + big - 5, "\xffTAIL", 5);
    got = text_of(huge, big);
    OK(strlen(got) < 256 && strncmp(got, "HEADxxx", 7) == 0 &&
           strstr(got, "(20,971,360 bytes cut)") && strstr(got, "x\\xFFTAIL") && valid_utf8(got),
       "20 MiB: head and tail only (%s)", got);
    free(got);
    free(huge);
}

static void test_markdown_escape(void)
{
    static const char special[] = "\\`*_{}[]<>&#|~!";
    for (const char *c = special; *c; c++) {
        char in[4] = {'a', *c, 'b', 0}, want[8] = {'a', '\\', *c, 'b', 0};
        if (*c == '#') /* and a word joiner: no issue link "#12" */
            memcpy(want + 3, "\xe2\x81\xa0" "b", 5);
        char *got = md_escape(in, 3);
        STR_EQ(got, want, "'%c' gets a backslash", *c);
        free(got);
    }
    /* GitHub and GitLab link these in the rendered text: a WORD JOINER
     * (U+2060) breaks each pattern, the text reads the same. */
    static const struct {
        const char *in, *want, *what;
    } inert[] = {
        {"@octocat", "@\xe2\x81\xa0octocat", "a mention"},
        {"a@b.example", "a@\xe2\x81\xa0" "b.example", "an e-mail address"},
        {"http://x.example/y", "http:\xe2\x81\xa0//x.example/y", "a URL"},
        {"see WWW.x.example", "see WWW\xe2\x81\xa0.x.example", "a www. link"},
        {"www", "www", "www alone"},
        {"aten::mm", "aten::mm", "an operator's '::'"},
    };
    for (size_t i = 0; i < sizeof inert / sizeof *inert; i++) {
        char *got = md_escape(inert[i].in, strlen(inert[i].in));
        STR_EQ(got, inert[i].want, "%s stays inert", inert[i].what);
        free(got);
    }
    char *got = md_escape("line\none\r\ttwo", 13);
    STR_EQ(got, "line one  two", "newline, CR and tab become spaces");
    free(got);
    static const char plain[] = "aten::addmm (cuda:0) 1.50 KiB, 37.2% - ok; \"quoted\" 'x' =/?";
    got = md_escape(plain, sizeof plain - 1);
    STR_EQ(got, plain, "plain text unchanged");
    free(got);
    got = md_escape("<script>alert(1)</script>", 25);
    STR_EQ(got, "\\<script\\>alert(1)\\</script\\>", "HTML tags escaped");
    free(got);
    got = md_escape("**[x](javascript:y)**", 21);
    STR_EQ(got, "\\*\\*\\[x\\](javascript:y)\\*\\*", "link and emphasis escaped");
    free(got);
    got = md_escape("", 0);
    STR_EQ(got, "", "empty string");
    free(got);
    got = md_escape("ab|cd", 2);
    STR_EQ(got, "ab", "only len bytes are read");
    free(got);
    got = md_escape("\xC3\xA9\xE2\x82\xAC", 5);
    STR_EQ(got, "\xC3\xA9\xE2\x82\xAC", "UTF-8 unchanged");
    free(got);
    test_markdown_escape_controls();
    test_markdown_escape_invalid_utf8();
    test_results_text_cut();
}

/*-*** end to end through the library ***/

/* First column of the first row: LLONG_MIN for NULL, LLONG_MIN + 1 for no
 * row or an error. */
static long long q_int(sqlite3 *h, const char *sql)
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

/* First column of the first row as a malloc'ed string; NULL for NULL/none. */
static char *q_str(sqlite3 *h, const char *sql)
{
    sqlite3_stmt *st;
    char *v = NULL;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        printf("# SQL error: %s: %s\n", sqlite3_errmsg(h), sql);
        return NULL;
    }
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = vr_xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

#define NULL_VAL LLONG_MIN

static const char e2e_trace[] =
    "{\n"
    "  \"schemaVersion\": 1,\n"
    "  \"deviceProperties\": [{\"id\": 0, \"name\": \"Test GPU 80GB\", \"totalGlobalMem\": 85899345920}],\n"
    "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 2},\n"
    "  \"traceEvents\": [\n"
    "    {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"pid\": 7, "
    "\"tid\": 7, \"ts\": 1000, \"dur\": 1000},\n"
    "    {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 7, \"tid\": 7, "
    "\"ts\": 1100, \"dur\": 400, \"args\": {\"External id\": 11}},\n"
    "    {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 7, \"tid\": 7, "
    "\"ts\": 1200, \"dur\": 100, \"args\": {\"External id\": 12}},\n"
    "    {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1150, \"args\": {\"Total Reserved\": 2097152, "
    "\"Total Allocated\": 1000, \"Bytes\": 1000, \"Addr\": 10, \"Device Id\": 0, "
    "\"Device Type\": 1}},\n"
    "    {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1250.25, \"args\": {\"Total Reserved\": 2097152, "
    "\"Total Allocated\": 5096, \"Bytes\": 4096, \"Addr\": 11, \"Device Id\": 0, "
    "\"Device Type\": 1}},\n"
    "    {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1260, \"args\": {\"Total Reserved\": 2097152, "
    "\"Total Allocated\": 4096, \"Bytes\": -1000, \"Addr\": 10, \"Device Id\": 0, "
    "\"Device Type\": 1}},\n"
    "    {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1600, \"args\": {\"Total Reserved\": 4194304, "
    "\"Total Allocated\": 6144, \"Bytes\": 2048, \"Addr\": 12, \"Device Id\": 0, "
    "\"Device Type\": 1}},\n"
    "    {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 2500, \"args\": {\"Total Reserved\": 4194304, "
    "\"Total Allocated\": 4096, \"Bytes\": -2048, \"Addr\": 12, \"Device Id\": 0, "
    "\"Device Type\": 1}},\n"
    "    {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1300, \"args\": {\"Bytes\": 64, \"Addr\": 99, "
    "\"Device Id\": -1, \"Device Type\": 0}},\n"
    "    {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sgemm_<128>\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 1210, \"dur\": 30, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 5, "
    "\"External id\": 12}},\n"
    "    {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 7, \"args\": {\"name\": \"python\"}}\n"
    "  ],\n"
    "  \"traceName\": \"unit | test\",\n"
    "  \"baseTimeNanoseconds\": 1700000000000000000\n"
    "}\n";

static int count_rows(sqlite3 *h, const char *table, long long *out)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    *out = q_int(h, sql);
    return 0;
}

static const char *const tables[] = {"source", "source_tally", "source_events", "source_meta",
                                     "device", "mem_event", "op", "name", "gpu_op", "step",
                                     "oom_event"};
#define NTABLES (sizeof tables / sizeof *tables)

static void snapshot(sqlite3 *h, long long *counts)
{
    for (size_t i = 0; i < NTABLES; i++)
        count_rows(h, tables[i], &counts[i]);
}

static int same_counts(const long long *a, const long long *b)
{
    int same = 1;
    for (size_t i = 0; i < NTABLES; i++)
        if (a[i] != b[i]) {
            printf("# %s: %lld rows before, %lld after\n", tables[i], a[i], b[i]);
            same = 0;
        }
    return same;
}

/* A large trace of unique names, so its gzip is over 256 KiB. */
static void big_trace(vr_buf *b, int events, const char *tag)
{
    uint32_t x = 99;
    vr_buf_puts(b, "{\"traceEvents\": [\n");
    for (int i = 0; i < events; i++) {
        x = x * 1664525u + 1013904223u;
        vr_buf_printf(b,
                      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s_%08x_%d\", \"pid\": 1, "
                      "\"tid\": 2, \"ts\": %d.%03u, \"dur\": 1},\n",
                      tag, x, i, i * 3, x % 1000);
    }
    vr_buf_puts(b, "{\"ph\": \"M\"}]}\n");
}

static void test_end_to_end(void)
{
    make_tmpdir();
    vr_error err = VR_ERROR_INIT;
    vr_db *db = vr_db_open(NULL, &err);
    OK(db != NULL, "vr_db_open(NULL) opens a temporary database (%s)", err.msg);
    if (!db) {
        remove_tmpdir();
        return;
    }
    sqlite3 *h = vr_db_handle(db);
    INT_EQ(q_int(h, "PRAGMA user_version"), VR_DB_SCHEMA_VERSION, "schema version set");

    const char *path = tmp_path("e2e.pt.trace.json");
    write_file(path, e2e_trace, sizeof e2e_trace - 1);
    vr_import_result res;
    int rc = vr_import_file(db, path, NULL, &res, &err);
    OK(rc == 0 && res.status == VR_IMPORTED, "import of the tiny trace (%s)", rc ? err.msg : "ok");
    STR_EQ(res.format, "kineto", "format kineto");
    INT_EQ(res.events, 11, "eleven events read");
    INT_EQ(res.truncated, 0, "not truncated");
    int64_t source_id = res.source_id;

    rc = vr_analyze(db, &err);
    OK(rc == 0, "vr_analyze (%s)", rc ? err.msg : "ok");

    /* source */
    INT_EQ(q_int(h, "SELECT base_time_ns FROM source"), 1700000000000000000LL,
           "baseTimeNanoseconds after the events is kept");
    INT_EQ(q_int(h, "SELECT rank FROM source"), 0, "rank from distributedInfo");
    INT_EQ(q_int(h, "SELECT world_size FROM source"), 2, "world_size from distributedInfo");
    INT_EQ(q_int(h, "SELECT truncated FROM source"), 0, "source not truncated");
    INT_EQ(q_int(h, "SELECT raw_bytes FROM source"), sizeof e2e_trace - 1, "raw bytes");
    char *s = q_str(h, "SELECT compression FROM source");
    STR_EQ(s, "plain", "compression plain");
    free(s);
    s = q_str(h, "SELECT value FROM source_meta WHERE key = 'traceName'");
    STR_EQ(s, "unit | test", "scalar member kept as metadata");
    free(s);
    INT_EQ(q_int(h, "SELECT start_ns FROM source"), 1000000, "source start");
    INT_EQ(q_int(h, "SELECT end_ns FROM source"), 2500000, "source end");

    /* device */
    s = q_str(h, "SELECT label || ' ' || model FROM device");
    STR_EQ(s, "cuda:0 Test GPU 80GB", "one device, cuda:0, model from deviceProperties");
    free(s);
    INT_EQ(q_int(h, "SELECT count(*) FROM device"), 1, "CPU memory events make no device");
    INT_EQ(q_int(h, "SELECT capacity_bytes FROM device"), 85899345920LL, "capacity");
    INT_EQ(q_int(h, "SELECT count FROM source_events WHERE kind = 'cpu_memory'"), 1,
           "CPU memory event counted");
    INT_EQ(q_int(h, "SELECT count(*) FROM mem_event"), 5, "five GPU memory events");
    INT_EQ(q_int(h, "SELECT count(*) FROM gpu_op"), 1, "one kernel");
    INT_EQ(q_int(h, "SELECT ts_ns FROM mem_event WHERE addr = 11"), 1250250, "fractional ts in ns");

    /* peak */
    INT_EQ(q_int(h, "SELECT peak_allocated_bytes FROM device_summary"), 6144,
           "device_summary.peak_allocated_bytes");
    INT_EQ(q_int(h, "SELECT peak_allocated_ts_ns FROM device_summary"), 1600000, "peak time");
    INT_EQ(q_int(h, "SELECT peak_reserved_bytes FROM device_summary"), 4194304, "peak reserved");
    INT_EQ(q_int(h, "SELECT peak_allocated_step FROM device_summary"), 3, "peak in step 3");
    INT_EQ(q_int(h, "SELECT events FROM device_summary"), 5, "device events");

    /* allocation pairing */
    INT_EQ(q_int(h, "SELECT count(*) FROM allocation"), 3, "three allocations");
    INT_EQ(q_int(h, "SELECT free_ts_ns FROM allocation WHERE addr = 10"), 1260000,
           "freed allocation: free_ts_ns set");
    INT_EQ(q_int(h, "SELECT free_ts_ns FROM allocation WHERE addr = 11"), NULL_VAL,
           "live allocation: free_ts_ns NULL");
    INT_EQ(q_int(h, "SELECT free_ts_ns FROM allocation WHERE addr = 12"), 2500000,
           "second freed allocation");
    INT_EQ(q_int(h, "SELECT bytes FROM allocation WHERE addr = 11"), 4096, "allocation bytes");

    /* innermost enclosing op */
    static const char op_of[] =
        "SELECT n.text FROM mem_event m JOIN op o ON o.id = m.op_id JOIN name n ON n.id = o.name_id "
        "WHERE m.ts_ns = %d";
    char sql[512];
    snprintf(sql, sizeof sql, op_of, 1150000);
    s = q_str(h, sql);
    STR_EQ(s, "aten::linear", "event inside linear, outside addmm: op is linear");
    free(s);
    snprintf(sql, sizeof sql, op_of, 1250250);
    s = q_str(h, sql);
    STR_EQ(s, "aten::addmm", "event inside addmm: op is addmm (innermost)");
    free(s);
    snprintf(sql, sizeof sql, op_of, 1260000);
    s = q_str(h, sql);
    STR_EQ(s, "aten::addmm", "free inside addmm: op is addmm");
    free(s);
    INT_EQ(q_int(h, "SELECT op_id FROM mem_event WHERE ts_ns = 1600000"), NULL_VAL,
           "event outside every cpu_op: op NULL (user_annotation does not count)");
    INT_EQ(q_int(h, "SELECT op_id FROM mem_event WHERE ts_ns = 2500000"), NULL_VAL,
           "event after the ops: op NULL");

    /* op_memory (per op name and device): self vs incl */
    static const char om[] =
        "SELECT %s FROM op_memory m JOIN name n ON n.id = m.name_id WHERE n.text = '%s'";
    static const struct {
        const char *op, *col;
        long long want;
    } omx[] = {
        {"aten::linear", "self_alloc_count", 1}, {"aten::linear", "self_alloc_bytes", 1000},
        {"aten::linear", "self_free_bytes", 0},  {"aten::linear", "incl_alloc_count", 2},
        {"aten::linear", "incl_alloc_bytes", 5096}, {"aten::linear", "incl_free_bytes", 1000},
        {"aten::addmm", "self_alloc_count", 1},  {"aten::addmm", "self_alloc_bytes", 4096},
        {"aten::addmm", "self_free_bytes", 1000}, {"aten::addmm", "incl_alloc_count", 1},
        {"aten::addmm", "incl_alloc_bytes", 4096}, {"aten::addmm", "incl_free_bytes", 1000},
    };
    for (size_t i = 0; i < sizeof omx / sizeof *omx; i++) {
        snprintf(sql, sizeof sql, om, omx[i].col, omx[i].op);
        INT_EQ(q_int(h, sql), omx[i].want, "op_memory %s.%s", omx[i].op, omx[i].col);
    }
    INT_EQ(q_int(h, "SELECT count(*) FROM op_memory"), 2, "op_memory rows only for ops with events");
    INT_EQ(q_int(h, "SELECT sum(calls) FROM op_calls c JOIN name n ON n.id = c.name_id "
                    "WHERE n.text IN ('aten::linear', 'aten::addmm')"),
           2, "op_calls: one call each of linear and addmm");

    /* steps */
    INT_EQ(q_int(h, "SELECT count(*) FROM step"), 1, "one step");
    INT_EQ(q_int(h, "SELECT number FROM step"), 3, "step number 3 from ProfilerStep#3");
    INT_EQ(q_int(h, "SELECT count(*) FROM step_summary"), 1, "one step_summary row");
    INT_EQ(q_int(h, "SELECT peak_allocated_bytes FROM step_summary WHERE step = 3"), 6144,
           "step_summary peak");
    INT_EQ(q_int(h, "SELECT alloc_count FROM step_summary WHERE step = 3"), 3,
           "step 3 holds the three allocations inside it");
    INT_EQ(q_int(h, "SELECT alloc_bytes FROM step_summary WHERE step = 3"), 7144,
           "step 3 alloc bytes");
    INT_EQ(q_int(h, "SELECT start_allocated_bytes FROM step_summary WHERE step = 3"), 0,
           "step 3 starts at 0 allocated");
    INT_EQ(q_int(h, "SELECT end_allocated_bytes FROM step_summary WHERE step = 3"), 6144,
           "step 3 ends before the free at 2500 us (outside the step)");

    /* analysing twice gives the same database */
    OK(vr_analyze(db, &err) == 0 && q_int(h, "SELECT count(*) FROM allocation") == 3 &&
           q_int(h, "SELECT count(*) FROM op_memory") == 2 &&
           q_int(h, "SELECT peak_allocated_bytes FROM device_summary") == 6144,
       "vr_analyze again: same derived tables");

    /* report */
    vr_buf md = VR_BUF_INIT, html = VR_BUF_INIT, js = VR_BUF_INIT;
    vr_report_opts ro = {.format = VR_FORMAT_MARKDOWN};
    OK(vr_report_render(db, &ro, &md, &err) == 0 && md.len > 0, "markdown report renders");
    OK(md.data && strstr(md.data, "6.00 KiB"), "markdown report shows the 6.00 KiB peak");
    OK(md.data && strstr(md.data, "Test GPU 80GB"), "markdown report names the device");
    ro.format = VR_FORMAT_HTML;
    OK(vr_report_render(db, &ro, &html, &err) == 0 && html.data && strstr(html.data, "<svg"),
       "HTML report renders with a chart");
    OK(html.data && !strstr(html.data, "vrchart"), "HTML chart placeholders all replaced");
    ro.format = VR_FORMAT_JSON;
    OK(vr_report_render(db, &ro, &js, &err) == 0 && js.data && js.data[0] == '{',
       "JSON results render");
    vr_buf_free(&md);
    vr_buf_free(&html);
    vr_buf_free(&js);

    /* the same file again */
    long long before[NTABLES], after[NTABLES];
    snapshot(h, before);
    rc = vr_import_file(db, path, NULL, &res, &err);
    OK(rc == 0 && res.status == VR_ALREADY_IMPORTED && res.source_id == source_id,
       "importing the same file again: VR_ALREADY_IMPORTED with the earlier source id");
    /* the same content under another name and compression is new bytes */
    vr_buf gz = VR_BUF_INIT;
    gzip_bytes(e2e_trace, sizeof e2e_trace - 1, &gz, 6);
    write_file(tmp_path("copy.json"), e2e_trace, sizeof e2e_trace - 1);
    rc = vr_import_file(db, tmp_path("copy.json"), NULL, &res, &err);
    OK(rc == 0 && res.status == VR_ALREADY_IMPORTED, "same bytes under another name: already imported");
    snapshot(h, after);
    OK(same_counts(before, after), "repeat imports change no rows");

    /* A corrupt gzip fails and leaves every table as it was. */
    vr_buf big = VR_BUF_INIT, bgz = VR_BUF_INIT;
    big_trace(&big, 30000, "corrupt");
    gzip_bytes(big.data, big.len, &bgz, 1);
    OK(bgz.len > 300 * 1024, "big trace gzip is %zu bytes (over one 256 KiB raw chunk)", bgz.len);
    for (size_t i = bgz.len * 3 / 4; i < bgz.len * 3 / 4 + 256; i++)
        bgz.data[i] ^= 0xa5;
    write_file(tmp_path("corrupt.json.gz"), bgz.data, bgz.len);
    rc = vr_import_file(db, tmp_path("corrupt.json.gz"), NULL, &res, &err);
    OK(rc == -1 && strstr(err.msg, "corrupt gzip"), "corrupt gzip import fails (%s)", err.msg);
    snapshot(h, after);
    OK(same_counts(before, after), "failed import leaves row counts unchanged");

    /* A syntax error after many events also rolls everything back. */
    vr_buf_clear(&big);
    big_trace(&big, 3000, "syntax");
    big.len -= 4; /* drop "]}\n" and the last '}' */
    vr_buf_puts(&big, "]]\n");
    write_file(tmp_path("syntax.json"), big.data, big.len);
    rc = vr_import_file(db, tmp_path("syntax.json"), NULL, &res, &err);
    OK(rc == -1 && strstr(err.msg, "byte") && strstr(err.msg, "expected"),
       "syntax error import fails with an offset (%s)", err.msg);
    snapshot(h, after);
    OK(same_counts(before, after), "syntax error leaves row counts unchanged");

    /* The names of the failed import are not remembered: importing them for
     * real later gives ops whose names exist. */
    vr_buf_clear(&big);
    big_trace(&big, 50, "syntax");
    write_file(tmp_path("good.json"), big.data, big.len);
    rc = vr_import_file(db, tmp_path("good.json"), NULL, &res, &err);
    OK(rc == 0 && res.status == VR_IMPORTED, "a good import after failed ones (%s)",
       rc ? err.msg : "ok");
    INT_EQ(q_int(h, "SELECT count(*) FROM op o LEFT JOIN name n ON n.id = o.name_id "
                    "WHERE n.id IS NULL"),
           0, "every op's name_id exists after rolled-back imports");
    INT_EQ(q_int(h, "SELECT count(*) FROM op o JOIN name n ON n.id = o.name_id "
                    "WHERE n.text LIKE 'syntax_%'"),
           50, "the new ops carry their own names");

    /* A truncated gzip imports what was complete. */
    vr_buf_clear(&big);
    vr_buf_clear(&bgz);
    big_trace(&big, 20000, "cut");
    gzip_bytes(big.data, big.len, &bgz, 6);
    write_file(tmp_path("cut.json.gz"), bgz.data, bgz.len / 2);
    rc = vr_import_file(db, tmp_path("cut.json.gz"), NULL, &res, &err);
    OK(rc == 0 && res.status == VR_IMPORTED && res.truncated && res.events > 0 &&
           res.events < 20001,
       "truncated gzip: imported %llu complete events, flagged truncated (%s)",
       (unsigned long long)res.events, rc ? err.msg : "ok");
    snprintf(sql, sizeof sql, "SELECT truncated FROM source WHERE id = %lld", (long long)res.source_id);
    INT_EQ(q_int(h, sql), 1, "source.truncated set");
    snprintf(sql, sizeof sql, "SELECT count(*) FROM op WHERE source_id = %lld",
             (long long)res.source_id);
    INT_EQ(q_int(h, sql), res.events, "every complete event before the cut stored");

    /* Not a trace at all. */
    write_file(tmp_path("notes.txt"), "hello world\n", 12);
    rc = vr_import_file(db, tmp_path("notes.txt"), NULL, &res, &err);
    OK(rc == -1 && strstr(err.msg, "not a recognised input"), "a text file is refused (%s)",
       err.msg);
    write_file(tmp_path("empty.json"), "", 0);
    rc = vr_import_file(db, tmp_path("empty.json"), NULL, &res, &err);
    OK(rc == -1 && strstr(err.msg, "empty input"), "an empty file is refused (%s)", err.msg);

    /* A 2021-style trace (no Addr, no totals) gets totals rebuilt. */
    static const char old[] =
        "{\"traceEvents\": [\n"
        "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 10, "
        "\"args\": {\"Device Type\": 1, \"Device Id\": 3, \"Bytes\": 512}},\n"
        "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 20, "
        "\"args\": {\"Device Type\": 1, \"Device Id\": 3, \"Bytes\": 1024}},\n"
        "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 30, "
        "\"args\": {\"Device Type\": 1, \"Device Id\": 3, \"Bytes\": -512}}\n"
        "]}";
    write_file(tmp_path("old.json"), old, sizeof old - 1);
    rc = vr_import_file(db, tmp_path("old.json"), NULL, &res, &err);
    OK(rc == 0 && vr_analyze(db, &err) == 0, "2021-style trace imported and analysed (%s)",
       err.msg);
    INT_EQ(q_int(h, "SELECT totals_known FROM device WHERE idx = 3"), 0,
           "device without totals marked");
    INT_EQ(q_int(h, "SELECT ds.peak_allocated_bytes FROM device_summary ds JOIN device d "
                    "ON d.id = ds.device_id WHERE d.idx = 3"),
           1536, "rebuilt peak from running sums");
    INT_EQ(q_int(h, "SELECT peak_allocated_bytes FROM device_summary ds JOIN device d "
                    "ON d.id = ds.device_id WHERE d.idx = 0"),
           6144, "the first device's peak is unchanged");

    vr_buf_free(&big);
    vr_buf_free(&bgz);
    vr_buf_free(&gz);
    vr_db_close(db);
    remove_tmpdir();
}

/* The name cache is bounded in bytes (issue 6): distinct long names cost
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

/* A report is never drawn from derived tables that do not match the
 * sources (issue 6): before the analysis commits, rendering refuses. */
static void test_report_needs_analysis(void)
{
    make_tmpdir();
    const char *path = tmp_path("needs-analysis.json");
    write_file(path, e2e_trace, sizeof e2e_trace - 1);
    vr_error err = VR_ERROR_INIT;
    vr_db *db = vr_db_open(NULL, &err);
    vr_import_result res;
    OK(db && vr_import_file(db, path, NULL, &res, &err) == 0, "import without analysis");
    vr_report_opts ro = {.format = VR_FORMAT_JSON};
    vr_buf out = VR_BUF_INIT;
    int rc = vr_report_render(db, &ro, &out, &err);
    OK(rc < 0 && strstr(err.msg, "analysis is not complete"),
       "rendering before the analysis is refused (%s)", err.msg);
    INT_EQ(out.len, 0, "and writes nothing");
    OK(vr_analyze(db, &err) == 0, "vr_analyze");
    rc = vr_report_render(db, &ro, &out, &err);
    OK(rc == 0 && strstr(out.data, "\"peak_allocated_bytes\""), "after it the report renders");
    vr_buf_free(&out);
    OK(vr_import_file(db, path, NULL, &res, &err) == 0 && res.status == VR_ALREADY_IMPORTED,
       "a repeated import changes nothing");
    vr_buf out2 = VR_BUF_INIT;
    OK(vr_report_render(db, &ro, &out2, &err) == 0, "so the analysis stays complete");
    vr_buf_free(&out2);
    vr_db_close(db);
    remove_tmpdir();
}

/* The registry (issue 7): named sniff levels, formats recognised but not
 * read, what unknown content looks like, the "expected" message. */
static void test_reader_registry(void)
{
    static const struct {
        const char *head;
        size_t len;
        const char *reader; /* NULL: none */
        vr_sniff_level level;
    } cases[] = {
        {"{\"schemaVersion\": 1, \"traceEvents\": []}", 0, "kineto", VR_SNIFF_SIGNATURE},
        {"{\"lr\": 0.1}", 0, "kineto", VR_SNIFF_SHAPE},
        {"[{\"ph\": \"X\"}]", 0, "kineto", VR_SNIFF_SHAPE},
        {"[[0, 1, 512, 4]]", 0, "memory_timeline", VR_SNIFF_SHAPE},
        {"{\"segments\": [], \"device_traces\": []}", 0, "snapshot_json", VR_SNIFF_SIGNATURE},
        {"[{\"device\": 0, \"total_size\": 2, \"blocks\": []}]", 0, "snapshot_json",
         VR_SNIFF_SIGNATURE},
        {"{\"allocator_settings\": {}, \"device_traces\": [[{\"action\": \"alloc\"", 0,
         "snapshot_json", VR_SNIFF_SIGNATURE},
        {"\x80\x04\x95\x01\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x08segments", 24,
         "snapshot", VR_SNIFF_SIGNATURE},
        {"{\"allocated_bytes.all.current\": 1}", 0, "memory_stats", VR_SNIFF_SIGNATURE},
        {"<?xml version=\"1.0\" ?>\n<nvidia_smi_log>", 0, "nvsmi_xml", VR_SNIFF_SIGNATURE},
        {"timestamp, name, memory.used [MiB]\n2026/07/14 08:12:53.353, H100, 19818 MiB\n", 0,
         "nvsmi_csv", VR_SNIFF_SIGNATURE},
        {"2026/07/14 08:12:53.353, H100, 19818 MiB\n", 0, "nvsmi_csv", VR_SNIFF_SHAPE},
        {"Tue Jul 14 08:12:53 2026\n+---+\n| NVIDIA-SMI 590.48.01   Driver Version: 590.48.01 |\n"
         "| Fan  Temp   Perf   Pwr:Usage/Cap |   Memory-Usage |\n", 0, "nvsmi_table",
         VR_SNIFF_SIGNATURE},
        {"####\n# $ nvidia-smi\n####\n| NVIDIA-SMI 1 | Memory-Usage |\n####\n# $ nvidia-smi -q\n"
         "####\n==============NVSMI LOG==============\n", 0, "nvsmi_capture", VR_SNIFF_SIGNATURE},
        {"Traceback ...\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate", 0,
         "job_log", VR_SNIFF_SIGNATURE},
        /* any text may be a job log: a fallback, refused if no error is in it */
        {"epoch 1 loss 2.3\n", 0, "job_log", VR_SNIFF_FALLBACK},
        {"SQLite format 3", 16, NULL, VR_SNIFF_NO},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].head);
        vr_sniff_level level;
        const vr_reader *r = vr_reader_pick(cases[i].head, len, &level);
        STR_EQ(r ? r->name : NULL, cases[i].reader, "case %zu: reader", i);
        INT_EQ(level, cases[i].level, "case %zu: level", i);
    }
    STR_EQ(vr_reader_looks_like("epoch 1 loss 2.3\n", 17), "text, but not a format vramreport reads",
           "plain text looks like text");
    OK(strstr(vr_reader_looks_like("SQLite format 3", 16), "SQLite database") != NULL,
       "an SQLite file is named");
    STR_EQ(vr_reader_looks_like("\x01\x02\x03\x00\xff", 5), "binary data", "binary data");
    vr_buf expected = VR_BUF_INIT;
    vr_reader_expected(&expected);
    STR_EQ(expected.data,
           "a PyTorch profiler (Kineto) trace, a torch.profiler export_memory_timeline raw export, "
           "a CUDA caching-allocator snapshot (torch.cuda.memory._dump_snapshot pickle), "
           "a CUDA caching-allocator snapshot (JSON), torch.cuda.memory_stats() (JSON), "
           "a job log with a CUDA out-of-memory error, "
           "an nvidia-smi capture (several commands' output, one file), an nvidia-smi table log, "
           "an nvidia-smi --query-gpu / --query-compute-apps CSV log, "
           "an nvidia-smi -q -x log (XML), an nvidia-smi -q log, a gpustat log, "
           "torch.cuda.memory_summary() text",
           "the expected list names the formats read, from the registry");
    vr_buf_free(&expected);
}

typedef struct {
    vr_buf all;       /* "len:cut:text|" per line */
    uint64_t last;
} lines_seen;

static int on_test_line(void *ud, const char *line, size_t len, uint64_t number, int cut,
                        vr_error *err)
{
    lines_seen *ls = ud;
    (void)err;
    ls->last = number;
    if (len > 12)
        vr_buf_printf(&ls->all, "%zu:%d:%.3s..%.3s|", len, cut, line, line + len - 3);
    else
        vr_buf_printf(&ls->all, "%zu:%d:%.*s|", len, cut, (int)len, line);
    return 0;
}

static void scan_lines_of(const char *name, const char *data, size_t len, size_t max,
                          lines_seen *ls)
{
    write_file(tmp_path(name), data, len);
    vr_error err = VR_ERROR_INIT;
    vr_input *in = vr_input_open(tmp_path(name), &err);
    vr_import_ctx ctx = {.in = in};
    memset(ls, 0, sizeof *ls);
    int rc = in ? vr_reader_scan_lines(&ctx, max, on_test_line, ls, &err) : -1;
    OK(rc == 0, "%s: scanned (%s)", name, rc ? err.msg : "ok");
    vr_input_close(in);
}

/* Lines for the text readers to come: CRLF, no final newline, empty
 * lines, a line far past the bound, lines across 1 MiB reads. */
/* memory_summary()'s cells, exactly (tests/memstats.sh reads whole boxes). */
static void test_memsummary_cells(void)
{
    static const struct {
        const char *cell;
        int is_size, ok;
        int64_t value;
    } cases[] = {
        {"   1062 MB ", 1, 1, INT64_C(1062) << 20},
        {"  10344 MiB ", 1, 1, INT64_C(10344) << 20},
        {"      0 B   ", 1, 1, 0},
        {"   4096 B  ", 1, 1, 4096},
        {" 1.23 GiB", 1, 1, INT64_C(1320702444)}, /* 1320702443.52, rounded */
        {" 1.5 GiB", 1, 1, INT64_C(1610612736)},
        {" 767743 GB", 1, 1, INT64_C(767743) << 30},
        {" 8191 PiB", 1, 1, INT64_C(8191) << 50},
        {" 8192 PiB", 1, 0, 0},                   /* 2^63: beyond int64 */
        {" -4 KiB", 1, 1, -4096},
        {" 12 XB", 1, 0, 0},
        {" 12", 1, 0, 0},                         /* a size needs its unit */
        {" 1x2 MB", 1, 0, 0},
        {" 1. MB", 1, 0, 0},
        {" 1234567890123456789 B", 1, 0, 0},      /* over 18 digits */
        {"   1234 K  ", 0, 1, 1234000},
        {"      7    ", 0, 1, 7},
        {"      2 M  ", 0, 1, 2000000},
        {"      5 KB ", 0, 0, 0},                 /* a count has no byte unit */
        {"", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int64_t v = 0;
        int ok = vr_memsummary_cell(cases[i].cell, strlen(cases[i].cell), cases[i].is_size, &v);
        INT_EQ(ok, cases[i].ok, "cell '%s' read or refused", cases[i].cell);
        if (ok && cases[i].ok)
            INT_EQ(v, cases[i].value, "cell '%s' value", cases[i].cell);
    }
}

static void test_reader_lines(void)
{
    make_tmpdir();
    lines_seen ls;
    scan_lines_of("crlf", "a\r\nbb\n\nccc", 10, 100, &ls);
    STR_EQ(ls.all.data, "1:0:a|2:0:bb|0:0:|3:0:ccc|", "CRLF and LF ends, empty line, last line");
    INT_EQ(ls.last, 4, "four lines numbered");
    vr_buf_free(&ls.all);

    vr_buf big = VR_BUF_INIT;
    vr_buf_puts(&big, "head\n");
    for (int i = 0; i < 3000000; i++)
        vr_buf_putc(&big, 'x');
    vr_buf_puts(&big, "\r\ntail\n");
    scan_lines_of("long", big.data, big.len, 1000, &ls);
    STR_EQ(ls.all.data, "4:0:head|1000:1:xxx..xxx|4:0:tail|",
           "a 3 MB line is passed cut to the bound, flagged, and the next line is whole");
    vr_buf_free(&ls.all);
    vr_buf_free(&big);

    for (int i = 0; i < 200000; i++)
        vr_buf_printf(&big, "line %06d\n", i);
    scan_lines_of("many", big.data, big.len, 100, &ls);
    OK(ls.last == 200000 && ls.all.len == 200000 * strlen("11:0:line 000000|"),
       "200,000 lines across 1 MiB reads, none split (%llu)", (unsigned long long)ls.last);
    vr_buf_free(&ls.all);
    vr_buf_free(&big);
    remove_tmpdir();
}

/* The bounded id cache the snapshot reader keeps frames and stacks in. */
static void test_idmap(void)
{
    vr_idmap m;
    vr_idmap_init(&m, 5000);
    INT_EQ(vr_idmap_get(&m, 42), 0, "an empty map knows nothing");
    int ok = 1;
    for (uint64_t k = 1; k <= 10000; k++)
        vr_idmap_put(&m, k * 0x9E3779B97F4A7C15ull, (int64_t)k);
    for (uint64_t k = 1; k <= 5000; k++)
        ok &= vr_idmap_get(&m, k * 0x9E3779B97F4A7C15ull) == (int64_t)k;
    OK(ok, "the first 5,000 keys keep their values through growth");
    INT_EQ(m.len, 5000, "the map stops at its bound");
    INT_EQ(vr_idmap_get(&m, 6000 * 0x9E3779B97F4A7C15ull), 0, "a key past the bound is not kept");
    vr_idmap_put(&m, 1 * 0x9E3779B97F4A7C15ull, 77);
    INT_EQ(vr_idmap_get(&m, 1 * 0x9E3779B97F4A7C15ull), 77, "a known key is updated in place");
    vr_idmap_free(&m);
}

/* The ordered map against a plain sorted array, over random puts,
 * deletes and neighbour queries (keys drawn from a small range, so
 * repeats, misses and both ends are hit often). */
#define ORD_KEYS 600

static int ord_ref_find(const int64_t *ref, size_t n, int64_t key)
{
    for (size_t i = 0; i < n; i++)
        if (ref[i] == key)
            return (int)i;
    return -1;
}

/* The reference's answer to ceil/floor (strict or not): the key, or -1. */
static int64_t ord_ref_near(const int64_t *ref, size_t n, int64_t key, int up, int strict)
{
    int64_t best = -1;
    for (size_t i = 0; i < n; i++) {
        int64_t k = ref[i];
        int fits = up ? (strict ? k > key : k >= key) : (strict ? k < key : k <= key);
        if (fits && (best < 0 || (up ? k < best : k > best)))
            best = k;
    }
    return best;
}

/* A charge callback with a ceiling: what vr_slots asks for and gives back. */
typedef struct {
    long long held, peak, ceiling;
} slots_budget;

static int slots_charge(void *ctx, ptrdiff_t bytes)
{
    slots_budget *b = ctx;
    if (bytes > 0 && b->held + bytes > b->ceiling)
        return -1;
    b->held += bytes;
    b->peak = b->held > b->peak ? b->held : b->peak;
    return 0;
}

/* The choice made as the rows come (vr_many_offer) is vr_many_choose's
 * over all of them, and so is its summary: lists of 0 to 60 rows with
 * flags, missing weights and ties, each row a cJSON number of its index. */
static void test_many_stream(void)
{
    unsigned seed = 12345;
    int bad = 0;
    for (int trial = 0; trial < 400; trial++) {
        size_t n = (size_t)(trial % 61);
        vr_many_rank r[64];
        unsigned char keep[64];
        vr_many_stream ms;
        vr_many_stream_init(&ms);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            unsigned v = seed >> 8;
            r[i].flagged = v % 11 == 0;
            r[i].has_weight = v % 7 != 0;
            r[i].weight = r[i].has_weight ? (int64_t)(v / 7 % (trial % 3 ? 9 : 1000)) : 0;
            cJSON *row = vr_many_wants(&ms, &r[i]) ? cJSON_CreateNumber((double)i) : NULL;
            vr_many_offer(&ms, &r[i], row);
        }
        cJSON *summary, *kept = vr_many_finish(&ms, "w", &summary);
        vr_many_choose(r, n, VR_MANY_IN_FULL, keep);
        const cJSON *k = kept->child;
        for (size_t i = 0; i < n; i++) {
            int got = k && (size_t)k->valuedouble == i;
            bad += got != keep[i];
            if (got)
                k = k->next;
        }
        bad += k != NULL;
        cJSON *want = vr_many_all_kept(keep, n) ? NULL : vr_many_summary(r, n, keep, "w");
        bad += !(summary ? want && cJSON_Compare(summary, want, 1) : !want);
        cJSON_Delete(want);
        cJSON_Delete(summary);
        cJSON_Delete(kept);
    }
    INT_EQ(bad, 0, "400 lists: the rows kept as they come, and the summary, are vr_many_choose's");
}

static void test_slots(void)
{
    /* 200,000 slots over 49 pages, 3 in memory: set in order, each read
     * back at random (most from the file), changed, and read again. */
    enum { N = 200000 };
    uint32_t *want = calloc(N, sizeof *want);
    slots_budget b = {0, 0, 1 << 20};
    vr_slots s;
    vr_slots_init(&s, 3, slots_charge, &b);
    int ok = 1;
    for (uint32_t i = 0; i < N; i += 1 + i % 3) {
        want[i] = i * 2654435761u | 1u;
        ok &= vr_slots_set(&s, i, want[i]) == 0;
    }
    uint32_t x = 12345;
    for (int k = 0; k < 20000 && ok; k++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        uint32_t i = x % N;
        ok &= vr_slots_get(&s, i) == want[i];
        if (k % 7 == 0) {
            want[i] = x;
            ok &= vr_slots_set(&s, i, x) == 0;
        }
    }
    for (uint32_t i = 0; i < N && ok; i++)
        ok &= vr_slots_get(&s, i) == want[i];
    OK(ok, "200,000 slots, 3 pages of 4,096 in memory: every value read back as set");
    OK(s.nresident == 3 && s.made == (N + VR_SLOTS_PAGE - 1) / VR_SLOTS_PAGE,
       "3 pages in memory, %zu made", s.made);
    OK(s.writes > 40 && s.loads > 40, "pages went out (%llu) and came back (%llu)",
       (unsigned long long)s.writes, (unsigned long long)s.loads);
    OK(b.peak < (long long)(4 * VR_SLOTS_PAGE * 4 + 4096), "memory counted stays at 3 pages and tables (%lld)",
       b.peak);
    OK(vr_slots_get(&s, (uint64_t)N * 8) == 0 && vr_slots_peek(&s, 5) == NULL,
       "a slot past every page reads 0; one in the file is not peeked");
    vr_slots_free(&s);
    INT_EQ(b.held, 0, "everything counted is given back");

    /* The charge refused: the set fails, and says so, and reads stay safe. */
    slots_budget tight = {0, 0, 2 * VR_SLOTS_PAGE * 4 + 200};
    vr_slots_init(&s, 8, slots_charge, &tight);
    ok = 1;
    uint32_t i = 0;
    for (; i < 8 * VR_SLOTS_PAGE && ok; i += VR_SLOTS_PAGE)
        ok &= vr_slots_set(&s, i, i + 1) == 0;
    OK(!ok && vr_slots_failed(&s) == VR_SLOTS_NO_MEMORY,
       "past the charge's ceiling a set fails: no memory (at slot %u)", i - (uint32_t)VR_SLOTS_PAGE);
    OK(vr_slots_get(&s, 0) == 1 && vr_slots_get(&s, 7 * VR_SLOTS_PAGE) == 0,
       "what was set still reads back; what was not reads 0");
    vr_slots_free(&s);
    INT_EQ(tight.held, 0, "and everything is given back");
    free(want);
}

static void test_ordmap(void)
{
    vr_ordmap m;
    vr_ordmap_init(&m);
    OK(vr_ordmap_get(&m, vr_okey1(1)) == NULL && vr_ordmap_ceil(&m, vr_okey1(0), 0) == NULL,
       "an empty map has nothing");
    int64_t ref[ORD_KEYS], vals[ORD_KEYS];
    size_t n = 0;
    uint32_t x = 12345;
    int ok = 1;
    for (int step = 0; step < 200000 && ok; step++) {
        x = x * 1103515245u + 12345u;
        int64_t key = (int64_t)((x >> 8) % ORD_KEYS);
        int op = (int)((x >> 24) % 5), at = ord_ref_find(ref, n, key);
        if (op == 0) {
            int64_t v[VR_ORDMAP_VALUES] = {step, -step, key, 7};
            ok &= vr_ordmap_put(&m, vr_okey1(key), v) == (at < 0);
            if (at < 0) {
                ref[n] = key;
                vals[n++] = step;
            } else {
                vals[at] = step;
            }
        } else if (op == 1 || op == 4) {
            if (op == 1) {
                ok &= vr_ordmap_del(&m, vr_okey1(key)) == (at >= 0);
            } else { /* take: removed, with its value and its neighbours */
                vr_oentry taken, *below, *above;
                int64_t lo = ord_ref_near(ref, n, key, 0, 1), hi = ord_ref_near(ref, n, key, 1, 1);
                int got = vr_ordmap_take(&m, vr_okey1(key), &taken, &below, &above);
                ok &= got == (at >= 0);
                ok &= !got || (taken.key.k[0] == key && taken.v[0] == vals[at] &&
                               (below ? below->key.k[0] : -1) == lo &&
                               (above ? above->key.k[0] : -1) == hi);
                ok &= got || (!below && !above);
            }
            if (at >= 0) {
                ref[at] = ref[n - 1];
                vals[at] = vals[--n];
            }
        } else {
            const vr_oentry *e = vr_ordmap_get(&m, vr_okey1(key));
            ok &= at < 0 ? e == NULL : (e && e->v[0] == vals[at] && e->v[1] == -vals[at]);
            int strict = op == 3;
            const vr_oentry *c = vr_ordmap_ceil(&m, vr_okey1(key), strict);
            const vr_oentry *f = vr_ordmap_floor(&m, vr_okey1(key), strict);
            ok &= (c ? c->key.k[0] : -1) == ord_ref_near(ref, n, key, 1, strict);
            ok &= (f ? f->key.k[0] : -1) == ord_ref_near(ref, n, key, 0, strict);
            vr_oentry *below, *above;
            const vr_oentry *here = vr_ordmap_around(&m, vr_okey1(key), &below, &above);
            ok &= (here != NULL) == (at >= 0);
            ok &= (below ? below->key.k[0] : -1) == ord_ref_near(ref, n, key, 0, 1);
            ok &= (above ? above->key.k[0] : -1) == ord_ref_near(ref, n, key, 1, 1);
        }
        ok &= vr_ordmap_count(&m) == n;
    }
    OK(ok, "200,000 random puts, deletes, takes and neighbour queries (ceil, floor, around) agree with a sorted array");

    /* In order: walking with strict ceil visits every key once, ascending. */
    size_t seen = 0;
    int64_t last = -1;
    for (const vr_oentry *e = vr_ordmap_ceil(&m, vr_okey1(INT64_MIN), 0); e;
         e = vr_ordmap_ceil(&m, e->key, 1)) {
        ok &= e->key.k[0] > last;
        last = e->key.k[0];
        seen++;
    }
    OK(ok && seen == n, "a walk by ceil visits every key in order");
    vr_ordmap_free(&m);

    /* Keys of three parts compare part by part: the largest size of one
     * group is the floor of (group, max, max). */
    vr_ordmap_init(&m);
    static const int64_t none[VR_ORDMAP_VALUES];
    vr_ordmap_put(&m, vr_okey3(1, 4096, 10), none);
    vr_ordmap_put(&m, vr_okey3(1, 8192, 5), none);
    vr_ordmap_put(&m, vr_okey3(2, 512, 0), none);
    vr_ordmap_put(&m, vr_okey3(0, 1 << 30, 0), none);
    const vr_oentry *top = vr_ordmap_floor(&m, vr_okey3(1, INT64_MAX, INT64_MAX), 0);
    OK(top && top->key.k[0] == 1 && top->key.k[1] == 8192, "the largest of group 1 is 8192");
    vr_ordmap_del(&m, vr_okey3(1, 8192, 5));
    top = vr_ordmap_floor(&m, vr_okey3(1, INT64_MAX, INT64_MAX), 0);
    OK(top && top->key.k[1] == 4096, "after a delete, the next largest of group 1");
    top = vr_ordmap_floor(&m, vr_okey3(3, INT64_MAX, INT64_MAX), 0);
    OK(top && top->key.k[0] == 2, "a group with nothing falls to the one below (callers check)");

    /* Memory: nodes freed by deletes are reused. */
    for (int64_t i = 0; i < 1000; i++)
        vr_ordmap_put(&m, vr_okey1(i + 100), none);
    size_t len = m.len;
    for (int round = 0; round < 10; round++) {
        for (int64_t i = 0; i < 1000; i++)
            vr_ordmap_del(&m, vr_okey1(i + 100));
        for (int64_t i = 0; i < 1000; i++)
            vr_ordmap_put(&m, vr_okey1(i + 100 + round), none);
    }
    INT_EQ((long long)m.len, (long long)len, "deleted nodes are reused: the array does not grow");
    vr_ordmap_free(&m);

    /* Keys in ascending order (the replay loads segments and blocks by
     * address): a put of a key already there updates it wherever the
     * descent meets it, and deletes from the low end empty the map. */
    vr_ordmap_init(&m);
    ok = 1;
    for (int64_t i = 0; i < 50000; i++) {
        int64_t v[VR_ORDMAP_VALUES] = {i, 0, 0, 0};
        ok &= vr_ordmap_put(&m, vr_okey1(i * 512), v) == 1;
    }
    for (int64_t i = 0; i < 50000; i += 7) {
        int64_t v[VR_ORDMAP_VALUES] = {-i, 0, 0, 0};
        ok &= vr_ordmap_put(&m, vr_okey1(i * 512), v) == 0;
    }
    for (int64_t i = 0; i < 50000; i++) {
        const vr_oentry *e = vr_ordmap_get(&m, vr_okey1(i * 512));
        ok &= e && e->v[0] == (i % 7 ? i : -i);
    }
    OK(ok && vr_ordmap_count(&m) == 50000, "50,000 ascending keys, every seventh put again: updated");
    for (int64_t i = 0; i < 50000; i++)
        ok &= vr_ordmap_del(&m, vr_okey1(i * 512)) == 1 && vr_ordmap_count(&m) == (size_t)(49999 - i);
    OK(ok && vr_ordmap_ceil(&m, vr_okey1(INT64_MIN), 0) == NULL, "deleted from the low end: empty");
    vr_ordmap_free(&m);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_hash);
    RUN(test_blake2b);
    RUN(test_units);
    RUN(test_units_rollover);
    RUN(test_tz);
    RUN(test_monitor_values);
    RUN(test_stmt_cache_names);
    RUN(test_batch_writer);
    RUN(test_batch_writer_failure);
    RUN(test_batch_shapes);
    RUN(test_named_parameters);
    RUN(test_batch_shared);
    RUN(test_monitor_identity);
    RUN(test_units_count_min);
    RUN(test_json_reader);
    RUN(test_json_numbers);
    RUN(test_json_ts_edge);
    RUN(test_json_exponents_exact);
    RUN(test_json_exponents_inexact);
    RUN(test_json_exponents_ts);
    RUN(test_json_exponents_import);
    RUN(test_json_strings);
    RUN(test_json_skip_and_truncation);
    RUN(test_jscan_chunks);
    RUN(test_jscan_truncation);
    RUN(test_jscan_errors);
    RUN(test_jscan_strings);
    RUN(test_jscan_nested);
    RUN(test_input);
    RUN(test_input_zstd_small_reads);
    RUN(test_input_utf16);
    RUN(test_input_zstd_skippable);
    RUN(test_utf8_encode);
    RUN(test_markdown_escape);
    RUN(test_end_to_end);
    RUN(test_name_cache_bytes);
    RUN(test_report_needs_analysis);
    RUN(test_reader_registry);
    RUN(test_reader_lines);
    RUN(test_memsummary_cells);
    RUN(test_idmap);
    RUN(test_ordmap);
    RUN(test_slots);
    RUN(test_many_stream);
    return harness_summary();
}
