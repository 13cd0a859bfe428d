/*-*** merge.h: per-rank databases copied into one job database ***/
/*
 * `vramreport merge` (docs/scale.md): each rank's database, imported and
 * analysed on its own, is ATTACHed to the job database and what a report
 * reads of it is copied in one transaction, every id remapped past the
 * job's (names and frames by their text, shared): its sources and
 * devices, every derived table of its analysis, and of its raw tables
 * only what the report reads: the memory events at each bucket's highest
 * points (VR_MERGE_POINTS buckets a device and source), at the peaks and
 * of the allocations live at the peaks; those allocations; the operators
 * they, the peaks and the OOM errors name. So the job's cost grows with
 * ranks, not with their traces' bytes, and its per-rank figures are each
 * rank's own. merged_rank (migration 30) lists the ranks merged and marks
 * the job: its analysis is the ranks', never redone over the thinned
 * events.
 */
#ifndef VR_DB_MERGE_H
#define VR_DB_MERGE_H

#include <stdint.h>

#include "db/db.h"
#include "util/error.h"

/* The timeline's buckets kept a device and source (each bucket's highest
 * allocated and reserved points, and the first and last events). */
#define VR_MERGE_POINTS 400

typedef struct {
    int64_t sources, mem_events, kept_events;
} vr_merge_counts;

/* Copies the rank database at `path` (of this schema, its analysis
 * current) into `job` in one transaction; on failure nothing of it is
 * kept and err names `path` (a rank or a trace merged already, a column
 * this merge does not know). */
int vr_db_merge_rank(vr_db *job, const char *path, vr_merge_counts *counts, vr_error *err);

/* The space of ids column `column` of `table` names: a table's name
 * ("source", "device", "name", ...), "" for a column that is no row's id,
 * NULL for one merge does not know. `import --jobs` (db/stage.c) remaps
 * by the same table. */
const char *vr_db_merge_space(const char *table, const char *column);

/* Whether `db` was made by merge (its analysis is the ranks'). */
int vr_db_is_merged(vr_db *db, int *merged, vr_error *err);

#endif
