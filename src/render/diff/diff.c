/* Two results documents compared (diff.h): the devices paired by rank
 * and index, each pair's peaks, breakdown, headroom, steps, out-of-memory
 * errors and findings before and after; the sites and the advice come
 * from diff_sites.c and diff_advice.c. */
#include "render/diff/diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/results/doc.h"
#include "util/alloc.h"
#include "util/sat.h"

/*-*** exact integers ***/

cJSON *vr_diff_int(long long v)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", v);
    return cJSON_CreateRaw(num);
}

cJSON *vr_diff_triple(int has_b, long long b, int has_a, long long a)
{
    cJSON *t = cJSON_CreateObject();
    cJSON_AddItemToObject(t, "before", has_b ? vr_diff_int(b) : cJSON_CreateNull());
    cJSON_AddItemToObject(t, "after", has_a ? vr_diff_int(a) : cJSON_CreateNull());
    cJSON_AddItemToObject(t, "delta", has_b && has_a ? vr_diff_int(vr_sat_sub(a, b)) : cJSON_CreateNull());
    return t;
}

/* The triple of obj_b[key] and obj_a[key]. */
static cJSON *triple_of(const cJSON *b, const cJSON *a, const char *key)
{
    long long vb = 0, va = 0;
    int hb = vr_results_member_int(b, key, &vb), ha = vr_results_member_int(a, key, &va);
    return vr_diff_triple(hb, vb, ha, va);
}

/*-*** pairing ***/

/* A device's key: its rank (-1: null) and the N of "cuda:N" (-1: none). */
typedef struct {
    long long rank, index;
} device_key;

static device_key key_of(const cJSON *dev)
{
    device_key k = {-1, -1};
    long long r;
    if (vr_results_member_int(dev, "rank", &r))
        k.rank = r;
    const char *id = vr_results_string(dev, "id");
    const char *colon = id ? strrchr(id, ':') : NULL;
    if (colon && colon[1]) {
        char *end;
        long long n = strtoll(colon + 1, &end, 10);
        if (*end == '\0')
            k.index = n;
    }
    return k;
}

static int same_rank(const cJSON *x, const cJSON *y)
{
    long long rx, ry;
    int hx = vr_results_member_int(x, "rank", &rx), hy = vr_results_member_int(y, "rank", &ry);
    return hx == hy && (!hx || rx == ry);
}

int vr_diff_finding_about(const cJSON *finding, const cJSON *dev)
{
    const char *id = vr_results_string(dev, "id"), *fd = vr_results_string(finding, "device");
    return id && fd && strcmp(fd, id) == 0 && same_rank(finding, dev);
}

/* The after device that pairs with `dev`: the first of its key not taken. */
static int partner(const cJSON *dev, const cJSON **after_devs, unsigned char *taken, int n)
{
    device_key k = key_of(dev);
    for (int j = 0; j < n; j++) {
        device_key o = key_of(after_devs[j]);
        if (!taken[j] && o.rank == k.rank && o.index == k.index)
            return j;
    }
    return -1;
}

static cJSON *device_ref(const cJSON *dev)
{
    cJSON *r = cJSON_CreateObject();
    const char *id = vr_results_string(dev, "id"), *name = vr_results_string(dev, "name");
    cJSON_AddItemToObject(r, "id", id ? cJSON_CreateString(id) : cJSON_CreateNull());
    cJSON_AddItemToObject(r, "name", name ? cJSON_CreateString(name) : cJSON_CreateNull());
    cJSON_AddItemToObject(r, "rank",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(dev, "rank"), 1));
    return r;
}

/*-*** a pair ***/

/* The categories either side holds any of, in the breakdown's order. */
static cJSON *breakdown_of(const cJSON *b, const cJSON *a)
{
    cJSON *out = cJSON_CreateObject();
    const cJSON *bb = cJSON_GetObjectItemCaseSensitive(b, "peak_breakdown");
    const cJSON *ab = cJSON_GetObjectItemCaseSensitive(a, "peak_breakdown");
    const cJSON *src = cJSON_IsObject(bb) ? bb : ab, *cat;
    cJSON_ArrayForEach(cat, src)
    {
        long long vb = 0, va = 0;
        int hb = vr_results_member_int(bb, cat->string, &vb),
            ha = vr_results_member_int(ab, cat->string, &va);
        if ((hb && vb) || (ha && va))
            cJSON_AddItemToObject(out, cat->string, vr_diff_triple(hb, vb, ha, va));
    }
    return out;
}

/* Rows of two lists joined on their members `k1` (and `k2`, a string,
 * when not NULL): {k1, k2, "before", "after", "delta"} of `figure`. */
