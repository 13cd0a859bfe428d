/* The snapshot replay pass: the allocator's layout at each `oom` entry of
 * a snapshot. It owns oom_fragmentation and oom_event.largest_free_block_bytes
 * of snapshot sources.
 *
 * A snapshot states the end (segments and their blocks) and the entries
 * that led there. Per source and device with an oom entry, the end state
 * is loaded into address-ordered maps (segments; blocks in use or waiting
 * to be freed) and the trace is walked BACKWARDS, newest first, undoing
 * each entry, down to the first oom: alloc -> the block is free again,
 * free_completed -> it is back (waiting to be freed), free_requested -> it
 * is allocated, segment_alloc / segment_map -> the range was not held,
 * segment_free / segment_unmap -> it was. At each oom the state is the
 * allocator's then. Free space is kept as runs between blocks inside a
 * segment (the allocator merges neighbouring free blocks, so a run is a
 * free block), in a map ordered by pool and stream, then size; each pool
 * and stream's largest is kept in a small map ordered by it, for the
 * overall largest. Every entry costs O(log live blocks) and memory is
 * what is live; only expandable segments' map/unmap re-walk their
 * segment's blocks. The end state's blocks are read as the table lists
 * them while their addresses rise (a snapshot lists them by address; a
 * sort cost more than the rest of the load), else again, sorted; the
 * free runs between them are made once they are all in.
 *
 * Exact, and what is approximate: everything after an oom is recorded, so
 * the walk back from the end needs nothing from before the ring buffer's
 * start (blocks already live then are in the end state and stay put).
 * Trace entries carry the requested size, not the block's: a block that
 * comes back (freed after the oom) is given its size rounded up to 512
 * bytes, the allocator's rounding without roundup_power2_divisions and
 * without the tail it keeps when the rest is too small to split. A
 * segment only the trace names (freed after the oom) has no pool id: it
 * is put in the default pools, small when it is 2 MiB. Entries the layout
 * cannot match (a free of an address not free, overlapping ranges) are
 * skipped and counted per oom (oom_fragmentation.unmatched_entries). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/hash.h"
#include "util/idmap.h"
#include "util/ordmap.h"
#include "util/sat.h"
#include "analyze/analyze.h"

static const char sql[] = "schemas/analyze.sql";

#define SMALL_REQUEST (1 << 20) /* kSmallSize: requests up to it use the small pool */
#define SMALL_SEGMENT (2 << 20) /* kSmallBuffer: the small pool's segments */
#define BLOCK_ROUND 512         /* kMinBlockSize: block sizes are multiples of it */
#define MAX_ROWS_PER_OOM 64     /* pools and streams written per oom, the request's first */
#define MAX_ACTION_CODE 64      /* trace_action codes read (0-9 today) */

/* Values of a segment entry (key: address). SEG_GROUP packs the pool
 * group and whether the segment is expandable: group * 2 + expandable.
 * SEG_LARGEST: its largest free run; SEG_NLARGEST: how many of its runs
 * have that size, -1 when not known (counted again at the next oom):
 * kept while the runs themselves are not (replay.exact_runs 0). */
enum { SEG_SIZE, SEG_GROUP, SEG_ACTIVE, SEG_BLOCKS, SEG_LARGEST, SEG_NLARGEST };
/* Values of a block entry (key: address). */
enum { BLK_SIZE, BLK_STATE, BLK_WASTE }; /* waste: size - requested */
enum { BLOCK_ALLOCATED = 1, BLOCK_PENDING = 2 };

/* A pool and stream and what its segments hold now. */
typedef struct {
    char pool[64]; /* "private " and two 64-bit numbers fit */
    int64_t stream;
    int has_stream;
    int64_t segments, expandable, reserved, active, split_free;
    int64_t largest;   /* the largest free run (0: none) */
    int64_t waste;     /* blocks in use: size - requested, summed */
    size_t active_pos; /* 1 + index in replay.active; 0: no segment */
} pool_group;

typedef struct {
    vr_db *db;
    vr_error *err;
    vr_ordmap segs, blocks;
    vr_ordmap gaps;    /* (group, size, address) of each free run */
    vr_ordmap largest; /* (largest free run, group) of each group with one */
    int exact_runs;    /* 1: gaps and largest are kept; 0: only each segment's largest */
    pool_group *groups;
    size_t ngroups, gcap;
    vr_idmap group_ids;   /* digest of (pool, stream) -> 1 + index */
    vr_idmap segment_ids; /* the device's segment rows: id -> 1 */
    size_t *active;       /* groups holding a segment now */
    size_t nactive, acap;
    pool_group all; /* every segment */
    int64_t unmatched;
    int64_t *ooms; /* oom_event ids of the device, oldest first */
    size_t nooms, ocap;
    size_t written, skip; /* OOMs of the device met so far; the first `skip` not written */
    unsigned char kinds[MAX_ACTION_CODE]; /* trace_action code -> undo_kind */
} replay;

/* What an entry does to the layout, walked backwards: an action's undo. */
typedef enum {
    DO_NOTHING,
    DO_OOM,
    DO_ALLOC,
    DO_FREE_REQUESTED,
    DO_FREE_COMPLETED,
    DO_SEGMENT_ALLOC,
    DO_SEGMENT_FREE,
    DO_SEGMENT_MAP,
    DO_SEGMENT_UNMAP
} undo_kind;

typedef struct {
    undo_kind kind;
    int64_t address, size, stream;
    int has_address, has_size, has_stream;
} trace_row;

/*-*** pools and streams ***/

static uint64_t group_digest(const char *pool, int64_t stream, int has_stream)
{
    vr_hash h;
    vr_hash_init(&h, 0x9001);
    vr_hash_update(&h, pool, strlen(pool));
    int64_t s[2] = {stream, has_stream};
    vr_hash_update(&h, s, sizeof s);
    return vr_hash_digest(&h);
}

static int group_is(const pool_group *g, const char *pool, int64_t stream, int has_stream)
{
    return g->has_stream == has_stream && (!has_stream || g->stream == stream) &&
           strcmp(g->pool, pool) == 0;
}

