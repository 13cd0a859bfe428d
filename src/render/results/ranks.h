/*-*** ranks.h: the ranks of one job, compared ***/
/*
 * When the devices carry two or more distinct ranks, the results document
 * has "ranks" (a row per rank and device: its peaks, when, in which step
 * and operator, its share of capacity) and "ranks_summary" (how many, the
 * median and the largest peak, the imbalance between them, which rank
 * peaked first and by how much); with fewer it has neither. The figures
 * come from schemas/report.sql (rank_devices, ranks_summary).
 *
 * vr_ranks_read() reads them, in bounded memory: the rows once, for which
 * rank peaked first (as they come) and, for a view, a small record each
 * (many.h); then only the rows shown. For JSON (view 0), ranks[] is left
 * empty: the JSON writer gives every row (json_out.h, through
 * vr_ranks_stmt). For Markdown and HTML (view 1), with more than
 * VR_MANY_IN_FULL rows, ranks[] keeps those that matter (the ranks the
 * summary names, the highest peaks, the lowest) and "ranks_more" says how
 * many were left out and their peaks' range; `devices` are the devices
 * of the rows kept (their charts read those devices' rows).
 * vr_ranks_attach() adds what was read to the document (nothing without
 * a summary). Keys: docs/json.md.
 *
 * Ownership: vr_ranks_attach moves the lists into `doc`; vr_ranks_free
 * frees what is left.
 */
#ifndef VR_RANKS_H
#define VR_RANKS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "db/db.h"
#include "util/error.h"
#include "render/results/many.h"

typedef struct {
    cJSON *rows;    /* ranks[] */
    cJSON *summary; /* ranks_summary; NULL: fewer than two ranks */
    cJSON *more;    /* ranks_more, or NULL */
    long long devices[VR_MANY_IN_FULL];
    size_t ndevices;
} vr_ranks;

int vr_ranks_read(vr_db *db, int view, vr_ranks *out, vr_error *err);
void vr_ranks_attach(cJSON *doc, vr_ranks *r);
void vr_ranks_free(vr_ranks *r);

/* report.sql's rank_devices, bound: a row per rank and device. */
sqlite3_stmt *vr_ranks_stmt(vr_db *db, vr_error *err);

#endif
