/*-*** sections.h: the report's sections, in order ***/
/*
 * A report is a title and a list of sections: the verdict, the breakdown
 * at the peak (when a device has one), the findings (only when there are
 * some), then the details: the inputs, the ranks (only when the job had
 * more than one), the devices. The list is a table in sections.c: it decides which
 * sections there are and in what order; each section's template (a
 * partial in templates/) decides its wording. vr_sections_render() renders
 * the sections present, in order, each over the whole view (a section's
 * template may use any key, e.g. "html"), and sets the view's "sections"
 * to the text, which report.md places with {{{sections}}}. The text ends
 * without its last newline: the template's line gives it back.
 *
 * Ownership: the view is changed in place (one key added).
 */
#ifndef VR_SECTIONS_H
#define VR_SECTIONS_H

#include <cjson/cJSON.h>

#include "util/error.h"
#include "render/view/mustache.h"
#include "render/view/templates.h"

int vr_sections_render(vr_templates *t, cJSON *view, vr_mustache_escape_fn escape,
                       vr_error *err);

#endif
