/* The HTML report's figures (html_charts.h), drawn from the database and
 * the view with svg/'s charts; each is a piece of HTML that html.c puts
 * where its placeholder is. */
#include "render/out/html_charts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/out/chart_timeline.h"
#include "render/results/ranks.h"
#include "render/results/doc.h"
#include "render/results/results.h"
#include "render/svg/category_svg.h"
#include "render/svg/rankdist_svg.h"
#include "render/svg/segmap_svg.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/sat.h"
#include "util/units.h"

/*-*** charts ***/

/* Adds a device's timeline to the chart's series 0 (allocated) and 1
 * (reserved), each time plus `shift` ns (chart_timeline.c). */
static int fill_timeline(vr_db *db, vr_chart *c, const cJSON *dev, int64_t shift, vr_error *err)
{
    return vr_chart_fill_timeline(db, c, vr_results_int_or(dev, "db_id", -1), shift, err);
}

/* What nvidia-smi saw used on the device's GPU, as series 2, within
 * [lo, hi] on the device's clock (a monitor log usually spans the whole
 * job, a trace seconds of it: the reading in force at lo opens the
 * series). Nothing when no reading is placed on the device's clock. The
 * gap above reserved is memory outside PyTorch's allocator: the CUDA
 * context, NCCL, other processes. */
static int fill_smi(vr_db *db, vr_chart *c, const cJSON *dev, int64_t lo, int64_t hi,
                    int64_t shift, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/report.sql", "smi_timeline", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", vr_results_int_or(dev, "db_id", -1), err) < 0 ||
        vr_db_bind_int(st, ":lo", lo, err) < 0 || vr_db_bind_int(st, ":hi", hi, err) < 0)
        return -1;
    int rc, series = -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (series < 0 && (series = vr_chart_add_series(c, "nvidia-smi used", "smi-used")) < 0)
            break;
        int64_t t = sqlite3_column_int64(st, 0);
        vr_chart_add_point(c, series, vr_sat_add(t < lo ? lo : t, shift),
                           sqlite3_column_int64(st, 1));
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : vr_db_fail(db, err, "reading nvidia-smi");
}

/* The steps' starts (report.sql step_marks), on the device's clock. */
static int fill_steps(vr_db *db, vr_chart *c, const cJSON *dev, int64_t shift, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/report.sql", "step_marks", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", vr_results_int_or(dev, "db_id", -1), err) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char label[32];
        snprintf(label, sizeof label, "step %lld", (long long)sqlite3_column_int64(st, 1));
        vr_chart_add_step(c, vr_sat_add(sqlite3_column_int64(st, 0), shift), label);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading the steps");
}

/* "2.00 GiB (2,147,483,648 bytes)" */
static void put_exact(vr_buf *b, int64_t bytes)
{
    char h[32], exact[32];
    vr_units_bytes(bytes, h, sizeof h);
    vr_units_count(bytes, exact, sizeof exact);
    vr_buf_printf(b, "%s (%s bytes)", h, exact);
}

/* The OOM's <title>: the request against what was free, exact bytes. */
static void oom_detail(vr_buf *b, const cJSON *oom, int64_t capacity)
{
    int64_t req = vr_results_int_or(oom, "requested_bytes", -1),
            alloc = vr_results_int_or(oom, "total_allocated_bytes", -1);
    int64_t res = vr_results_int_or(oom, "total_reserved_bytes", -1),
            free_ = vr_results_int_or(oom, "device_free_bytes", -1);
    vr_buf_puts(b, "Out of memory: asked for ");
    if (req >= 0)
        put_exact(b, req);
    else
        vr_buf_puts(b, "an unknown size");
    if (free_ >= 0) {
        vr_buf_puts(b, "; free on the device: ");
        put_exact(b, free_);
    } else if (capacity > 0 && res >= 0) {
        vr_buf_puts(b, "; at most ");
        put_exact(b, vr_sat_sub(capacity, res));
        vr_buf_puts(b, " free on the device (capacity less reserved)");
    }
    if (res >= 0 && alloc >= 0) {
        vr_buf_puts(b, "; cached but free in PyTorch's pool: ");
        put_exact(b, vr_sat_sub(res, alloc));
    }
    if (alloc >= 0) {
        vr_buf_puts(b, "; allocated: ");
        put_exact(b, alloc);
    }
    if (res >= 0) {
        vr_buf_puts(b, "; reserved: ");
        put_exact(b, res);
    }
}

