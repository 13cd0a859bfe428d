/*-*** sections.h: the report's sections, in order ***/
/*
 * A report is a title and a list of sections, the table sections[] in
 * sections.c (14 of them: the verdict, the breakdown at the peak, the
 * advice, how to read the report, the findings, the inputs, the ranks,
 * the out-of-memory errors, the devices, the GPUs, the allocator's
 * statistics, the profiler's tables, bandwidth or capacity, the memory
 * prints; each but the verdict, the about, the inputs and the devices
 * only when the view has its key). The table decides which sections there
 * are and in what order; each section's template (a partial in
 * templates/) decides its wording. A new section is a row there and its
 * template (Makefile.am's EMBEDDED). vr_sections_render() renders
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

int vr_sections_render(vr_templates *t, cJSON *view, vr_mustache_escape_fn escape, vr_error *err);

#endif
