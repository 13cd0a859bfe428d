/* A finding's kind in words (kind_words.h). */
#include "db/kind_words.h"

#include <stddef.h>
#include <string.h>

/* Every kind of vr_analyze_finding_kinds, as a cause. */
static const struct {
    const char *slug, *words;
} kinds[] = {
    {"capacity", "the GPU was full"},
    {"fragmentation", "free memory was fragmented"},
    {"other-process", "another process held the memory"},
    {"leak", "memory kept growing"},
    {"oversized-request", "the request was larger than the GPU"},
    {"inconsistent", "the figures contradict each other"},
    {"insufficient-evidence", "too little evidence to tell why"},
    {"near-capacity", "memory came near the capacity"},
    {"rank-imbalance", "the ranks' memory differed"},
    {"device-imbalance", "the devices' memory differed"},
    {"suspect-input", "an input looks wrong"},
};

const char *vr_kind_words(const char *kind)
{
    for (size_t i = 0; kind && i < sizeof kinds / sizeof *kinds; i++)
        if (strcmp(kinds[i].slug, kind) == 0)
            return kinds[i].words;
    return kind;
}
