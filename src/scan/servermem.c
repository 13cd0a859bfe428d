/* An inference server's memory lines (servermem.h). Each wording is a
 * row of the table below: the text a line must hold (NULL: none), the
 * label the number follows, what that number is. The table's comments
 * quote the servers' lines, from the logs their users posted (the test
 * data's PROVENANCE names them) and the servers' sources. */
#include "scan/servermem.h"

#include <string.h>

#include "scan/memprint.h"

const char *const vr_servermem_figure_names[VR_SM_FIGURES] = {
    "weights", "kv_cache",   "activation_peak", "non_torch", "torch_peak",
    "total",   "gpu_blocks", "cpu_blocks",      "kv_tokens"};

/* A count past this is no count a server prints (10^15 tokens or blocks). */
#define COUNT_MAX INT64_C(1000000000000000)
#define SEPARATOR_RUN 8

typedef struct {
    const char *framework;
    const char *requires; /* text the line holds, or NULL */
    const char *label;    /* the number follows it (after blanks, ':', '=', '(') */
    vr_servermem_figure figure;
    int adds; /* a second label of the figure on the line adds to it (SGLang's K and V) */
} wording;

static const wording wordings[] = {
    /* vLLM V0 model runner (0.3 to 0.7): "Loading model weights took 18.4902 GB"
     * (model_memory_usage / 2**30) */
    {"vllm", NULL, "Loading model weights took", VR_SM_WEIGHTS, 0},
    /* vLLM 0.8 (V0) and V1's GPU model runner: "Model loading took 19.5904 GB and
     * 724.57 seconds", "Model loading took 12.66 GiB memory and 31.66 seconds" */
    {"vllm", NULL, "Model loading took", VR_SM_WEIGHTS, 0},
    /* vLLM 0.6.4: "Memory profiling results: duration=72.36 seconds,
     * total_gpu_memory=79.15GiB, initial_memory_usage=19.68GiB,
     * peak_torch_memory=34.50GiB, memory_usage_post_profile=35.32GiB,
     * non_torch_memory=1.96GiB, kv_cache_size=34.78GiB, gpu_memory_utilization=0.90." */
    {"vllm", "Memory profiling results", "peak_torch_memory", VR_SM_TORCH_PEAK, 0},
    {"vllm", "Memory profiling results", "kv_cache_size", VR_SM_KV_CACHE, 0},
    /* vLLM 0.6.5 to 0.8 (worker.py): "the current vLLM instance can use
     * total_gpu_memory (23.58GiB) x gpu_memory_utilization (0.99) = 23.35GiB",
     * "model weights take 21.21GiB; non_torch_memory takes 0.20GiB; PyTorch
     * activation peak memory takes 0.37GiB; the rest of the memory reserved
     * for KV Cache is 1.57GiB."; the same figures one a line in 0.6.5
     * ("model weights take   14.96GiB", "non_torch_memory     1.79GiB",
     * "PyTorch activation peak memory       1.26GiB",
     * "available_kv_cache_memory    53.29GiB"). */
    {"vllm", NULL, "model weights take", VR_SM_WEIGHTS, 0},
    {"vllm", NULL, "non_torch_memory takes", VR_SM_NON_TORCH, 0},
    {"vllm", NULL, "non_torch_memory", VR_SM_NON_TORCH, 0},
    {"vllm", NULL, "PyTorch activation peak memory takes", VR_SM_ACTIVATION_PEAK, 0},
    {"vllm", NULL, "PyTorch activation peak memory", VR_SM_ACTIVATION_PEAK, 0},
    {"vllm", NULL, "the rest of the memory reserved for KV Cache is", VR_SM_KV_CACHE, 0},
    {"vllm", NULL, "available_kv_cache_memory", VR_SM_KV_CACHE, 0},
    {"vllm", NULL, "total_gpu_memory", VR_SM_TOTAL, 0},
    /* vLLM V1 (kv_cache_utils.py): "Available KV cache memory: 8.11 GiB",
     * "GPU KV cache size: 178,880 tokens" */
    {"vllm", NULL, "Available KV cache memory", VR_SM_KV_CACHE, 0},
    {"vllm", NULL, "GPU KV cache size", VR_SM_KV_TOKENS, 0},
    /* vLLM V0 executors: "# GPU blocks: 189945, # CPU blocks: 21845" */
    {"vllm", NULL, "# GPU blocks", VR_SM_GPU_BLOCKS, 0},
    {"vllm", "# GPU blocks", "# CPU blocks", VR_SM_CPU_BLOCKS, 0},
    /* SGLang's model runner: "Load weight end. type=DeepseekV3ForCausalLM,
     * dtype=torch.bfloat16, avail mem=80.84 GB, mem usage=94.50 GB." (before
     * 2025: no "mem usage", so no figure) */
    {"sglang", "Load weight end", "mem usage", VR_SM_WEIGHTS, 0},
    /* SGLang's memory pool (memory_pool.py, GB = 1024**3): "KV Cache is
     * allocated. #tokens: 300288, K size: 8.38 GB, V size: 5.59 GB" (MHA),
     * "KV Cache is allocated. #tokens: 524288, KV size: 17.16 GB" (MLA) */
    {"sglang", "KV Cache is allocated", "#tokens", VR_SM_KV_TOKENS, 0},
    {"sglang", "KV Cache is allocated", "K size", VR_SM_KV_CACHE, 1},
    {"sglang", "KV Cache is allocated", "V size", VR_SM_KV_CACHE, 1},
    {"sglang", "KV Cache is allocated", "KV size", VR_SM_KV_CACHE, 0},
};
#define NWORDINGS (sizeof wordings / sizeof *wordings)

