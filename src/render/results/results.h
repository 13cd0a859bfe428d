/*-*** results.h: the analysis results as one JSON document ***/
/*
 * vr_results_build() reads the analysed database and returns the results
 * document that `--format json` prints and the templates render (after
 * vr_view_decorate). Its keys are documented in docs/json.md; integers are
 * exact (cJSON raw numbers, never rounded through a double).
 *
 * Ownership: the returned tree belongs to the caller (cJSON_Delete).
 */
#ifndef VR_RESULTS_H
#define VR_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "db/db.h"
#include "util/buf.h"
#include "util/error.h"

typedef struct {
    int top_allocations;   /* rows per device (default 10) */
    int operators;         /* rows per device (default 20) */
    /* 0 (default): the document of `--format json`, its lists of a row
     * per device, per rank or per memory print left empty for
     * vr_out_json (json_out.h) to fill as it writes; 1: a view for
     * Markdown and HTML, which show at most VR_MANY_IN_FULL of those
     * (ranks[] the rows shown and ranks_more, ranks.h; more_devices[] the
     * devices of those ranks not in devices[], which their charts read;
     * more_memory_prints[] empty). */
    int view;
} vr_results_opts;

cJSON *vr_results_build(vr_db *db, const vr_results_opts *opts, vr_error *err);

/* oom_events lists the first VR_RESULTS_OOM_LISTED errors (oom_groups
 * and oom_event_count tell all of them); the first
 * VR_RESULTS_OOM_EXCERPTS have the log lines around them, until about
 * VR_RESULTS_OOM_EXCERPT_TEXT bytes of lines are given (the error that
 * goes past it has its lines whole; those after it have none). */
#define VR_RESULTS_OOM_LISTED 50
#define VR_RESULTS_OOM_EXCERPTS 20
#define VR_RESULTS_OOM_EXCERPT_TEXT (64 * 1024)
/* A device's out_of_memory lists at most this many of its errors (every
 * k-th past it, evenly over the run: the chart marks them). */
#define VR_RESULTS_DEVICE_OOMS 200

/* Runs a bound statement of schemas/report.sql; each row becomes an object
 * (column alias: value, as the document holds them) in a new array. NULL
 * on a database error (err set). */
cJSON *vr_results_rows(vr_db *db, sqlite3_stmt *st, vr_error *err);

/* The current row of st as the object vr_results_rows makes of it. */
cJSON *vr_results_row(sqlite3_stmt *st);

/* Runs a bound statement again, building only the rows keep[] marks (of
 * n: a row past n is not kept) into a new array; NULL on a database error
 * (err set). A long list is read once for a small record a row, and
 * again for the rows shown (many.h). */
cJSON *vr_results_rows_kept(vr_db *db, sqlite3_stmt *st, const unsigned char *keep, size_t n,
                            vr_error *err);

/* The index of st's column `name`, or -1. */
int vr_results_column(sqlite3_stmt *st, const char *name);

/* Column `col` (-1: none) of st's current row as vr_results_int would read
 * it from the row's object: 0 when that holds no number. */
int vr_results_column_int(sqlite3_stmt *st, int col, long long *out);

/* Exact integer value of a results number (raw or double). */
int vr_results_int(const cJSON *item, long long *out);

/*-*** text, as every format shows it ***/
/*
 * Text values come from inputs (operator names, paths, models) and may be
 * anything: 100 MiB long, not UTF-8, full of terminal controls. The
 * document holds them cut and as valid UTF-8 (vr_results_text); the
 * renderers show controls as visible escapes (vr_utf8_visible).
 */
#define VR_RESULTS_TEXT_MAX 256 /* bytes: longer text is cut... */
#define VR_RESULTS_TEXT_HEAD 120 /* ...to its first 120 characters */
#define VR_RESULTS_TEXT_TAIL 40  /* ...and its last 40 */

/* Appends `len` bytes of `s` as the document holds text: longer than
 * VR_RESULTS_TEXT_MAX bytes, its head and tail with
 * " … (N bytes cut) … " between (on character boundaries); every
 * byte that is not part of well-formed UTF-8 as the text "\xFF", and NUL
 * as "\u0000" (the document holds C strings). Reads only what it keeps. */
void vr_results_text(vr_buf *out, const char *s, size_t len);

#endif
