/*-*** memsummary.h: torch.cuda.memory_summary() boxes, a line at a time ***/
/*
 * Reads the text box memory_summary() prints, wherever it is: a file of
 * its own (memsummary.c) or a job log that embeds it (the job-log reader
 * feeds it its lines). Each figure is passed to a callback under
 * memory_stats()'s own flat key ("allocated_bytes.large_pool.peak",
 * "num_ooms"), so a box and a JSON dump of the same numbers give the same
 * rows. Sizes are read exactly from their decimal text ("12345 KB",
 * "1.23 GiB": KB/MB/GB as old PyTorch wrote them are binary, like KiB);
 * counts with their K/M (x1000) as _format_count writes them.
 *
 * Tolerance: lines may carry a log's prefix ("[rank0]: "), a box may lack
 * its top or bottom, rows may be cut or re-wrapped over two lines (joined
 * back). What is there is read; each figure a recognised row should have
 * had but did not give (cut, malformed) is counted in `skipped`; so is a
 * figure no allocator can give (statcheck.h: below 0, over 1 PiB, or
 * allocated over reserved in the dump), which is also noted in `bad` (with
 * `line`, which the caller sets) and not passed on. A dump's allocated and
 * reserved current/peak figures are passed on when the dump ends.
 *
 * Dumps: a title line ("... memory summary, device ID 0"), or a row that
 * the current dump already has (a second box without its title), starts a
 * new dump; dumps are numbered from 0. The device is the title's, or the
 * one of a preceding "device: N" line, else unknown (-1).
 *
 * Ownership: the state is caller-owned and holds no heap memory; the key
 * passed to the callback is valid only during the call. The rows are
 * written by vr_memsummary_insert_stat, below.
 */
#ifndef VR_MEMSUMMARY_H
#define VR_MEMSUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "import/reader.h"
#include "scan/statcheck.h"

/* Returns 0 to go on, -1 to stop with its error. */
typedef int (*vr_memsummary_stat_fn)(void *ud, int64_t dump, int64_t device_idx, const char *key,
                                     int64_t value, vr_error *err);

#define VR_MEMSUMMARY_MAX_LINE 512 /* a box line, with a prefix; joined halves */

typedef struct {
    vr_memsummary_stat_fn on_stat;
    void *ud;

    /* counters a caller may read */
    uint64_t stats;     /* figures passed on */
    uint64_t skipped;   /* figures of recognised rows not read */
    uint64_t box_lines; /* lines that were part of a box */
    int64_t dumps;      /* dumps started */
    vr_stat_bad bad;    /* the impossible figures (in skipped too) */

    /* set by the caller: the number of the line fed, for messages (0: unknown) */
    uint64_t line;

    /* private */
    int64_t dump;                         /* current dump, -1 before the first */
    int64_t device_idx;                   /* of the current dump, -1 unknown */
    int64_t next_device;                  /* from a "device: N" line, for the next dump */
    int metric;                           /* the metric the pool rows below belong to, -1 */
    uint64_t seen;                        /* rows (and the OOM header) the dump has */
    char pending[VR_MEMSUMMARY_MAX_LINE]; /* a row cut at its line's end */
    size_t pending_len;
    uint64_t pending_line;
    vr_stat_pairs held; /* the dump's figures checked when it ends */
} vr_memsummary;

void vr_memsummary_init(vr_memsummary *s, vr_memsummary_stat_fn on_stat, void *ud);

/* One line, without its end. Returns 1 when it was part of a box, 0 when
 * not (a "device: N" line is not, though it names the next box's device),
 * -1 when the callback failed. A job log's reader feeds every line and
 * keeps those that return 0 as its own. */
int vr_memsummary_feed(vr_memsummary *s, const char *line, size_t len, vr_error *err);

/* At the end of input: reads a row still waiting for its continuation,
 * and passes on the last dump's held figures. */
int vr_memsummary_finish(vr_memsummary *s, vr_error *err);

/* Parses one cell ("  1062 MB ", "   1234 K  ") as bytes (is_size) or a
 * count, exactly. Returns 0 when it is not one (no digits, an unknown or
 * missing unit, beyond int64). Exposed for the tests. */
int vr_memsummary_cell(const char *s, size_t len, int is_size, int64_t *out);

/* The allocator_stat row of one figure, in ctx's source (schemas/import.sql
 * insert_allocator_stat): the writer of both readers that hold these
 * boxes, memsummary.c's and the job log's. Counts it in ctx->events. */
int vr_memsummary_insert_stat(vr_import_ctx *ctx, int64_t dump, int64_t device_idx,
                              const char *key, int64_t value, vr_error *err);

/* A dump file's own count of out-of-memory errors ("CUDA OOMs: N",
 * num_ooms) as OOM events of the source: one a dump with N > 0, with what
 * the dump says was allocated and reserved; `label` names the count in
 * the message ("CUDA OOMs"), `wording` the event's (oom_event.wording).
 * For a dump that is a file of its own: a job log's box restates the
 * log's own error. */
int vr_memsummary_dump_ooms(vr_import_ctx *ctx, const char *label, const char *wording,
                            vr_error *err);

#endif
