/*-*** test_idmap.c: the bounded id cache (util/idmap) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>

#include "util/idmap.h"

#include "harness.h"

/* The bounded id cache the snapshot reader keeps frames and stacks in. */
static void test_idmap(void)
{
    vr_idmap m;
    vr_idmap_init(&m, 5000);
    INT_EQ(vr_idmap_get(&m, 42), 0, "an empty map knows nothing");
    int ok = 1;
    for (uint64_t k = 1; k <= 10000; k++)
        vr_idmap_put(&m, k * 0x9E3779B97F4A7C15ull, (int64_t)k);
    for (uint64_t k = 1; k <= 5000; k++)
        ok &= vr_idmap_get(&m, k * 0x9E3779B97F4A7C15ull) == (int64_t)k;
    OK(ok, "the first 5,000 keys keep their values through growth");
    INT_EQ(m.len, 5000, "the map stops at its bound");
    INT_EQ(vr_idmap_get(&m, 6000 * 0x9E3779B97F4A7C15ull), 0, "a key past the bound is not kept");
    vr_idmap_put(&m, 1 * 0x9E3779B97F4A7C15ull, 77);
    INT_EQ(vr_idmap_get(&m, 1 * 0x9E3779B97F4A7C15ull), 77, "a known key is updated in place");
    vr_idmap_free(&m);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_idmap);
    return harness_summary();
}
