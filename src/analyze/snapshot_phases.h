/*-*** snapshot_phases.h: an allocator snapshot's phases, from its stacks ***/
/*
 * Internal to the phases pass (phases.c). An allocator snapshot has no
 * operators to cut its run by; its entries' stacks and its
 * external_annotations say what ran instead (docs/categories.md, "Phases
 * of an allocator snapshot"). phases.c hands over the snapshots' sources
 * and the annotations its read of the ops met (Optimizer.step# and
 * Optimizer.zero_grad#); this module reads the entries (one scan of the
 * events, in table order) and writes each snapshot's phase rows.
 */
#ifndef VR_SNAPSHOT_PHASES_H
#define VR_SNAPSHOT_PHASES_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "util/error.h"

/* A snapshot source and the end of its record (source.end_ns). */
typedef struct {
    int64_t id, end;
} vr_snap_source;

/* One annotation: kind VR_PHASE_OPTIMIZER or VR_PHASE_ZERO_GRAD. */
typedef struct {
    int64_t source, start, end;
    int kind;
} vr_snap_stage;

typedef struct {
    vr_snap_source *sources; /* by id */
    size_t nsources;
    vr_snap_stage *stages; /* by (source, start, longest first) */
    size_t nstages, cap_stages;
} vr_snap_phase_input;

/* Loads the snapshot sources (none: nothing to do). */
int vr_snap_phases_sources(vr_db *db, vr_snap_phase_input *in, vr_error *err);
/* Whether `source` is one of them. */
int vr_snap_phases_is_snapshot(const vr_snap_phase_input *in, int64_t source);
/* Keeps one annotation (in the order select_phase_ops gives). */
void vr_snap_phases_stage(vr_snap_phase_input *in, int64_t source, int kind, int64_t start,
                          int64_t end);
/* Writes every snapshot's phases (table phase, step and tid NULL). */
int vr_snap_phases_write(vr_db *db, const vr_snap_phase_input *in, vr_error *err);
void vr_snap_phases_free(vr_snap_phase_input *in);

#endif
