/* PyTorch's memory-profiler categories: the one list (category.h). */
#include "category.h"

#include <string.h>

const char *const vr_category_names[VR_CATEGORY_COUNT] = {
    "parameter", "optimizer_state", "input", "temporary", "activation",
    "gradient", "autograd_detail", "unknown"};

int vr_category_index(const char *name)
{
    for (int i = 0; name && i < VR_CATEGORY_COUNT; i++)
        if (strcmp(name, vr_category_names[i]) == 0)
            return i;
    return VR_CATEGORY_UNKNOWN;
}
