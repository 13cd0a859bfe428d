/*-*** nvsmi_csv.h: nvidia-smi's CSV queries, a line at a time ***/
/*
 * `nvidia-smi --query-gpu=FIELDS --format=csv[,nounits] [-l N | -lms N]`
 * and `--query-compute-apps=FIELDS --format=csv`: a header naming the
 * fields ("memory.used [MiB]"), then one row per GPU (per process) and
 * sample. The header says which query it is (compute-apps has `pid`);
 * any subset and order of fields is read, units from the values or, with
 * nounits, from the header. A header repeated mid-file (a restarted -l
 * log) is read again. Rows go through monitor.h: a --query-gpu row is a
 * gpu (uuid, pci.bus_id, index, name) and a reading of it; a
 * --query-compute-apps row a process on the GPU its gpu_uuid /
 * gpu_bus_id names.
 *
 * Without the header (`--format=csv,noheader`) the fields are unknown and
 * the parser refuses the rows with an error that says to keep the header,
 * unless the caller knows the fields from the command line
 * (vr_nvsmi_csv_fields: a capture shows the command).
 *
 * Used by the nvsmi_csv reader (a whole file), the capture reader (its
 * CSV sections) and, later, the job-log reader. Ownership: the parser is
 * caller-owned (init/free); it writes through the caller's vr_monitor.
 */
#ifndef VR_NVSMI_CSV_H
#define VR_NVSMI_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "import/monitor.h"

typedef struct {
    int field;    /* index in nvsmi_csv.c's field table; -1: not read */
    int64_t unit; /* bytes of a bare number (the header's "[MiB]") */
} vr_nvsmi_csv_column;

typedef struct {
    const char *s;
    size_t len;
} vr_nvsmi_csv_span;

typedef struct {
    vr_monitor *mon;
    vr_nvsmi_csv_column *cols;
    size_t ncols, cols_cap;
    vr_nvsmi_csv_span *vals; /* the current row's values */
    size_t vals_cap;
    int have_header;
    int one_gpu;             /* a --query-gpu without index, uuid nor pci.bus_id:
                                  one GPU (a script's log of the only one), index 0 */
    int apps;                /* --query-compute-apps */
    int absorb;              /* the text column that takes a surplus ", " */
    uint64_t rows;           /* rows stored */
    uint64_t skipped;        /* malformed or cut rows skipped */
    uint64_t headless;       /* rows before any header */
    uint64_t first_headless; /* the line of the first of them */
    int stamped;             /* one of nvidia-smi's timestamps was read (local time) */
    int epoch_stamped;       /* an epoch timestamp was read (UTC) */
} vr_nvsmi_csv;

void vr_nvsmi_csv_init(vr_nvsmi_csv *p, vr_monitor *mon);
void vr_nvsmi_csv_free(vr_nvsmi_csv *p);

/* The fields as the command line gives them ("timestamp,memory.used"),
 * for output without a header line; `apps`: --query-compute-apps. */
void vr_nvsmi_csv_fields(vr_nvsmi_csv *p, const char *list, size_t len, int apps);

/* One line, without its end; `cut`: the line was longer than the reader
 * reads (skipped and counted). A malformed row is skipped and counted;
 * -1 only on a database error. */
int vr_nvsmi_csv_line(vr_nvsmi_csv *p, const char *line, size_t len, uint64_t number, int cut,
                      vr_error *err);

/* Tallies what was skipped; fails (VR_ERR_MALFORMED, naming the line)
 * when rows came and no header ever said what they are. */
int vr_nvsmi_csv_finish(vr_nvsmi_csv *p, vr_error *err);

/* Whether a line is a header of --query-gpu / --query-compute-apps: every
 * field a name (with an optional "[unit]") and one of them a field read. */
int vr_nvsmi_csv_is_header(const char *line, size_t len);

#endif
