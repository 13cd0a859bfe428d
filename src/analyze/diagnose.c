/*-*** diagnose.c: the diagnosis pass (docs/diagnosis.md) ***/
/*
 * One finding per out-of-memory event, its primary cause, and findings
 * for devices without one (near-capacity, leak) and across ranks
 * (rank-imbalance), and a leak the job's memory prints show without an
 * OOM (diagnose_print_leaks). For each OOM the pass gathers the evidence (the
 * event's own figures, the snapshot replay's, the processes the message
 * lists, the nearest nvidia-smi reading on the matched GPU, the steps'
 * growth), runs the rule table below, and writes one
 * `finding` row: the primary kind, the other kinds that also hold
 * (secondary), a confidence, a title and detail citing the numbers, and
 * the evidence as JSON (each figure with its source). The rules and
 * their thresholds are docs/diagnosis.md's. This pass owns `finding`.
 */
#include "analyze/analyze.h"

#include "db/kind_words.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/units.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char sql[] = "schemas/analyze.sql";

#define MIB ((int64_t)1 << 20)
#define GIB ((int64_t)1 << 30)

/* The caching allocator asks CUDA for whole segments: a request up to
 * 1 MiB is served from a 2 MiB segment, one under 10 MiB from a 20 MiB
 * segment, a larger one is rounded up to 2 MiB (CUDACachingAllocator's
 * kSmallSize, kSmallBuffer, kMinLargeAlloc, kLargeBuffer, kRoundLarge).
 * "Free memory above the request" means above this. */
#define SMALL_SIZE MIB
#define SMALL_BUFFER (2 * MIB)
#define MIN_LARGE_ALLOC (10 * MIB)
#define LARGE_BUFFER (20 * MIB)
#define ROUND_LARGE (2 * MIB)

/* What CUDA says is free is not all one allocation can have: the driver
 * keeps some for itself (page tables, lazily loaded kernels, cuBLAS
 * workspaces) and free memory can itself be scattered. Free memory this
 * far above the segment is a contradiction, not a near miss. */
#define INCONSISTENT_MARGIN (512 * MIB)

/* Memory of the process itself outside the caching allocator: the CUDA
 * context, loaded kernels, NCCL and cuDNN/cuBLAS workspaces. Measured
 * from real messages (tests/data/logs: "this process" minus reserved is
 * 0.3 to 1.5 GiB), so only what exceeds it counts as another process's
 * when the evidence is capacity - free - reserved. */
#define CONTEXT_ALLOWANCE GIB

/* A listed process is this one when it uses reserved plus at most this
 * (the largest context seen in the real messages, 1.54 GiB, rounded down
 * to the figure's two decimals): more is another process's memory,
 * unless the arithmetic says otherwise (looks_like_self). */
#define SELF_CONTEXT_MAX (GIB + GIB / 2)

/* A message prints each figure to two decimals of its unit (GiB at the
 * most): off by up to 0.005 GiB. "X + reserved" against "capacity - free"
 * is made of four figures (reserved is allocated plus unallocated, or
 * the old form's two), so four such halves of a digit. */
#define MESSAGE_ROUNDING (4 * (GIB / 200))

/* A request under 5 % of the device is never oversized: 1/20. */
#define SMALL_REQUEST_DIVISOR 20

/* Fragmentation is the primary cause only when the cache, had it been one
 * block, would have served the request and left a real share of the
 * device for the job to run on: 5 % (a few MiB left on a full device is
 * a capacity OOM that fragmentation merely shares). */
#define FRAG_ROOM_PERMILLE 50

/* A single request of a quarter of the device or more (docs/diagnosis.md,
 * thresholds). */
#define OVERSIZED_PERMILLE 250

/* Peaks: near capacity at 90 %; ranks imbalanced beyond 20 % of the
 * largest peak (docs/diagnosis.md, thresholds). */
#define NEAR_CAPACITY_PERMILLE 900
#define IMBALANCE_PERMILLE VR_IMBALANCE_PERMILLE

/* A leak: allocated at the end of each step above the step before's by
 * at least 1 MiB (less is the allocator's and autograd's noise), over
 * at least 3 steps in a row up to the last one. */
#define LEAK_MIN_STEPS 3
#define LEAK_MIN_GROWTH MIB

/* The leak's sites named in the detail. */
#define LEAK_SITES 3
#define SITE_NAME_MAX 60

/* One OOM told by two sources (a trace and the log, a snapshot): their
 * stamps differ by the time the traceback takes to print and by the
 * log's stamp resolution; further apart, two OOMs. */
#define TWIN_WINDOW_NS (10LL * 1000 * 1000 * 1000)
/* Events of each other source looked at on each side of an OOM for its
 * twin, the nearest in time (diagnose_ooms): bounds the search where two
 * sources hold thousands of OOMs in the same seconds. */
#define TWIN_NEAR 32

/* nvidia-smi samples every second or few: a reading further than this
 * from the OOM says nothing about it. */
#define SMI_WINDOW_NS (30LL * 1000 * 1000 * 1000)

/*-*** evidence ***/

typedef enum {
    F_REQUESTED,
    F_ALLOCATED,
    F_RESERVED,
    F_FREE,
    F_CAPACITY,
    F_CACHE_FREE,
    F_LARGEST_FREE_BLOCK,
    F_SELF_PROCESS,
    F_OTHER_PROCESSES,
    F_OUTSIDE_ALLOCATOR,
    F_SMI_USED,
    F_LEAK_PER_STEP,
    F_LEAK_STEPS,
    F_CAPACITY_MIN,
    F_COUNT
} figure_id;

/* The evidence's JSON names, in figure_id order. */
static const char *const figure_names[F_COUNT] = {
    "requested_bytes",
    "allocated_bytes",
    "reserved_bytes",
    "device_free_bytes",
    "capacity_bytes",
    "cache_free_bytes",
    "largest_free_block_bytes",
    "this_process_bytes",
    "other_processes_bytes",
    "outside_allocator_bytes",
    "nvidia_smi_used_bytes",
    "leak_per_step_bytes",
    "leak_steps",
    "capacity_at_least_bytes",
};

typedef struct {
    int known;
    int64_t value;
    const char *source; /* 'log', 'snapshot', 'trace', 'nvidia-smi', 'device', 'derived' */
} figure;

/* Steady growth of allocated at step ends: the last run of growing steps
 * of a source on a device, and where what it kept was allocated. */
typedef struct {
    int found;
    int64_t source_id, first_step, last_step, first_bytes, last_bytes, steps;
    char sites[LEAK_SITES * (SITE_NAME_MAX + 40)];
    /* found in the job's own memory prints (memory_print): by which
     * printing code, and whether its points are steps or prints */
    int from_prints, stepped, before_oom;
    char printed_by[48];
} leak_run;

typedef struct {
    int64_t oom_id, device_id, ts_ns, rank;
    int has_device, has_ts, has_allowed;
    char label[64];
    char wording[32];   /* oom_event.wording: which library's message */
    const char *source; /* the event's source, one of source_names */
    figure f[F_COUNT];
    int64_t other_pid; /* the largest other process, 0: none named */
    leak_run leak;
} oom_evidence;

typedef enum { CONF_NONE, CONF_LOW, CONF_MEDIUM, CONF_HIGH } confidence;
static const char *const confidence_names[] = {"none", "low", "medium", "high"};

static void set_figure(figure *f, int64_t v, const char *source)
{
    f->known = 1;
    f->value = v;
    f->source = source;
}

static int has(const oom_evidence *e, figure_id id)
{
    return e->f[id].known;
}

static int64_t val(const oom_evidence *e, figure_id id)
{
    return e->f[id].value;
}

static int64_t permille(int64_t part, int64_t whole)
{
    return whole > 0 ? (int64_t)((double)part * 1000.0 / (double)whole) : 0;
}

typedef struct {
    char s[32];
} size_text;

static size_text sz(int64_t bytes)
{
    size_text t;
    vr_units_bytes(bytes, t.s, sizeof t.s);
    return t;
}

