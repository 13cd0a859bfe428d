/*-*** bandwidth.c: bandwidth or capacity, the analysis pass `bound` (docs/bandwidth.md) ***/
/*
 * For each GPU of the job: was it short of memory (capacity-bound: an
 * out-of-memory error, or memory at 90% of capacity or more in at least a
 * tenth of the job's readings), waiting for work with memory to spare
 * (starved: median utilisation under 70%), or neither (fine); unknown
 * when fewer than three readings say the utilisation and nothing says
 * capacity. The
 * readings are nvidia-smi's and gpustat's (gpu_sample); the device's
 * memory type and peak bandwidth come from the one GPU table
 * (estimate.h, vr_estimate_gpu_match on the name the monitor or the trace
 * reports); a trace's memcpy/memset bytes and durations give the
 * throughput they achieved against that peak. Thresholds and why:
 * docs/bandwidth.md. This pass owns bandwidth_or_capacity (migration 14).
 */
#include "analyze/analyze.h"

#include "estimate/estimate.h"
#include "util/buf.h"
#include "util/sat.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char sql[] = "schemas/analyze.sql";

/* Memory is full at 90% of capacity: nvidia-smi's "used" includes the
 * CUDA context and what the caching allocator keeps, so a job that can
 * grow no further shows 90-99%. */
#define FULL_SHARE_OF_CAPACITY "90%%"
/* Capacity-bound when a tenth of the job's readings are full: the caching
 * allocator keeps what it reserved, so a job that filled the GPU shows it
 * full from then on; one stray reading is not a verdict. */
#define FULL_READINGS_MIN 0.10
/* Starved below a median of 70%: utilization.gpu is the share of the
 * sample period in which any kernel ran; a training step's own gaps
 * (optimizer, logging, a sync) cost a few percent, a third of the time
 * idle means the GPU waited on something else. */
#define STARVED_MEDIAN_PCT 70.0
/* Starved or fine takes a median of at least this many utilisation
 * readings: one reading (an `nvidia-smi -q` taken once) is a moment, and
 * a GPU between two kernels reads 0% in it. */
#define UTIL_READINGS_MIN 3
/* The fastest copy is chosen among those lasting 10 us or more: older
 * traces time to the microsecond, so a 2 us memset's rate is +-50%, and a
 * short one can sit in the L2 cache and beat the DRAM's peak. */
#define BEST_COPY_MIN_NS 10000

/*-*** a trace's copies and memsets, per device ***/

typedef struct {
    int64_t ops, bytes, busy_ns;
    int64_t open_start, open_end; /* the interval being merged */
} copy_sum;

typedef struct {
    int64_t device;
    copy_sum on_device, host;
    char *best_name; /* the fastest on-device one (BEST_COPY_MIN_NS), or NULL */
    int64_t best_bytes, best_ns;
    double best_rate;
} device_copies;

typedef struct {
    device_copies *v;
    size_t n, cap;
} copies;

static void close_interval(copy_sum *s)
{
    if (s->ops)
        s->busy_ns = vr_sat_add(s->busy_ns, s->open_end - s->open_start);
}

/* Rows come in time order per (device, host): the busy time is the union
 * of the intervals, so copies on two streams at once count once. */
static void add_copy(copy_sum *s, int64_t ts, int64_t dur, int64_t bytes)
{
    int64_t end = vr_sat_add(ts, dur);
    if (s->ops == 0 || ts > s->open_end) {
        close_interval(s);
        s->open_start = ts;
        s->open_end = end;
    } else if (end > s->open_end) {
        s->open_end = end;
    }
    s->ops++;
    s->bytes = vr_sat_add(s->bytes, bytes);
}

static void note_best(device_copies *d, sqlite3_stmt *st, int64_t dur, int64_t bytes)
{
    double rate = (double)bytes * 1e9 / (double)dur;
    if (dur < BEST_COPY_MIN_NS || (d->best_name && rate <= d->best_rate))
        return;
    const char *name = (const char *)sqlite3_column_text(st, 5);
    free(d->best_name);
    d->best_name = vr_xstrdup(name ? name : "");
    d->best_bytes = bytes;
    d->best_ns = dur;
    d->best_rate = rate;
}

static device_copies *copies_for(copies *c, int64_t device)
{
    if (c->n && c->v[c->n - 1].device == device)
        return &c->v[c->n - 1];
    vr_xgrow(&c->v, &c->cap, c->n + 1, sizeof *c->v, 8);
    device_copies *d = &c->v[c->n++];
    memset(d, 0, sizeof *d);
    d->device = device;
    return d;
}

static void copies_free(copies *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].best_name);
    free(c->v);
}

static copy_sum *group_of(device_copies *d, int host)
{
    return host ? &d->host : &d->on_device;
}