/* The index of (pool, stream), made on first use. */
static size_t group_of(replay *r, const char *pool, int64_t stream, int has_stream)
{
    uint64_t key = group_digest(pool, stream, has_stream);
    int64_t known = vr_idmap_get(&r->group_ids, key);
    if (known && group_is(&r->groups[known - 1], pool, stream, has_stream))
        return (size_t)(known - 1);
    for (size_t i = 0; known && i < r->ngroups; i++) /* a digest collision */
        if (group_is(&r->groups[i], pool, stream, has_stream))
            return i;
    vr_xgrow(&r->groups, &r->gcap, r->ngroups + 1, sizeof *r->groups, 8);
    pool_group *g = &r->groups[r->ngroups];
    memset(g, 0, sizeof *g);
    snprintf(g->pool, sizeof g->pool, "%s", pool);
    g->stream = stream;
    g->has_stream = has_stream;
    if (!known)
        vr_idmap_put(&r->group_ids, key, (int64_t)r->ngroups + 1);
    return r->ngroups++;
}

/* The default pool a segment of this size belongs to when nothing says. */
static const char *pool_by_segment_size(int64_t size)
{
    return size == SMALL_SEGMENT ? "small" : "large";
}

/* The pool the allocator looks in for a request of this size. */
static const char *pool_by_request(int64_t size)
{
    return size <= SMALL_REQUEST ? "small" : "large";
}

static void note_active(replay *r, size_t gi)
{
    pool_group *g = &r->groups[gi];
    if (g->segments > 0 && !g->active_pos) {
        vr_xgrow(&r->active, &r->acap, r->nactive + 1, sizeof *r->active, 8);
        r->active[r->nactive++] = gi;
        g->active_pos = r->nactive;
    } else if (g->segments <= 0 && g->active_pos) {
        size_t at = g->active_pos - 1, last = r->active[--r->nactive];
        r->active[at] = last;
        r->groups[last].active_pos = at + 1;
        g->active_pos = 0;
    }
}

static void add_to(pool_group *g, const vr_oentry *s, int sign)
{
    int64_t size = s->v[SEG_SIZE], active = s->v[SEG_ACTIVE];
    g->segments += sign;
    g->expandable += sign * (s->v[SEG_GROUP] & 1);
    g->reserved = vr_sat_add(g->reserved, vr_sat_mul(sign, size));
    g->active = vr_sat_add(g->active, vr_sat_mul(sign, active));
    if (s->v[SEG_BLOCKS] > 0) /* free space of a segment partly in use */
        g->split_free = vr_sat_add(g->split_free, vr_sat_mul(sign, vr_sat_sub(size, active)));
}

/* Adds (sign 1) or takes away (-1) a segment's figures from its group's. */
static void count_segment(replay *r, const vr_oentry *s, int sign)
{
    size_t gi = (size_t)(s->v[SEG_GROUP] >> 1);
    add_to(&r->groups[gi], s, sign);
    add_to(&r->all, s, sign);
    note_active(r, gi);
}

/* Segment s's bytes in use and block count become `active` and `blocks`:
 * what count_segment(s, -1), the change, then count_segment(s, 1) make
 * (every sum done as there, in its order, so even saturated figures are
 * the same; the group, when s is its only segment, moved to the end of
 * r->active), less the sums that cancel. A block comes or goes at almost
 * every entry. */
static void change_blocks(replay *r, vr_oentry *s, int64_t active, int64_t blocks)
{
    size_t gi = (size_t)(s->v[SEG_GROUP] >> 1);
    pool_group *both[2] = {&r->groups[gi], &r->all};
    int64_t size = s->v[SEG_SIZE];
    for (int i = 0; i < 2; i++) {
        pool_group *g = both[i];
        g->reserved = vr_sat_add(vr_sat_add(g->reserved, vr_sat_mul(-1, size)), size);
        g->active = vr_sat_add(vr_sat_add(g->active, vr_sat_mul(-1, s->v[SEG_ACTIVE])), active);
        if (s->v[SEG_BLOCKS] > 0)
            g->split_free =
                vr_sat_add(g->split_free, vr_sat_mul(-1, vr_sat_sub(size, s->v[SEG_ACTIVE])));
        if (blocks > 0)
            g->split_free = vr_sat_add(g->split_free, vr_sat_sub(size, active));
    }
    pool_group *g = both[0];
    if (g->segments == 1) {
        g->segments = 0;
        note_active(r, gi);
        g->segments = 1;
        note_active(r, gi);
    }
    s->v[SEG_ACTIVE] = active;
    s->v[SEG_BLOCKS] = blocks;
}

/*-*** free runs ***/

static int64_t largest_in(const replay *r, size_t gi)
{
    const vr_oentry *e =
        vr_ordmap_floor(&r->gaps, vr_okey3((int64_t)gi, INT64_MAX, INT64_MAX), 0);
    return e && e->key.k[0] == (int64_t)gi ? e->key.k[1] : 0;
}

static void set_largest(replay *r, int64_t group, int64_t size)
{
    static const int64_t none[VR_ORDMAP_VALUES];
    pool_group *g = &r->groups[group];
    if (g->largest == size)
        return;
    if (g->largest > 0)
        vr_ordmap_del(&r->largest, vr_okey3(g->largest, group, 0));
    if (size > 0)
        vr_ordmap_put(&r->largest, vr_okey3(size, group, 0), none);
    g->largest = size;
}

/* Adds (add 1) or takes away a free run [lo, hi) of a group's segment. */
static void gap(replay *r, int64_t group, int64_t lo, int64_t hi, int add)
{
    if (hi <= lo || !r->exact_runs)
        return;
    static const int64_t none[VR_ORDMAP_VALUES];
    int64_t size = vr_sat_sub(hi, lo);
    vr_okey k = vr_okey3(group, size, lo);
    if (add) {
        vr_ordmap_put(&r->gaps, k, none);
        if (size > r->groups[group].largest)
            set_largest(r, group, size);
    } else if (vr_ordmap_del(&r->gaps, k) && size == r->groups[group].largest) {
        set_largest(r, group, largest_in(r, (size_t)group));
    }
}

static int64_t seg_end(const vr_oentry *s)
{
    return vr_sat_add(s->key.k[0], s->v[SEG_SIZE]);
}

static int64_t block_end(const vr_oentry *b)
{
    return vr_sat_add(b->key.k[0], b->v[BLK_SIZE]);
}

/* The free run of segment s between blocks `below` and `above` (either
 * NULL: none): [*lo, *hi) from the end of the one below (or the segment's
 * start) to the one above (or the segment's end). */
static void run_between(const vr_oentry *s, const vr_oentry *below, const vr_oentry *above,
                        int64_t *lo, int64_t *hi)
{
    int64_t start = s->key.k[0], end = seg_end(s);
    *lo = below && block_end(below) > start ? block_end(below) : start;
    *hi = above && above->key.k[0] < end ? above->key.k[0] : end;
}

