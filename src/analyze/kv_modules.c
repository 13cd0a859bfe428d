/* The trace_kv_cache pass: a generate() loop's key/value cache in a
 * profiler trace recorded with_modules.
 *
 * A trace's categories come from phase and lifetime (schemas/
 * categories.rules): in a forward with no backward after it (inference),
 * whatever is allocated and freed in the forward is `temporary`
 * (temporary-in-phase), and what is kept is `activation` (forward-kept).
 * The keys and values an attention layer hands to Hugging Face's
 * DynamicCache are neither: made inside the layer (RoPE's add for the
 * keys, v_proj's addmm for the values) and stored, they outlive the layer
 * and every layer after it, and are freed when the loop drops its
 * past_key_values. The rules cannot see this: they are decided as the
 * timeline pass writes each row, before the locate pass has placed it in
 * a module.
 *
 * So, after locate and categorize: an allocation of a module path with an
 * attention module in it (a segment whose name holds "attention" or
 * "attn", not the outermost), made in the forward and freed in it or
 * never, decided by temporary-in-phase or forward-kept, is `kv_cache`
 * (rule trace-kv-cache) when it outlives its layer - the path above the
 * attention module - by at least the layer's own length again. The
 * layer's extent is when its allocations (those of its path and below)
 * were made. Scores, softmax and o_proj's output die inside the layer;
 * the hidden state a layer passes on is its own allocation, not its
 * attention's. The last layer's keys and values have no layer after them:
 * they are the cache when they outlive the whole model (the path's
 * outermost module). In training, the keys and values saved for backward are
 * freed there (rule activation), so they are not touched. Rules given
 * with --category-rules decide alone unless they name their rules as the
 * built-in ones do.
 *
 * Owns, with the timeline and categorize passes (categorize.h), the
 * category and category_rule of the rows it changes. Memory: each
 * source's module paths and their extents, and the ids of the rows it
 * changes (8 bytes a cache tensor). */
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "analyze/analyze.h"

static const char sql[] = "schemas/analyze.sql";

typedef struct {
    char *path;
    int64_t first, last; /* when its first and last allocation were made */
} module_extent;

/* The last path asked about and its extent (over it and below it). */
typedef struct {
    char *path;
    int64_t first, last;
    int known;
} extent_memo;

typedef struct {
    vr_db *db;
    vr_error *err;
    int64_t source; /* the source the extents are of, -1 before the first */
    module_extent *mods;
    size_t nmods, cap;
    extent_memo layer, root;
} kv_sweep;

static void clear_extents(kv_sweep *s)
{
    for (size_t i = 0; i < s->nmods; i++)
        free(s->mods[i].path);
    s->nmods = 0;
    free(s->layer.path);
    free(s->root.path);
    s->layer.path = s->root.path = NULL;
}

static int load_extents(kv_sweep *s, int64_t source)
{
    clear_extents(s);
    s->source = source;
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "kv_module_extents", s->err);
    if (!st || vr_db_bind_int(st, ":source", source, s->err) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_xgrow(&s->mods, &s->cap, s->nmods + 1, sizeof *s->mods, 64);
        module_extent *m = &s->mods[s->nmods++];
        m->path = vr_xstrdup((const char *)sqlite3_column_text(st, 0));
        m->first = sqlite3_column_int64(st, 1);
        m->last = sqlite3_column_int64(st, 2);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(s->db, s->err, "reading the modules' extents");
}

/* Whether one segment of a module path names an attention module
 * ("Qwen2Attention_5", "LlamaSdpaAttention_0", "self_attn", "MultiheadAttention_2"). */
static int is_attention(const char *seg, size_t n)
{
    char low[128];
    if (n >= sizeof low)
        n = sizeof low - 1;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)((seg[i] >= 'A' && seg[i] <= 'Z') ? seg[i] - 'A' + 'a' : seg[i]);
    low[n] = '\0';
    return strstr(low, "attention") != NULL || strstr(low, "attn") != NULL;
}

