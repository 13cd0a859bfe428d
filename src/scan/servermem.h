/*-*** servermem.h: an inference server's memory lines, "model weights take 14.96GiB" ***/
/*
 * vLLM and SGLang say at start-up where their GPU memory goes: the
 * weights they loaded, the activations their profiling run peaked at,
 * the memory outside PyTorch, what is left for the KV cache and how many
 * blocks or tokens of it they allocated (docs/formats/job-log-oom.md,
 * "Inference servers' memory lines"). This reader finds those figures in
 * a log line: its wordings are a static table (servermem.c), each a
 * label and what the number after it is; sizes are read as the memory
 * prints read them (memprint.h: 1024-based, what both servers compute:
 * they divide by 2**30 and print "GB" or "GiB").
 *
 * Database-free (the job-log reader writes; tests drive it alone).
 */
#ifndef VR_SERVERMEM_H
#define VR_SERVERMEM_H

#include <stddef.h>
#include <stdint.h>

/* The figures a line can give, their names as stored
 * (server_memory.figure). */
typedef enum {
    VR_SM_WEIGHTS = 0,     /* bytes: the model's weights as loaded */
    VR_SM_KV_CACHE,        /* bytes: the KV cache (vLLM: memory left for it; SGLang: K + V) */
    VR_SM_ACTIVATION_PEAK, /* bytes: the profiling run's activation peak */
    VR_SM_NON_TORCH,       /* bytes: memory outside PyTorch's allocator */
    VR_SM_TORCH_PEAK,      /* bytes: PyTorch's peak in the profiling run */
    VR_SM_TOTAL,           /* bytes: the device's memory as the server saw it */
    VR_SM_GPU_BLOCKS,      /* count: KV cache blocks on the GPU */
    VR_SM_CPU_BLOCKS,      /* count: KV cache blocks for swapping to the host */
    VR_SM_KV_TOKENS,       /* count: tokens the KV cache holds */
    VR_SM_FIGURES
} vr_servermem_figure;

extern const char *const vr_servermem_figure_names[VR_SM_FIGURES];

#define VR_SERVERMEM_MAX 8 /* figures a line gives at most */

typedef struct {
    vr_servermem_figure figure;
    int is_count;
    int64_t value;    /* bytes, or the count */
    const char *unit; /* as printed ("GiB", "GB"); NULL for a count */
} vr_servermem_value;

typedef struct {
    const char *framework; /* 'vllm' or 'sglang' */
    vr_servermem_value v[VR_SERVERMEM_MAX];
    size_t n;
    int64_t tp_rank; /* the tensor-parallel rank the line names ("TP1]"), or -1 */
    int impossible;  /* a figure of the line was no size (over 1 PiB) or count: left out */
} vr_servermem;

/* Reads a log line (cleaned): the number of figures it gives (0: none,
 * it is no server's memory line), in *out. A figure that cannot be (a
 * size over 1 PiB, a count past 10^15) is left out and flagged. */
size_t vr_servermem_match(const char *line, size_t len, vr_servermem *out);

/* Whether the line may hold a wording: 0 when it holds none of the
 * bytes every wording's label has one of (the quick refusal
 * vr_servermem_match() starts with). */
int vr_servermem_may_match(const char *line, size_t len);

/* Each wording's `requires` text ("" when none) and label, for a check
 * that the job-log scanner's needles cover them: calls fn(ud, requires,
 * label). */
void vr_servermem_labels(void (*fn)(void *ud, const char *requires, const char *label), void *ud);

#endif