/* The segment cudaMalloc is asked for when a request finds no block. */
static int64_t segment_for(int64_t requested)
{
    if (requested <= SMALL_SIZE)
        return SMALL_BUFFER;
    if (requested < MIN_LARGE_ALLOC)
        return LARGE_BUFFER;
    return (requested + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
}

static void column_figure(sqlite3_stmt *st, int col, figure *f, const char *source)
{
    if (sqlite3_column_type(st, col) != SQLITE_NULL)
        set_figure(f, sqlite3_column_int64(st, col), source);
}

static void copy_text(char *out, size_t n, sqlite3_stmt *st, int col)
{
    const char *t = (const char *)sqlite3_column_text(st, col);
    snprintf(out, n, "%s", t ? t : "");
}

/* The evidence's source names (diagnose_ooms says the event's): static,
 * as figures point at them and evidence is copied between events. */
static const char *const source_names[] = {"log", "trace", "snapshot", "memory_timeline"};

static const char *source_name(const char *text)
{
    for (size_t i = 0; text && i < sizeof source_names / sizeof *source_names; i++)
        if (strcmp(text, source_names[i]) == 0)
            return source_names[i];
    return "input";
}

/* The diagnose_ooms row's columns. */
enum {
    C_OOM,
    C_DEVICE,
    C_LABEL,
    C_TS,
    C_RANK,
    C_SOURCE,
    C_REQUESTED,
    C_ALLOCATED,
    C_RESERVED,
    C_FREE,
    C_CAPACITY_OWN,
    C_CAPACITY_DEVICE,
    C_POOL_FREE,
    C_LARGEST,
    C_HAS_ALLOWED,
    C_TWIN_OF,
    C_CAPACITY_FROM,
    C_WORDING
};

/* device_capacity.source (migration 27) as a figure's source. */
static const char *capacity_source(const char *from)
{
    static const char *const names[] = {"device", "nvidia-smi", "--capacity"};
    for (size_t i = 0; from && i < sizeof names / sizeof *names; i++)
        if (strcmp(from, names[i]) == 0)
            return names[i];
    return "device";
}

static void read_event(sqlite3_stmt *st, oom_evidence *e)
{
    memset(e, 0, sizeof *e);
    e->oom_id = sqlite3_column_int64(st, C_OOM);
    e->has_device = sqlite3_column_type(st, C_DEVICE) != SQLITE_NULL;
    e->device_id = sqlite3_column_int64(st, C_DEVICE);
    e->has_ts = sqlite3_column_type(st, C_TS) != SQLITE_NULL;
    e->ts_ns = sqlite3_column_int64(st, C_TS);
    e->rank = sqlite3_column_int64(st, C_RANK);
    e->has_allowed = sqlite3_column_int(st, C_HAS_ALLOWED);
    copy_text(e->label, sizeof e->label, st, C_LABEL);
    copy_text(e->wording, sizeof e->wording, st, C_WORDING);
    const char *src = source_name((const char *)sqlite3_column_text(st, C_SOURCE));
    e->source = src;
    column_figure(st, C_REQUESTED, &e->f[F_REQUESTED], src);
    column_figure(st, C_ALLOCATED, &e->f[F_ALLOCATED], src);
    column_figure(st, C_RESERVED, &e->f[F_RESERVED], src);
    column_figure(st, C_FREE, &e->f[F_FREE], src);
    column_figure(st, C_CAPACITY_DEVICE, &e->f[F_CAPACITY],
                  capacity_source((const char *)sqlite3_column_text(st, C_CAPACITY_FROM)));
    column_figure(st, C_CAPACITY_OWN, &e->f[F_CAPACITY], src);
    column_figure(st, C_LARGEST, &e->f[F_LARGEST_FREE_BLOCK], src);
    column_figure(st, C_POOL_FREE, &e->f[F_CACHE_FREE], src);
}

/* Figures that follow from the others, marked 'derived'. */
static void derive(oom_evidence *e)
{
    if (!has(e, F_CACHE_FREE) && has(e, F_RESERVED) && has(e, F_ALLOCATED))
        set_figure(&e->f[F_CACHE_FREE], val(e, F_RESERVED) - val(e, F_ALLOCATED), "derived");
    /* Where nothing states the capacity (a snapshot's oom entry): what CUDA
     * said was free and what PyTorch had reserved were both on the device,
     * so it holds at least their sum. */
    if (!has(e, F_CAPACITY) && has(e, F_FREE) && has(e, F_RESERVED))
        set_figure(&e->f[F_CAPACITY_MIN], val(e, F_FREE) + val(e, F_RESERVED), "derived");
    if (has(e, F_CAPACITY) && has(e, F_FREE) && has(e, F_RESERVED))
        set_figure(&e->f[F_OUTSIDE_ALLOCATOR],
                   val(e, F_CAPACITY) - val(e, F_FREE) - val(e, F_RESERVED), "derived");
    /* The cudaMallocAsync backend tells no reserved figure: its pool
     * serves a request from the memory it keeps before asking the device,
     * so what it keeps beyond allocated is no shortfall, and capacity -
     * free - allocated is the memory outside PyTorch. */
    else if (has(e, F_CAPACITY) && has(e, F_FREE) && has(e, F_ALLOCATED) && !has(e, F_RESERVED))
        set_figure(&e->f[F_OUTSIDE_ALLOCATOR],
                   val(e, F_CAPACITY) - val(e, F_FREE) - val(e, F_ALLOCATED), "derived");
}

/* What is in use on the GPU at the OOM: capacity - free (not under a
 * memory fraction's "allowed", which is no capacity of the GPU), else the
 * nvidia-smi reading's used memory. */
static int in_use(const oom_evidence *e, int64_t *bytes)
{
    if (has(e, F_CAPACITY) && has(e, F_FREE) && !e->has_allowed) {
        *bytes = val(e, F_CAPACITY) - val(e, F_FREE);
        return 1;
    }
    if (has(e, F_SMI_USED)) {
        *bytes = val(e, F_SMI_USED);
        return 1;
    }
    return 0;
}

/* A process the message or nvidia-smi lists as "Process N" is this one
 * when its usage is this process's reserved memory plus a context: in a
 * container NVML cannot name the process as "this process". A context
 * can be far larger than SELF_CONTEXT_MAX (NCCL, cuBLAS workspaces, CUDA
 * graphs), so a lone process (the only one listed, no "this process"
 * line) is this one too when, as another process, it and this process's
 * reserved memory would be more than the GPU has in use (capacity - free,
 * beyond the figures' rounding): they cannot be two processes. */
static int looks_like_self(const oom_evidence *e, int64_t used, int lone)
{
    if (!has(e, F_RESERVED))
        return 0;
    int64_t extra = used - val(e, F_RESERVED);
    if (extra < -ROUND_LARGE)
        return 0;
    if (extra <= SELF_CONTEXT_MAX)
        return 1;
    int64_t busy;
    return lone && in_use(e, &busy) && used + val(e, F_RESERVED) > busy + MESSAGE_ROUNDING;
}

typedef struct {
    int64_t others, biggest_pid, biggest, self;
    int self_known, rows;
    int lone; /* one process listed, with a pid, and no "this process" */
} process_tally;

static void tally_process(const oom_evidence *e, process_tally *t, int has_pid, int64_t pid,
                          int64_t used)
{
    t->rows++;
    if (!has_pid || (!t->self_known && looks_like_self(e, used, t->lone))) {
        t->self = used;
        t->self_known = 1;
        return;
    }
    t->others += used;
    if (used > t->biggest) {
        t->biggest = used;
        t->biggest_pid = pid;
    }
}

/* A list of processes says what the others hold, 0 when all are this one. */
static void apply_processes(oom_evidence *e, const process_tally *t, const char *source)
{
    if (t->self_known && !has(e, F_SELF_PROCESS))
        set_figure(&e->f[F_SELF_PROCESS], t->self, source);
    set_figure(&e->f[F_OTHER_PROCESSES], t->others, source);
    e->other_pid = t->biggest_pid;
}

/* One pass over the message's process lines: those without a pid
 * ("this process") or those with one. */
static int tally_rows(vr_db *db, sqlite3_stmt *st, oom_evidence *e, process_tally *t,
                      int with_pid, vr_error *err)
{
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int has_pid = sqlite3_column_type(st, 0) != SQLITE_NULL;
        t->lone = sqlite3_column_int64(st, 2) == 1 && sqlite3_column_int64(st, 3) == 1;
        if (has_pid == with_pid)
            tally_process(e, t, has_pid, sqlite3_column_int64(st, 0),
                          sqlite3_column_int64(st, 1));
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading an OOM's processes");
}

/* The message's own process lines. A "this process" line is looked at
 * first, so a "Process N" with the same figure is another process. */
static int read_message_processes(vr_db *db, oom_evidence *e, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "diagnose_oom_processes", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":oom", e->oom_id, err) < 0)
        return -1;
    process_tally t = {0};
    if (tally_rows(db, st, e, &t, 0, err) < 0 || tally_rows(db, st, e, &t, 1, err) < 0)
        return -1;
    if (t.rows)
        apply_processes(e, &t, e->source);
    return 0;
}

/* The nearest nvidia-smi reading on the matched GPU, when the message
 * listed no processes itself. */
static int read_smi(vr_db *db, oom_evidence *e, vr_error *err)
{
    if (!e->has_device || !e->has_ts || has(e, F_OTHER_PROCESSES))
        return 0;
    sqlite3_stmt *st = vr_db_stmt(db, sql, "diagnose_smi_processes", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", e->device_id, err) < 0 ||
        vr_db_bind_int(st, ":ts", e->ts_ns, err) < 0 ||
        vr_db_bind_int(st, ":window", SMI_WINDOW_NS, err) < 0)
        return -1;
    process_tally t = {0};
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) != SQLITE_NULL && !has(e, F_SMI_USED))
            set_figure(&e->f[F_SMI_USED], sqlite3_column_int64(st, 0), "nvidia-smi");
        t.lone = sqlite3_column_int64(st, 3) == 1 && sqlite3_column_int64(st, 4) == 1;
        if (sqlite3_column_type(st, 2) != SQLITE_NULL)
            tally_process(e, &t, sqlite3_column_type(st, 1) != SQLITE_NULL,
                          sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return vr_db_fail(db, err, "reading nvidia-smi samples");
    if (t.rows)
        apply_processes(e, &t, "nvidia-smi");
    return 0;
}


/*-*** leaks ***/

/* The run of growing steps a series ends with. */
typedef struct {
    int64_t source, first_step, first_bytes, prev_step, prev_bytes, steps;
} step_run;

static void run_step(step_run *r, int64_t source, int64_t step, int64_t bytes)
{
    int grows = r->steps && source == r->source && bytes - r->prev_bytes >= LEAK_MIN_GROWTH;
    if (!grows) {
        r->source = source;
        r->first_step = step;
        r->first_bytes = bytes;
        r->steps = 0;
    }
    r->steps++;
    r->prev_step = step;
    r->prev_bytes = bytes;
}

/* A run ends when its source's series does: keep the longest. */
static void keep_run(const step_run *r, leak_run *best)
{
    int64_t growing = r->steps - 1; /* steps that grew over the one before */
    if (growing < LEAK_MIN_STEPS || (best->found && growing <= best->steps))
        return;
    best->found = 1;
    best->source_id = r->source;
    best->first_step = r->first_step;
    best->last_step = r->prev_step;
    best->first_bytes = r->first_bytes;
    best->last_bytes = r->prev_bytes;
    best->steps = growing;
}

static int find_leak_run(vr_db *db, int64_t device_id, leak_run *leak, vr_error *err)
{
    memset(leak, 0, sizeof *leak);
    sqlite3_stmt *st = vr_db_stmt(db, sql, "diagnose_steps", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", device_id, err) < 0)
        return -1;
    step_run r = {0};
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t source = sqlite3_column_int64(st, 0);
        if (r.steps && source != r.source)
            keep_run(&r, leak);
        run_step(&r, source, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return vr_db_fail(db, err, "reading steps");
    if (r.steps)
        keep_run(&r, leak);
    return 0;
}

/* An operator's name from the input, cut to SITE_NAME_MAX bytes at a
 * character's start (the detail is kept whole by the renderer). */
static void put_site_name(vr_buf *out, const char *name)
{
    size_t n = strlen(name);
    if (n > SITE_NAME_MAX) {
        n = SITE_NAME_MAX;
        while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
            n--;
    }
    vr_buf_append(out, name, n);
    if (n < strlen(name))
        vr_buf_puts(out, "...");
}

static int read_leak_sites(vr_db *db, int64_t device_id, leak_run *leak, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "diagnose_leak_sites", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", device_id, err) < 0 ||
        vr_db_bind_int(st, ":source", leak->source_id, err) < 0 ||
        vr_db_bind_int(st, ":first", leak->first_step + 1, err) < 0 ||
        vr_db_bind_int(st, ":last", leak->last_step, err) < 0)
        return -1;
    vr_buf b = VR_BUF_INIT;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_buf_puts(&b, b.len ? ", " : "");
        put_site_name(&b, (const char *)sqlite3_column_text(st, 0));
        vr_buf_printf(&b, " (%lld allocations, %s)", (long long)sqlite3_column_int64(st, 1),
                      sz(sqlite3_column_int64(st, 2)).s);
    }
    sqlite3_reset(st);
    snprintf(leak->sites, sizeof leak->sites, "%s", b.data ? b.data : "");
    vr_buf_free(&b);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading a leak's sites");
}

static int find_leak(vr_db *db, int64_t device_id, leak_run *leak, vr_error *err)
{
    if (find_leak_run(db, device_id, leak, err) < 0)
        return -1;
    return leak->found ? read_leak_sites(db, device_id, leak, err) : 0;
}

/* The leak rule over each printing code's points of one group of prints,
 * fed a row at a time (series_row, then series_end): the longest run, and
 * which code printed it. A code's series starts where its name changes. */
