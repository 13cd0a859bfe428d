/* Reader for torch.cuda.memory_stats() saved as JSON: an object of flat
 * keys ("allocated_bytes.all.current": 123, "num_ooms": 0), as
 * memory_stats() returns it, or nested (memory_stats_as_nested_dict(), or a
 * tool's dict per device: {"0": {...}}, {"cuda:1": {...}}). Nested objects
 * are flattened with "." into memory_stats()'s own keys; an object under a
 * device's name is a dump of that device. Every integer becomes an
 * allocator_stat row (keys as written: PyTorch adds keys over versions);
 * a value that is not an integer is skipped and counted, and so is one no
 * allocator can give (statcheck.h: below 0, over 1 PiB, allocated over
 * reserved in the dump), with a warning naming the first. Top-level
 * "rank" and "world_size" members are the source's, not figures. The
 * top-level members are streamed (vr_reader_scan_json), so the file may be large.
 * This file owns the allocator_stat rows of its source. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/reader.h"
#include "import/readers/memsummary.h"
#include "scan/statcheck.h"

#define MAX_DEPTH 8 /* memory_stats nests 3 deep; more is not a dump */
#define MAX_KEY 256 /* bytes of a flattened key */

typedef struct {
    vr_import_ctx *ctx;
    vr_error *err;
    sqlite3_stmt *ins;
    int64_t next_dump;
    int64_t flat_dump;   /* dump of the top-level figures, -1 until one */
    int64_t flat_device; /* a top-level "device": N, -1 when none */
    uint64_t skipped;    /* values that are not integers, or impossible */
    vr_buf key;
    uint64_t where;  /* byte offset of the member's value being read */
    const char *val; /* and where that value is in memory */
    vr_stat_bad bad;
    vr_stat_pairs flat_held;   /* the top-level dump's, checked at the end */
    vr_stat_pairs member_held; /* a device's dump, checked after its member */
} memstats;

/* torch.cuda.memory_stats() saved as JSON: flat keys like these, or a
 * dict of such per device. */
static vr_sniff_level sniff(const char *head, size_t len)
{
    size_t i = len >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < len && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
        i++;
    if (i >= len || head[i] != '{')
        return VR_SNIFF_NO;
    /* memory_stats_as_nested_dict(): {"allocated_bytes": {"all": ...}} */
    int nested = memmem(head, len, "\"allocated_bytes\"", 17) &&
                 memmem(head, len, "\"num_alloc_retries\"", 19);
    return nested || memmem(head, len, "\"allocated_bytes.all.current\"", 29) ||
                   memmem(head, len, "\"reserved_bytes.all.peak\"", 25)
               ? VR_SNIFF_SIGNATURE
               : VR_SNIFF_NO;
}

static int insert(memstats *m, int64_t dump, int64_t device, const char *key, int64_t value)
{
    sqlite3_stmt *st = m->ins;
    if (vr_db_bind_int(st, ":source", m->ctx->source_id, m->err) < 0 ||
        vr_db_bind_opt_int(st, ":device", device >= 0, device, m->err) < 0 ||
        vr_db_bind_int(st, ":dump", dump, m->err) < 0 ||
        vr_db_bind_text(st, ":key", key, strlen(key), m->err) < 0 ||
        vr_db_bind_int(st, ":value", value, m->err) < 0)
        return -1;
    m->ctx->events++;
    return vr_db_step_done(m->ctx->db, st, m->err);
}

/* An integer, exactly, or nothing: a fraction, a value beyond int64 (which
 * vr_json_int64 would clamp), a string, null or a boolean is not a figure. */
static int read_integer(vr_json *j, int64_t *out)
{
    vr_json_faults t = {0};
    vr_json_faults *outer = j->faults;
    vr_json_kind kind = vr_json_peek(j);
    j->faults = &t;
    int ok = kind == VR_JSON_NUMBER && vr_json_int64(j, out) && !t.int_overflow;
    j->faults = outer;
    if (kind != VR_JSON_NUMBER)
        vr_json_skip(j);
    return ok;
}

