/* The HTML report (out.h): the Markdown through cmark-gfm in its safe
 * mode, each figure (html_charts.h) put in where its placeholder is, the
 * page template around. No script, no network. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "render/out/html_charts.h"
#include "render/out/md_html.h"
#include "render/out/out.h"
#include "render/results/doc.h"
#include "render/results/results.h"
#include "render/results/verdict.h"
#include "render/view/stacks.h"
#include "render/view/view.h"

/*-*** escaping ***/

/* For the HTML page around cmark's output. */
static void escape_html(void *out, vr_mustache_append_fn append, const char *s, size_t len)
{
    vr_out_escape_visible(out, append, s, len, vr_mustache_escape_html);
}

/*-*** the top sites' stacks ***/

static void put_html(vr_buf *b, const char *s)
{
    escape_html(b, vr_buf_append_cb, s, strlen(s));
}

/* Frames as list items; with `mark`, those the short stack leaves out
 * (vr_stack_frame_filtered) say so in their class. */
static void frame_items(vr_buf *b, const cJSON *frames, int mark)
{
    const cJSON *line;
    cJSON_ArrayForEach(line, frames)
    {
        const char *f = cJSON_IsString(line) ? line->valuestring : "";
        vr_buf_puts(b, mark && vr_stack_frame_filtered(f) ? "<li class=\"vr-filtered\"><code>"
                                                          : "<li><code>");
        put_html(b, f);
        vr_buf_puts(b, "</code></li>\n");
    }
}

static void more_item(vr_buf *b, int64_t more)
{
    if (more > 0)
        vr_buf_printf(b, "<li class=\"vr-more\">\xe2\x80\xa6 %lld more</li>\n", (long long)more);
}

/* The whole stack as the results hold it (its first 16 frames), behind
 * a <details> of its own: shown when the short one left something out. */
static void full_stack_html(vr_buf *b, const cJSON *site, const cJSON *stack)
{
    int held = cJSON_GetArraySize(stack);
    int64_t all = vr_results_int_or(site, "stack_depth", held) -
                  vr_results_int_or(site, "stack_skipped", 0);
    if (all > held)
        vr_buf_printf(b,
                      "<details class=\"vr-full-stack\"><summary>Full stack (its first %d "
                      "of %lld frames)</summary>\n",
                      held, (long long)all);
    else
        vr_buf_printf(b,
                      "<details class=\"vr-full-stack\"><summary>Full stack (%d frame%s)"
                      "</summary>\n",
                      held, held == 1 ? "" : "s");
    vr_buf_puts(b, "<ol class=\"vr-stack\">\n");
    frame_items(b, stack, 1);
    more_item(b, all - held);
    vr_buf_puts(b, "</ol>\n</details>\n");
}

/* A site's example stack, innermost frame first, shortened as the
 * Markdown's is (render/view/stacks.h: stack_top, stack_filtered,
 * stack_more), the full stack one click away. */
static void site_stack_html(vr_buf *b, const cJSON *site)
{
    const cJSON *stack = cJSON_GetObjectItemCaseSensitive(site, "stack");
    if (!cJSON_IsArray(stack) || !stack->child) {
        vr_buf_puts(b, "<p class=\"vr-more\">No stack was recorded.</p>\n");
        return;
    }
    int64_t skipped = vr_results_int_or(site, "stack_skipped", 0);
    int64_t filtered = vr_results_int_or(site, "stack_filtered", 0),
            more = vr_results_int_or(site, "stack_more", 0);
    if (skipped > 0)
        vr_buf_printf(b, "<p class=\"vr-more\">Python frames; %lld C++ frame%s left out.</p>\n",
                      (long long)skipped, skipped == 1 ? "" : "s");
    if (filtered > 0) {
        vr_buf_printf(b, "<p class=\"vr-more\">%lld frame%s left out: ", (long long)filtered,
                      filtered == 1 ? "" : "s");
        const char *kinds = vr_results_string(site, "stack_filtered_kinds");
        if (kinds)
            put_html(b, kinds);
        vr_buf_puts(b, ".</p>\n");
    }
    const cJSON *top = cJSON_GetObjectItemCaseSensitive(site, "stack_top");
    if (cJSON_GetArraySize(top) > 0 || more > 0) {
        vr_buf_puts(b, "<ol class=\"vr-stack\">\n");
        frame_items(b, top, 0);
        more_item(b, more);
        vr_buf_puts(b, "</ol>\n");
    }
    if (filtered > 0 || cJSON_GetArraySize(top) < cJSON_GetArraySize(stack))
        full_stack_html(b, site, stack);
}

/* Each top site as <details>: its line, memory and count as the summary,
 * its example stack inside; no script needed to open one. */
