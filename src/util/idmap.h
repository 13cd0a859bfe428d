/*-*** idmap.h: a bounded map from 64-bit keys to row ids ***/
/*
 * Readers look up the same few thousand things (frames, stacks) millions
 * of times; the database holds them, this only saves the SELECT. Keys are
 * 64-bit digests (XXH64) of what they stand for; 0 is not a valid value.
 * The map stops growing at `max` entries, after which callers ask the
 * database: hostile inputs cost no unbounded memory.
 *
 * Ownership: caller-owned struct; vr_idmap_free() releases its table.
 */
#ifndef VR_IDMAP_H
#define VR_IDMAP_H

#include <stddef.h>
#include <stdint.h>

/* A key and its value side by side: a lookup in a table larger than the
 * cache misses once, not twice. */
typedef struct {
    uint64_t key;
    int64_t value; /* 0: empty slot */
} vr_idmap_slot;

typedef struct {
    vr_idmap_slot *slots;
    size_t len, cap, max;
} vr_idmap;

void vr_idmap_init(vr_idmap *m, size_t max);
void vr_idmap_free(vr_idmap *m);
/* The value for `key`, or 0. */
int64_t vr_idmap_get(const vr_idmap *m, uint64_t key);
/* Remembers key -> value (value != 0): a known key is updated; a new one
 * is kept unless the map is full. */
void vr_idmap_put(vr_idmap *m, uint64_t key, int64_t value);

#endif
