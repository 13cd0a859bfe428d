/* What a device's peak held that no live allocation of the record
 * explains: the inferences (explain.h; docs/breakdown.md, "How we know").
 *
 * What is weighed, all of the peak's source on the device:
 *   - the run's shape: which of forward, backward and optimizer it shows,
 *     from its phases (the phases pass) and its stacks' frames (a
 *     snapshot's); the optimizer its step's record_function label names;
 *   - the allocated total when the record began (the level), and the
 *     memory from before the record that the record lets go of: a free
 *     of an address the record never allocated (one ordered read of the
 *     source's events, pairing addresses), placed after the peak or not,
 *     inside an optimizer step or a zero_grad (by its stack's frames, or
 *     by the phase its time falls in);
 *   - what the breakdown measured: the allocations never freed by
 *     category (the optimizer's state), the blocks decided by stacks.
 * Each inference takes its bytes out of what is left of the peak's
 * unexplained memory from before the record, in the order of infer().
 * None is made on a source whose events have no addresses (what it held
 * before cannot be told from what it allocated) or where the file does not
 * say what an inference needs: the bytes stay unknown, and peak_unknown
 * says why. */
#include "analyze/explain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/idmap.h"
#include "util/sat.h"

static const char sql[] = "schemas/analyze.sql";

/* Categories by name: their indices are category.h's order. */
#define CAT(name) vr_category_index(name)

/* Two figures agree when within 2 % of the expected one. */
#define AGREE_PERMILLE 20
/* The addresses of the record's live allocations kept while pairing
 * (16 MiB): beyond, the pairing stops and no inference needs it. */
#define LIVE_MAX ((size_t)1 << 20)

/*-*** what frames say ***/

enum {
    SHAPE_FORWARD = 1,
    SHAPE_BACKWARD = 2,
    SHAPE_OPTIMIZER = 4,
    SHAPE_ZERO_GRAD = 8,
};

/* A frame (function, file; NULL: any) and what it shows the code was
 * doing. The first that holds decides; both globs on the same frame. */
typedef struct {
    const char *function, *file;
    unsigned shape;
} frame_kind;

static const frame_kind frame_kinds[] = {
    {"zero_grad", NULL, SHAPE_ZERO_GRAD},
    {"*autograd::Engine::evaluate_function*", NULL, SHAPE_BACKWARD},
    {"*autograd::Engine::thread_main*", NULL, SHAPE_BACKWARD},
    {"*Backward[0-9]::apply*", NULL, SHAPE_BACKWARD},
    {"*AccumulateGrad::apply*", NULL, SHAPE_BACKWARD},
    {"_engine_run_backward", NULL, SHAPE_BACKWARD},
    {"backward", "*torch[/\\]_tensor.py", SHAPE_BACKWARD},
    {"backward", "*torch[/\\]autograd[/\\]__init__.py", SHAPE_BACKWARD},
    {NULL, "*[/\\]torch[/\\]optim[/\\]*", SHAPE_OPTIMIZER},
    {"forward", NULL, SHAPE_FORWARD},
};

/* Whether text holds each run of literal characters of the glob (outside
 * *, ? and [...]) as it is, as every text the glob matches does. */
static int has_literals(const char *glob, const char *text)
{
    char lit[64];
    size_t n = 0;
    for (const char *p = glob;; p++) {
        if (*p && *p != '*' && *p != '?' && *p != '[') {
            if (n + 1 < sizeof lit)
                lit[n++] = *p;
            continue;
        }
        lit[n] = '\0';
        if (n > 1 && !strstr(text, lit))
            return 0;
        n = 0;
        if (*p == '[') { /* a class, to its ]: one just after [ or [^ is in it */
            p += p[1] == '^' ? 2 : 1;
            for (p += *p == ']'; *p && *p != ']'; p++)
                ;
        }
        if (!*p)
            return 1;
    }
}

/* sqlite3_strglob backtracks at each '*': the 3,000 frames' files of a
 * generated snapshot against the optimizers' "*[/\\]torch[/\\]optim..."
 * took 0.12 G, 6,700 instructions a call. A text without the glob's
 * literal runs is told apart by strstr first. */
static int glob_holds(const char *glob, const char *text)
{
    return !glob || (text && has_literals(glob, text) && sqlite3_strglob(glob, text) == 0);
}

static unsigned frame_shape(const char *function, const char *file)
{
    for (size_t i = 0; i < sizeof frame_kinds / sizeof *frame_kinds; i++)
        if (glob_holds(frame_kinds[i].function, function) &&
            glob_holds(frame_kinds[i].file, file))
            return frame_kinds[i].shape;
    return 0;
}

/*-*** optimizers ***/

/* An optimizer whose state is a whole number of copies of its parameters
 * (Adam's two moments, SGD's momentum buffer): name as its step's label
 * says it (`Optimizer.step#AdamW.step`), or the file of its frames. */