/* "cuda:1", "1", "device 1": the device a nested dump is of. */
static int device_name(const char *s, size_t n, int64_t *idx)
{
    static const char *const prefixes[] = {"cuda:", "device ", "device:", ""};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        size_t k = strlen(prefixes[i]);
        if (n <= k || n - k > 6 || memcmp(s, prefixes[i], k) != 0)
            continue;
        int overflow = 0;
        int64_t v;
        size_t digits = 0;
        while (k + digits < n && s[k + digits] >= '0' && s[k + digits] <= '9')
            digits++;
        if (k + digits == n && vr_json_parse_int64(s + k, digits, &v, &overflow) && !overflow) {
            *idx = v;
            return 1;
        }
    }
    return 0;
}

/* A "device" member: 1, "1" or "cuda:1". */
static int device_value(vr_json *j, int64_t *idx)
{
    vr_json_str text;
    if (vr_json_peek(j) == VR_JSON_STRING)
        return vr_json_string(j, &text) && !text.has_escapes &&
               device_name(text.s, text.len, idx);
    return read_integer(j, idx) && *idx >= 0;
}

/* Appends ".name" (or "name" at the start) to the key; 0 when too long. */
static int push_key(memstats *m, const vr_json_str *name)
{
    if (m->key.len)
        vr_buf_putc(&m->key, '.');
    vr_json_unescape(name, &m->key, &m->ctx->json_faults);
    return m->key.len <= MAX_KEY;
}

/* The value at j under the key built so far: an integer is a figure, an
 * object is flattened. */
