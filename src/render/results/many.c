#include "render/results/many.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/units.h"

typedef struct {
    const vr_many_rank *r;
    size_t i;
} entry;

/* Flagged first, then the higher weight (a known one before none), then
 * the earlier row: a total order, so the choice never depends on qsort. */
static int before(const vr_many_rank *a, size_t ai, const vr_many_rank *b, size_t bi)
{
    if (a->flagged != b->flagged)
        return a->flagged;
    if (a->has_weight != b->has_weight)
        return a->has_weight;
    if (a->has_weight && a->weight != b->weight)
        return a->weight > b->weight;
    return ai < bi;
}

static int by_importance(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    return before(a->r, a->i, b->r, b->i) ? -1 : before(b->r, b->i, a->r, a->i);
}

/* The row of the lowest known weight (the earlier when equal); n when none. */
static size_t lowest(const vr_many_rank *rows, size_t n)
{
    size_t low = n;
    for (size_t i = 0; i < n; i++)
        if (rows[i].has_weight && (low == n || rows[i].weight < rows[low].weight))
            low = i;
    return low;
}

void vr_many_choose(const vr_many_rank *rows, size_t n, size_t max, unsigned char *keep)
{
    for (size_t i = 0; i < n; i++)
        keep[i] = n <= max;
    if (n <= max || max == 0)
        return;
    size_t low = lowest(rows, n);
    size_t room = low < n ? max - 1 : max;
    entry *e = vr_xmalloc(n * sizeof *e);
    for (size_t i = 0; i < n; i++)
        e[i] = (entry){&rows[i], i};
    qsort(e, n, sizeof *e, by_importance);
    size_t taken = 0;
    for (size_t k = 0; k < n && taken < room; k++)
        if (e[k].i != low) {
            keep[e[k].i] = 1;
            taken++;
        }
    if (low < n)
        keep[low] = 1;
    free(e);
}

int vr_many_all_kept(const unsigned char *keep, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!keep[i])
            return 0;
    return 1;
}

static void add_bytes(cJSON *obj, const char *key, int known, long long v)
{
    if (!known) {
        cJSON_AddNullToObject(obj, key);
        return;
    }
    char num[32];
    snprintf(num, sizeof num, "%lld", v);
    cJSON_AddItemToObject(obj, key, cJSON_CreateRaw(num));
}

/* The summary line's figures: n rows, `more` of them not kept, the
 * lowest and highest weight of those (known: one had a weight). */
static cJSON *summary_object(size_t n, size_t more, int known, long long low, long long high,
                             const char *figure)
{
    cJSON *s = cJSON_CreateObject();
    char text[32];
    cJSON_AddNumberToObject(s, "count", (double)n);
    cJSON_AddNumberToObject(s, "in_full", (double)(n - more));
    cJSON_AddNumberToObject(s, "more", (double)more);
    vr_units_count((int64_t)more, text, sizeof text);
    cJSON_AddStringToObject(s, "more_n", text);
    cJSON_AddStringToObject(s, "figure", figure);
    add_bytes(s, "more_low_bytes", known, low);
    add_bytes(s, "more_high_bytes", known, high);
    return s;
}

cJSON *vr_many_summary(const vr_many_rank *rows, size_t n, const unsigned char *keep,
                       const char *figure)
{
    size_t more = 0;
    int known = 0;
    long long low = 0, high = 0;
    for (size_t i = 0; i < n; i++) {
        if (keep[i])
            continue;
        more++;
        if (!rows[i].has_weight)
            continue;
        long long v = rows[i].weight;
        low = !known || v < low ? v : low;
        high = !known || v > high ? v : high;
        known = 1;
    }
    return summary_object(n, more, known, low, high, figure);
}

/*-*** the choice as the rows come ***/

void vr_many_stream_init(vr_many_stream *s)
{
    memset(s, 0, sizeof *s);
}

/* The least important of the rows held (the one a better row replaces). */
static size_t worst(const vr_many_stream *s)
{
    size_t w = 0;
    for (size_t k = 1; k < s->ntop; k++)
        if (before(&s->top[w].r, s->top[w].i, &s->top[k].r, s->top[k].i))
            w = k;
    return w;
}

static int enters_top(const vr_many_stream *s, const vr_many_rank *r, size_t i)
{
    if (s->ntop < VR_MANY_IN_FULL)
        return 1;
    const vr_many_held *w = &s->top[worst(s)];
    return before(r, i, &w->r, w->i);
}

static int is_lower(const vr_many_stream *s, const vr_many_rank *r)
{
    return r->has_weight && (!s->has_low || r->weight < s->low.r.weight);
}

int vr_many_wants(const vr_many_stream *s, const vr_many_rank *r)
{
    return enters_top(s, r, s->n) || is_lower(s, r);
}

