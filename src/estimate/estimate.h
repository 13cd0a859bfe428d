/*-*** estimate.h: how much GPU memory a training (or inference) job needs ***/
/*
 * Pure arithmetic, before any run: from a parameter count, a dtype, an
 * optimizer and (optionally) the transformer's shape, the bytes of each
 * part a GPU holds, after ZeRO sharding over N GPUs, and whether the total
 * fits a named GPU. Formulas and their sources: docs/estimate.md.
 *
 * Depends on util only (no database). Everything is caller-owned: the
 * lookups return pointers into static const tables, valid for the
 * program's life; nothing is allocated.
 */
#ifndef VR_ESTIMATE_H
#define VR_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* The largest parameter count taken: 10^15, so that bytes per parameter
 * times it stays far inside 64 bits. */
#define VR_ESTIMATE_MAX_PARAMS INT64_C(1000000000000000)

/* The other figures' bounds, the one place they are stated: the CLI
 * refuses an option beyond them, naming the bound (estimate.c's
 * table), and vr_estimate_compute refuses them from any other caller. */
#define VR_ESTIMATE_MAX_GPUS INT64_C(1000000)           /* --gpus */
#define VR_ESTIMATE_MAX_SHAPE INT64_C(1000000000)       /* --batch, --seq, --hidden, ... */
#define VR_ESTIMATE_MAX_BYTES INT64_C(1000000000000000) /* --workspace, --context: 1e15 */

typedef struct {
    const char *name;       /* canonical: "bf16" */
    int bits;               /* per element: 32, 16, 8, 4 */
    const char *aliases[4]; /* other spellings, NULL-terminated */
} vr_estimate_dtype;

typedef struct {
    const char *name;  /* canonical: "adamw"; "none" is inference */
    int state_bits;    /* optimizer state per parameter, in bits */
    int training;      /* 0 only for "none": no gradients, no state */
    const char *state; /* what the state is, for the table */
    const char *aliases[6];
} vr_estimate_optimizer;

/* The most name patterns one GPU has (reported[] below). */
#define VR_ESTIMATE_GPU_PATTERNS 4

typedef struct {
    const char *name;         /* canonical: "H100-80GB" */
    int64_t capacity;         /* bytes: the marketed size read as GiB */
    int64_t cublas_workspace; /* PyTorch's default for this architecture */
    const char *alias;        /* one more accepted spelling, or NULL */
    const char *memory_type;  /* "HBM3", "GDDR6X": the datasheet's */
    int64_t bandwidth;        /* peak memory bandwidth, bytes/s (decimal, as marketed) */
    /* Globs over the name nvidia-smi, gpustat, Kineto or ROCm report,
     * normalised (vr_estimate_gpu_match): lower case, every run of
     * characters other than letters and digits one space, a space at each
     * end: "NVIDIA A100-SXM4-80GB" is " nvidia a100 sxm4 80gb ". NULL-ended. */
    const char *reported[VR_ESTIMATE_GPU_PATTERNS + 1];
} vr_estimate_gpu;

typedef enum {
    VR_ESTIMATE_MASTER_AUTO = 0, /* fp32 master weights when training below fp32 */
    VR_ESTIMATE_MASTER_YES,
    VR_ESTIMATE_MASTER_NO /* "2 + 2 + 8": no fp32 master copy */
} vr_estimate_master;

typedef enum {
    VR_ESTIMATE_RECOMPUTE_NONE = 0,
    VR_ESTIMATE_RECOMPUTE_SELECTIVE, /* attention's s^2 part recomputed */
    VR_ESTIMATE_RECOMPUTE_FULL       /* only each layer's input kept */
} vr_estimate_recompute;

typedef struct {
    int64_t params;
    const vr_estimate_dtype *dtype;
    const vr_estimate_optimizer *optimizer;
    vr_estimate_master master;
    /* The transformer's shape, for the activations: all of seq, hidden,
     * layers, heads, or none (no activation estimate). batch is the
     * micro-batch per GPU. */
    int64_t batch, seq, hidden, layers, heads;
    vr_estimate_recompute recompute;
    int64_t gpus;               /* data-parallel ranks ZeRO shards over; 1 when alone */
    int zero;                   /* ZeRO stage 0..3 */
    const vr_estimate_gpu *gpu; /* NULL: no fit verdict */
    /* Overrides; -1 takes the default (docs/estimate.md). */
    int64_t workspace, context;
} vr_estimate_input;