typedef struct {
    step_run r;
    int64_t series;
    char name[sizeof((leak_run *)0)->printed_by], best_name[sizeof((leak_run *)0)->printed_by];
    int stepped, best_stepped;
} series_scan;

static void series_keep(series_scan *s, leak_run *leak)
{
    int64_t before = leak->steps;
    if (s->r.steps)
        keep_run(&s->r, leak);
    if (leak->steps != before) {
        memcpy(s->best_name, s->name, sizeof s->name);
        s->best_stepped = s->stepped;
    }
}

static void series_row(series_scan *s, leak_run *leak, const char *name, int64_t point, int64_t v,
                       int stepped)
{
    name = name ? name : "";
    if (!s->r.steps || strcmp(name, s->name) != 0) {
        series_keep(s, leak);
        snprintf(s->name, sizeof s->name, "%s", name);
        s->series++;
    }
    s->stepped = stepped;
    run_step(&s->r, s->series, point, v);
}

static void series_end(series_scan *s, leak_run *leak)
{
    series_keep(s, leak);
    leak->from_prints = leak->found;
    leak->stepped = s->best_stepped;
    memcpy(leak->printed_by, s->best_name, sizeof s->best_name);
}

/* A print query's rows (diagnose_print_steps: series, point, value,
 * stepped; the last print of each step, or each print when the log gives
 * no steps) through the leak rule. */
static int scan_print_series(vr_db *db, sqlite3_stmt *st, leak_run *leak, vr_error *err)
{
    series_scan s;
    memset(&s, 0, sizeof s);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        series_row(&s, leak, (const char *)sqlite3_column_text(st, 0),
                   sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
                   sqlite3_column_int(st, 3));
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return vr_db_fail(db, err, "reading memory prints");
    series_end(&s, leak);
    return 0;
}

/* A leak seen only through the job's memory prints before the OOM (a
 * log with no timeline, an OOM message without numbers). */
static int find_print_leak(vr_db *db, int64_t oom_id, leak_run *leak, vr_error *err)
{
    memset(leak, 0, sizeof *leak);
    sqlite3_stmt *st = vr_db_stmt(db, sql, "diagnose_print_steps", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":oom", oom_id, err) < 0)
        return -1;
    if (scan_print_series(db, st, leak, err) < 0)
        return -1;
    leak->before_oom = 1;
    return 0;
}

static int64_t leak_per_step(const leak_run *l)
{
    return l->steps ? (l->last_bytes - l->first_bytes) / l->steps : 0;
}

/* "allocated grew from A at the end of step N to B at step M, X a step" */
static void leak_sentence(const leak_run *l, vr_buf *out)
{
    if (l->from_prints) {
        const char *point = l->stepped ? "step" : "print";
        vr_buf_printf(out,
                      " The job's own memory prints (%s) show allocated memory growing "
                      "at every %s%s, from %s at %s %lld to %s at %s "
                      "%lld (%s a %s).",
                      l->printed_by, point, l->before_oom ? " before the error" : "",
                      sz(l->first_bytes).s, point, (long long)l->first_step, sz(l->last_bytes).s,
                      point, (long long)l->last_step, sz(leak_per_step(l)).s, point);
        return;
    }
    vr_buf_printf(out,
                  " Allocated memory grew at every step's end, from %s after step %lld "
                  "to %s after step %lld (%s a step)",
                  sz(l->first_bytes).s, (long long)l->first_step, sz(l->last_bytes).s,
                  (long long)l->last_step, sz(leak_per_step(l)).s);
    if (l->sites[0])
        vr_buf_printf(out, "; allocated in those steps and never freed: %s", l->sites);
    vr_buf_puts(out, ".");
}

/*-*** other libraries' errors ***/

/* An OOM another library raised (the job log's wordings of
 * scan/liboom.c, by their name's start): its pool is not PyTorch's, so
 * what to capture next time is that library's own account. `server`: an
 * inference server's start-up check, whose cause is the memory it
 * preallocates (its KV cache), never one oversized request. */
static const struct {
    const char *wording;
    int server;
    const char *note;
} lib_notes[] = {
    {"tf-", 0,
     " TensorFlow's BFC allocator keeps its own pool: capture its dump after the error (the "
     "\"Stats:\" block with Limit, InUse and MaxInUse that bfc_allocator.cc logs; keep "
     "TF_CPP_MIN_LOG_LEVEL at 0 or 1) and tf.config.experimental.get_memory_info('GPU:0'); "
     "with TF_GPU_ALLOCATOR=cuda_malloc_async the pool is CUDA's and no such dump is printed."},
    {"xla", 0,
     " JAX preallocates 75 % of the GPU at start (XLA_PYTHON_CLIENT_PREALLOCATE, "
     "XLA_PYTHON_CLIENT_MEM_FRACTION): the request failed inside that pool, not against the "
     "whole device; capture the BufferAssignment stats XLA prints with the error and "
     "jax.local_devices()[0].memory_stats() (bytes_in_use, peak_bytes_in_use, bytes_limit)."},
    {"cupy", 0,
     " CuPy's memory pool keeps what it freed (\"allocated so far\" counts it): capture "
     "cupy.get_default_memory_pool().used_bytes() and total_bytes(), and nvidia-smi beside "
     "the job."},
    {"cuda-driver", 0,
     " The CUDA driver refused the allocation outside PyTorch's caching allocator: capture "
     "nvidia-smi beside the job and the library's own memory figures."},
    {"cudaMalloc", 0,
     " A library's own cudaMalloc failed outside PyTorch's caching allocator (faiss reserves "
     "up to 1.5 GiB of scratch space, attention and quantization kernels their workspaces): "
     "capture nvidia-smi beside the job and memory_summary() when it fails."},
    {"cublas-", 0,
     " cuBLAS could not allocate its handle or workspace: the device was full when it needed "
     "them, outside what PyTorch's cache counts; capture memory_summary() at the failure and "
     "nvidia-smi beside the job (CUBLAS_WORKSPACE_CONFIG sizes the workspace)."},
    {"cudnn-", 0,
     " cuDNN could not allocate its handle or workspace: the device was full when it needed "
     "them, outside what PyTorch's cache counts; capture memory_summary() at the failure and "
     "nvidia-smi beside the job."},
    {"nccl", 0,
     " NCCL could not allocate its buffers (each communicator takes NCCL_BUFFSIZE per channel "
     "and peer, outside PyTorch's cache): capture NCCL_DEBUG=INFO's lines, memory_summary() "
     "before the process group starts and nvidia-smi beside the job."},
    {"vllm-", 1,
     " vLLM preallocates its KV cache at start-up: gpu_memory_utilization times the device, "
     "less the weights, the profiling run's activation peak and the memory outside PyTorch, "
     "is what the cache may take. Capture its start-up memory lines (weights, "
     "non_torch_memory, activation peak, KV cache size and blocks, logged at INFO) and the "
     "--gpu-memory-utilization, --max-model-len and --max-num-seqs it ran with."},
};

/* The library note of the event's wording, or -1. */
static int lib_note(const oom_evidence *e)
{
    for (size_t i = 0; i < sizeof lib_notes / sizeof *lib_notes; i++)
        if (strncmp(e->wording, lib_notes[i].wording, strlen(lib_notes[i].wording)) == 0)
            return (int)i;
    return -1;
}

static int is_server(const oom_evidence *e)
{
    int k = lib_note(e);
    return k >= 0 && lib_notes[k].server;
}

/* vLLM's start-up check: the free memory it found below what
 * gpu_memory_utilization asks for (free, capacity and the ask given). */
static int is_startup_check(const oom_evidence *e)
{
    return strcmp(e->wording, "vllm-startup-free") == 0 && has(e, F_FREE) && has(e, F_CAPACITY) &&
           has(e, F_REQUESTED);
}

/*-*** rules ***/

/* Memory another process holds, and how sure: named by the message
 * (high), listed by nvidia-smi (medium), or only what capacity - free -
 * reserved leaves beyond a context (low). */
static confidence other_memory(const oom_evidence *e, int64_t *bytes)
{
    if (has(e, F_OTHER_PROCESSES)) {
        *bytes = val(e, F_OTHER_PROCESSES);
        return strcmp(e->f[F_OTHER_PROCESSES].source, "nvidia-smi") == 0 ? CONF_MEDIUM
                                                                         : CONF_HIGH;
    }
    if (has(e, F_SMI_USED) && has(e, F_RESERVED)) {
        *bytes = val(e, F_SMI_USED) - val(e, F_RESERVED) - CONTEXT_ALLOWANCE;
        return CONF_LOW;
    }
    if (has(e, F_OUTSIDE_ALLOCATOR) && !has(e, F_SELF_PROCESS)) {
        *bytes = val(e, F_OUTSIDE_ALLOCATOR) - CONTEXT_ALLOWANCE;
        return CONF_LOW;
    }
    *bytes = 0;
    return CONF_NONE;
}

static int has_numbers(const oom_evidence *e)
{
    return has(e, F_REQUESTED) || has(e, F_ALLOCATED) || has(e, F_RESERVED) || has(e, F_FREE);
}

/* Below this share of the device, what PyTorch held plus the request
 * cannot have filled it (docs/diagnosis.md, thresholds). */
#define UNEXPLAINED_PERMILLE 500

/* The memory PyTorch held: reserved, else allocated; -1 when neither. */
static int64_t held_by_pytorch(const oom_evidence *e)
{
    return has(e, F_RESERVED)    ? val(e, F_RESERVED)
           : has(e, F_ALLOCATED) ? val(e, F_ALLOCATED)
                                 : -1;
}

/* Figures that cannot explain the OOM: no free memory told (so nothing
 * says what else held the device), no process listed, and PyTorch's
 * memory plus the request under half the device (an XPU's old message:
 * 176 MiB held, 1.71 GiB asked of 15.56 GiB). */
static int unexplained(const oom_evidence *e)
{
    int64_t held = held_by_pytorch(e);
    return !has(e, F_FREE) && !has(e, F_SELF_PROCESS) && !has(e, F_OTHER_PROCESSES) &&
           !has(e, F_SMI_USED) && has(e, F_CAPACITY) && has(e, F_REQUESTED) && held >= 0 &&
           permille(held + val(e, F_REQUESTED), val(e, F_CAPACITY)) < UNEXPLAINED_PERMILLE;
}

/* Figures with nothing to hold them against: no capacity, no request,
 * no free memory, no process (an allocator dump's count of its OOMs
 * beside what it held when taken): that PyTorch held 14 GiB says nothing
 * of whether the device was full. */
static int unmeasured(const oom_evidence *e)
{
    return !has(e, F_CAPACITY) && !has(e, F_REQUESTED) && !has(e, F_FREE) &&
           !has(e, F_SELF_PROCESS) && !has(e, F_OTHER_PROCESSES) && !has(e, F_SMI_USED);
}

static confidence rule_insufficient(const oom_evidence *e)
{
    /* a leak the job's prints show is evidence enough, and so is an
     * inference server's own check: its words say what ran short */
    if (e->leak.found || is_server(e))
        return CONF_NONE;
    return !has_numbers(e) ? CONF_HIGH : unexplained(e) ? CONF_MEDIUM : CONF_NONE;
}

