/*-*** ordmap.h: an ordered map of small fixed records ***/
/*
 * An ordered map from keys of three 64-bit integers (compared in order)
 * to VR_ORDMAP_VALUES (six) 64-bit values, with neighbour queries: the
 * first key at or above one, the last at or below. The allocator replay (analyze/
 * snapshot_replay.c) keeps segments and blocks by address and free gaps by
 * size in it, so each change costs O(log n) and memory stays proportional
 * to what is live.
 *
 * A treap (a binary search tree balanced by random priorities, here from a
 * fixed-seed generator, so runs are reproducible) whose nodes live in one
 * growable array, linked by index; freed nodes are reused. Puts and
 * deletes walk down by links to fill, without recursion.
 *
 * Ownership: caller-owned struct; vr_ordmap_free() releases its nodes.
 * A pointer a query returns stays valid until the next put or del.
 */
#ifndef VR_ORDMAP_H
#define VR_ORDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t k[3];
} vr_okey;

#define VR_ORDMAP_VALUES 6

typedef struct {
    vr_okey key;
    int64_t v[VR_ORDMAP_VALUES];
} vr_oentry;

typedef struct vr_onode vr_onode;

typedef struct {
    vr_onode *nodes; /* nodes[0] is the empty tree */
    size_t len, cap, count;
    uint32_t root, free_list, seed;
} vr_ordmap;

void vr_ordmap_init(vr_ordmap *m);
void vr_ordmap_free(vr_ordmap *m);
/* Entries held. */
size_t vr_ordmap_count(const vr_ordmap *m);
/* Sets key -> v[VR_ORDMAP_VALUES]: returns 1 when the key is new, 0 when it was updated. */
int vr_ordmap_put(vr_ordmap *m, vr_okey key, const int64_t v[VR_ORDMAP_VALUES]);
/* Removes key: 1 when it was there, else 0. */
int vr_ordmap_del(vr_ordmap *m, vr_okey key);
/* The entry of key, or NULL. */
vr_oentry *vr_ordmap_get(const vr_ordmap *m, vr_okey key);
/* The first entry whose key is >= key (or > key when `strict`), or NULL. */
vr_oentry *vr_ordmap_ceil(const vr_ordmap *m, vr_okey key, int strict);
/* The last entry whose key is <= key (or < key when `strict`), or NULL. */
vr_oentry *vr_ordmap_floor(const vr_ordmap *m, vr_okey key, int strict);
/* In one descent: *below, the last entry whose key is < key, and *above,
 * the first whose key is > key (NULL when none); returns the entry of key
 * itself, or NULL. */
vr_oentry *vr_ordmap_around(const vr_ordmap *m, vr_okey key, vr_oentry **below,
                            vr_oentry **above);
/* Removes key in one descent: 1 when it was there (its entry copied to
 * *taken, and *below and *above its neighbours as vr_ordmap_around says
 * them), else 0 (*below, *above NULL). */
int vr_ordmap_take(vr_ordmap *m, vr_okey key, vr_oentry *taken, vr_oentry **below,
                   vr_oentry **above);
/* A key of one, two or three integers (the rest 0). */
vr_okey vr_okey1(int64_t a);
vr_okey vr_okey3(int64_t a, int64_t b, int64_t c);

#endif