typedef struct {
    const char *name, *file;
    int copies;
    const char *rule;
} optimizer_kind;

static const optimizer_kind optimizers[] = {
    {"Adam", "*[/\\]torch[/\\]optim[/\\]adam.py", 2, "adam-state-half"},
    {"AdamW", "*[/\\]torch[/\\]optim[/\\]adamw.py", 2, "adam-state-half"},
    {"NAdam", "*[/\\]torch[/\\]optim[/\\]nadam.py", 2, "adam-state-half"},
    {"RAdam", "*[/\\]torch[/\\]optim[/\\]radam.py", 2, "adam-state-half"},
    {"Adamax", "*[/\\]torch[/\\]optim[/\\]adamax.py", 2, "adam-state-half"},
    {"FusedAdam", NULL, 2, "adam-state-half"},
    {"SGD", "*[/\\]torch[/\\]optim[/\\]sgd.py", 1, "sgd-momentum-state"},
};

static const optimizer_kind *optimizer_named(const char *name)
{
    for (size_t i = 0; name && i < sizeof optimizers / sizeof *optimizers; i++)
        if (strcmp(optimizers[i].name, name) == 0)
            return &optimizers[i];
    return NULL;
}

static const optimizer_kind *optimizer_of_file(const char *file)
{
    for (size_t i = 0; file && i < sizeof optimizers / sizeof *optimizers; i++)
        if (optimizers[i].file && glob_holds(optimizers[i].file, file))
            return &optimizers[i];
    return NULL;
}

/*-*** the facts ***/

typedef struct {
    int64_t bytes, count;
    vr_explain_release *rel;
    size_t nrel, cap;
} released;

typedef struct {
    vr_db *db;
    vr_error *err;
    const vr_explain_in *in;
    unsigned shape;   /* SHAPE_* the run shows */
    int frames, ops;  /* it has stacks' frames; phases (ops) */
    int addresses;    /* its events carry addresses */
    int snapshot;     /* it is an allocator snapshot (it has segments) */
    int from_blocks;  /* what it kept is its blocks', not paired frees' */
    const optimizer_kind *optimizer;
    char optimizer_label[64]; /* as the file names it */
    int has_level;
    int64_t level;           /* allocated when the record began */
    int paired;              /* the record's frees were paired to the end */
    int64_t freed_before;    /* from before the record, freed by the peak */
    released in_step, by_zero_grad, other_after; /* freed after the peak */
    /* the weights one forward reads (record_shapes; 0: not said), those
     * of them that may be an LM head tied to its embedding, their dtype */
    int64_t weights_read, tied, weight_modules;
    char weights_dtype[24];
    /* what an inference server's log says it reserved (0: not said) */
    int64_t server_weights, server_kv, weights_line, kv_line;
    char server[16];
    /* a trace's optimizer and zero_grad phases, to place frees */
    int64_t (*span)[3];
    size_t nspan;
    vr_idmap stack_class; /* a stack's SHAPE_ + 1 */
} facts;

static void facts_free(facts *f)
{
    free(f->in_step.rel);
    free(f->by_zero_grad.rel);
    free(f->other_after.rel);
    free(f->span);
    vr_idmap_free(&f->stack_class);
}

static int bind_source(facts *f, sqlite3_stmt *st, int device)
{
    if (device && vr_db_bind_int(st, ":device", f->in->device, f->err) < 0)
        return -1;
    return vr_db_bind_int(st, ":source", f->in->source, f->err);
}

