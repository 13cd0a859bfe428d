/* Reader for the JSON form of a CUDA caching-allocator snapshot: the dict
 * torch.cuda.memory._snapshot() returns, saved with json.dump (memory_viz
 * and users do), or a bare list of segments. It is a front end only:
 * everything a snapshot means is snapshot.c's (snapshot.h), which this
 * file feeds the same vr_pk_value trees the pickle decoder makes.
 *
 * Streaming: json_scan delivers each element of `segments` (or of a bare
 * list), and each element of each device's list in `device_traces` (its
 * nested stream), one at a time; each element's JSON text is turned into
 * a tree in an arena that is emptied after the element, so memory stays
 * flat whatever the file's size. The other members of the root are small
 * (settings, annotations) and converted whole; unknown ones are only
 * counted. Integers are read exactly from their text (vr_json_int64),
 * never through a double; numbers with a fraction or an exponent are
 * floats, as Python wrote them.
 *
 * Ownership: the import owns the scanner, the model and the converter; a
 * tree lives in the converter's arena until its element has been handed
 * to the model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/pickle.h"
#include "import/reader.h"
#include "import/readers/snapshot/snapshot.h"

/*-*** sniffing ***/

static int has(const char *head, size_t len, const char *marker)
{
    return memmem(head, len, marker, strlen(marker)) != NULL;
}

/* The first byte that is not whitespace (or a UTF-8 byte order mark). */
static size_t skip_space(const char *head, size_t len)
{
    size_t i = len >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < len && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
        i++;
    return i;
}

/* The dict (json.dump keeps its order: segments first; sort_keys puts
 * device_traces first), or a bare list of segments. */
static vr_sniff_level sniff(const char *head, size_t len)
{
    size_t i = skip_space(head, len);
    if (i >= len)
        return VR_SNIFF_NO;
    if (head[i] == '[')
        return has(head, len, "\"total_size\"") && has(head, len, "\"blocks\"")
                   ? VR_SNIFF_SIGNATURE
                   : VR_SNIFF_NO;
    if (head[i] != '{')
        return VR_SNIFF_NO;
    int segments = has(head, len, "\"segments\""), traces = has(head, len, "\"device_traces\"");
    return (segments && (traces || has(head, len, "\"total_size\""))) ||
                   (traces && has(head, len, "\"action\""))
               ? VR_SNIFF_SIGNATURE
               : VR_SNIFF_NO;
}

/*-*** an arena, emptied after each element ***/

#define BLOCK_BYTES (64u * 1024)

typedef struct block {
    struct block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} block;

typedef struct {
    block *head;
} arena;

static void *arena_alloc(arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > BLOCK_BYTES ? n : BLOCK_BYTES;
        block *b = vr_xmalloc(sizeof *b + cap);
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    memset(p, 0, n);
    return p;
}

/* Keeps one block of the usual size for the next element. */
static void arena_reset(arena *a)
{
    block *keep = NULL;
    while (a->head) {
        block *b = a->head;
        a->head = b->next;
        if (!keep && b->cap == BLOCK_BYTES) {
            keep = b;
            keep->used = 0;
            keep->next = NULL;
        } else {
            free(b);
        }
    }
    a->head = keep;
}

/*-*** JSON text to a vr_pk_value tree ***/

/* Deeper containers are skipped (a snapshot's are 4 deep). */
#define MAX_DEPTH 64

typedef struct {
    arena mem;
    vr_buf items; /* stack of the open containers' items (pointers) */
    vr_buf text;  /* an unescaped string */
    vr_json_faults *faults;
    size_t container_bytes; /* vr_pk_container_size(): containers may be tagged */
} converter;

static vr_pk_value *scalar(converter *c, vr_pk_kind kind)
{
    vr_pk_value *v = arena_alloc(&c->mem, sizeof *v);
    v->kind = kind;
    return v;
}

static vr_pk_value *string_value(converter *c, const vr_json_str *str)
{
    vr_pk_value *v = scalar(c, VR_PK_STR);
    const char *s = str->s;
    size_t n = str->len;
    if (str->has_escapes) {
        vr_buf_clear(&c->text);
        vr_json_unescape(str, &c->text, c->faults);
        s = c->text.data ? c->text.data : "";
        n = c->text.len;
    }
    char *copy = arena_alloc(&c->mem, n + 1);
    memcpy(copy, s, n);
    v->s = copy;
    v->len = n;
    return v;
}