static int read_copies(vr_db *db, copies *c, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "bound_copies", err);
    if (!st)
        return -1;
    int rc, last_host = 0;
    int64_t last_device = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t device = sqlite3_column_int64(st, 0);
        int host = sqlite3_column_int(st, 1);
        /* A group ends where the next begins; closed before copies_for()
         * may move the array. */
        if (c->n && (device != last_device || host != last_host))
            close_interval(group_of(&c->v[c->n - 1], last_host));
        device_copies *d = copies_for(c, device);
        int64_t ts = sqlite3_column_int64(st, 2), dur = sqlite3_column_int64(st, 3);
        int64_t bytes = sqlite3_column_int64(st, 4);
        add_copy(group_of(d, host), ts, dur, bytes);
        if (!host)
            note_best(d, st, dur, bytes);
        last_device = device;
        last_host = host;
    }
    if (c->n)
        close_interval(group_of(&c->v[c->n - 1], last_host));
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading the trace's copies");
}

static const device_copies *find_copies(const copies *c, int has_device, int64_t device)
{
    for (size_t i = 0; has_device && i < c->n; i++)
        if (c->v[i].device == device)
            return &c->v[i];
    return NULL;
}

/*-*** one GPU ***/

typedef struct {
    int has_gpu, has_device, has_idx, has_capacity;
    int64_t gpu, device, idx, capacity, offset_ns, gpus_alike;
    const char *name;
    /* The readings. */
    int64_t readings, memory_readings, full_readings, util_readings, ooms;
    int has_max_share, has_first;
    double max_share, util_mean, util_median, full_share;
    int64_t first_ts, last_ts;
    const vr_estimate_gpu *spec;
    const char *verdict;
    char reason[256];
} subject;

static int bind_real(sqlite3_stmt *st, const char *name, int has, double v, vr_error *err)
{
    return has && isfinite(v) ? vr_db_bind_double(st, name, v, err)
                              : vr_db_bind_null(st, name, err);
}

static int read_readings(vr_db *db, subject *s, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "bound_readings", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":gpu", s->gpu, err) < 0 ||
        vr_db_bind_opt_int(st, ":capacity", s->has_capacity, s->capacity, err) < 0 ||
        vr_db_bind_int(st, ":offset", s->offset_ns, err) < 0)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        s->readings = sqlite3_column_int64(st, 0);
        s->memory_readings = sqlite3_column_int64(st, 1);
        s->full_readings = sqlite3_column_int64(st, 2);
        s->has_max_share = sqlite3_column_type(st, 3) != SQLITE_NULL;
        s->max_share = sqlite3_column_double(st, 3);
        s->util_readings = sqlite3_column_int64(st, 4);
        s->util_mean = sqlite3_column_double(st, 5);
        s->has_first = sqlite3_column_type(st, 6) != SQLITE_NULL;
        s->first_ts = sqlite3_column_int64(st, 6);
        s->last_ts = sqlite3_column_int64(st, 7);
    }
    sqlite3_reset(st);
    if (s->memory_readings)
        s->full_share = (double)s->full_readings / (double)s->memory_readings;
    if (!s->util_readings)
        return 0;
    st = vr_db_stmt(db, sql, "bound_util_median", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":gpu", s->gpu, err) < 0 ||
        vr_db_bind_opt_int(st, ":capacity", s->has_capacity, s->capacity, err) < 0 ||
        vr_db_bind_int(st, ":n", s->util_readings, err) < 0)
        return -1;
    int rc = sqlite3_step(st);
    s->util_median = rc == SQLITE_ROW ? sqlite3_column_double(st, 0) : 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : vr_db_fail(db, err, "reading a GPU's utilisation");
}

static int count_ooms(vr_db *db, subject *s, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "bound_ooms", err);
    if (!st)
        return -1;
    if (vr_db_bind_opt_int(st, ":device", s->has_device, s->device, err) < 0 ||
        vr_db_bind_opt_int(st, ":gpu", s->has_gpu, s->gpu, err) < 0 ||
        vr_db_bind_opt_int(st, ":idx", s->has_idx, s->idx, err) < 0 ||
        vr_db_bind_int(st, ":alike", s->gpus_alike, err) < 0 ||
        vr_db_bind_opt_int(st, ":first", s->has_first, s->first_ts, err) < 0 ||
        vr_db_bind_opt_int(st, ":last", s->has_first, s->last_ts, err) < 0)
        return -1;
    int rc = sqlite3_step(st);
    s->ooms = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : vr_db_fail(db, err, "counting a GPU's out-of-memory errors");
}