static int read_phase_kinds(facts *f)
{
    static const struct {
        const char *kind;
        unsigned shape;
    } kinds[] = {{"forward", SHAPE_FORWARD},
                 {"backward", SHAPE_BACKWARD},
                 {"optimizer", SHAPE_OPTIMIZER},
                 {"zero_grad", SHAPE_ZERO_GRAD}};
    sqlite3_stmt *st = vr_db_stmt(f->db, sql, "explain_phase_kinds", f->err);
    if (!st || bind_source(f, st, 0) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        f->ops = 1;
        for (size_t i = 0; k && i < sizeof kinds / sizeof *kinds; i++)
            if (strcmp(kinds[i].kind, k) == 0)
                f->shape |= kinds[i].shape;
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(f->db, f->err, "reading the source's phases");
}

/* *only: the source is the only one with stacks; *all: and every frame
 * in the table is a stack's. */
static int one_stacked_source(facts *f, int *only, int *all)
{
    sqlite3_stmt *st = vr_db_stmt(f->db, sql, "explain_stacked_sources", f->err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    *only = rc == SQLITE_ROW && sqlite3_column_int64(st, 0) == 1;
    *all = *only && !sqlite3_column_int(st, 1);
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : vr_db_fail(f->db, f->err, "counting the snapshots");
}

static int read_frames(facts *f)
{
    sqlite3_stmt *snap = vr_db_stmt(f->db, sql, "explain_has_segments", f->err);
    if (!snap || bind_source(f, snap, 0) < 0)
        return -1;
    int rc = sqlite3_step(snap);
    int any = rc == SQLITE_ROW;
    sqlite3_reset(snap);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(f->db, f->err, "reading whether the source is a snapshot");
    if (!any) /* a trace: its events have no stacks to read */
        return 0;
    f->snapshot = 1;
    int only = 0, all = 0;
    if (one_stacked_source(f, &only, &all) < 0)
        return -1;
    /* the only snapshot: every stack is its own, and its frames are read
     * once each, not through its events */
    sqlite3_stmt *st = vr_db_stmt(f->db, sql, only ? "explain_stacked_frames" : "explain_source_frames", f->err);
    if (!st || (only ? vr_db_bind_int(st, ":all", all, f->err) : bind_source(f, st, 1)) < 0)
        return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *fn = (const char *)sqlite3_column_text(st, 0);
        const char *file = (const char *)sqlite3_column_text(st, 1);
        f->frames = 1;
        f->shape |= frame_shape(fn, file);
        if (!f->optimizer)
            f->optimizer = optimizer_of_file(file);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(f->db, f->err, "reading the source's frames");
}

/* `Optimizer.step#AdamW.step`: AdamW. */
static int read_optimizer_label(facts *f)
{
    sqlite3_stmt *st = vr_db_stmt(f->db, sql, "explain_optimizer_name", f->err);
    if (!st || bind_source(f, st, 0) < 0)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *label = (const char *)sqlite3_column_text(st, 0) + strlen("Optimizer.step#");
        const char *dot = strchr(label, '.');
        size_t n = dot ? (size_t)(dot - label) : strlen(label);
        if (n < sizeof f->optimizer_label) {
            memcpy(f->optimizer_label, label, n);
            f->optimizer_label[n] = '\0';
            f->optimizer = optimizer_named(f->optimizer_label);
        }
        f->shape |= SHAPE_OPTIMIZER;
    }
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE
               ? 0
               : vr_db_fail(f->db, f->err, "reading the optimizer's name");
}

static int read_level(facts *f)
{
    sqlite3_stmt *st = vr_db_stmt(f->db, sql, "explain_level_at_start", f->err);
    if (!st || bind_source(f, st, 1) < 0)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        f->has_level = 1;
        f->level = sqlite3_column_int64(st, 0);
    }
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE
               ? 0
               : vr_db_fail(f->db, f->err, "reading the level the record began at");
}

/* Whether the source's events carry addresses (summarise_devices says). */
static int read_addresses(facts *f)
{
    sqlite3_stmt *st = vr_db_stmt(f->db, sql, "explain_addresses", f->err);
    if (!st || vr_db_bind_int(st, ":device", f->in->device, f->err) < 0)
        return -1;
    int rc = sqlite3_step(st);
    f->addresses = rc == SQLITE_ROW && sqlite3_column_int(st, 0);
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE
               ? 0
               : vr_db_fail(f->db, f->err, "reading whether events have addresses");
}

static int read_release_phases(facts *f)
{
    sqlite3_stmt *st = vr_db_stmt(f->db, sql, "explain_release_phases", f->err);
    if (!st || bind_source(f, st, 0) < 0)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_xgrow(&f->span, &cap, f->nspan + 1, sizeof *f->span, 16);
        const char *k = (const char *)sqlite3_column_text(st, 0);
        f->span[f->nspan][0] = k && strcmp(k, "zero_grad") == 0 ? SHAPE_ZERO_GRAD : SHAPE_OPTIMIZER;
        f->span[f->nspan][1] = sqlite3_column_int64(st, 1);
        f->span[f->nspan][2] = sqlite3_column_int64(st, 2);
        f->nspan++;
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(f->db, f->err, "reading the optimizer's phases");
}

/* c10's names of the dtypes weights are held in, as the estimator's. */
static const struct {
    const char *c10, *name;
} dtypes[] = {{"float", "fp32"},           {"c10::BFloat16", "bf16"},
              {"c10::Half", "fp16"},       {"double", "fp64"},
              {"c10::Float8_e4m3fn", "fp8"}, {"c10::Float8_e5m2", "fp8"}};