/* Model states: what ZeRO shards. */
typedef struct {
    int64_t weights, gradients, master_weights, optimizer_state, total;
} vr_estimate_states;

typedef struct {
    vr_estimate_states whole;   /* one full copy, before sharding */
    vr_estimate_states per_gpu; /* after ZeRO over input.gpus (rounded up) */
    int master;                 /* fp32 master weights counted */
    int gradient_bits;          /* bits per gradient element */
    int has_activations;
    int64_t activations; /* per GPU: not sharded by ZeRO */
    int64_t workspace;   /* cuBLAS workspace */
    int64_t context;     /* CUDA context */
    int64_t total;       /* per GPU */
    /* With input.gpu: capacity - total (negative when it does not fit). */
    int64_t spare;
} vr_estimate;

/* The input with the defaults: 1 GPU, ZeRO 0, automatic master weights,
 * batch 1, default workspace and context; params, dtype and optimizer unset. */
void vr_estimate_input_init(vr_estimate_input *in);

/* Lookups by name, case-insensitive; NULL when unknown. */
const vr_estimate_dtype *vr_estimate_dtype_find(const char *name);
const vr_estimate_optimizer *vr_estimate_optimizer_find(const char *name);

/* A GPU by a name people write or nvidia-smi prints: "H100-80GB", "h100",
 * "NVIDIA H100 80GB HBM3", "4090", "MI300X". A name that starts more than
 * one entry ("A100") is refused, naming them. VR_ERR_USAGE on failure. */
const vr_estimate_gpu *vr_estimate_gpu_find(const char *name, vr_error *err);

/* The GPU a reported device name is ("NVIDIA A100 80GB PCIe", "Tesla
 * V100-SXM2-16GB", "AMD Instinct MI300X"): the entry with the longest
 * reported[] pattern the normalised name matches (the most specific:
 * "* a100 *80gb *pcie *" over "* a100 *80gb *"), the first on a tie; NULL
 * when none does or name is NULL. A walk over the one table. */
const vr_estimate_gpu *vr_estimate_gpu_match(const char *name);

/* The GPU table, for --list-gpus: entry i, or NULL past the end. */
const vr_estimate_gpu *vr_estimate_gpu_at(size_t i);

/* "7e9", "7B", "1.5T", "350M", "7000000000" -> a count in 1..10^15 (rounded
 * to the nearest integer). VR_ERR_USAGE naming what was expected. */
int vr_estimate_parse_count(const char *s, int64_t *out, vr_error *err);

/* The length of the decimal number that starts s: digits, an optional
 * fraction, an optional exponent ("7", "6.7", "7e9", "1.5e+3"). 0 when s
 * starts with none, and for what strtod or strtol would read in another
 * way or base: a sign, blanks, "0x10" (hex), "010" (octal to strtol),
 * "inf", "nan". Every number the estimate reads passes it. */
size_t vr_estimate_decimal(const char *s);

/* "32MiB", "500 MiB", "0", "1.5GB" -> bytes (before rounding): 1, or 0
 * when s is no size. A bare number is bytes; KiB/MiB/GiB are binary,
 * KB/MB/GB decimal, case-insensitive. */
int vr_estimate_read_size(const char *s, double *out);

/* The estimate. VR_ERR_USAGE for inputs that cannot be (a partial shape,
 * ZeRO outside 0..3, sizes whose product overflows 64 bits). */
int vr_estimate_compute(const vr_estimate_input *in, vr_estimate *out, vr_error *err);

/* Activations per GPU under Korthikanti et al. (arXiv:2205.05198), for
 * 16-bit activations; -1 on overflow. Exposed for the tests. */
int64_t vr_estimate_activations(const vr_estimate_input *in);

/* The parameter count a report's measured `parameter` bytes imply when
 * the weights are held in dtype: bytes * 8 / bits, rounded to nearest. For
 * putting the estimate beside a measured breakdown. */
int64_t vr_estimate_params_from_bytes(int64_t param_bytes, const vr_estimate_dtype *dtype);

#endif
