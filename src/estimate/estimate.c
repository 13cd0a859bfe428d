/*-*** estimate.c: the memory a job will need, from its size and settings ***/
/*
 * Model states (weights, gradients, fp32 master weights, optimizer state)
 * per ZeRO (Rajbhandari et al., arXiv:1910.02054): 16 bytes per parameter
 * for bf16/fp16 training with Adam, sharded over N data-parallel GPUs by
 * stage. Activations per Korthikanti et al. (arXiv:2205.05198). Workspace
 * and CUDA context are fixed per-GPU figures. docs/estimate.md has every
 * formula, figure and source; the tables below are the figures.
 */
#include "estimate/estimate.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/sat.h"

#define KIB INT64_C(1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)

/* PyTorch's default cuBLAS workspace per (handle, stream), from
 * aten/src/ATen/cuda/CublasHandlePool.cpp parseChosenWorkspaceSize():
 * ":4096:2:16:8" in general, 32 MiB on sm_90 (Hopper); on ROCm 32 MiB,
 * 128 MiB on gfx94x/gfx95x (MI300X, MI325X). cuBLASLt shares it (the
 * unified workspace is the default outside fbcode). */
#define WS_CUDA (4096 * KIB * 2 + 16 * KIB * 8)
#define WS_SM90 (32 * MIB)
#define WS_ROCM (32 * MIB)
#define WS_GFX94 (128 * MIB)

/* Without --gpu: the Hopper figure, the largest NVIDIA default. */
#define WS_DEFAULT WS_SM90

/* The CUDA context with lazy module loading (the default since PyTorch
 * 1.13 / CUDA 11.7): 287,047,680 bytes measured in pytorch/pytorch PR
 * #86509, "around 400MB" (pytorch/pytorch#109888), 426 MiB on an RTX 6000
 * Ada (unslothai/unsloth-zoo PR #1053). It grows as kernels load, so the
 * upper end of the usual 300-500 MiB. */
#define CONTEXT_DEFAULT (500 * MIB)

static const vr_estimate_dtype dtypes[] = {
    {"fp32", 32, {"float32", "float", "f32", NULL}},
    {"bf16", 16, {"bfloat16", NULL}},
    {"fp16", 16, {"float16", "half", "f16", NULL}},
    {"fp8", 8, {"float8", "e4m3", "e5m2", NULL}},
    {"int8", 8, {"8bit", NULL}},
    {"int4", 4, {"4bit", "nf4", "fp4", NULL}},
};

/* Optimizer state in bits per parameter, beyond the weights, gradients
 * and master weights. */
static const vr_estimate_optimizer optimizers[] = {
    {"adamw", 64, 1, "2 fp32 moments", {"adam", NULL}},
    {"adam-8bit",
     16,
     1,
     "2 8-bit moments (bitsandbytes)",
     {"adamw-8bit", "adam8bit", "adamw8bit", "bnb", "bitsandbytes", NULL}},
    {"sgd", 32, 1, "fp32 momentum", {"sgd-momentum", NULL}},
    {"sgd-nomomentum", 0, 1, "no state", {"sgd-plain", NULL}},
    /* Factored second moment: rows + columns per matrix, which is under
     * 0.1% of the matrix's parameters once both sides exceed 2000; counted
     * as none. No first moment (torch.optim.Adafactor has none). */
    {"adafactor", 0, 1, "factored, counted as 0", {NULL}},
    {"lion", 32, 1, "1 fp32 momentum", {NULL}},
    {"none", 0, 0, "inference: no optimizer", {"inference", NULL}},
};

/* Capacities are the marketed figure read as GiB: HBM and GDDR come in
 * binary sizes, so "80GB" is 80 GiB of chips. What a process can use is
 * less: nvidia-smi on an idle H100 80GB HBM3 shows 81559 MiB total and
 * 81081 MiB free (a capture from utkuozdemir/nvidia_gpu_exporter, cited in
 * docs/estimate.md).
 *
 * Memory type and peak bandwidth are the vendor datasheets' (decimal: 1
 * TB/s is 10^12 bytes/s), each cited in docs/estimate.md. A PCIe card
 * whose memory differs from its SXM sibling's (A100 80GB, H100) is an
 * entry of its own; one whose memory does not (A100 40GB, V100) is not.
 * An entry that ties another's capacity comes after it: the estimate's
 * "smallest GPU that fits" names the first.
 *
 * reported[]: globs over the normalised name (estimate.h); a space is a
 * word's edge, so "* l4 *" is not L40S, "* a10 *" not A100, and a pattern
 * ending in a space ("* rtx 3090 ") takes no suffix ("RTX 3090 Ti"). */