static int read_forward_weights(facts *f)
{
    sqlite3_stmt *st = vr_db_stmt(f->db, sql, "explain_forward_weights", f->err);
    if (!st || bind_source(f, st, 1) < 0)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        f->weights_read = sqlite3_column_int64(st, 0);
        f->tied = sqlite3_column_int64(st, 1);
        f->weight_modules = sqlite3_column_int64(st, 2);
        const char *t = (const char *)sqlite3_column_text(st, 3);
        for (size_t i = 0; t && i < sizeof dtypes / sizeof *dtypes; i++)
            if (strcmp(dtypes[i].c10, t) == 0)
                snprintf(f->weights_dtype, sizeof f->weights_dtype, "%s", dtypes[i].name);
    }
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE
               ? 0
               : vr_db_fail(f->db, f->err, "reading the weights a forward reads");
}

static int read_server(facts *f)
{
    sqlite3_stmt *st = vr_db_stmt(f->db, sql, "explain_server_figures", f->err);
    if (!st || vr_db_bind_int(st, ":device", f->in->device, f->err) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *fw = (const char *)sqlite3_column_text(st, 0);
        const char *fig = (const char *)sqlite3_column_text(st, 1);
        int weights = fig && strcmp(fig, "weights") == 0;
        *(weights ? &f->server_weights : &f->server_kv) = sqlite3_column_int64(st, 2);
        *(weights ? &f->weights_line : &f->kv_line) = sqlite3_column_int64(st, 3);
        snprintf(f->server, sizeof f->server, "%s", fw ? fw : "");
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(f->db, f->err, "reading the server's memory lines");
}

/*-*** the record's frees of memory from before it ***/

/* What a stack says about a free: SHAPE_ZERO_GRAD, SHAPE_OPTIMIZER or 0. */
static int stack_release(facts *f, int64_t stack, unsigned *out)
{
    uint64_t key = vr_hash_once(&stack, sizeof stack, 0xe1a);
    int64_t known = vr_idmap_get(&f->stack_class, key);
    if (known) {
        *out = (unsigned)(known - 1);
        return 0;
    }
    sqlite3_stmt *st = vr_db_stmt(f->db, sql, "explain_stack_frames", f->err);
    if (!st || vr_db_bind_int(st, ":stack", stack, f->err) < 0)
        return -1;
    unsigned shape = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        shape |= frame_shape((const char *)sqlite3_column_text(st, 0),
                             (const char *)sqlite3_column_text(st, 1));
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return vr_db_fail(f->db, f->err, "reading a stack's frames");
    /* zero_grad is called on the optimizer: it decides */
    *out = shape & SHAPE_ZERO_GRAD ? SHAPE_ZERO_GRAD : shape & SHAPE_OPTIMIZER;
    vr_idmap_put(&f->stack_class, key, (int64_t)*out + 1);
    return 0;
}

static unsigned time_release(const facts *f, int64_t ts)
{
    for (size_t i = 0; i < f->nspan; i++)
        if (ts >= f->span[i][1] && ts <= f->span[i][2])
            return (unsigned)f->span[i][0];
    return 0;
}

static void add_release(released *r, int64_t ts, int64_t bytes)
{
    vr_xgrow(&r->rel, &r->cap, r->nrel + 1, sizeof *r->rel, 64);
    r->rel[r->nrel++] = (vr_explain_release){ts, bytes};
    r->bytes = vr_sat_add(r->bytes, bytes);
    r->count++;
}

static int after_peak(const vr_explain_in *in, int64_t ts, int64_t id)
{
    return ts > in->peak_ts || (ts == in->peak_ts && id > in->peak_id);
}

/* A free of memory from before the record. */
static int on_early_free(facts *f, sqlite3_stmt *st, int64_t ts, int64_t bytes)
{
    if (!after_peak(f->in, ts, sqlite3_column_int64(st, 0))) {
        f->freed_before = vr_sat_add(f->freed_before, bytes);
        return 0;
    }
    unsigned how = 0;
    if (sqlite3_column_type(st, 4) != SQLITE_NULL) {
        if (stack_release(f, sqlite3_column_int64(st, 4), &how) < 0)
            return -1;
    } else {
        how = time_release(f, ts);
    }
    add_release(how == SHAPE_ZERO_GRAD   ? &f->by_zero_grad
                : how == SHAPE_OPTIMIZER ? &f->in_step
                                         : &f->other_after,
                ts, bytes);
    return 0;
}

/* One ordered read: an address the record allocated is live until its
 * free; a free of any other lets go of memory from before the record. */
static int pair_frees(facts *f)
{
    sqlite3_stmt *st = vr_db_stmt(f->db, sql, "explain_events", f->err);
    if (!st || bind_source(f, st, 1) < 0)
        return -1;
    vr_idmap live;
    vr_idmap_init(&live, LIVE_MAX);
    int rc, full = 0, failed = 0;
    while (!full && !failed && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 3) == SQLITE_NULL)
            continue;
        int64_t ts = sqlite3_column_int64(st, 1), bytes = sqlite3_column_int64(st, 2);
        int64_t addr = sqlite3_column_int64(st, 3);
        uint64_t key = vr_hash_once(&addr, sizeof addr, 0xadd);
        if (bytes > 0) {
            full = live.len >= live.max;
            vr_idmap_put(&live, key, 1);
        } else if (bytes < 0) {
            if (vr_idmap_get(&live, key) == 1)
                vr_idmap_put(&live, key, -1); /* freed: no longer the record's */
            else
                failed = on_early_free(f, st, ts, vr_sat_sub(0, bytes)) < 0;
        }
    }
    vr_idmap_free(&live);
    sqlite3_reset(st);
    if (failed)
        return -1;
    f->paired = !full;
    return full || rc == SQLITE_DONE ? 0 : vr_db_fail(f->db, f->err, "pairing the frees");
}