static confidence rule_inconsistent(const oom_evidence *e)
{
    if (has(e, F_ALLOCATED) && has(e, F_CAPACITY) && val(e, F_ALLOCATED) > val(e, F_CAPACITY))
        return CONF_HIGH;
    if (has(e, F_FREE) && has(e, F_REQUESTED) &&
        val(e, F_FREE) >= segment_for(val(e, F_REQUESTED)) + INCONSISTENT_MARGIN)
        return CONF_HIGH;
    return CONF_NONE;
}

static confidence rule_other_process(const oom_evidence *e)
{
    /* vLLM found less free than it asks for before it allocated anything:
     * all memory in use then is outside the engine it starts */
    if (is_startup_check(e))
        return val(e, F_FREE) < val(e, F_REQUESTED) ? CONF_HIGH : CONF_NONE;
    int64_t other;
    confidence c = other_memory(e, &other);
    if (c == CONF_NONE || other <= 0 || !has(e, F_REQUESTED))
        return CONF_NONE;
    int64_t free = has(e, F_FREE) ? val(e, F_FREE) : 0;
    return free + other >= segment_for(val(e, F_REQUESTED)) ? c : CONF_NONE;
}

/* The cache held enough free bytes for the request (and, when the replay
 * says, no block of them was large enough). */
static confidence frag_cache_would_serve(const oom_evidence *e)
{
    if (!has(e, F_CACHE_FREE) || !has(e, F_REQUESTED) ||
        val(e, F_CACHE_FREE) < val(e, F_REQUESTED))
        return CONF_NONE;
    if (has(e, F_LARGEST_FREE_BLOCK))
        return val(e, F_LARGEST_FREE_BLOCK) < val(e, F_REQUESTED) ? CONF_HIGH : CONF_NONE;
    return CONF_MEDIUM;
}

static confidence rule_fragmentation_secondary(const oom_evidence *e)
{
    return frag_cache_would_serve(e);
}

/* Without the request's size (an allocator dump's count of its OOMs):
 * the cache held far more free than the tensors used, at least
 * FRAG_UNSIZED_MIN: a request that failed beside it found no block of
 * its size in it. Low: the request may have been larger than all of it. */
#define FRAG_UNSIZED_MIN ((int64_t)1 << 30)

static confidence frag_unsized(const oom_evidence *e)
{
    if (has(e, F_REQUESTED) || !has(e, F_CACHE_FREE) || !has(e, F_ALLOCATED))
        return CONF_NONE;
    int64_t cache = val(e, F_CACHE_FREE);
    return cache >= FRAG_UNSIZED_MIN && cache >= val(e, F_ALLOCATED) ? CONF_LOW : CONF_NONE;
}

/* As a primary cause: the request served, a real share of the device is
 * left. */
static confidence rule_fragmentation(const oom_evidence *e)
{
    confidence c = frag_cache_would_serve(e);
    if (c == CONF_NONE)
        return frag_unsized(e);
    int64_t free = has(e, F_FREE) ? val(e, F_FREE) : 0;
    int64_t room = val(e, F_CACHE_FREE) + free - val(e, F_REQUESTED);
    if (has(e, F_CAPACITY))
        return permille(room, val(e, F_CAPACITY)) >= FRAG_ROOM_PERMILLE ? c : CONF_NONE;
    /* Without a capacity: room for the request again, and no surer than
     * medium (the share of the device is unknown). */
    if (room < val(e, F_REQUESTED))
        return CONF_NONE;
    return c > CONF_MEDIUM ? CONF_MEDIUM : c;
}

static confidence rule_leak(const oom_evidence *e)
{
    return e->leak.found ? CONF_MEDIUM : CONF_NONE;
}

/* Under 5 % of the device: such a request fails because the device is
 * full, never because it is large (memory held outside this process, when
 * it explains the shortfall, is other-process's; else capacity). */
static int small_request(const oom_evidence *e)
{
    return has(e, F_CAPACITY) &&
           val(e, F_REQUESTED) <
               (val(e, F_CAPACITY) + SMALL_REQUEST_DIVISOR - 1) / SMALL_REQUEST_DIVISOR;
}

static confidence rule_oversized(const oom_evidence *e)
{
    if (!has(e, F_REQUESTED) || is_server(e) || small_request(e))
        return CONF_NONE; /* a server's preallocation is no single request */
    int64_t req = val(e, F_REQUESTED);
    /* Larger than all the process could ever have, every tensor freed:
     * sure. A quarter of the device: a cause, but fragmentation that
     * would have served it is the nearer one (it comes first on a tie). */
    if (has(e, F_FREE) && has(e, F_RESERVED) && req > val(e, F_FREE) + val(e, F_RESERVED))
        return CONF_HIGH;
    if (has(e, F_CAPACITY) && permille(req, val(e, F_CAPACITY)) >= OVERSIZED_PERMILLE)
        return CONF_MEDIUM;
    return CONF_NONE;
}

/* Otherwise: the job's demand exceeds the device. Sure when the numbers
 * show tensors filling it. */
static confidence rule_capacity(const oom_evidence *e)
{
    /* its own check: the cache it needs exceeds its budget (medium when
     * it says by how much, or that one sequence does not fit); no memory
     * left for the cache at all may also be another process's (low) */
    if (is_server(e))
        return has(e, F_REQUESTED) || strcmp(e->wording, "vllm-kv-too-small") == 0 ? CONF_MEDIUM
                                                                                   : CONF_LOW;
    /* Without allocated (MPS tells what its heaps hold and the
     * process's other allocations): the process's memory, else what
     * PyTorch held, at the limit is capacity, though not tensors for sure. */
    if (has(e, F_CAPACITY) && !has(e, F_ALLOCATED) && held_by_pytorch(e) >= 0) {
        int64_t held = has(e, F_SELF_PROCESS) ? val(e, F_SELF_PROCESS) : held_by_pytorch(e);
        return permille(held, val(e, F_CAPACITY)) >= NEAR_CAPACITY_PERMILLE ? CONF_MEDIUM
                                                                            : CONF_LOW;
    }
    if (!has(e, F_CAPACITY) || !has(e, F_ALLOCATED))
        return has(e, F_REQUESTED) ? CONF_LOW : CONF_NONE;
    return permille(val(e, F_ALLOCATED), val(e, F_CAPACITY)) >= NEAR_CAPACITY_PERMILLE
               ? CONF_HIGH
               : CONF_MEDIUM;
}

/* The ordered rule table. The primary cause is the surest rule that
 * holds, the earlier on a tie (evidence problems come first: their
 * numbers cannot be read as a cause); the fallback only when none holds.
 * secondary: the predicate for holding as a secondary cause. */
typedef confidence (*rule_fn)(const oom_evidence *);
typedef struct {
    const char *kind;
    rule_fn primary;
    rule_fn secondary;
    int fallback;
} rule;

static const rule rules[] = {
    /* first: choose_primary() names it by its place */
    {"insufficient-evidence", rule_insufficient, NULL, 0},
    {"inconsistent", rule_inconsistent, rule_inconsistent, 0},
    {"other-process", rule_other_process, rule_other_process, 0},
    {"fragmentation", rule_fragmentation, rule_fragmentation_secondary, 0},
    {"leak", rule_leak, rule_leak, 0},
    {"oversized-request", rule_oversized, rule_oversized, 0},
    {"capacity", rule_capacity, NULL, 1},
};
#define NRULES (sizeof rules / sizeof rules[0])

static size_t choose_primary(const oom_evidence *e, confidence *conf)
{
    size_t best = NRULES;
    confidence best_conf = CONF_NONE;
    for (size_t i = 0; i < NRULES; i++) {
        confidence c = rules[i].fallback ? CONF_NONE : rules[i].primary(e);
        if (c > best_conf) {
            best = i;
            best_conf = c;
        }
    }
    /* No rule holds and nothing measures the figures against a limit:
     * there are no grounds for the fallback's "the GPU was full" either
     * (rule_insufficient comes first in the table). */
    if (best == NRULES && unmeasured(e) && !e->leak.found && !is_server(e)) {
        *conf = CONF_MEDIUM;
        return 0;
    }
    for (size_t i = 0; best == NRULES && i < NRULES; i++)
        if (rules[i].fallback) {
            best = i;
            best_conf = rules[i].primary(e);
            if (best_conf == CONF_NONE)
                best_conf = CONF_LOW;
        }
    *conf = best_conf;
    return best;
}

static void secondary_json(const oom_evidence *e, size_t primary, vr_buf *out)
{
    vr_buf_putc(out, '[');
    int n = 0;
    for (size_t i = 0; i < NRULES; i++)
        if (i != primary && rules[i].secondary && rules[i].secondary(e) != CONF_NONE)
            vr_buf_printf(out, "%s\"%s\"", n++ ? ", " : "", rules[i].kind);
    vr_buf_putc(out, ']');
}

static void evidence_json(const oom_evidence *e, vr_buf *out)
{
    vr_buf_putc(out, '{');
    int n = 0;
    for (int i = 0; i < F_COUNT; i++)
        if (e->f[i].known)
            vr_buf_printf(out, "%s\"%s\": {\"value\": %lld, \"source\": \"%s\"}", n++ ? ", " : "",
                          figure_names[i], (long long)e->f[i].value, e->f[i].source);
    if (e->other_pid)
        vr_buf_printf(out, "%s\"other_pid\": {\"value\": %lld, \"source\": \"%s\"}",
                      n++ ? ", " : "", (long long)e->other_pid, e->f[F_OTHER_PROCESSES].source);
    vr_buf_putc(out, '}');
}

/*-*** prose ***/

/* A cause in a headline is said in words (db/kind_words.h); the slug
 * stays the JSON's kind. */

/* A title starts a sentence: "The GPU", where no device is named (a
 * device's own name, cuda:0, stays as it is written). */
static const char *title_label(const oom_evidence *e)
{
    return strcmp(e->label, "the GPU") == 0 ? "The GPU" : e->label;
}

/* vLLM's start-up checks refuse to start: no allocation failed, so no
 * "ran out of memory"; the two KV cache checks say their own cause. */
static int server_title(const oom_evidence *e, const char *kind, vr_buf *out)
{
    if (strncmp(e->wording, "vllm-", 5) != 0)
        return 0;
    vr_buf_printf(out, "vLLM did not start on %s", e->label);
    if (strcmp(e->wording, "vllm-no-kv-memory") == 0)
        vr_buf_puts(out, ": its share of the GPU left no memory for the KV cache");
    else if (strcmp(e->wording, "vllm-kv-too-small") == 0)
        vr_buf_printf(out, ": its KV cache is too small for one request of the longest length%s%s",
                      has(e, F_REQUESTED) ? ", which needs " : "",
                      has(e, F_REQUESTED) ? sz(val(e, F_REQUESTED)).s : "");
    else
        vr_buf_printf(out, "%s%s: %s", has(e, F_REQUESTED) ? ", asking for " : "",
                      has(e, F_REQUESTED) ? sz(val(e, F_REQUESTED)).s : "", vr_kind_words(kind));
    return 1;
}

