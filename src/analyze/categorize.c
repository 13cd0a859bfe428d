/* The categorize pass: what each allocation was (parameter, gradient,
 * ...), decided by the category rules (rules.h; the built-in ones are
 * schemas/categories.rules) from the phases it was allocated and freed in
 * (phase_map.h), the op that allocated it and, for snapshots, its stack.
 * A category the source states for the allocating event
 * (mem_event.category) is taken as it is.
 *
 * The rows are written by ONE set-based UPDATE (schemas/analyze.sql,
 * categorize_allocations) whose values come from two SQL functions this
 * file registers for the statement's run: vr_categorize() decides an
 * allocation from its columns and returns its category, and
 * vr_categorized() hands over the other results of the same allocation.
 * A per-row UPDATE bound from C cost twice SQLite's own work for a row
 * rewrite (statement start, seek, binding); a temporary table joined back
 * cost more still (docs/performance.md, fourth and fifth rounds).
 *
 * The same UPDATE writes a snapshot allocation's frame_id (its stack's
 * first frame outside torch, stack.user_frame_id), so the row, which
 * grows by its texts, is rewritten once and not twice; the locate pass
 * places the allocations of traces (python_function frames) before this
 * one, and a stack's frame takes precedence over what it placed.
 *
 * The same decisions are offered one at a time (categorize.h) to a pass
 * that writes allocation rows, so it can write them at their final size:
 * timeline does, so a row is written once, not written and rewritten
 * (docs/performance.md, seventh round); the UPDATE then decides only the
 * rows still without a category, and a stack's frame is written before
 * locate, which fills frame_id only where it is still NULL.
 *
 * Owns allocation.category, alloc_phase, free_phase, category_rule, the
 * frame_id of allocations with a stack, and analysis_state.category_rules
 * (the digest of the rules used, so a report drawn with other rules
 * analyses again). */
#include <stdlib.h>
#include <string.h>

#include "db/category.h"
#include "util/buf.h"
#include "analyze/analyze.h"
#include "analyze/categorize.h"
#include "analyze/phase_map.h"
#include "analyze/rules.h"

static const char sql[] = "schemas/analyze.sql";
/* category_rule of an allocation whose source stated its category. */
static const char stated_rule[] = "stated-by-source";

/* A mask per op name, per stack or per frame, in fixed-size direct-mapped
 * caches: memory stays bounded however many distinct names, stacks or frames
 * there are. Stacks and frames are rowids handed out in order, so a slot
 * is the id modulo the cache's size: as many consecutive ids as slots never
 * collide (a hash scattered 3,000 frames over 4,096 slots into five misses
 * a frame). A stack's miss costs a query of its frames, a frame's a query
 * of its names and the rules' globs (fnmatch). */
#define OP_SLOTS 4096
#define OP_BITS 12
#define OP_ID_SLOTS 4096
#define FRAME_SLOTS 16384
#define STACK_SLOTS 65536
typedef struct {
    int64_t key;
    uint64_t mask;
    int used, role; /* role: the frame's (rules.h), or -1 */
} mask_slot;

/* An op name's rule bits; named 0: no such name (as no op). */
typedef struct {
    int64_t key;
    uint64_t mask;
    int used, named;
} op_slot;

/* An op's name id (vr_categorizer_decide() is given the op); has_name 0:
 * no such op, or no name. */
typedef struct {
    int64_t key, name_id;
    int used, has_name;
} op_id_slot;

/* A stack's rule bits, its first frame outside torch (0: none) and its
 * roles: its innermost frame's with one (-1: none; role_pos: that frame's
 * position) and the bits of all its frames'. */
typedef struct {
    int64_t key, user_frame, role_pos;
    uint64_t mask;
    int used, role;
    unsigned within;
} stack_slot;

/* Adds a frame at `pos` of role `role` to a stack's roles. */
static void add_role(stack_slot *slot, int role, int64_t pos)
{
    if (role < 0)
        return;
    slot->within |= 1u << role;
    if (slot->role < 0 || pos < slot->role_pos) {
        slot->role = role;
        slot->role_pos = pos;
    }
}

/* The results of the allocation decided last: static strings (names of
 * categories, phases and rules), or NULL for SQL NULL. */