/* The device's OOMs (its "out_of_memory", report-clock times) moved onto
 * its clock, plus `shift`. */
static void add_ooms(vr_chart *c, const cJSON *dev, int64_t shift)
{
    int64_t base = vr_results_int_or(dev, "base_time_ns", 0),
            capacity = vr_results_int_or(dev, "capacity_bytes", 0);
    const cJSON *oom;
    cJSON_ArrayForEach(oom, cJSON_GetObjectItemCaseSensitive(dev, "out_of_memory"))
    {
        long long ts;
        if (!vr_results_int(cJSON_GetObjectItemCaseSensitive(oom, "ts_ns"), &ts))
            continue; /* an error with no time has no place on a timeline */
        int64_t res = vr_results_int_or(oom, "total_reserved_bytes", -1);
        int64_t level = res >= 0 ? res : vr_results_int_or(oom, "total_allocated_bytes", 0);
        vr_buf detail = VR_BUF_INIT;
        oom_detail(&detail, oom, capacity);
        vr_chart_add_oom(c, vr_sat_add(vr_sat_sub((int64_t)ts, base), shift), level,
                         vr_results_int_or(oom, "requested_bytes", 0), detail.data);
        vr_buf_free(&detail);
    }
}

/* "Printed by the job at line 120 (step 7): allocated 2.00 GiB (...
 * bytes); reserved ..." for a print's marker. */
typedef struct {
    int64_t line, step, allocated, reserved; /* step < 0, reserved < 0: not printed */
    int peak;
} print_fig;

static void print_detail(vr_buf *b, const print_fig *p)
{
    vr_buf_printf(b, "Printed by the job at line %lld", (long long)p->line);
    if (p->step >= 0)
        vr_buf_printf(b, " (step %lld)", (long long)p->step);
    vr_buf_puts(b, p->peak ? ": peak allocated " : ": allocated ");
    put_exact(b, p->allocated);
    if (p->reserved >= 0) {
        vr_buf_puts(b, p->peak ? "; peak reserved " : "; reserved ");
        put_exact(b, p->reserved);
    }
}

static int64_t opt_column(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, col);
}

/* The job's own prints of this device (report.sql device_print_marks,
 * report-clock times) moved onto its clock, plus `shift`. */
static int fill_prints(vr_db *db, vr_chart *c, const cJSON *dev, int64_t shift, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/report.sql", "device_print_marks", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", vr_results_int_or(dev, "db_id", -1), err) < 0)
        return -1;
    int64_t base = vr_results_int_or(dev, "base_time_ns", 0);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        print_fig p = {sqlite3_column_int64(st, 1), opt_column(st, 2),
                       sqlite3_column_int64(st, 4), opt_column(st, 5),
                       strcmp((const char *)sqlite3_column_text(st, 3), "peak") == 0};
        vr_buf detail = VR_BUF_INIT;
        print_detail(&detail, &p);
        vr_chart_add_print(c, vr_sat_add(vr_sat_sub(sqlite3_column_int64(st, 0), base), shift),
                           p.allocated, p.reserved, detail.data);
        vr_buf_free(&detail);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading the job's memory prints");
}

/* Series 0 and 1, as fill_timeline() expects, and the capacity line. */
static vr_chart *memory_chart(const char *title, int64_t t0, int64_t t1, const cJSON *dev)
{
    vr_chart *c = vr_chart_new(title, t0, t1);
    vr_chart_add_series(c, "allocated", "allocated");
    vr_chart_add_series(c, "reserved", "reserved");
    vr_chart_set_capacity(c, vr_results_int_or(dev, "capacity_bytes", 0), "capacity");
    vr_chart_set_html_legend(c, 1);
    return c;
}