static int in_top(const vr_many_stream *s, size_t i)
{
    for (size_t k = 0; k < s->ntop; k++)
        if (s->top[k].i == i)
            return 1;
    return 0;
}

/* Keeps `weight` among the lowest (end 0) or highest (end 1) seen. */
static void track_end(vr_many_stream *s, int end, int64_t weight, size_t i)
{
    size_t n = s->nends[end], far = 0;
    if (n < VR_MANY_ENDS) {
        s->ends[end][n].weight = weight;
        s->ends[end][n].i = i;
        s->nends[end]++;
        return;
    }
    for (size_t k = 1; k < n; k++)
        if (end ? s->ends[end][k].weight < s->ends[end][far].weight
                : s->ends[end][k].weight > s->ends[end][far].weight)
            far = k;
    if (end ? weight > s->ends[end][far].weight : weight < s->ends[end][far].weight) {
        s->ends[end][far].weight = weight;
        s->ends[end][far].i = i;
    }
}

void vr_many_offer(vr_many_stream *s, const vr_many_rank *r, cJSON *row)
{
    size_t i = s->n++;
    vr_many_held h = {*r, i, row};
    int top = enters_top(s, r, i), lower = is_lower(s, r);
    if (top && s->ntop < VR_MANY_IN_FULL) {
        s->top[s->ntop++] = h;
    } else if (top) {
        size_t w = worst(s);
        vr_many_held out = s->top[w];
        s->top[w] = h;
        if (!(s->has_low && s->low.i == out.i))
            cJSON_Delete(out.row);
    }
    if (lower) {
        vr_many_held old = s->low;
        int had = s->has_low;
        s->low = h;
        s->has_low = 1;
        if (had && !in_top(s, old.i))
            cJSON_Delete(old.row);
    }
    if (!top && !lower)
        cJSON_Delete(row);
    if (r->has_weight) {
        track_end(s, 0, r->weight, i);
        track_end(s, 1, r->weight, i);
    }
}

static int by_row(const void *pa, const void *pb)
{
    const vr_many_held *a = pa, *b = pb;
    return a->i < b->i ? -1 : a->i > b->i;
}

static int by_held_importance(const void *pa, const void *pb)
{
    const vr_many_held *a = pa, *b = pb;
    return before(&a->r, a->i, &b->r, b->i) ? -1 : before(&b->r, b->i, &a->r, a->i);
}

static int is_kept(const vr_many_held *kept, size_t n, size_t i)
{
    for (size_t k = 0; k < n; k++)
        if (kept[k].i == i)
            return 1;
    return 0;
}

/* The summary over the rows not kept: their weights' range is within
 * the VR_MANY_ENDS lowest and highest, as at most VR_MANY_IN_FULL are
 * kept. */
static cJSON *stream_summary(const vr_many_stream *s, const vr_many_held *kept, size_t nkept,
                             const char *figure)
{
    int known = 0;
    long long low = 0, high = 0;
    for (int end = 0; end < 2; end++)
        for (size_t k = 0; k < s->nends[end]; k++) {
            long long v = s->ends[end][k].weight;
            if (is_kept(kept, nkept, s->ends[end][k].i))
                continue;
            low = !known || v < low ? v : low;
            high = !known || v > high ? v : high;
            known = 1;
        }
    return summary_object(s->n, s->n - nkept, known, low, high, figure);
}

cJSON *vr_many_finish(vr_many_stream *s, const char *figure, cJSON **summary)
{
    vr_many_held kept[VR_MANY_IN_FULL];
    size_t nkept = 0;
    *summary = NULL;
    /* With more rows than shown and a lowest, it is kept and the best
     * but it fill the rest (vr_many_choose). */
    int low_apart = s->n > VR_MANY_IN_FULL && s->has_low;
    qsort(s->top, s->ntop, sizeof *s->top, by_held_importance);
    for (size_t k = 0; k < s->ntop; k++) {
        int take = !(low_apart && s->top[k].i == s->low.i) &&
                   nkept < (low_apart ? VR_MANY_IN_FULL - 1 : VR_MANY_IN_FULL);
        if (take)
            kept[nkept++] = s->top[k];
        else if (!(s->has_low && s->top[k].i == s->low.i))
            cJSON_Delete(s->top[k].row);
    }
    if (low_apart)
        kept[nkept++] = s->low;
    else if (s->has_low && !in_top(s, s->low.i))
        cJSON_Delete(s->low.row); /* not reached: with few rows, all are in top */
    qsort(kept, nkept, sizeof *kept, by_row);
    cJSON *list = cJSON_CreateArray();
    for (size_t k = 0; k < nkept; k++)
        if (kept[k].row)
            cJSON_AddItemToArray(list, kept[k].row);
    if (s->n > nkept)
        *summary = stream_summary(s, kept, nkept, figure);
    vr_many_stream_init(s);
    return list;
}
