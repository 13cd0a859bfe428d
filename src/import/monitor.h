/*-*** monitor.h: rows of the monitoring readers (nvidia-smi) ***/
/*
 * What every nvidia-smi reader (CSV queries, the table, -q text, -q -x
 * XML) writes, in one place: GPUs as the file identifies them, readings
 * of their memory, and the processes on them (migration 6: gpu,
 * gpu_sample, process_sample). Also the value syntax they share: sizes
 * with units ("81559 MiB", "[N/A]") and nvidia-smi's time stamps.
 *
 * A GPU is found again within one source by its UUID, else its PCI bus
 * id, else its index (and MIG instance), so a log repeating the table
 * every second has one gpu row per GPU. Sightings that name it by
 * different identifiers are the same GPU when one identifier both give is
 * equal and none they both give differs: the table's (index, bus id), the
 * CSV's (uuid, bus id, index) and --query-compute-apps' (uuid, bus id)
 * rows of one GPU meet in one gpu row. Bus ids compare as numbers
 * ("0000:18:00.0" is "00000000:18:00.0"). Which device of the job a GPU is
 * (nvidia-smi numbers them physically, PyTorch after
 * CUDA_VISIBLE_DEVICES) is decided by the analysis, not here.
 *
 * Ownership: a vr_monitor is caller-owned (vr_monitor_init/free) for one
 * import; the strings in the structs passed in are only read during the
 * call. A figure a file leaves out is VR_MONITOR_NONE.
 */
#ifndef VR_MONITOR_H
#define VR_MONITOR_H

#include <stddef.h>
#include <stdint.h>

#include "import/reader.h"

#define VR_MONITOR_NONE INT64_C(-1)

/* A span of text; {NULL, 0} when absent. */
typedef struct {
    const char *s;
    size_t len;
} vr_monitor_text;

typedef struct {
    vr_monitor_text uuid;   /* "GPU-6a5d..." (a MIG device: "MIG-...") */
    vr_monitor_text bus_id; /* "00000000:18:00.0" */
    vr_monitor_text name;   /* "NVIDIA A100-SXM4-80GB" */
    vr_monitor_text mig;    /* "GI 1 / CI 0" for a MIG instance */
    vr_monitor_text host;
    int64_t idx; /* nvidia-smi's index, or NONE */
    int64_t memory_total_bytes;
} vr_monitor_gpu;

typedef struct {
    int64_t ts_ns; /* see reader.h vr_clock_kind; NONE: no time */
    int64_t used_bytes, total_bytes, free_bytes, reserved_bytes;
    int64_t util_gpu_pct, util_memory_pct;
} vr_monitor_sample;

typedef struct {
    int64_t pid;
    vr_monitor_text name;
    vr_monitor_text type; /* "C", "G", "C+G" */
    int64_t used_bytes;
} vr_monitor_process;

/* A GPU seen in this source: hashes of what identifies it (0: not
 * given yet; learnt from later sightings), and which of its row's
 * columns are filled (monitor.c's FILLED_* bits), so a sighting that
 * adds nothing writes nothing. */
typedef struct {
    int64_t id;
    uint64_t uuid, bus, mig;
    int64_t idx;
    unsigned filled;
} vr_monitor_known;

typedef struct {
    vr_import_ctx *ctx;
    int64_t seq; /* samples stored */
    vr_monitor_known *known;
    size_t n, cap;
} vr_monitor;

/* The input's name for messages ("<input>" without one: a fuzz target
 * or a test feeding lines). */
const char *vr_monitor_where(const vr_monitor *m);

/* Every field of a sample or GPU set to NONE / empty. */
void vr_monitor_sample_clear(vr_monitor_sample *s);
void vr_monitor_gpu_clear(vr_monitor_gpu *g);

void vr_monitor_init(vr_monitor *m, vr_import_ctx *ctx);
void vr_monitor_free(vr_monitor *m);

/* GPUs one source may name: a cluster's gathered logs stay far below;
 * past it the file is not a machine's log (and each sighting, searched
 * among the known, would cost ever more). */
#define VR_MONITOR_MAX_GPUS 1024

/* The gpu row of `g` in this source (created on first sight; a later
 * sighting fills in a name or total the first one lacked). Returns the
 * id, or -1 on a database error or past VR_MONITOR_MAX_GPUS GPUs
 * (VR_ERR_MALFORMED). */
int64_t vr_monitor_gpu_id(vr_monitor *m, const vr_monitor_gpu *g, vr_error *err);

/* Stores a reading; returns its id (for processes), or -1. Counts it in
 * ctx->events and widens ctx->start_ns/end_ns by its time. */
int64_t vr_monitor_add_sample(vr_monitor *m, int64_t gpu_id, const vr_monitor_sample *s,
                              vr_error *err);

/* Stores a process seen on gpu_id (NONE: the file does not say which),
 * with the reading it came with (sample_id, or NONE) and its time. */
int vr_monitor_add_process(vr_monitor *m, int64_t gpu_id, int64_t sample_id, int64_t ts_ns,
                           const vr_monitor_process *p, vr_error *err);

/* A size as nvidia-smi writes it: "81559 MiB", "81559MiB", " 4 GiB ":
 * digits with an optional fraction and unit (B, KiB, MiB, GiB, TiB, and
 * KB/MB/GB read as binary, as nvidia-smi means them), surrounding spaces
 * allowed; a bare number is in `default_unit` bytes (the CSV's
 * "memory.used [MiB]" header with nounits). Returns 1 and *bytes; 0 for
 * "[N/A]", "N/A", "[Not Supported]", "[Unknown Error]", "" and anything
 * else that is not a size, or is over 1 PiB (statcheck.h's bound: no
 * GPU's memory). */
int vr_monitor_size(const char *s, size_t len, int64_t default_unit, int64_t *bytes);

/* A plain integer or percentage ("87", "87 %"); 0 when not one. */
int vr_monitor_int(const char *s, size_t len, int64_t *out);

/* nvidia-smi's time stamps, wall clock without a zone, as ns read as UTC
 * (reader.h: VR_CLOCK_WALL_LOCAL): "2024/03/12 10:15:32.123" (CSV
 * `timestamp`), "Tue Mar 12 10:15:32 2024" (the table's first line, -q
 * and -q -x `Timestamp`). Returns 1 and *ns, 0 when not one. */
int vr_monitor_stamp(const char *s, size_t len, int64_t *ns);

#endif