static char *sites_html(const cJSON *dev)
{
    vr_buf b = VR_BUF_INIT;
    vr_buf_puts(&b, "<div class=\"vr-sites\">\n");
    const cJSON *site;
    cJSON_ArrayForEach(site, cJSON_GetObjectItemCaseSensitive(dev, "top_sites"))
    {
        const char *frame = vr_results_string(site, "frame"),
                   *bytes = vr_results_string(site, "bytes_h");
        int64_t count = vr_results_int_or(site, "count", 0);
        vr_buf_puts(&b, "<details class=\"vr-site\"><summary>");
        if (frame) {
            vr_buf_puts(&b, "<code>");
            put_html(&b, frame);
            vr_buf_puts(&b, "</code>");
        } else
            vr_buf_puts(&b, "(torch&#39;s own frames only)");
        vr_buf_puts(&b, " \xe2\x80\x94 ");
        put_html(&b, bytes ? bytes : "");
        vr_buf_printf(&b, " in %lld allocation%s</summary>\n", (long long)count,
                      count == 1 ? "" : "s");
        site_stack_html(&b, site);
        vr_buf_puts(&b, "</details>\n");
    }
    vr_buf_puts(&b, "</div>");
    return vr_buf_detach(&b);
}

/*-*** figures in the page ***/

/* Each figure (a chart, a segment map, the top sites' <details>) gets a
 * placeholder paragraph, replaced by its HTML after cmark has rendered the
 * Markdown (cmark's safe mode would drop raw SVG). The nonce keeps input
 * text from ever matching a placeholder. */
typedef struct {
    char **html;
    int n, cap;
    unsigned nonce;
} figures;

static void make_token(char *out, size_t n, unsigned nonce, int i)
{
    snprintf(out, n, "vrchart%08x%d", nonce, i);
}

/* Takes `html` (NULL: it failed); sets obj[key] to its placeholder. */
static int add_figure(figures *f, char *html, cJSON *obj, const char *key)
{
    if (!html)
        return -1;
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 8;
        f->html = vr_xrealloc(f->html, (size_t)f->cap * sizeof *f->html);
    }
    char token[48];
    make_token(token, sizeof token, f->nonce, f->n);
    f->html[f->n++] = html;
    cJSON_AddStringToObject(obj, key, token);
    return 0;
}

/* An inline piece (a file's short name with its full path in title=)
 * gets a bare token instead, replaced wherever cmark left it: it is plain
 * letters and digits, so it passes through a table cell unchanged. */
static void make_inline_token(char *out, size_t n, unsigned nonce, int i)
{
    snprintf(out, n, "vrinline%08x%d", nonce, i);
}

static void add_inline(figures *f, char *html, cJSON *obj, const char *key)
{
    add_figure(f, html, obj, key);
    char token[48];
    make_inline_token(token, sizeof token, f->nonce, f->n - 1);
    cJSON_ReplaceItemInObjectCaseSensitive(obj, key, cJSON_CreateString(token));
}

/* "<span title="/the/full/path">name</span>", for the inputs table and
 * the tables naming a source (the GPUs', the bandwidth table). */
static char *source_name_html(const char *path, const char *name)
{
    vr_buf b = VR_BUF_INIT;
    vr_buf_puts(&b, "<span title=\"");
    put_html(&b, path ? path : "");
    vr_buf_puts(&b, "\">");
    put_html(&b, name ? name : "");
    vr_buf_puts(&b, "</span>");
    return vr_buf_detach(&b);
}

/* Each row naming a source by its short name (view.c: "source_name")
 * gains "source_name_html", the name with its full path in title=. */
static void add_row_names(figures *f, cJSON *rows)
{
    cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        const char *name = vr_results_string(row, "source_name");
        if (name)
            add_inline(f, source_name_html(vr_results_string(row, "source_path"), name), row,
                       "source_name_html");
    }
}

static void figures_free(figures *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->html[i]);
    free(f->html);
}