enum { RESULT_CATEGORY, RESULT_ALLOC_PHASE, RESULT_FREE_PHASE, RESULT_RULE, RESULT_FRAME };
typedef struct {
    int64_t id;
    int valid;
    const char *text[RESULT_FRAME];
    int64_t frame; /* frame_id to write; 0: NULL */
} cat_result;

typedef struct vr_categorizer {
    vr_db *db;
    vr_error *err;  /* where the call being served reports */
    int failed;     /* err holds an error a function met */
    int registered; /* the SQL functions are this one's */
    vr_rules rules;
    vr_phase_map map;
    cat_result last;
    struct { /* the rules' last match and its inputs */
        int valid, rule;
        vr_alloc_facts facts;
        uint64_t ops, frames;
    } match;
    uint64_t no_op_mask;     /* the rules' op bits of "no op" */
    stack_slot *stack_table; /* every stack by id (preload), or NULL */
    int64_t stack_max;       /* the stack table's last index */
    unsigned roles_seen;     /* the roles of the frames the preload read */
    op_slot ops[OP_SLOTS];
    op_id_slot op_ids[OP_ID_SLOTS];
    mask_slot frames[FRAME_SLOTS];
    stack_slot stacks[STACK_SLOTS];
} cat_sweep;

/* An allocation's columns, as vr_categorize() gets them. */
typedef struct {
    int64_t id, source, alloc_ts, free_ts, op_id, name_id, free_op, stack, frame;
    int freed, has_op, has_free_op, has_stack, has_frame;
    int stated; /* the category the source states, or -1 */
} alloc_row;

/* The rules' frame=/file= bits and the role of one frame, its names read
 * on a miss. */
static int frame_mask(cat_sweep *s, int64_t frame, uint64_t *mask, int *role)
{
    mask_slot *slot = &s->frames[(uint64_t)frame % FRAME_SLOTS];
    if (slot->used && slot->key == frame) {
        *mask = slot->mask;
        *role = slot->role;
        return 0;
    }
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "select_frame_for_rules", s->err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":frame", frame, s->err) < 0)
        return -1;
    int rc = sqlite3_step(st);
    const char *fn = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    const char *file = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 1) : NULL;
    uint64_t m = rc == SQLITE_ROW ? vr_rules_frame_mask(&s->rules, fn, file) : 0;
    int r = rc == SQLITE_ROW ? vr_rules_frame_role(&s->rules, fn, file) : -1;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading a frame's names");
    *slot = (mask_slot){frame, m, 1, r};
    *mask = m;
    *role = r;
    return 0;
}

/* The slot of a stack, its frames read on a miss: one row, the frames'
 * masks ORed by the aggregate vr_frames_mask() as SQLite reads them (a
 * row handed back per frame cost three times as much). */
static const stack_slot *stack_of(cat_sweep *s, int64_t stack)
{
    static const stack_slot no_stack = {.role = -1}; /* as the query gives for an unknown id */
    if (s->stack_table)
        return stack >= 0 && stack <= s->stack_max && s->stack_table[stack].used
                   ? &s->stack_table[stack]
                   : &no_stack;
    stack_slot *slot = &s->stacks[(uint64_t)stack % STACK_SLOTS];
    if (slot->used && slot->key == stack)
        return slot;
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "select_stack_for_rules", s->err);
    if (!st)
        return NULL;
    if (vr_db_bind_int(st, ":stack", stack, s->err) < 0)
        return NULL;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        /* vr_frames_roles(): the within bits << 8 | (the role + 1) */
        int64_t roles = sqlite3_column_int64(st, 2);
        *slot = (stack_slot){stack,
                             sqlite3_column_int64(st, 0),
                             0,
                             (uint64_t)sqlite3_column_int64(st, 1),
                             1,
                             (int)(roles & 0xff) - 1,
                             (unsigned)(roles >> 8)};
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW) {
        if (!s->failed)
            vr_db_fail(s->db, s->err, "reading a stack's frames");
        return NULL;
    }
    return slot;
}

/*-*** every stack at once ***/

/* Stacks and frames are read by one scan of each table, not a query per
 * stack: a query cost some 3,000 instructions of statement and seek and
 * 1,100 per frame row through the aggregate, the scan 800 a row.
 * Their results go into arrays indexed by id (rowids handed out in order),
 * as long as the ids stay under this bound (16 MiB for the stacks, 4 for
 * the frames' masks); beyond it the caches above read stack by stack. */
