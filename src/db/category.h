/*-*** category.h: PyTorch's memory-profiler categories ***/
/*
 * The categories a memory event or an allocation belongs to: PyTorch's,
 * spelled and ordered as torch/profiler/_memory_profiler.py's
 * _CATEGORY_TO_INDEX, with one of vramreport's own after "activation":
 * "kv_cache", the key/value cache an inference server (vLLM, SGLang,
 * TensorRT-LLM) or a generate() loop keeps (PyTorch's profiler has no
 * name for it). The one list every importer, pass and renderer uses, so
 * the database, the JSON and the report agree. The memory timeline's
 * indices are PyTorch's own (its reader maps them by name). A NULL or
 * unrecognised category is "unknown".
 */
#ifndef VR_CATEGORY_H
#define VR_CATEGORY_H

#include <stdint.h>

#define VR_CATEGORY_COUNT 9
#define VR_CATEGORY_KV_CACHE 5
#define VR_CATEGORY_UNKNOWN 8

/* "parameter", "optimizer_state", "input", "temporary", "activation",
 * "kv_cache", "gradient", "autograd_detail", "unknown". */
extern const char *const vr_category_names[VR_CATEGORY_COUNT];

/* The index of `name` (NULL or not a category: VR_CATEGORY_UNKNOWN). */
int vr_category_index(const char *name);

/* Bytes per category made to sum to `target` (below 0: 0) exactly, as the
 * breakdown shows them. Negative figures (memory freed that was allocated
 * before the record) count as none. What the categories do not reach goes
 * to unknown; when they exceed the target (the allocator's total is below
 * what the record holds live: events lost or mispaired), each is scaled
 * down in proportion, rounded down, and the bytes the rounding leaves go
 * to the largest. `in` and `out` may be the same array. */
void vr_category_settle(const int64_t in[VR_CATEGORY_COUNT], int64_t target,
                        int64_t out[VR_CATEGORY_COUNT]);

#endif
