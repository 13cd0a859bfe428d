/* Which part of the model held the memory at the peak (report.sql:
 * peak_by_module, one row per module path and category).
 *
 * The paths are made a tree: "A_0.B_1.Linear_2" (the profiler's
 * with_modules names) is in "A_0.B_1", in "A_0"; "a.py:3 › b.py:9" (a
 * snapshot stack's forward frames) is in "a.py:3". Each module's figures
 * are its own allocations' and its submodules'. A model is one module
 * holding everything, or a decoder of layers holding nearly all: naming
 * it says nothing. So the tree is shown from its roots down, and while
 * one module shown holds more than half of what the modules hold, most
 * of it in its submodules, its submodules are shown in its place (and
 * what it allocated outside them, as its own row). The rows stop at the
 * depth that tells the parts apart: the decoder's layers, not their
 * Linears, unless one layer holds most of the memory, and then what in
 * it does. The largest ten are kept, the rest summed.
 *
 * Memory: the tree, at most MAX_NODES modules and MAX_NAME_BYTES of their
 * paths; a row past either is counted in the deepest module of its path
 * already in the tree (or outside any module).
 */
#include "render/results/peak_by_module.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/category.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/idmap.h"
#include "util/sat.h"
#include "render/results/doc.h"
#include "render/results/peak_live.h"

static const char report_sql[] = "schemas/report.sql";

#define SHOWN 10
#define MAX_NODES ((size_t)1 << 16)
#define MAX_NAME_BYTES ((size_t)16 << 20)
#define NONE SIZE_MAX

/* How a path of each kind (report.sql's) is cut into modules. */
static const char *const separators[2] = {".", " \xe2\x80\xba "};
static const char *const kind_names[2] = {"with_modules", "forward_frames"};

typedef struct {
    int64_t bytes, count, cat[VR_CATEGORY_COUNT];
} figures;

typedef struct {
    size_t first_child, next_sibling;
    size_t name_at, name_len; /* its whole path, in tree.names */
    figures own, all;         /* its own allocations; with its submodules' */
} node;

typedef struct {
    node *nodes;
    size_t n, cap;
    vr_buf names;
    vr_idmap index;          /* (kind, path) -> node + 1 */
    size_t roots, last_root; /* the list of roots, in order made */
    figures outside;         /* in no module */
    int64_t kind_bytes[2];   /* bytes placed by each kind of path */
} tree;

/* A row shown: a module whole, or (own) what it allocated outside the
 * submodules shown in its place. */
typedef struct {
    size_t node;
    int own;
    int64_t bytes;    /* for the sort: */
    const char *name; /* its path, in tree.names */
    size_t name_len;
} shown;

static void add(figures *f, int category, int64_t bytes, int64_t count)
{
    f->bytes = vr_sat_add(f->bytes, bytes);
    f->count = vr_sat_add(f->count, count);
    f->cat[category] = vr_sat_add(f->cat[category], bytes);
}

/*-*** the tree ***/

static uint64_t path_key(int kind, const char *path, size_t len)
{
    return vr_hash_once(path, len, 0x6d0d + (uint64_t)kind);
}

/* The node of path[0, len) under `parent` (NONE: a root), made when new;
 * NONE when the tree is full or another path has its key. */
static size_t child_of(tree *t, size_t parent, int kind, const char *path, size_t len)
{
    uint64_t key = path_key(kind, path, len);
    int64_t at = vr_idmap_get(&t->index, key);
    if (at) {
        const node *n = &t->nodes[at - 1];
        return n->name_len == len && memcmp(t->names.data + n->name_at, path, len) == 0
                   ? (size_t)at - 1
                   : NONE;
    }
    if (t->n >= MAX_NODES || t->names.len + len > MAX_NAME_BYTES)
        return NONE;
    vr_xgrow(&t->nodes, &t->cap, t->n + 1, sizeof *t->nodes, 64);
    node *n = &t->nodes[t->n];
    memset(n, 0, sizeof *n);
    n->first_child = n->next_sibling = NONE;
    n->name_at = t->names.len;
    n->name_len = len;
    vr_buf_append(&t->names, path, len);
    if (parent != NONE) {
        n->next_sibling = t->nodes[parent].first_child;
        t->nodes[parent].first_child = t->n;
    } else {
        if (t->last_root != NONE)
            t->nodes[t->last_root].next_sibling = t->n;
        else
            t->roots = t->n;
        t->last_root = t->n;
    }
    vr_idmap_put(&t->index, key, (int64_t)t->n + 1);
    return t->n++;
}

