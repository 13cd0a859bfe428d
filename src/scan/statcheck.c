/* Allocator statistics that cannot be (statcheck.h). */
#include "scan/statcheck.h"

#include <stdio.h>
#include <string.h>

/* memory_stats()'s metrics (the first part of a key): each counts
 * something, so none is below 0. Sizes are those ending in "_bytes". */
static const char *const counted_metrics[] = {
    "allocated_bytes",
    "active_bytes",
    "requested_bytes",
    "reserved_bytes",
    "inactive_split_bytes",
    "allocation",
    "active",
    "segment",
    "inactive_split",
    "oversize_allocations",
    "oversize_segments",
};

/* Top-level counts of events ("num_ooms", "num_alloc_retries", ...). */
static const char count_prefix[] = "num_";

static int metric_is(const char *key, size_t len, const char *name)
{
    return strlen(name) == len && memcmp(key, name, len) == 0;
}

static int counted(const char *key, size_t metric_len)
{
    if (strncmp(key, count_prefix, sizeof count_prefix - 1) == 0)
        return 1;
    for (size_t i = 0; i < sizeof counted_metrics / sizeof *counted_metrics; i++)
        if (metric_is(key, metric_len, counted_metrics[i]))
            return 1;
    return 0;
}

/* "x.all.current", "x.large_pool.peak", "x.current": a figure of memory
 * held at one time (the cumulative "allocated" and "freed" are not: a
 * long job allocates far more than any GPU holds). */
static int held_figure(const char *key)
{
    const char *last = strrchr(key, '.');
    return last && (strcmp(last, ".current") == 0 || strcmp(last, ".peak") == 0);
}

static int is_size(const char *key, size_t metric_len)
{
    static const char suffix[] = "_bytes";
    size_t n = sizeof suffix - 1;
    return metric_len > n && memcmp(key + metric_len - n, suffix, n) == 0;
}

const char *vr_stat_impossible(const char *key, int64_t value)
{
    const char *dot = strchr(key, '.');
    size_t metric_len = dot ? (size_t)(dot - key) : strlen(key);
    if (!counted(key, metric_len))
        return NULL;
    if (value < 0)
        return "below 0";
    if (is_size(key, metric_len) && held_figure(key) && value > VR_STAT_MAX_BYTES)
        return "over 1 PiB, more than any GPU holds";
    return NULL;
}

const char *vr_stat_impossible_change(int64_t delta)
{
    return delta < -VR_STAT_MAX_BYTES || delta > VR_STAT_MAX_BYTES
               ? "over 1 PiB either way, more than any GPU holds"
               : NULL;
}

void vr_stat_bad_note(vr_stat_bad *bad, const char *key, int64_t value, const char *why,
                      uint64_t where)
{
    if (bad->count++)
        return;
    snprintf(bad->key, sizeof bad->key, "%s", key);
    snprintf(bad->why, sizeof bad->why, "%s", why);
    bad->value = value;
    bad->where = where;
}

void vr_stat_bad_warn(const vr_stat_bad *bad, const vr_warner *w, const char *path,
                      const char *unit)
{
    if (!bad->count)
        return;
    char where[48] = "";
    if (bad->where)
        snprintf(where, sizeof where, " %s %llu:", unit, (unsigned long long)bad->where);
    vr_warn(w,
            "%s:%s %s %lld is impossible (%s): not read (%llu such figure%s, counted as "
            "malformed)",
            path, where, bad->key, (long long)bad->value, bad->why,
            (unsigned long long)bad->count, bad->count == 1 ? "" : "s");
}

/*-*** allocated against reserved ***/

static const char *const pair_metrics[] = {"allocated_bytes", "reserved_bytes"};
static const char *const pair_pools[] = {"all", "large_pool", "small_pool"};
static const char *const pair_stats[] = {"current", "peak"};

static int index_of(const char *s, size_t len, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (metric_is(s, len, names[i]))
            return i;
    return -1;
}

/* The slot of "allocated_bytes.large_pool.peak"; NULL for other keys. */
static vr_stat_held *slot(vr_stat_pairs *p, const char *key)
{
    const char *a = strchr(key, '.'), *b = a ? strchr(a + 1, '.') : NULL;
    if (!b || strchr(b + 1, '.'))
        return NULL;
    int m = index_of(key, (size_t)(a - key), pair_metrics, 2);
    int pool = index_of(a + 1, (size_t)(b - a - 1), pair_pools, 3);
    int st = index_of(b + 1, strlen(b + 1), pair_stats, 2);
    return m < 0 || pool < 0 || st < 0 ? NULL : &p->v[m][pool][st];
}

int vr_stat_pairs_hold(vr_stat_pairs *p, const char *key, int64_t value, int64_t slack,
                       uint64_t where)
{
    vr_stat_held *h = slot(p, key);
    if (!h)
        return 0;
    *h = (vr_stat_held){value, slack, where, 1};
    return 1;
}

/* A box floors each cell to its unit, so reserved may be read up to its
 * slack (>= 0) low. The difference of allocated > reserved fits in 64
 * unsigned bits whatever the two are. */
int vr_stat_over_reserved(int64_t allocated, int64_t reserved, int64_t slack)
{
    return allocated > reserved && (uint64_t)allocated - (uint64_t)reserved >= (uint64_t)slack;
}

static int contradicts(const vr_stat_held *alloc, const vr_stat_held *res)
{
    return alloc->has && res->has && vr_stat_over_reserved(alloc->value, res->value, res->slack);
}

static int release_pair(vr_stat_pairs *p, int pool, int st, vr_stat_emit_fn emit, void *ud,
                        vr_stat_bad *bad, uint64_t *dropped, vr_error *err)
{
    vr_stat_held *alloc = &p->v[0][pool][st], *res = &p->v[1][pool][st];
    char key[64], other[64], why[96];
    if (contradicts(alloc, res)) {
        snprintf(key, sizeof key, "%s.%s.%s", pair_metrics[0], pair_pools[pool], pair_stats[st]);
        snprintf(other, sizeof other, "%s.%s.%s", pair_metrics[1], pair_pools[pool],
                 pair_stats[st]);
        snprintf(why, sizeof why, "over %s, %lld", other, (long long)res->value);
        vr_stat_bad_note(bad, key, alloc->value, why, alloc->where);
        bad->count++; /* the reserved figure, left out with it */
        *dropped += 2;
        return 0;
    }
    for (int m = 0; m < 2; m++) {
        if (!p->v[m][pool][st].has)
            continue;
        snprintf(key, sizeof key, "%s.%s.%s", pair_metrics[m], pair_pools[pool], pair_stats[st]);
        if (emit(ud, key, p->v[m][pool][st].value, err) < 0)
            return -1;
    }
    return 0;
}

int vr_stat_pairs_release(vr_stat_pairs *p, vr_stat_emit_fn emit, void *ud, vr_stat_bad *bad,
                          uint64_t *dropped, vr_error *err)
{
    int rc = 0;
    for (int pool = 0; pool < 3 && rc == 0; pool++)
        for (int st = 0; st < 2 && rc == 0; st++)
            rc = release_pair(p, pool, st, emit, ud, bad, dropped, err);
    memset(p, 0, sizeof *p);
    return rc;
}