/* The chart's SVG; its legend (an HTML list) goes to *legend. */
static char *svg_and_legend(vr_chart *c, char **legend)
{
    *legend = vr_chart_legend_html(c);
    char *svg = vr_chart_svg(c);
    vr_chart_free(c);
    return svg;
}

/* The device's range on its own clock: [t0, t1] moved by its base. The
 * chart's x axis goes to `axis` when wanted (the category chart under it
 * is drawn on it). The legend, an HTML list, goes to *legend. */
static char *chart_svg(vr_db *db, vr_chart *c, const cJSON *dev, int64_t shift,
                       vr_chart_x_axis *axis, char **legend, vr_error *err)
{
    *legend = NULL;
    int64_t base = vr_results_int_or(dev, "base_time_ns", 0);
    int64_t lo = vr_sat_sub(vr_results_int_or(dev, "start_ts_ns", 0), base);
    int64_t hi = vr_sat_sub(vr_results_int_or(dev, "end_ts_ns", 0), base);
    if (fill_timeline(db, c, dev, shift, err) < 0 ||
        fill_smi(db, c, dev, lo, hi, shift, err) < 0 || fill_steps(db, c, dev, shift, err) < 0 ||
        fill_prints(db, c, dev, shift, err) < 0) {
        vr_chart_free(c);
        return NULL;
    }
    add_ooms(c, dev, shift);
    if (axis)
        vr_chart_get_x_axis(c, axis);
    char *svg = svg_and_legend(c, legend);
    if (!svg)
        vr_fail(err, "out of memory drawing a chart");
    return svg;
}

/* The x axis spans the device's memory events (a trace's first seconds
 * often hold none); its labels count from where the report's times start
 * (t0_ns), so the chart and the tables agree. The timeline is on the
 * device's clock: the range is moved onto it. The axis drawn is handed
 * back in `axis` (when not NULL) for the charts drawn under it. */
static char *device_chart(vr_db *db, const cJSON *dev, int64_t t0, vr_chart_x_axis *axis,
                          char **legend, vr_error *err)
{
    int64_t base = vr_results_int_or(dev, "base_time_ns", 0);
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(dev, "id");
    char title[160];
    snprintf(title, sizeof title, "%s memory over time",
             cJSON_IsString(label) ? label->valuestring : "device");
    vr_chart *c = memory_chart(title, vr_sat_sub(vr_results_int_or(dev, "start_ts_ns", t0), base),
                               vr_sat_sub(vr_results_int_or(dev, "end_ts_ns", 0), base), dev);
    vr_chart_set_origin(c, vr_sat_sub(t0, base));
    int64_t entries = vr_results_int_or(dev, "history_entries", 0);
    if (entries > 0)
        vr_chart_set_entries(c, entries);
    else
        vr_chart_set_x_span(c, vr_results_int_or(dev, "x_span_ns", 0));
    vr_chart_set_baseline(c, vr_results_int_or(dev, "pre_existing_bytes", 0),
                          "live before the record");
    return chart_svg(db, c, dev, 0, axis, legend, err);
}

/* A figure: the SVG, then its legend list (either may be NULL). */
static char *figure_of(const char *cls, char *svg, char *legend)
{
    vr_buf fig = VR_BUF_INIT;
    vr_buf_printf(&fig, "<figure class=\"%s\">%s%s</figure>", cls, svg ? svg : "",
                  legend ? legend : "");
    free(svg);
    free(legend);
    return vr_buf_detach(&fig);
}

char *vr_html_charts_device(vr_db *db, const cJSON *dev, int64_t t0, vr_chart_x_axis *axis,
                            vr_error *err)
{
    char *legend;
    char *svg = device_chart(db, dev, t0, axis, &legend, err);
    if (!svg) {
        free(legend);
        return NULL;
    }
    return figure_of("chart", svg, legend);
}