#define GBS INT64_C(1000000000) /* 1 GB/s */
static const vr_estimate_gpu gpus[] = {
    {"V100-16GB", 16 * GIB, WS_CUDA, NULL, "HBM2", 900 * GBS, {"* v100 *16gb *", NULL}},
    {"V100-32GB", 32 * GIB, WS_CUDA, NULL, "HBM2", 900 * GBS, {"* v100 *32gb *", NULL}},
    {"T4", 16 * GIB, WS_CUDA, NULL, "GDDR6", 320 * GBS, {"* t4 *", NULL}},
    {"L4", 24 * GIB, WS_CUDA, NULL, "GDDR6", 300 * GBS, {"* l4 *", NULL}},
    {"A10", 24 * GIB, WS_CUDA, NULL, "GDDR6", 600 * GBS, {"* a10 *", NULL}},
    {"A10G", 24 * GIB, WS_CUDA, NULL, "GDDR6", 600 * GBS, {"* a10g *", NULL}},
    {"A100-40GB", 40 * GIB, WS_CUDA, NULL, "HBM2", 1555 * GBS, {"* a100 *40gb *", NULL}},
    {"A100-80GB", 80 * GIB, WS_CUDA, NULL, "HBM2e", 2039 * GBS, {"* a100 *80gb *", NULL}},
    {"A100-80GB-PCIe",
     80 * GIB,
     WS_CUDA,
     NULL,
     "HBM2e",
     1935 * GBS,
     {"* a100 *80gb *pcie *", "* a100 *pcie *80gb *", NULL}},
    {"H100-80GB",
     80 * GIB,
     WS_SM90,
     "h100",
     "HBM3",
     3350 * GBS,
     {"* h100 *hbm3 *", "* h100 sxm*", NULL}},
    {"H100-PCIe", 80 * GIB, WS_SM90, NULL, "HBM2e", 2000 * GBS, {"* h100 *pcie *", NULL}},
    {"H100-NVL", 94 * GIB, WS_SM90, NULL, "HBM3", 3900 * GBS, {"* h100 nvl *", NULL}},
    {"H200-141GB", 141 * GIB, WS_SM90, NULL, "HBM3e", 4800 * GBS, {"* h200 *", NULL}},
    {"L40S", 48 * GIB, WS_CUDA, NULL, "GDDR6", 864 * GBS, {"* l40s *", NULL}},
    {"RTX-A6000", 48 * GIB, WS_CUDA, NULL, "GDDR6", 768 * GBS, {"* rtx a6000 *", NULL}},
    {"RTX-3090", 24 * GIB, WS_CUDA, NULL, "GDDR6X", 936 * GBS, {"* rtx 3090 ", NULL}},
    {"RTX-4090", 24 * GIB, WS_CUDA, NULL, "GDDR6X", 1008 * GBS, {"* rtx 4090 ", NULL}},
    {"RTX-5090", 32 * GIB, WS_CUDA, NULL, "GDDR7", 1792 * GBS, {"* rtx 5090 ", NULL}},
    {"MI250X", 128 * GIB, WS_ROCM, NULL, "HBM2e", 3277 * GBS, {"* mi250x *", NULL}},
    {"MI300X", 192 * GIB, WS_GFX94, NULL, "HBM3", 5300 * GBS, {"* mi300x *", NULL}},
    {"MI325X", 256 * GIB, WS_GFX94, NULL, "HBM3E", 6000 * GBS, {"* mi325x *", NULL}},
};

#define COUNT(a) (sizeof(a) / sizeof *(a))

const vr_estimate_gpu *vr_estimate_gpu_at(size_t i)
{
    return i < COUNT(gpus) ? &gpus[i] : NULL;
}

static int named(const char *name, const char *canonical, const char *const *aliases)
{
    if (strcasecmp(name, canonical) == 0)
        return 1;
    for (size_t i = 0; aliases[i]; i++)
        if (strcasecmp(name, aliases[i]) == 0)
            return 1;
    return 0;
}

