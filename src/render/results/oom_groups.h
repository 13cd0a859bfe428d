/*-*** oom_groups.h: out-of-memory findings of one shape, told once ***/
/*
 * A job that fails the same way on every step (a retry loop, every rank
 * of a large job) leaves thousands of errors that differ only in their
 * figures. The report tells such a group once: its first finding in full
 * and "1,998 more like it" with the range of their figures, so that its
 * length, and the time and memory it takes to write, do not grow with the
 * number of errors.
 *
 * A shape: the same device (and rank), the same kind (the finding's
 * primary cause) and a request of the same power of two (22 MiB and 30
 * MiB are alike; 30 MiB and 34 MiB are not; an unstated request is a
 * shape of its own). A group of at most VR_OOM_GROUP_FULL errors is
 * listed finding by finding; a larger one by its first alone. At most
 * VR_OOM_GROUPS_MAX shapes are kept: the errors of any further shape make
 * one last group, "of other shapes", told the same way.
 *
 * Memory is bounded by those constants, whatever the number of errors:
 * the findings are read once, in the findings list's order, and only the
 * groups are kept.
 */
#ifndef VR_OOM_GROUPS_H
#define VR_OOM_GROUPS_H

#include <cjson/cJSON.h>

#include "db/db.h"
#include "util/error.h"

#define VR_OOM_GROUP_FULL 3   /* a group of at most this many errors lists each */
#define VR_OOM_GROUPS_MAX 100 /* shapes kept; further ones are one group */

typedef struct vr_oom_groups vr_oom_groups;

/* Reads every OOM finding (report.sql's oom_shapes) into its group. NULL
 * on a database error (err set). */
vr_oom_groups *vr_oom_groups_read(vr_db *db, vr_error *err);
void vr_oom_groups_free(vr_oom_groups *g);

typedef enum {
    VR_OOM_FOLDED = 0, /* left out: its group's first tells it */
    VR_OOM_LISTED,     /* listed, in a group small enough to list each */
    VR_OOM_FIRST       /* listed, with "N more like it" (its group's) */
} vr_oom_place;

/* Where the OOM finding `finding_id` goes; *group: its group's index
 * (VR_OOM_FIRST only). An OOM finding that is none of the first
 * VR_OOM_GROUP_FULL of its group is folded. */
vr_oom_place vr_oom_groups_place(const vr_oom_groups *g, long long finding_id, int *group);

/* "more_like_it" of a group's first finding: {more, errors, other_shapes,
 * requested/free/reserved _min_bytes/_max_bytes (null: no error of the
 * group states it), first_ts_ns, last_ts_ns}. */
cJSON *vr_oom_groups_like_it(const vr_oom_groups *g, int group);

/* "oom_groups": every group, in the order of its first finding: the
 * members of more_like_it but `more`, with device, rank, kind, and the
 * first error's source and line. */
cJSON *vr_oom_groups_list(const vr_oom_groups *g);

/* Adds "text" to a decorated more_like_it object (its _h and _t texts):
 * "1,998 more like it: requested 20.0 MiB to 24.0 MiB, free ..., reserved
 * ..., from 10.042 s to 7203.1 s". */
void vr_oom_groups_describe(cJSON *like_it);

/* Adds what the Out-of-memory errors section's table of groups shows to
 * each decorated member of oom_groups: requested_range, free_range,
 * reserved_range, time_range ("20.0 MiB to 24.0 MiB", "22.0 MiB", "-"),
 * errors_n ("1,999"), rank_text, where ("train.log line 51"). Returns
 * whether a group is told by its first finding alone (more than
 * VR_OOM_GROUP_FULL errors). */
int vr_oom_groups_describe_list(cJSON *groups);

#endif