/* Plain digits: an exact integer; a fraction or an exponent: a float
 * (Python's json.dump writes floats so); anything else: None. */
static vr_pk_value *number_value(converter *c, vr_json *j)
{
    vr_json_str raw;
    if (!vr_json_raw(j, &raw) || raw.len == 0)
        return NULL;
    vr_json num;
    vr_json_init(&num, raw.s, raw.len, c->faults);
    vr_pk_value *v = scalar(c, VR_PK_NONE);
    if (!memchr(raw.s, '.', raw.len) && !memchr(raw.s, 'e', raw.len) &&
        !memchr(raw.s, 'E', raw.len)) {
        if (vr_json_int64(&num, &v->i))
            v->kind = VR_PK_INT;
        return v;
    }
    char text[64];
    if (raw.len < sizeof text) {
        memcpy(text, raw.s, raw.len);
        text[raw.len] = '\0';
        char *end;
        v->f = strtod(text, &end);
        if (*end == '\0')
            v->kind = VR_PK_FLOAT;
    }
    return v;
}

static void push(converter *c, const vr_pk_value *v)
{
    vr_buf_append(&c->items, &v, sizeof v);
}

/* The container of the items pushed since `base`, which it pops. */
static vr_pk_value *container(converter *c, vr_pk_kind kind, size_t base)
{
    vr_pk_value *v = arena_alloc(&c->mem, c->container_bytes);
    size_t bytes = c->items.len - base, n = bytes / sizeof(vr_pk_value *);
    v->kind = kind;
    v->len = kind == VR_PK_DICT ? n / 2 : n;
    v->items = arena_alloc(&c->mem, bytes ? bytes : 1);
    memcpy(v->items, c->items.data + base, bytes);
    c->items.len = base;
    return v;
}

static vr_pk_value *convert(converter *c, vr_json *j, int depth);

static vr_pk_value *convert_object(converter *c, vr_json *j, int depth)
{
    size_t base = c->items.len;
    vr_json_str key;
    vr_json_enter_object(j);
    while (vr_json_next_member(j, &key)) {
        push(c, string_value(c, &key));
        vr_pk_value *v = convert(c, j, depth + 1);
        if (!v) {
            j->failed = 1; /* a member or element that is not JSON: the whole value is not */
            break;
        }
        push(c, v);
    }
    if (j->failed) {
        c->items.len = base;
        return NULL;
    }
    return container(c, VR_PK_DICT, base);
}

static vr_pk_value *convert_array(converter *c, vr_json *j, int depth)
{
    size_t base = c->items.len;
    vr_json_enter_array(j);
    while (vr_json_next_element(j)) {
        vr_pk_value *v = convert(c, j, depth + 1);
        if (!v) {
            j->failed = 1; /* a member or element that is not JSON: the whole value is not */
            break;
        }
        push(c, v);
    }
    if (j->failed) {
        c->items.len = base;
        return NULL;
    }
    return container(c, VR_PK_LIST, base);
}

/* The next value as a tree; NULL when the text is not JSON. */
static vr_pk_value *convert(converter *c, vr_json *j, int depth)
{
    vr_json_kind kind = vr_json_peek(j);
    vr_json_str str;
    int b;
    if ((kind == VR_JSON_OBJECT || kind == VR_JSON_ARRAY) && depth >= MAX_DEPTH) {
        vr_json_skip(j);
        return j->failed ? NULL : scalar(c, VR_PK_NONE);
    }
    switch (kind) {
    case VR_JSON_OBJECT:
        return convert_object(c, j, depth);
    case VR_JSON_ARRAY:
        return convert_array(c, j, depth);
    case VR_JSON_STRING:
        return vr_json_string(j, &str) ? string_value(c, &str) : NULL;
    case VR_JSON_NUMBER:
        return number_value(c, j);
    case VR_JSON_TRUE:
    case VR_JSON_FALSE: {
        if (!vr_json_bool(j, &b))
            return NULL;
        vr_pk_value *v = scalar(c, VR_PK_BOOL);
        v->i = b != 0;
        return v;
    }
    case VR_JSON_NULL:
        vr_json_skip(j);
        return j->failed ? NULL : scalar(c, VR_PK_NONE);
    default:
        return NULL;
    }
}

/* One value's text as a tree; text that is not JSON is None (the model
 * counts it as malformed). Valid until the arena is reset. */