/* The length of the path above its first attention segment (the layer),
 * 0 when it has none or it is the outermost. */
static size_t layer_length(const char *path)
{
    const char *seg = path;
    for (;;) {
        const char *dot = strchr(seg, '.');
        size_t n = dot ? (size_t)(dot - seg) : strlen(seg);
        if (is_attention(seg, n))
            return seg == path ? 0 : (size_t)(seg - path - 1);
        if (!dot)
            return 0;
        seg = dot + 1;
    }
}

/* The extent of the first n bytes of `path` as a module: over its own
 * path and every path below it; 0 when no allocation was made there. */
static int extent_of(const kv_sweep *s, extent_memo *m, const char *path, size_t n)
{
    if (m->path && strlen(m->path) == n && memcmp(m->path, path, n) == 0)
        return m->known;
    free(m->path);
    m->path = vr_xstrndup(path, n);
    m->known = 0;
    /* The paths come sorted (byte order, as strncmp compares), so those
     * that begin with the prefix are one run: found by bisection. */
    size_t lo = 0, hi = s->nmods;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strncmp(s->mods[mid].path, path, n) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < s->nmods && strncmp(s->mods[i].path, path, n) == 0; i++) {
        const module_extent *e = &s->mods[i];
        if (e->path[n] != '\0' && e->path[n] != '.')
            continue;
        if (!m->known || e->first < m->first)
            m->first = e->first;
        if (!m->known || e->last > m->last)
            m->last = e->last;
        m->known = 1;
    }
    return m->known;
}

/* Whether an attention allocation freed at free_ts (never: !freed) is the
 * cache: it outlives its layer by the layer's length again, or outlives
 * the whole model (the path's outermost module: the last layer's keys
 * and values, freed when the loop ends). */
static int outlives_layer(kv_sweep *s, const char *path, size_t n, int freed, int64_t free_ts)
{
    extent_memo *l = &s->layer;
    if (!extent_of(s, l, path, n) || l->last <= l->first)
        return 0;
    if (!freed || free_ts - l->last >= l->last - l->first)
        return 1;
    const char *dot = strchr(path, '.');
    extent_memo *r = &s->root;
    return dot && free_ts > l->last && extent_of(s, r, path, (size_t)(dot - path)) &&
           free_ts > r->last;
}

static int mark_kv(kv_sweep *s, int64_t id)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "set_trace_kv_cache", s->err);
    if (!st || vr_db_bind_int(st, ":allocation", id, s->err) < 0)
        return -1;
    return vr_db_step_done(s->db, st, s->err);
}

int vr_analyze_trace_kv_cache(vr_db *db, vr_error *err)
{
    kv_sweep s = {db, err, -1, NULL, 0, 0, {NULL, 0, 0, 0}, {NULL, 0, 0, 0}};
    /* The rows to change are gathered first and written after the read
     * (ids only: 8 bytes a cache tensor), not while it runs. */
    sqlite3_stmt *st = vr_db_stmt(db, sql, "kv_candidates", err);
    if (!st)
        return -1;
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    int rc = SQLITE_DONE, out = 0;
    while (out == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(st, 2);
        size_t len = path ? layer_length(path) : 0;
        int64_t source = sqlite3_column_int64(st, 1);
        if (!len || (source != s.source && load_extents(&s, source) < 0)) {
            out = len ? -1 : 0;
            continue;
        }
        if (outlives_layer(&s, path, len, sqlite3_column_type(st, 3) != SQLITE_NULL,
                           sqlite3_column_int64(st, 3))) {
            vr_xgrow(&ids, &cap, n + 1, sizeof *ids, 64);
            ids[n++] = sqlite3_column_int64(st, 0);
        }
    }
    sqlite3_reset(st);
    if (out == 0 && rc != SQLITE_DONE)
        out = vr_db_fail(db, err, "reading the attention allocations");
    for (size_t i = 0; out == 0 && i < n; i++)
        out = mark_kv(&s, ids[i]);
    free(ids);
    clear_extents(&s);
    free(s.mods);
    return out;
}
