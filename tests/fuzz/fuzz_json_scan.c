/*-*** fuzz_json_scan.c: libFuzzer target for the scanner and the pull reader ***/
/*
 * The input is one document fed to vr_json_scan in two or three chunks whose
 * boundaries come from the first byte (the whole input, first byte
 * included, is the document). Each chunk is its own heap copy of exactly
 * its size, so a read past a chunk is an ASan report. Every delivered
 * element and member is read with the vr_json pull reader the way the
 * importers read events: enter the object, walk its members, read strings
 * (unescaped into a vr_buf), integers, timestamps, booleans, raw values,
 * and skip the rest; nested values are walked to a bounded depth. Half
 * the inputs also stream a snapshot's device_traces (vr_json_scan_nest).
 *
 * Built by `make fuzz` with only json_scan.c, json_pull.c and buf.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/json_scan.h"
#include "parse/json_pull.h"
#include "util/buf.h"

typedef struct {
    vr_buf scratch;
    vr_json_faults faults;
    uint64_t values;
} fuzz_ctx;

static void walk(fuzz_ctx *c, vr_json *j, int depth);

/* Reads one value of whatever kind comes next. */
static void read_value(fuzz_ctx *c, vr_json *j, int depth)
{
    vr_json_str s;
    int64_t v;
    int b;
    c->values++;
    switch (vr_json_peek(j)) {
    case VR_JSON_OBJECT:
    case VR_JSON_ARRAY:
        if (depth >= 32) {
            vr_json_skip(j);
            return;
        }
        walk(c, j, depth + 1);
        return;
    case VR_JSON_STRING: {
        /* Numeric strings ("25738", "1712195495519689.047") are read both
         * ways from copies of the reader, then consumed as a string. */
        vr_json a = *j, t = *j;
        vr_json_int64(&a, &v);
        vr_json_us_to_ns(&t, &v);
        if (vr_json_string(j, &s)) {
            vr_buf_clear(&c->scratch);
            vr_json_unescape(&s, &c->scratch, &c->faults);
            int overflow;
            vr_json_parse_int64(s.s, s.len, &v, &overflow);
            vr_json_str_eq(&s, "[memory]");
        }
        return;
    }
    case VR_JSON_NUMBER: {
        vr_json t = *j;
        vr_json_us_to_ns(&t, &v);
        vr_json_int64(j, &v);
        return;
    }
    case VR_JSON_TRUE:
    case VR_JSON_FALSE:
        vr_json_bool(j, &b);
        return;
    case VR_JSON_NULL:
    default:
        vr_json_skip(j);
        return;
    }
}

/* Walks an object or array; each loop step must consume input or stop. */
static void walk(fuzz_ctx *c, vr_json *j, int depth)
{
    vr_json_str key;
    const char *last = NULL;
    if (vr_json_peek(j) == VR_JSON_ARRAY) {
        if (!vr_json_enter_array(j))
            return;
        while (vr_json_next_element(j)) {
            if (j->p == last)
                abort(); /* no progress: the reader would loop forever */
            last = j->p;
            read_value(c, j, depth);
        }
        return;
    }
    if (!vr_json_enter_object(j))
        return;
    while (vr_json_next_member(j, &key)) {
        if (j->p == last)
            abort();
        last = j->p;
        vr_buf_clear(&c->scratch);
        vr_json_unescape(&key, &c->scratch, &c->faults);
        /* The importer's way for the keys it knows, generic otherwise. */
        vr_json_str s;
        int64_t v;
        if (vr_json_str_eq(&key, "ts") || vr_json_str_eq(&key, "dur")) {
            vr_json_us_to_ns(j, &v);
        } else if (vr_json_str_eq(&key, "pid") || vr_json_str_eq(&key, "tid")) {
            vr_json_int64(j, &v);
        } else if (vr_json_str_eq(&key, "ph") || vr_json_str_eq(&key, "cat")) {
            if (vr_json_string(j, &s)) {
                vr_buf_clear(&c->scratch);
                vr_json_unescape(&s, &c->scratch, &c->faults);
            }
        } else if (vr_json_str_eq(&key, "args")) {
            vr_json_str raw;
            if (vr_json_raw(j, &raw)) {
                vr_json sub;
                vr_json_init(&sub, raw.s, raw.len, &c->faults);
                read_value(c, &sub, depth);
            }
        } else if (vr_json_str_eq(&key, "s")) {
            vr_json_skip(j);
        } else {
            read_value(c, j, depth);
        }
    }
}