/*-*** where the memory went: the categories (category_svg.h) ***/

/* The peak's bytes per category from the document's "peak_breakdown";
 * 0 when the device has none. */
int vr_html_charts_peak_breakdown(const cJSON *dev, int64_t bytes[VR_CATEGORY_COUNT])
{
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(dev, "peak_breakdown");
    if (!cJSON_IsObject(obj))
        return 0;
    for (int i = 0; i < VR_CATEGORY_COUNT; i++)
        bytes[i] = vr_results_int_or(obj, vr_category_names[i], 0);
    return 1;
}

/* Streams report.sql's category_samples (a row per time and category)
 * into the chart, one sample per time. */
static int fill_categories(vr_db *db, vr_catchart *c, const cJSON *dev, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/report.sql", "category_samples", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", vr_results_int_or(dev, "db_id", -1), err) < 0)
        return -1;
    int64_t bytes[VR_CATEGORY_COUNT] = {0}, t = 0;
    int rc, have = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t ts = sqlite3_column_int64(st, 0);
        if (have && ts != t) {
            vr_catchart_add_sample(c, t, bytes);
            memset(bytes, 0, sizeof bytes);
        }
        t = ts;
        have = 1;
        bytes[vr_category_index((const char *)sqlite3_column_text(st, 1))] =
            sqlite3_column_int64(st, 2);
    }
    sqlite3_reset(st);
    if (have)
        vr_catchart_add_sample(c, t, bytes);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading the categories over time");
}

/* On the memory chart's x axis (device_chart), so an instant has one x
 * in both. */
char *vr_html_charts_categories(vr_db *db, const cJSON *dev, const vr_chart_x_axis *axis,
                                vr_error *err)
{
    int64_t peak[VR_CATEGORY_COUNT];
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(dev, "id");
    char title[160];
    snprintf(title, sizeof title, "%s memory by category over time",
             cJSON_IsString(label) ? label->valuestring : "device");
    vr_catchart *c = vr_catchart_new(title, axis);
    vr_html_charts_peak_breakdown(dev, peak);
    vr_catchart_set_peak(c, peak);
    char *legend = NULL;
    char *svg = fill_categories(db, c, dev, err) < 0 ? NULL : vr_catchart_svg_html(c, &legend);
    vr_catchart_free(c);
    if (!svg)
        return NULL;
    return figure_of("chart categories", svg, legend);
}

/* What nvidia-smi saw used on the device's GPU at t (device clock): the
 * last reading at or before it; -1: none. */
static int64_t smi_used_at(vr_db *db, const cJSON *dev, int64_t t, vr_error *err, int *failed)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/report.sql", "smi_timeline", err);
    if (!st || vr_db_bind_int(st, ":device", vr_results_int_or(dev, "db_id", -1), err) < 0 ||
        vr_db_bind_int(st, ":lo", t, err) < 0 || vr_db_bind_int(st, ":hi", t, err) < 0) {
        *failed = 1;
        return -1;
    }
    int64_t used = -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        used = sqlite3_column_int64(st, 1);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        *failed = 1;
        vr_db_fail(db, err, "reading nvidia-smi");
    }
    return used;
}

/* The device at its allocated peak: the categories, the cache's free
 * part, what was used outside PyTorch (nvidia-smi's reading then, less
 * reserved) and what was free, up to the capacity. */