static void title_for(const oom_evidence *e, const char *kind, vr_buf *out)
{
    if (server_title(e, kind, out))
        return;
    if (has(e, F_REQUESTED))
        vr_buf_printf(out, "%s ran out of memory asking for %s: %s", title_label(e),
                      sz(val(e, F_REQUESTED)).s, vr_kind_words(kind));
    else
        vr_buf_printf(out, "%s ran out of memory: %s", title_label(e), vr_kind_words(kind));
}

/* The sentence of figures every OOM detail starts with. */
static void figures_sentence(const oom_evidence *e, vr_buf *out)
{
    if (strncmp(e->wording, "vllm-", 5) == 0)
        vr_buf_printf(out, "vLLM's start-up check on %s failed", e->label);
    else
        vr_buf_printf(out, "%s ran out of memory", e->label);
    size_text asked = sz(has(e, F_REQUESTED) ? val(e, F_REQUESTED) : 0), free_t = asked;
    if (has(e, F_REQUESTED) && has(e, F_FREE))
        vr_units_bytes_apart(val(e, F_REQUESTED), val(e, F_FREE), asked.s, free_t.s,
                             sizeof asked.s);
    else if (has(e, F_FREE))
        free_t = sz(val(e, F_FREE));
    if (has(e, F_REQUESTED))
        vr_buf_printf(out, " asking for %s", asked.s);
    if (has(e, F_FREE))
        vr_buf_printf(out, " with %s free", free_t.s);
    if (has(e, F_CAPACITY))
        vr_buf_printf(out, " of %s%s", sz(val(e, F_CAPACITY)).s,
                      e->has_allowed ? " allowed" : "");
    else if (has(e, F_CAPACITY_MIN))
        vr_buf_printf(out, " of at least %s (free plus reserved; no input states the capacity)",
                      sz(val(e, F_CAPACITY_MIN)).s);
    if (has(e, F_ALLOCATED))
        vr_buf_printf(out, "; PyTorch had %s allocated", sz(val(e, F_ALLOCATED)).s);
    if (has(e, F_RESERVED))
        vr_buf_printf(out, "%s%s reserved", has(e, F_ALLOCATED) ? " and " : "; PyTorch had ",
                      sz(val(e, F_RESERVED)).s);
    vr_buf_puts(out, ".");
}

static void explain_insufficient(const oom_evidence *e, vr_buf *out)
{
    if (lib_note(e) >= 0 && !has_numbers(e)) {
        vr_buf_puts(out, " The error gives no figures.");
        return; /* its library's note says what to capture */
    }
    if (has_numbers(e) && unmeasured(e)) {
        vr_buf_puts(out, " Nothing says how large the device was, how much was asked for or "
                         "how much was free, so what ran out is unknown. Capture it next "
                         "time: nvidia-smi beside the job, memory_summary() and an allocator "
                         "snapshot at the error (run vramreport capture-help).");
        return;
    }
    if (has_numbers(e)) {
        vr_buf_printf(out,
                      " PyTorch held %s and asked for %s of %s: that cannot have filled the "
                      "device, and the error tells no free memory, so what held the rest is "
                      "unknown. Capture it next time: nvidia-smi beside the job, "
                      "memory_summary() and an allocator snapshot at the error (run "
                      "vramreport capture-help).",
                      sz(held_by_pytorch(e)).s, sz(val(e, F_REQUESTED)).s,
                      sz(val(e, F_CAPACITY)).s);
        return;
    }
    vr_buf_puts(out, " The error gives no figures (no request, allocated, reserved or free "
                     "memory): capture them next time with the capture kit "
                     "(run vramreport capture-help): an allocator snapshot with its history, "
                     "memory_stats() at each step and nvidia-smi beside the job.");
}

static void explain_inconsistent(const oom_evidence *e, vr_buf *out)
{
    if (has(e, F_ALLOCATED) && has(e, F_CAPACITY) && val(e, F_ALLOCATED) > val(e, F_CAPACITY)) {
        vr_buf_printf(out,
                      " The numbers contradict a plain OOM: %s allocated is more than the "
                      "device's %s (as with Windows shared GPU memory or a virtual GPU).",
                      sz(val(e, F_ALLOCATED)).s, sz(val(e, F_CAPACITY)).s);
        return;
    }
    vr_buf_printf(out,
                  " The numbers contradict a plain OOM: %s was free, well above the %s "
                  "segment the request needs; a per-process memory fraction, a MIG or "
                  "container limit, or a failed allocation outside PyTorch's cache may "
                  "explain it.",
                  sz(val(e, F_FREE)).s, sz(segment_for(val(e, F_REQUESTED))).s);
}

static void explain_other(const oom_evidence *e, vr_buf *out)
{
    if (is_startup_check(e)) {
        vr_buf_printf(out,
                      " %s of the device was in use before vLLM allocated anything (other "
                      "processes, or an earlier engine of this process); "
                      "gpu_memory_utilization asks for %s of it.",
                      sz(val(e, F_CAPACITY) - val(e, F_FREE)).s, sz(val(e, F_REQUESTED)).s);
        return;
    }
    int64_t other;
    other_memory(e, &other);
    const figure *f = &e->f[F_OTHER_PROCESSES];
    if (f->known && e->other_pid)
        vr_buf_printf(out,
                      " %s of it was held by other processes (%s names PID %lld); "
                      "without them the request would have fit.",
                      sz(other).s, f->source, (long long)e->other_pid);
    else
        vr_buf_printf(out,
                      " %s of it was in use outside this process's PyTorch allocator "
                      "beyond a CUDA context's %s (capacity - free - %s); without "
                      "it the request would have fit.",
                      sz(other).s, sz(CONTEXT_ALLOWANCE).s,
                      has(e, F_RESERVED) ? "reserved" : "allocated");
}

static void explain_fragmentation(const oom_evidence *e, vr_buf *out)
{
    if (!has(e, F_REQUESTED)) {
        /* a dump's OOM count, a message without its size: no request to
         * weigh the free memory against */
        vr_buf_printf(out,
                      " The cache held %s free; the input does not give the failed request's "
                      "size, so that no block of it was large enough is likely, not shown.",
                      sz(val(e, F_CACHE_FREE)).s);
        return;
    }
    vr_buf_printf(out, " The cache held %s free, enough for the request, but",
                  sz(val(e, F_CACHE_FREE)).s);
    if (has(e, F_LARGEST_FREE_BLOCK))
        vr_buf_printf(out, " its largest free block was %s.", sz(val(e, F_LARGEST_FREE_BLOCK)).s);
    else
        vr_buf_puts(out, " no block of it was large enough.");
}

static void explain_oversized(const oom_evidence *e, vr_buf *out)
{
    int64_t share = has(e, F_CAPACITY) ? permille(val(e, F_REQUESTED), val(e, F_CAPACITY)) : 0;
    if (share >= OVERSIZED_PERMILLE)
        vr_buf_printf(out, " The one request is %lld %% of the device.", (long long)(share / 10));
    else
        vr_buf_puts(out, " The one request is larger than all the memory the process could "
                         "free (free plus reserved).");
}

static void explain_leak(const oom_evidence *e, vr_buf *out)
{
    leak_sentence(&e->leak, out);
}

/* This process's memory outside PyTorch's allocator worth a word: more
 * than a CUDA context and a tenth of the device (MPS's "other
 * allocations"). */
static void outside_sentence(const oom_evidence *e, vr_buf *out)
{
    if (!has(e, F_SELF_PROCESS) || !has(e, F_RESERVED) || !has(e, F_CAPACITY))
        return;
    int64_t outside = val(e, F_SELF_PROCESS) - val(e, F_RESERVED);
    if (outside > SELF_CONTEXT_MAX && permille(outside, val(e, F_CAPACITY)) >= 100)
        vr_buf_printf(out,
                      " Of this process's %s, %s is outside PyTorch's allocator (other "
                      "libraries' memory in the same process).",
                      sz(val(e, F_SELF_PROCESS)).s, sz(outside).s);
}

static void explain_capacity(const oom_evidence *e, vr_buf *out)
{
    if (is_server(e)) {
        vr_buf_puts(out, strcmp(e->wording, "vllm-no-kv-memory") == 0
                             ? " Within its gpu_memory_utilization of the device, the weights "
                               "and the profiling run's activations left no memory for the "
                               "KV cache."
                             : " The KV cache one request of the longest length needs exceeds "
                               "what the server preallocated for it.");
        return;
    }
    if (!has(e, F_ALLOCATED) && has(e, F_CAPACITY) && held_by_pytorch(e) >= 0)
        vr_buf_puts(out, rule_capacity(e) == CONF_MEDIUM
                             ? " The process's memory reached the limit."
                             : " What held the rest of the device the error does not tell.");
    else if (!has(e, F_ALLOCATED) && held_by_pytorch(e) < 0)
        /* the request alone (a library's error): no figure says what filled it */
        vr_buf_puts(out, " The device had no room for the request; what filled it the error "
                         "does not tell.");
    else
        vr_buf_puts(out, " The job's demand exceeds the device: tensors fill it.");
    outside_sentence(e, out);
    if (frag_cache_would_serve(e) != CONF_NONE)
        vr_buf_printf(out,
                      " The cache's %s free in pieces would have served this request "
                      "but left too little to run on (under %d %% of the device): "
                      "fragmentation is a secondary cause.",
                      sz(val(e, F_CACHE_FREE)).s, FRAG_ROOM_PERMILLE / 10);
}

static const struct {
    const char *kind;
    void (*explain)(const oom_evidence *, vr_buf *);
} explanations[] = {
    {"insufficient-evidence", explain_insufficient},
    {"inconsistent", explain_inconsistent},
    {"other-process", explain_other},
    {"fragmentation", explain_fragmentation},
    {"leak", explain_leak},
    {"oversized-request", explain_oversized},
    {"capacity", explain_capacity},
};

static void detail_for(const oom_evidence *e, const char *kind, vr_buf *out)
{
    figures_sentence(e, out);
    for (size_t i = 0; i < sizeof explanations / sizeof explanations[0]; i++)
        if (strcmp(explanations[i].kind, kind) == 0)
            explanations[i].explain(e, out);
    int k = lib_note(e);
    if (k >= 0)
        vr_buf_puts(out, lib_notes[k].note);
}

/*-*** writing ***/

typedef struct {
    int has_device, has_ts, has_oom;
    int64_t device_id, ts_ns, rank, oom_id;
    const char *kind, *severity, *confidence;
    const char *title, *detail, *data, *secondary;
} finding_row;

static int bind_text0(sqlite3_stmt *st, const char *name, const char *text, vr_error *err)
{
    return vr_db_bind_text(st, name, text, strlen(text), err);
}

