/*-*** ranks.h: the ranks of one job, compared ***/
/*
 * When the devices carry two or more distinct ranks, vr_ranks_add() adds
 * to the results document "ranks" (a row per rank and device: its peaks,
 * when, in which step and operator, its share of capacity) and
 * "ranks_summary" (how many, the median and the largest peak, the
 * imbalance between them, which rank peaked first and by how much); with
 * fewer it adds nothing. The figures come from schemas/report.sql
 * (rank_devices, ranks_summary); the times are the devices block's, taken
 * from doc's "devices" and "more_devices", which must be there. Keys: docs/json.md.
 *
 * Ownership: the rows are added to `doc`.
 */
#ifndef VR_RANKS_H
#define VR_RANKS_H

#include <cjson/cJSON.h>

#include "../db/db.h"
#include "../util/error.h"

int vr_ranks_add(vr_db *db, cJSON *doc, vr_error *err);

/* For Markdown and HTML: with more than VR_MANY_IN_FULL rows, the view's
 * "ranks" keeps those that matter (the ranks the summary names, the
 * highest peaks, the lowest: many.h) and "ranks_more" says how many were
 * left out and their peaks' range. The JSON report keeps every row. */
void vr_ranks_view(cJSON *view);

#endif
