#include "render/view/kinds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/kind_words.h"
#include "render/results/doc.h"

/* The kinds of an OOM's diagnosis (diagnose.c's rules; a leak may also
 * be a device's without an OOM, so it is not one of them). */
int vr_view_kind_is_oom(const char *kind)
{
    static const char *const oom[] = {"capacity",          "fragmentation", "other-process",
                                      "oversized-request", "inconsistent",  "insufficient-evidence"};
    for (size_t i = 0; kind && i < sizeof oom / sizeof *oom; i++)
        if (strcmp(oom[i], kind) == 0)
            return 1;
    return 0;
}

/* An error message's form (oom_event.wording: joblog_scan.c's and
 * liboom.c's names), in words. */
static const struct {
    const char *slug, *words;
} wordings[] = {
    {"current", "PyTorch's message (\"has a total capacity of\")"},
    {"capacty-2.1", "PyTorch 2.1's message (\"total capacty\")"},
    {"reserved-in-total", "PyTorch's message before 2.1 (\"reserved in total\")"},
    {"cached", "PyTorch's oldest message (\"cached\")"},
    {"private-pools", "PyTorch's message with private pools (CUDA graphs)"},
    {"bare", "PyTorch's message without figures"},
    {"hip-bare", "PyTorch's ROCm message without figures"},
    {"xpu-bare", "PyTorch's XPU message"},
    {"mps", "PyTorch's MPS (Apple) message"},
    {"cuda-malloc-async", "the cudaMallocAsync backend's message"},
    {"cuda-error", "a CUDA error without figures"},
    {"hip-error", "a HIP error without figures"},
    {"thc", "PyTorch's error before 1.0 (THC)"},
    {"cudaErrorMemoryAllocation", "CUDA's cudaErrorMemoryAllocation"},
    {"partial", "part of a message (its start not in the log)"},
    {"hint", "PyTorch's hint after a message"},
    {"tf-bfc", "TensorFlow's allocator (BFC) message"},
    {"tf-oom", "TensorFlow's OOM message"},
    {"tf-resource-exhausted", "TensorFlow's ResourceExhaustedError"},
    {"xla", "XLA's RESOURCE_EXHAUSTED message"},
    {"cupy", "CuPy's message"},
    {"cuda-driver", "the CUDA driver's CUDA_ERROR_OUT_OF_MEMORY"},
    {"cublas-alloc", "cuBLAS's CUBLAS_STATUS_ALLOC_FAILED"},
    {"cudnn-alloc", "cuDNN's CUDNN_STATUS_ALLOC_FAILED"},
    {"nccl", "NCCL's warning"},
    {"cudaMalloc", "a library's cudaMalloc check"},
    {"vllm-no-kv-memory", "vLLM's start-up check (no memory for the KV cache)"},
    {"vllm-kv-too-small", "vLLM's start-up check (KV cache too small)"},
    {"vllm-startup-free", "vLLM's start-up check (too little free memory)"},
};

static const char *wording_words(const char *slug)
{
    for (size_t i = 0; i < sizeof wordings / sizeof *wordings; i++)
        if (strcmp(wordings[i].slug, slug) == 0)
            return wordings[i].words;
    return NULL;
}

static void add_kind_words(cJSON *list)
{
    cJSON *a;
    cJSON_ArrayForEach(a, list)
    {
        const char *kind = vr_results_string(a, "kind");
        if (kind)
            cJSON_AddStringToObject(a, "kind_words", vr_kind_words(kind));
    }
}

/* The secondary causes the detail does not name already. */
static void add_secondary_words(cJSON *finding)
{
    const char *detail = vr_results_string(finding, "detail");
    cJSON *words = cJSON_AddArrayToObject(finding, "secondary_words");
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(finding, "secondary"))
    {
        if (!cJSON_IsString(s) || (detail && strstr(detail, s->valuestring)))
            continue;
        cJSON_AddItemToArray(words, cJSON_CreateString(vr_kind_words(s->valuestring)));
    }
}

/* Each error's wording in words; an unknown one "in the form <slug>". */
static void add_wording_words(cJSON *events)
{
    cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        const char *slug = vr_results_string(e, "wording");
        if (!slug)
            continue;
        const char *words = wording_words(slug);
        if (words) {
            cJSON_AddStringToObject(e, "wording_words", words);
            continue;
        }
        size_t n = strlen(slug) + 32;
        char *text = malloc(n);
        if (!text)
            continue;
        snprintf(text, n, "in the form %s", slug);
        cJSON_AddStringToObject(e, "wording_words", text);
        free(text);
    }
}

void vr_view_kinds(cJSON *doc)
{
    add_kind_words(cJSON_GetObjectItemCaseSensitive(doc, "advice"));
    add_kind_words(cJSON_GetObjectItemCaseSensitive(doc, "oom_groups"));
    add_wording_words(cJSON_GetObjectItemCaseSensitive(doc, "oom_events"));
    cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "findings"))
    {
        add_kind_words(cJSON_GetObjectItemCaseSensitive(f, "advice"));
        add_secondary_words(f);
    }
}