static void read_bytes(fuzz_ctx *c, const char *val, size_t len)
{
    /* The reader gets an exact-size copy too: spans must stay inside it. */
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return;
    if (len)
        memcpy(copy, val, len);
    vr_json j;
    vr_json_init(&j, copy, len, &c->faults);
    read_value(c, &j, 0);
    if (j.p < copy || (j.p > copy + len && !j.failed))
        abort(); /* a successful read ended outside the value */
    free(copy);
}

static int on_member(void *ud, const char *key, size_t keylen, const char *val, size_t len,
                     uint64_t offset)
{
    fuzz_ctx *c = ud;
    (void)offset;
    if (keylen) {
        vr_json_str k = {key, keylen, memchr(key, '\\', keylen) != NULL};
        vr_buf_clear(&c->scratch);
        vr_json_unescape(&k, &c->scratch, &c->faults);
    }
    read_bytes(c, val, len);
    return 0;
}

static int on_element(void *ud, const char *val, size_t len, uint64_t offset)
{
    (void)offset;
    read_bytes(ud, val, len);
    return 0;
}

/* device_traces: each entry of each device's list (the nested stream). */
static int on_nested(void *ud, size_t outer, int inner, const char *val, size_t len,
                     uint64_t offset)
{
    (void)outer;
    (void)inner;
    (void)offset;
    read_bytes(ud, val, len);
    return 0;
}

static vr_json_scan_status feed(vr_json_scan *s, const uint8_t *data, size_t len)
{
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return VR_JSON_SCAN_STOPPED;
    if (len)
        memcpy(copy, data, len);
    vr_json_scan_status st = vr_json_scan_feed(s, copy, len);
    free(copy);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned sel = data[0];
    /* Two or three chunks: cut points from the first byte. */
    size_t cut1 = (size_t)((sel * 2654435761u) % (size + 1));
    size_t cut2 = sel & 1 ? cut1 : cut1 + (size_t)((sel * 40503u) % (size - cut1 + 1));
    const char *stream_key = sel & 2 ? NULL : sel & 8 ? "segments" : "traceEvents";

    fuzz_ctx c;
    memset(&c, 0, sizeof c);
    vr_json_scan s;
    vr_json_scan_init(&s, stream_key, on_member, on_element, &c);
    if (sel & 4) /* a snapshot's device_traces, as snapshot_json.c reads it */
        vr_json_scan_nest(&s, "device_traces", on_nested);
    vr_json_scan_status st = feed(&s, data, cut1);
    if (st == VR_JSON_SCAN_OK)
        st = feed(&s, data + cut1, cut2 - cut1);
    if (st == VR_JSON_SCAN_OK)
        st = feed(&s, data + cut2, size - cut2);
    if (st == VR_JSON_SCAN_OK) {
        /* What a reader asks at the end of input. */
        int complete = vr_json_scan_complete(&s);
        const char *where = vr_json_scan_where(&s);
        if (!where || (complete && vr_json_scan_in_stream(&s)))
            abort();
        (void)vr_json_scan_stream_seen(&s);
    } else if (st == VR_JSON_SCAN_SYNTAX) {
        if (vr_json_scan_error_offset(&s) > size ||
            strncmp(vr_json_scan_error(&s), "expected ", 9) != 0)
            abort(); /* the error must point inside the input and say what */
        if (vr_json_scan_feed(&s, "{", 1) != VR_JSON_SCAN_SYNTAX)
            abort();
    }
    vr_json_scan_free(&s);
    vr_buf_free(&c.scratch);
    return 0;
}
