/*-*** view.h: the results document dressed for templates ***/
/*
 * vr_view_make() runs the view's passes (a table in view.c, in order) over
 * the document. Templates cannot format numbers, so it adds, beside each
 * figure, the text a reader wants (rules by key suffix):
 *   X_bytes (integer)  -> X_h      "5.06 GiB" (and bytes -> bytes_h),
 *                         X_nonzero true when not 0
 *   X_ts_ns            -> X_t      "12.345 s" after the start of the trace
 *                                  (and ts_ns -> t)
 *   X_ns (a duration)  -> X_d      "1.23 ms"
 *   X_share (0..1)     -> X_pct    "37.2%"
 *   X (count keys)     -> X_n      "1,234,567"
 *   X (array)          -> has_X    true when not empty
 * and "t0_ns", the earliest start of any source, to which times are
 * relative, and "multiple_sources" when there is more than one. Each
 * source gets, from its "tolerated" counts, "notes" (sentences {text,
 * last}: data skipped first, then text repaired), "data_skipped", and
 * "complete" (not cut and nothing skipped). "ranks_summary", when there,
 * gets "imbalance_x" ("1.37", or null) and "first_tied" (the next rank
 * peaked at the same instant as the first). A device with a
 * "peak_breakdown" gets "peak_categories" (rows {category, bytes,
 * peak_share} in PyTorch's order, for the table) and
 * "breakdown_all_unknown" (no byte has a category). The JSON output is the
 * undecorated document.
 *
 * vr_verdict_banner_html() is the HTML banner (id="verdict") of the
 * document's "verdict" (verdict.h), its text escaped.
 *
 * view/ is the floor above results/: it reads the results document (and
 * its parts' headers) and dresses it; it never reads the database. Below
 * svg/ (charts) and out/ (the output formats), which it never includes.
 *
 * Ownership: decorates the tree in place; the banner is the caller's to
 * free.
 */
#ifndef VR_VIEW_H
#define VR_VIEW_H

#include <cjson/cJSON.h>

/* How much of the verdict the view keeps (verdict.h): paragraphs and
 * advice items; summary_devices > 0: the --summary form, of at most so
 * many devices. */
typedef struct {
    int paragraphs, advice, summary_devices;
} vr_view_opts;

void vr_view_make(cJSON *doc, const vr_view_opts *o);

char *vr_verdict_banner_html(const cJSON *doc);

#endif
