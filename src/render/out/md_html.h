/*-*** md_html.h: Markdown to HTML, as every page of vramreport does it ***/
/*
 * cmark-gfm in its safe mode (raw HTML in the Markdown is dropped), with
 * GitHub's tables, allocating by vramreport's policy (util/alloc.h) rather
 * than cmark's own, which prints and aborts. The report's page
 * (render/out/html.c) and the diff's (render/diff/diff_out.c) both call
 * it, so that both pages render their Markdown alike.
 *
 * Ownership: the returned string is the caller's (free).
 */
#ifndef VR_MD_HTML_H
#define VR_MD_HTML_H

#include <stddef.h>

char *vr_md_html(const char *md, size_t len);

#endif
