/*-*** once.h: each explanation once per report ***/
/*
 * The paragraphs that say how to read a part of a device's section (how
 * modules are named, what the operators' columns mean, what a phase is)
 * read the same under every device. Each is written under the first
 * device that shows it ("explain_<name>" true there); a later device that
 * shows the same part gets "explain_<name>" false, and its template a
 * short line that refers to it instead. Every device gets every flag, so
 * a template never finds another object's.
 *
 * Ownership: decorates the document's devices in place.
 */
#ifndef VR_VIEW_ONCE_H
#define VR_VIEW_ONCE_H

#include <cjson/cJSON.h>

void vr_view_explain_once(cJSON *doc);

#endif
