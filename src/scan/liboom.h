/*-*** liboom.h: out-of-memory errors raised outside PyTorch's allocator ***/
/*
 * The job-log scanner's (joblog_scan.h) second table of wordings: the
 * errors other libraries print when the GPU is full (the CUDA driver and
 * runtime through a C++ library, cuBLAS, cuDNN, NCCL, CuPy, TensorFlow's
 * BFC allocator, JAX/XLA, vLLM's start-up checks), each with the figures
 * its text gives (docs/formats/job-log-oom.md, "Other libraries"). Pure
 * text matching: no state, no allocation.
 */
#ifndef VR_LIBOOM_H
#define VR_LIBOOM_H

#include <stddef.h>

#include "scan/oom.h"

/* Which library wording the cleaned line holds: its index, -1 when none
 * (a line that only mentions an OOM, or a warning that is no failure). */
int vr_liboom_match(const char *line, size_t len);

/* The wording's name (oom_event.wording) and its family: the copies one
 * failure prints (NCCL's repeated WARN lines, TensorFlow's allocator line,
 * op error and Python exception) share a family and fold into one OOM. */
const char *vr_liboom_wording(int k);
const char *vr_liboom_family(int k);
/* Whether the wording announces an error that comes later, far after
 * it (TensorFlow's allocator line: its dump of chunks and stats come
 * between): held, and the error's OOM takes its figures. */
int vr_liboom_opens(int k);

/* The figures the line gives, set in `o` (which the caller reset). */
void vr_liboom_figures(int k, const char *line, size_t len, vr_oom *o);

/* TensorFlow's allocator stats ("Limit:", "InUse:", "MaxInUse:" lines
 * that follow its "ran out of memory" line) in `text`: Limit as the
 * allowed memory, InUse as allocated; 1 when found. */
int vr_liboom_tf_stats(const char *text, size_t len, vr_oom *o);

#endif
