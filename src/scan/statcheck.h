/*-*** statcheck.h: allocator statistics that cannot be ***/
/*
 * memory_stats() and memory_summary() figures no caching allocator can
 * have given, whatever went wrong in the job:
 *   - a count or size below 0: every metric counts bytes, blocks or
 *     events (only max_split_size uses -1, for "no limit", and is not
 *     checked);
 *   - a current or peak size over VR_STAT_MAX_BYTES;
 *   - allocated over reserved, of one pool, current or peak, in one dump:
 *     the allocator carves its blocks out of the segments it reserved, so
 *     allocated <= reserved at every instant, and so for the peaks.
 * Such a figure is a corrupted or uninitialised value (INT64_MIN in a
 * dump, a typo in a pasted box), not memory. The readers (memstats.c,
 * memsummary.h) count it as malformed (malformed_stat), warn naming the
 * first with its line or byte, and keep it out of the database, so that
 * no peak is read from it; kineto.c and memprint.c apply the same rules
 * to a trace's memory events and a log's memory prints (malformed_event). Both of a contradicting allocated/reserved
 * pair are left out: which one is wrong cannot be told.
 *
 * The pair check needs a dump's figures together: a reader holds the
 * allocated_bytes and reserved_bytes current/peak figures of the dump it
 * reads (vr_stat_pairs_hold) and lets them go when the dump ends
 * (vr_stat_pairs_release), writing those that agree.
 *
 * Ownership: plain values, no heap memory.
 */
#ifndef VR_STATCHECK_H
#define VR_STATCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* 2^50 bytes (1 PiB), about 3,900 times the largest GPU memory of 2025
 * (288 GB: MI355X, B300): far past any device the allocator manages,
 * yet 8,000 times short of the INT64 extremes corrupt figures take. */
#define VR_STAT_MAX_BYTES (INT64_C(1) << 50)

/* Why memory_stats()'s figure `key` cannot be `value` ("below 0", "over
 * 1 PiB"), or NULL when it can. */
const char *vr_stat_impossible(const char *key, int64_t value);

/* Why a change of `delta` bytes, one allocation or free, cannot be (its
 * size over VR_STAT_MAX_BYTES either way), or NULL when it can. */
const char *vr_stat_impossible_change(int64_t delta);

/* Whether `allocated` over `reserved` of one pool at one instant is more
 * than reserved's rounding (`slack`: how far it may be read low). */
int vr_stat_over_reserved(int64_t allocated, int64_t reserved, int64_t slack);

/* The first impossible figure of an input, and how many there were. */
typedef struct {
    uint64_t count;
    uint64_t where; /* its line or byte (0: unknown) */
    char key[64];
    int64_t value;
    char why[96];
} vr_stat_bad;

void vr_stat_bad_note(vr_stat_bad *bad, const char *key, int64_t value, const char *why,
                      uint64_t where);

/* "PATH: line 12: allocated_bytes.all.peak -9223372036854775808 is
 * impossible (below 0): not read (2 such figures)" on stderr, when there
 * was one. `unit` names `where`: "line" or "byte". */
void vr_stat_bad_warn(const vr_stat_bad *bad, const vr_warner *w, const char *path,
                      const char *unit);

typedef struct {
    int64_t value;
    int64_t slack; /* how far the figure may be below the truth (a
                              box's cell is floored to its unit) */
    uint64_t where;
    int has;
} vr_stat_held;

/* [allocated, reserved][all, large_pool, small_pool][current, peak] */
typedef struct {
    vr_stat_held v[2][3][2];
} vr_stat_pairs;

/* Holds `key` if it is one of the pair figures: 1 held (a second of the
 * same key in the dump replaces the first), 0 not one of them. */
int vr_stat_pairs_hold(vr_stat_pairs *p, const char *key, int64_t value, int64_t slack,
                       uint64_t where);

/* Writes each held figure through `emit` unless it contradicts its
 * partner (then both are noted in `bad`, and counted in *dropped), and
 * empties p. Returns 0, or -1 when emit failed. */
typedef int (*vr_stat_emit_fn)(void *ud, const char *key, int64_t value, vr_error *err);
int vr_stat_pairs_release(vr_stat_pairs *p, vr_stat_emit_fn emit, void *ud, vr_stat_bad *bad,
                          uint64_t *dropped, vr_error *err);

#endif
