/*-*** nvsmi_table.h: nvidia-smi's default table, a line at a time ***/
/*
 * What `nvidia-smi` prints with no query, once or repeated by `-l N`:
 * the time stamp line above each table ("Tue Jul 14 08:12:53 2026"), the
 * box of GPUs (index, name, bus id; "19818MiB /  81559MiB"; "100%"), the
 * MIG devices box when there is one (each instance a GPU of its own), and
 * the process box (GPU, GI, CI, PID, type, name, "2566MiB" or "N/A").
 * Both layouts: the new one (drivers 530 and later, 89 columns, three
 * lines a GPU) and the old 79-column one. Cells are found by their '|'
 * and the memory by its "MiB / MiB" cell, never by column offsets
 * (docs/formats/nvidia-smi-table.md).
 *
 * Each GPU of a table is one reading (gpu_sample) at the table's stamp;
 * each process row a process_sample tied to its GPU's reading. A row cut
 * short (a killed job: no closing '|') or that does not parse is skipped
 * and counted, as is a GPU whose memory line never came.
 *
 * Used by the nvsmi_table reader (a whole file), the capture reader (its
 * table sections) and, later, the job-log reader (tables printed into a
 * log). Ownership: caller-owned (init/free); rows go through the
 * caller's vr_monitor.
 */
#ifndef VR_NVSMI_TABLE_H
#define VR_NVSMI_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "import/monitor.h"

/* A GPU of the table being read. */
typedef struct {
    int64_t idx;
    int64_t gpu_id, sample_id;
    char bus_id[24];
} vr_nvsmi_table_gpu;

typedef struct {
    vr_monitor *mon;
    int state;           /* nvsmi_table.c's table_state */
    int64_t stamp;       /* the last stamp line, for the next table */
    int64_t table_stamp; /* the current table's */
    /* A GPU's first line, waiting for its memory line. */
    int pending;
    int64_t pending_idx;
    char pending_name[96], pending_bus[24];
    vr_nvsmi_table_gpu *gpus; /* the current table's */
    size_t ngpus, gpus_cap;
    uint64_t tables, samples, processes;
    uint64_t skipped; /* rows cut or malformed */
    int stamped;      /* a stamp line was read */
} vr_nvsmi_table;

void vr_nvsmi_table_init(vr_nvsmi_table *t, vr_monitor *mon);
void vr_nvsmi_table_free(vr_nvsmi_table *t);

/* One line, without its end. `cut`: longer than the caller reads.
 * Returns -1 only on a database error. */
int vr_nvsmi_table_line(vr_nvsmi_table *t, const char *line, size_t len, int cut, vr_error *err);

/* Ends the last table and tallies what was skipped. */
int vr_nvsmi_table_finish(vr_nvsmi_table *t, vr_error *err);

#endif