static int insert_finding(vr_db *db, const finding_row *r, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "insert_finding", err);
    if (!st)
        return -1;
    if (vr_db_bind_opt_int(st, ":device", r->has_device, r->device_id, err) < 0 ||
        vr_db_bind_opt_int(st, ":ts", r->has_ts, r->ts_ns, err) < 0 ||
        vr_db_bind_opt_int(st, ":oom", r->has_oom, r->oom_id, err) < 0 ||
        vr_db_bind_int(st, ":rank", r->rank, err) < 0 ||
        bind_text0(st, ":kind", r->kind, err) < 0 ||
        bind_text0(st, ":severity", r->severity, err) < 0 ||
        bind_text0(st, ":confidence", r->confidence, err) < 0 ||
        bind_text0(st, ":title", r->title, err) < 0 ||
        bind_text0(st, ":detail", r->detail, err) < 0 ||
        bind_text0(st, ":data", r->data, err) < 0 ||
        bind_text0(st, ":secondary", r->secondary, err) < 0)
        return -1;
    return vr_db_step_done(db, st, err);
}

static const char *text_of(vr_buf *b)
{
    return b->data ? b->data : "";
}

/* insert_finding() with the three texts a writer built, which it frees
 * whatever the outcome. */
static int insert_texts(vr_db *db, finding_row *r, vr_buf *title, vr_buf *detail, vr_buf *data,
                        vr_error *err)
{
    r->title = text_of(title);
    r->detail = text_of(detail);
    r->data = text_of(data);
    int rc = insert_finding(db, r, err);
    vr_buf_free(title);
    vr_buf_free(detail);
    vr_buf_free(data);
    return rc;
}

static int write_oom_finding(vr_db *db, const oom_evidence *e, vr_error *err)
{
    confidence conf;
    size_t p = choose_primary(e, &conf);
    vr_buf title = VR_BUF_INIT, detail = VR_BUF_INIT, data = VR_BUF_INIT, sec = VR_BUF_INIT;
    title_for(e, rules[p].kind, &title);
    detail_for(e, rules[p].kind, &detail);
    evidence_json(e, &data);
    secondary_json(e, p, &sec);
    finding_row r = {e->has_device,
                     e->has_ts,
                     1,
                     e->device_id,
                     e->ts_ns,
                     e->rank,
                     e->oom_id,
                     rules[p].kind,
                     "critical",
                     confidence_names[conf],
                     text_of(&title),
                     text_of(&detail),
                     text_of(&data),
                     text_of(&sec)};
    int rc = insert_finding(db, &r, err);
    vr_buf_free(&title);
    vr_buf_free(&detail);
    vr_buf_free(&data);
    vr_buf_free(&sec);
    return rc;
}

/* The same OOM from another source: its figures fill what the first
 * lacks, each keeping its own source. */
static void merge_twin(oom_evidence *e, const oom_evidence *twin)
{
    for (int i = 0; i < F_COUNT; i++)
        if (!e->f[i].known && twin->f[i].known)
            e->f[i] = twin->f[i];
    if (!e->other_pid)
        e->other_pid = twin->other_pid;
    if (!e->wording[0])
        memcpy(e->wording, twin->wording, sizeof e->wording);
    e->has_allowed |= twin->has_allowed;
    if (!e->has_device && twin->has_device) {
        e->has_device = 1;
        e->device_id = twin->device_id;
        memcpy(e->label, twin->label, sizeof e->label);
    }
    if (e->rank < 0)
        e->rank = twin->rank;
}

/* One event's row and its message's processes. */
static int read_member(vr_db *db, sqlite3_stmt *row, oom_evidence *e, vr_error *err)
{
    read_event(row, e);
    return read_message_processes(db, e, err);
}

/* A group of twins is complete: what follows from it, then its finding. */
static int finish_oom(vr_db *db, oom_evidence *e, vr_error *err)
{
    derive(e);
    if (read_smi(db, e, err) < 0)
        return -1;
    if (e->has_device && find_leak(db, e->device_id, &e->leak, err) < 0)
        return -1;
    if (!e->leak.found && find_print_leak(db, e->oom_id, &e->leak, err) < 0)
        return -1;
    if (e->leak.found) {
        const char *from = e->leak.from_prints ? "log" : "timeline";
        set_figure(&e->f[F_LEAK_PER_STEP], leak_per_step(&e->leak), from);
        set_figure(&e->f[F_LEAK_STEPS], e->leak.steps, from);
    }
    return write_oom_finding(db, e, err);
}

static int is_twin_of(sqlite3_stmt *row, const oom_evidence *group)
{
    return sqlite3_column_type(row, C_TWIN_OF) != SQLITE_NULL &&
           sqlite3_column_int64(row, C_TWIN_OF) == group->oom_id;
}

/* The event `twin` tells the OOM its group's first (`first`) told:
 * counted and listed once (oom_twin). */
static int note_twin(vr_db *db, int64_t twin, int64_t first, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "insert_oom_twin", err);
    if (!st || vr_db_bind_int(st, ":oom", twin, err) < 0 ||
        vr_db_bind_int(st, ":first", first, err) < 0)
        return -1;
    return vr_db_step_done(db, st, err);
}

/* Rows come by group (diagnose_ooms): a row twin of the current group
 * joins it, any other starts the next. */
static int sweep_ooms(vr_db *db, sqlite3_stmt *st, oom_evidence *cur, oom_evidence *next,
                      vr_error *err)
{
    int have = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int twin = have && is_twin_of(st, cur);
        if (read_member(db, st, next, err) < 0)
            return -1;
        if (twin) {
            if (note_twin(db, next->oom_id, cur->oom_id, err) < 0)
                return -1;
            merge_twin(cur, next);
            continue;
        }
        if (have && finish_oom(db, cur, err) < 0)
            return -1;
        *cur = *next;
        have = 1;
    }
    if (rc != SQLITE_DONE)
        return vr_db_fail(db, err, "reading OOM events");
    return have ? finish_oom(db, cur, err) : 0;
}

static int diagnose_ooms(vr_db *db, vr_error *err)
{
    if (vr_db_exec_named(db, sql, "diagnose_oom_times", err) < 0)
        return -1;
    sqlite3_stmt *st = vr_db_stmt(db, sql, "diagnose_ooms", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":window", TWIN_WINDOW_NS, err) < 0 ||
        vr_db_bind_int(st, ":near", TWIN_NEAR, err) < 0)
        return -1;
    oom_evidence *pair = vr_xmalloc(2 * sizeof *pair);
    int rc = sweep_ooms(db, st, &pair[0], &pair[1], err);
    sqlite3_reset(st);
    free(pair);
    if (rc < 0)
        return -1;
    return vr_db_exec_named(db, sql, "diagnose_oom_times_done", err);
}

/*-*** peaks ***/

typedef struct {
    int64_t device_id, rank, ts_ns, peak_allocated, peak_reserved, capacity, ooms;
    int has_capacity, has_ts;
    int no_device;             /* an allocator dump's peaks: no device row */
    const char *capacity_from; /* capacity_source() */
    const char *peak_from;     /* the peaks' source: "timeline", "memory_stats" */
    char label[64];
} peak_row;

static void read_peak(sqlite3_stmt *st, peak_row *p)
{
    memset(p, 0, sizeof *p);
    p->device_id = sqlite3_column_int64(st, 0);
    copy_text(p->label, sizeof p->label, st, 1);
    p->rank = sqlite3_column_int64(st, 2);
    p->has_ts = sqlite3_column_type(st, 3) != SQLITE_NULL;
    p->ts_ns = sqlite3_column_int64(st, 3);
    p->peak_allocated = sqlite3_column_int64(st, 4);
    p->peak_reserved = sqlite3_column_int64(st, 5);
    p->has_capacity = sqlite3_column_type(st, 6) != SQLITE_NULL;
    p->capacity = sqlite3_column_int64(st, 6);
    p->capacity_from = capacity_source((const char *)sqlite3_column_text(st, 7));
    p->peak_from = "timeline";
    p->ooms = sqlite3_column_int64(st, 8);
}

static int write_near_capacity(vr_db *db, const peak_row *p, vr_error *err)
{
    int64_t peak = p->peak_reserved > p->peak_allocated ? p->peak_reserved : p->peak_allocated;
    vr_buf title = VR_BUF_INIT, detail = VR_BUF_INIT, data = VR_BUF_INIT;
    vr_buf_printf(&title, "%s peaked at %lld %% of its memory", p->label,
                  (long long)(permille(peak, p->capacity) / 10));
    vr_buf_printf(&detail,
                  "%s reserved %s at its peak (%s allocated) of %s: at or above %d %% of the "
                  "device, one larger batch or a longer sequence away from an OOM.",
                  p->label, sz(p->peak_reserved).s, sz(p->peak_allocated).s, sz(p->capacity).s,
                  NEAR_CAPACITY_PERMILLE / 10);
    const char *src = p->capacity_from;
    vr_buf_printf(&data,
                  "{\"peak_allocated_bytes\": {\"value\": %lld, \"source\": \"%s\"}, "
                  "\"peak_reserved_bytes\": {\"value\": %lld, \"source\": \"%s\"}, "
                  "\"capacity_bytes\": {\"value\": %lld, \"source\": \"%s\"}}",
                  (long long)p->peak_allocated, p->peak_from, (long long)p->peak_reserved,
                  p->peak_from, (long long)p->capacity, src);
    finding_row r = {!p->no_device,   p->has_ts, 0,      p->device_id, p->ts_ns, p->rank, 0,
                     "near-capacity", "warning", "high", NULL,         NULL,     NULL,    "[]"};
    return insert_texts(db, &r, &title, &detail, &data, err);
}

static int is_near_capacity(const peak_row *p)
{
    int64_t peak = p->peak_reserved > p->peak_allocated ? p->peak_reserved : p->peak_allocated;
    return p->has_capacity && permille(peak, p->capacity) >= NEAR_CAPACITY_PERMILLE;
}

/* A leak warning without an OOM. The step-boundary leak (the timeline's
 * allocated bytes at each step's end) and the print leak (the job's own
 * prints) are one finding written from two kinds of evidence: what differs
 * is this table, so their JSON keeps one shape. */
typedef struct {
    const char *source;   /* each figure's "source" */
    const char *measured; /* what the title says grows */
    const char *first_key, *last_key;
} leak_evidence;

static const leak_evidence timeline_leak = {
    "timeline", "allocated memory", "first_end_allocated_bytes", "last_end_allocated_bytes"};
static const leak_evidence print_leak = {"log", "printed allocated memory",
                                         "first_printed_allocated_bytes",
                                         "last_printed_allocated_bytes"};

/* Where the warning belongs: device (when known), time and its label. */
typedef struct {
    int has_device, has_ts;
    int64_t device_id, ts_ns, rank;
    const char *label;
} leak_place;

