#include "ordmap.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

struct vr_onode {
    vr_oentry e;
    uint32_t left, right, prio;
};

vr_okey vr_okey1(int64_t a)
{
    return (vr_okey){{a, 0, 0}};
}

vr_okey vr_okey3(int64_t a, int64_t b, int64_t c)
{
    return (vr_okey){{a, b, c}};
}

static int key_cmp(const vr_okey *a, const vr_okey *b)
{
    if (a->k[0] != b->k[0])
        return a->k[0] < b->k[0] ? -1 : 1;
    if (a->k[1] != b->k[1])
        return a->k[1] < b->k[1] ? -1 : 1;
    return a->k[2] < b->k[2] ? -1 : a->k[2] > b->k[2];
}

void vr_ordmap_init(vr_ordmap *m)
{
    memset(m, 0, sizeof *m);
    m->seed = 0x9e3779b9u;
}

void vr_ordmap_free(vr_ordmap *m)
{
    free(m->nodes);
    vr_ordmap_init(m);
}

size_t vr_ordmap_count(const vr_ordmap *m)
{
    return m->count;
}

/* xorshift32: priorities need only be well spread, not secret. */
static uint32_t next_prio(vr_ordmap *m)
{
    uint32_t x = m->seed;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    m->seed = x;
    return x;
}

static uint32_t new_node(vr_ordmap *m, vr_okey key, const int64_t v[4])
{
    uint32_t i = m->free_list;
    if (i) {
        m->free_list = m->nodes[i].left;
    } else {
        if (m->len == 0)
            m->len = 1; /* index 0 is the empty tree */
        vr_xgrow(&m->nodes, &m->cap, m->len + 1, sizeof *m->nodes, 64);
        i = (uint32_t)m->len++;
    }
    vr_onode *n = &m->nodes[i];
    n->e.key = key;
    memcpy(n->e.v, v, sizeof n->e.v);
    n->left = n->right = 0;
    n->prio = next_prio(m);
    return i;
}

/* Cuts tree t into *l (keys < key) and *r (the rest); returns the node
 * holding key itself (in *r), or 0. */
static uint32_t split(vr_ordmap *m, uint32_t t, const vr_okey *key, uint32_t *l, uint32_t *r)
{
    if (!t) {
        *l = *r = 0;
        return 0;
    }
    int c = key_cmp(&m->nodes[t].e.key, key);
    if (c < 0) {
        *l = t;
        return split(m, m->nodes[t].right, key, &m->nodes[t].right, r);
    }
    *r = t;
    uint32_t found = split(m, m->nodes[t].left, key, l, &m->nodes[t].left);
    return c == 0 ? t : found;
}

/* Joins two trees, every key of a below every key of b. */
static uint32_t merge(vr_ordmap *m, uint32_t a, uint32_t b)
{
    if (!a || !b)
        return a ? a : b;
    if (m->nodes[a].prio > m->nodes[b].prio) {
        m->nodes[a].right = merge(m, m->nodes[a].right, b);
        return a;
    }
    m->nodes[b].left = merge(m, a, m->nodes[b].left);
    return b;
}

/* Tree t with node n put in: n goes down to where its priority puts it,
 * and the subtree there is split around its key. A node already holding
 * the key is met on the way down or in that split: it is returned in
 * *same and the tree keeps its keys (the split is joined back), so a put
 * costs one descent, not a look-up and then an insertion. */
static uint32_t insert(vr_ordmap *m, uint32_t t, uint32_t n, uint32_t *same)
{
    if (!t)
        return n;
    if (m->nodes[n].prio > m->nodes[t].prio) {
        uint32_t l, r;
        *same = split(m, t, &m->nodes[n].e.key, &l, &r);
        if (*same)
            return merge(m, l, r);
        m->nodes[n].left = l;
        m->nodes[n].right = r;
        return n;
    }
    int c = key_cmp(&m->nodes[n].e.key, &m->nodes[t].e.key);
    if (c == 0) {
        *same = t;
        return t;
    }
    if (c < 0)
        m->nodes[t].left = insert(m, m->nodes[t].left, n, same);
    else
        m->nodes[t].right = insert(m, m->nodes[t].right, n, same);
    return t;
}

