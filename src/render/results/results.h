/*-*** results.h: the analysis results as one JSON document ***/
/*
 * vr_results_build() reads the analysed database and returns the results
 * document that `--format json` prints and the templates render (after
 * vr_view_make). Its keys are documented in docs/json.md; integers are
 * exact (cJSON raw numbers, never rounded through a double).
 *
 * The document is built by parts (ranks, live_at_peak, oom_groups,
 * model_estimate, verdict and results.c's own), run in the order of
 * results.c's table, each stating the parts it needs before it; what the
 * parts share is doc.h. This header is the builder's interface alone: no
 * file of render/results/ but results.c includes it.
 *
 * Floors within render/, lowest first: results/ < view/ < svg/ < out/
 * (doc.h says what each is); report.c above them all.
 *
 * Ownership: the returned tree belongs to the caller (cJSON_Delete).
 */
#ifndef VR_RESULTS_H
#define VR_RESULTS_H

#include <cjson/cJSON.h>

#include "db/db.h"
#include "util/error.h"

typedef struct {
    int top_allocations; /* rows per device (default 10) */
    int operators;       /* rows per device (default 20) */
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

/* Checks that each part of the document (results.c's tables of parts)
 * comes after the parts it states it needs; -1 with the first that does
 * not (a unit test's: the order is the tables', fixed at build time). */
int vr_results_parts_check(vr_error *err);

#endif
