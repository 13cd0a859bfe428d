/*-*** test_slots.c: the charged slots (util/slots) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>
#include <stdlib.h>

#include "util/slots.h"

#include "harness.h"

/* A charge callback with a ceiling: what vr_slots asks for and gives back. */
typedef struct {
    long long held, peak, ceiling;
} slots_budget;

static int slots_charge(void *ctx, ptrdiff_t bytes)
{
    slots_budget *b = ctx;
    if (bytes > 0 && b->held + bytes > b->ceiling)
        return -1;
    b->held += bytes;
    b->peak = b->held > b->peak ? b->held : b->peak;
    return 0;
}

static void test_slots(void)
{
    /* 200,000 slots over 49 pages, 3 in memory: set in order, each read
     * back at random (most from the file), changed, and read again. */
    enum { N = 200000 };
    uint32_t *want = calloc(N, sizeof *want);
    slots_budget b = {0, 0, 1 << 20};
    vr_slots s;
    vr_slots_init(&s, 3, slots_charge, &b);
    int ok = 1;
    for (uint32_t i = 0; i < N; i += 1 + i % 3) {
        want[i] = i * 2654435761u | 1u;
        ok &= vr_slots_set(&s, i, want[i]) == 0;
    }
    uint32_t x = 12345;
    for (int k = 0; k < 20000 && ok; k++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        uint32_t i = x % N;
        ok &= vr_slots_get(&s, i) == want[i];
        if (k % 7 == 0) {
            want[i] = x;
            ok &= vr_slots_set(&s, i, x) == 0;
        }
    }
    for (uint32_t i = 0; i < N && ok; i++)
        ok &= vr_slots_get(&s, i) == want[i];
    OK(ok, "200,000 slots, 3 pages of 4,096 in memory: every value read back as set");
    OK(s.nresident == 3 && s.made == (N + VR_SLOTS_PAGE - 1) / VR_SLOTS_PAGE,
       "3 pages in memory, %zu made", s.made);
    OK(s.writes > 40 && s.loads > 40, "pages went out (%llu) and came back (%llu)",
       (unsigned long long)s.writes, (unsigned long long)s.loads);
    OK(b.peak < (long long)(4 * VR_SLOTS_PAGE * 4 + 4096),
       "memory counted stays at 3 pages and tables (%lld)", b.peak);
    OK(vr_slots_get(&s, (uint64_t)N * 8) == 0 && vr_slots_peek(&s, 5) == NULL,
       "a slot past every page reads 0; one in the file is not peeked");
    vr_slots_free(&s);
    INT_EQ(b.held, 0, "everything counted is given back");

    /* The charge refused: the set fails, and says so, and reads stay safe. */
    slots_budget tight = {0, 0, 2 * VR_SLOTS_PAGE * 4 + 200};
    vr_slots_init(&s, 8, slots_charge, &tight);
    ok = 1;
    uint32_t i = 0;
    for (; i < 8 * VR_SLOTS_PAGE && ok; i += VR_SLOTS_PAGE)
        ok &= vr_slots_set(&s, i, i + 1) == 0;
    OK(!ok && vr_slots_failed(&s) == VR_SLOTS_NO_MEMORY,
       "past the charge's ceiling a set fails: no memory (at slot %u)",
       i - (uint32_t)VR_SLOTS_PAGE);
    OK(vr_slots_get(&s, 0) == 1 && vr_slots_get(&s, 7 * VR_SLOTS_PAGE) == 0,
       "what was set still reads back; what was not reads 0");
    vr_slots_free(&s);
    INT_EQ(tight.held, 0, "and everything is given back");
    free(want);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_slots);
    return harness_summary();
}
