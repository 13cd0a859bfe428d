#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

#include "../util/sat.h"
#include "../util/utf8.h"
#include "chart_svg.h"
#include "results.h"
#include "templates.h"
#include "view.h"

/*-*** escaping ***/

/* Every character that can open Markdown or HTML markup is backslash-
 * escaped; newlines become spaces so a value can never start a block. The
 * rest (':' '.' '-' ...) is left alone so the Markdown stays readable. */
static void escape_markdown_markup(void *out, vr_mustache_append_fn append, const char *s,
                                   size_t len)
{
    static const char special[] = "\\`*_{}[]<>&#|~!$";
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        int esc = c && strchr(special, c) != NULL;
        int space = c == '\n' || c == '\r' || c == '\t';
        if (!esc && !space)
            continue;
        if (i > run)
            append(out, s + run, i - run);
        if (space)
            append(out, " ", 1);
        else {
            char pair[2] = {'\\', c};
            append(out, pair, 2);
        }
        run = i + 1;
    }
    if (len > run)
        append(out, s + run, len - run);
}

/* Controls (ESC, CSI, backspace: they drive a terminal showing the
 * Markdown) and bidi overrides (they make text read other than it is)
 * become visible escapes, "\u001b"; bytes that are not UTF-8 become
 * "\xFF". Both go through `inner` like the text around them, so in
 * Markdown the backslash is escaped and shows. */
static void escape_visible(void *out, vr_mustache_append_fn append, const char *s, size_t len,
                           vr_mustache_escape_fn inner)
{
    size_t run = 0, i = 0;
    while (i < len) {
        char vis[VR_UTF8_VISIBLE_SIZE];
        size_t n = vr_utf8_visible(s + i, len - i, vis);
        if (*vis) {
            inner(out, append, s + run, i - run);
            inner(out, append, vis, strlen(vis));
            run = i + n;
        }
        i += n;
    }
    inner(out, append, s + run, len - run);
}

void vr_report_escape_markdown(void *out, vr_mustache_append_fn append, const char *s,
                               size_t len)
{
    escape_visible(out, append, s, len, escape_markdown_markup);
}

/* For the HTML page around cmark's output. */
static void escape_html(void *out, vr_mustache_append_fn append, const char *s, size_t len)
{
    escape_visible(out, append, s, len, vr_mustache_escape_html);
}

/*-*** charts ***/

static int64_t int_of(const cJSON *obj, const char *key, int64_t dflt)
{
    long long v;
    return vr_results_int(cJSON_GetObjectItemCaseSensitive(obj, key), &v) ? (int64_t)v : dflt;
}

/* The x axis starts where the report's times start (t0_ns), so the chart
 * and the tables agree. */
static char *device_chart(vr_db *db, const cJSON *dev, int64_t t0, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/report.sql", "timeline", err);
    if (!st)
        return NULL;
    int64_t base = int_of(dev, "base_time_ns", 0);
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(dev, "id");
    char title[160];
    snprintf(title, sizeof title, "%s memory over time",
             cJSON_IsString(label) ? label->valuestring : "device");
    vr_chart *c = vr_chart_new(title, vr_sat_sub(t0, base),
                               vr_sat_sub(int_of(dev, "end_ts_ns", 0), base));
    int alloc = vr_chart_add_series(c, "allocated", "allocated");
    int res = vr_chart_add_series(c, "reserved", "reserved");
    char cap_label[32] = "capacity";
    vr_chart_set_capacity(c, int_of(dev, "capacity_bytes", 0), cap_label);
    sqlite3_bind_int64(st, 1, int_of(dev, "db_id", -1));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t t = sqlite3_column_int64(st, 0);
        if (sqlite3_column_type(st, 1) != SQLITE_NULL)
            vr_chart_add_point(c, alloc, t, sqlite3_column_int64(st, 1));
        if (sqlite3_column_type(st, 2) != SQLITE_NULL)
            vr_chart_add_point(c, res, t, sqlite3_column_int64(st, 2));
    }
    sqlite3_reset(st);
    char *svg = rc == SQLITE_DONE ? vr_chart_svg(c) : NULL;
    vr_chart_free(c);
    if (rc != SQLITE_DONE)
        vr_db_fail(db, err, "reading the timeline");
    return svg;
}

/* Each device gets a placeholder paragraph, replaced by its SVG after
 * cmark has rendered the Markdown (cmark's safe mode would drop raw SVG).
 * The nonce keeps input text from ever matching a placeholder. */
static void make_token(char *out, size_t n, unsigned nonce, int i)
{
    snprintf(out, n, "vrchart%08x%d", nonce, i);
}

/*-*** rendering ***/

static char *render_template(vr_templates *t, const char *name, const cJSON *data,
                             vr_mustache_escape_fn escape, size_t *len, vr_error *err)
{
    size_t tlen;
    const char *src = vr_templates_get(t, name, &tlen);
    if (!src) {
        vr_fail(err, "template %s.mustache not found", name);
        return NULL;
    }
    vr_mustache_opts o = {escape, vr_templates_partial, t};
    char msg[256] = "";
    char *out = vr_mustache_render(src, tlen, data, &o, len, msg, sizeof msg);
    if (!out)
        vr_fail(err, "template %s.mustache: %s", name, msg);
    return out;
}

