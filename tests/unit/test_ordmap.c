/*-*** test_ordmap.c: the ordered map (util/ordmap) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>

#include "util/ordmap.h"

#include "harness.h"

/* The ordered map against a plain sorted array, over random puts,
 * deletes and neighbour queries (keys drawn from a small range, so
 * repeats, misses and both ends are hit often). */
#define ORD_KEYS 600

static int ord_ref_find(const int64_t *ref, size_t n, int64_t key)
{
    for (size_t i = 0; i < n; i++)
        if (ref[i] == key)
            return (int)i;
    return -1;
}

/* The reference's answer to ceil/floor (strict or not): the key, or -1. */
static int64_t ord_ref_near(const int64_t *ref, size_t n, int64_t key, int up, int strict)
{
    int64_t best = -1;
    for (size_t i = 0; i < n; i++) {
        int64_t k = ref[i];
        int fits = up ? (strict ? k > key : k >= key) : (strict ? k < key : k <= key);
        if (fits && (best < 0 || (up ? k < best : k > best)))
            best = k;
    }
    return best;
}

static void test_ordmap(void)
{
    vr_ordmap m;
    vr_ordmap_init(&m);
    OK(vr_ordmap_get(&m, vr_okey1(1)) == NULL && vr_ordmap_ceil(&m, vr_okey1(0), 0) == NULL,
       "an empty map has nothing");
    int64_t ref[ORD_KEYS], vals[ORD_KEYS];
    size_t n = 0;
    uint32_t x = 12345;
    int ok = 1;
    for (int step = 0; step < 200000 && ok; step++) {
        x = x * 1103515245u + 12345u;
        int64_t key = (int64_t)((x >> 8) % ORD_KEYS);
        int op = (int)((x >> 24) % 5), at = ord_ref_find(ref, n, key);
        if (op == 0) {
            int64_t v[VR_ORDMAP_VALUES] = {step, -step, key, 7};
            ok &= vr_ordmap_put(&m, vr_okey1(key), v) == (at < 0);
            if (at < 0) {
                ref[n] = key;
                vals[n++] = step;
            } else {
                vals[at] = step;
            }
        } else if (op == 1 || op == 4) {
            if (op == 1) {
                ok &= vr_ordmap_del(&m, vr_okey1(key)) == (at >= 0);
            } else { /* take: removed, with its value and its neighbours */
                vr_oentry taken, *below, *above;
                int64_t lo = ord_ref_near(ref, n, key, 0, 1),
                        hi = ord_ref_near(ref, n, key, 1, 1);
                int got = vr_ordmap_take(&m, vr_okey1(key), &taken, &below, &above);
                ok &= got == (at >= 0);
                ok &= !got || (taken.key.k[0] == key && taken.v[0] == vals[at] &&
                               (below ? below->key.k[0] : -1) == lo &&
                               (above ? above->key.k[0] : -1) == hi);
                ok &= got || (!below && !above);
            }
            if (at >= 0) {
                ref[at] = ref[n - 1];
                vals[at] = vals[--n];
            }
        } else {
            const vr_oentry *e = vr_ordmap_get(&m, vr_okey1(key));
            ok &= at < 0 ? e == NULL : (e && e->v[0] == vals[at] && e->v[1] == -vals[at]);
            int strict = op == 3;
            const vr_oentry *c = vr_ordmap_ceil(&m, vr_okey1(key), strict);
            const vr_oentry *f = vr_ordmap_floor(&m, vr_okey1(key), strict);
            ok &= (c ? c->key.k[0] : -1) == ord_ref_near(ref, n, key, 1, strict);
            ok &= (f ? f->key.k[0] : -1) == ord_ref_near(ref, n, key, 0, strict);
            vr_oentry *below, *above;
            const vr_oentry *here = vr_ordmap_around(&m, vr_okey1(key), &below, &above);
            ok &= (here != NULL) == (at >= 0);
            ok &= (below ? below->key.k[0] : -1) == ord_ref_near(ref, n, key, 0, 1);
            ok &= (above ? above->key.k[0] : -1) == ord_ref_near(ref, n, key, 1, 1);
        }
        ok &= vr_ordmap_count(&m) == n;
    }
    OK(ok, "200,000 random puts, deletes, takes and neighbour queries (ceil, floor, around) "
           "agree with a sorted array");

    /* In order: walking with strict ceil visits every key once, ascending. */
    size_t seen = 0;
    int64_t last = -1;
    for (const vr_oentry *e = vr_ordmap_ceil(&m, vr_okey1(INT64_MIN), 0); e;
         e = vr_ordmap_ceil(&m, e->key, 1)) {
        ok &= e->key.k[0] > last;
        last = e->key.k[0];
        seen++;
    }
    OK(ok && seen == n, "a walk by ceil visits every key in order");
    vr_ordmap_free(&m);

    /* Keys of three parts compare part by part: the largest size of one
     * group is the floor of (group, max, max). */
    vr_ordmap_init(&m);
    static const int64_t none[VR_ORDMAP_VALUES];
    vr_ordmap_put(&m, vr_okey3(1, 4096, 10), none);
    vr_ordmap_put(&m, vr_okey3(1, 8192, 5), none);
    vr_ordmap_put(&m, vr_okey3(2, 512, 0), none);
    vr_ordmap_put(&m, vr_okey3(0, 1 << 30, 0), none);
    const vr_oentry *top = vr_ordmap_floor(&m, vr_okey3(1, INT64_MAX, INT64_MAX), 0);
    OK(top && top->key.k[0] == 1 && top->key.k[1] == 8192, "the largest of group 1 is 8192");
    vr_ordmap_del(&m, vr_okey3(1, 8192, 5));
    top = vr_ordmap_floor(&m, vr_okey3(1, INT64_MAX, INT64_MAX), 0);
    OK(top && top->key.k[1] == 4096, "after a delete, the next largest of group 1");
    top = vr_ordmap_floor(&m, vr_okey3(3, INT64_MAX, INT64_MAX), 0);
    OK(top && top->key.k[0] == 2, "a group with nothing falls to the one below (callers check)");

    /* Memory: nodes freed by deletes are reused. */
    for (int64_t i = 0; i < 1000; i++)
        vr_ordmap_put(&m, vr_okey1(i + 100), none);
    size_t len = m.len;
    for (int round = 0; round < 10; round++) {
        for (int64_t i = 0; i < 1000; i++)
            vr_ordmap_del(&m, vr_okey1(i + 100));
        for (int64_t i = 0; i < 1000; i++)
            vr_ordmap_put(&m, vr_okey1(i + 100 + round), none);
    }
    INT_EQ((long long)m.len, (long long)len, "deleted nodes are reused: the array does not grow");
    vr_ordmap_free(&m);

    /* Keys in ascending order (the replay loads segments and blocks by
     * address): a put of a key already there updates it wherever the
     * descent meets it, and deletes from the low end empty the map. */
    vr_ordmap_init(&m);
    ok = 1;
    for (int64_t i = 0; i < 50000; i++) {
        int64_t v[VR_ORDMAP_VALUES] = {i, 0, 0, 0};
        ok &= vr_ordmap_put(&m, vr_okey1(i * 512), v) == 1;
    }
    for (int64_t i = 0; i < 50000; i += 7) {
        int64_t v[VR_ORDMAP_VALUES] = {-i, 0, 0, 0};
        ok &= vr_ordmap_put(&m, vr_okey1(i * 512), v) == 0;
    }
    for (int64_t i = 0; i < 50000; i++) {
        const vr_oentry *e = vr_ordmap_get(&m, vr_okey1(i * 512));
        ok &= e && e->v[0] == (i % 7 ? i : -i);
    }
    OK(ok && vr_ordmap_count(&m) == 50000,
       "50,000 ascending keys, every seventh put again: updated");
    for (int64_t i = 0; i < 50000; i++)
        ok &= vr_ordmap_del(&m, vr_okey1(i * 512)) == 1 &&
              vr_ordmap_count(&m) == (size_t)(49999 - i);
    OK(ok && vr_ordmap_ceil(&m, vr_okey1(INT64_MIN), 0) == NULL,
       "deleted from the low end: empty");
    vr_ordmap_free(&m);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_ordmap);
    return harness_summary();
}