const vr_estimate_dtype *vr_estimate_dtype_find(const char *name)
{
    for (size_t i = 0; name && i < COUNT(dtypes); i++)
        if (named(name, dtypes[i].name, dtypes[i].aliases))
            return &dtypes[i];
    return NULL;
}

const vr_estimate_optimizer *vr_estimate_optimizer_find(const char *name)
{
    for (size_t i = 0; name && i < COUNT(optimizers); i++)
        if (named(name, optimizers[i].name, optimizers[i].aliases))
            return &optimizers[i];
    return NULL;
}

/*-*** GPU names ***/

/* Words that vendors put around a model name, and packaging and memory
 * words nvidia-smi prints in it ("NVIDIA A100-SXM4-80GB", "NVIDIA H100
 * 80GB HBM3"): dropped before comparing. Longest first where one contains
 * another. */
static const char *const name_prefixes[] = {"nvidia", "geforce",  "tesla",  "quadro",
                                            "amd",    "instinct", "radeon", "rtx"};
static const char *const name_noise[] = {"sxm2",  "sxm4", "sxm5",  "sxm", "pcie",
                                         "hbm3e", "hbm3", "hbm2e", "hbm2"};

static void drop_all(char *s, const char *word)
{
    size_t n = strlen(word);
    char *p;
    while ((p = strstr(s, word)) != NULL)
        memmove(p, p + n, strlen(p + n) + 1);
}

static void drop_prefixes(char *s)
{
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; i < COUNT(name_prefixes); i++) {
            size_t n = strlen(name_prefixes[i]);
            if (strncmp(s, name_prefixes[i], n) == 0 && s[n]) {
                memmove(s, s + n, strlen(s + n) + 1);
                again = 1;
            }
        }
    }
}

static void drop_suffix(char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    if (n > k && strcmp(s + n - k, suffix) == 0)
        s[n - k] = '\0';
}

/* Lower-case letters and digits only, vendor words dropped: "RTX 4090" and
 * "4090" are both "4090"; "H100-80GB" is "h10080". */
static void normalize_gpu_name(const char *name, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < size; p++)
        if (isalnum((unsigned char)*p))
            out[n++] = (char)tolower((unsigned char)*p);
    out[n] = '\0';
    drop_prefixes(out);
    for (size_t i = 0; i < COUNT(name_noise); i++)
        drop_all(out, name_noise[i]);
    drop_suffix(out, "gib");
    drop_suffix(out, "gb");
}

static const vr_estimate_gpu *gpu_exact(const char *key)
{
    char canon[64], alias[64];
    for (size_t i = 0; i < COUNT(gpus); i++) {
        normalize_gpu_name(gpus[i].name, canon, sizeof canon);
        if (strcmp(key, canon) == 0)
            return &gpus[i];
        if (gpus[i].alias) {
            normalize_gpu_name(gpus[i].alias, alias, sizeof alias);
            if (strcmp(key, alias) == 0)
                return &gpus[i];
        }
    }
    return NULL;
}

/* Entries whose name starts with key: "h200" is H200-141GB, "a100" two. */
static size_t gpu_prefixed(const char *key, const vr_estimate_gpu **first, char *names,
                           size_t size)
{
    char canon[64];
    size_t found = 0, len = strlen(key), used = 0;
    names[0] = '\0';
    for (size_t i = 0; i < COUNT(gpus); i++) {
        normalize_gpu_name(gpus[i].name, canon, sizeof canon);
        if (strncmp(key, canon, len) != 0)
            continue;
        if (found++ == 0)
            *first = &gpus[i];
        int w = snprintf(names + used, size - used, "%s%s", used ? ", " : "", gpus[i].name);
        if (w > 0 && (size_t)w < size - used)
            used += (size_t)w;
    }
    return found;
}

/* The reported name as the patterns see it: " nvidia a100 sxm4 80gb ".
 * Longer names are cut (no GPU name comes near). */
static void normalize_reported(const char *name, char *out, size_t size)
{
    size_t n = 0;
    out[n++] = ' ';
    for (const char *p = name; *p && n + 2 < size; p++) {
        if (isalnum((unsigned char)*p))
            out[n++] = (char)tolower((unsigned char)*p);
        else if (out[n - 1] != ' ')
            out[n++] = ' ';
    }
    if (out[n - 1] != ' ')
        out[n++] = ' ';
    out[n] = '\0';
}