/* The free run around address a in segment s, a block at a aside:
 * [*lo, *hi), from the end of the block below (or the segment's start) to
 * the block above (or the segment's end). Returns the block at a, or
 * NULL. *lo is above a when the block below covers a. */
static vr_oentry *run_around(const replay *r, const vr_oentry *s, int64_t a, int64_t *lo,
                             int64_t *hi)
{
    vr_oentry *below, *above;
    vr_oentry *at = vr_ordmap_around(&r->blocks, vr_okey1(a), &below, &above);
    run_between(s, below, above, lo, hi);
    return at;
}

/* The segment holding address a, or NULL. */
static vr_oentry *segment_at(const replay *r, int64_t a)
{
    vr_oentry *s = vr_ordmap_floor(&r->segs, vr_okey1(a), 0);
    return s && a < seg_end(s) ? s : NULL;
}

/* Each segment's largest free run, while the runs are not kept: free
 * space only changes by a block cutting one run in two smaller ones, or
 * by a block going and its two runs joining into a larger one, so the
 * largest and how many runs have its size follow from the sizes alone;
 * only when the last run of that size is cut is it not known (counted
 * again, from the segment's blocks, at the next oom). */
static void run_cut(vr_oentry *s, int64_t size)
{
    if (s->v[SEG_NLARGEST] > 0 && size == s->v[SEG_LARGEST] && --s->v[SEG_NLARGEST] == 0)
        s->v[SEG_NLARGEST] = -1;
}

/* Runs of `below` and `above` bytes (0: none) join into one of `joined`,
 * larger than both. */
static void run_join(vr_oentry *s, int64_t below, int64_t above, int64_t joined)
{
    int64_t *largest = &s->v[SEG_LARGEST], *n = &s->v[SEG_NLARGEST];
    if (*n < 0)
        return;
    *n -= (below > 0 && below == *largest) + (above > 0 && above == *largest);
    if (joined > *largest) {
        *largest = joined;
        *n = 1;
    } else if (joined == *largest) {
        (*n)++;
    }
}

/*-*** blocks ***/

static void add_waste(replay *r, int64_t group, int64_t waste)
{
    r->groups[group].waste = vr_sat_add(r->groups[group].waste, waste);
    r->all.waste = vr_sat_add(r->all.waste, waste);
}

/* A block appears at a inside segment s: it takes its bytes from the
 * free run around it (clipped to it; none when a is inside a block).
 * waste: its size minus the size asked for. */
static void block_add(replay *r, vr_oentry *s, int64_t a, int64_t size, int64_t waste, int state)
{
    int64_t lo, hi, end = vr_sat_add(a, size);
    if (run_around(r, s, a, &lo, &hi)) {
        r->unmatched++; /* a block is there already */
        return;
    }
    if (lo > a || size <= 0 || end > hi)
        r->unmatched++;
    if (end > hi)
        end = hi;
    if (lo > a || end <= a)
        return;
    int64_t group = s->v[SEG_GROUP] >> 1;
    gap(r, group, lo, hi, 0);
    gap(r, group, lo, a, 1);
    gap(r, group, end, hi, 1);
    run_cut(s, vr_sat_sub(hi, lo));
    waste = waste < 0 ? 0 : waste > end - a ? end - a : waste;
    int64_t v[VR_ORDMAP_VALUES] = {end - a, state, waste, 0};
    vr_ordmap_put(&r->blocks, vr_okey1(a), v);
    add_waste(r, group, waste);
    change_blocks(r, s, vr_sat_add(s->v[SEG_ACTIVE], end - a), s->v[SEG_BLOCKS] + 1);
}

/* The block at a becomes free space, joined to the runs beside it. */
static void block_remove(replay *r, int64_t a)
{
    vr_oentry *s = segment_at(r, a), *below, *above, b;
    if (!s || !vr_ordmap_take(&r->blocks, vr_okey1(a), &b, &below, &above)) {
        r->unmatched++;
        return;
    }
    int64_t lo, hi;
    run_between(s, below, above, &lo, &hi);
    int64_t size = b.v[BLK_SIZE], end = block_end(&b), group = s->v[SEG_GROUP] >> 1;
    add_waste(r, group, -b.v[BLK_WASTE]);
    gap(r, group, lo, a, 0);
    gap(r, group, end, hi, 0);
    gap(r, group, lo, hi, 1);
    run_join(s, vr_sat_sub(a, lo), vr_sat_sub(hi, end), vr_sat_sub(hi, lo));
    change_blocks(r, s, vr_sat_sub(s->v[SEG_ACTIVE], size), s->v[SEG_BLOCKS] - 1);
}

/*-*** segments ***/

/* What a walk over a segment's blocks finds. */
typedef struct {
    int64_t active, blocks;    /* their bytes and count */
    int64_t largest, nlargest; /* the largest free run, and how many runs have its size */
} segment_walk;

static void walk_run(replay *r, segment_walk *w, int64_t group, int64_t lo, int64_t hi, int add)
{
    if (hi <= lo)
        return;
    gap(r, group, lo, hi, add);
    int64_t size = vr_sat_sub(hi, lo);
    if (size > w->largest) {
        w->largest = size;
        w->nlargest = 1;
    } else if (size == w->largest) {
        w->nlargest++;
    }
}

/* Adds (add 1) or takes away (0) the free runs of [lo, hi) of a segment
 * (when they are kept), walking its blocks; says what it found in *w. */
static void segment_runs(replay *r, int64_t group, int64_t lo, int64_t hi, int add,
                         segment_walk *w)
{
    int64_t at = lo;
    memset(w, 0, sizeof *w);
    for (vr_oentry *b = vr_ordmap_ceil(&r->blocks, vr_okey1(lo), 0); b && b->key.k[0] < hi;
         b = vr_ordmap_ceil(&r->blocks, vr_okey1(b->key.k[0]), 1)) {
        walk_run(r, w, group, at, b->key.k[0], add);
        at = block_end(b);
        w->active = vr_sat_add(w->active, b->v[BLK_SIZE]);
        w->blocks++;
    }
    walk_run(r, w, group, at, hi, add);
}

/* The allocator holds [a, a + size) as one segment of `packed` group;
 * refused (counted) when it overlaps one already held. */