static int gather(facts *f)
{
    vr_idmap_init(&f->stack_class, 1 << 16);
    if (read_phase_kinds(f) < 0 || read_frames(f) < 0 || read_optimizer_label(f) < 0 ||
        read_level(f) < 0)
        return -1;
    if (read_addresses(f) < 0 || read_server(f) < 0 || read_forward_weights(f) < 0)
        return -1;
    if (!f->addresses || f->in->residual <= 0 || !f->has_level)
        return 0;
    /* A snapshot says what it kept from before the record (its blocks in
     * use at the end that the record did not make): its frees need
     * pairing only to be told apart by who let them go, an optimizer. */
    if (f->snapshot && f->in->before.blocks_read &&
        !(f->shape & (SHAPE_OPTIMIZER | SHAPE_ZERO_GRAD))) {
        f->from_blocks = 1;
        return 0;
    }
    return read_release_phases(f) < 0 ? -1 : pair_frees(f);
}

/*-*** the rows ***/

typedef struct {
    const char *name;
    int is_text;
    int64_t value;
    const char *text;
    const char *source;
} evidence;

#define EVIDENCE_MAX 6

typedef struct {
    const char *rule;
    int category;
    int64_t bytes, moved;
    const char *confidence;
    evidence ev[EVIDENCE_MAX];
    size_t nev;
    const released *rel; /* what of it is let go of after the peak */
} row;

typedef struct {
    facts *f;
    vr_explain_out *out;
    row rows[VR_EXPLAIN_MOVES];
    size_t n;
    int64_t pool; /* unexplained memory from before the record, left */
} inference;

static row *new_row(inference *x, const char *rule, int category, int64_t bytes,
                    const char *confidence)
{
    if (x->n >= VR_EXPLAIN_MOVES || bytes <= 0)
        return NULL;
    row *r = &x->rows[x->n++];
    memset(r, 0, sizeof *r);
    r->rule = rule;
    r->category = category;
    r->bytes = bytes;
    r->confidence = confidence;
    return r;
}

/* Takes up to `bytes` out of the pool into a new row. */
static row *take(inference *x, const char *rule, int category, int64_t bytes,
                 const char *confidence)
{
    if (bytes > x->pool)
        bytes = x->pool;
    row *r = new_row(x, rule, category, bytes, confidence);
    if (r) {
        r->moved = bytes;
        x->pool -= bytes;
    }
    return r;
}

static void say(row *r, const char *name, int64_t value, const char *source)
{
    if (r && r->nev < EVIDENCE_MAX)
        r->ev[r->nev++] = (evidence){name, 0, value, NULL, source};
}

static void say_text(row *r, const char *name, const char *text, const char *source)
{
    if (r && r->nev < EVIDENCE_MAX && text && *text)
        r->ev[r->nev++] = (evidence){name, 1, 0, text, source};
}

static const char *origin(const facts *f)
{
    return f->frames ? "snapshot" : "trace";
}

static int agree(int64_t a, int64_t expected)
{
    if (expected <= 0)
        return 0;
    int64_t d = a > expected ? a - expected : expected - a;
    return (long double)d * 1000 <= (long double)expected * AGREE_PERMILLE;
}

/* Blocks the category rules decided by their stacks: already in their
 * categories, said here so every part of the peak says how it is known. */
static void infer_block_stacks(inference *x)
{
    const vr_explain_before *b = &x->f->in->before;
    for (int c = 0; c < VR_CATEGORY_COUNT; c++) {
        if (c == VR_CATEGORY_UNKNOWN || b->bytes[c] <= 0)
            continue;
        row *r = new_row(x, c == CAT("parameter") ? "weight-loading-stack" : "block-stack", c, b->bytes[c],
                         "high");
        say(r, "blocks_in_use_before_record", b->count[c], "snapshot");
        say_text(r, "decided_by_rule", b->rule[c], "categories");
    }
}

/* The record's optimizer step lets go of memory from before the record:
 * its old state, replaced (an optimizer frees nothing else in its step;
 * zero_grad, which frees gradients, is told apart). */
