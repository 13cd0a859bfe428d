/*-*** chart_svg.h: the memory-over-time chart as inline SVG ***/
/*
 * A streaming, bounded-memory chart of one device's memory over time:
 * several step-wise series (allocated, reserved, ...), a horizontal capacity
 * line, and the peak of the first series marked. Points arrive in time order
 * and are downsampled on the fly into at most VR_CHART_MAX_POINTS points per
 * series (min/max per time bucket, so the peak is never lost), so millions of
 * points cost the same memory as a few thousand.
 *
 * The SVG is self-contained (no script, no external references, no fonts
 * fetched), scales to the page width (viewBox, width="100%"), and prints.
 * Every string that comes from the caller (titles, series names, CSS
 * classes) is XML escaped; invalid UTF-8 becomes U+FFFD.
 *
 * Styling hooks for the page's CSS (they override the inline defaults):
 * svg.vr-chart, .vr-bg, .vr-title, .vr-legend, .vr-grid, .vr-axis,
 * .vr-axis-line, .vr-capacity, .vr-series, .vr-series-N plus the caller's
 * css_class, .vr-peak, .vr-leader, .vr-baseline, .vr-baseline-label,
 * .vr-empty, .vr-tick-alt (every other time label, when there are more
 * than four). The viewBox is 560 units wide with 13-unit text, which would
 * scale down to ~9 px on a phone: the report's page sets chart text to 15
 * units under 600 px (>= 10 px at 390 px) and to 18 under 380 px, hiding
 * the .vr-tick-alt labels (>= 10 px at 320 px); labels placed by their
 * width allow for 18, and keep off the series' lines, the OOMs' lines and
 * one another (an OOM's line has a gap behind a label it would cross; a
 * peak label placed away from its marker gets a leader line); on a wide
 * desktop page cap the width (e.g. svg.vr-chart { max-width: 720px }).
 * tests/browser.sh measures all of it.
 *
 * svg/ (the charts: this, category_svg, segmap_svg, svg_text) is the floor
 * above results/ and view/: it draws the values it is given, and includes
 * nothing of out/, the formats above it.
 *
 * Ownership: vr_chart_new() returns a chart the caller frees with
 * vr_chart_free(); vr_chart_svg() returns a malloc'ed string the caller
 * frees with free(). Strings passed in are copied.
 */
#ifndef VR_CHART_SVG_H
#define VR_CHART_SVG_H

#include <stddef.h>
#include <stdint.h>

#define VR_CHART_MAX_POINTS 2000
#define VR_CHART_MAX_SERIES 4

typedef struct vr_chart vr_chart;

/* Time range of the points to come, in ns (t1 > t0; equal is allowed and
 * widened internally). The x axis shows seconds relative to t0. */
vr_chart *vr_chart_new(const char *title, int64_t t0_ns, int64_t t1_ns);
void vr_chart_free(vr_chart *chart);

/* Adds a series; returns its index (0..VR_CHART_MAX_SERIES-1), or -1 when
 * the chart has VR_CHART_MAX_SERIES already.
 * `css_class` names the stroke style in the page's CSS (e.g. "allocated");
 * the chart also sets a default stroke colour inline so it stands alone. */
int vr_chart_add_series(vr_chart *chart, const char *label, const char *css_class);

/* Appends a point; points of one series must come in non-decreasing time
 * (an earlier time is treated as the previous point's time). The value holds
 * until the next point (a step function), the last one to the range's end.
 * Points outside [t0,t1] are kept and stretch the x axis. Never allocates. */
void vr_chart_add_point(vr_chart *chart, int series, int64_t t_ns, int64_t bytes);

/* Takes back every series' points, as if none had been added (a reader
 * that finds its order was not time order reads again). */
void vr_chart_clear_points(vr_chart *chart);

/* Draws a dashed horizontal line labelled `label` at `bytes` (e.g. the GPU's
 * capacity). 0 or negative: none. */
void vr_chart_set_capacity(vr_chart *chart, int64_t bytes, const char *label);

/* Marks memory that was already live when the record began (an allocator
 * snapshot's history is a ring buffer): a shaded band from 0 to `bytes`
 * under a dashed line, <g class="vr-baseline" data-bytes="BYTES">, and a
 * label "`label`: SIZE" (.vr-baseline-label). 0 or negative: none. */
void vr_chart_set_baseline(vr_chart *chart, int64_t bytes, const char *label);

/*-*** marks: what happened when ***/

/* A step's start: a faint vertical line labelled `label` ("step 3"). */
#define VR_CHART_MAX_STEPS 512
void vr_chart_add_step(vr_chart *chart, int64_t t_ns, const char *label);

/* An allocation that failed at t_ns: a vertical line, "OOM", and the
 * request drawn as a bracket of `requested` bytes standing on `level`
 * (what PyTorch held then: reserved, else allocated; 0: unknown), so a
 * reader sees it overshoot the capacity line. `detail` (exact figures)
 * becomes the mark's <title>. Marks past the maximum are counted, not
 * drawn. */