static void segment_link(replay *r, int64_t a, int64_t size, int64_t packed)
{
    int64_t end = vr_sat_add(a, size);
    vr_oentry *below = vr_ordmap_floor(&r->segs, vr_okey1(a), 0);
    vr_oentry *above = vr_ordmap_ceil(&r->segs, vr_okey1(a), 0);
    if (size <= 0 || (below && seg_end(below) > a) || (above && above->key.k[0] < end)) {
        r->unmatched++;
        return;
    }
    segment_walk w;
    segment_runs(r, packed >> 1, a, end, 1, &w);
    int64_t v[VR_ORDMAP_VALUES] = {size, packed, w.active, w.blocks, w.largest, w.nlargest};
    vr_ordmap_put(&r->segs, vr_okey1(a), v);
    count_segment(r, vr_ordmap_get(&r->segs, vr_okey1(a)), 1);
}

/* Takes segment s away (its blocks stay in the map: the caller drops or
 * re-homes them). Returns a copy of it. */
static vr_oentry segment_unlink(replay *r, vr_oentry *s)
{
    vr_oentry copy = *s;
    count_segment(r, s, -1);
    if (r->exact_runs) {
        segment_walk w;
        segment_runs(r, copy.v[SEG_GROUP] >> 1, copy.key.k[0], seg_end(&copy), 0, &w);
    }
    vr_ordmap_del(&r->segs, copy.key);
    return copy;
}

/* Drops the blocks in [lo, hi): a range that was not held had none (each
 * one is an entry the layout did not match). */
static void drop_blocks(replay *r, int64_t group, int64_t lo, int64_t hi)
{
    vr_oentry *b;
    while ((b = vr_ordmap_ceil(&r->blocks, vr_okey1(lo), 0)) && b->key.k[0] < hi) {
        r->unmatched++;
        add_waste(r, group, -b->v[BLK_WASTE]);
        vr_ordmap_del(&r->blocks, b->key);
    }
}

/* From now on every free run is kept (gaps, largest), made from the
 * blocks: what the entries so far would have made one at a time, as long
 * as every block lies inside one segment (see undo_segment_map). */
static void keep_runs(replay *r)
{
    vr_ordmap_free(&r->gaps);
    vr_ordmap_free(&r->largest);
    for (size_t i = 0; i < r->ngroups; i++)
        r->groups[i].largest = 0;
    r->exact_runs = 1;
    segment_walk w;
    for (vr_oentry *s = vr_ordmap_ceil(&r->segs, vr_okey1(INT64_MIN), 0); s;
         s = vr_ordmap_ceil(&r->segs, s->key, 1))
        segment_runs(r, s->v[SEG_GROUP] >> 1, s->key.k[0], seg_end(s), 1, &w);
}

/* Each group's largest free run (groups[].largest) from its segments'
 * (the ones not known counted again), when the runs are not kept. */
static void largest_by_segment(replay *r)
{
    for (size_t i = 0; i < r->ngroups; i++)
        r->groups[i].largest = 0;
    for (vr_oentry *s = vr_ordmap_ceil(&r->segs, vr_okey1(INT64_MIN), 0); s;
         s = vr_ordmap_ceil(&r->segs, s->key, 1)) {
        int64_t group = s->v[SEG_GROUP] >> 1;
        if (s->v[SEG_NLARGEST] < 0) {
            segment_walk w;
            segment_runs(r, group, s->key.k[0], seg_end(s), 0, &w);
            s->v[SEG_LARGEST] = w.largest;
            s->v[SEG_NLARGEST] = w.nlargest;
        }
        if (s->v[SEG_LARGEST] > r->groups[group].largest)
            r->groups[group].largest = s->v[SEG_LARGEST];
    }
}

/* The largest free run of all. */
static int64_t largest_of_all(replay *r)
{
    if (r->exact_runs) {
        const vr_oentry *top = vr_ordmap_floor(&r->largest, vr_okey3(INT64_MAX, INT64_MAX, 0), 0);
        return top ? top->key.k[0] : 0;
    }
    largest_by_segment(r);
    int64_t top = 0;
    for (size_t i = 0; i < r->ngroups; i++)
        if (r->groups[i].largest > top)
            top = r->groups[i].largest;
    return top;
}

/*-*** undoing the entries ***/

static int64_t round_block(int64_t size)
{
    int64_t up = vr_sat_add(size, BLOCK_ROUND - 1);
    return up - up % BLOCK_ROUND;
}

static void undo_free_completed(replay *r, const trace_row *e)
{
    vr_oentry *s = segment_at(r, e->address);
    if (s)
        block_add(r, s, e->address, round_block(e->size),
                  vr_sat_sub(round_block(e->size), e->size), BLOCK_PENDING);
    else
        r->unmatched++;
}

static void undo_free_requested(replay *r, const trace_row *e)
{
    vr_oentry *b = vr_ordmap_get(&r->blocks, vr_okey1(e->address));
    if (b)
        b->v[BLK_STATE] = BLOCK_ALLOCATED;
    else
        r->unmatched++;
}

static void undo_segment_alloc(replay *r, const trace_row *e)
{
    vr_oentry *s = vr_ordmap_get(&r->segs, vr_okey1(e->address));
    if (!s) {
        r->unmatched++;
        return;
    }
    vr_oentry gone = segment_unlink(r, s);
    drop_blocks(r, gone.v[SEG_GROUP] >> 1, gone.key.k[0], seg_end(&gone));
}

static void undo_segment_free(replay *r, const trace_row *e)
{
    size_t g = group_of(r, pool_by_segment_size(e->size), e->stream, e->has_stream);
    segment_link(r, e->address, e->size, (int64_t)g * 2);
}

/* An expandable segment's range [a, a + size) was mapped: before, it was
 * not, and the segment around it was two (or one, or none). */
static void undo_segment_map(replay *r, const trace_row *e)
{
    vr_oentry *s = segment_at(r, e->address);
    if (!s || e->size <= 0) {
        r->unmatched++;
        return;
    }
    int64_t lo = e->address;
    const vr_oentry *cut = vr_ordmap_floor(&r->blocks, vr_okey1(lo), 1);
    if (!r->exact_runs && cut && cut->key.k[0] >= s->key.k[0] && block_end(cut) > lo)
        keep_runs(r); /* a block across lo: the runs made by walking the segments stop
                         being the spaces between blocks, so they are kept from here */
    vr_oentry was = segment_unlink(r, s);
    int64_t hi = vr_sat_add(e->address, e->size), end = seg_end(&was);
    if (hi > end) {
        r->unmatched++;
        hi = end;
    }
    drop_blocks(r, was.v[SEG_GROUP] >> 1, lo, hi);
    if (lo > was.key.k[0])
        segment_link(r, was.key.k[0], lo - was.key.k[0], was.v[SEG_GROUP]);
    if (end > hi)
        segment_link(r, hi, end - hi, was.v[SEG_GROUP]);
}

