#include "many.h"

#include <stdio.h>
#include <stdlib.h>

#include "../util/buf.h"
#include "../util/units.h"
#include "results.h"

typedef struct {
    const vr_many_rank *r;
    size_t i;
} entry;

/* Flagged first, then the higher weight (a known one before none), then
 * the earlier row: a total order, so the choice never depends on qsort. */
static int by_importance(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    if (a->r->flagged != b->r->flagged)
        return a->r->flagged ? -1 : 1;
    if (a->r->has_weight != b->r->has_weight)
        return a->r->has_weight ? -1 : 1;
    if (a->r->has_weight && a->r->weight != b->r->weight)
        return a->r->weight > b->r->weight ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
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

cJSON *vr_many_split(cJSON *list, const unsigned char *keep)
{
    cJSON *more = NULL, *row = list ? list->child : NULL;
    for (size_t i = 0; row; i++) {
        cJSON *next = row->next;
        if (!keep[i]) {
            if (!more)
                more = cJSON_CreateArray();
            cJSON_AddItemToArray(more, cJSON_DetachItemViaPointer(list, row));
        }
        row = next;
    }
    return more;
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

cJSON *vr_many_summary(size_t shown, const cJSON *more, const char *figure)
{
    size_t n = 0;
    int known = 0;
    long long low = 0, high = 0, v;
    const cJSON *row;
    cJSON_ArrayForEach(row, more)
    {
        n++;
        if (!vr_results_int(cJSON_GetObjectItemCaseSensitive(row, figure), &v))
            continue;
        low = !known || v < low ? v : low;
        high = !known || v > high ? v : high;
        known = 1;
    }
    cJSON *s = cJSON_CreateObject();
    char text[32];
    cJSON_AddNumberToObject(s, "count", (double)(shown + n));
    cJSON_AddNumberToObject(s, "in_full", (double)shown);
    cJSON_AddNumberToObject(s, "more", (double)n);
    vr_units_count((int64_t)n, text, sizeof text);
    cJSON_AddStringToObject(s, "more_n", text);
    cJSON_AddStringToObject(s, "figure", figure);
    add_bytes(s, "more_low_bytes", known, low);
    add_bytes(s, "more_high_bytes", known, high);
    return s;
}
