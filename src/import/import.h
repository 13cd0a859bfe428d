/*-*** import.h: one input file into the database, all or nothing ***/
/*
 * vr_import_file() opens the file, recognises its format by content,
 * refuses content imported before (the same XXH64 of the raw or of the
 * decompressed bytes, confirmed by the same BLAKE2b-256 of the decompressed
 * bytes: source.data_blake2b, migration 19), and runs
 * the reader inside one transaction: on any error the database is left as
 * it was. A truncated input is not an error: what was complete is kept,
 * source.truncated is set and one warning names the byte offset.
 */
#ifndef VR_IMPORT_H
#define VR_IMPORT_H

#include <stdint.h>

#include "db/db.h"
#include "util/buf.h"
#include "util/error.h"

typedef struct {
    const vr_warner *warn; /* warnings; may be NULL */
    int progress;          /* draw a progress line on stderr */
    /* vr_import_inputs: record the inputs not used (input_issue) for the
     * report this run writes. Off for `import`, whose failed input leaves
     * the database exactly as it was. */
    int record_issues;
    /* --tz: the zone of wall-clock stamps that name none (logs,
     * nvidia-smi), as local time minus UTC, and as the user wrote it
     * ("UTC" when NULL), for the report. */
    int64_t tz_offset_ns;
    const char *tz_name;
    /* --follow-links: in a folder, follow symbolic links that lead out of
     * it too (by default they are skipped and listed: what they reach is
     * not the job's). */
    int follow_links;
    /* --jobs: files imported at once by vr_import_inputs (staging.h); 0
     * or 1: one after the other. */
    unsigned jobs;
} vr_import_opts;

typedef enum { VR_IMPORTED, VR_ALREADY_IMPORTED } vr_import_status;

typedef struct {
    vr_import_status status;
    int64_t source_id;  /* the new source, or the earlier one */
    const char *format; /* reader name (static) */
    uint64_t events;
    int truncated;
    const char *looks_like; /* refused as not (yet) read: what it is (static) */
} vr_import_result;

int vr_import_file(vr_db *db, const char *path, const vr_import_opts *opts, vr_import_result *res,
                   vr_error *err);

/*-*** many inputs: files, folders, stdin ***/
/*
 * vr_import_inputs() imports every path: a folder is walked (vr_walk) and
 * each file in it offered to the readers. One input's failure never stops
 * the others; what happened to each is said through `on_input` and, with
 * opts->record_issues, recorded in the database (input_issue), so the
 * report lists it:
 *   - imported, or already imported (same content);
 *   - skipped: a file in a folder that no reader reads (a checkpoint, a
 *     config), or not a regular file: expected in a job's folder, not a
 *     failure;
 *   - failed: a named input no reader reads, or any input that is a
 *     reader's format but broken, or cannot be read.
 * Returns -1 only when the run cannot go on (a database error).
 */
typedef enum {
    VR_INPUT_IMPORTED,
    VR_INPUT_ALREADY,
    VR_INPUT_SKIPPED,
    VR_INPUT_FAILED
} vr_input_outcome;

/* `detail`: for SKIPPED what the input is, for FAILED the error message,
 * for ALREADY the earlier source's id as text; NULL for IMPORTED. */
typedef void (*vr_input_fn)(void *ud, const char *path, vr_input_outcome outcome,
                            const char *detail);

typedef struct {
    unsigned imported, already, skipped, failed;
} vr_inputs_counts;

int vr_import_inputs(vr_db *db, char *const *paths, int n, const vr_import_opts *opts,
                     vr_input_fn on_input, void *ud, vr_inputs_counts *counts, vr_error *err);

/*-*** --jobs: a file's two halves (staging.h) ***/
/* What a worker made of one file. */
typedef struct {
    int staged;                 /* 0: import it in order, as without --jobs */
    char pre_hex[17];           /* XXH64 of the file, before reading (check_repeat) */
    char hex[17], data_hex[17]; /* XXH64 of the raw and of the decompressed bytes */
    char content[65];           /* BLAKE2b-256 of the decompressed bytes */
    /* what the reader found, for the warnings said when the file is in */
    uint64_t events, truncated_at;
    int truncated, base_time_missing;
    const char *truncated_where; /* static */
    const char *format;
    vr_buf warnings; /* the reader's warnings, each NUL-ended */
} vr_staged;

/* The worker's half: `path` into a new staging database at stage_path. */
void vr_import_stage_file(const char *path, const char *stage_path, const vr_import_opts *opts,
                          vr_staged *s);

/* The run's half, in input order: as vr_import_file() for `path`. */
int vr_import_staged(vr_db *db, const char *path, const char *stage_path, const vr_staged *s,
                     const vr_import_opts *opts, vr_import_result *res, vr_error *err);

/* Appends the formats read, for messages: "a PyTorch profiler (Kineto)
 * trace, ...". */
void vr_import_expected(vr_buf *out);

#endif