/* An expandable segment's range was unmapped: before, it was held, one
 * segment with the expandable ones it touches. Refused (counted) when a
 * segment holds part of it now. */
static void undo_segment_unmap(replay *r, const trace_row *e)
{
    int64_t lo = e->address, hi = vr_sat_add(e->address, e->size);
    const vr_oentry *inside = vr_ordmap_ceil(&r->segs, vr_okey1(lo), 0);
    if (e->size <= 0 || segment_at(r, lo) || (inside && inside->key.k[0] < hi)) {
        r->unmatched++;
        return;
    }
    vr_oentry *left = e->address > INT64_MIN ? segment_at(r, e->address - 1) : NULL;
    int64_t packed = -1;
    if (left && seg_end(left) == lo && (left->v[SEG_GROUP] & 1)) {
        vr_oentry was = segment_unlink(r, left);
        lo = was.key.k[0];
        packed = was.v[SEG_GROUP];
    }
    vr_oentry *right = vr_ordmap_get(&r->segs, vr_okey1(hi));
    if (right && (right->v[SEG_GROUP] & 1)) {
        vr_oentry was = segment_unlink(r, right);
        hi = seg_end(&was);
        packed = packed < 0 ? was.v[SEG_GROUP] : packed;
    }
    if (packed < 0) {
        size_t g = group_of(r, pool_by_segment_size(e->size), e->stream, e->has_stream);
        packed = (int64_t)g * 2 + 1;
    }
    segment_link(r, lo, vr_sat_sub(hi, lo), packed);
}

static void undo_alloc(replay *r, const trace_row *e)
{
    block_remove(r, e->address);
}

/* What each action undoes (by undo_kind); an entry without address or
 * size is unmatched. */
static const struct {
    const char *action;
    void (*undo)(replay *r, const trace_row *e);
} undos[] = {
    [DO_NOTHING] = {"", NULL},
    [DO_OOM] = {"oom", NULL},
    [DO_ALLOC] = {"alloc", undo_alloc},
    [DO_FREE_REQUESTED] = {"free_requested", undo_free_requested},
    [DO_FREE_COMPLETED] = {"free_completed", undo_free_completed},
    [DO_SEGMENT_ALLOC] = {"segment_alloc", undo_segment_alloc},
    [DO_SEGMENT_FREE] = {"segment_free", undo_segment_free},
    [DO_SEGMENT_MAP] = {"segment_map", undo_segment_map},
    [DO_SEGMENT_UNMAP] = {"segment_unmap", undo_segment_unmap},
};

static void undo(replay *r, const trace_row *e)
{
    if (!undos[e->kind].undo)
        return;
    if (e->has_address && e->has_size)
        undos[e->kind].undo(r, e);
    else
        r->unmatched++;
}

/* The undo of each trace_action code (the codes are the database's, read
 * once: names are what this file knows). */