static void infer_replaced_state(inference *x)
{
    const facts *f = x->f;
    const released *s = &f->in_step;
    if (s->bytes <= 0)
        return;
    int64_t state = f->in->end_live[CAT("optimizer_state")];
    row *r = take(x, "optimizer-state-replaced", CAT("optimizer_state"), s->bytes, agree(s->bytes, state) ? "high" : "medium");
    if (!r)
        return;
    r->rel = s;
    say(r, "freed_in_optimizer_step_after_peak_bytes", s->bytes, origin(f));
    say(r, "freed_in_optimizer_step_after_peak_count", s->count, origin(f));
    say(r, "new_optimizer_state_bytes", state, "breakdown");
}

static void infer_zero_grad(inference *x)
{
    const released *z = &x->f->by_zero_grad;
    row *r = z->bytes > 0 ? take(x, "freed-by-zero-grad", CAT("gradient"), z->bytes, "high") : NULL;
    if (!r)
        return;
    r->rel = z;
    say(r, "freed_by_zero_grad_after_peak_bytes", z->bytes, origin(x->f));
    say(r, "freed_by_zero_grad_after_peak_count", z->count, origin(x->f));
}

/* Memory from before the record, never freed in it, against the
 * optimizer's measured state: Adam keeps two fp32 moments of each
 * parameter, so the parameters are half its state; a training run that
 * keeps its gradients between steps holds as much again. */
static void infer_from_state(inference *x, int64_t kept)
{
    const facts *f = x->f;
    const optimizer_kind *o = f->optimizer;
    int c = CAT("optimizer_state");
    int64_t state = vr_sat_add(f->in->end_live[c], f->in->before.bytes[c]);
    if (!o || state <= 0)
        return;
    int64_t params = state / o->copies;
    int with_grads = !agree(kept, params) && (f->shape & SHAPE_BACKWARD) &&
                     agree(kept, vr_sat_add(params, params));
    if (!agree(kept, params) && !with_grads)
        return;
    row *r = take(x, o->rule, CAT("parameter"), with_grads ? params : kept, "medium");
    say_text(r, "optimizer", f->optimizer_label[0] ? f->optimizer_label : o->name,
             f->optimizer_label[0] ? "annotations" : "frames");
    say(r, "optimizer_state_bytes", state, "breakdown");
    say(r, "state_copies_of_parameters", o->copies, "optimizer");
    say(r, "kept_from_before_record_bytes", kept, origin(f));
    if (!with_grads)
        return;
    /* as large as the parameters: more is not theirs */
    int64_t grads = kept - params < params ? kept - params : params;
    row *g = take(x, "gradients-kept", CAT("gradient"), grads, "low");
    say(g, "kept_from_before_record_bytes", kept, origin(f));
    say(g, "parameter_bytes", params, "adam-state-half");
    say(g, "backward_in_record", 1, f->frames ? "frames" : "phases");
}

/* An inference server (vLLM, SGLang) reserves its weights and a pool for
 * its KV cache at start-up and says how much in its log: memory kept
 * from before the record at least as large as the two (within 2 %) is
 * those two. */
static void infer_server(inference *x, int64_t kept)
{
    const facts *f = x->f;
    int64_t both = vr_sat_add(f->server_kv, f->server_weights);
    if (f->server_kv <= 0 || (long double)kept * 1000 < (long double)both * (1000 - AGREE_PERMILLE))
        return;
    const char *conf = agree(kept, both) ? "high" : "medium";
    row *r = take(x, "server-kv-cache", CAT("kv_cache"), f->server_kv, conf);
    say_text(r, "server", f->server, "log");
    say(r, "kv_cache_in_log_bytes", f->server_kv, "log");
    say(r, "kv_cache_log_line", f->kv_line, "log");
    say(r, "kept_from_before_record_bytes", kept, origin(f));
    if (f->server_weights <= 0)
        return;
    row *w = take(x, "server-kv-cache", CAT("parameter"), f->server_weights, conf);
    say_text(w, "server", f->server, "log");
    say(w, "weights_in_log_bytes", f->server_weights, "log");
    say(w, "weights_log_line", f->weights_line, "log");
    say(w, "kept_from_before_record_bytes", kept, origin(f));
}

/* A trace recorded with record_shapes names the weight operands of every
 * op that reads weights, and one forward reads each weight once: their
 * bytes are the parameters (a floor: weights other ops use are not
 * counted), when what was kept from before the record holds them. An LM
 * head that shares its embedding's matrix is read twice and shapes cannot
 * tell it from two matrices: the smaller figure is taken. In a training
 * run whose optimizer is Adam's kind, as much again twice over is its
 * state, and as much once more its gradients kept between steps. */
