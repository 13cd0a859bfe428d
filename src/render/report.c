/* The report's entry (report.h): the results document built, made a
 * view for the templates where the format wants one, and handed to the
 * format's writer (render/out/, one file per format) from the table
 * below. */
#include "render/report.h"

#include <stdio.h>

#include "render/out/json_out.h"
#include "render/out/out.h"
#include "render/results/doc.h"
#include "render/results/results.h"
#include "render/results/verdict.h"
#include "render/view/templates.h"
#include "render/view/view.h"

static void fill_outcome(const cJSON *doc, vr_report_outcome *o)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "verdict");
    const cJSON *cause = cJSON_GetObjectItemCaseSensitive(v, "cause");
    snprintf(o->label, sizeof o->label, "%s", vr_verdict_label(v));
    snprintf(o->cause, sizeof o->cause, "%s", cJSON_IsString(cause) ? cause->valuestring : "");
}

/* Verdict paragraphs and advice items shown: all a reader scans first. */
static const vr_view_opts full_view = {10, 3, 0};
/* --summary: fewer paragraphs, and at most this many devices. */
static const vr_view_opts summary_view = {5, 3, 8};

/* The formats (out.h): a view is the document decorated for the
 * templates (Markdown, HTML), else the document itself (JSON, the
 * results' contract: docs/json.md); with --summary, the short form where
 * a format has one. */
typedef struct {
    vr_format format;
    int view;
    vr_out_fn full, summary;
} output_format;

static const output_format formats[] = {
    {VR_FORMAT_MARKDOWN, 1, vr_out_markdown, vr_out_summary},
    {VR_FORMAT_HTML, 1, vr_out_html, NULL},
    {VR_FORMAT_JSON, 0, vr_out_json, NULL},
};

static const output_format *format_of(vr_format format)
{
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        if (formats[i].format == format)
            return &formats[i];
    return NULL;
}

void vr_report_escape_markdown(void *out, vr_mustache_append_fn append, const char *s, size_t len)
{
    vr_out_escape_markdown(out, append, s, len);
}

int vr_report_render(vr_db *db, const vr_report_opts *opts, vr_buf *out, vr_error *err)
{
    const output_format *f = format_of(opts->format);
    if (!f)
        return vr_fail(err, "no writer for report format %d", (int)opts->format);
    vr_results_opts ro = {10, 20, f->view};
    cJSON *doc = vr_results_build(db, &ro, err);
    if (!doc)
        return -1;
    if (opts->outcome)
        fill_outcome(doc, opts->outcome);
    vr_out_ctx c = {db, NULL, opts->flush, opts->flush_ctx, VR_REPORT_FLUSH_BYTES};
    vr_templates t;
    if (f->view) {
        vr_view_make(doc, opts->summary ? &summary_view : &full_view);
        vr_templates_init(&t, opts->template_dir);
        c.templates = &t;
    }
    vr_out_fn write = opts->summary && f->summary ? f->summary : f->full;
    int rc = write(&c, doc, out, err);
    if (f->view)
        vr_templates_free(&t);
    cJSON_Delete(doc);
    return rc;
}

cJSON *vr_report_results(vr_db *db, vr_error *err)
{
    vr_results_opts ro = {10, 20, 0};
    return vr_results_build(db, &ro, err);
}