char *vr_html_charts_composition(vr_db *db, const cJSON *dev, vr_error *err)
{
    vr_devbar bar;
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(dev, "id");
    char title[160];
    snprintf(title, sizeof title, "%s at its peak: categories, cache, the rest and free",
             cJSON_IsString(label) ? label->valuestring : "device");
    vr_html_charts_peak_breakdown(dev, bar.categories);
    bar.cached_free = vr_results_int_or(dev, "cached_at_peak_bytes", -1);
    bar.capacity = vr_results_int_or(dev, "capacity_bytes", 0);
    int64_t peak_t = vr_sat_sub(vr_results_int_or(dev, "peak_allocated_ts_ns", 0),
                                vr_results_int_or(dev, "base_time_ns", 0));
    int failed = 0;
    int64_t smi = smi_used_at(db, dev, peak_t, err, &failed);
    if (failed)
        return NULL;
    int64_t reserved = vr_sat_add(vr_results_int_or(dev, "peak_allocated_bytes", 0),
                                  bar.cached_free > 0 ? bar.cached_free : 0);
    /* A reading below reserved is older than the peak: it says nothing. */
    bar.outside = smi >= reserved ? smi - reserved : -1;
    char *legend;
    char *svg = vr_devbar_svg_html(title, &bar, &legend);
    return figure_of("chart composition", svg, legend);
}

/*-*** what an allocator snapshot adds: the segment map ***/

int vr_html_charts_has_snapshot(const cJSON *dev)
{
    return cJSON_GetObjectItemCaseSensitive(dev, "final_reserved_bytes") != NULL;
}

static const char *text_column(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL
               ? NULL
               : (const char *)sqlite3_column_text(st, col);
}

/* Streams report.sql's segment_map rows (a segment's columns repeated on
 * each of its blocks) into the map. */
static int fill_segmap(vr_db *db, vr_segmap *m, const cJSON *dev, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/report.sql", "segment_map", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", vr_results_int_or(dev, "db_id", -1), err) < 0)
        return -1;
    int64_t segment = -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_int64(st, 6) != segment || segment < 0) {
            segment = sqlite3_column_int64(st, 6);
            vr_segmap_segment seg = {sqlite3_column_int64(st, 0), text_column(st, 1),
                                     text_column(st, 2), sqlite3_column_int(st, 3) != 0};
            vr_segmap_add_segment(m, &seg);
        }
        if (sqlite3_column_type(st, 4) != SQLITE_NULL)
            vr_segmap_add_block(m, sqlite3_column_int64(st, 4),
                                vr_segmap_state_of(text_column(st, 5)));
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading the segments");
}

char *vr_html_charts_segmap(vr_db *db, const cJSON *dev, vr_error *err)
{
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(dev, "id");
    char title[160];
    snprintf(title, sizeof title, "%s allocator segments at the end",
             cJSON_IsString(label) ? label->valuestring : "device");
    vr_segmap *m = vr_segmap_new(title);
    if (fill_segmap(db, m, dev, err) < 0) {
        vr_segmap_free(m);
        return NULL;
    }
    char *legend;
    char *svg = vr_segmap_svg_html(m, &legend);
    vr_segmap_free(m);
    return figure_of("chart segmap", svg, legend);
}

/*-*** the ranks' small multiples ***/

/* What the ranks' charts share: one time range (the earliest start to the
 * latest end over the ranks' devices, in ns after the report's t0) and one
 * y top (the largest any of them would pick alone), so heights compare. */
typedef struct {
    int64_t t0, lo, hi, top;
} shared_axes;

/* A rank row's device: one shown in full, else one of more_devices[],
 * which in a view holds the rows of the ranks' devices (results.h; their
 * figures are all a rank's chart reads). The view holds at most
 * VR_MANY_IN_FULL ranks (ranks.h), so the walks stay linear. */
static const cJSON *device_of(const cJSON *view, const cJSON *row)
{
    static const char *const lists[] = {"devices", "more_devices"};
    int64_t id = vr_results_int_or(row, "device_db_id", -1);
    const cJSON *d;
    for (size_t k = 0; k < sizeof lists / sizeof *lists; k++)
        cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(view, lists[k]))
        {
            if (vr_results_int_or(d, "db_id", -2) == id)
                return d;
        }
    return NULL;
}

