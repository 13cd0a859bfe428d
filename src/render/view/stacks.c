/* The stacks a report shows, shortened as memory_viz does (stacks.h). */
#include "render/view/stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/results/doc.h"
#include "render/view/commands.h"
#include "util/buf.h"

/* C++ frames PyTorch's memory_viz leaves out (_memory_viz.py's
 * _frame_filter: the unwinder, the dispatcher's boxing and registration,
 * CPython's evaluation loop), and the caching allocator's own: in a
 * stack of torch's frames only they are the first dozen lines and say
 * nothing about who asked. Matched anywhere in "file:line in function". */
static const char *const cxx_noise[] = {
    "unwind::unwind",
    "CapturedTraceback::gather",
    "gather_with_cpp",
    "CUDACachingAllocator",
    "core/boxing",
    "/Register",
    "/Redispatch",
    "__libc_start_main",
    "PyEval_",
    "PyObject_",
    "PyFunction_",
    "ceval.c",
    "pythonrun.c",
    "Objects/call.c",
    "Objects/methodobject.c",
};

/* What each kind of frame the filter leaves out is called, in the order
 * a sentence names them ("3 frames left out: threading, module call
 * wrappers"). */
static const char *const kind_words[] = {
    [VR_FRAME_THREADING] = "threading",
    [VR_FRAME_WRAPPER] = "module call wrappers",
    [VR_FRAME_CPYTHON] = "CPython internals",
    [VR_FRAME_CXX] = "the allocator's and dispatcher's C++ frames",
};

/* Threading's, the nn.Module call wrappers', CPython's own (<frozen
 * ...>), and the C++ noise above (a stack with Python frames has its C++
 * ones left out already: stack_skipped). Both path separators: snapshots
 * from Windows. */
vr_frame_kind vr_stack_frame_kind(const char *f)
{
    for (size_t i = 0; i < sizeof cxx_noise / sizeof *cxx_noise; i++)
        if (strstr(f, cxx_noise[i]))
            return VR_FRAME_CXX;
    /* memory_viz's "/Register" (the generated RegisterCUDA.cpp ...): our
     * C++ frames are "file:line in function", without the folder. */
    if (strncmp(f, "Register", 8) == 0)
        return VR_FRAME_CXX;
    const char *mod = strstr(f, "torch/nn/modules/module.py");
    if (!mod)
        mod = strstr(f, "torch\\nn\\modules\\module.py");
    if (mod && (strstr(mod, "_call_impl") || strstr(mod, "_wrapped_call_impl")))
        return VR_FRAME_WRAPPER;
    if (strstr(f, "/threading.py:") || strstr(f, "\\threading.py:"))
        return VR_FRAME_THREADING;
    if (strstr(f, "<frozen ") || strstr(f, "<string>:"))
        return VR_FRAME_CPYTHON;
    return VR_FRAME_KEPT;
}

int vr_stack_frame_filtered(const char *f)
{
    return vr_stack_frame_kind(f) != VR_FRAME_KEPT;
}

/* "threading, module call wrappers": the kinds of `seen` (bit k: kind k)
 * in kind_words' order. */
static void kinds_text(vr_buf *out, unsigned seen)
{
    for (size_t k = 1; k < sizeof kind_words / sizeof *kind_words; k++)
        if (seen & (1u << k))
            vr_buf_printf(out, "%s%s", out->len ? ", " : "", kind_words[k]);
}

/* obj[key]: n, null for none; obj[key "_one"]: whether it is one (the
 * templates' "frame" or "frames"). */
static void add_count(cJSON *obj, const char *key, int64_t n)
{
    if (n > 0)
        cJSON_AddNumberToObject(obj, key, (double)n);
    else
        cJSON_AddNullToObject(obj, key);
    char one[64];
    snprintf(one, sizeof one, "%s_one", key);
    cJSON_AddBoolToObject(obj, one, n == 1);
}

static void add_stack_view(cJSON *site)
{
    const cJSON *stack = cJSON_GetObjectItemCaseSensitive(site, "stack");
    cJSON *top = cJSON_AddArrayToObject(site, "stack_top");
    cJSON *code = cJSON_AddArrayToObject(site, "stack_top_code");
    int shown = 0, filtered = 0;
    unsigned kinds = 0;
    const cJSON *line;
    cJSON_ArrayForEach(line, stack)
    {
        if (!cJSON_IsString(line))
            break;
        vr_frame_kind kind = vr_stack_frame_kind(line->valuestring);
        if (kind != VR_FRAME_KEPT) {
            kinds |= 1u << kind;
            filtered++;
            continue;
        }
        if (shown == VR_STACK_SHORT_FRAMES)
            continue;
        cJSON_AddItemToArray(top, cJSON_CreateString(line->valuestring));
        char *span = vr_code_span(line->valuestring);
        cJSON_AddItemToArray(code, cJSON_CreateString(span));
        free(span);
        shown++;
    }
    int64_t skipped = vr_results_int_or(site, "stack_skipped", 0);
    add_count(site, "stack_filtered", filtered);
    vr_buf words = {0};
    kinds_text(&words, kinds);
    cJSON_AddStringToObject(site, "stack_filtered_kinds", words.len ? words.data : "");
    vr_buf_free(&words);
    add_count(site, "stack_more",
              vr_results_int_or(site, "stack_depth", shown) - skipped - shown - filtered);
    cJSON_AddBoolToObject(site, "has_stack_top", shown > 0);
    add_count(site, "stack_left_out", skipped);
}

void vr_view_stacks(cJSON *view)
{
    cJSON *dev, *site;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(view, "devices"))
    {
        cJSON_ArrayForEach(site, cJSON_GetObjectItemCaseSensitive(dev, "top_sites"))
            add_stack_view(site);
    }
}