const vr_estimate_gpu *vr_estimate_gpu_match(const char *name)
{
    char norm[128];
    if (!name)
        return NULL;
    normalize_reported(name, norm, sizeof norm);
    const vr_estimate_gpu *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < COUNT(gpus); i++)
        for (const char *const *pat = gpus[i].reported; *pat; pat++)
            if (strlen(*pat) > best_len && fnmatch(*pat, norm, 0) == 0) {
                best = &gpus[i];
                best_len = strlen(*pat);
            }
    return best;
}

/* A product name as nvidia-smi prints it decides first ("NVIDIA H100
 * PCIe" is not the SXM H100 that "h100" means); then the table's own
 * names and aliases; then the one entry a prefix starts. */
const vr_estimate_gpu *vr_estimate_gpu_find(const char *name, vr_error *err)
{
    char key[64], names[512];
    normalize_gpu_name(name, key, sizeof key);
    if (!key[0]) {
        vr_fail_code(err, VR_ERR_USAGE, "--gpu '%s': give a GPU name", name);
        return NULL;
    }
    const vr_estimate_gpu *gpu = vr_estimate_gpu_match(name);
    if (gpu)
        return gpu;
    gpu = gpu_exact(key);
    if (gpu)
        return gpu;
    size_t found = gpu_prefixed(key, &gpu, names, sizeof names);
    if (found == 1)
        return gpu;
    if (found > 1)
        vr_fail_code(err, VR_ERR_USAGE, "--gpu '%s' is ambiguous: say which of %s", name, names);
    else
        vr_fail_code(err, VR_ERR_USAGE, "unknown GPU '%s'", name);
    return NULL;
}

/*-*** Counts ***/

static const struct {
    char suffix;
    double scale;
} count_suffixes[] = {
    {'k', 1e3}, {'K', 1e3}, {'m', 1e6}, {'M', 1e6},  {'b', 1e9},
    {'B', 1e9}, {'g', 1e9}, {'G', 1e9}, {'t', 1e12}, {'T', 1e12},
};

static double count_scale(const char *end)
{
    if (!*end)
        return 1;
    for (size_t i = 0; i < COUNT(count_suffixes) && !end[1]; i++)
        if (*end == count_suffixes[i].suffix)
            return count_suffixes[i].scale;
    return 0;
}

static size_t digits_at(const char *s)
{
    size_t n = 0;
    while (isdigit((unsigned char)s[n]))
        n++;
    return n;
}

size_t vr_estimate_decimal(const char *s)
{
    size_t n = digits_at(s);
    if (n == 0 || (s[0] == '0' && n > 1))
        return 0; /* none, or a leading zero: octal to strtol */
    if (s[n] == '.')
        n += 1 + digits_at(s + n + 1);
    if (s[n] == 'e' || s[n] == 'E') {
        size_t sign = s[n + 1] == '+' || s[n + 1] == '-';
        size_t exp = digits_at(s + n + 1 + sign);
        if (exp)
            n += 1 + sign + exp;
    }
    return n;
}

int vr_estimate_parse_count(const char *s, int64_t *out, vr_error *err)
{
    char *end;
    errno = 0;
    size_t n = vr_estimate_decimal(s);
    double v = n ? strtod(s, &end) : 0;
    double scale = n && end == s + n ? count_scale(end) : 0;
    if (scale == 0 || errno == ERANGE || !isfinite(v))
        return vr_fail_code(err, VR_ERR_USAGE,
                            "'%s' is not a decimal count (write 7e9, 7B, 350M or 7000000000)", s);
    v *= scale;
    if (!(v >= 0.5 && v <= (double)VR_ESTIMATE_MAX_PARAMS))
        return vr_fail_code(err, VR_ERR_USAGE, "'%s' is out of range (1 to 1e15)", s);
    *out = (int64_t)llround(v);
    return 0;
}

/*-*** The estimate ***/

void vr_estimate_input_init(vr_estimate_input *in)
{
    memset(in, 0, sizeof *in);
    in->batch = 1;
    in->gpus = 1;
    in->workspace = -1;
    in->context = -1;
}

static int64_t bytes_of(int64_t params, int bits)
{
    /* params <= 1e15 and bits <= 64: no overflow. Rounded up (int4). */
    return (params * bits + 7) / 8;
}

static int64_t shard(int64_t bytes, int64_t n)
{
    return (bytes + n - 1) / n;
}