#define VR_CHART_MAX_OOMS 16
void vr_chart_add_oom(vr_chart *chart, int64_t t_ns, int64_t level, int64_t requested,
                      const char *detail);

/* What the job printed (memory_print lines, docs/formats/memory-print.md), at t
 * on the chart's clock: allocated as a dot in the allocated colour and
 * reserved (< 0: not printed) as a square in the reserved colour, under
 * one legend entry, "printed by the job"; `detail` (the exact bytes, the
 * line) becomes the marker's <title>. Marks past the maximum are
 * counted, not drawn. */
#define VR_CHART_MAX_PRINTS 512
void vr_chart_add_print(vr_chart *chart, int64_t t_ns, int64_t allocated, int64_t reserved,
                        const char *detail);

/*-*** small multiples: charts drawn to be compared ***/
/*
 * Several charts stacked on one page (one per rank) compare only when they
 * share their axes. The caller gives each the same range (vr_chart_new),
 * the same origin and the same y top, which it takes as the largest
 * vr_chart_top_for() of the charts' figures. Such a chart states its axes
 * on the root element: data-x-range="LO HI" (ns after the origin, the
 * range drawn) and data-y-top="BYTES".
 */

/* Time zero of the x labels (default: the range's start, t0_ns). */
void vr_chart_set_origin(vr_chart *chart, int64_t t_ns);

/* The chart's times are entry ordinals 0 to count - 1 (an allocator
 * snapshot without time_us): the x axis is labelled "entries", its ticks
 * and marks entry numbers counted from 1 as the tables count them (the
 * tick "1,000 entries" at ordinal 999; the peak "at entry 3,697 of 6,832"). */
void vr_chart_set_entries(vr_chart *chart, int64_t count);

/* The span (ns) the x axis's unit (ms or s) is chosen by: the report's
 * whole span, so that the charts of one job's devices read in one unit
 * (default: the chart's own range). */
void vr_chart_set_x_span(vr_chart *chart, int64_t span_ns);

/* A fixed top of the y axis, in bytes (0: from the data, the default). On
 * a fixed scale the axis is never broken: a capacity above the top is not
 * drawn. */
void vr_chart_set_y_top(vr_chart *chart, int64_t bytes);

/* The y top a chart picks on its own for a highest value of `values_max`
 * and `capacity` (0: none): above the capacity when it is within 4x of
 * the data, else above the data. */
int64_t vr_chart_top_for(int64_t values_max, int64_t capacity);

/* The series stop at t_ns, where the data ends (by default the last
 * values hold to the range's end): on a range shared with longer ones, a
 * chart whose trace ends early shows where it ends. */
void vr_chart_set_data_end(vr_chart *chart, int64_t t_ns);

/* A short chart (170 units high instead of 320) whose legend shares the
 * title's line: for a stack of small multiples. */
void vr_chart_set_compact(vr_chart *chart, int compact);

/* Where a chart draws time, as vr_chart_svg() would draw it now: the
 * plot's left and right edges in viewBox units (560 wide), the times (ns)
 * they stand for, and the x axis's ticks (position, label). Another chart
 * drawn on these lines under this one reads the same instants at the same
 * x (category_svg.h). */
#define VR_CHART_MAX_X_TICKS 12
typedef struct {
    double left, right;
    int64_t t_lo, t_hi;
    int nticks;
    double tick_x[VR_CHART_MAX_X_TICKS];
    char tick_label[VR_CHART_MAX_X_TICKS][24];
} vr_chart_x_axis;

void vr_chart_get_x_axis(const vr_chart *chart, vr_chart_x_axis *axis);

/* The legend as an HTML list under the chart (legend_html.h) instead of
 * SVG text in it: the SVG leaves its legend out and its plot takes the
 * room; vr_chart_legend_html() gives the list (series with points, then
 * the prints' markers), a malloc'ed string ("" without items; NULL for a
 * NULL chart) the caller frees. Off by default: a chart alone keeps its
 * legend. */
void vr_chart_set_html_legend(vr_chart *chart, int html);
char *vr_chart_legend_html(const vr_chart *chart);

/* Renders the SVG (a malloc'ed string; allocation failure exits, as
 * everywhere: util/alloc.h). */
char *vr_chart_svg(const vr_chart *chart);

/* Number of points kept for a series after downsampling (for tests). */
size_t vr_chart_points(const vr_chart *chart, int series);

/* The maximum of a series over every point added (not only the kept ones):
 * its first occurrence's time and its value. Returns 0, or -1 when the
 * series does not exist or has no points (then *t_ns and *bytes are left
 * alone). Either pointer may be NULL. */
int vr_chart_peak(const vr_chart *chart, int series, int64_t *t_ns, int64_t *bytes);

#endif
