/*-*** json_out.h: the JSON report, written as it is made ***/
/*
 * Three lists of the JSON report grow with the job: more_devices[] (a
 * row per device not shown in full), ranks[] (a row per rank and device)
 * and more_memory_prints[] (a row per memory print series not shown).
 * The results document (results.h, not a view) leaves them empty, so
 * that a report of 40,000 devices never holds 40,000 rows;
 * vr_out_json() prints the document as cJSON_Print does (the same
 * bytes), each of those lists' rows read again from the database, built,
 * printed and freed one at a time:
 *   more_devices[]        report.sql's devices rows that devices[] does
 *                         not hold (the same db_id);
 *   ranks[]               every rank_devices row (ranks.h);
 *   more_memory_prints[]  the memory_prints rows that memory_prints[]
 *                         does not hold (the same source, device, rank,
 *                         framework and figure).
 * Each piece of text is escaped into `out` as it is made, and `out` is
 * handed to the context's flush whenever it holds flush_bytes (out.h).
 * Returns -1 when the flush fails or the database cannot be read (err
 * set).
 *
 * out/ (one file per output format) is the top floor of render/, above
 * results/, view/ and svg/; only report.c includes it.
 */
#ifndef VR_JSON_OUT_H
#define VR_JSON_OUT_H

#include "render/out/out.h"

int vr_out_json(const vr_out_ctx *c, cJSON *doc, vr_buf *out, vr_error *err);

#endif