static int has_shape(const vr_estimate_input *in)
{
    return in->seq > 0 && in->hidden > 0 && in->layers > 0 && in->heads > 0;
}

static int64_t mul3(int64_t a, int64_t b, int64_t c)
{
    return vr_sat_mul(vr_sat_mul(a, b), c);
}

/* One layer's activations in bytes, 16-bit: s*b*h*(34 + 5*a*s/h), written
 * as 34*s*b*h + 5*a*s^2*b so that it stays in integers. Selective
 * recompute keeps 34*s*b*h, full recompute the layer's input, 2*s*b*h. */
static int64_t layer_activations(const vr_estimate_input *in, vr_estimate_recompute r)
{
    int64_t sbh = mul3(in->seq, in->batch, in->hidden);
    if (r == VR_ESTIMATE_RECOMPUTE_FULL)
        return vr_sat_mul(2, sbh);
    int64_t linear = vr_sat_mul(34, sbh);
    if (r == VR_ESTIMATE_RECOMPUTE_SELECTIVE)
        return linear;
    int64_t attention = vr_sat_mul(mul3(5, in->heads, in->seq), mul3(in->seq, in->batch, 1));
    return vr_sat_add(linear, attention);
}

int64_t vr_estimate_activations(const vr_estimate_input *in)
{
    if (!has_shape(in) || in->batch < 1 || !in->optimizer || !in->dtype)
        return 0;
    int64_t total;
    if (in->optimizer->training)
        total = vr_sat_mul(in->layers, layer_activations(in, in->recompute));
    else /* nothing is kept for a backward pass: one layer's working set */
        total = layer_activations(in, VR_ESTIMATE_RECOMPUTE_NONE);
    /* The formula counts 2-byte elements; fp32 doubles them (the 1-byte
     * dropout masks too, a slight overcount). */
    if (in->dtype->bits == 32)
        total = vr_sat_mul(2, total);
    return total >= INT64_MAX / 4 ? -1 : total;
}

static int use_master(const vr_estimate_input *in)
{
    if (!in->optimizer->training)
        return 0;
    if (in->master == VR_ESTIMATE_MASTER_AUTO)
        return in->dtype->bits < 32;
    return in->master == VR_ESTIMATE_MASTER_YES;
}

static int check_counts(const vr_estimate_input *in, vr_error *err)
{
    if (!in->dtype || !in->optimizer)
        return vr_fail_code(err, VR_ERR_USAGE, "the estimate needs a dtype and an optimizer");
    if (in->params < 1 || in->params > VR_ESTIMATE_MAX_PARAMS)
        return vr_fail_code(err, VR_ERR_USAGE, "the parameter count must be 1 to 1e15");
    if (in->zero < 0 || in->zero > 3)
        return vr_fail_code(err, VR_ERR_USAGE, "ZeRO stage %d: give 0, 1, 2 or 3", in->zero);
    if (in->gpus < 1 || in->gpus > VR_ESTIMATE_MAX_GPUS)
        return vr_fail_code(err, VR_ERR_USAGE, "the GPU count must be 1 to %lld",
                            (long long)VR_ESTIMATE_MAX_GPUS);
    if (in->workspace < -1 || in->context < -1)
        return vr_fail_code(err, VR_ERR_USAGE, "workspace and context cannot be negative");
    return 0;
}

static int check_shape(const vr_estimate_input *in, vr_error *err)
{
    int given = (in->seq > 0) + (in->hidden > 0) + (in->layers > 0) + (in->heads > 0);
    if (given != 0 && given != 4)
        return vr_fail_code(err, VR_ERR_USAGE,
                            "activations need all of --seq, --hidden, --layers and --heads");
    if (in->seq < 0 || in->hidden < 0 || in->layers < 0 || in->heads < 0 || in->batch < 1)
        return vr_fail_code(err, VR_ERR_USAGE, "shape sizes must be positive");
    if (in->recompute != VR_ESTIMATE_RECOMPUTE_NONE && !in->optimizer->training)
        return vr_fail_code(err, VR_ERR_USAGE,
                            "checkpointing applies to training, not inference");
    if (in->recompute != VR_ESTIMATE_RECOMPUTE_NONE && given == 0)
        return vr_fail_code(err, VR_ERR_USAGE,
                            "checkpointing needs the shape: --seq, --hidden, --layers, --heads");
    return 0;
}