static const vr_pk_value *tree_of(converter *c, const char *val, size_t len)
{
    vr_json j;
    vr_json_init(&j, val, len, c->faults);
    const vr_pk_value *v = convert(c, &j, 0);
    return v && !j.failed ? v : scalar(c, VR_PK_NONE);
}

/*-*** the scanner's callbacks ***/

typedef struct {
    vr_import_ctx *ctx;
    vr_snapshot *model;
    converter conv;
} front;

static int after(front *f, int rc)
{
    arena_reset(&f->conv.mem);
    return rc < 0 ? -1 : 0;
}

/* Each segment: of `segments`, or of a bare list of them. */
static int on_segment(void *ud, const char *val, size_t len, uint64_t offset)
{
    front *f = ud;
    vr_snapshot_at(f->model, offset);
    return after(f, vr_snapshot_segment(f->model, tree_of(&f->conv, val, len)));
}

/* device_traces[outer][i]; an entry directly in device_traces (an old
 * flat list) is device 0's. */
static int on_entry(void *ud, size_t outer, int inner, const char *val, size_t len,
                    uint64_t offset)
{
    front *f = ud;
    vr_snapshot_at(f->model, offset);
    int64_t device = inner ? (int64_t)outer : 0;
    return after(f, vr_snapshot_entry(f->model, device, tree_of(&f->conv, val, len)));
}

/* Members the model reads whole; the others it only counts. */
static int wanted(const char *key, size_t len)
{
    static const char *const read_whole[] = {"allocator_settings", "external_annotations",
                                             "device_traces"};
    for (size_t i = 0; i < sizeof read_whole / sizeof *read_whole; i++)
        if (len == strlen(read_whole[i]) && memcmp(key, read_whole[i], len) == 0)
            return 1;
    return 0;
}

/* The objects in a JSON list, or in its lists (host_traces may be one list
 * per device), skipped one by one: counted without building them. */
static uint64_t count_records(const char *val, size_t len)
{
    vr_json_faults t = {0};
    vr_json j;
    vr_json_init(&j, val, len, &t);
    uint64_t n = 0;
    if (!vr_json_enter_array(&j))
        return 0;
    while (vr_json_next_element(&j)) {
        if (vr_json_peek(&j) == VR_JSON_ARRAY && vr_json_enter_array(&j)) {
            for (; vr_json_next_element(&j); vr_json_skip(&j))
                n += vr_json_peek(&j) == VR_JSON_OBJECT;
            continue;
        }
        n += vr_json_peek(&j) == VR_JSON_OBJECT;
        vr_json_skip(&j);
    }
    return n;
}

static int on_member(void *ud, const char *key, size_t keylen, const char *val, size_t len,
                     uint64_t offset)
{
    front *f = ud;
    vr_snapshot_at(f->model, offset);
    static const char *const host_lists[] = {"host_segments", "host_traces"};
    for (int i = 0; i < 2; i++)
        if (keylen == strlen(host_lists[i]) && memcmp(key, host_lists[i], keylen) == 0)
            vr_snapshot_host(f->model, i, count_records(val, len));
    const vr_pk_value *v =
        wanted(key, keylen) ? tree_of(&f->conv, val, len) : scalar(&f->conv, VR_PK_NONE);
    return after(f, vr_snapshot_member(f->model, key, keylen, v));
}

/*-*** driver ***/

static int import(vr_import_ctx *ctx, vr_error *err)
{
    front f;
    memset(&f, 0, sizeof f);
    f.ctx = ctx;
    f.conv.faults = &ctx->json_faults;
    f.conv.container_bytes = vr_pk_container_size();
    f.model = vr_snapshot_begin(ctx, err);
    if (!f.model)
        return -1;
    vr_json_scan scan;
    vr_json_scan_init(&scan, "segments", on_member, on_segment, &f);
    vr_json_scan_nest(&scan, "device_traces", on_entry);
    int rc = vr_reader_scan_json(ctx, &scan, err) < 0 || vr_snapshot_end(f.model) < 0 ? -1 : 0;
    vr_json_scan_free(&scan);
    vr_snapshot_free(f.model);
    arena_reset(&f.conv.mem);
    free(f.conv.mem.head);
    vr_buf_free(&f.conv.items);
    vr_buf_free(&f.conv.text);
    return rc;
}

const vr_reader vr_reader_snapshot_json = {
    "snapshot_json", "a CUDA caching-allocator snapshot (JSON)", sniff, import, NULL};