#ifndef PRELOAD_MAX_ID /* a build may lower it to test the other path */
#define PRELOAD_MAX_ID ((int64_t)1 << 19)
#endif

static int scan_done(cat_sweep *s, sqlite3_stmt *st, int rc, const char *what)
{
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(s->db, s->err, what);
}

/* The rules' frame bits of every frame into masks[id], its role into
 * roles[id]; *any: one is set, or one has a role. */
static int scan_frames(cat_sweep *s, uint64_t *masks, signed char *roles, int64_t max, int *any)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "scan_frames_for_rules", s->err);
    if (!st)
        return -1;
    int rc;
    *any = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *fn = (const char *)sqlite3_column_text(st, 1);
        const char *file = (const char *)sqlite3_column_text(st, 2);
        uint64_t m = vr_rules_frame_mask(&s->rules, fn, file);
        int role = s->rules.nroles ? vr_rules_frame_role(&s->rules, fn, file) : -1;
        if (id >= 0 && id <= max) {
            masks[id] = m;
            roles[id] = (signed char)role;
        }
        if (role >= 0)
            s->roles_seen |= 1u << role;
        *any |= m != 0 || role >= 0;
    }
    return scan_done(s, st, rc, "reading the frames' names");
}

static int scan_stacks(cat_sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "scan_stacks_for_rules", s->err);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (id >= 0 && id <= s->stack_max)
            s->stack_table[id] = (stack_slot){id, sqlite3_column_int64(st, 1), 0, 0, 1, -1, 0};
    }
    return scan_done(s, st, rc, "reading the stacks");
}

/* Each stack's mask: its frames' ORed (a frame with no row: none); its
 * roles from its frames' by position. */
static int scan_stack_frames(cat_sweep *s, const uint64_t *masks, const signed char *roles,
                             int64_t frame_max)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "scan_stack_frames_for_rules", s->err);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t stack = sqlite3_column_int64(st, 0), frame = sqlite3_column_int64(st, 1);
        if (stack >= 0 && stack <= s->stack_max && frame >= 0 && frame <= frame_max) {
            s->stack_table[stack].mask |= masks[frame];
            add_role(&s->stack_table[stack], roles[frame], sqlite3_column_int64(st, 2));
        }
    }
    return scan_done(s, st, rc, "reading the stacks' frames");
}

/* The largest stack and frame ids (an empty table: 0). */
static int id_extent(cat_sweep *s, int64_t *stack_max, int64_t *frame_max)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "stack_frame_extent", s->err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *stack_max = sqlite3_column_int64(st, 0);
        *frame_max = sqlite3_column_int64(st, 1);
        rc = sqlite3_step(st);
    }
    return scan_done(s, st, rc, "reading the stacks' extent");
}

/* Fills s->stack_table when the ids allow; when no frame has any of the
 * rules' frame bits (no rule names a frame or file, or no frame matches
 * one), every stack's mask is 0 and stack_frame is not read at all. */
static int preload_stacks(cat_sweep *s)
{
    int64_t stack_max = 0, frame_max = 0;
    s->roles_seen = ~0u; /* not known, unless the frames are all read */
    if (id_extent(s, &stack_max, &frame_max) < 0)
        return -1;
    if (stack_max > PRELOAD_MAX_ID || frame_max > PRELOAD_MAX_ID)
        return 0;
    s->roles_seen = 0;
    uint64_t *masks = vr_xmalloc(((size_t)frame_max + 1) * sizeof *masks);
    memset(masks, 0, ((size_t)frame_max + 1) * sizeof *masks);
    signed char *roles = vr_xmalloc((size_t)frame_max + 1);
    memset(roles, -1, (size_t)frame_max + 1);
    s->stack_max = stack_max;
    s->stack_table = vr_xmalloc(((size_t)stack_max + 1) * sizeof *s->stack_table);
    memset(s->stack_table, 0, ((size_t)stack_max + 1) * sizeof *s->stack_table);
    int any = 0;
    int rc = scan_frames(s, masks, roles, frame_max, &any);
    if (rc == 0)
        rc = scan_stacks(s);
    if (rc == 0 && any)
        rc = scan_stack_frames(s, masks, roles, frame_max);
    free(masks);
    free(roles);
    return rc;
}