static int write_leak_finding(vr_db *db, const leak_place *at, const leak_evidence *ev,
                              const leak_run *l, const char *unit, vr_error *err)
{
    vr_buf title = VR_BUF_INIT, detail = VR_BUF_INIT, data = VR_BUF_INIT;
    vr_buf_printf(&title, "%s: %s grows %s a %s", at->label, ev->measured, sz(leak_per_step(l)).s,
                  unit);
    vr_buf_printf(&detail,
                  "%s did not run out of memory, but memory is kept from step to "
                  "step.",
                  at->label);
    leak_sentence(l, &detail);
    vr_buf_printf(&data,
                  "{\"leak_per_step_bytes\": {\"value\": %lld, \"source\": \"%s\"}, "
                  "\"leak_steps\": {\"value\": %lld, \"source\": \"%s\"}, "
                  "\"%s\": {\"value\": %lld, \"source\": \"%s\"}, "
                  "\"%s\": {\"value\": %lld, \"source\": \"%s\"}}",
                  (long long)leak_per_step(l), ev->source, (long long)l->steps, ev->source,
                  ev->first_key, (long long)l->first_bytes, ev->source, ev->last_key,
                  (long long)l->last_bytes, ev->source);
    finding_row r = {at->has_device, at->has_ts, 0,      at->device_id, at->ts_ns,
                     at->rank,       0,          "leak", "warning",     "medium",
                     NULL,           NULL,       NULL,   "[]"};
    return insert_texts(db, &r, &title, &detail, &data, err);
}

static int write_leak(vr_db *db, const peak_row *p, const leak_run *l, vr_error *err)
{
    leak_place at = {1, p->has_ts, p->device_id, p->ts_ns, p->rank, p->label};
    return write_leak_finding(db, &at, &timeline_leak, l, "step", err);
}

/* A device without an OOM: near capacity, leaking. */
static int diagnose_peak(vr_db *db, const peak_row *p, vr_error *err)
{
    if (p->ooms)
        return 0;
    if (is_near_capacity(p) && write_near_capacity(db, p, err) < 0)
        return -1;
    leak_run leak;
    if (find_leak(db, p->device_id, &leak, err) < 0)
        return -1;
    return leak.found ? write_leak(db, p, &leak, err) : 0;
}

/* The ranks' largest and smallest peaks (allocated), for rank-imbalance:
 * a rank's peak is its highest device's (a rank of two devices is one
 * rank, not two: an imbalance between its own devices is
 * device-imbalance's), so each rank's highest device is kept. */
typedef struct {
    peak_row high, low;
    int ranks;
    peak_row *by_rank; /* each rank's highest device */
    size_t cap;
} rank_spread;

static void spread_add(rank_spread *s, const peak_row *p)
{
    if (p->rank < 0)
        return;
    for (int i = 0; i < s->ranks; i++)
        if (s->by_rank[i].rank == p->rank) {
            if (p->peak_allocated > s->by_rank[i].peak_allocated)
                s->by_rank[i] = *p;
            return;
        }
    vr_xgrow(&s->by_rank, &s->cap, (size_t)s->ranks + 1, sizeof *s->by_rank, 16);
    s->by_rank[s->ranks++] = *p;
}

/* high and low over the ranks' highest devices; frees the list. */
static void spread_finish(rank_spread *s)
{
    for (int i = 0; i < s->ranks; i++) {
        const peak_row *p = &s->by_rank[i];
        if (i == 0 || p->peak_allocated > s->high.peak_allocated)
            s->high = *p;
        if (i == 0 || p->peak_allocated < s->low.peak_allocated)
            s->low = *p;
    }
    free(s->by_rank);
    s->by_rank = NULL;
}

static int write_imbalance(vr_db *db, rank_spread *s, vr_error *err)
{
    spread_finish(s);
    int64_t gap = s->high.peak_allocated - s->low.peak_allocated;
    if (s->ranks < 2 || permille(gap, s->high.peak_allocated) <= IMBALANCE_PERMILLE)
        return 0;
    vr_buf title = VR_BUF_INIT, detail = VR_BUF_INIT, data = VR_BUF_INIT;
    /* above a rank that allocated nothing no percentage means anything */
    if (s->low.peak_allocated > 0)
        vr_buf_printf(&title, "Rank %lld peaked %lld %% above rank %lld", (long long)s->high.rank,
                      (long long)(permille(gap, s->low.peak_allocated) / 10),
                      (long long)s->low.rank);
    else
        vr_buf_printf(&title, "Rank %lld peaked at %s, rank %lld allocated nothing",
                      (long long)s->high.rank, sz(s->high.peak_allocated).s,
                      (long long)s->low.rank);
    vr_buf_printf(&detail,
                  "Across %d ranks, rank %lld (%s) peaked at %s allocated and rank %lld (%s) at "
                  "%s: %s apart, more than %d %% of the largest peak. The ranks do unequal "
                  "work (uneven sharding, data or pipeline stages).",
                  s->ranks, (long long)s->high.rank, s->high.label, sz(s->high.peak_allocated).s,
                  (long long)s->low.rank, s->low.label, sz(s->low.peak_allocated).s, sz(gap).s,
                  IMBALANCE_PERMILLE / 10);
    vr_buf_printf(&data,
                  "{\"highest_peak_bytes\": {\"value\": %lld, \"source\": \"timeline\"}, "
                  "\"highest_rank\": {\"value\": %lld, \"source\": \"timeline\"}, "
                  "\"lowest_peak_bytes\": {\"value\": %lld, \"source\": \"timeline\"}, "
                  "\"lowest_rank\": {\"value\": %lld, \"source\": \"timeline\"}}",
                  (long long)s->high.peak_allocated, (long long)s->high.rank,
                  (long long)s->low.peak_allocated, (long long)s->low.rank);
    finding_row r = {1,
                     s->high.has_ts,
                     0,
                     s->high.device_id,
                     s->high.ts_ns,
                     s->high.rank,
                     0,
                     "rank-imbalance",
                     "warning",
                     "high",
                     NULL,
                     NULL,
                     NULL,
                     "[]"};
    return insert_texts(db, &r, &title, &detail, &data, err);
}

/* Each device's peak row into the ranks' spread, diagnosed on the way
 * when `diagnose`; then the rank-imbalance finding over them. */
static int over_peaks(vr_db *db, int diagnose, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "diagnose_peaks", err);
    if (!st)
        return -1;
    rank_spread spread = {0};
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        peak_row p;
        read_peak(st, &p);
        spread_add(&spread, &p);
        if (diagnose && diagnose_peak(db, &p, err) < 0) {
            sqlite3_reset(st);
            free(spread.by_rank);
            return -1;
        }
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        free(spread.by_rank);
        return vr_db_fail(db, err, "reading device peaks");
    }
    return write_imbalance(db, &spread, err);
}

static int diagnose_peaks(vr_db *db, vr_error *err)
{
    return over_peaks(db, 1, err);
}

/*-*** findings of one row each ***/

/* fn(db, st) for each row of an analyze.sql block: a finding per row. */
typedef int (*row_fn)(vr_db *db, sqlite3_stmt *st, vr_error *err);

static int each_row(vr_db *db, const char *block, row_fn fn, const char *what, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, block, err);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (fn(db, st, err) < 0) {
            sqlite3_reset(st);
            return -1;
        }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, what);
}

/*-*** allocator dumps' peaks against --capacity ***/

/* A memory_stats() / memory_summary() dump names no device and states no
 * capacity: its peaks are judged only against the capacity the user gave,
 * as a device's are (near-capacity at 90 %). */
static int dump_peak_row(vr_db *db, sqlite3_stmt *st, vr_error *err)
{
    peak_row p;
    memset(&p, 0, sizeof p);
    p.no_device = 1;
    p.rank = -1;
    copy_text(p.label, sizeof p.label, st, 0);
    p.peak_allocated = sqlite3_column_int64(st, 1);
    p.peak_reserved = sqlite3_column_int64(st, 2);
    p.capacity = sqlite3_column_int64(st, 3);
    p.has_capacity = 1;
    p.capacity_from = "--capacity";
    p.peak_from = (const char *)sqlite3_column_text(st, 4);
    if (!p.peak_from || strcmp(p.peak_from, "memory_summary") != 0)
        p.peak_from = "memory_stats";
    return write_near_capacity(db, &p, err);
}

/*-*** readings at or near full without an OOM ***/

/* A GPU the bound pass called capacity-bound (memory at 90 % of its total
 * or more in a tenth of the readings) with no OOM and no near-capacity
 * finding from a peak of its device: the readings are the grounds, so the
 * verdict agrees with the body (AT RISK, and --fail-on sees it). */
typedef struct {
    int has_device, has_max;
    int64_t device_id, rank, capacity, full, readings, max_used;
    char label[64], name[96];
} full_gpu;

static void read_full_gpu(sqlite3_stmt *st, full_gpu *g)
{
    memset(g, 0, sizeof *g);
    g->has_device = sqlite3_column_type(st, 0) != SQLITE_NULL;
    g->device_id = sqlite3_column_int64(st, 0);
    copy_text(g->label, sizeof g->label, st, 1);
    g->rank = sqlite3_column_int64(st, 2);
    g->capacity = sqlite3_column_int64(st, 3);
    g->full = sqlite3_column_int64(st, 4);
    g->readings = sqlite3_column_int64(st, 5);
    g->has_max = sqlite3_column_type(st, 6) != SQLITE_NULL;
    g->max_used = sqlite3_column_int64(st, 6);
    copy_text(g->name, sizeof g->name, st, 7);
}

static int write_full_gpu(vr_db *db, const full_gpu *g, vr_error *err)
{
    vr_buf title = VR_BUF_INIT, detail = VR_BUF_INIT, data = VR_BUF_INIT;
    vr_buf_printf(&title, "%s was at %d %% of its memory or more in %lld of %lld readings",
                  g->label, NEAR_CAPACITY_PERMILLE / 10, (long long)g->full,
                  (long long)g->readings);
    vr_buf_printf(&detail,
                  "The monitoring readings of %s%s%s%s show %s used at most, of %s, and at "
                  "least %d %% of it in %lld of the %lld readings taken while the job held "
                  "memory: no out-of-memory error is recorded, but the job had no room to "
                  "grow. \"Used\" counts the CUDA context and what the caching allocator "
                  "keeps as well as the tensors, and readings seconds apart miss the peak "
                  "itself: a memory snapshot or a trace with profile_memory=True says what "
                  "filled it.",
                  g->label, g->name[0] ? " (" : "", g->name, g->name[0] ? ")" : "",
                  sz(g->has_max ? g->max_used : 0).s, sz(g->capacity).s,
                  NEAR_CAPACITY_PERMILLE / 10, (long long)g->full, (long long)g->readings);
    vr_buf_printf(&data,
                  "{\"nvidia_smi_used_bytes\": {\"value\": %lld, \"source\": \"nvidia-smi\"}, "
                  "\"capacity_bytes\": {\"value\": %lld, \"source\": \"nvidia-smi\"}, "
                  "\"full_readings\": {\"value\": %lld, \"source\": \"nvidia-smi\"}, "
                  "\"readings\": {\"value\": %lld, \"source\": \"nvidia-smi\"}}",
                  (long long)(g->has_max ? g->max_used : 0), (long long)g->capacity,
                  (long long)g->full, (long long)g->readings);
    finding_row r = {g->has_device,   0,         0,        g->device_id, 0,    g->rank, 0,
                     "near-capacity", "warning", "medium", NULL,         NULL, NULL,    "[]"};
    return insert_texts(db, &r, &title, &detail, &data, err);
}