static int load_actions(replay *r)
{
    sqlite3_stmt *st = vr_db_stmt(r->db, sql, "replay_actions", r->err);
    if (!st)
        return -1;
    memset(r->kinds, DO_NOTHING, sizeof r->kinds);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t code = sqlite3_column_int64(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        for (size_t k = 1;
             name && code >= 0 && code < MAX_ACTION_CODE && k < sizeof undos / sizeof undos[0];
             k++)
            if (strcmp(name, undos[k].action) == 0)
                r->kinds[code] = (unsigned char)k;
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(r->db, r->err, "reading the trace actions");
}

/*-*** the end state ***/

/* A nullable column by one call (type and value from the same
 * sqlite3_value, read at once: single-threaded) where column_type and
 * column_int64 made two. */
static int opt_int(sqlite3_stmt *st, int col, int64_t *v)
{
    sqlite3_value *value = sqlite3_column_value(st, col);
    *v = sqlite3_value_int64(value);
    return sqlite3_value_type(value) != SQLITE_NULL;
}

/* A segment's pool as oom_fragmentation names it. */
static void segment_pool(sqlite3_stmt *st, int64_t size, char *out, size_t n)
{
    const char *type = (const char *)sqlite3_column_text(st, 3);
    const char *pool = (const char *)sqlite3_column_text(st, 4);
    if (pool && strcmp(pool, "0,0") != 0)
        snprintf(out, n, "private %s", pool);
    else if (type && (strcmp(type, "large") == 0 || strcmp(type, "small") == 0))
        snprintf(out, n, "%s", type);
    else
        snprintf(out, n, "%s", pool_by_segment_size(size));
}

static int load_segments(replay *r, int64_t source, int64_t device)
{
    sqlite3_stmt *st = vr_db_stmt(r->db, sql, "replay_segments", r->err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", source, r->err) < 0 ||
        vr_db_bind_int(st, ":device", device, r->err) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_idmap_put(&r->segment_ids, (uint64_t)sqlite3_column_int64(st, 6), 1);
        if (sqlite3_column_type(st, 0) == SQLITE_NULL)
            continue; /* its blocks are the device's, it is not in the layout */
        char pool[64];
        int64_t size = sqlite3_column_int64(st, 1);
        segment_pool(st, size, pool, sizeof pool);
        int has_stream = sqlite3_column_type(st, 2) != SQLITE_NULL;
        size_t g = group_of(r, pool, sqlite3_column_int64(st, 2), has_stream);
        int64_t packed = (int64_t)g * 2 + (sqlite3_column_int(st, 5) != 0);
        segment_link(r, sqlite3_column_int64(st, 0), size, packed);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(r->db, r->err, "reading a snapshot's segments");
}

/* Loads the blocks of `block` (replay_blocks: by address; or
 * replay_blocks_in_table_order). The layout is built in address order:
 * read in table order, returns 1 at the first block whose address does
 * not rise (what is loaded is then to be thrown away). */
static int load_blocks(replay *r, int64_t source, int64_t device, const char *block)
{
    sqlite3_stmt *st = vr_db_stmt(r->db, sql, block, r->err);
    if (!st)
        return -1;
    int must_rise = strcmp(block, "replay_blocks") != 0, rc;
    int64_t last = 0;
    /* The read in table order names no source or device: it reads every
     * block, keeping those of the segments loaded. */
    if (!must_rise && (vr_db_bind_int(st, ":source", source, r->err) < 0 ||
                       vr_db_bind_int(st, ":device", device, r->err) < 0))
        return -1;
    for (int first = 1; (rc = sqlite3_step(st)) == SQLITE_ROW;) {
        if (must_rise && !vr_idmap_get(&r->segment_ids, (uint64_t)sqlite3_column_int64(st, 4)))
            continue; /* another device's or source's */
        int64_t a = sqlite3_column_int64(st, 0), size = sqlite3_column_int64(st, 1);
        if (must_rise && !first && a <= last) {
            sqlite3_reset(st);
            return 1;
        }
        last = a;
        int64_t requested;
        int requested_known = opt_int(st, 3, &requested);
        vr_oentry *s = segment_at(r, a);
        int state = sqlite3_column_int(st, 2) ? BLOCK_PENDING : BLOCK_ALLOCATED;
        if (s)
            block_add(r, s, a, size, requested_known ? vr_sat_sub(size, requested) : 0, state);
        else
            r->unmatched++;
        first = 0;
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(r->db, r->err, "reading a snapshot's blocks");
}

static int load_ooms(replay *r, int64_t source, int64_t device)
{
    sqlite3_stmt *st = vr_db_stmt(r->db, sql, "replay_ooms", r->err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", source, r->err) < 0 ||
        vr_db_bind_int(st, ":device", device, r->err) < 0)
        return -1;
    r->nooms = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_xgrow(&r->ooms, &r->ocap, r->nooms + 1, sizeof *r->ooms, 16);
        r->ooms[r->nooms++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(r->db, r->err, "reading a snapshot's OOMs");
}

/*-*** at an oom ***/

static int write_row(replay *r, int64_t oom, size_t gi, int is_request)
{
    sqlite3_stmt *st = vr_db_stmt(r->db, sql, "insert_oom_fragmentation", r->err);
    if (!st)
        return -1;
    const pool_group *g = &r->groups[gi];
    if (vr_db_bind_int(st, ":oom", oom, r->err) < 0 ||
        vr_db_bind_text(st, ":pool", g->pool, strlen(g->pool), r->err) < 0 ||
        vr_db_bind_opt_int(st, ":stream", g->has_stream, g->stream, r->err) < 0 ||
        vr_db_bind_int(st, ":is_request", is_request, r->err) < 0 ||
        vr_db_bind_int(st, ":segments", g->segments, r->err) < 0 ||
        vr_db_bind_int(st, ":expandable", g->expandable, r->err) < 0 ||
        vr_db_bind_int(st, ":reserved", g->reserved, r->err) < 0 ||
        vr_db_bind_int(st, ":allocated", g->active, r->err) < 0 ||
        vr_db_bind_int(st, ":free", vr_sat_sub(g->reserved, g->active), r->err) < 0 ||
        vr_db_bind_int(st, ":largest", g->largest, r->err) < 0 ||
        vr_db_bind_int(st, ":split", g->split_free, r->err) < 0 ||
        vr_db_bind_int(st, ":waste", g->waste, r->err) < 0 ||
        vr_db_bind_int(st, ":unmatched", r->unmatched, r->err) < 0)
        return -1;
    return vr_db_step_done(r->db, st, r->err);
}

static int at_oom(replay *r, const trace_row *e)
{
    if (r->nooms == 0) { /* more oom entries than OOM rows: not ours to say */
        r->unmatched++;
        return 0;
    }
    int64_t oom = r->ooms[--r->nooms];
    if (r->written < r->skip) { /* written by a walk that was then read again */
        r->written++;
        return 0;
    }
    r->written++;
    sqlite3_stmt *st = vr_db_stmt(r->db, sql, "set_oom_largest_free_block", r->err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":oom", oom, r->err) < 0 ||
        vr_db_bind_int(st, ":largest", largest_of_all(r), r->err) < 0)
        return -1;
    if (vr_db_step_done(r->db, st, r->err) < 0)
        return -1;
    size_t request = SIZE_MAX;
    if (e->has_size) {
        request = group_of(r, pool_by_request(e->size), e->stream, e->has_stream);
        if (write_row(r, oom, request, 1) < 0)
            return -1;
    }
    size_t rows = request != SIZE_MAX;
    for (size_t i = 0; i < r->nactive && rows < MAX_ROWS_PER_OOM; i++) {
        if (r->active[i] == request)
            continue;
        if (write_row(r, oom, r->active[i], 0) < 0)
            return -1;
        rows++;
    }
    return 0;
}

/*-*** the walk ***/

/* How the walk reads the entries. Filtering each row by source and device
 * (and mem_event's rows by seq) cost about as much as reading it, so the
 * walk first reads every row from the device's last entry down, unfiltered,
 * and checks at each oom, before its rows are written, that what it read
 * since the last check was the device's entries and nothing else: the oom
 * row is the device's, and the rows read number exactly the entries
 * between (the importer numbers a device's entries 0, 1, 2, ... in seq,
 * each stored once, in one table or the other, with ids rising with seq;
 * every entry between is in the id range read, so as many rows as entries
 * means no other row). When a check fails (another source's or device's
 * rows among the device's, a memory event that is not an entry), the
 * device is walked again with the rows filtered, its OOMs already written
 * not written again. */
typedef struct {
    int all_rows; /* 1: every row read, checked at each oom */
    int64_t seq;  /* the seq of the last checked entry (+1 at first) */
    int64_t rows; /* rows read since */
} walk_check;

/* The id and seq of the device's last entry (*id INT64_MIN: none). */
static int last_entry(replay *r, int64_t source, int64_t device, int64_t *id, int64_t *seq)
{
    static const char *const blocks[] = {"replay_last_other", "replay_last_event"};
    *id = INT64_MIN;
    *seq = 0;
    for (size_t i = 0; i < 2; i++) {
        sqlite3_stmt *st = vr_db_stmt(r->db, sql, blocks[i], r->err);
        if (!st)
            return -1;
        if (vr_db_bind_int(st, ":source", source, r->err) < 0 ||
            vr_db_bind_int(st, ":device", device, r->err) < 0)
            return -1;
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW && sqlite3_column_int64(st, 0) > *id) {
            *id = sqlite3_column_int64(st, 0);
            *seq = sqlite3_column_int64(st, 1);
        }
        sqlite3_reset(st);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            return vr_db_fail(r->db, r->err, "reading a snapshot's last entry");
    }
    return 0;
}

/* Whether the oom row `id` is the device's and the rows read since the
 * last check are its entries (1), or not (0). */
static int check_at_oom(replay *r, walk_check *w, int64_t id, int64_t source, int64_t device)
{
    sqlite3_stmt *st = vr_db_stmt(r->db, sql, "replay_entry_owner", r->err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":id", id, r->err) < 0 ||
        vr_db_bind_int(st, ":source", source, r->err) < 0 ||
        vr_db_bind_int(st, ":device", device, r->err) < 0)
        return -1;
    int rc = sqlite3_step(st);
    int ours = rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
    int64_t seq = ours ? sqlite3_column_int64(st, 1) : 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(r->db, r->err, "reading a snapshot's oom entry");
    if (!ours || w->rows != vr_sat_sub(vr_sat_sub(w->seq, seq), 1))
        return 0;
    w->seq = seq;
    w->rows = 0;
    return 1;
}

/* The device's trace_entry_other rows, read ahead of its memory events:
 * a run of them down to the next oom row (or OTHERS_AHEAD of them), newest
 * first; the memory events newer than each are undone before it. */
#define OTHERS_AHEAD 4096

typedef struct {
    int64_t id;
    trace_row e;
} other_row;

typedef struct {
    replay *r;
    walk_check *check;
    other_row *rows; /* the run, newest first */
    size_t n, next;  /* rows held; the first not yet undone */
    int oom;         /* 1: the run ends on an oom row, held here */
    trace_row held;
    int64_t last_id; /* the id of the last row read */
} read_ahead;

/* Undoes the rows held that are newer than id. */
static void undo_others_above(read_ahead *ra, int64_t id)
{
    for (; ra->next < ra->n && ra->rows[ra->next].id > id; ra->next++) {
        undo(ra->r, &ra->rows[ra->next].e);
        ra->check->rows++;
    }
}

/* vr_replay_event(id, bytes, addr): undoes one memory event that is an
 * entry, inside SQLite's scan of them (a row handed back to C cost as
 * much again as reading it); false, so the scan returns no row. The
 * read-ahead is the function's user data, set for the pass. */
static void sql_replay_event(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    read_ahead *ra = sqlite3_user_data(ctx);
    int64_t id = sqlite3_value_int64(argv[0]), bytes = sqlite3_value_int64(argv[1]);
    undo_others_above(ra, id);
    trace_row e = {.kind = bytes > 0 ? DO_ALLOC : DO_FREE_COMPLETED,
                   .size = bytes > 0            ? bytes
                           : bytes == INT64_MIN ? INT64_MAX
                                                : -bytes,
                   .has_size = 1,
                   .address = sqlite3_value_int64(argv[2]),
                   .has_address = sqlite3_value_type(argv[2]) != SQLITE_NULL};
    undo(ra->r, &e);
    ra->check->rows++;
    sqlite3_result_int(ctx, 0);
}

/* ra NULL: removes them (see the definition below the walk). */
static int register_functions(vr_db *db, read_ahead *ra, vr_error *err);

/* vr_replay_other(id, action, address, bytes, stream): holds one
 * trace_entry_other row read ahead, inside SQLite's scan; true at the row
 * that ends the run (an oom, kept apart, or the last the read-ahead holds),
 * so that the scan stops there. */
static void sql_replay_other(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    read_ahead *ra = sqlite3_user_data(ctx);
    int64_t code = sqlite3_value_int64(argv[1]);
    trace_row e = {.kind = code >= 0 && code < MAX_ACTION_CODE ? (undo_kind)ra->r->kinds[code]
                                                               : DO_NOTHING};
    int64_t *values[3] = {&e.address, &e.size, &e.stream};
    int *has[3] = {&e.has_address, &e.has_size, &e.has_stream};
    for (int i = 0; i < 3; i++) {
        *values[i] = sqlite3_value_int64(argv[2 + i]);
        *has[i] = sqlite3_value_type(argv[2 + i]) != SQLITE_NULL;
    }
    ra->last_id = sqlite3_value_int64(argv[0]);
    if (e.kind == DO_OOM) {
        ra->held = e;
        ra->oom = 1;
    } else if (ra->n < OTHERS_AHEAD) { /* the scan stops at the last (LIMIT 1) */
        ra->rows[ra->n++] = (other_row){ra->last_id, e};
    }
    sqlite3_result_int(ctx, ra->oom || ra->n == OTHERS_AHEAD);
}

/* Reads the trace_entry_other rows ahead from *from down: to an oom row
 * (ra->oom, the row in ra->held), OTHERS_AHEAD rows or the end. *lower:
 * the id of the last row read (INT64_MIN at the end); *from: the next
 * one to read. */
static int read_others_ahead(replay *r, read_ahead *ra, int all_rows, int64_t source,
                             int64_t device, int64_t *from, int64_t *lower)
{
    ra->n = ra->next = 0;
    ra->oom = 0;
    *lower = INT64_MIN;
    if (*from == INT64_MIN)
        return 0;
    sqlite3_stmt *st =
        vr_db_stmt(r->db, sql, all_rows ? "replay_other_rows" : "replay_other_entries", r->err);
    if (!st)
        return -1;
    /* The read of every row (all_rows) names no source or device. */
    if ((!all_rows && (vr_db_bind_int(st, ":source", source, r->err) < 0 ||
                       vr_db_bind_int(st, ":device", device, r->err) < 0)) ||
        vr_db_bind_int(st, ":upper", *from, r->err) < 0)
        return -1;
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(r->db, r->err, "reading a snapshot's trace");
    *lower = rc == SQLITE_ROW ? ra->last_id : INT64_MIN;
    *from = rc == SQLITE_ROW ? ra->last_id - 1 : INT64_MIN;
    return 0;
}

static const vr_db_function replay_functions[] = {
    {"vr_replay_event", 3, sql_replay_event, NULL, NULL},
    {"vr_replay_other", 5, sql_replay_other, NULL, NULL},
};

/* ra NULL: removes them, so nothing can call them with a read-ahead gone. */
static int register_functions(vr_db *db, read_ahead *ra, vr_error *err)
{
    size_t n = sizeof replay_functions / sizeof *replay_functions;
    return vr_db_functions(db, replay_functions, n, ra, err);
}

/* Undoes the memory events in (lower, upper], newest first, with the rows
 * read ahead among them. */
static int undo_events(replay *r, read_ahead *ra, int all_rows, int64_t source, int64_t device,
                       int64_t lower, int64_t upper)
{
    if (upper > lower) {
        sqlite3_stmt *st = vr_db_stmt(
            r->db, sql, all_rows ? "replay_event_rows" : "replay_event_entries", r->err);
        if (!st)
            return -1;
        if ((!all_rows && (vr_db_bind_int(st, ":source", source, r->err) < 0 ||
                           vr_db_bind_int(st, ":device", device, r->err) < 0)) ||
            vr_db_bind_int(st, ":lower", lower, r->err) < 0 ||
            vr_db_bind_int(st, ":upper", upper, r->err) < 0)
            return -1;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            ;
        sqlite3_reset(st);
        if (rc != SQLITE_DONE)
            return vr_db_fail(r->db, r->err, "reading a snapshot's trace");
    }
    undo_others_above(ra, INT64_MIN);
    return 0;
}

/* Newest first, from the device's last entry down to its first oom (once
 * every OOM row is written, nothing older changes what is written): the
 * two tables merged by id. Returns 1 when the rows read were not only the
 * device's entries (all_rows: then nothing after the last check is
 * written). */
static int walk_back(replay *r, read_ahead *ra, int64_t source, int64_t device, int all_rows)
{
    walk_check w = {all_rows, 0, 0};
    int64_t upper = INT64_MAX;
    if (all_rows && last_entry(r, source, device, &upper, &w.seq) < 0)
        return -1;
    w.seq = vr_sat_add(w.seq, 1);
    ra->check = &w;
    int64_t from = upper; /* the next trace_entry_other row to read */
    int failed = 0;
    while (!failed && r->nooms > 0) {
        int64_t lower;
        failed = read_others_ahead(r, ra, all_rows, source, device, &from, &lower);
        if (!failed)
            failed = undo_events(r, ra, all_rows, source, device, lower, upper);
        if (!failed && ra->oom && all_rows) {
            int checked = check_at_oom(r, &w, lower, source, device);
            failed = checked < 0 ? -1 : !checked;
        }
        if (!failed && ra->oom)
            failed = at_oom(r, &ra->held);
        if (lower == INT64_MIN)
            break; /* every row read */
        upper = lower;
    }
    return failed;
}

static void replay_reset(replay *r)
{
    vr_ordmap_free(&r->segs);
    vr_ordmap_free(&r->blocks);
    vr_ordmap_free(&r->gaps);
    vr_ordmap_free(&r->largest);
    vr_idmap_free(&r->group_ids);
    vr_idmap_init(&r->group_ids, SIZE_MAX);
    vr_idmap_free(&r->segment_ids);
    vr_idmap_init(&r->segment_ids, SIZE_MAX);
    r->ngroups = r->nactive = 0;
    memset(&r->all, 0, sizeof r->all);
    r->unmatched = 0;
    r->exact_runs = 0;
    r->written = r->skip = 0;
}

/* Segments, then their blocks in address order. */
static int load_layout(replay *r, int64_t source, int64_t device, const char *block)
{
    int rc = load_segments(r, source, device);
    return rc == 0 ? load_blocks(r, source, device, block) : rc;
}

/* The end state, its blocks read in table order when that is address
 * order, else again, sorted. */
static int load_end_state(replay *r, int64_t source, int64_t device)
{
    int rc = load_layout(r, source, device, "replay_blocks_in_table_order");
    if (rc != 1)
        return rc;
    replay_reset(r);
    return load_layout(r, source, device, "replay_blocks");
}

/* The device's OOMs from its end state and trace: every row read and
 * checked, else (see walk_check) the device's rows only. */
static int replay_device(replay *r, read_ahead *ra, sqlite3_stmt *dev)
{
    int64_t source = sqlite3_column_int64(dev, 0), device = sqlite3_column_int64(dev, 1);
    int rc = 1;
    size_t written = 0;
    for (int all_rows = 1; rc == 1 && all_rows >= 0; all_rows--) {
        replay_reset(r);
        if (load_ooms(r, source, device) < 0 || load_end_state(r, source, device) < 0)
            return -1;
        r->skip = written; /* after the load, which may reset and load again */
        rc = walk_back(r, ra, source, device, all_rows);
        written = r->written;
    }
    return rc < 0 ? -1 : 0;
}

/* Whether the database holds any OOM row (*any), the only thing the
 * replay writes for: without one, listing the devices (a scan of every
 * trace entry) is skipped. */
static int any_oom(vr_db *db, int *any, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "replay_any_oom", err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    *any = rc == SQLITE_ROW && sqlite3_column_int(st, 0) != 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : vr_db_fail(db, err, "looking for OOMs");
}

int vr_analyze_snapshot_replay(vr_db *db, vr_error *err)
{
    int any;
    if (any_oom(db, &any, err) < 0)
        return -1;
    if (!any)
        return 0;
    replay r;
    memset(&r, 0, sizeof r);
    r.db = db;
    r.err = err;
    vr_idmap_init(&r.group_ids, SIZE_MAX);
    vr_idmap_init(&r.segment_ids, SIZE_MAX);
    read_ahead ra = {.r = &r, .rows = vr_xmalloc(OTHERS_AHEAD * sizeof *ra.rows)};
    sqlite3_stmt *dev = load_actions(&r) < 0 || register_functions(db, &ra, err) < 0
                            ? NULL
                            : vr_db_stmt(db, sql, "replay_devices", err);
    int rc = dev ? SQLITE_ROW : SQLITE_ERROR, failed = !dev;
    while (!failed && (rc = sqlite3_step(dev)) == SQLITE_ROW)
        failed = replay_device(&r, &ra, dev) < 0;
    if (dev)
        sqlite3_reset(dev);
    if (!failed && rc != SQLITE_DONE)
        failed = vr_db_fail(db, err, "listing the snapshots' OOMs") < 0;
    vr_error ignored = VR_ERROR_INIT;
    if (register_functions(db, NULL, failed ? &ignored : err) < 0)
        failed = 1; /* still registered: they would point at this frame's read-ahead */
    free(ra.rows);
    replay_reset(&r);
    vr_idmap_free(&r.group_ids);
    vr_idmap_free(&r.segment_ids);
    free(r.groups);
    free(r.active);
    free(r.ooms);
    return failed ? -1 : 0;
}