/* A row: its bytes in each module of its path, and its own in the last. */
static void add_row(tree *t, int kind, const char *path, size_t len, int category, int64_t bytes,
                    int64_t count)
{
    const char *sep = separators[kind];
    size_t seplen = strlen(sep), end = 0, at = NONE;
    for (;;) {
        const char *next = len > end ? memmem(path + end, len - end, sep, seplen) : NULL;
        size_t stop = next ? (size_t)(next - path) : len;
        size_t child = child_of(t, at, kind, path, stop);
        if (child == NONE)
            break;
        at = child;
        add(&t->nodes[at].all, category, bytes, count);
        if (!next)
            break;
        end = stop + seplen;
    }
    if (at == NONE) {
        add(&t->outside, category, bytes, count);
        return;
    }
    add(&t->nodes[at].own, category, bytes, count);
    t->kind_bytes[kind] = vr_sat_add(t->kind_bytes[kind], bytes);
}

static int read_rows(vr_db *db, tree *t, long long device, long long peak, vr_error *err)
{
    if (vr_results_peak_live(db, device, peak, err) < 0)
        return -1;
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "peak_by_module", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", device, err) < 0 ||
        vr_db_bind_int(st, ":peak_event", peak, err) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(st, 0);
        size_t len = (size_t)sqlite3_column_bytes(st, 0);
        int kind = sqlite3_column_int(st, 1) == 1;
        int category = vr_category_index((const char *)sqlite3_column_text(st, 2));
        int64_t bytes = sqlite3_column_int64(st, 3), count = sqlite3_column_int64(st, 4);
        if (path && len)
            add_row(t, kind, path, len, category, bytes, count);
        else
            add(&t->outside, category, bytes, count);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "grouping the peak by module");
}

/*-*** the depth shown ***/

static const figures *figures_of(const tree *t, const shown *s)
{
    return s->own ? &t->nodes[s->node].own : &t->nodes[s->node].all;
}

/* The row to open: a whole module holding more than half of `total`,
 * most of it in its submodules; NONE when none does. */
static size_t to_open(const tree *t, const shown *rows, size_t n, int64_t total)
{
    for (size_t i = 0; i < n; i++) {
        const node *m = &t->nodes[rows[i].node];
        if (rows[i].own || m->first_child == NONE)
            continue;
        int64_t in_children = m->all.bytes - m->own.bytes;
        if (m->all.bytes > total - m->all.bytes && in_children > m->all.bytes - in_children)
            return i;
    }
    return NONE;
}

static void push(shown **rows, size_t *n, size_t *cap, shown s)
{
    vr_xgrow(rows, cap, *n + 1, sizeof **rows, 16);
    (*rows)[(*n)++] = s;
}

/* The rows, from the roots down while one holds most (file comment). */
static shown *choose_rows(const tree *t, size_t *n)
{
    shown *rows = NULL;
    size_t cap = 0;
    int64_t total = 0;
    *n = 0;
    for (size_t r = t->n ? t->roots : NONE; r != NONE; r = t->nodes[r].next_sibling) {
        push(&rows, n, &cap, (shown){.node = r});
        total = vr_sat_add(total, t->nodes[r].all.bytes);
    }
    size_t i;
    while ((i = to_open(t, rows, *n, total)) != NONE) {
        size_t open = rows[i].node;
        const node *m = &t->nodes[open];
        if (m->own.count || m->own.bytes)
            rows[i] = (shown){.node = open, .own = 1};
        else
            rows[i] = rows[--*n];
        for (size_t c = m->first_child; c != NONE; c = t->nodes[c].next_sibling)
            push(&rows, n, &cap, (shown){.node = c});
    }
    return rows;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Paths in reading order: a run of digits by its number, so that
 * Qwen2DecoderLayer_2 comes before Qwen2DecoderLayer_10 (and model.py:40
 * before model.py:253); a path before the longer ones it begins. */
static int natural_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    size_t i = 0, j = 0;
    while (i < an && j < bn) {
        if (is_digit(a[i]) && is_digit(b[j])) {
            size_t i0 = i, j0 = j;
            while (i0 < an && a[i0] == '0')
                i0++;
            while (j0 < bn && b[j0] == '0')
                j0++;
            size_t ie = i0, je = j0;
            while (ie < an && is_digit(a[ie]))
                ie++;
            while (je < bn && is_digit(b[je]))
                je++;
            if (ie - i0 != je - j0)
                return ie - i0 < je - j0 ? -1 : 1;
            int c = memcmp(a + i0, b + j0, ie - i0);
            if (c)
                return c;
            i = ie;
            j = je;
            continue;
        }
        if (a[i] != b[j])
            return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
        i++;
        j++;
    }
    if (i < an || j < bn)
        return i < an ? 1 : -1;
    /* the same numbers written with other zeros: as bytes */
    size_t len = an < bn ? an : bn;
    int c = memcmp(a, b, len);
    return c ? c : an == bn ? 0 : an < bn ? -1 : 1;
}

/* Largest first; equal ones by their path, a module before its own row. */
static int by_bytes(const void *pa, const void *pb)
{
    const shown *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    int c = natural_cmp(a->name, a->name_len, b->name, b->name_len);
    return c ? c : a->own - b->own;
}

