/* PyTorch's memory-profiler categories and kv_cache: the one list
 * (category.h). */
#include "db/category.h"

#include <string.h>

#include "util/sat.h"

const char *const vr_category_names[VR_CATEGORY_COUNT] = {
    "parameter", "optimizer_state", "input",           "temporary", "activation",
    "kv_cache",  "gradient",        "autograd_detail", "unknown"};

int vr_category_index(const char *name)
{
    for (int i = 0; name && i < VR_CATEGORY_COUNT; i++)
        if (strcmp(name, vr_category_names[i]) == 0)
            return i;
    return VR_CATEGORY_UNKNOWN;
}

void vr_category_settle(const int64_t in[VR_CATEGORY_COUNT], int64_t target,
                        int64_t out[VR_CATEGORY_COUNT])
{
    long double sum = 0; /* exact enough, and never overflows */
    for (int i = 0; i < VR_CATEGORY_COUNT; i++) {
        out[i] = in[i] > 0 ? in[i] : 0;
        sum += (long double)out[i];
    }
    if (target < 0)
        target = 0;
    if (sum <= (long double)target) {
        int64_t known = 0;
        for (int i = 0; i < VR_CATEGORY_COUNT; i++)
            known += out[i]; /* <= target: no overflow */
        out[VR_CATEGORY_UNKNOWN] += target - known;
        return;
    }
    int64_t given = 0;
    int largest = 0;
    for (int i = 1; i < VR_CATEGORY_COUNT; i++)
        largest = out[i] > out[largest] ? i : largest;
    for (int i = 0; i < VR_CATEGORY_COUNT; i++) {
        /* share <= out[i], and the shares sum to about target */
        out[i] = (int64_t)((long double)out[i] * (long double)target / sum);
        given = vr_sat_add(given, out[i]);
    }
    out[largest] = vr_sat_add(out[largest], vr_sat_sub(target, given));
}
