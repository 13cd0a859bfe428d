/* The allocation sites live at the peak, before and after (diff.h): each
 * side's full list ("diff_sites", read from its database by
 * diff_live.c), joined by name, classified and ranked by |delta|; the
 * first VR_DIFF_SITES_KEPT are listed and the rest summed into
 * "sites_more", so that sites and sites_more add up to each side's bytes
 * live at the peak that have a site. */
#include <stdlib.h>
#include <string.h>

#include "render/diff/diff.h"
#include "render/view/paths.h"
#include "util/buf.h"
#include "util/alloc.h"
#include "util/sat.h"

typedef struct {
    const char *name; /* the documents' (valid while they are) */
    long long before, after;
    int in_before, in_after;
} site;

typedef struct {
    site *v;
    int n, cap;
} sites;

static void add(sites *s, const char *name, long long bytes, int after)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = vr_xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    s->v[s->n++] = after ? (site){name, 0, bytes, 0, 1} : (site){name, bytes, 0, 1, 0};
}

static int by_name(const void *x, const void *y)
{
    return strcmp(((const site *)x)->name, ((const site *)y)->name);
}

/* One site per name: both sides' rows of a name summed. */
static void join_names(sites *s)
{
    if (s->n > 1)
        qsort(s->v, (size_t)s->n, sizeof *s->v, by_name);
    int out = 0;
    for (int i = 0; i < s->n; i++) {
        site *last = out > 0 ? &s->v[out - 1] : NULL, *x = &s->v[i];
        if (last && strcmp(last->name, x->name) == 0) {
            last->before = vr_sat_add(last->before, x->before);
            last->after = vr_sat_add(last->after, x->after);
            last->in_before |= x->in_before;
            last->in_after |= x->in_after;
        } else {
            s->v[out++] = *x;
        }
    }
    s->n = out;
}

/* The folder a side's frames share, as its own report names them from
 * (view/paths.h), into `root`: its length, 0 for none. Two runs of one
 * job from two checkouts ("/home/a/proj/", "/scratch/job-17/proj/") name
 * one line of code alike once each side's own folder is taken off. */
static size_t side_root(const cJSON *dev, vr_buf *root)
{
    char *at = vr_paths_device_root(dev);
    size_t len = at ? strlen(at) : 0;
    if (len)
        vr_buf_append(root, at, len);
    free(at);
    return len;
}

/* A device's full list of sites, frames named from their side's folder
 * (its text added to `root`); returns how they are named ("frame",
 * "module", "operator"), NULL for none. */
static const char *collect(sites *s, const cJSON *dev, int after, vr_buf *root)
{
    const cJSON *ds = cJSON_GetObjectItemCaseSensitive(dev, "diff_sites"), *x;
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(ds, "by");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(ds, "sites");
    long long b;
    if (!cJSON_IsString(by) || cJSON_GetArraySize(list) == 0)
        return NULL;
    size_t cut = strcmp(by->valuestring, "frame") == 0 ? side_root(dev, root) : 0;
    cJSON_ArrayForEach(x, list)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(x, "site");
        if (!cJSON_IsString(name) || !vr_results_member_int(x, "bytes", &b))
            continue;
        const char *n = name->valuestring;
        add(s, cut && strncmp(n, root->data, cut) == 0 ? n + cut : n, b, after);
    }
    return by->valuestring;
}

static cJSON *root_item(const vr_buf *root)
{
    return root->len ? cJSON_CreateString(root->data) : cJSON_CreateNull();
}

static long long mag(long long v)
{
    return v < 0 ? -v : v;
}

static int by_delta(const void *x, const void *y)
{
    const site *a = x, *b = y;
    long long da = mag(vr_sat_sub(a->after, a->before)), db = mag(vr_sat_sub(b->after, b->before));
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

static cJSON *site_row(const site *x)
{
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "site", x->name);
    cJSON_AddItemToObject(row, "before_bytes", vr_diff_int(x->before));
    cJSON_AddItemToObject(row, "after_bytes", vr_diff_int(x->after));
    cJSON_AddItemToObject(row, "delta_bytes", vr_diff_int(vr_sat_sub(x->after, x->before)));
    cJSON_AddStringToObject(row, "change", change_of(x));
    return row;
}

/* {count, before_bytes, after_bytes, delta_bytes} of the sites past the
 * first `from`. */
static cJSON *more_of(const sites *s, int from)
{
    long long b = 0, a = 0;
    for (int i = from; i < s->n; i++) {
        b = vr_sat_add(b, s->v[i].before);
        a = vr_sat_add(a, s->v[i].after);
    }
    cJSON *more = cJSON_CreateObject();
    cJSON_AddItemToObject(more, "count", vr_diff_int(s->n > from ? s->n - from : 0));
    cJSON_AddItemToObject(more, "before_bytes", vr_diff_int(b));
    cJSON_AddItemToObject(more, "after_bytes", vr_diff_int(a));
    cJSON_AddItemToObject(more, "delta_bytes", vr_diff_int(vr_sat_sub(a, b)));
    return more;
}

void vr_diff_sites(cJSON *pair, const cJSON *before_dev, const cJSON *after_dev)
{
    sites s = {NULL, 0, 0};
    vr_buf broot = VR_BUF_INIT, aroot = VR_BUF_INIT;
    const char *bb = collect(&s, before_dev, 0, &broot), *ab = collect(&s, after_dev, 1, &aroot);
    const char *by = bb ? bb : ab;
    cJSON_AddItemToObject(pair, "sites_by", by ? cJSON_CreateString(by) : cJSON_CreateNull());
    cJSON *roots = cJSON_AddObjectToObject(pair, "site_folders");
    cJSON_AddItemToObject(roots, "before", root_item(&broot));
    cJSON_AddItemToObject(roots, "after", root_item(&aroot));
    join_names(&s);
    if (s.n > 1)
        qsort(s.v, (size_t)s.n, sizeof *s.v, by_delta);
    cJSON *out = cJSON_AddArrayToObject(pair, "sites");
    for (int i = 0; i < s.n && i < VR_DIFF_SITES_KEPT; i++)
        cJSON_AddItemToArray(out, site_row(&s.v[i]));
    cJSON_AddItemToObject(pair, "sites_more", more_of(&s, VR_DIFF_SITES_KEPT));
    free(s.v);
    vr_buf_free(&broot);
    vr_buf_free(&aroot);
}