static void infer_weights_read(inference *x, int64_t kept)
{
    const facts *f = x->f;
    int64_t params = vr_sat_sub(f->weights_read, f->tied);
    if (params <= 0 || (long double)params * (1000 - AGREE_PERMILLE) > (long double)kept * 1000)
        return;
    row *r = take(x, "weights-read-by-forward", CAT("parameter"), params,
                  agree(params, kept) ? "high" : "medium");
    say(r, "weights_read_by_forward_bytes", f->weights_read, "trace");
    say(r, "tied_candidate_bytes", f->tied, "trace");
    say(r, "modules", f->weight_modules, "trace");
    say_text(r, "weights_dtype", f->weights_dtype, "trace");
    say(r, "kept_from_before_record_bytes", kept, origin(f));
    const optimizer_kind *o = f->optimizer;
    if (!r || !o || o->copies != 2 || !(f->shape & SHAPE_BACKWARD))
        return;
    int64_t state = vr_sat_add(params, params), left = kept - r->bytes;
    if ((long double)left * 1000 < (long double)state * (1000 - AGREE_PERMILLE))
        return;
    row *s = take(x, "adam-state-from-weights", CAT("optimizer_state"), state, "medium");
    say_text(s, "optimizer", f->optimizer_label[0] ? f->optimizer_label : o->name,
             f->optimizer_label[0] ? "annotations" : "frames");
    say(s, "parameter_bytes", params, "weights-read-by-forward");
    say(s, "state_copies_of_parameters", o->copies, "optimizer");
    left -= s ? s->bytes : 0;
    if (agree(left, params)) {
        row *g = take(x, "gradients-kept", CAT("gradient"), left < params ? left : params, "low");
        say(g, "kept_from_before_record_bytes", kept, origin(f));
        say(g, "parameter_bytes", params, "weights-read-by-forward");
        say(g, "backward_in_record", 1, "phases");
    }
}

/* A run with a forward and neither backward nor optimizer: what it held
 * from before the record and never freed is its weights. */
static void infer_forward_only(inference *x, int64_t kept)
{
    const facts *f = x->f;
    if (!(f->shape & SHAPE_FORWARD) || (f->shape & (SHAPE_BACKWARD | SHAPE_OPTIMIZER)))
        return;
    row *r = take(x, "forward-only-weights", CAT("parameter"), kept, "medium");
    say(r, "kept_from_before_record_bytes", kept, origin(f));
    say(r, "forward_in_record", 1, f->frames ? "frames" : "phases");
    say(r, "backward_in_record", 0, f->frames ? "frames" : "phases");
    say(r, "optimizer_in_record", 0, f->frames ? "frames" : "phases");
}

/* What was kept from before the record and never freed: the first of
 * these with grounds says what it was. */
static void infer_kept(inference *x, int64_t kept)
{
    if (kept <= 0)
        return;
    size_t before = x->n;
    infer_server(x, kept);
    /* the weights a forward reads are the parameters: what else was kept
     * is not said by the run's shape */
    if (x->n == before && x->f->weights_read > 0) {
        infer_weights_read(x, kept);
        return;
    }
    if (x->n == before)
        infer_from_state(x, kept);
    if (x->n == before)
        infer_forward_only(x, kept);
}

static void infer(inference *x)
{
    facts *f = x->f;
    const vr_explain_in *in = f->in;
    infer_block_stacks(x);
    if (f->from_blocks) {
        x->pool = in->before.stackless < in->residual ? in->before.stackless : in->residual;
        infer_kept(x, x->pool);
        return;
    }
    if (!f->paired)
        return;
    int64_t decided = 0;
    for (int c = 0; c < VR_CATEGORY_COUNT; c++)
        decided = vr_sat_add(decided, in->before.bytes[c]);
    int64_t live = vr_sat_sub(vr_sat_sub(f->level, f->freed_before), decided);
    x->pool = live < in->residual ? live : in->residual;
    if (x->pool < 0)
        x->pool = 0;
    infer_replaced_state(x);
    infer_zero_grad(x);
    /* never freed in the record: what of the pool no release stands
     * for, less the blocks whose own stacks say what they were */
    int64_t kept = vr_sat_sub(vr_sat_sub(x->pool, f->other_after.bytes), in->before.undecided);
    infer_kept(x, kept);
}

static int write_evidence(vr_db *db, int64_t device, size_t pos, const row *r, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "insert_peak_evidence", err);
    if (!st)
        return -1;
    for (size_t i = 0; i < r->nev; i++) {
        const evidence *e = &r->ev[i];
        if (vr_db_bind_int(st, ":device", device, err) < 0 ||
            vr_db_bind_int(st, ":position", (int64_t)pos, err) < 0 ||
            vr_db_bind_int(st, ":seq", (int64_t)i, err) < 0 ||
            vr_db_bind_text(st, ":name", e->name, strlen(e->name), err) < 0 ||
            (e->is_text ? vr_db_bind_text(st, ":value", e->text, strlen(e->text), err)
                        : vr_db_bind_int(st, ":value", e->value, err)) < 0 ||
            vr_db_bind_text(st, ":source", e->source, strlen(e->source), err) < 0 ||
            vr_db_step_done(db, st, err) < 0)
            return -1;
    }
    return 0;
}

