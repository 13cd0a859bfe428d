#include "util/ordmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

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

static uint32_t new_node(vr_ordmap *m, vr_okey key, const int64_t v[VR_ORDMAP_VALUES])
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
 * holding key itself (in *r), or 0. Iterative: l and r are the links
 * still to fill, on the left and the right of the cut. */
static uint32_t split(vr_ordmap *m, uint32_t t, const vr_okey *key, uint32_t *l, uint32_t *r)
{
    uint32_t found = 0;
    while (t) {
        vr_onode *n = &m->nodes[t];
        int c = key_cmp(&n->e.key, key);
        if (c < 0) {
            *l = t;
            l = &n->right;
            t = n->right;
        } else {
            if (c == 0)
                found = t;
            *r = t;
            r = &n->left;
            t = n->left;
        }
    }
    *l = *r = 0;
    return found;
}

/* Joins two trees, every key of a below every key of b: down the right
 * spine of a and the left spine of b, the higher priority on top. */
static uint32_t merge(vr_ordmap *m, uint32_t a, uint32_t b)
{
    uint32_t root = 0, *link = &root;
    while (a && b) {
        if (m->nodes[a].prio > m->nodes[b].prio) {
            *link = a;
            link = &m->nodes[a].right;
            a = *link;
        } else {
            *link = b;
            link = &m->nodes[b].left;
            b = *link;
        }
    }
    *link = a ? a : b;
    return root;
}

/* Puts node n in: it goes down to where its priority puts it, and the
 * subtree there is split around its key. A node already holding the key
 * is met on the way down or in that split: it is returned and the tree
 * keeps its keys (the split is joined back), so a put costs one descent,
 * not a look-up and then an insertion. Returns 0 when n went in. */
static uint32_t insert(vr_ordmap *m, uint32_t n)
{
    const vr_okey *key = &m->nodes[n].e.key;
    uint32_t prio = m->nodes[n].prio, *link = &m->root, t;
    while ((t = *link) && m->nodes[t].prio >= prio) {
        int c = key_cmp(key, &m->nodes[t].e.key);
        if (c == 0)
            return t;
        link = c < 0 ? &m->nodes[t].left : &m->nodes[t].right;
    }
    uint32_t l, r, same = split(m, t, key, &l, &r);
    if (same) {
        *link = merge(m, l, r);
        return same;
    }
    m->nodes[n].left = l;
    m->nodes[n].right = r;
    *link = n;
    return 0;
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

int vr_ordmap_put(vr_ordmap *m, vr_okey key, const int64_t v[VR_ORDMAP_VALUES])
{
    uint32_t n = new_node(m, key, v), same = insert(m, n);
    if (same) { /* the key was there: update it, give the new node back */
        memcpy(m->nodes[same].e.v, v, sizeof m->nodes[same].e.v);
        m->nodes[n].left = m->free_list;
        m->free_list = n;
        return 0;
    }
    m->count++;
    return 1;
}

int vr_ordmap_del(vr_ordmap *m, vr_okey key)
{
    uint32_t *link = &m->root, t;
    while ((t = *link)) {
        int c = key_cmp(&key, &m->nodes[t].e.key);
        if (c == 0)
            break;
        link = c < 0 ? &m->nodes[t].left : &m->nodes[t].right;
    }
    if (!t)
        return 0;
    *link = merge(m, m->nodes[t].left, m->nodes[t].right);
    m->nodes[t].left = m->free_list;
    m->free_list = t;
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

vr_oentry *vr_ordmap_around(const vr_ordmap *m, vr_okey key, vr_oentry **below, vr_oentry **above)
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

int vr_ordmap_take(vr_ordmap *m, vr_okey key, vr_oentry *taken, vr_oentry **below,
                   vr_oentry **above)
{
    *below = *above = NULL;
    uint32_t *link = &m->root, t;
    while ((t = *link)) { /* down to key, noting the last turns either way */
        int c = key_cmp(&key, &m->nodes[t].e.key);
        if (c == 0)
            break;
        if (c > 0) {
            *below = &m->nodes[t].e;
            link = &m->nodes[t].right;
        } else {
            *above = &m->nodes[t].e;
            link = &m->nodes[t].left;
        }
    }
    if (!t) {
        *below = *above = NULL;
        return 0;
    }
    for (uint32_t l = m->nodes[t].left; l; l = m->nodes[l].right)
        *below = &m->nodes[l].e;
    for (uint32_t r = m->nodes[t].right; r; r = m->nodes[r].left)
        *above = &m->nodes[r].e;
    *taken = m->nodes[t].e;
    *link = merge(m, m->nodes[t].left, m->nodes[t].right);
    m->nodes[t].left = m->free_list;
    m->free_list = t;
    m->count--;
    return 1;
}
