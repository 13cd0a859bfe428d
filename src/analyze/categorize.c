/* The categorize pass: what each allocation was (parameter, gradient,
 * ...), decided by the category rules (rules.h; the built-in ones are
 * schemas/categories.rules) from the phases it was allocated and freed in
 * (phase_map.h), the op that allocated it and, for snapshots, its stack.
 * The allocations are read in chunks of CHUNK rowids; each chunk's results
 * are held (static strings: names of categories, phases and rules) and
 * written back by rowid before the next chunk is read, so no row is
 * rewritten under the read and nothing goes through a temporary table
 * (which cost a third of the pass: every row inserted, read and joined
 * again). A category the source states for the allocating event
 * (mem_event.category) is taken as it is. Owns allocation.category, alloc_phase, free_phase, category_rule
 * and analysis_state.category_rules (the digest of the rules used, so a
 * report drawn with other rules analyses again). */
#include <stdlib.h>
#include <string.h>

#include "../db/category.h"
#include "../util/buf.h"
#include "analyze.h"
#include "phase_map.h"
#include "rules.h"

static const char sql[] = "schemas/analyze.sql";
/* category_rule of an allocation whose source stated its category. */
static const char stated_rule[] = "stated-by-source";

/* A mask per op name, per stack or per frame, in fixed-size direct-mapped
 * caches: memory stays bounded however many distinct names, stacks or frames
 * there are. The stacks' cache is the large one (1.5 MiB): a snapshot's
 * allocations come from some tens of thousands of stacks in no order, and a
 * miss costs a query of the stack's frames (4096 slots missed four lookups
 * in five on 20,000 stacks: 46 s of CPU on a 517 MiB snapshot). A frame's
 * mask (the rules' globs, fnmatch) is cached by frame id, so a stack read
 * again matches no glob again. */
#define CACHE_SLOTS 4096
#define CACHE_BITS 12
#define STACK_CACHE_SLOTS 65536
#define STACK_CACHE_BITS 16
/* Allocations read before their results are written back. */
#define CHUNK 4096
typedef struct {
    int64_t key;
    uint64_t mask;
    int used;
} mask_slot;

/* One allocation's results: static strings, or NULL for SQL NULL. */
typedef struct {
    int64_t id;
    const char *category, *alloc_phase, *free_phase, *rule;
} cat_result;

typedef struct {
    vr_db *db;
    vr_error *err;
    const vr_rules *rules;
    vr_phase_map map;
    cat_result out[CHUNK];
    int nout;
    mask_slot ops[CACHE_SLOTS], frames[CACHE_SLOTS], stacks[STACK_CACHE_SLOTS];
} cat_sweep;

typedef struct {
    int64_t id, source, alloc_ts, free_ts, op_id, name_id, free_op, stack;
    int freed, has_op, has_free_op, has_stack;
    int stated;                      /* the category the source states, or -1 */
    const char *op_name;
} alloc_row;

static mask_slot *slot_for(mask_slot *cache, int bits, int64_t key)
{
    return &cache[(uint64_t)key * 0x9E3779B97F4A7C15ULL >> (64 - bits)];
}

/* The rules' frame=/file= bits of one frame, its names read on a miss. */
static int frame_mask(cat_sweep *s, int64_t frame, uint64_t *mask)
{
    mask_slot *slot = slot_for(s->frames, CACHE_BITS, frame);
    if (slot->used && slot->key == frame) {
        *mask = slot->mask;
        return 0;
    }
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "select_frame_for_rules", s->err);
    if (!st)
        return -1;
    vr_db_bind_int(st, ":frame", frame);
    int rc = sqlite3_step(st);
    uint64_t m = rc == SQLITE_ROW ? vr_rules_frame_mask(s->rules,
                                                        (const char *)sqlite3_column_text(st, 0),
                                                        (const char *)sqlite3_column_text(st, 1))
                                  : 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading a frame's names");
    *slot = (mask_slot){frame, m, 1};
    *mask = m;
    return 0;
}

static int stack_mask(cat_sweep *s, int64_t stack, uint64_t *mask)
{
    mask_slot *slot = slot_for(s->stacks, STACK_CACHE_BITS, stack);
    if (slot->used && slot->key == stack) {
        *mask = slot->mask;
        return 0;
    }
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "select_stack_frame_ids", s->err);
    if (!st)
        return -1;
    vr_db_bind_int(st, ":stack", stack);
    uint64_t m = 0, fm = 0;
    int rc, failed = 0;
    while (!failed && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        failed = frame_mask(s, sqlite3_column_int64(st, 0), &fm) < 0;
        m |= fm;
    }
    sqlite3_reset(st);
    if (failed)
        return -1;
    if (rc != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading a stack's frames");
    *slot = (mask_slot){stack, m, 1};
    *mask = m;
    return 0;
}

static uint64_t op_mask(cat_sweep *s, const alloc_row *a)
{
    if (!a->has_op)
        return vr_rules_op_mask(s->rules, NULL);
    mask_slot *slot = slot_for(s->ops, CACHE_BITS, a->name_id);
    if (!slot->used || slot->key != a->name_id)
        *slot = (mask_slot){a->name_id, vr_rules_op_mask(s->rules, a->op_name), 1};
    return slot->mask;
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
    f->op = a->has_op ? a->op_name : NULL;
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
    f->later_step = ft.step_idx >= 0 &&
                    (at.step_idx < 0 || step_number(s, ft.step_idx) > step_number(s, at.step_idx));
}