static int write_row(vr_db *db, int64_t device, size_t pos, const row *r, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "insert_peak_explained", err);
    const char *cat = vr_category_names[r->category];
    if (!st || vr_db_bind_int(st, ":device", device, err) < 0 ||
        vr_db_bind_int(st, ":position", (int64_t)pos, err) < 0 ||
        vr_db_bind_text(st, ":rule", r->rule, strlen(r->rule), err) < 0 ||
        vr_db_bind_text(st, ":category", cat, strlen(cat), err) < 0 ||
        vr_db_bind_int(st, ":bytes", r->bytes, err) < 0 ||
        vr_db_bind_int(st, ":moved", r->moved, err) < 0 ||
        vr_db_bind_text(st, ":confidence", r->confidence, strlen(r->confidence), err) < 0 ||
        vr_db_step_done(db, st, err) < 0)
        return -1;
    return write_evidence(db, device, pos, r, err);
}

/* What stays unknown, by why. */
static int write_unknown(const inference *x, vr_error *err)
{
    const vr_explain_in *in = x->f->in;
    int64_t moved = 0;
    for (size_t i = 0; i < x->n; i++)
        moved = vr_sat_add(moved, x->rows[i].moved);
    int64_t left = vr_sat_sub(in->residual, moved);
    int64_t before = x->f->addresses ? (x->f->paired ? x->pool : left) : 0;
    if (x->f->from_blocks) /* the rest of the residual is from before it too */
        before = left;
    if (before > left)
        before = left;
    sqlite3_stmt *st = vr_db_stmt(x->f->db, sql, "insert_peak_unknown", err);
    if (!st || vr_db_bind_int(st, ":device", in->device, err) < 0 ||
        vr_db_bind_int(st, ":before", before, err) < 0 ||
        vr_db_bind_int(st, ":unplaced", vr_sat_sub(left, before), err) < 0 ||
        vr_db_bind_int(st, ":undecided", in->undecided, err) < 0)
        return -1;
    return vr_db_step_done(x->f->db, st, err);
}

/* A row's move: its releases copied, as the facts go. */
static void hand_move(vr_explain_out *out, const row *r)
{
    vr_explain_move *m = &out->move[out->n++];
    m->category = r->category;
    m->bytes = r->moved;
    if (r->rel && r->rel->nrel) {
        m->nrel = r->rel->nrel;
        m->rel = vr_xmalloc(m->nrel * sizeof *m->rel);
        memcpy(m->rel, r->rel->rel, m->nrel * sizeof *m->rel);
    }
}

int vr_explain_device(vr_db *db, const vr_explain_in *in, vr_explain_out *out, vr_error *err)
{
    facts f;
    memset(&f, 0, sizeof f);
    f.db = db;
    f.err = err;
    f.in = in;
    inference x = {.f = &f, .out = out};
    int rc = in->stated ? 0 : gather(&f);
    if (rc == 0 && !in->stated)
        infer(&x);
    for (size_t i = 0; rc == 0 && i < x.n; i++) {
        rc = write_row(db, in->device, i, &x.rows[i], err);
        if (rc == 0 && x.rows[i].moved > 0)
            hand_move(out, &x.rows[i]);
    }
    if (rc == 0)
        rc = write_unknown(&x, err);
    facts_free(&f);
    return rc;
}

/* Of a move, what is still held at `ts` after the peak. */
static int64_t held_at(const vr_explain_move *m, int64_t ts)
{
    int64_t held = m->bytes;
    for (size_t i = 0; i < m->nrel && m->rel[i].ts <= ts; i++)
        held = vr_sat_sub(held, m->rel[i].bytes);
    return held > 0 ? held : 0;
}

void vr_explain_apply(const vr_explain_out *out, int64_t ts, int after_peak,
                      int64_t bytes[VR_CATEGORY_COUNT])
{
    for (size_t i = 0; i < out->n; i++) {
        const vr_explain_move *m = &out->move[i];
        int64_t b = after_peak ? held_at(m, ts) : m->bytes;
        if (b > bytes[VR_CATEGORY_UNKNOWN])
            b = bytes[VR_CATEGORY_UNKNOWN];
        bytes[VR_CATEGORY_UNKNOWN] -= b;
        bytes[m->category] = vr_sat_add(bytes[m->category], b);
    }
}

void vr_explain_out_free(vr_explain_out *out)
{
    for (size_t i = 0; i < out->n; i++)
        free(out->move[i].rel);
    memset(out, 0, sizeof *out);
}
