#include "render/view/kinds.h"

#include <string.h>

/* Every kind of vr_analyze_finding_kinds, as a cause (the headline's
 * words for the OOM kinds: diagnose.c's cause_words). */
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

const char *vr_view_kind_words(const char *kind)
{
    for (size_t i = 0; kind && i < sizeof kinds / sizeof *kinds; i++)
        if (strcmp(kinds[i].slug, kind) == 0)
            return kinds[i].words;
    return kind;
}

static const char *string_of(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

static void add_kind_words(cJSON *list)
{
    cJSON *a;
    cJSON_ArrayForEach(a, list)
    {
        const char *kind = string_of(a, "kind");
        if (kind)
            cJSON_AddStringToObject(a, "kind_words", vr_view_kind_words(kind));
    }
}

/* The secondary causes the detail does not name already. */
static void add_secondary_words(cJSON *finding)
{
    const char *detail = string_of(finding, "detail");
    cJSON *words = cJSON_AddArrayToObject(finding, "secondary_words");
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(finding, "secondary"))
    {
        if (!cJSON_IsString(s) || (detail && strstr(detail, s->valuestring)))
            continue;
        cJSON_AddItemToArray(words, cJSON_CreateString(vr_view_kind_words(s->valuestring)));
    }
}

void vr_view_kinds(cJSON *doc)
{
    add_kind_words(cJSON_GetObjectItemCaseSensitive(doc, "advice"));
    cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "findings"))
    {
        add_kind_words(cJSON_GetObjectItemCaseSensitive(f, "advice"));
        add_secondary_words(f);
    }
}