/* The slot of an op name (by id), its text read on a miss. */
static const op_slot *op_of(cat_sweep *s, int64_t name_id)
{
    op_slot *slot = &s->ops[(uint64_t)name_id * 0x9E3779B97F4A7C15ULL >> (64 - OP_BITS)];
    if (slot->used && slot->key == name_id)
        return slot;
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "select_name_for_rules", s->err);
    if (!st)
        return NULL;
    if (vr_db_bind_int(st, ":name", name_id, s->err) < 0)
        return NULL;
    int rc = sqlite3_step(st);
    const char *text = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    *slot = (op_slot){name_id, vr_rules_op_mask(&s->rules, text), 1, text != NULL};
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        vr_db_fail(s->db, s->err, "reading an op's name");
        return NULL;
    }
    return slot;
}

/* The op's rule bits; an allocation whose op has no name has no op. */
static int op_mask(cat_sweep *s, alloc_row *a, uint64_t *mask)
{
    const op_slot *op = a->has_op ? op_of(s, a->name_id) : NULL;
    if (a->has_op && !op)
        return -1;
    a->has_op = op && op->named;
    *mask = a->has_op ? op->mask : s->no_op_mask;
    return 0;
}

static int64_t step_number(const cat_sweep *s, long idx)
{
    return s->map.steps[idx].number;
}

static void facts_of(const cat_sweep *s, const alloc_row *a, vr_alloc_facts *f)
{
    vr_phase_at at, ft;
    vr_phase_map_at(&s->map, a->source, a->alloc_ts, &at);
    memset(f, 0, sizeof *f);
    f->alloc_phase = at.phase;
    f->in_step = at.step_idx >= 0;
    f->has_stack = a->has_stack;
    f->free_phase = -1;
    if (!a->freed)
        return;
    vr_phase_map_at(&s->map, a->source, a->free_ts, &ft);
    f->free_phase = ft.phase;
    f->same_op = a->has_op && a->has_free_op && a->op_id == a->free_op;
    /* Without phases, "the same phase" says nothing: the whole run. */
    f->same_phase = at.phase == ft.phase && at.stretch == ft.stretch &&
                    at.step_idx == ft.step_idx && vr_phase_map_has_phases(&s->map, a->source);
    f->same_step = at.step_idx >= 0 && at.step_idx == ft.step_idx;
    f->later_step = ft.step_idx >= 0 && (at.step_idx < 0 || step_number(s, ft.step_idx) >
                                                                step_number(s, at.step_idx));
}

/* The first rule that holds: consecutive allocations mostly share their
 * facts and masks (a snapshot without phases: all of them but freed or
 * not), so the last match is reused (facts_of() zeroes the padding). */
static int rule_of(cat_sweep *s, const vr_alloc_facts *f, uint64_t ops, uint64_t frames)
{
    if (!s->match.valid || s->match.ops != ops || s->match.frames != frames ||
        memcmp(&s->match.facts, f, sizeof *f) != 0) {
        s->match.rule = vr_rules_match(&s->rules, f, ops, frames);
        s->match.facts = *f;
        s->match.ops = ops;
        s->match.frames = frames;
        s->match.valid = 1;
    }
    return s->match.rule;
}

/* The name id of an op (by id), read on a miss; *named 0: no such op, or
 * it has no name (then the allocation has no op, as in the UPDATE). */
static int op_name_of(cat_sweep *s, int64_t op, int *named, int64_t *name_id)
{
    op_id_slot *slot = &s->op_ids[(uint64_t)op % OP_ID_SLOTS];
    if (!slot->used || slot->key != op) {
        sqlite3_stmt *st = vr_db_stmt(s->db, sql, "select_op_name_for_rules", s->err);
        if (!st)
            return -1;
        if (vr_db_bind_int(st, ":op", op, s->err) < 0)
            return -1;
        int rc = sqlite3_step(st);
        int has = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL;
        *slot = (op_id_slot){op, has ? sqlite3_column_int64(st, 0) : 0, 1, has};
        sqlite3_reset(st);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            return vr_db_fail(s->db, s->err, "reading an op's name");
    }
    *named = slot->has_name;
    *name_id = slot->name_id;
    return 0;
}