static int same_row(const cJSON *x, const cJSON *y, const char *k1, const char *k2)
{
    long long vx, vy;
    int hx = vr_results_member_int(x, k1, &vx), hy = vr_results_member_int(y, k1, &vy);
    if (hx != hy || (hx && vx != vy))
        return 0;
    if (!k2)
        return 1;
    const char *sx = vr_results_string(x, k2), *sy = vr_results_string(y, k2);
    return sx && sy && strcmp(sx, sy) == 0;
}

static cJSON *joined_row(const cJSON *b, const cJSON *a, const char *k1, const char *k2,
                         const char *figure)
{
    const cJSON *any = b ? b : a;
    cJSON *row = cJSON_CreateObject();
    cJSON_AddItemToObject(row, k1, cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(any, k1), 1));
    if (k2)
        cJSON_AddItemToObject(row, k2,
                              cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(any, k2), 1));
    long long vb = 0, va = 0;
    int hb = b && vr_results_member_int(b, figure, &vb),
        ha = a && vr_results_member_int(a, figure, &va);
    cJSON *t = vr_diff_triple(hb, vb, ha, va);
    cJSON *x;
    while ((x = t->child) != NULL)
        cJSON_AddItemToObject(row, x->string, cJSON_DetachItemViaPointer(t, x));
    cJSON_Delete(t);
    return row;
}

static cJSON *joined(const cJSON *bl, const cJSON *al, const char *k1, const char *k2,
                     const char *figure)
{
    cJSON *out = cJSON_CreateArray();
    const cJSON *x, *y;
    cJSON_ArrayForEach(x, bl)
    {
        const cJSON *match = NULL;
        cJSON_ArrayForEach(y, al) if (same_row(x, y, k1, k2))
        {
            match = y;
            break;
        }
        cJSON_AddItemToArray(out, joined_row(x, match, k1, k2, figure));
    }
    cJSON_ArrayForEach(y, al)
    {
        int seen = 0;
        cJSON_ArrayForEach(x, bl) seen |= same_row(x, y, k1, k2);
        if (!seen)
            cJSON_AddItemToArray(out, joined_row(NULL, y, k1, k2, figure));
    }
    return out;
}

static const cJSON *list_of(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/*-*** findings ***/

/* The findings of `doc` about `dev` (its id and rank; dev NULL: every
 * finding), as {"kind", "severity", "title"}. */
static cJSON *findings_of(const cJSON *doc, const cJSON *dev)
{
    cJSON *out = cJSON_CreateArray();
    const cJSON *f;
    cJSON_ArrayForEach(f, list_of(doc, "findings"))
    {
        if (dev && !vr_diff_finding_about(f, dev))
            continue;
        cJSON *row = cJSON_CreateObject();
        static const char *const keys[] = {"kind", "severity", "title"};
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
            const char *s = vr_results_string(f, keys[i]);
            cJSON_AddItemToObject(row, keys[i], s ? cJSON_CreateString(s) : cJSON_CreateNull());
        }
        cJSON_AddItemToArray(out, row);
    }
    return out;
}

static int has_kind(const cJSON *list, const char *kind)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, list)
    {
        const char *k = vr_results_string(f, "kind");
        if (k && strcmp(k, kind) == 0)
            return 1;
    }
    return 0;
}

/* The kinds of `from` that `other` has none of, each once. */
static cJSON *kinds_missing(const cJSON *from, const cJSON *other)
{
    cJSON *out = cJSON_CreateArray();
    const cJSON *f, *k;
    cJSON_ArrayForEach(f, from)
    {
        const char *kind = vr_results_string(f, "kind");
        if (!kind)
            continue;
        int listed = 0;
        cJSON_ArrayForEach(k, out) listed |= strcmp(k->valuestring, kind) == 0;
        if (!listed && !has_kind(other, kind))
            cJSON_AddItemToArray(out, cJSON_CreateString(kind));
    }
    return out;
}

static cJSON *findings_pair(const cJSON *bdoc, const cJSON *bdev, const cJSON *adoc,
                            const cJSON *adev)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *b = findings_of(bdoc, bdev), *a = findings_of(adoc, adev);
    cJSON_AddItemToObject(out, "before", b);
    cJSON_AddItemToObject(out, "after", a);
    cJSON_AddItemToObject(out, "gone", kinds_missing(b, a));
    cJSON_AddItemToObject(out, "new", kinds_missing(a, b));
    return out;
}

/* Percent growth of the peak allocated: null when unknown or 0 before. */
static cJSON *growth_pct(const cJSON *t)
{
    long long b, a;
    if (!vr_results_member_int(t, "before", &b) || !vr_results_member_int(t, "after", &a) ||
        b <= 0)
        return cJSON_CreateNull();
    double pct = (double)(a - b) * 100.0 / (double)b;
    return cJSON_CreateNumber((double)(long long)(pct * 100.0 + (pct < 0 ? -0.5 : 0.5)) / 100.0);
}

