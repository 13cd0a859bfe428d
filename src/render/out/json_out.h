/*-*** json_out.h: the JSON report, written as it is made ***/
/*
 * Three lists of the JSON report grow with the job: more_devices[] (a
 * row per device not shown in full), ranks[] (a row per rank and device)
 * and more_memory_prints[] (a row per memory print series not shown).
 * The results document (results.h, not a view) leaves them empty, so
 * that a report of 40,000 devices never holds 40,000 rows;
 * vr_jsonout_write() prints the document as cJSON_Print does (the same
 * bytes), each of those lists' rows read again from the database, built,
 * printed and freed one at a time:
 *   more_devices[]        report.sql's devices rows that devices[] does
 *                         not hold (the same db_id);
 *   ranks[]               every rank_devices row (ranks.h);
 *   more_memory_prints[]  the memory_prints rows that memory_prints[]
 *                         does not hold (the same source, device, rank,
 *                         framework and figure).
 * Each piece of text goes to put() as it is made (text, not NUL-ended).
 * Returns -1 when put() fails or the database cannot be read (err set).
 *
 * out/ (one file per output format) is the top floor of render/, above
 * results/, view/ and svg/; only report.c includes it.
 */
#ifndef VR_JSONOUT_H
#define VR_JSONOUT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "db/db.h"
#include "util/error.h"

typedef int (*vr_jsonout_put_fn)(void *ctx, const char *text, size_t len, vr_error *err);

int vr_jsonout_write(vr_db *db, const cJSON *doc, vr_jsonout_put_fn put, void *ctx,
                     vr_error *err);

#endif
