/*-*** slots.h: 32-bit slots by index, cold pages in a temporary file ***/
/*
 * The pickle decoder's memo: one 32-bit value per memo index, set in
 * index order by pickle.dump (MEMOIZE), read back at any index (BINGET),
 * millions of them in a big snapshot (15,000 to 60,000 a MiB of pickle,
 * 4 bytes each). Held in memory they grow with the file; here at most
 * `max_resident` pages are in memory, and the page made or read back
 * last pushes the oldest one out (first in, first out) into an unlinked
 * temporary file (in $TMPDIR, else /tmp), from which a read brings it
 * back. A snapshot reads mostly the pages it is filling and a few early
 * ones (the frames, the keys), so pages rarely come back.
 *
 * A slot never set reads 0. Values go in and out by value: no pointer
 * into a page outlives the next call on the same slots (a page may be
 * pushed out), except from vr_slots_peek/poke, which never move pages.
 *
 * Memory: the pages in memory, their table (9 bytes a page) and the
 * queue (8 bytes a page in memory), each change reported to `charge`,
 * which may refuse growth. Errors (memory refused, the file) are sticky:
 * vr_slots_failed() says which, and a slot that could not be read back
 * reads 0.
 *
 * Ownership: caller-owned struct; vr_slots_free() releases its pages and
 * closes the file.
 */
#ifndef VR_SLOTS_H
#define VR_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#define VR_SLOTS_PAGE_BITS 12 /* 4096 slots: 16 KiB a page */
#define VR_SLOTS_PAGE ((size_t)1 << VR_SLOTS_PAGE_BITS)

/* Asked before memory grows (bytes > 0: -1 refuses) and told when it
 * shrinks (bytes < 0). */
typedef int (*vr_slots_charge_fn)(void *ctx, ptrdiff_t bytes);

typedef enum {
    VR_SLOTS_OK = 0,
    VR_SLOTS_NO_MEMORY, /* charge refused */
    VR_SLOTS_FILE       /* the temporary file: errno in `sys_errno` */
} vr_slots_status;

/* Where a page is. A page in memory is written out whenever it leaves:
 * knowing which ones changed would cost a store on every write, and a
 * char store makes the compiler reload whatever the caller holds in
 * registers (the decoder lost half a percent to it); pages read back are
 * few. */
enum {
    VR_SLOTS_NONE = 0, /* never made: its slots read 0 */
    VR_SLOTS_IN,       /* in memory */
    VR_SLOTS_OUT       /* in the file only */
};

typedef struct {
    uint32_t **page;          /* by page number: in memory, or NULL */
    unsigned char *state;     /* by page number: VR_SLOTS_NONE, IN or OUT */
    size_t npages, table_cap; /* page numbers known; table entries allocated */
    size_t *queue;            /* the resident pages, oldest at `head` (a ring once full) */
    size_t queue_cap, head, nresident, max_resident;
    size_t made;            /* pages ever made (in memory or in the file) */
    uint64_t loads, writes; /* pages read back, pages written out */
    int fd;                 /* the temporary file; -1 until a page goes out */
    vr_slots_status status;
    int sys_errno;
    vr_slots_charge_fn charge;
    void *ctx;
} vr_slots;

/* max_resident: pages kept in memory (at least 2). charge may be NULL. */
void vr_slots_init(vr_slots *s, size_t max_resident, vr_slots_charge_fn charge, void *ctx);
/* Frees every page (telling charge) and closes the file. */
void vr_slots_free(vr_slots *s);

uint32_t vr_slots_get_slow(vr_slots *s, uint64_t idx);
int vr_slots_set_slow(vr_slots *s, uint64_t idx, uint32_t value);

/* The slot idx of a page in memory, or NULL (never set, or in the file):
 * nothing moves. Valid until the next call that may move pages. */
static inline const uint32_t *vr_slots_peek(const vr_slots *s, uint64_t idx)
{
    uint64_t n = idx >> VR_SLOTS_PAGE_BITS;
    return n < s->npages && s->page[n] ? &s->page[n][idx & (VR_SLOTS_PAGE - 1)] : NULL;
}

/* vr_slots_peek for writing. */
static inline uint32_t *vr_slots_poke(vr_slots *s, uint64_t idx)
{
    uint64_t n = idx >> VR_SLOTS_PAGE_BITS;
    return n < s->npages && s->page[n] ? &s->page[n][idx & (VR_SLOTS_PAGE - 1)] : NULL;
}

/* The value of slot idx (0: never set), its page read back if need be. */
static inline uint32_t vr_slots_get(vr_slots *s, uint64_t idx)
{
    const uint32_t *v = vr_slots_peek(s, idx);
    return v ? *v : vr_slots_get_slow(s, idx);
}

/* Sets slot idx; 0, or -1 (vr_slots_failed says why). */
static inline int vr_slots_set(vr_slots *s, uint64_t idx, uint32_t value)
{
    uint32_t *v = vr_slots_poke(s, idx);
    if (!v)
        return vr_slots_set_slow(s, idx, value);
    *v = value;
    return 0;
}

/* VR_SLOTS_OK, or what went wrong first. */
static inline vr_slots_status vr_slots_failed(const vr_slots *s)
{
    return s->status;
}

#endif