static shared_axes ranks_axes(const cJSON *view)
{
    shared_axes a = {vr_results_int_or(view, "t0_ns", 0), INT64_MAX, INT64_MIN, 0};
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(view, "ranks"))
    {
        const cJSON *dev = device_of(view, row);
        int64_t lo = vr_sat_sub(vr_results_int_or(dev, "start_ts_ns", a.t0), a.t0);
        int64_t hi = vr_sat_sub(vr_results_int_or(dev, "end_ts_ns", a.t0), a.t0);
        int64_t alloc = vr_results_int_or(row, "peak_allocated_bytes", 0);
        int64_t res = vr_results_int_or(row, "peak_reserved_bytes", 0);
        int64_t top = vr_chart_top_for(alloc > res ? alloc : res,
                                       vr_results_int_or(row, "capacity_bytes", 0));
        a.lo = lo < a.lo ? lo : a.lo;
        a.hi = hi > a.hi ? hi : a.hi;
        a.top = top > a.top ? top : a.top;
    }
    return a;
}

/* One rank's chart, its points moved from the device's clock to ns after
 * the report's t0; titled with the rank, the device and the peak. */
static char *rank_chart(vr_db *db, const cJSON *view, const cJSON *row, const shared_axes *a,
                        char **legend, vr_error *err)
{
    const cJSON *dev = device_of(view, row);
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(row, "device");
    const cJSON *peak = cJSON_GetObjectItemCaseSensitive(row, "peak_allocated_h");
    char title[200];
    snprintf(title, sizeof title, "rank %lld \xc2\xb7 %s \xc2\xb7 peak %s",
             (long long)vr_results_int_or(row, "rank", -1),
             cJSON_IsString(label) ? label->valuestring : "device",
             cJSON_IsString(peak) ? peak->valuestring : "unknown");
    vr_chart *c = memory_chart(title, a->lo, a->hi, row);
    vr_chart_set_origin(c, 0);
    vr_chart_set_y_top(c, a->top);
    vr_chart_set_compact(c, 1);
    vr_chart_set_data_end(c, vr_sat_sub(vr_results_int_or(dev, "end_ts_ns", a->t0), a->t0));
    int64_t shift = vr_sat_sub(vr_results_int_or(dev, "base_time_ns", 0), a->t0);
    return chart_svg(db, c, dev, shift, NULL, legend, err);
}

/* A rank's legend joins the figure's lists when no list before says
 * the same (the ranks' charts mostly share their series: one list under
 * the stack). */
static void add_legend(vr_buf *legends, char *legend)
{
    if (legend && *legend && (!legends->data || !strstr(legends->data, legend)))
        vr_buf_puts(legends, legend);
    free(legend);
}

/* The ranks' charts, stacked in one figure, their legends under them. */
char *vr_html_charts_ranks(vr_db *db, const cJSON *view, vr_error *err)
{
    shared_axes a = ranks_axes(view);
    vr_buf fig = VR_BUF_INIT, legends = VR_BUF_INIT;
    vr_buf_puts(&fig, "<figure class=\"chart ranks\">");
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(view, "ranks"))
    {
        char *legend;
        char *svg = rank_chart(db, view, row, &a, &legend, err);
        if (!svg) {
            free(legend);
            vr_buf_free(&fig);
            vr_buf_free(&legends);
            return NULL;
        }
        vr_buf_puts(&fig, svg);
        free(svg);
        add_legend(&legends, legend);
    }
    if (legends.len)
        vr_buf_append(&fig, legends.data, legends.len);
    vr_buf_free(&legends);
    vr_buf_puts(&fig, "</figure>");
    return vr_buf_detach(&fig);
}

/*-*** the ranks side by side ***/

/* Every rank's peak (report.sql rank_peaks), grown into *out. */
static int read_rank_peaks(vr_db *db, vr_rank_peak **out, size_t *n, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/report.sql", "rank_peaks", err);
    if (!st)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_xgrow(out, &cap, *n + 1, sizeof **out, 64);
        (*out)[(*n)++] = (vr_rank_peak){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1)};
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading the ranks' peaks");
}

