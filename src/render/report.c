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
#include "render/view/paths.h"
#include "render/view/stacks.h"
#include "render/view/templates.h"
#include "render/view/view.h"
#include "util/units.h"

static int64_t int_of(const cJSON *obj, const char *key, int64_t dflt)
{
    long long v;
    return vr_results_int(cJSON_GetObjectItemCaseSensitive(obj, key), &v) ? (int64_t)v : dflt;
}

/*-*** the view ***/

/* Less to read: a memory print's lines read "line 2" when it is one
 * line (lines_text). */
static void describe_print_lines(cJSON *view)
{
    cJSON *mp;
    cJSON_ArrayForEach(mp, cJSON_GetObjectItemCaseSensitive(view, "memory_prints"))
    {
        int64_t first = int_of(mp, "first_line", -1), last = int_of(mp, "last_line", -1);
        char text[64];
        if (first == last)
            snprintf(text, sizeof text, "line %lld", (long long)first);
        else
            snprintf(text, sizeof text, "lines %lld-%lld", (long long)first, (long long)last);
        cJSON_AddStringToObject(mp, "lines_text", text);
    }
}

/* nvidia-smi/gpustat: every GPU's processes in one table, shown when
 * some GPU lists one (has_gpu_processes). */
static void describe_gpu_processes(cJSON *view)
{
    int procs = 0;
    cJSON *gpu;
    cJSON_ArrayForEach(gpu, cJSON_GetObjectItemCaseSensitive(view, "gpus")) procs +=
        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(gpu, "smi_processes"));
    cJSON_AddBoolToObject(view, "has_gpu_processes", procs > 0);
}

/* "has_breakdown": a device has categories at its peak (the breakdown
 * section's condition); each device's estimate gains "params_n". */
static void describe_breakdowns(cJSON *view)
{
    int any = 0, explained[2] = {0, 0};
    cJSON *dev;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(view, "devices"))
    {
        int has =
            cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(dev, "peak_categories")) > 0;
        /* the categories' explanation: under the first table of its kind only */
        int stated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dev, "categories_stated"));
        cJSON_AddBoolToObject(dev, "explain_categories", has && !explained[stated]);
        explained[stated] |= has;
        any |= has;
        cJSON *est = cJSON_GetObjectItemCaseSensitive(dev, "estimate");
        if (cJSON_IsObject(est)) {
            char n[32];
            vr_units_count(int_of(est, "params", 0), n, sizeof n);
            cJSON_AddStringToObject(est, "params_n", n);
        }
    }
    cJSON_AddBoolToObject(view, "has_breakdown", any);
}

static void fill_outcome(const cJSON *doc, vr_report_outcome *o)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "verdict");
    const cJSON *cause = cJSON_GetObjectItemCaseSensitive(v, "cause");
    snprintf(o->label, sizeof o->label, "%s", vr_verdict_label(v));
    snprintf(o->cause, sizeof o->cause, "%s", cJSON_IsString(cause) ? cause->valuestring : "");
}

/* Verdict paragraphs and advice items shown: all a reader scans first. */
#define REPORT_PARAGRAPHS 10
#define REPORT_ADVICE 3
#define SUMMARY_PARAGRAPHS 5
#define SUMMARY_DEVICES 8

/* The document as the templates' view: Markdown's and HTML's. */
static void make_view(cJSON *doc, int summary)
{
    vr_view_decorate(doc);
    vr_view_paths(doc);
    vr_view_stacks(doc);
    describe_print_lines(doc);
    describe_gpu_processes(doc);
    describe_breakdowns(doc);
    vr_verdict_view(doc, summary ? SUMMARY_PARAGRAPHS : REPORT_PARAGRAPHS, REPORT_ADVICE);
    if (summary)
        vr_verdict_summary_view(doc, SUMMARY_DEVICES);
}

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
        make_view(doc, opts->summary);
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
