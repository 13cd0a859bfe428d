/*-*** verdict.h: the report's verdict, its summary form and its one line ***/
/*
 * The verdict opens every report (docs/json.md, "The verdict"): a state (failed: an
 * out-of-memory error or a critical finding; at risk: a warning finding
 * such as near-capacity, a leak or rank imbalance; OK: neither, with a
 * peak judged against a known capacity; unknown: neither, and nothing to
 * judge by, docs/diagnosis.md "The verdict's grounds"), the primary cause
 * in one sentence (the first critical or warning finding's title: findings
 * come ordered by severity, each OOM's primary finding first; without one,
 * what is missing), and the numbers
 * that matter: the peak against the capacity, the failed request against
 * the free memory, the memory outside PyTorch.
 *
 * vr_verdict_add() puts it in the results document as "verdict" (JSON),
 * from the document's own findings, OOM events and devices: every figure
 * it states is one the document already holds. vr_verdict_view() adds
 * what the templates show (texts, one paragraph per finding, the top
 * advice, at most `max_paragraphs`/`max_advice`); vr_verdict_line() the
 * terminal's one-line success message. The HTML banner (id="verdict") is
 * the view's (view.h: vr_verdict_banner_html), which draws HTML as this
 * floor does not.
 *
 * Ownership: the document is changed in place; returned strings are the
 * caller's to free.
 */
#ifndef VR_VERDICT_H
#define VR_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* --summary's bound: one short ticket comment (GitHub's limit is 65,536;
 * docs/vramreport.1 promises 4,000). */
#define VR_VERDICT_SUMMARY_MAX 4000

void vr_verdict_add(cJSON *doc);

void vr_verdict_view(cJSON *doc, int max_paragraphs, int max_advice);

/* For --summary: "summary_devices", each device (its file's name) with its
 * peak allocated and its non-zero categories in one line, at most `max_devices` ("summary_devices_more":
 * how many more). */
void vr_verdict_summary_view(cJSON *doc, int max_devices);

/* "FAILED", "AT RISK", "OK" or "UNKNOWN" for a "verdict" object's state. */
const char *vr_verdict_label(const cJSON *verdict);

/* The state's CSS class: "vr-failed", "vr-at-risk", "vr-ok" or "vr-unknown". */
const char *vr_verdict_css(const cJSON *verdict);

/* "wrote PATH (SIZE): LABEL: CAUSE", its cause cut and its controls made
 * visible so a terminal never acts on the input's text. */
void vr_verdict_line(const char *label, const char *cause, const char *path, int64_t size,
                     char *out, size_t n);

/* Cuts Markdown longer than `max` bytes at a line, and says so in a last
 * line; the result is at most `max` bytes. */
void vr_verdict_fit(char *md, size_t *len, size_t max);

#endif