static int full_gpu_row(vr_db *db, sqlite3_stmt *st, vr_error *err)
{
    full_gpu g;
    read_full_gpu(st, &g);
    return write_full_gpu(db, &g, err);
}

/*-*** suspect input ***/

/* Figures that cannot both be true are flagged, never read as fact: an
 * informational finding `suspect-input` (the verdict draws no OK from
 * inputs that contradict themselves). The table: each contradiction's
 * words, "a" the figure that should not exceed "b". */
static const struct {
    const char *what, *title, *a_is, *b_is, *why;
} suspects[] = {
    {"used-above-total", "%s: memory used above the GPU's total in %lld reading%s", "used",
     "total",
     "A GPU cannot use more memory than it has: the readings are of another GPU than "
     "their total says, or a tool's units are mixed. Their figures are not used as "
     "evidence of fullness."},
    {"allocated-above-reserved", "%s: peak allocated above peak reserved%.0lld%s", "allocated",
     "reserved",
     "The caching allocator's tensors live in the memory it reserved: a record whose "
     "allocated exceeds its reserved is cut or mixes two runs."},
    {"reserved-above-capacity", "%s: peak reserved above the GPU's capacity%.0lld%s", "reserved",
     "capacity",
     "A GPU cannot hold more than it has: the capacity is of another GPU or run than the "
     "peak (two jobs' files in one folder, or a log of another machine). The peak's share "
     "of it is not shown."},
    {"oom-allocated-above-reserved", "%s: an OOM message with allocated above reserved%.0lld%s",
     "allocated", "reserved",
     "PyTorch's message prints reserved as at least allocated: the message was edited or "
     "wrapped by another tool."},
    /* a trace's Memcpy and Memset kernels both count as copies */
    {"copy-above-peak", "%s: a copy or memset faster than the GPU's peak bandwidth%.0lld%s",
     "the rate", "the peak",
     "No copy or memset outruns the memory's peak: the trace's durations are too short (a "
     "clock of coarse ticks) or the GPU is another model than its name says."},
};

static int write_suspect(vr_db *db, sqlite3_stmt *st, vr_error *err)
{
    const char *what = (const char *)sqlite3_column_text(st, 2);
    char label[64], about[200];
    copy_text(label, sizeof label, st, 1);
    copy_text(about, sizeof about, st, 6);
    int64_t a = sqlite3_column_int64(st, 3), b = sqlite3_column_int64(st, 4);
    long long n = sqlite3_column_int64(st, 5);
    for (size_t i = 0; what && i < sizeof suspects / sizeof *suspects; i++) {
        if (strcmp(what, suspects[i].what) != 0)
            continue;
        int bytes = strcmp(what, "copy-above-peak") != 0;
        vr_buf title = VR_BUF_INIT, detail = VR_BUF_INIT, data = VR_BUF_INIT;
        int many = i == 0;
        vr_buf_printf(&title, suspects[i].title, label, many ? n : 0LL,
                      many && n != 1 ? "s" : "");
        if (bytes)
            vr_buf_printf(&detail, "%s %s against %s %s", suspects[i].a_is, sz(a).s,
                          suspects[i].b_is, sz(b).s);
        else
            vr_buf_printf(&detail, "%s %.0f GB/s against %s %.0f GB/s", suspects[i].a_is,
                          (double)a / 1e9, suspects[i].b_is, (double)b / 1e9);
        vr_buf_printf(&detail, "%s%s%s. %s", about[0] ? " (" : "", about, about[0] ? ")" : "",
                      suspects[i].why);
        vr_buf_printf(&data,
                      "{\"contradiction\": {\"value\": \"%s\", \"source\": \"derived\"}, "
                      "\"figure\": {\"value\": %lld, \"source\": \"input\"}, "
                      "\"bound\": {\"value\": %lld, \"source\": \"input\"}}",
                      what, (long long)a, (long long)b);
        finding_row r = {sqlite3_column_type(st, 0) != SQLITE_NULL,
                         0,
                         0,
                         sqlite3_column_int64(st, 0),
                         0,
                         -1,
                         0,
                         "suspect-input",
                         "info",
                         "high",
                         NULL,
                         NULL,
                         NULL,
                         "[]"};
        return insert_texts(db, &r, &title, &detail, &data, err);
    }
    return 0;
}


/*-*** leaks the job's prints show without an OOM ***/

/* A log's prints of one rank and device (diagnose_print_groups). */
typedef struct {
    int64_t source_id, rank, device_id, ts_ns;
    int has_rank, has_device, has_ts;
    char label[64];
} print_group;

static void read_print_group(sqlite3_stmt *st, print_group *g)
{
    memset(g, 0, sizeof *g);
    g->source_id = sqlite3_column_int64(st, 0);
    g->has_rank = sqlite3_column_type(st, 1) != SQLITE_NULL;
    g->rank = g->has_rank ? sqlite3_column_int64(st, 1) : -1;
    g->has_device = sqlite3_column_type(st, 2) != SQLITE_NULL;
    g->device_id = sqlite3_column_int64(st, 2);
    g->has_ts = sqlite3_column_type(st, 4) != SQLITE_NULL;
    g->ts_ns = sqlite3_column_int64(st, 4);
    if (g->has_device && sqlite3_column_type(st, 3) != SQLITE_NULL)
        copy_text(g->label, sizeof g->label, st, 3);
    else if (g->has_rank)
        snprintf(g->label, sizeof g->label, "Rank %lld", (long long)g->rank);
    else
        snprintf(g->label, sizeof g->label, "The job");
}

static int write_print_leak(vr_db *db, const print_group *g, const leak_run *l, vr_error *err)
{
    leak_place at = {g->has_device, g->has_ts, g->device_id, g->ts_ns, g->rank, g->label};
    return write_leak_finding(db, &at, &print_leak, l, l->stepped ? "step" : "print", err);
}

/* Where a print row's group (source, rank, device; NULL first, as SQL
 * orders them) stands against group g: <0 before it, 0 in it, >0 after. */
static int group_order(sqlite3_stmt *st, const print_group *g)
{
    int64_t source = sqlite3_column_int64(st, 4);
    if (source != g->source_id)
        return source < g->source_id ? -1 : 1;
    int has_rank = sqlite3_column_type(st, 5) != SQLITE_NULL;
    int64_t rank = sqlite3_column_int64(st, 5);
    if (has_rank != g->has_rank || (has_rank && rank != g->rank))
        return has_rank < g->has_rank || (has_rank == g->has_rank && rank < g->rank) ? -1 : 1;
    int has_device = sqlite3_column_type(st, 6) != SQLITE_NULL;
    int64_t device = sqlite3_column_int64(st, 6);
    if (has_device != g->has_device || (has_device && device != g->device_id))
        return has_device < g->has_device ||
                       (has_device == g->has_device && device < g->device_id)
                   ? -1
                   : 1;
    return 0;
}

/* The leak rule over every group's prints in one read of memory_print
 * (diagnose_all_group_print_steps, in the groups' order): a group's
 * finding is written when its rows end. Rows of no group (an OOM's, or
 * a device's whose timeline found the leak) are passed over. */
static int scan_groups(vr_db *db, const print_group *groups, size_t n, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "diagnose_all_group_print_steps", err);
    if (!st)
        return -1;
    size_t gi = 0;
    int open = 0, rc, out = 0;
    series_scan s;
    leak_run leak;
    while (out == 0 && gi < n && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int order = 0;
        while (gi < n && (order = group_order(st, &groups[gi])) > 0) {
            if (open) {
                series_end(&s, &leak);
                out = leak.found ? write_print_leak(db, &groups[gi], &leak, err) : 0;
            }
            open = 0;
            gi++;
        }
        if (out < 0 || gi == n || order < 0)
            continue;
        if (!open) {
            memset(&s, 0, sizeof s);
            memset(&leak, 0, sizeof leak);
            open = 1;
        }
        series_row(&s, &leak, (const char *)sqlite3_column_text(st, 0),
                   sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
                   sqlite3_column_int(st, 3));
    }
    if (out == 0 && gi < n && rc != SQLITE_DONE)
        out = vr_db_fail(db, err, "reading memory prints");
    sqlite3_reset(st);
    if (out == 0 && open) {
        series_end(&s, &leak);
        out = leak.found ? write_print_leak(db, &groups[gi], &leak, err) : 0;
    }
    return out;
}

/* After the peaks: a group whose device's timeline found the leak is
 * left to that finding (diagnose_print_groups). The groups are read
 * whole first, as writing a finding changes what the query reads. */
static int diagnose_print_leaks(vr_db *db, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "diagnose_print_groups", err);
    if (!st)
        return -1;
    print_group *groups = NULL;
    size_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_xgrow(&groups, &cap, n + 1, sizeof *groups, 8);
        read_print_group(st, &groups[n++]);
    }
    sqlite3_reset(st);
    int out = rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading memory print groups");
    if (out == 0 && n)
        out = scan_groups(db, groups, n, err);
    free(groups);
    return out;
}

/* Every kind a finding can have (docs/diagnosis.md), for --fail-on. */
const char *const vr_analyze_finding_kinds[] = {
    "fragmentation",  "other-process",         "leak",          "oversized-request",
    "inconsistent",   "insufficient-evidence", "capacity",      "near-capacity",
    "rank-imbalance", "device-imbalance",      "suspect-input", NULL,
};

int vr_analyze_count_findings(vr_db *db, const char *kinds, int64_t *count, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "count_findings", err);
    if (!st)
        return -1;
    if (vr_db_bind_text(st, ":kinds", kinds, strlen(kinds), err) < 0)
        return -1;
    int rc = sqlite3_step(st);
    *count = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : vr_db_fail(db, err, "counting findings");
}

int vr_analyze_rank_imbalance(vr_db *db, vr_error *err)
{
    if (vr_db_exec_named(db, sql, "clear_rank_imbalance", err) < 0)
        return -1;
    return over_peaks(db, 0, err);
}

int vr_analyze_diagnose(vr_db *db, vr_error *err)
{
    if (diagnose_ooms(db, err) < 0 || diagnose_peaks(db, err) < 0 ||
        each_row(db, "diagnose_dump_peaks", dump_peak_row, "reading allocator dumps' peaks",
                 err) < 0 ||
        each_row(db, "diagnose_full_readings", full_gpu_row, "reading full GPUs", err) < 0 ||
        each_row(db, "diagnose_suspect", write_suspect, "reading contradicting figures", err) <
            0 ||
        vr_analyze_device_imbalance(db, err) < 0)
        return -1;
    return diagnose_print_leaks(db, err);
}