static int is_count_figure(vr_servermem_figure f)
{
    return f == VR_SM_GPU_BLOCKS || f == VR_SM_CPU_BLOCKS || f == VR_SM_KV_TOKENS;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_word(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static size_t skip_separators(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && i < SEPARATOR_RUN &&
           (s[i] == ' ' || s[i] == '\t' || s[i] == ':' || s[i] == '=' || s[i] == '('))
        i++;
    return i;
}

/* Whether the ',' at i starts a group of three digits ("178,880"). */
static int comma_group(const char *s, size_t n, size_t i)
{
    return i + 3 < n && s[i] == ',' && is_digit(s[i + 1]) && is_digit(s[i + 2]) &&
           is_digit(s[i + 3]) && !(i + 4 < n && is_digit(s[i + 4]));
}

/* A count at s: digits, groups of three after a ',' ("178,880"), not
 * followed by a '.' and a digit (a size or a ratio is no count). 1 and
 * the count; 0 when there is none; -1 when it is past COUNT_MAX. */
static int read_count(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int64_t v = 0;
    int over = 0;
    while (i < n && is_digit(s[i])) {
        for (; i < n && is_digit(s[i]); i++) {
            over |= v > COUNT_MAX / 10;
            v = over ? v : v * 10 + (s[i] - '0');
        }
        if (!comma_group(s, n, i))
            break;
        i++;
    }
    if (i == 0 || (i + 1 < n && s[i] == '.' && is_digit(s[i + 1])))
        return 0;
    if (over || v > COUNT_MAX)
        return -1;
    *out = v;
    return 1;
}

/* The wording's first figure on the line: 1 (and *v), 0 when none, -1
 * when it is one that cannot be. */
static int wording_figure(const wording *w, const char *s, size_t n, vr_servermem_value *v)
{
    size_t len = strlen(w->label);
    for (const char *p = s; p < s + n && (p = memmem(p, (size_t)(s + n - p), w->label, len));
         p++) {
        size_t pos = (size_t)(p - s);
        if (is_word(w->label[0]) && pos > 0 && is_word(s[pos - 1]))
            continue; /* inside a longer word: "KV size" is not "V size" */
        size_t at = pos + len;
        if (at < n && is_word(w->label[len - 1]) && is_word(s[at]))
            continue; /* "non_torch_memory" is not "non_torch_memory_x" */
        at += skip_separators(s + at, n - at);
        int rc;
        *v = (vr_servermem_value){w->figure, is_count_figure(w->figure), 0, NULL};
        if (v->is_count)
            rc = read_count(s + at, n - at, &v->value);
        else
            rc = vr_memprint_size(s + at, n - at, &v->value, &v->unit);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The line's TP rank: "TP1]" or "TP0 " after '[', ' ' or '_' (SGLang's
 * "[2026-01-31 13:50:39 TP1]", vLLM's "(Worker_TP0 pid=34322)"). */
static int64_t tp_rank_of(const char *s, size_t n)
{
    for (const char *p = s; p + 2 < s + n && (p = memmem(p, (size_t)(s + n - p), "TP", 2)); p++) {
        if (p == s || !(p[-1] == '[' || p[-1] == ' ' || p[-1] == '_'))
            continue;
        size_t i = (size_t)(p - s) + 2;
        int64_t v = 0;
        size_t digits = 0;
        for (; i < n && is_digit(s[i]) && digits < 6; i++, digits++)
            v = v * 10 + (s[i] - '0');
        if (digits && (i == n || s[i] == ']' || s[i] == ' '))
            return v;
    }
    return -1;
}

static void add_value(vr_servermem *out, const wording *w, const vr_servermem_value *v)
{
    for (size_t k = 0; k < out->n; k++)
        if (out->v[k].figure == v->figure) {
            if (w->adds && out->v[k].value <= INT64_MAX - v->value)
                out->v[k].value += v->value;
            return;
        }
    if (out->n < VR_SERVERMEM_MAX)
        out->v[out->n++] = *v;
}

/* Bytes one of which every wording's label holds ('K' of "KV", '#' of
 * "# GPU blocks", '_' of "non_torch_memory", 'P' of "PyTorch", 'L' of
 * "Load weight end", 'M' of "Model loading", the 'k' of "took" and
 * "take"): a line without any is none of theirs, told in one pass over
 * it. A training log's memory lines ("memory allocated 18.64 GiB, ...")
 * cost 1,900 instructions a line in the wordings' searches before. */
static const unsigned char key_byte[256] = {
    ['K'] = 1, ['#'] = 1, ['_'] = 1, ['P'] = 1, ['L'] = 1, ['M'] = 1, ['k'] = 2};

int vr_servermem_may_match(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char k = key_byte[(unsigned char)s[i]];
        if (k == 1)
            return 1;
        if (k == 2 && i >= 2 && i + 1 < n && s[i + 1] == 'e' && s[i - 2] == 't' &&
            s[i - 1] == 'a')
            return 1; /* "take" */
        if (k == 2 && i >= 3 && s[i - 3] == 't' && s[i - 2] == 'o' && s[i - 1] == 'o')
            return 1; /* "took" */
    }
    return 0;
}

size_t vr_servermem_match(const char *s, size_t n, vr_servermem *out)
{
    memset(out, 0, sizeof *out);
    out->tp_rank = -1;
    if (!vr_servermem_may_match(s, n))
        return 0;
    for (size_t k = 0; k < NWORDINGS; k++) {
        const wording *w = &wordings[k];
        if (out->framework && strcmp(out->framework, w->framework) != 0)
            continue;
        if (w->requires && !memmem(s, n, w->requires, strlen(w->requires)))
            continue;
        vr_servermem_value v;
        int rc = wording_figure(w, s, n, &v);
        if (rc < 0)
            out->impossible = 1;
        if (rc <= 0)
            continue;
        out->framework = w->framework;
        add_value(out, w, &v);
    }
    if (out->n)
        out->tp_rank = tp_rank_of(s, n);
    return out->n;
}

void vr_servermem_labels(void (*fn)(void *ud, const char *requires, const char *label), void *ud)
{
    for (size_t k = 0; k < NWORDINGS; k++)
        fn(ud, wordings[k].requires ? wordings[k].requires : "", wordings[k].label);
}