static char *markdown_to_html(const char *md, size_t len)
{
    cmark_gfm_core_extensions_ensure_registered();
    cmark_parser *p = cmark_parser_new(CMARK_OPT_DEFAULT);
    cmark_syntax_extension *table = cmark_find_syntax_extension("table");
    if (table)
        cmark_parser_attach_syntax_extension(p, table);
    cmark_parser_feed(p, md, len);
    cmark_node *doc = cmark_parser_finish(p);
    char *html = cmark_render_html(doc, CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(p));
    cmark_node_free(doc);
    cmark_parser_free(p);
    return html;
}

static void replace_tokens(vr_buf *out, const char *html, char **svgs, int n, unsigned nonce)
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
        for (int i = 0; i < n && !done; i++) {
            char token[48], para[64];
            make_token(token, sizeof token, nonce, i);
            snprintf(para, sizeof para, "<p>%s</p>", token);
            if (strncmp(hit, para, strlen(para)) == 0) {
                vr_buf_puts(out, "<figure class=\"chart\">");
                vr_buf_puts(out, svgs[i] ? svgs[i] : "");
                vr_buf_puts(out, "</figure>");
                p = hit + strlen(para);
                done = 1;
            }
        }
        if (!done)
            vr_buf_append(out, hit, 3);
    }
}

static int render_html(vr_db *db, vr_templates *t, cJSON *view, vr_buf *out, vr_error *err)
{
    unsigned nonce = (unsigned)time(NULL) ^ ((unsigned)getpid() << 16);
    cJSON *devices = cJSON_GetObjectItemCaseSensitive(view, "devices");
    int n = cJSON_GetArraySize(devices);
    char **svgs = calloc((size_t)n + 1, sizeof *svgs);
    int i = 0, rc = -1;
    cJSON *dev;
    cJSON_ArrayForEach(dev, devices)
    {
        char token[48];
        make_token(token, sizeof token, nonce, i);
        cJSON_AddStringToObject(dev, "chart", token);
        if (!(svgs[i++] = device_chart(db, dev, int_of(view, "t0_ns", 0), err)))
            goto done;
    }
    cJSON_AddBoolToObject(view, "html", 1);
    size_t mdlen;
    char *md = render_template(t, "report.md", view, vr_report_escape_markdown, &mdlen, err);
    if (!md)
        goto done;
    char *html = markdown_to_html(md, mdlen);
    free(md);
    vr_buf body = VR_BUF_INIT;
    replace_tokens(&body, html, svgs, n, nonce);
    free(html);
    cJSON_AddStringToObject(view, "body", body.data ? body.data : "");
    vr_buf_free(&body);
    size_t len;
    char *page = render_template(t, "report.html", view, escape_html, &len, err);
    if (page) {
        vr_buf_append(out, page, len);
        free(page);
        rc = 0;
    }
done:
    for (int k = 0; k < n; k++)
        free(svgs[k]);
    free(svgs);
    return rc;
}

static int render_markdown(vr_templates *t, cJSON *view, vr_buf *out, vr_error *err)
{
    size_t len;
    char *md = render_template(t, "report.md", view, vr_report_escape_markdown, &len, err);
    if (!md)
        return -1;
    vr_buf_append(out, md, len);
    free(md);
    return 0;
}

/* cJSON writes C0 controls as \u00XX but DEL, C1 and bidi controls raw:
 * those become \uXXXX too, so no terminal or viewer acts on them. They can
 * only be inside strings, where the escape is the same character. (Bytes
 * that are not UTF-8, which the document never holds, would become
 * \ufffd.) */
static void put_json(vr_buf *out, const char *text)
{
    size_t len = strlen(text), run = 0, i = 0;
    while (i < len) {
        uint32_t cp = 0;
        size_t n = vr_utf8_decode(text + i, len - i, &cp);
        if (n && (cp < 0x7f || !vr_utf8_is_control(cp))) {
            i += n;
            continue;
        }
        vr_buf_append(out, text + run, i - run);
        vr_buf_printf(out, "\\u%04x", n ? (unsigned)cp : 0xfffdu);
        i += n ? n : 1;
        run = i;
    }
    vr_buf_append(out, text + run, len - run);
}

static int render_json(const cJSON *doc, vr_buf *out)
{
    char *text = cJSON_Print(doc);
    if (!text)
        return -1;
    put_json(out, text);
    vr_buf_putc(out, '\n');
    free(text);
    return 0;
}

int vr_report_render(vr_db *db, const vr_report_opts *opts, vr_buf *out, vr_error *err)
{
    cJSON *doc = vr_results_build(db, NULL, err);
    if (!doc)
        return -1;
    if (opts->format == VR_FORMAT_JSON) {
        int rc = render_json(doc, out);
        cJSON_Delete(doc);
        return rc < 0 ? vr_fail(err, "out of memory writing JSON") : 0;
    }
    vr_view_decorate(doc);
    vr_templates t;
    vr_templates_init(&t, opts->template_dir);
    int rc = opts->format == VR_FORMAT_HTML ? render_html(db, &t, doc, out, err)
                                            : render_markdown(&t, doc, out, err);
    vr_templates_free(&t);
    cJSON_Delete(doc);
    return rc;
}