/* The side's timeline (diff_timeline.c), and its times' kind. */
static cJSON *timeline_of(const cJSON *dev)
{
    cJSON *t = cJSON_CreateObject();
    const cJSON *pts = list_of(dev, "diff_timeline");
    cJSON_AddItemToObject(t, "points",
                          cJSON_IsArray(pts) ? cJSON_Duplicate(pts, 1) : cJSON_CreateArray());
    cJSON_AddItemToObject(t, "history_entries",
                          cJSON_Duplicate(list_of(dev, "history_entries"), 1));
    return t;
}

/* A mark of "diff_step_starts": its step and start; 0 at the end. */
static int mark_at(const cJSON *m, long long *step, long long *ns)
{
    return m && vr_results_int(cJSON_GetArrayItem(m, 0), step) &&
           vr_results_int(cJSON_GetArrayItem(m, 1), ns);
}

/* The lowest step both sides mark, {"step", "before_ns", "after_ns"}
 * (each from its side's first memory event); null when none. Both lists
 * are by step (diff_timeline.c): one merge. */
static cJSON *aligned_on(const cJSON *bdev, const cJSON *adev)
{
    const cJSON *mb = cJSON_GetArrayItem(list_of(bdev, "diff_step_starts"), 0);
    const cJSON *ma = cJSON_GetArrayItem(list_of(adev, "diff_step_starts"), 0);
    long long sb, nb, sa, na;
    while (mark_at(mb, &sb, &nb) && mark_at(ma, &sa, &na)) {
        if (sb == sa) {
            cJSON *out = cJSON_CreateObject();
            cJSON_AddItemToObject(out, "step", vr_diff_int(sb));
            cJSON_AddItemToObject(out, "before_ns", vr_diff_int(nb));
            cJSON_AddItemToObject(out, "after_ns", vr_diff_int(na));
            return out;
        }
        if (sb < sa)
            mb = mb->next;
        else
            ma = ma->next;
    }
    return cJSON_CreateNull();
}

/* A pair; in_full: both devices are in their documents' devices[] (else
 * one is in more_devices[], which holds the peaks only: the pair then has
 * no breakdown, sites, steps, timeline or advice). */
static cJSON *pair_of(const cJSON *bdoc, const cJSON *bdev, const cJSON *adoc, const cJSON *adev,
                      int in_full)
{
    cJSON *p = cJSON_CreateObject(), *empty = cJSON_CreateObject();
    const cJSON *bd = in_full ? bdev : empty, *ad = in_full ? adev : empty;
    cJSON_AddStringToObject(p, "before_id",
                            vr_results_string(bdev, "id") ? vr_results_string(bdev, "id") : "");
    cJSON_AddStringToObject(p, "after_id",
                            vr_results_string(adev, "id") ? vr_results_string(adev, "id") : "");
    cJSON_AddItemToObject(p, "rank",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(bdev, "rank"), 1));
    cJSON_AddItemToObject(p, "before_device", device_ref(bdev));
    cJSON_AddItemToObject(p, "after_device", device_ref(adev));
    cJSON *alloc = triple_of(bdev, adev, "peak_allocated_bytes");
    cJSON_AddItemToObject(p, "peak_allocated_bytes", alloc);
    cJSON_AddItemToObject(p, "peak_allocated_growth_pct", growth_pct(alloc));
    cJSON_AddItemToObject(p, "peak_reserved_bytes", triple_of(bdev, adev, "peak_reserved_bytes"));
    cJSON_AddItemToObject(p, "headroom_bytes", triple_of(bdev, adev, "headroom_bytes"));
    cJSON_AddItemToObject(p, "capacity_bytes", triple_of(bdev, adev, "capacity_bytes"));
    cJSON_AddBoolToObject(p, "in_full", in_full);
    cJSON_AddItemToObject(p, "peak_breakdown", breakdown_of(bd, ad));
    cJSON_AddItemToObject(p, "out_of_memory_count", triple_of(bdev, adev, "out_of_memory_count"));
    vr_diff_sites(p, bd, ad);
    cJSON_AddItemToObject(
        p, "steps",
        joined(list_of(bd, "steps"), list_of(ad, "steps"), "step", NULL, "peak_allocated_bytes"));
    cJSON_AddItemToObject(p, "phases",
                          joined(list_of(bd, "phase_peaks"), list_of(ad, "phase_peaks"), "step",
                                 "phase", "peak_allocated_bytes"));
    cJSON_AddItemToObject(p, "findings", findings_pair(bdoc, bdev, adoc, adev));
    cJSON *tl = cJSON_AddObjectToObject(p, "timeline");
    cJSON_AddItemToObject(tl, "before", timeline_of(bd));
    cJSON_AddItemToObject(tl, "after", timeline_of(ad));
    cJSON_AddItemToObject(tl, "aligned_on", aligned_on(bd, ad));
    if (in_full)
        vr_diff_advice(p, bdoc, bdev, adev);
    else
        cJSON_AddArrayToObject(p, "advice_checked");
    cJSON_Delete(empty);
    return p;
}