/* Decides one allocation into s->last. */
static int categorize_one(cat_sweep *s, alloc_row *a)
{
    uint64_t ops;
    if (op_mask(s, a, &ops) < 0)
        return -1;
    vr_alloc_facts f;
    facts_of(s, a, &f);
    const stack_slot *stack = NULL;
    if (a->has_stack && !(stack = stack_of(s, a->stack)))
        return -1;
    f.role = stack ? stack->role : -1;
    f.within = stack ? stack->within : 0;
    /* What the source itself says (PyTorch's memory timeline) comes first. */
    int i = a->stated >= 0 ? -1 : rule_of(s, &f, ops, stack ? stack->mask : 0);
    int category = a->stated >= 0 ? a->stated
                   : i >= 0       ? s->rules.rule[i].category
                                  : VR_CATEGORY_UNKNOWN;
    /* A stack's user frame, else what the locate pass placed. */
    int64_t frame = stack && stack->user_frame ? stack->user_frame : a->has_frame ? a->frame : 0;
    s->last = (cat_result){a->id,
                           1,
                           {vr_category_names[category], vr_phase_name(f.alloc_phase),
                            f.free_phase >= 0 ? vr_phase_name(f.free_phase) : NULL,
                            a->stated >= 0 ? stated_rule
                            : i >= 0       ? s->rules.rule[i].name
                                           : NULL},
                           frame};
    return 0;
}

/*-*** the SQL functions of categorize_allocations ***/

/* vr_categorize()'s arguments, in the order analyze.sql passes them. */
enum {
    ARG_ID,
    ARG_SOURCE,
    ARG_ALLOC_TS,
    ARG_FREE_TS,
    ARG_OP,
    ARG_OP_NAME,
    ARG_FREE_OP,
    ARG_STACK,
    ARG_STATED,
    ARG_FRAME,
    ARG_COUNT
};

static int is_null(sqlite3_value *v)
{
    return sqlite3_value_type(v) == SQLITE_NULL;
}

static void read_alloc(sqlite3_value **v, alloc_row *a)
{
    a->id = sqlite3_value_int64(v[ARG_ID]);
    a->source = sqlite3_value_int64(v[ARG_SOURCE]);
    a->alloc_ts = sqlite3_value_int64(v[ARG_ALLOC_TS]);
    a->freed = !is_null(v[ARG_FREE_TS]);
    a->free_ts = sqlite3_value_int64(v[ARG_FREE_TS]);
    a->has_op = !is_null(v[ARG_OP]) && !is_null(v[ARG_OP_NAME]);
    a->op_id = sqlite3_value_int64(v[ARG_OP]);
    a->name_id = sqlite3_value_int64(v[ARG_OP_NAME]);
    a->has_free_op = !is_null(v[ARG_FREE_OP]);
    a->free_op = sqlite3_value_int64(v[ARG_FREE_OP]);
    a->has_stack = !is_null(v[ARG_STACK]);
    a->stack = sqlite3_value_int64(v[ARG_STACK]);
    a->stated = is_null(v[ARG_STATED])
                    ? -1
                    : vr_category_index((const char *)sqlite3_value_text(v[ARG_STATED]));
    a->has_frame = !is_null(v[ARG_FRAME]);
    a->frame = sqlite3_value_int64(v[ARG_FRAME]);
}

/* The strings outlive the statement (rules and name tables); measured
 * here, as SQLite would measure them a byte at a time. */
static void result_static(sqlite3_context *ctx, const char *text)
{
    if (text)
        sqlite3_result_text(ctx, text, (int)strlen(text), SQLITE_STATIC);
    else
        sqlite3_result_null(ctx);
}

/* vr_categorize(id, source, alloc_ts, free_ts, op, op's name id, free
 * event's op, stack, stated category, frame_id): decides the allocation
 * and returns its category. */
static void sql_categorize(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    cat_sweep *s = sqlite3_user_data(ctx);
    alloc_row a;
    (void)argc;
    read_alloc(argv, &a);
    s->last.valid = 0;
    if (categorize_one(s, &a) < 0) {
        s->failed = 1;
        sqlite3_result_error(ctx, s->err->msg, -1);
        return;
    }
    result_static(ctx, s->last.text[RESULT_CATEGORY]);
}

/* vr_categorized(id, what): a result of the allocation vr_categorize()
 * decided last (the subquery's first column, so SQLite has evaluated it
 * just before); any other allocation is an error, never a wrong row. */