char *vr_html_charts_rank_peaks(vr_db *db, const cJSON *view, vr_error *err)
{
    vr_rank_peak *r = NULL;
    size_t n = 0;
    if (read_rank_peaks(db, &r, &n, err) < 0) {
        free(r);
        return NULL;
    }
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(view, "ranks_summary");
    char *legend = NULL;
    char *svg =
        vr_rankdist_svg(r, n, vr_results_int_or(sum, "median_peak_allocated_bytes", 0), &legend);
    free(r);
    vr_buf fig = VR_BUF_INIT;
    vr_buf_puts(&fig, "<figure class=\"chart rank-peaks\">");
    vr_buf_puts(&fig, svg ? svg : "");
    vr_buf_puts(&fig, legend ? legend : "");
    vr_buf_puts(&fig, "</figure>");
    free(svg);
    free(legend);
    return vr_buf_detach(&fig);
}

/*-*** the job's prints without a device chart ***/

/* One memory_prints[] row's point as print_fig; 0: no time or figure. */
static int read_print_point(const cJSON *pt, int peak, print_fig *p, int64_t *ts)
{
    long long t;
    if (!vr_results_int(cJSON_GetObjectItemCaseSensitive(pt, "ts_ns"), &t))
        return 0;
    *ts = (int64_t)t;
    p->line = vr_results_int_or(pt, "line", 0);
    p->step = vr_results_int_or(pt, "step", -1);
    p->peak = peak;
    p->allocated = vr_results_int_or(pt, "allocated_bytes",
                                     vr_results_int_or(pt, "max_allocated_bytes", -1));
    p->reserved =
        vr_results_int_or(pt, "reserved_bytes", vr_results_int_or(pt, "max_reserved_bytes", -1));
    return p->allocated >= 0;
}

/* A device of devices[] (its "id") by this label: its chart draws the
 * prints (report.sql device_print_marks). */
static int has_device_chart(const cJSON *view, const char *label)
{
    const cJSON *dev;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(view, "devices"))
    {
        const char *id = vr_results_string(dev, "id");
        if (label && id && strcmp(id, label) == 0)
            return 1;
    }
    return 0;
}

/* A log's prints that no device chart shows (it names no device, or one
 * without a trace or monitor timeline): a small chart of their own, the
 * same markers on the report's clock (x from t0). NULL: nothing to draw
 * (no print has a time), not an error. */
char *vr_html_charts_prints(const cJSON *view, const cJSON *row, int64_t t0)
{
    const char *device = vr_results_string(row, "device"),
               *fig = vr_results_string(row, "figure");
    if (device && has_device_chart(view, device))
        return NULL;
    const cJSON *points = cJSON_GetObjectItemCaseSensitive(row, "points"), *pt;
    int64_t lo = INT64_MAX, hi = INT64_MIN, ts;
    print_fig p;
    cJSON_ArrayForEach(pt, points) if (read_print_point(pt, 0, &p, &ts))
    {
        lo = ts < lo ? ts : lo;
        hi = ts > hi ? ts : hi;
    }
    if (lo > hi)
        return NULL;
    char title[160];
    const char *source = vr_results_string(row, "source");
    snprintf(title, sizeof title, "%s: printed by the job", source ? source : "log");
    vr_chart *c = vr_chart_new(title, vr_sat_sub(lo, t0), vr_sat_sub(hi, t0));
    vr_chart_set_origin(c, 0);
    vr_chart_set_compact(c, 1);
    vr_chart_set_html_legend(c, 1);
    int peak = fig && strcmp(fig, "peak") == 0;
    cJSON_ArrayForEach(pt, points) if (read_print_point(pt, peak, &p, &ts))
    {
        vr_buf detail = VR_BUF_INIT;
        print_detail(&detail, &p);
        vr_chart_add_print(c, vr_sat_sub(ts, t0), p.allocated, p.reserved, detail.data);
        vr_buf_free(&detail);
    }
    char *legend;
    char *svg = svg_and_legend(c, &legend);
    return figure_of("chart prints", svg, legend);
}
