#include "render/view/sections.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

typedef struct {
    const char *name;
    const char *partial; /* its template */
    const char *needs;   /* the view's key it shows: present when that is a
                            non-empty array, an object or true; NULL: always */
} section;

/* The order a reader needs: the verdict, where the memory went
 * at the peak, the advice ranked by saving, the findings in full, then the
 * details: what was read, the job as a whole, each device in depth. */
static const section sections[] = {
    {"verdict", "verdict.md", NULL},
    {"breakdown", "breakdown.md", "has_breakdown"},
    {"advice", "advice.md", "advice"},
    /* How to read the rest (who made it, the clock, the units): after
     * what the first screen must show. */
    {"about", "about.md", NULL},
    {"findings", "findings.md", "findings"},
    {"inputs", "inputs.md", NULL},
    {"ranks", "ranks.md", "ranks"},
    {"oom_events", "oom_events.md", "oom_events"},
    {"devices", "devices.md", NULL},
    {"gpus", "gpus.md", "gpus"},
    {"allocator", "allocator.md", "allocator_stats"},
    {"profiler_tables", "profiler_tables.md", "profiler_tables"},
    {"bandwidth_or_capacity", "bandwidth.md", "bandwidth_or_capacity"},
    {"memory_prints", "memory_prints.md", "memory_prints"},
    {"server_memory", "server_memory.md", "server_memory"},
};

#define NSECTIONS (sizeof sections / sizeof *sections)

static int present(const section *s, const cJSON *view)
{
    if (!s->needs)
        return 1;
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(view, s->needs);
    return cJSON_IsObject(data) || cJSON_IsTrue(data) || (cJSON_IsArray(data) && data->child);
}

int vr_sections_render(vr_templates *t, cJSON *view, vr_mustache_escape_fn escape, vr_error *err)
{
    vr_buf text = VR_BUF_INIT;
    for (size_t i = 0; i < NSECTIONS; i++) {
        if (!present(&sections[i], view))
            continue;
        size_t len;
        char *part = vr_templates_render(t, sections[i].partial, view, escape, &len, err);
        if (!part) {
            vr_buf_free(&text);
            return -1;
        }
        vr_buf_append(&text, part, len);
        free(part);
    }
    /* report.md's {{{sections}}} line ends with the last newline. */
    if (text.len && text.data[text.len - 1] == '\n')
        text.data[--text.len] = '\0';
    cJSON_AddStringToObject(view, "sections", text.data ? text.data : "");
    vr_buf_free(&text);
    return 0;
}
