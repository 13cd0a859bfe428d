/*-*** fuzz_pickle.c: libFuzzer target for the data-only pickle decoder ***/
/*
 * The input is one pickle, decoded twice with the same stream callback:
 * once fed in chunks of random sizes (from a hash of the input), each an
 * exact-size heap copy so a read past a chunk is an ASan report, and once
 * in one piece. The two must agree (outcome, message, elements): nothing
 * may depend on where chunks split.
 *
 * The stream callback streams some lists (the root, and paths of odd
 * depth, or all of them, by a bit of the hash); on_element reads each
 * element the way the snapshot reader does (vr_pk_get, vr_pk_int,
 * vr_pk_str_eq on dicts), walks it, and tags the containers of every other
 * element, so later BINGETs of them come back as references (and of the
 * others, as "no longer held" errors). on_done walks the root.
 *
 * Invariants checked (abort on failure): an error is one line starting
 * "byte N: " with N inside the input; after STOP nothing is held; the
 * decoder never holds more than its max_bytes. Built by `make fuzz` with
 * pickle.c, buf.c and error.c only. Limits are small so a walk is cheap.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/pickle.h"

#define FUZZ_MAX_BYTES ((size_t)16 << 20)

typedef struct {
    uint64_t hash; /* of the elements seen, in order */
    uint64_t elements;
    int stream_all;
    int64_t next_tag;
} fuzz_ctx;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

/* Walks a value; tags its containers when `tag` (a shared part is walked
 * at each place: the decoder's max_nodes bounds that). */
static uint64_t walk(fuzz_ctx *c, const vr_pk_value *v, int tag, int depth)
{
    uint64_t h = mix((uint64_t)v->kind, v->len);
    switch (v->kind) {
    case VR_PK_BOOL:
    case VR_PK_INT:
    case VR_PK_TOO_LARGE:
    case VR_PK_REF:
        return mix(h, (uint64_t)v->i);
    case VR_PK_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &v->f, sizeof bits);
        return mix(h, bits);
    }
    case VR_PK_STR:
    case VR_PK_BYTES:
        for (size_t i = 0; i < v->len; i++)
            h = mix(h, (unsigned char)v->s[i]);
        return h;
    case VR_PK_LIST:
    case VR_PK_TUPLE:
    case VR_PK_DICT: {
        size_t n = v->kind == VR_PK_DICT ? 2 * v->len : v->len;
        for (size_t i = 0; i < n && depth < 300; i++)
            h = mix(h, walk(c, v->items[i], tag, depth + 1));
        if (v->kind == VR_PK_DICT) {
            int64_t x;
            h = mix(h, vr_pk_int(vr_pk_get(v, "size"), &x) ? (uint64_t)x : 1);
            h = mix(h, (uint64_t)vr_pk_str_eq(vr_pk_get(v, "action"), "alloc"));
        }
        if (tag)
            vr_pk_set_tag(v, c->next_tag++);
        return h;
    }
    case VR_PK_NONE:
    default:
        return h;
    }
}

static int want(void *ud, const vr_pk_path *path)
{
    fuzz_ctx *c = ud;
    for (size_t i = 0; i < path->depth; i++)
        if (!path->steps[i].key && path->steps[i].key_len)
            abort(); /* an index step has no key bytes */
    return c->stream_all || path->depth == 0 || path->depth % 2 == 1;
}

static int on_element(void *ud, const vr_pk_path *list, size_t index, const vr_pk_value *elem,
                      vr_error *err)
{
    fuzz_ctx *c = ud;
    (void)err;
    c->hash = mix(c->hash, mix(list->depth, index));
    c->hash = mix(c->hash, walk(c, elem, index % 2 == 0, 0));
    c->elements++;
    return 0;
}

static int on_done(void *ud, const vr_pk_value *root, vr_error *err)
{
    fuzz_ctx *c = ud;
    (void)err;
    c->hash = mix(c->hash, walk(c, root, 0, 0));
    return 0;
}

typedef struct {
    int rc;
    char msg[sizeof(((vr_error *)0)->msg)];
    uint64_t hash, elements;
} outcome;

/* 0 after STOP, 1 truncated, -1 refused (msg). chunk_seed 0: one piece. */
static outcome decode(const uint8_t *data, size_t size, uint64_t chunk_seed, int stream_all)
{
    fuzz_ctx c;
    memset(&c, 0, sizeof c);
    c.stream_all = stream_all;
    vr_pk_handlers h = {want, on_element, on_done, &c, NULL};
    /* two memo pages in memory: a file's BINPUTs over three send one to
     * the temporary file and back */
    vr_pk_limits lim = {.max_depth = 64,
                        .max_items = 1u << 16,
                        .max_memo = 1u << 16,
                        .max_bytes = FUZZ_MAX_BYTES,
                        .max_nodes = 1u << 16,
                        .max_memo_in_memory = 2 * 4096 * 4};
    vr_pickle *p = vr_pickle_new(&lim, &h);
    vr_error err = {{0}, VR_ERR_NONE};
    outcome o;
    memset(&o, 0, sizeof o);
    uint64_t s = chunk_seed;
    for (size_t at = 0; at < size && o.rc == 0;) {
        size_t n = size - at;
        if (chunk_seed) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            size_t k = (size_t)(s >> 33) % 64;
            n = k < n ? k + 1 : n;
        }
        uint8_t *copy = malloc(n);
        if (!copy)
            abort();
        memcpy(copy, data + at, n);
        o.rc = vr_pickle_feed(p, copy, n, &err);
        free(copy);
        at += n;
    }
    if (o.rc == 0)
        o.rc = vr_pickle_finish(p, &err);
    if (o.rc == 0 && vr_pickle_held(p) != 0)
        abort(); /* after STOP everything is freed and uncounted */
    if (vr_pickle_peak(p) > FUZZ_MAX_BYTES)
        abort();
    if (o.rc >= 0 && vr_pickle_offset(p) != size)
        abort(); /* every byte fed is counted */
    vr_pickle_free(p);
    if (o.rc < 0) {
        unsigned long long at;
        if (sscanf(err.msg, "byte %llu: ", &at) != 1 || at > size || strchr(err.msg, '\n'))
            abort(); /* one line that says where, inside the input */
        memcpy(o.msg, err.msg, sizeof o.msg);
    }
    o.hash = c.hash;
    o.elements = c.elements;
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 1099511628211ull;
    int stream_all = (int)(h >> 63);
    outcome a = decode(data, size, h | 1, stream_all);
    outcome b = decode(data, size, 0, stream_all);
    if (a.rc != b.rc || strcmp(a.msg, b.msg) != 0 || a.hash != b.hash || a.elements != b.elements)
        abort(); /* the outcome depends on where chunks split */
    return 0;
}