static void sql_categorized(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const cat_sweep *s = sqlite3_user_data(ctx);
    int what = sqlite3_value_int(argv[1]);
    (void)argc;
    if (!s->last.valid || s->last.id != sqlite3_value_int64(argv[0]) || what <= RESULT_CATEGORY ||
        what > RESULT_FRAME) {
        sqlite3_result_error(ctx, "internal: vr_categorized() before vr_categorize()", -1);
        return;
    }
    if (what < RESULT_FRAME)
        result_static(ctx, s->last.text[what]);
    else if (s->last.frame)
        sqlite3_result_int64(ctx, s->last.frame);
    else
        sqlite3_result_null(ctx);
}

/* vr_frames_mask(frame_id): the rules' frame bits of a stack's frames. */
static void sql_frames_mask_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    cat_sweep *s = sqlite3_user_data(ctx);
    uint64_t *acc = sqlite3_aggregate_context(ctx, sizeof *acc), m = 0;
    int role;
    (void)argc;
    if (!acc) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (is_null(argv[0]))
        return;
    if (frame_mask(s, sqlite3_value_int64(argv[0]), &m, &role) < 0) {
        s->failed = 1;
        sqlite3_result_error(ctx, s->err->msg, -1);
        return;
    }
    *acc |= m;
}

static void sql_frames_mask_final(sqlite3_context *ctx)
{
    uint64_t *acc = sqlite3_aggregate_context(ctx, 0);
    sqlite3_result_int64(ctx, acc ? (int64_t)*acc : 0);
}

/* vr_frames_roles(position, frame_id): a stack's roles, packed as its
 * frames' role bits << 8 | (its innermost role + 1). */
static void sql_frames_roles_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    cat_sweep *s = sqlite3_user_data(ctx);
    stack_slot *acc = sqlite3_aggregate_context(ctx, sizeof *acc);
    uint64_t m;
    int role;
    (void)argc;
    if (!acc) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (!acc->used)
        *acc = (stack_slot){.used = 1, .role = -1};
    if (is_null(argv[1]))
        return;
    if (frame_mask(s, sqlite3_value_int64(argv[1]), &m, &role) < 0) {
        s->failed = 1;
        sqlite3_result_error(ctx, s->err->msg, -1);
        return;
    }
    add_role(acc, role, sqlite3_value_int64(argv[0]));
}

static void sql_frames_roles_final(sqlite3_context *ctx)
{
    stack_slot *acc = sqlite3_aggregate_context(ctx, 0);
    sqlite3_result_int64(ctx, acc && acc->used ? (int64_t)acc->within << 8 | (acc->role + 1) : 0);
}

static const vr_db_function categorize_functions[] = {
    {"vr_categorize", ARG_COUNT, sql_categorize, NULL, NULL},
    {"vr_categorized", 2, sql_categorized, NULL, NULL},
    {"vr_frames_mask", 1, NULL, sql_frames_mask_step, sql_frames_mask_final},
    {"vr_frames_roles", 2, NULL, sql_frames_roles_step, sql_frames_roles_final},
};

/* s NULL: removes them, so nothing can call them with a freed sweep. */
static int register_functions(vr_db *db, cat_sweep *s, vr_error *err)
{
    size_t n = sizeof categorize_functions / sizeof *categorize_functions;
    return vr_db_functions(db, categorize_functions, n, s, err);
}

/* The functions are the categorizer's from its opening to its release
 * (vr_frames_mask() serves its stack-by-stack reads too). */
static int categorize_allocations(cat_sweep *s)
{
    vr_error outer = VR_ERROR_INIT;
    int rc = vr_db_exec_named(s->db, sql, "categorize_allocations", &outer);
    /* A function's own error (in s->err) says more than SQLite's echo. */
    if (rc < 0 && !s->failed)
        *s->err = outer;
    return rc;
}

static int record_digest(cat_sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "set_category_rules_digest", s->err);
    if (!st)
        return -1;
    if (vr_db_bind_text(st, ":digest", s->rules.digest, strlen(s->rules.digest), s->err) < 0)
        return -1;
    return vr_db_step_done(s->db, st, s->err);
}

/* The rules vr_analyze_with() handed over (checked there already). */
static int read_rules(vr_db *db, vr_rules *rules, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "select_analysis_rules", err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    const char *text = rc == SQLITE_ROW ? sqlite3_column_blob(st, 1) : NULL;
    if (rc == SQLITE_ROW)
        rc = vr_rules_parse(rules, (const char *)sqlite3_column_text(st, 0), text ? text : "",
                            (size_t)sqlite3_column_bytes(st, 1), err);
    else if (rc == SQLITE_DONE)
        rc = vr_fail(err, "internal: no category rules handed to the analysis");
    else
        rc = vr_db_fail(db, err, "reading the category rules");
    sqlite3_reset(st);
    return rc;
}

