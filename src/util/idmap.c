#include "util/idmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

void vr_idmap_init(vr_idmap *m, size_t max)
{
    memset(m, 0, sizeof *m);
    m->max = max;
}

void vr_idmap_free(vr_idmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* The slot of `key`, or the empty one where it would go. */
static size_t slot_of(const vr_idmap *m, uint64_t key)
{
    size_t mask = m->cap - 1;
    size_t j = (size_t)(key ^ (key >> 29)) & mask;
    while (m->slots[j].value && m->slots[j].key != key)
        j = (j + 1) & mask;
    return j;
}

int64_t vr_idmap_get(const vr_idmap *m, uint64_t key)
{
    return m->cap ? m->slots[slot_of(m, key)].value : 0;
}

/* Keeps the table at most half full. */
static void grow(vr_idmap *m)
{
    vr_idmap old = *m;
    m->cap = old.cap ? old.cap * 2 : 1024;
    m->slots = vr_xmalloc(m->cap * sizeof *m->slots);
    memset(m->slots, 0, m->cap * sizeof *m->slots);
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].value)
            m->slots[slot_of(m, old.slots[i].key)] = old.slots[i];
    free(old.slots);
}

void vr_idmap_put(vr_idmap *m, uint64_t key, int64_t value)
{
    if (!value)
        return;
    if (m->cap && m->slots[slot_of(m, key)].value) { /* known: updated in place */
        m->slots[slot_of(m, key)].value = value;
        return;
    }
    if (m->len >= m->max)
        return;
    if ((m->len + 1) * 2 > m->cap)
        grow(m);
    m->slots[slot_of(m, key)] = (vr_idmap_slot){key, value};
    m->len++;
}
