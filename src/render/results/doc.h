/*-*** doc.h: what the results document's parts share ***/
/*
 * The results document (results.h) is built by parts, one file each
 * (ranks, live_at_peak, oom_groups, model_estimate, verdict, many) and
 * results.c, which runs them in the order of its table. This header is
 * what they share: rows of schemas/report.sql as the document's objects,
 * exact integers, and text as the document holds it. It is the floor of
 * render/results/: it includes no part and not results.h, so no part
 * depends on the builder that runs it.
 *
 * Floors within render/, lowest first: results/ (reads the database
 * into the document) < view/ (decorates the document for the
 * templates) < svg/ (draws charts) < out/ (writes one output format);
 * report.c above them all. A file includes nothing of a folder above its
 * own.
 *
 * Integers are exact: cJSON raw numbers, never rounded through a double.
 * Ownership: returned trees belong to the caller (cJSON_Delete).
 */
#ifndef VR_RESULTS_DOC_H
#define VR_RESULTS_DOC_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "db/db.h"
#include "util/buf.h"
#include "util/error.h"

/* Runs a bound statement of schemas/report.sql; each row becomes an object
 * (column alias: value, as the document holds them) in a new array. NULL
 * on a database error (err set). */
cJSON *vr_results_rows(vr_db *db, sqlite3_stmt *st, vr_error *err);

/* vr_results_rows for rows whose text is a log's (its lines and
 * messages, what the reader came for): cut longer than other text. */
cJSON *vr_results_log_rows(vr_db *db, sqlite3_stmt *st, vr_error *err);

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

/* Member `key` of obj read by vr_results_int: 0 when obj holds no number
 * there (absent, null, text). */
int vr_results_member_int(const cJSON *obj, const char *key, long long *out);

/* The same, or dflt. */
long long vr_results_int_or(const cJSON *obj, const char *key, long long dflt);

/* Member `key` of obj when it is text, else NULL (the document's text is
 * owned by obj). */
const char *vr_results_string(const cJSON *obj, const char *key);

/*-*** text, as every format shows it ***/
/*
 * Text values come from inputs (operator names, paths, models) and may be
 * anything: 100 MiB long, not UTF-8, full of terminal controls. The
 * document holds them cut and as valid UTF-8 (vr_results_text); the
 * renderers show controls as visible escapes (vr_utf8_visible).
 */
#define VR_RESULTS_TEXT_MAX 256  /* bytes: longer text is cut... */
#define VR_RESULTS_TEXT_HEAD 120 /* ...to its first 120 characters */
#define VR_RESULTS_TEXT_TAIL 40  /* ...and its last 40 */

/* Appends `len` bytes of `s` as the document holds text: longer than
 * VR_RESULTS_TEXT_MAX bytes, its head and tail with
 * " … (N bytes cut) … " between (on character boundaries); every
 * byte that is not part of well-formed UTF-8 as the text "\xFF", and NUL
 * as "\u0000" (the document holds C strings). Reads only what it keeps. */
void vr_results_text(vr_buf *out, const char *s, size_t len);

#endif