/*-*** the categorizer (categorize.h) ***/

/* load 0: the rules alone (enough for their digest). The SQL functions
 * are registered with this categorizer until vr_categorizer_free(), so
 * one categorizer is open at a time on a connection. */
static int categorizer_new(vr_db *db, int load, vr_categorizer **out, vr_error *err)
{
    *out = NULL;
    cat_sweep *s = vr_xcalloc(1, sizeof *s);
    if (read_rules(db, &s->rules, err) < 0) {
        free(s);
        return -1;
    }
    s->db = db;
    s->err = err;
    s->no_op_mask = vr_rules_op_mask(&s->rules, NULL);
    int rc = load ? vr_phase_map_load_steps(db, &s->map, err) : 0;
    if (rc == 0 && load)
        rc = vr_phase_map_load_phases(db, &s->map, err);
    if (rc == 0 && load) {
        s->registered = 1; /* removed by vr_categorizer_free even when this fails part way */
        rc = register_functions(db, s, err);
    }
    if (rc == 0 && load)
        rc = preload_stacks(s);
    if (rc < 0) {
        vr_categorizer_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

int vr_categorizer_open(vr_db *db, vr_categorizer **out, vr_error *err)
{
    return categorizer_new(db, 1, out, err);
}

int vr_categorizer_decide(vr_categorizer *c, const vr_categorize_in *in, vr_categorize_out *out,
                          vr_error *err)
{
    alloc_row a = {
        .source = in->source,
        .alloc_ts = in->alloc_ts,
        .freed = in->freed,
        .free_ts = in->freed ? in->free_ts : 0,
        .op_id = in->op,
        .free_op = in->free_op,
        .has_free_op = in->has_free_op,
        .stack = in->stack,
        .has_stack = in->has_stack,
        .stated = in->stated,
    };
    c->err = err;
    if (in->has_op && op_name_of(c, in->op, &a.has_op, &a.name_id) < 0)
        return -1;
    if (categorize_one(c, &a) < 0)
        return -1;
    const cat_result *r = &c->last;
    *out = (vr_categorize_out){r->text[RESULT_CATEGORY], r->text[RESULT_ALLOC_PHASE],
                               r->text[RESULT_FREE_PHASE], r->text[RESULT_RULE], r->frame};
    return 0;
}

int vr_categorizer_stack_roles(vr_categorizer *c, int64_t stack, int *role, unsigned *within,
                               vr_error *err)
{
    c->err = err;
    const stack_slot *slot = stack_of(c, stack);
    if (!slot)
        return -1;
    *role = slot->role;
    *within = slot->within;
    return 0;
}

int vr_categorizer_role_index(const vr_categorizer *c, const char *name)
{
    for (size_t i = 0; i < c->rules.nrole_names; i++)
        if (strcmp(c->rules.role_name[i], name) == 0)
            return (int)i;
    return -1;
}

unsigned vr_categorizer_roles_seen(const vr_categorizer *c)
{
    return c->roles_seen;
}

void vr_categorizer_free(vr_categorizer *c)
{
    if (!c)
        return;
    vr_error unused = VR_ERROR_INIT; /* fails only while a statement runs */
    if (c->registered)
        register_functions(c->db, NULL, &unused);
    vr_phase_map_free(&c->map);
    free(c->stack_table);
    vr_rules_free(&c->rules);
    free(c);
}

/*-*** the pass ***/

/* Whether some allocation has no category yet (none: a pass that wrote
 * the rows decided them all, and nothing is read here). */
static int any_undecided(vr_db *db, int *any, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "any_undecided_allocation", err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    *any = rc == SQLITE_ROW && sqlite3_column_int(st, 0) != 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : vr_db_fail(db, err, "reading the allocations");
}

int vr_analyze_categorize(vr_db *db, vr_error *err)
{
    int any = 0;
    vr_categorizer *c = NULL;
    if (any_undecided(db, &any, err) < 0 || categorizer_new(db, any, &c, err) < 0)
        return -1;
    int rc = any ? categorize_allocations(c) : 0;
    if (rc == 0)
        rc = record_digest(c);
    vr_categorizer_free(c);
    return rc;
}
