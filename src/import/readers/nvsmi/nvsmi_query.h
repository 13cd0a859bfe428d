/*-*** nvsmi_query.h: one nvidia-smi -q reading, as the text and XML readers gather it ***/
/*
 * `nvidia-smi -q` and `nvidia-smi -q -x` print the same tree: a reading
 * (NVSMI LOG / <nvidia_smi_log>) with its time stamp, then a section per
 * GPU with its identity, its framebuffer memory, its utilization, its MIG
 * devices (each with memory of its own) and its processes. The two readers
 * (nvsmi_qtext.c, nvsmi_qxml.c) only map their syntax to the calls below: which
 * section is open, and which field a value is (vr_nvsmi_field). This file
 * turns that into rows through monitor.h, so both formats store the same
 * rows for the same GPU.
 *
 * Order: a GPU's rows (its gpu row, its reading, its MIG devices' rows and
 * readings) are written when its first process starts or its section
 * ends, whichever is first: by then every real file has given its UUID
 * (the XML gives it after the MIG devices) and its memory. Processes are
 * written as each one ends, so a list of any length is streamed. A GPU
 * whose section is cut off before that (vr_nvsmi_gpu_drop) writes nothing.
 *
 * Values are read leniently: "N/A", "[Not Supported]", "Not available in
 * WDDM driver model" and other words are an absent figure; a value that
 * starts like a number but is not one is malformed (counted, left out).
 *
 * Ownership: caller-owned (vr_nvsmi_init/free); the monitor must outlive
 * it. Strings passed in are copied.
 */
#ifndef VR_NVSMI_QUERY_H
#define VR_NVSMI_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "import/monitor.h"

/* The values read; which of them a line or element is comes from each
 * reader's static table. */
typedef enum {
    VR_NVSMI_TIMESTAMP,
    VR_NVSMI_ATTACHED, /* "Attached GPUs" */
    VR_NVSMI_NAME,
    VR_NVSMI_UUID,
    VR_NVSMI_BUS_ID,
    VR_NVSMI_FB_TOTAL,
    VR_NVSMI_FB_RESERVED,
    VR_NVSMI_FB_USED,
    VR_NVSMI_FB_FREE,
    VR_NVSMI_UTIL_GPU,
    VR_NVSMI_UTIL_MEMORY,
    VR_NVSMI_GI, /* a MIG device's or a process's GPU instance */
    VR_NVSMI_CI, /* ... and compute instance */
    VR_NVSMI_PID,
    VR_NVSMI_PROC_TYPE,
    VR_NVSMI_PROC_NAME,
    VR_NVSMI_PROC_USED
} vr_nvsmi_field;

/* A MIG device seen inside the GPU being read. */
typedef struct {
    int64_t gi, ci;
    vr_buf uuid; /* "MIG-..." when the file gives one */
    vr_monitor_sample s;
    int64_t gpu_id, sample_id;
} vr_nvsmi_mig;

#define VR_NVSMI_MAX_MIG 16 /* an A100/H100 has at most 7 */

/* A row written in this reading, as vr_monitor_gpu_id finds it again
 * (to give it its index when the reading ends). */
typedef struct {
    char uuid[128], bus_id[128], mig[64]; /* as large as what is kept */
    uint8_t uuid_len, bus_id_len, mig_len;
    int64_t idx;
} vr_nvsmi_row;

#define VR_NVSMI_MAX_ROWS 1024 /* rows a reading can index */

typedef struct {
    vr_monitor *m;
    int64_t ts_ns;       /* the reading's time, or NONE */
    int64_t attached;    /* GPUs it says there are, or NONE */
    int64_t gpus_listed; /* GPU sections in it so far */
    vr_nvsmi_row *rows;  /* written in it */
    size_t n_rows, cap_rows;
    int too_many_rows;
    /* the GPU being read */
    int in_gpu, written;
    vr_buf uuid, bus_id, name;
    vr_monitor_sample s;
    int64_t gpu_id, sample_id;
    int64_t idx; /* its position in the reading */
    vr_nvsmi_mig mig[VR_NVSMI_MAX_MIG];
    size_t n_mig;
    int in_mig; /* 1: in mig[n_mig - 1]; -1: in one past the limit */
    /* the process being read */
    int in_proc;
    int64_t pid, proc_gi, proc_ci, proc_used;
    vr_buf proc_type, proc_name;
    int proc_bad;
    /* what was read */
    uint64_t malformed; /* values and records skipped */
} vr_nvsmi;

void vr_nvsmi_init(vr_nvsmi *g, vr_monitor *m);
void vr_nvsmi_free(vr_nvsmi *g);

/* A new reading (its GPUs follow); ends the one before. */
int vr_nvsmi_reading(vr_nvsmi *g, vr_error *err);

/* The reading ends (with its last GPU). nvidia-smi has no index in -q:
 * it lists GPUs in index order, so when a reading lists all the GPUs it
 * says are attached (no -i), their position is their index, and their
 * rows (MIG devices: their parent's) get it. */
int vr_nvsmi_reading_end(vr_nvsmi *g, vr_error *err);

/* A GPU's section starts (ending the one before) / ends. */
int vr_nvsmi_gpu_begin(vr_nvsmi *g, vr_error *err);
int vr_nvsmi_gpu_end(vr_nvsmi *g, vr_error *err);
/* The section was cut off: what was not written yet is forgotten. */
void vr_nvsmi_gpu_drop(vr_nvsmi *g);

/* A MIG device inside the GPU: its GI/CI and memory go to it. */
void vr_nvsmi_mig_begin(vr_nvsmi *g);
void vr_nvsmi_mig_end(vr_nvsmi *g);

/* A process of the GPU. */
int vr_nvsmi_process_begin(vr_nvsmi *g, vr_error *err);
int vr_nvsmi_process_end(vr_nvsmi *g, vr_error *err);

/* A value of the open section: stored, or counted in g->malformed
 * (returns 1 then), or ignored where it has no place (a process field
 * outside a process, a figure after the GPU was written). */
int vr_nvsmi_set(vr_nvsmi *g, vr_nvsmi_field f, const char *v, size_t len);

#endif