/* The rows' sort keys, once the tree is whole (its names stay put). */
static void sort_rows(const tree *t, shown *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const node *m = &t->nodes[rows[i].node];
        rows[i].bytes = figures_of(t, &rows[i])->bytes;
        rows[i].name = t->names.data + m->name_at;
        rows[i].name_len = m->name_len;
    }
    if (n > 1) /* qsort() wants an array, even of none: rows may be NULL */
        qsort(rows, n, sizeof *rows, by_bytes);
}

/*-*** the document ***/

static cJSON *int_value(long long v)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", v);
    return cJSON_CreateRaw(num);
}

/* {CATEGORY: bytes} of the categories holding any, in their order. */
static cJSON *categories_value(const figures *f)
{
    cJSON *o = cJSON_CreateObject();
    for (int c = 0; c < VR_CATEGORY_COUNT; c++)
        if (f->cat[c])
            cJSON_AddItemToObject(o, vr_category_names[c], int_value(f->cat[c]));
    return o;
}

static cJSON *row_value(const tree *t, const shown *s)
{
    const node *m = &t->nodes[s->node];
    const figures *f = figures_of(t, s);
    vr_buf b = VR_BUF_INIT;
    vr_results_text(&b, t->names.data + m->name_at, m->name_len);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "module", b.data ? b.data : "");
    cJSON_AddBoolToObject(o, "own", s->own);
    cJSON_AddItemToObject(o, "bytes", int_value(f->bytes));
    cJSON_AddItemToObject(o, "count", int_value(f->count));
    cJSON_AddItemToObject(o, "categories", categories_value(f));
    vr_buf_free(&b);
    return o;
}

static cJSON *figures_value(const figures *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "bytes", int_value(f->bytes));
    cJSON_AddItemToObject(o, "count", int_value(f->count));
    cJSON_AddItemToObject(o, "categories", categories_value(f));
    return o;
}

static void add_document(cJSON *dev, const tree *t, shown *rows, size_t n)
{
    sort_rows(t, rows, n);
    cJSON *list = cJSON_CreateArray();
    long long groups = 0, bytes = 0, count = 0, placed = 0, peak = 0;
    for (size_t i = 0; i < n; i++) {
        const figures *f = figures_of(t, &rows[i]);
        placed = vr_sat_add(placed, f->bytes);
        if (i < SHOWN) {
            cJSON_AddItemToArray(list, row_value(t, &rows[i]));
            continue;
        }
        groups++;
        bytes = vr_sat_add(bytes, f->bytes);
        count = vr_sat_add(count, f->count);
    }
    cJSON_AddItemToObject(dev, "peak_by_module", list);
    cJSON *more = groups ? cJSON_CreateObject() : cJSON_CreateNull();
    if (groups) {
        cJSON_AddItemToObject(more, "groups", int_value(groups));
        cJSON_AddItemToObject(more, "bytes", int_value(bytes));
        cJSON_AddItemToObject(more, "count", int_value(count));
    }
    cJSON_AddItemToObject(dev, "peak_by_module_more", more);
    cJSON_AddItemToObject(dev, "peak_by_module_outside", figures_value(&t->outside));
    /* The peak's bytes no allocation or block accounts for: live before
     * the record began, known only as a total. */
    vr_results_int(cJSON_GetObjectItemCaseSensitive(dev, "peak_allocated_bytes"), &peak);
    long long recorded = vr_sat_add(placed, t->outside.bytes);
    cJSON_AddItemToObject(dev, "peak_by_module_unrecorded_bytes",
                          int_value(peak > recorded ? peak - recorded : 0));
    int kind = t->kind_bytes[1] > t->kind_bytes[0];
    if (n)
        cJSON_AddStringToObject(dev, "peak_by_module_named_by", kind_names[kind]);
    else
        cJSON_AddNullToObject(dev, "peak_by_module_named_by");
}

static void add_none(cJSON *dev)
{
    cJSON_AddItemToObject(dev, "peak_by_module", cJSON_CreateArray());
    cJSON_AddNullToObject(dev, "peak_by_module_more");
    cJSON_AddNullToObject(dev, "peak_by_module_outside");
    cJSON_AddNullToObject(dev, "peak_by_module_unrecorded_bytes");
    cJSON_AddNullToObject(dev, "peak_by_module_named_by");
}

int vr_peak_by_module_add(vr_db *db, cJSON *dev, long long device, long long peak_event,
                          vr_error *err)
{
    if (peak_event < 0) {
        add_none(dev);
        return 0;
    }
    tree t;
    memset(&t, 0, sizeof t);
    t.roots = t.last_root = NONE;
    vr_idmap_init(&t.index, MAX_NODES);
    int rc = read_rows(db, &t, device, peak_event, err);
    if (rc == 0) {
        size_t n;
        shown *rows = choose_rows(&t, &n);
        add_document(dev, &t, rows, n);
        free(rows);
    }
    free(t.nodes);
    vr_buf_free(&t.names);
    vr_idmap_free(&t.index);
    return rc;
}
