/* BEFORE's advice checked against AFTER (diff.h): for each remedy BEFORE
 * advised for the device, its estimated saving beside what AFTER's peak
 * measured in the figures the remedy acts on (the table below). The
 * files do not say which settings a run used: "applied" means only that
 * those figures dropped, and a remedy the table does not know is listed
 * with its estimate and no measure. */
#include <string.h>

#include "render/diff/diff.h"
#include "util/sat.h"

/* The breakdown's categories a remedy shrinks (docs/remedies.md), or,
 * `cache`, the allocator's cache at the peak (reserved less allocated). */
typedef struct {
    const char *id;
    const char *categories[4];
    int cache;
} remedy_figures;

static const remedy_figures remedies[] = {
    {"activation-checkpointing", {"activation"}, 0},
    {"mixed-precision", {"activation", "temporary"}, 0},
    {"micro-batch-accumulation", {"activation", "temporary", "input"}, 0},
    {"zero-fsdp-sharding", {"parameter", "gradient", "optimizer_state"}, 0},
    {"cpu-offload", {"optimizer_state", "gradient"}, 0},
    {"8bit-optimizer", {"optimizer_state"}, 0},
    {"memory-efficient-attention", {"temporary"}, 0},
    {"no-grad-inference", {"activation", "autograd_detail"}, 0},
    {"expandable-segments", {NULL}, 1},
    {"max-split-size", {NULL}, 1},
    {"garbage-collection-threshold", {NULL}, 1},
};

static const remedy_figures *figures_of(const char *id)
{
    for (size_t i = 0; i < sizeof remedies / sizeof *remedies; i++)
        if (strcmp(remedies[i].id, id) == 0)
            return &remedies[i];
    return NULL;
}

/* What the remedy's figures hold on a device at its peak; 0 unknown. */
static int measure(const remedy_figures *r, const cJSON *dev, long long *v)
{
    *v = 0;
    if (r->cache) {
        long long res, alloc;
        if (!vr_results_member_int(dev, "peak_reserved_bytes", &res) ||
            !vr_results_member_int(dev, "peak_allocated_bytes", &alloc))
            return 0;
        *v = vr_sat_sub(res, alloc);
        return 1;
    }
    const cJSON *bd = cJSON_GetObjectItemCaseSensitive(dev, "peak_breakdown");
    if (!cJSON_IsObject(bd))
        return 0;
    for (int i = 0; i < 4 && r->categories[i]; i++) {
        long long c;
        if (vr_results_member_int(bd, r->categories[i], &c))
            *v += c;
    }
    return 1;
}

/* The row of `id` in out, or NULL. */
static cJSON *listed(cJSON *out, const char *id)
{
    cJSON *x;
    cJSON_ArrayForEach(x, out)
    {
        const char *y = vr_results_string(x, "id");
        if (y && strcmp(y, id) == 0)
            return x;
    }
    return NULL;
}

static long long estimate_of(const cJSON *row)
{
    long long v;
    return vr_results_member_int(row, "estimated_saving_bytes", &v) ? v : -1;
}

static cJSON *checked(const cJSON *adv, const char *id, const cJSON *bdev, const cJSON *adev)
{
    cJSON *row = cJSON_CreateObject();
    const char *title = vr_results_string(adv, "title");
    long long est;
    cJSON_AddStringToObject(row, "id", id);
    cJSON_AddItemToObject(row, "title", title ? cJSON_CreateString(title) : cJSON_CreateNull());
    cJSON_AddItemToObject(row, "estimated_saving_bytes",
                          vr_results_member_int(adv, "saving_bytes", &est) ? vr_diff_int(est)
                                                                           : cJSON_CreateNull());
    const remedy_figures *r = figures_of(id);
    long long b, a;
    int known = r && measure(r, bdev, &b) && measure(r, adev, &a);
    cJSON_AddItemToObject(row, "measured_saving_bytes",
                          known ? vr_diff_int(vr_sat_sub(b, a)) : cJSON_CreateNull());
    cJSON *what = cJSON_AddArrayToObject(row, "measured_in");
    if (r && r->cache)
        cJSON_AddItemToArray(what, cJSON_CreateString("cache"));
    for (int i = 0; r && !r->cache && i < 4 && r->categories[i]; i++)
        cJSON_AddItemToArray(what, cJSON_CreateString(r->categories[i]));
    cJSON_AddItemToObject(row, "applied",
                          known ? cJSON_CreateBool(b > a) : cJSON_CreateNull());
    return row;
}

/* One remedy once, with its largest estimate. */
static void add_advice(cJSON *out, const cJSON *adv, const cJSON *bdev, const cJSON *adev)
{
    const char *id = vr_results_string(adv, "id");
    if (!id)
        return;
    cJSON *row = checked(adv, id, bdev, adev), *had = listed(out, id);
    if (!had)
        cJSON_AddItemToArray(out, row);
    else if (estimate_of(row) > estimate_of(had))
        cJSON_ReplaceItemViaPointer(out, had, row);
    else
        cJSON_Delete(row);
}

/* Largest estimate first (ties by id), as the report's advice[]. */
static void rank_rows(cJSON *out)
{
    int n = cJSON_GetArraySize(out);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            cJSON *x = cJSON_GetArrayItem(out, j - 1), *y = cJSON_GetArrayItem(out, j);
            long long ex = estimate_of(x), ey = estimate_of(y);
            if (ex > ey ||
                (ex == ey && strcmp(vr_results_string(x, "id"), vr_results_string(y, "id")) <= 0))
                break;
            cJSON_DetachItemViaPointer(out, y);
            cJSON_InsertItemInArray(out, j - 1, y);
        }
}

/* The advice of BEFORE's findings about the device (its id and rank). */
void vr_diff_advice(cJSON *pair, const cJSON *before_doc, const cJSON *before_dev,
                    const cJSON *after_dev)
{
    cJSON *out = cJSON_AddArrayToObject(pair, "advice_checked");
    const cJSON *f, *adv;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(before_doc, "findings"))
    {
        if (!vr_diff_finding_about(f, before_dev))
            continue;
        cJSON_ArrayForEach(adv, cJSON_GetObjectItemCaseSensitive(f, "advice"))
            add_advice(out, adv, before_dev, after_dev);
    }
    rank_rows(out);
}
