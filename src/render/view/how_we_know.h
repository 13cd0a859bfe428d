/*-*** how_we_know.h: the breakdown's inferences in words ***/
/*
 * A device's "explained" rows (results/explained.h) and "unknown_at_peak"
 * as the sentences the section "Where the memory went at the peak" shows
 * under its table: "how_we_know" (rows {text}), one per inference, and
 * "unknown_notes" (rows {text}): what stays unknown, why, and what to
 * record next time, in the words of the device's kind of input (a
 * snapshot or a trace, `snapshot` true when its peak's source is one).
 * Every figure is the document's; nothing is read of the input but what
 * the document holds, and templates escape the text.
 *
 * Ownership: decorates the device in place.
 */
#ifndef VR_VIEW_HOW_WE_KNOW_H
#define VR_VIEW_HOW_WE_KNOW_H

#include <cjson/cJSON.h>

void vr_view_how_we_know(const cJSON *doc, cJSON *dev);

#endif