/*-*** the document ***/

static cJSON *side_of(const cJSON *doc, const vr_diff_side *s)
{
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "given", s->given ? s->given : "");
    cJSON *paths = cJSON_AddArrayToObject(out, "sources");
    const cJSON *src;
    cJSON_ArrayForEach(src, list_of(doc, "sources"))
    {
        const char *p = vr_results_string(src, "path");
        if (p)
            cJSON_AddItemToArray(paths, cJSON_CreateString(p));
    }
    cJSON_AddBoolToObject(out, "partial", s->partial);
    const char *state = vr_results_string(list_of(doc, "verdict"), "state");
    cJSON_AddItemToObject(out, "verdict", state ? cJSON_CreateString(state) : cJSON_CreateNull());
    return out;
}

/* A side's devices: those in full (devices[]), then the rest
 * (more_devices[]); *n_full of them in full. */
static const cJSON **devices_of(const cJSON *doc, int *n, int *n_full)
{
    const cJSON *full = list_of(doc, "devices"), *more = list_of(doc, "more_devices"), *x;
    *n_full = cJSON_GetArraySize(full);
    *n = *n_full + cJSON_GetArraySize(more);
    const cJSON **v = vr_xcalloc((size_t)*n + 1, sizeof *v);
    int i = 0;
    cJSON_ArrayForEach(x, full) v[i++] = x;
    cJSON_ArrayForEach(x, more) v[i++] = x;
    return v;
}

static void add_pairs(cJSON *d, const cJSON *before, const cJSON *after)
{
    int nb, na, fb, fa;
    const cJSON **bl = devices_of(before, &nb, &fb), **al = devices_of(after, &na, &fa);
    unsigned char *taken = vr_xcalloc((size_t)na + 1, 1);
    cJSON *devices = cJSON_AddArrayToObject(d, "devices");
    cJSON *unpaired = cJSON_AddObjectToObject(d, "unpaired");
    cJSON *ub = cJSON_AddArrayToObject(unpaired, "before");
    cJSON *ua = cJSON_AddArrayToObject(unpaired, "after");
    int differ = nb != na;
    for (int i = 0; i < nb; i++) {
        const cJSON *bdev = bl[i];
        int j = partner(bdev, al, taken, na);
        if (j < 0) {
            cJSON_AddItemToArray(ub, device_ref(bdev));
            differ = 1;
            continue;
        }
        taken[j] = 1;
        const cJSON *adev = al[j];
        const char *ib = vr_results_string(bdev, "id"), *ia = vr_results_string(adev, "id");
        differ |= !ib || !ia || strcmp(ib, ia) != 0;
        cJSON_AddItemToArray(devices, pair_of(before, bdev, after, adev, i < fb && j < fa));
    }
    for (int j = 0; j < na; j++)
        if (!taken[j]) {
            cJSON_AddItemToArray(ua, device_ref(al[j]));
            differ = 1;
        }
    free(bl);
    free(al);
    free(taken);
    cJSON_AddBoolToObject(d, "pairs_differ", differ);
}

cJSON *vr_diff_build(const cJSON *before, const cJSON *after, const vr_diff_side *b,
                     const vr_diff_side *a)
{
    /* "tool" first, as in a report: a folder side skips the diffs
     * written into it (import's vr_reader_is_own_report). */
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "tool", cJSON_Duplicate(list_of(after, "tool"), 1));
    cJSON *d = cJSON_AddObjectToObject(root, "diff");
    cJSON_AddItemToObject(d, "before", side_of(before, b));
    cJSON_AddItemToObject(d, "after", side_of(after, a));
    add_pairs(d, before, after);
    cJSON_AddItemToObject(d, "oom_event_count", triple_of(before, after, "oom_event_count"));
    cJSON_AddItemToObject(d, "findings", findings_pair(before, NULL, after, NULL));
    return root;
}

int vr_diff_grew_over(const cJSON *diff, double pct)
{
    int n = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, list_of(list_of(diff, "diff"), "devices"))
    {
        const cJSON *t = list_of(p, "peak_allocated_bytes");
        long long b, a;
        if (!vr_results_member_int(t, "before", &b) || !vr_results_member_int(t, "after", &a) ||
            a <= b)
            continue;
        n += b <= 0 || (double)(a - b) * 100.0 > pct * (double)b;
    }
    return n;
}