vr_oentry *vr_ordmap_get(const vr_ordmap *m, vr_okey key)
{
    uint32_t t = m->root;
    while (t) {
        int c = key_cmp(&key, &m->nodes[t].e.key);
        if (c == 0)
            return &m->nodes[t].e;
        t = c < 0 ? m->nodes[t].left : m->nodes[t].right;
    }
    return NULL;
}

int vr_ordmap_put(vr_ordmap *m, vr_okey key, const int64_t v[4])
{
    uint32_t n = new_node(m, key, v), same = 0;
    m->root = insert(m, m->root, n, &same);
    if (same) { /* the key was there: update it, give the new node back */
        memcpy(m->nodes[same].e.v, v, sizeof m->nodes[same].e.v);
        m->nodes[n].left = m->free_list;
        m->free_list = n;
        return 0;
    }
    m->count++;
    return 1;
}

/* Tree t without key (its node goes to *gone, 0 when absent). */
static uint32_t erase(vr_ordmap *m, uint32_t t, const vr_okey *key, uint32_t *gone)
{
    if (!t)
        return 0;
    int c = key_cmp(key, &m->nodes[t].e.key);
    if (c == 0) {
        *gone = t;
        return merge(m, m->nodes[t].left, m->nodes[t].right);
    }
    if (c < 0)
        m->nodes[t].left = erase(m, m->nodes[t].left, key, gone);
    else
        m->nodes[t].right = erase(m, m->nodes[t].right, key, gone);
    return t;
}

int vr_ordmap_del(vr_ordmap *m, vr_okey key)
{
    uint32_t gone = 0;
    m->root = erase(m, m->root, &key, &gone);
    if (!gone)
        return 0;
    m->nodes[gone].left = m->free_list;
    m->free_list = gone;
    m->count--;
    return 1;
}

vr_oentry *vr_ordmap_ceil(const vr_ordmap *m, vr_okey key, int strict)
{
    vr_oentry *best = NULL;
    uint32_t t = m->root;
    while (t) {
        int c = key_cmp(&m->nodes[t].e.key, &key);
        if (c > 0 || (!strict && c == 0)) {
            best = &m->nodes[t].e;
            t = m->nodes[t].left;
        } else {
            t = m->nodes[t].right;
        }
    }
    return best;
}

vr_oentry *vr_ordmap_floor(const vr_ordmap *m, vr_okey key, int strict)
{
    vr_oentry *best = NULL;
    uint32_t t = m->root;
    while (t) {
        int c = key_cmp(&m->nodes[t].e.key, &key);
        if (c < 0 || (!strict && c == 0)) {
            best = &m->nodes[t].e;
            t = m->nodes[t].right;
        } else {
            t = m->nodes[t].left;
        }
    }
    return best;
}

vr_oentry *vr_ordmap_around(const vr_ordmap *m, vr_okey key, vr_oentry **below,
                            vr_oentry **above)
{
    vr_oentry *at = NULL;
    *below = *above = NULL;
    uint32_t t = m->root;
    while (t) { /* down to key; past it, its neighbours are in its subtrees */
        int c = key_cmp(&m->nodes[t].e.key, &key);
        if (c == 0) {
            at = &m->nodes[t].e;
            break;
        }
        if (c < 0) {
            *below = &m->nodes[t].e;
            t = m->nodes[t].right;
        } else {
            *above = &m->nodes[t].e;
            t = m->nodes[t].left;
        }
    }
    if (!at)
        return NULL;
    for (uint32_t l = m->nodes[t].left; l; l = m->nodes[l].right)
        *below = &m->nodes[l].e;
    for (uint32_t r = m->nodes[t].right; r; r = m->nodes[r].left)
        *above = &m->nodes[r].e;
    return at;
}
