/*-*** phase_map.h: where in a run a moment lies (steps and phases) ***/
/*
 * The steps (ProfilerStep#N) and phases (table phase, written by the
 * phases pass) of every source, held sorted in memory (a few per step),
 * and the lookup the categorize and phase_peaks passes share: for a
 * (source, time), its step and phase. Ownership: the loaders fill a
 * vr_phase_map the caller releases with vr_phase_map_free().
 */
#ifndef VR_PHASE_MAP_H
#define VR_PHASE_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "util/error.h"

typedef struct {
    int64_t source, number, ts, end;
} vr_step_span;

typedef struct {
    int64_t source, start, end;
    long step_idx; /* into steps, or -1 */
    int kind;      /* VR_PHASE_* */
} vr_phase_span;

typedef struct {
    vr_step_span *steps; /* by (source, ts) */
    size_t nsteps;
    vr_phase_span *phases; /* by (source, start) */
    size_t nphases;
} vr_phase_map;

/* Where a moment lies: phase VR_PHASE_*; phase_idx and step_idx index the
 * map (-1: in none); stretch: the last phase of its source that began at
 * or before it (-1: none), so that two moments in no phase are in the
 * same stretch of it when no phase began between them. */
typedef struct {
    int phase;
    long phase_idx, step_idx, stretch;
} vr_phase_at;

int vr_phase_map_load_steps(vr_db *db, vr_phase_map *m, vr_error *err);
int vr_phase_map_load_phases(vr_db *db, vr_phase_map *m, vr_error *err);
void vr_phase_map_free(vr_phase_map *m);

/* The step of (source, ts), or -1. */
long vr_phase_map_step(const vr_phase_map *m, int64_t source, int64_t ts);
/* Whether `source` has any phase. */
int vr_phase_map_has_phases(const vr_phase_map *m, int64_t source);
void vr_phase_map_at(const vr_phase_map *m, int64_t source, int64_t ts, vr_phase_at *at);

/* The kind's VR_PHASE_* from its name, or -1. */
int vr_phase_kind(const char *name);

#endif
