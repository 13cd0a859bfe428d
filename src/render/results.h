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

#include <cjson/cJSON.h>

#include "../db/db.h"
#include "../util/error.h"

typedef struct {
    int top_allocations;   /* rows per device (default 10) */
    int operators;         /* rows per device (default 20) */
} vr_results_opts;

cJSON *vr_results_build(vr_db *db, const vr_results_opts *opts, vr_error *err);

/* Exact integer value of a results number (raw or double). */
int vr_results_int(const cJSON *item, long long *out);

#endif
