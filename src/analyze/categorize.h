/*-*** categorize.h: an allocation's category, decided one at a time ***/
/*
 * What the categorize pass decides for an allocation (its category, the
 * phases it was allocated and freed in, the rule that decided, its
 * stack's first frame outside torch), for a pass that writes allocation
 * rows: a row written with these values at once is never rewritten, and
 * the categorize pass decides only the rows still without a category
 * (the rewrite of every row was most of its cost: docs/performance.md,
 * "Seventh round: categorize").
 *
 * A categorizer reads what the pass reads: the analysis's rules
 * (temp.analysis_rules, filled by vr_analyze_with()), the steps and the
 * phases (so it must be opened after the phases pass), the stacks and
 * frames, the ops' names. The rows it is asked about need not exist.
 *
 * Ownership: vr_categorizer_open() gives a categorizer released with
 * vr_categorizer_free(), while no statement of the connection is running
 * (it registers SQL functions of its own until then, so one categorizer
 * is open at a time on a connection). The strings of a decision are static (the
 * category, phase and rule names outlive the categorizer's use in the
 * transaction: they may be bound with SQLITE_STATIC or vr_batch).
 */
#ifndef VR_CATEGORIZE_H
#define VR_CATEGORIZE_H

#include <stdint.h>

#include "db/db.h"
#include "util/error.h"

typedef struct vr_categorizer vr_categorizer;

/* One allocation, as its events give it (a has_* of 0: SQL NULL). */
typedef struct {
    int64_t source, alloc_ts;
    int freed;
    int64_t free_ts; /* read only when freed */
    int has_op, has_free_op, has_stack;
    int64_t op;      /* the allocating event's op_id */
    int64_t free_op; /* the freeing event's op_id */
    int64_t stack;   /* the allocating event's stack_id */
    int stated;      /* vr_category_index() of the allocating
                                      * event's category; -1: it has none */
} vr_categorize_in;

/* The allocation's columns category, alloc_phase, free_phase,
 * category_rule (NULL: SQL NULL) and frame_id (0: NULL; the stack's user
 * frame, which takes precedence over what the locate pass places). */
typedef struct {
    const char *category, *alloc_phase, *free_phase, *rule;
    int64_t frame;
} vr_categorize_out;

int vr_categorizer_open(vr_db *db, vr_categorizer **out, vr_error *err);
int vr_categorizer_decide(vr_categorizer *c, const vr_categorize_in *in, vr_categorize_out *out,
                          vr_error *err);
void vr_categorizer_free(vr_categorizer *c);

/* The role classification alone, for a pass before timeline (phases: a
 * snapshot's phases from its entries' stacks), so that a stack's roles
 * are decided once, by the rules' role lines. The roles of `stack`: *role,
 * its innermost frame's that has one (-1: none; also for an unknown
 * stack), *within, the bits of all its frames' roles. */
int vr_categorizer_stack_roles(vr_categorizer *c, int64_t stack, int *role, unsigned *within,
                               vr_error *err);
/* The index of the role `name` the rules declare, or -1. */
int vr_categorizer_role_index(const vr_categorizer *c, const char *name);
/* The role bits some frame has (all its frames' ORed); every bit when the
 * stacks are read one at a time (too many to hold), so not known. */
unsigned vr_categorizer_roles_seen(const vr_categorizer *c);

#endif
