/*-*** rules.h: the category rules (schemas/categories.rules) ***/
/*
 * The categorize pass decides what each allocation was by the first rule
 * of a rules file whose conditions all hold (format: the file's header and
 * docs/categories.md). This module parses such a file into a
 * vr_rules and evaluates it on an allocation's facts; it knows nothing of
 * the database. Ownership: vr_rules_parse() fills a vr_rules the caller
 * releases with vr_rules_free().
 */
#ifndef VR_RULES_H
#define VR_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "db/category.h"
#include "util/error.h"

/* Phases, as bits of a condition's set (alloc= and free=). */
enum {
    VR_PHASE_BEFORE,
    VR_PHASE_FORWARD,
    VR_PHASE_BACKWARD,
    VR_PHASE_OPTIMIZER,
    VR_PHASE_ZERO_GRAD,
    VR_PHASE_OTHER,
    VR_PHASE_COUNT
};

/* The phase's name as stored (allocation.alloc_phase, phase.kind). */
const char *vr_phase_name(int phase);
/* Categories are db/category.h's: a rule's category is an index there. */

/* At most this many rules: a stack's or an op's matches are kept as one
 * 64-bit mask. */
#define VR_RULES_MAX 64

typedef struct {
    char **globs;
    size_t n;
    int negate, set;
} vr_rule_globs;

/* At most this many distinct role names (a stack's roles are a mask of
 * them; the top bit of a role= set stands for "no role"). */
#define VR_ROLES_MAX 31
#define VR_ROLE_NONE_BIT (1u << VR_ROLES_MAX)

typedef struct {
    char *name;
    int category;
    unsigned alloc_set, free_set; /* bits; 0: no condition */
    int alloc_neg, free_neg;
    int step; /* -1: no condition, 0 no, 1 yes */
    vr_rule_globs op, frame, file;
    unsigned role_set, within_set; /* role bits (role=, within=); 0: no condition */
    int role_neg, within_neg;
} vr_rule;

/* A `role` line: frames matching its globs (on the same frame) have the
 * role `role` (an index into vr_rules.role_name). */
typedef struct {
    int role;
    vr_rule_globs frame, file;
} vr_role_line;

typedef struct {
    vr_rule *rule;
    size_t n;
    vr_role_line *roles; /* in the file's order: the first that holds decides */
    size_t nroles;
    char *role_name[VR_ROLES_MAX];
    size_t nrole_names;
    char digest[17];     /* XXH64 of the text: which rules decided */
    char *origin, *text; /* the file's name and its text (copies) */
    size_t len;
} vr_rules;

/* Parses `text` (len bytes) named `origin` in messages. On error: -1 and
 * "ORIGIN:LINE: what was expected". */
int vr_rules_parse(vr_rules *r, const char *origin, const char *text, size_t len, vr_error *err);
/* The built-in rules (schemas/categories.rules), or the file `path`. */
int vr_rules_load(vr_rules *r, const char *path, vr_error *err);
void vr_rules_free(vr_rules *r);

/* What is known of one allocation. */
typedef struct {
    int alloc_phase; /* VR_PHASE_* */
    int free_phase;  /* VR_PHASE_*, or -1: never freed */
    int same_op, same_phase, same_step, later_step, in_step;
    int has_stack;
    int role;        /* the role of the stack's innermost frame with one, or -1 */
    unsigned within; /* the roles of all its frames, as bits */
} vr_alloc_facts;

/* Frame conditions against one frame (function, file): the caller walks a
 * stack and ORs the masks of its frames. */
uint64_t vr_rules_frame_mask(const vr_rules *r, const char *function, const char *file);
/* The role of one frame (function, file): the first `role` line that
 * holds, or -1. A stack's role is its innermost frame's that has one. */
int vr_rules_frame_role(const vr_rules *r, const char *function, const char *file);
/* Rules whose op= holds for this op name (NULL: no op). */
uint64_t vr_rules_op_mask(const vr_rules *r, const char *op);

/* The index of the first rule that holds, or -1. op_mask and frame_mask
 * come from the functions above (the op's name is in op_mask alone). */
int vr_rules_match(const vr_rules *r, const vr_alloc_facts *f, uint64_t op_mask,
                   uint64_t frame_mask);

#endif
