/*-*** html_charts.h: the HTML report's figures ***/
/*
 * Each returns a malloc'd piece of HTML (a <figure> holding SVG) that
 * the caller frees, or NULL with err set when the database fails (the
 * prints' chart: NULL when there is nothing to draw, not an error). All
 * times on the report's clock, x from t0 (the view's "t0_ns").
 */
#ifndef VR_HTML_CHARTS_H
#define VR_HTML_CHARTS_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "db/category.h"
#include "db/db.h"
#include "render/svg/chart_svg.h"
#include "util/error.h"

/* A device's memory over time (allocated, reserved, nvidia-smi, the
 * steps, its out-of-memory errors and prints); *axis is its x axis, for
 * the categories' chart. */
char *vr_html_charts_device(vr_db *db, const cJSON *dev, int64_t t0, vr_chart_x_axis *axis,
                            vr_error *err);

/* The peak's bytes per category from the device's "peak_breakdown"; 0
 * when it has none. */
int vr_html_charts_peak_breakdown(const cJSON *dev, int64_t bytes[VR_CATEGORY_COUNT]);
/* The categories over time, on the device chart's x axis. */
char *vr_html_charts_categories(vr_db *db, const cJSON *dev, const vr_chart_x_axis *axis,
                                vr_error *err);
/* The device at its allocated peak, up to the capacity. */
char *vr_html_charts_composition(vr_db *db, const cJSON *dev, vr_error *err);

/* Whether the device has an allocator snapshot, and its segment map. */
int vr_html_charts_has_snapshot(const cJSON *dev);
char *vr_html_charts_segmap(vr_db *db, const cJSON *dev, vr_error *err);

/* The ranks' small multiples, on one time range and one y top. */
char *vr_html_charts_ranks(vr_db *db, const cJSON *view, vr_error *err);

/* Every rank's peak side by side, one bar a rank (rankdist_svg.h), the
 * median from the view's ranks_summary. */
char *vr_html_charts_rank_peaks(vr_db *db, const cJSON *view, vr_error *err);

/* A memory_prints[] row that no device chart shows: a chart of its own. */
char *vr_html_charts_prints(const cJSON *view, const cJSON *row, int64_t t0);

#endif