/* The verdict and its sentence, from the figures read. */
static void judge(subject *s)
{
    int full = s->memory_readings > 0 && s->full_share >= FULL_READINGS_MIN;
    char room[64] = "";
    if (s->has_max_share)
        snprintf(room, sizeof room, " (at most %.0f%% used)", s->max_share * 100.0);
    if (s->ooms > 0 || full) {
        s->verdict = "capacity-bound";
        int n = s->ooms > 0 ? snprintf(s->reason, sizeof s->reason, "%lld out-of-memory error%s",
                                       (long long)s->ooms, s->ooms == 1 ? "" : "s")
                            : 0;
        if (full)
            snprintf(s->reason + n, sizeof s->reason - (size_t)n,
                     "%smemory at " FULL_SHARE_OF_CAPACITY " of capacity or more in %.0f%% of "
                     "the job's readings (%lld of %lld)",
                     n ? "; " : "", s->full_share * 100.0, (long long)s->full_readings,
                     (long long)s->memory_readings);
    } else if (!s->util_readings) {
        s->verdict = "unknown";
        snprintf(s->reason, sizeof s->reason, "%s",
                 s->has_gpu ? "no utilisation readings while the job held memory, and memory "
                              "never near full"
                            : "no nvidia-smi or gpustat readings of this device, and no "
                              "out-of-memory error");
    } else if (s->util_readings < UTIL_READINGS_MIN) {
        s->verdict = "unknown";
        snprintf(s->reason, sizeof s->reason,
                 "%lld utilisation reading%s (%.0f%%): too few to tell a busy GPU from one "
                 "waiting, and memory never near full",
                 (long long)s->util_readings, s->util_readings == 1 ? "" : "s", s->util_median);
    } else if (s->util_median < STARVED_MEDIAN_PCT) {
        s->verdict = "starved";
        snprintf(s->reason, sizeof s->reason,
                 "median utilisation %.0f%% (under %.0f%%) while memory had room%s",
                 s->util_median, STARVED_MEDIAN_PCT, room);
    } else {
        s->verdict = "fine";
        snprintf(s->reason, sizeof s->reason, "median utilisation %.0f%%, memory short of full%s",
                 s->util_median, room);
    }
}

static int bind_rate(sqlite3_stmt *st, const char *rate, const char *share, int64_t bytes,
                     int64_t ns, const vr_estimate_gpu *spec, vr_error *err)
{
    double r = ns > 0 ? (double)bytes * 1e9 / (double)ns : 0;
    return vr_db_bind_opt_int(st, rate, ns > 0, vr_sat_from_double(round(r)), err) < 0 ||
                   (share &&
                    bind_real(st, share, ns > 0 && spec && spec->bandwidth > 0,
                              round(r / (spec ? (double)spec->bandwidth : 1) * 1e4) / 1e4,
                              err) < 0)
               ? -1
               : 0;
}

static int bind_copies(sqlite3_stmt *st, const device_copies *c, const vr_estimate_gpu *spec,
                       vr_error *err)
{
    const copy_sum *d = c ? &c->on_device : NULL, *h = c ? &c->host : NULL;
    int on = d && d->ops > 0, host = h && h->ops > 0;
    int best = on && c->best_name;
    return vr_db_bind_int(st, ":copy_ops", on ? d->ops : 0, err) < 0 ||
                   vr_db_bind_opt_int(st, ":copy_bytes", on, on ? d->bytes : 0, err) < 0 ||
                   vr_db_bind_opt_int(st, ":copy_busy", on, on ? d->busy_ns : 0, err) < 0 ||
                   bind_rate(st, ":copy_rate", ":copy_share", on ? d->bytes : 0,
                             on ? d->busy_ns : 0, spec, err) < 0 ||
                   (best ? vr_db_bind_text(st, ":best_name", c->best_name, strlen(c->best_name),
                                           err)
                         : vr_db_bind_null(st, ":best_name", err)) < 0 ||
                   vr_db_bind_opt_int(st, ":best_bytes", best, best ? c->best_bytes : 0, err) <
                       0 ||
                   vr_db_bind_opt_int(st, ":best_ns", best, best ? c->best_ns : 0, err) < 0 ||
                   bind_rate(st, ":best_rate", ":best_share", best ? c->best_bytes : 0,
                             best ? c->best_ns : 0, spec, err) < 0 ||
                   vr_db_bind_int(st, ":host_ops", host ? h->ops : 0, err) < 0 ||
                   vr_db_bind_opt_int(st, ":host_bytes", host, host ? h->bytes : 0, err) < 0 ||
                   vr_db_bind_opt_int(st, ":host_busy", host, host ? h->busy_ns : 0, err) < 0 ||
                   bind_rate(st, ":host_rate", NULL, host ? h->bytes : 0, host ? h->busy_ns : 0,
                             spec, err) < 0
               ? -1
               : 0;
}