static int read_value(memstats *m, vr_json *j, int64_t dump, int64_t device, int depth)
{
    if (vr_json_peek(j) == VR_JSON_OBJECT && depth < MAX_DEPTH) {
        vr_json_enter_object(j);
        vr_json_str name;
        size_t base = m->key.len;
        while (vr_json_next_member(j, &name)) {
            int fits = push_key(m, &name);
            int rc = fits ? read_value(m, j, dump, device, depth + 1) : 0;
            if (!fits) {
                vr_json_skip(j);
                m->skipped++;
            }
            m->key.len = base;
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    int64_t v;
    uint64_t at = m->where + (uint64_t)(j->p - m->val); /* the figure's byte */
    if (!read_integer(j, &v)) {
        m->skipped++;
        return 0;
    }
    vr_buf_putc(&m->key, '\0'); /* a C string for the statement */
    m->key.len--;
    const char *why = vr_stat_impossible(m->key.data, v);
    if (why) {
        vr_stat_bad_note(&m->bad, m->key.data, v, why, at);
        m->skipped++;
        return 0;
    }
    vr_stat_pairs *held = dump == m->flat_dump ? &m->flat_held : &m->member_held;
    if (vr_stat_pairs_hold(held, m->key.data, v, 0, at))
        return 0;
    return insert(m, dump, device, m->key.data, v);
}

typedef struct {
    memstats *m;
    int64_t dump, device;
} held_dump;

static int insert_held(void *ud, const char *key, int64_t value, vr_error *err)
{
    held_dump *h = ud;
    (void)err; /* insert's is m->err, the same */
    return insert(h->m, h->dump, h->device, key, value);
}

/* A dump's end: its allocated and reserved figures checked, then written. */
static int release(memstats *m, vr_stat_pairs *held, int64_t dump, int64_t device)
{
    held_dump h = {m, dump, device};
    return vr_stat_pairs_release(held, insert_held, &h, &m->bad, &m->skipped, m->err);
}

/* Top-level members that say whose figures these are, not figures: a
 * "device" (of the top-level figures), the process's "rank" and
 * "world_size" (vramreport_capture.py writes them beside the dump). */
static int owner_member(memstats *m, const vr_json_str *name, vr_json *j)
{
    int64_t v;
    int64_t *into = VR_JSON_EQ(name, "device")       ? &m->flat_device
                    : VR_JSON_EQ(name, "rank")       ? &m->ctx->rank
                    : VR_JSON_EQ(name, "world_size") ? &m->ctx->world_size
                                                     : NULL;
    if (!into)
        return 0;
    int ok = into == &m->flat_device ? device_value(j, &v) : read_integer(j, &v) && v >= 0;
    if (ok)
        *into = v;
    return ok;
}

static int64_t flat_dump(memstats *m)
{
    if (m->flat_dump < 0)
        m->flat_dump = m->next_dump++;
    return m->flat_dump;
}

static int on_member(void *ud, const char *key, size_t keylen, const char *val, size_t vallen,
                     uint64_t offset)
{
    memstats *m = ud;
    vr_json j;
    int64_t device;
    vr_json_str name = {key, keylen, memchr(key, '\\', keylen) != NULL};
    m->where = offset;
    m->val = val;
    vr_json_init(&j, val, vallen, &m->ctx->json_faults);
    vr_buf_clear(&m->key);
    if (vr_json_peek(&j) == VR_JSON_OBJECT && device_name(key, keylen, &device)) {
        int64_t dump = m->next_dump++;
        return read_value(m, &j, dump, device, 0) < 0 ||
                       release(m, &m->member_held, dump, device) < 0
                   ? 1
                   : 0;
    }
    if (owner_member(m, &name, &j))
        return 0;
    vr_json_init(&j, val, vallen, &m->ctx->json_faults);
    if (!push_key(m, &name)) {
        m->skipped++;
        return 0;
    }
    return read_value(m, &j, flat_dump(m), -1, 1) < 0 ? 1 : 0;
}

/* A top-level "device" names the device of the top-level figures, wherever
 * it stands among them. */
static int set_flat_device(memstats *m)
{
    if (m->flat_dump < 0 || m->flat_device < 0)
        return 0;
    sqlite3_stmt *st =
        vr_db_stmt(m->ctx->db, "schemas/import.sql", "set_allocator_stat_device", m->err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", m->ctx->source_id, m->err) < 0 ||
        vr_db_bind_int(st, ":dump", m->flat_dump, m->err) < 0 ||
        vr_db_bind_int(st, ":device", m->flat_device, m->err) < 0)
        return -1;
    return vr_db_step_done(m->ctx->db, st, m->err);
}

static int import(vr_import_ctx *ctx, vr_error *err)
{
    memstats m = {.ctx = ctx, .err = err, .flat_dump = -1, .flat_device = -1, .key = VR_BUF_INIT};
    m.ins = vr_db_stmt(ctx->db, "schemas/import.sql", "insert_allocator_stat", err);
    if (!m.ins)
        return -1;
    ctx->clock = VR_CLOCK_NONE;
    vr_json_scan scan;
    vr_json_scan_init(&scan, NULL, on_member, NULL, &m);
    int rc = vr_reader_scan_json(ctx, &scan, err);
    vr_json_scan_free(&scan);
    vr_buf_free(&m.key);
    if (rc == 0 && m.flat_dump >= 0)
        rc = release(&m, &m.flat_held, m.flat_dump, -1);
    if (rc < 0)
        return -1;
    vr_stat_bad_warn(&m.bad, ctx->warn, vr_input_path(ctx->in), "byte");
    if (ctx->events == 0 && !ctx->truncated)
        return vr_fail_code(err, VR_ERR_NOT_RECOGNISED,
                            "%s: no integer memory_stats() figures in it (expected keys like "
                            "\"allocated_bytes.all.current\")",
                            vr_input_path(ctx->in));
    if (set_flat_device(&m) < 0 || vr_memsummary_dump_ooms(ctx, "num_ooms", "memory_stats", err) < 0)
        return -1;
    return vr_reader_tally(ctx, "malformed_stat", m.skipped, err);
}

const vr_reader vr_reader_memory_stats = {"memory_stats", "torch.cuda.memory_stats() (JSON)",
                                          sniff, import, NULL};
