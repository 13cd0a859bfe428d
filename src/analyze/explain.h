/*-*** explain.h: what a peak's unexplained bytes were, where the files say ***/
/*
 * The breakdown's running sums leave unknown what no live allocation of
 * the record explains: memory live since before the record began (most
 * of a snapshot or trace recorded in the middle of a run), events
 * without addresses, allocations no category rule decided. An engineer
 * reading the same file can often tell what the first was: half of a
 * measured Adam state is the parameters, what a forward-only run held
 * before its record are its weights, what an optimizer step lets go of
 * is its old state. explain makes those inferences, each with the
 * figures it stands on and a confidence, and makes none where the file
 * gives no grounds (docs/breakdown.md, "How we know").
 *
 * The breakdown pass calls vr_explain_device() for each device with a
 * peak, before it writes the peak's rows: explain writes the device's
 * peak_explained, peak_evidence and peak_unknown rows and returns the
 * bytes to move out of unknown, which vr_explain_apply() moves at the
 * peak and at each of the chart's samples of the peak's source.
 *
 * Ownership: the caller's vr_explain_out, emptied by vr_explain_out_free().
 */
#ifndef VR_EXPLAIN_H
#define VR_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "db/category.h"
#include "db/db.h"
#include "util/error.h"

/* Blocks in use since before the record that the category rules decided
 * by their stacks (the breakdown counted them already), by category:
 * their bytes, how many, and the name of the first rule that decided
 * (cut to fit). */
typedef struct {
    int64_t bytes[VR_CATEGORY_COUNT], count[VR_CATEGORY_COUNT];
    char rule[VR_CATEGORY_COUNT][48];
    /* blocks whose stacks no rule decided: their stacks say what they
     * were, and no inference from sizes or the run's shape overrules it */
    int64_t undecided;
    /* blocks without stacks: a snapshot's memory from before the record
     * that it never frees, with nothing to say what it was */
    int64_t stackless;
    int blocks_read; /* the blocks in use at the end were read (all of them) */
} vr_explain_before;

typedef struct {
    int64_t device, source;   /* the device and its peak's source */
    int64_t peak_ts, peak_id; /* the peak event, on the source's clock */
    int64_t residual;         /* of the peak: bytes no live allocation explains */
    int64_t undecided;        /* of the peak: live allocations no rule decided */
    int stated;               /* the source states its categories: taken as stated */
    /* the source's allocations never freed, by category */
    int64_t end_live[VR_CATEGORY_COUNT];
    vr_explain_before before;
} vr_explain_in;

/* Memory a move stands for that is let go of after the peak. */
typedef struct {
    int64_t ts, bytes;
} vr_explain_release;

typedef struct {
    int category;
    int64_t bytes;           /* out of unknown at the peak */
    vr_explain_release *rel; /* after the peak, in time order */
    size_t nrel;
} vr_explain_move;

#define VR_EXPLAIN_MOVES 8

typedef struct {
    vr_explain_move move[VR_EXPLAIN_MOVES];
    size_t n;
} vr_explain_out;

/* Decides and writes one device's rows; *out (zeroed by the caller) gets
 * the moves. */
int vr_explain_device(vr_db *db, const vr_explain_in *in, vr_explain_out *out, vr_error *err);

/* Moves a point's bytes (summing to its total, as vr_category_settle()
 * leaves them) out of unknown: at the peak and before it each move's
 * bytes, after it (after_peak) less what was let go of by `ts`. Never
 * more than unknown holds, so the sum stays. */
void vr_explain_apply(const vr_explain_out *out, int64_t ts, int after_peak,
                      int64_t bytes[VR_CATEGORY_COUNT]);

void vr_explain_out_free(vr_explain_out *out);

#endif