static int insert_subject(vr_db *db, const subject *s, const device_copies *c, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "insert_bound", err);
    if (!st)
        return -1;
    const vr_estimate_gpu *g = s->spec;
    if (vr_db_bind_opt_int(st, ":gpu", s->has_gpu, s->gpu, err) < 0 ||
        vr_db_bind_opt_int(st, ":device", s->has_device, s->device, err) < 0 ||
        (s->name ? vr_db_bind_text(st, ":name", s->name, strlen(s->name), err)
                 : vr_db_bind_null(st, ":name", err)) < 0 ||
        (g ? vr_db_bind_text(st, ":spec", g->name, strlen(g->name), err)
           : vr_db_bind_null(st, ":spec", err)) < 0 ||
        (g ? vr_db_bind_text(st, ":memory_type", g->memory_type, strlen(g->memory_type), err)
           : vr_db_bind_null(st, ":memory_type", err)) < 0 ||
        vr_db_bind_opt_int(st, ":bandwidth", g != NULL, g ? g->bandwidth : 0, err) < 0 ||
        vr_db_bind_opt_int(st, ":spec_capacity", g != NULL, g ? g->capacity : 0, err) < 0 ||
        vr_db_bind_opt_int(st, ":capacity", s->has_capacity, s->capacity, err) < 0 ||
        vr_db_bind_int(st, ":readings", s->readings, err) < 0 ||
        vr_db_bind_int(st, ":memory_readings", s->memory_readings, err) < 0 ||
        vr_db_bind_int(st, ":full_readings", s->full_readings, err) < 0 ||
        bind_real(st, ":full_share", s->memory_readings > 0, round(s->full_share * 1e4) / 1e4,
                  err) < 0 ||
        bind_real(st, ":max_share", s->has_max_share, round(s->max_share * 1e4) / 1e4, err) < 0 ||
        vr_db_bind_int(st, ":util_readings", s->util_readings, err) < 0 ||
        bind_real(st, ":util_median", s->util_readings > 0, s->util_median, err) < 0 ||
        bind_real(st, ":util_mean", s->util_readings > 0, round(s->util_mean * 100) / 100, err) <
            0 ||
        vr_db_bind_int(st, ":ooms", s->ooms, err) < 0 ||
        vr_db_bind_text(st, ":verdict", s->verdict, strlen(s->verdict), err) < 0 ||
        vr_db_bind_text(st, ":reason", s->reason, strlen(s->reason), err) < 0 ||
        bind_copies(st, c, g, err) < 0)
        return -1;
    return vr_db_step_done(db, st, err);
}

static int opt_col(sqlite3_stmt *st, int col, int64_t *out)
{
    *out = sqlite3_column_int64(st, col);
    return sqlite3_column_type(st, col) != SQLITE_NULL;
}

static int judge_row(vr_db *db, sqlite3_stmt *subjects, const copies *c, vr_error *err)
{
    subject s;
    memset(&s, 0, sizeof s);
    s.has_gpu = opt_col(subjects, 0, &s.gpu);
    s.has_device = opt_col(subjects, 1, &s.device);
    s.name = (const char *)sqlite3_column_text(subjects, 2);
    s.has_capacity = opt_col(subjects, 3, &s.capacity) && s.capacity > 0;
    s.has_idx = opt_col(subjects, 4, &s.idx);
    s.offset_ns = sqlite3_column_int64(subjects, 5);
    s.gpus_alike = sqlite3_column_int64(subjects, 6);
    s.spec = vr_estimate_gpu_match(s.name);
    if ((s.has_gpu && read_readings(db, &s, err) < 0) || count_ooms(db, &s, err) < 0)
        return -1;
    /* A trace's device alone is judged only with something to show: its
     * copies or an OOM (every trace names its GPU; a row saying "unknown"
     * for each would only be noise). */
    const device_copies *dc = find_copies(c, s.has_device, s.device);
    if (!s.has_gpu && !dc && s.ooms == 0)
        return 0;
    judge(&s);
    return insert_subject(db, &s, dc, err);
}

int vr_analyze_bandwidth(vr_db *db, vr_error *err)
{
    copies c = {0};
    sqlite3_stmt *st = NULL;
    int rc = read_copies(db, &c, err);
    if (rc == 0 && !(st = vr_db_stmt(db, sql, "bound_subjects", err)))
        rc = -1;
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = judge_row(db, st, &c, err);
    if (rc == 0 && step != SQLITE_DONE)
        rc = vr_db_fail(db, err, "reading the GPUs to judge");
    if (st)
        sqlite3_reset(st);
    copies_free(&c);
    return rc;
}
