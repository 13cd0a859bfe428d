/*-*** legend_html.h: a chart's legend as an HTML list ***/
/*
 * In the HTML report a chart's legend is not SVG text but a list under the
 * picture: <ul class="vr-legend"> with one <li> per item, a small inline
 * SVG swatch (the series' colour and dash, or a filled box) and the label
 * as real text, so the page's CSS sets its size (never under 12 px on a
 * phone), wraps it, reflows it, and a screen reader reads it. The charts
 * (chart_svg, category_svg, segmap_svg) describe their items; this writes
 * them. Swatches use the charts' own colour attributes, so the page's
 * dark-mode rules repaint them as they repaint the charts.
 *
 * Every label is escaped (svg_text.h: XML escaping is HTML-safe, invalid
 * UTF-8 and controls become U+FFFD).
 */
#ifndef VR_LEGEND_HTML_H
#define VR_LEGEND_HTML_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef enum {
    VR_SWATCH_LINE,  /* a short stroke: a series */
    VR_SWATCH_BOX,   /* a filled square: a band, a bar's part */
    VR_SWATCH_MARKS, /* a dot (colour) and, when colour2, a square: prints */
    VR_SWATCH_NONE,  /* words only (a note on shapes) */
} vr_swatch_kind;

typedef struct {
    const char *cls;   /* the <li>'s class (NULL: none); not escaped: callers' constants */
    const char *label; /* from the inputs maybe: escaped */
    vr_swatch_kind kind;
    const char *colour;  /* stroke of a line, fill of a box or dot */
    const char *colour2; /* MARKS: the square's fill (NULL: no square); BOX: its outline */
    const char *dash;    /* LINE: stroke-dasharray (NULL: solid) */
    int64_t bytes;       /* >= 0: the <li>'s data-bytes */
} vr_legend_item;

/* Appends the list; nothing when n is 0. `label_max_cp` cuts long labels
 * ((size_t)-1: never). */
void vr_legend_html(vr_buf *b, const vr_legend_item *items, size_t n, size_t label_max_cp);

#endif
