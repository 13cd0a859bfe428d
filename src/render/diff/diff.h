/*-*** diff.h: two runs compared, from their results documents ***/
/*
 * `vramreport diff BEFORE AFTER` (docs/diff.md): each side is analysed as
 * a run is and its results document built (results.h, the document of
 * `-o x.json`); the comparison is a pure function of the two documents,
 * vr_diff_build, into one diff document, {"diff": {...}}, whose keys are
 * docs/diff.md's contract. Devices are paired by (rank, index): the rank
 * (null counts as one rank of its own) and the N of "cuda:N"; devices of
 * one key pair in the order the documents list them; the rest are listed
 * as unpaired. Integers are exact (cJSON raw numbers).
 *
 *   diff.c        pairing, the per-pair figures, findings, the gate
 *   diff_sites.c  the allocation sites live at the peak, side by side
 *   diff_live.c   each side's sites live at the peak, in full, read from
 *                 its database into its document before the comparison
 *   diff_more.c   the devices past the 16 in full, read for pairing
 *   diff_advice.c BEFORE's advice beside what AFTER measured
 *   diff_timeline.c  each side's allocated memory over time, read from
 *                 its database into its document before the comparison
 *   diff_out.c    the outputs: JSON, Markdown and HTML (templates
 *                 diff.md, diff.html; the view's texts), the summary
 *
 * Floor: render/ (above results/ and view/, whose helpers it uses; no
 * other floor of render/ includes it). Everything taken from an input
 * is escaped for the format, as the report does (report.h).
 *
 * Ownership: returned trees are the caller's (cJSON_Delete); the inputs
 * are only read.
 */
#ifndef VR_DIFF_H
#define VR_DIFF_H

#include <cjson/cJSON.h>

#include "db/db.h"
#include "render/report.h"
#include "render/results/doc.h"
#include "util/buf.h"
#include "util/error.h"

/* A side as the command line gave it. */
typedef struct {
    const char *given; /* the argument: a file, a folder or a database */
    int partial;       /* some of its inputs failed (said on stderr) */
} vr_diff_side;

cJSON *vr_diff_build(const cJSON *before, const cJSON *after, const vr_diff_side *b,
                     const vr_diff_side *a);

/* Each device of a side's results document (built from `db`) gains
 * "diff_timeline": its allocated memory over time, at most
 * VR_DIFF_TIMELINE_POINTS [ns since its first memory event, bytes], each
 * the highest of its stretch of time (the peak is one of them). The
 * comparison copies them into each pair's "timeline". -1 (err set) when
 * the database fails. */
#define VR_DIFF_TIMELINE_POINTS 400
int vr_diff_add_timelines(vr_db *db, cJSON *doc, vr_error *err);

/* Each device of a side's results document gains "diff_sites": {"by":
 * "frame", "module" or "operator", "sites": [{"site", "bytes"}]}, every
 * site live at its peak (not the document's top lists; a site may have
 * several rows, to be summed), read from `db` by the report's rule and
 * queries (diff_live.c). -1 (err set) when the
 * database fails. */
int vr_diff_add_sites(vr_db *db, cJSON *doc, vr_error *err);

/* With more than 16 devices, a side's document gains its more_devices[]
 * rows (which the results document leaves to the JSON writer), so that
 * they pair too, by their peaks only (diff_more.c). All of them are held
 * (a row each, as the JSON report writes). -1 (err set) on failure. */
int vr_diff_add_more_devices(vr_db *db, cJSON *doc, vr_error *err);

/* How many pairs' peak allocated grew by more than pct percent (a peak
 * that was 0 and is not any more grew without bound). */
int vr_diff_grew_over(const cJSON *diff, double pct);

/* The diff as `format` (Markdown, HTML: one page without script, its
 * content in the element id="diff"; JSON: the document), or with
 * `summary` a few Markdown lines for a ticket comment. Templates as the
 * report's (templates.h): template_dir NULL for the embedded ones. */
int vr_diff_render(const cJSON *diff, vr_format format, int summary, const char *template_dir,
                   vr_buf *out, vr_error *err);

/*-*** shared by the files of render/diff/ ***/

/* {"before", "after", "delta"} from two integers (has_*: known; an
 * unknown side is null, and so is the delta). */
cJSON *vr_diff_triple(int has_b, long long b, int has_a, long long a);
/* An exact integer as the document holds it. */
cJSON *vr_diff_int(long long v);
/* Whether a finding is about the device: the same id, and the same rank or
 * neither naming one. */
int vr_diff_finding_about(const cJSON *finding, const cJSON *dev);

/* diff_sites.c: the pair's "sites" (its VR_DIFF_SITES_KEPT largest
 * changes), "sites_more" (the rest, summed) and "sites_by" added to
 * `pair`, from each device's "diff_sites". */
#define VR_DIFF_SITES_KEPT 20
void vr_diff_sites(cJSON *pair, const cJSON *before_dev, const cJSON *after_dev);
/* diff_advice.c: the pair's "advice_checked" from BEFORE's advice for
 * its device, beside the drop AFTER's peak shows. */
void vr_diff_advice(cJSON *pair, const cJSON *before_doc, const cJSON *before_dev,
                    const cJSON *after_dev);

#endif
