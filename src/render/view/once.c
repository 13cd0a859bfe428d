#include "render/view/once.h"

#include <stdio.h>
#include <string.h>

/* A paragraph is shown where every key of `when` is truthy and every key
 * of `unless` is not (as the templates' sections test them). */
#define KEYS_MAX 4

typedef struct {
    const char *name;
    const char *when[KEYS_MAX];
    const char *unless[KEYS_MAX];
} paragraph;

static const paragraph paragraphs[] = {
    /* breakdown.md.mustache: "Which part of the model held it", then how
     * its modules are named */
    {"by_module", {"has_peak_categories", "has_peak_by_module"}, {NULL}},
    {"by_module_profiler",
     {"has_peak_categories", "has_peak_by_module", "peak_by_module_from_profiler"},
     {NULL}},
    {"by_module_frames",
     {"has_peak_categories", "has_peak_by_module", "peak_by_module_from_frames"},
     {NULL}},
    /* how to read the estimate beside the measured parts */
    {"estimate", {"has_peak_categories", "estimate"}, {"breakdown_all_unknown"}},
    /* device.md.mustache: how the list of what was live is grouped */
    {"live_placed_trace",
     {"has_live_at_peak_groups", "live_at_peak_placed", "has_trace"},
     {NULL}},
    {"live_placed_snapshot", {"has_live_at_peak_groups", "live_at_peak_placed"}, {"has_trace"}},
    {"live_no_frames_trace",
     {"has_live_at_peak_groups", "has_trace"},
     {"live_at_peak_placed", "locations_recorded"}},
    {"live_no_frames_snapshot",
     {"has_live_at_peak_groups"},
     {"live_at_peak_placed", "locations_recorded", "has_trace"}},
    {"live_unplaced_trace",
     {"has_live_at_peak_groups", "locations_recorded", "has_trace"},
     {"live_at_peak_placed"}},
    {"live_unplaced_snapshot",
     {"has_live_at_peak_groups", "locations_recorded"},
     {"live_at_peak_placed", "has_trace"}},
    /* the tables' and lists' introductions */
    {"phase_peaks", {"has_phase_peaks"}, {NULL}},
    {"operators", {"has_operators"}, {NULL}},
    {"top_sites", {"final_reserved_h", "has_top_sites"}, {NULL}},
};

/* As Mustache tests a section: false, null, "", 0 items and a missing key
 * are false; anything else true. */
static int truthy(const cJSON *dev, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(dev, key);
    if (!v || cJSON_IsFalse(v) || cJSON_IsNull(v))
        return 0;
    if (cJSON_IsString(v))
        return v->valuestring[0] != '\0';
    if (cJSON_IsArray(v))
        return cJSON_GetArraySize(v) > 0;
    return 1;
}

static int shows(const cJSON *dev, const paragraph *p)
{
    for (int i = 0; i < KEYS_MAX && p->when[i]; i++)
        if (!truthy(dev, p->when[i]))
            return 0;
    for (int i = 0; i < KEYS_MAX && p->unless[i]; i++)
        if (truthy(dev, p->unless[i]))
            return 0;
    return 1;
}

void vr_view_explain_once(cJSON *doc)
{
    const cJSON *devices = cJSON_GetObjectItemCaseSensitive(doc, "devices");
    for (size_t k = 0; k < sizeof paragraphs / sizeof *paragraphs; k++) {
        const paragraph *p = &paragraphs[k];
        char name[64];
        snprintf(name, sizeof name, "explain_%s", p->name);
        int said = 0;
        cJSON *dev;
        cJSON_ArrayForEach(dev, devices)
        {
            int here = shows(dev, p);
            cJSON_AddBoolToObject(dev, name, here && !said);
            said |= here;
        }
    }
}
