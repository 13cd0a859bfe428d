/*-*** report.h: the report, from the database to bytes ***/
/*
 * Renders the analysed database as Markdown (GitHub-flavoured, tables),
 * as one self-contained HTML page (the Markdown through cmark-gfm, inline
 * CSS and SVG charts, no script, no network), or as the JSON results
 * document; with `summary`, as a short Markdown for one ticket comment (at
 * most VR_VERDICT_SUMMARY_MAX bytes). Templates come from templates/ (embedded) unless
 * opts->template_dir has a file of the same name.
 *
 * Everything taken from an input is escaped for the output format: the
 * Markdown escaper backslash-escapes every character that could start
 * markup, and cmark-gfm runs in its safe mode on top. Text values are cut
 * and made valid UTF-8 in the results document (results.h); control and
 * bidi characters show as visible escapes ("\u001b") in Markdown and
 * HTML, and as JSON escapes in JSON.
 *
 * Ownership: the output is appended to the caller's buffer.
 */
#ifndef VR_REPORT_H
#define VR_REPORT_H

#include <cjson/cJSON.h>

#include "db/db.h"
#include "util/buf.h"
#include "util/error.h"
#include "render/view/mustache.h"

typedef enum { VR_FORMAT_MARKDOWN, VR_FORMAT_HTML, VR_FORMAT_JSON } vr_format;

/* What the report concluded, for the terminal's line (verdict.h). */
typedef struct {
    char label[16];  /* "FAILED", "AT RISK", "OK" */
    char cause[512]; /* the primary cause, as the document has it */
} vr_report_outcome;

/* A JSON report is written as it is made (json_out.h): with a flush, the
 * output is handed over each time it holds this much. */
#define VR_REPORT_FLUSH_BYTES (64 * 1024)

typedef struct {
    vr_format format;
    const char *template_dir;   /* NULL: embedded templates only */
    int summary;                /* Markdown only: the short form (verdict.h) */
    vr_report_outcome *outcome; /* NULL, or filled on success */
    /* NULL: the whole report is appended to `out`. Else called with `out`
     * whenever it holds VR_REPORT_FLUSH_BYTES or more, to write it and
     * empty it (what is left at the end is the caller's to write); -1
     * (err set) stops the report. */
    int (*flush)(void *ctx, vr_buf *out, vr_error *err);
    void *flush_ctx;
} vr_report_opts;

int vr_report_render(vr_db *db, const vr_report_opts *opts, vr_buf *out, vr_error *err);

/* The results document itself, as `-o x.json` writes it (results.h: not
 * a view; the lists json_out.h fills as it writes are left empty): what
 * `diff` compares (render/diff/diff.h). The caller's (cJSON_Delete);
 * NULL with err set. */
cJSON *vr_report_results(vr_db *db, vr_error *err);

/* Markdown escaping for template values (exposed for tests): markup
 * characters backslash-escaped, tab and newlines as spaces, controls and
 * bytes that are not UTF-8 as visible escapes ("\u001b", "\xFF"). */
void vr_report_escape_markdown(void *out, vr_mustache_append_fn append, const char *s,
                               size_t len);

#endif
