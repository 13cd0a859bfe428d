/*-*** test_many.c: the choice of rows to show (render/results/many) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>

#include "render/results/many.h"

#include "harness.h"

/* The choice made as the rows come (vr_many_offer) is vr_many_choose's
 * over all of them, and so is its summary: lists of 0 to 60 rows with
 * flags, missing weights and ties, each row a cJSON number of its index. */
static void test_many_stream(void)
{
    unsigned seed = 12345;
    int bad = 0;
    for (int trial = 0; trial < 400; trial++) {
        size_t n = (size_t)(trial % 61);
        vr_many_rank r[64];
        unsigned char keep[64];
        vr_many_stream ms;
        vr_many_stream_init(&ms);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            unsigned v = seed >> 8;
            r[i].flagged = v % 11 == 0;
            r[i].has_weight = v % 7 != 0;
            r[i].weight = r[i].has_weight ? (int64_t)(v / 7 % (trial % 3 ? 9 : 1000)) : 0;
            cJSON *row = vr_many_wants(&ms, &r[i]) ? cJSON_CreateNumber((double)i) : NULL;
            vr_many_offer(&ms, &r[i], row);
        }
        cJSON *summary, *kept = vr_many_finish(&ms, "w", &summary);
        vr_many_choose(r, n, VR_MANY_IN_FULL, keep);
        const cJSON *k = kept->child;
        for (size_t i = 0; i < n; i++) {
            int got = k && (size_t)k->valuedouble == i;
            bad += got != keep[i];
            if (got)
                k = k->next;
        }
        bad += k != NULL;
        cJSON *want = vr_many_all_kept(keep, n) ? NULL : vr_many_summary(r, n, keep, "w");
        bad += !(summary ? want && cJSON_Compare(summary, want, 1) : !want);
        cJSON_Delete(want);
        cJSON_Delete(summary);
        cJSON_Delete(kept);
    }
    INT_EQ(bad, 0,
           "400 lists: the rows kept as they come, and the summary, are vr_many_choose's");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_many_stream);
    return harness_summary();
}