static int check_master(const vr_estimate_input *in, vr_error *err)
{
    if (in->master != VR_ESTIMATE_MASTER_YES)
        return 0;
    if (!in->optimizer->training)
        return vr_fail_code(err, VR_ERR_USAGE, "master weights apply to training, not inference");
    if (in->dtype->bits >= 32)
        return vr_fail_code(err, VR_ERR_USAGE,
                            "fp32 weights are their own master copy (drop --master-weights)");
    return 0;
}

static void model_states(const vr_estimate_input *in, vr_estimate *out)
{
    vr_estimate_states *w = &out->whole;
    out->master = use_master(in);
    /* No framework keeps 8- or 4-bit gradients: at least 16 bits. */
    out->gradient_bits = in->dtype->bits < 16 ? 16 : in->dtype->bits;
    w->weights = bytes_of(in->params, in->dtype->bits);
    w->gradients = in->optimizer->training ? bytes_of(in->params, out->gradient_bits) : 0;
    w->master_weights = out->master ? bytes_of(in->params, 32) : 0;
    w->optimizer_state = bytes_of(in->params, in->optimizer->state_bits);
    w->total = w->weights + w->gradients + w->master_weights + w->optimizer_state;
}

/* ZeRO: stage 1 shards the optimizer state (the fp32 master weights are
 * part of it, the paper's K = 12), stage 2 the gradients too, stage 3 the
 * weights too. */
static void zero_shard(const vr_estimate_input *in, vr_estimate *out)
{
    const vr_estimate_states *w = &out->whole;
    vr_estimate_states *g = &out->per_gpu;
    int64_t n = in->gpus;
    g->master_weights = in->zero >= 1 ? shard(w->master_weights, n) : w->master_weights;
    g->optimizer_state = in->zero >= 1 ? shard(w->optimizer_state, n) : w->optimizer_state;
    g->gradients = in->zero >= 2 ? shard(w->gradients, n) : w->gradients;
    g->weights = in->zero >= 3 ? shard(w->weights, n) : w->weights;
    g->total = g->weights + g->gradients + g->master_weights + g->optimizer_state;
}

int vr_estimate_compute(const vr_estimate_input *in, vr_estimate *out, vr_error *err)
{
    memset(out, 0, sizeof *out);
    if (check_counts(in, err) < 0 || check_shape(in, err) < 0 || check_master(in, err) < 0)
        return -1;
    model_states(in, out);
    zero_shard(in, out);
    out->has_activations = has_shape(in);
    out->activations = vr_estimate_activations(in);
    if (out->activations < 0)
        return vr_fail_code(err, VR_ERR_USAGE,
                            "the activations of that shape overflow 64 bits: check the sizes");
    out->workspace = in->workspace >= 0 ? in->workspace
                     : in->gpu          ? in->gpu->cublas_workspace
                                        : WS_DEFAULT;
    out->context = in->context >= 0 ? in->context : CONTEXT_DEFAULT;
    out->total = vr_sat_add(vr_sat_add(out->per_gpu.total, out->activations),
                            vr_sat_add(out->workspace, out->context));
    out->spare = in->gpu ? vr_sat_sub(in->gpu->capacity, out->total) : 0;
    return 0;
}

int64_t vr_estimate_params_from_bytes(int64_t param_bytes, const vr_estimate_dtype *dtype)
{
    if (param_bytes <= 0 || !dtype || dtype->bits <= 0)
        return 0;
    /* bytes * 8 / bits, rounded; in long double so that a byte count near
     * INT64_MAX does not overflow. */
    long double p = (long double)param_bytes * 8.0L / (long double)dtype->bits;
    return p >= (long double)INT64_MAX ? INT64_MAX : (int64_t)llroundl(p);
}

/*-*** sizes ***/

static const struct {
    const char *unit;
    double scale;
} size_units[] = {
    {"", 1},     {"B", 1},    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
    {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
};

int vr_estimate_read_size(const char *s, double *out)
{
    size_t n = vr_estimate_decimal(s);
    if (!n)
        return 0;
    errno = 0;
    double v = strtod(s, NULL);
    const char *unit = s + n;
    while (*unit == ' ')
        unit++;
    for (size_t i = 0; errno == 0 && i < sizeof size_units / sizeof *size_units; i++)
        if (strcasecmp(unit, size_units[i].unit) == 0) {
            *out = v * size_units[i].scale;
            return 1;
        }
    return 0;
}