static int categorize_one(cat_sweep *s, const alloc_row *a)
{
    vr_alloc_facts f;
    facts_of(s, a, &f);
    uint64_t frames = 0;
    if (a->has_stack && stack_mask(s, a->stack, &frames) < 0)
        return -1;
    /* What the source itself says (PyTorch's memory timeline) comes first. */
    int i = a->stated >= 0 ? -1 : vr_rules_match(s->rules, &f, op_mask(s, a), frames);
    int category = a->stated >= 0 ? a->stated
                   : i >= 0       ? s->rules->rule[i].category
                                  : VR_CATEGORY_UNKNOWN;
    s->out[s->nout++] = (cat_result){
        a->id, vr_category_names[category], vr_phase_name(f.alloc_phase),
        f.free_phase >= 0 ? vr_phase_name(f.free_phase) : NULL,
        a->stated >= 0 ? stated_rule : i >= 0 ? s->rules->rule[i].name : NULL};
    return 0;
}

/* The strings outlive the statement's step (rules and name tables). */
static void bind_static(sqlite3_stmt *st, const char *name, const char *text)
{
    int idx = sqlite3_bind_parameter_index(st, name);
    if (text)
        sqlite3_bind_text(st, idx, text, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, idx);
}

static int write_results(cat_sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "set_category", s->err);
    if (!st)
        return -1;
    for (int i = 0; i < s->nout; i++) {
        const cat_result *r = &s->out[i];
        vr_db_bind_int(st, ":id", r->id);
        bind_static(st, ":category", r->category);
        bind_static(st, ":alloc_phase", r->alloc_phase);
        bind_static(st, ":free_phase", r->free_phase);
        bind_static(st, ":rule", r->rule);
        if (vr_db_step_done(s->db, st, s->err) < 0)
            return -1;
    }
    s->nout = 0;
    return 0;
}

static void read_alloc(sqlite3_stmt *st, alloc_row *a)
{
    a->id = sqlite3_column_int64(st, 0);
    a->source = sqlite3_column_int64(st, 1);
    a->alloc_ts = sqlite3_column_int64(st, 2);
    a->freed = sqlite3_column_type(st, 3) != SQLITE_NULL;
    a->free_ts = sqlite3_column_int64(st, 3);
    a->has_op = sqlite3_column_type(st, 4) != SQLITE_NULL &&
                sqlite3_column_type(st, 6) != SQLITE_NULL;
    a->op_id = sqlite3_column_int64(st, 4);
    a->name_id = sqlite3_column_int64(st, 5);
    a->op_name = (const char *)sqlite3_column_text(st, 6);
    a->has_free_op = sqlite3_column_type(st, 7) != SQLITE_NULL;
    a->free_op = sqlite3_column_int64(st, 7);
    a->has_stack = sqlite3_column_type(st, 8) != SQLITE_NULL;
    a->stack = sqlite3_column_int64(st, 8);
    a->stated = sqlite3_column_type(st, 9) == SQLITE_NULL
                    ? -1
                    : vr_category_index((const char *)sqlite3_column_text(st, 9));
}

/* Categorizes the next chunk of allocations after *after (rowid); *done
 * when there were none left. */
static int sweep_chunk(cat_sweep *s, int64_t *after, int *done)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "select_allocations_to_categorize", s->err);
    if (!st)
        return -1;
    vr_db_bind_int(st, ":after", *after);
    vr_db_bind_int(st, ":limit", CHUNK);
    int rc = 0, step = SQLITE_DONE;
    alloc_row a;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        read_alloc(st, &a);
        rc = categorize_one(s, &a);
        *after = a.id;
    }
    sqlite3_reset(st);
    if (rc == 0 && step != SQLITE_DONE)
        rc = vr_db_fail(s->db, s->err, "reading allocations to categorize");
    *done = s->nout < CHUNK;
    return rc == 0 ? write_results(s) : -1;
}

static int sweep_allocations(cat_sweep *s)
{
    int64_t after = INT64_MIN;
    int done = 0, rc = 0;
    while (rc == 0 && !done)
        rc = sweep_chunk(s, &after, &done);
    return rc;
}

static int record_digest(cat_sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "set_category_rules_digest", s->err);
    if (!st)
        return -1;
    vr_db_bind_text(st, ":digest", s->rules->digest, strlen(s->rules->digest));
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

static int categorize(cat_sweep *s)
{
    vr_db *db = s->db;
    vr_error *err = s->err;
    int rc = vr_phase_map_load_steps(db, &s->map, err);
    if (rc == 0)
        rc = vr_phase_map_load_phases(db, &s->map, err);
    if (rc == 0)
        rc = sweep_allocations(s);
    if (rc == 0)
        rc = record_digest(s);
    vr_phase_map_free(&s->map);
    return rc;
}

int vr_analyze_categorize(vr_db *db, vr_error *err)
{
    vr_rules rules;
    if (read_rules(db, &rules, err) < 0)
        return -1;
    cat_sweep *s = calloc(1, sizeof *s);
    if (!s)
        vr_xmalloc(SIZE_MAX); /* aborts with the out-of-memory message */
    s->db = db;
    s->err = err;
    s->rules = &rules;
    int rc = categorize(s);
    free(s);
    vr_rules_free(&rules);
    return rc;
}
