/*-*** out.h: the output formats, one file each ***/
/*
 * report.c builds the results document and hands it to the writer of the
 * format asked for, from its table of formats:
 *   markdown.c     the Markdown report and --summary; the Markdown
 *                  escaper, which the HTML page's Markdown uses too
 *   html.c         the one self-contained page: the Markdown through
 *                  cmark-gfm (safe mode), html_charts.c's figures put in
 *                  where their placeholders are, the page template
 *   html_charts.c  the figures: each device's chart, the categories, the
 *                  segment map, the ranks' small multiples, the prints
 *   json_out.c     the document itself, written as it is made
 * A new format is a file here, its writer below, and a line in report.c's
 * table. Everything taken from an input is escaped for the format
 * (report.h says how).
 *
 * Ownership: a writer appends to the caller's `out` and owns nothing
 * after it returns; `doc` is the caller's (Markdown and HTML add their
 * view's members to it).
 */
#ifndef VR_OUT_H
#define VR_OUT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "db/db.h"
#include "render/view/mustache.h"
#include "render/view/templates.h"
#include "util/buf.h"
#include "util/error.h"

typedef struct {
    vr_db *db;
    vr_templates *templates; /* Markdown and HTML; NULL for JSON */
    /* NULL, or called with `out` whenever it holds flush_bytes or more
     * (vr_report_opts' flush, report.h) */
    int (*flush)(void *ctx, vr_buf *out, vr_error *err);
    void *flush_ctx;
    size_t flush_bytes;
} vr_out_ctx;

/* A format's writer: -1 (err set) when the database, a template or the
 * flush fails. */
typedef int (*vr_out_fn)(const vr_out_ctx *c, cJSON *doc, vr_buf *out, vr_error *err);

int vr_out_markdown(const vr_out_ctx *c, cJSON *view, vr_buf *out, vr_error *err);
int vr_out_summary(const vr_out_ctx *c, cJSON *view, vr_buf *out, vr_error *err);
int vr_out_html(const vr_out_ctx *c, cJSON *view, vr_buf *out, vr_error *err);
/* The JSON writer, vr_out_json, is in json_out.h with how it streams. */

/* markdown.c, for html.c as well. The Markdown escaper of template
 * values (report.h's vr_report_escape_markdown). */
void vr_out_escape_markdown(void *out, vr_mustache_append_fn append, const char *s, size_t len);
/* Controls and bidi characters as visible escapes ("\u001b"), bytes that
 * are not UTF-8 as "\xFF", each through `inner` like the text around. */
void vr_out_escape_visible(void *out, vr_mustache_append_fn append, const char *s, size_t len,
                           vr_mustache_escape_fn inner);
/* The report's Markdown, without vramreport's own mark: the title and
 * the sections, in order (sections.h). NULL (err set) on failure. */
char *vr_out_markdown_text(vr_templates *t, cJSON *view, size_t *len, vr_error *err);

#endif
