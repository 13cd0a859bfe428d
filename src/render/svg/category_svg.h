/*-*** category_svg.h: where the memory went, as inline SVG ***/
/*
 * Two charts of a device's allocated memory by PyTorch's memory-profiler
 * categories (src/db/category.h), drawn from the breakdown pass's tables:
 *
 *  - vr_catchart: a stacked area of the categories over time, on the x
 *    axis of the device's memory chart (vr_chart_get_x_axis: the same
 *    edges, times and ticks, so an instant has one x in both), from at
 *    most VR_CATCHART_MAX_SAMPLES samples (later ones are ignored). A
 *    sample's values hold until the next one. Each band has a <title>
 *    with its exact bytes at the peak and at its highest; the legend gives
 *    each category's bytes at the peak.
 *  - vr_catbar_svg: one stacked horizontal bar, the peak's composition,
 *    each part titled with its exact bytes and share.
 *
 * Each category has one colour everywhere (Okabe-Ito, safe for
 * colour-blind readers). Caller text (the title) is XML escaped; broken
 * UTF-8 and controls become U+FFFD. Coordinates are printed with integer
 * arithmetic, so no locale can change them.
 *
 * Ownership: vr_catchart_new() returns a chart freed with
 * vr_catchart_free(); the *_svg() functions return malloc'ed strings.
 */
#ifndef VR_CATEGORY_SVG_H
#define VR_CATEGORY_SVG_H

#include <stdint.h>

#include "db/category.h"
#include "render/svg/chart_svg.h"

#define VR_CATCHART_MAX_SAMPLES 1024

typedef struct vr_catchart vr_catchart;

/* On `axis` (times in ns on the device's clock, as the memory chart's). */
vr_catchart *vr_catchart_new(const char *title, const vr_chart_x_axis *axis);
void vr_catchart_free(vr_catchart *chart);

/* A sample: bytes per category at t_ns (non-decreasing times). */
void vr_catchart_add_sample(vr_catchart *chart, int64_t t_ns,
                            const int64_t bytes[VR_CATEGORY_COUNT]);

/* The peak's bytes per category, for the legend and the titles. */
void vr_catchart_set_peak(vr_catchart *chart, const int64_t bytes[VR_CATEGORY_COUNT]);

char *vr_catchart_svg(const vr_catchart *chart);
/* The same without its legend, which comes as an HTML list in *legend
 * (legend_html.h; malloc'ed, "" without items): for the HTML report. */
char *vr_catchart_svg_html(const vr_catchart *chart, char **legend);

/* The peak's composition; `bytes` sum to the peak. */
char *vr_catbar_svg(const char *title, const int64_t bytes[VR_CATEGORY_COUNT]);

/* The whole device at the peak: the categories, then what PyTorch's cache
 * held but had free, what was used outside PyTorch (nvidia-smi's used
 * less reserved; -1: unknown) and what was free, up to the capacity (0:
 * unknown; the bar then ends with what is known). Every part is titled
 * with its exact bytes; the parts' data-bytes sum to the bar's. */
typedef struct {
    int64_t categories[VR_CATEGORY_COUNT];
    int64_t cached_free; /* reserved less allocated at the peak; -1: unknown */
    int64_t outside;     /* -1: unknown */
    int64_t capacity;    /* 0: unknown */
} vr_devbar;

char *vr_devbar_svg(const char *title, const vr_devbar *bar);
/* The same without its legend, an HTML list in *legend (as above). */
char *vr_devbar_svg_html(const char *title, const vr_devbar *bar, char **legend);

#endif