static int make_figures(vr_db *db, cJSON *view, figures *f, vr_error *err)
{
    int64_t t0 = vr_results_int_or(view, "t0_ns", 0);
    if (add_figure(f, vr_verdict_banner_html(view),
                   cJSON_GetObjectItemCaseSensitive(view, "verdict"), "banner") < 0)
        return -1;
    cJSON *dev;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(view, "devices"))
    {
        vr_chart_x_axis axis;
        if (add_figure(f, vr_html_charts_device(db, dev, t0, &axis, err), dev, "chart") < 0)
            return -1;
        int64_t peak[VR_CATEGORY_COUNT];
        if (vr_html_charts_peak_breakdown(dev, peak) &&
            (add_figure(f, vr_html_charts_categories(db, dev, &axis, err), dev,
                        "category_chart") < 0 ||
             add_figure(f, vr_html_charts_composition(db, dev, err), dev, "composition_chart") <
                 0))
            return -1;
        if (vr_html_charts_has_snapshot(dev) &&
            add_figure(f, vr_html_charts_segmap(db, dev, err), dev, "segment_map") < 0)
            return -1;
        if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(dev, "top_sites")) > 0 &&
            add_figure(f, sites_html(dev), dev, "top_sites_html") < 0)
            return -1;
    }
    cJSON *source;
    cJSON_ArrayForEach(source, cJSON_GetObjectItemCaseSensitive(view, "sources")) add_inline(
        f, source_name_html(vr_results_string(source, "path"), vr_results_string(source, "name")),
        source, "name_html");
    static const char *const named[] = {"gpus", "bandwidth_or_capacity", "server_memory"};
    for (size_t i = 0; i < sizeof named / sizeof *named; i++)
        add_row_names(f, cJSON_GetObjectItemCaseSensitive(view, named[i]));
    cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(view, "memory_prints"))
    {
        char *html = vr_html_charts_prints(view, row, t0);
        if (html)
            add_figure(f, html, row, "chart");
    }
    if (cJSON_GetObjectItemCaseSensitive(view, "ranks_summary") &&
        (add_figure(f, vr_html_charts_rank_peaks(db, view, err), view, "rank_peaks_chart") < 0 ||
         add_figure(f, vr_html_charts_ranks(db, view, err), view, "ranks_chart") < 0))
        return -1;
    return 0;
}

/*-*** rendering ***/

static void replace_tokens(vr_buf *out, const char *html, const figures *f)
{
    const char *p = html;
    for (;;) {
        const char *hit = strstr(p, "<p>vrchart");
        if (!hit) {
            vr_buf_puts(out, p);
            return;
        }
        vr_buf_append(out, p, (size_t)(hit - p));
        p = hit + 3;
        int done = 0;
        for (int i = 0; i < f->n && !done; i++) {
            char token[48], para[64];
            make_token(token, sizeof token, f->nonce, i);
            snprintf(para, sizeof para, "<p>%s</p>", token);
            if (strncmp(hit, para, strlen(para)) == 0) {
                vr_buf_puts(out, f->html[i]);
                p = hit + strlen(para);
                done = 1;
            }
        }
        if (!done)
            vr_buf_append(out, hit, 3);
    }
}

/* The inline tokens (add_inline) of the body, replaced in place. */
static void replace_inline_tokens(vr_buf *out, const char *html, const figures *f)
{
    char prefix[32];
    make_inline_token(prefix, sizeof prefix, f->nonce, 0);
    size_t plen = strlen(prefix) - 1;
    prefix[plen] = '\0'; /* without the index */
    const char *p = html;
    for (const char *hit; (hit = strstr(p, prefix)) != NULL;) {
        char *end;
        long i = strtol(hit + plen, &end, 10);
        vr_buf_append(out, p, (size_t)(hit - p));
        if (end > hit + plen && i >= 0 && i < f->n)
            vr_buf_puts(out, f->html[i]);
        else /* not ours (the nonce makes that all but impossible) */
            end = (char *)hit + plen, vr_buf_append(out, hit, plen);
        p = end;
    }
    vr_buf_puts(out, p);
}

int vr_out_html(const vr_out_ctx *c, cJSON *view, vr_buf *out, vr_error *err)
{
    figures f = {NULL, 0, 0, (unsigned)time(NULL) ^ ((unsigned)getpid() << 16)};
    int rc = -1;
    if (make_figures(c->db, view, &f, err) < 0)
        goto done;
    cJSON_AddBoolToObject(view, "html", 1);
    size_t mdlen;
    char *md = vr_out_markdown_text(c->templates, view, &mdlen, err);
    if (!md)
        goto done;
    char *html = vr_md_html(md, mdlen);
    free(md);
    vr_buf blocks = VR_BUF_INIT, body = VR_BUF_INIT;
    replace_tokens(&blocks, html, &f);
    free(html);
    replace_inline_tokens(&body, blocks.data ? blocks.data : "", &f);
    vr_buf_free(&blocks);
    cJSON_AddStringToObject(view, "body", body.data ? body.data : "");
    vr_buf_free(&body);
    size_t len;
    char *page = vr_templates_render(c->templates, "report.html", view, escape_html, &len, err);
    if (page) {
        vr_buf_append(out, page, len);
        free(page);
        rc = 0;
    }
done:
    figures_free(&f);
    return rc;
}
