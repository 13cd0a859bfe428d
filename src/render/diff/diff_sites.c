/* The allocation sites live at the peak, before and after (diff.h): a
 * snapshot's by the first frame outside torch (top_sites[].frame), a
 * trace's by module (live_at_peak_groups' modules, summed over the
 * categories) or, without modules, by operator; each site's bytes on
 * both sides, classified and ranked by |delta|. */
#include <stdlib.h>
#include <string.h>

#include "render/diff/diff.h"
#include "util/alloc.h"

typedef struct {
    const char *name; /* the documents' (valid while they are) */
    long long before, after;
    int in_before, in_after;
} site;

typedef struct {
    site *v;
    int n, cap;
} sites;

static site *site_named(sites *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, name) == 0)
            return &s->v[i];
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 32;
        s->v = vr_xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    s->v[s->n] = (site){name, 0, 0, 0, 0};
    return &s->v[s->n++];
}

static void add(sites *s, const char *name, long long bytes, int after)
{
    site *x = site_named(s, name);
    if (after) {
        x->after += bytes;
        x->in_after = 1;
    } else {
        x->before += bytes;
        x->in_before = 1;
    }
}

static const char *name_or(const cJSON *obj, const char *key, const char *none)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(s) ? s->valuestring : none;
}

/* What a device's document says was live at the peak, by site; returns
 * how they are named ("frame", "module", "operator"), NULL for none. */
static const char *collect(sites *s, const cJSON *dev, int after)
{
    const cJSON *top = cJSON_GetObjectItemCaseSensitive(dev, "top_sites"), *x, *g;
    long long b;
    if (cJSON_GetArraySize(top) > 0) {
        cJSON_ArrayForEach(x, top) if (vr_diff_get_int(x, "bytes", &b))
            add(s, name_or(x, "frame", "(torch's own frames)"), b, after);
        return "frame";
    }
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(dev, "live_at_peak_groups");
    if (cJSON_GetArraySize(groups) == 0)
        return NULL;
    int by_op = strcmp(name_or(dev, "live_at_peak_by", ""), "operator") == 0;
    cJSON_ArrayForEach(g, groups)
    {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(g, by_op ? "operators" : "modules");
        cJSON_ArrayForEach(x, list) if (vr_diff_get_int(x, "bytes", &b))
            add(s,
                by_op ? name_or(x, "operator", "(no operator)")
                      : name_or(x, "module", "(outside any module)"),
                b, after);
    }
    return by_op ? "operator" : "module";
}

static long long mag(long long v)
{
    return v < 0 ? -v : v;
}

static int by_delta(const void *x, const void *y)
{
    const site *a = x, *b = y;
    long long da = mag(a->after - a->before), db = mag(b->after - b->before);
    if (da != db)
        return da > db ? -1 : 1;
    long long ma = a->after > a->before ? a->after : a->before;
    long long mb = b->after > b->before ? b->after : b->before;
    if (ma != mb)
        return ma > mb ? -1 : 1;
    return strcmp(a->name, b->name);
}

static const char *change_of(const site *x)
{
    if (!x->in_before || (x->before == 0 && x->after > 0))
        return "appeared";
    if (!x->in_after || (x->after == 0 && x->before > 0))
        return "vanished";
    return x->after > x->before ? "grew" : x->after < x->before ? "shrank" : "same";
}

void vr_diff_sites(cJSON *pair, const cJSON *before_dev, const cJSON *after_dev)
{
    sites s = {NULL, 0, 0};
    const char *bb = collect(&s, before_dev, 0), *ab = collect(&s, after_dev, 1);
    const char *by = bb ? bb : ab;
    cJSON_AddItemToObject(pair, "sites_by", by ? cJSON_CreateString(by) : cJSON_CreateNull());
    cJSON *out = cJSON_AddArrayToObject(pair, "sites");
    if (s.n > 1)
        qsort(s.v, (size_t)s.n, sizeof *s.v, by_delta);
    for (int i = 0; i < s.n; i++) {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "site", s.v[i].name);
        cJSON_AddItemToObject(row, "before_bytes", vr_diff_int(s.v[i].before));
        cJSON_AddItemToObject(row, "after_bytes", vr_diff_int(s.v[i].after));
        cJSON_AddItemToObject(row, "delta_bytes", vr_diff_int(s.v[i].after - s.v[i].before));
        cJSON_AddStringToObject(row, "change", change_of(&s.v[i]));
        cJSON_AddItemToArray(out, row);
    }
    free(s.v);
}
