/*-*** category_svg.c: where the memory went, as inline SVG ***/
/*
 * The categories over time (a stacked area, step-wise like the memory
 * chart) and the peak's composition (one stacked bar). See category_svg.h.
 * Plain string building into a vr_buf; numbers are printed with integer
 * arithmetic (put_fixed), never %f, so a locale cannot garble them.
 */
#include "render/svg/category_svg.h"
#include "render/svg/legend_html.h"
#include "render/svg/svg_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/sat.h"
#include "util/units.h"
#include "util/utf8.h"

#define NCAT VR_CATEGORY_COUNT
#define VIEW_W 560
#define PAD 12
#define PLOT_H 170
#define TOP 34 /* below the title */
#define LEGEND_ROW 18
/* A glyph's width at a narrow phone's text size (18 units: the report's
 * page, templates/report.html.mustache). */
#define CHAR_W_NARROW 10.0
#define BAR_H 28
#define TITLE_MAX_CP 64
#define COLOUR_TEXT "#333"
#define COLOUR_GRID "#e3e3e3"

/* Okabe-Ito, one per category (category.h order), echoing PyTorch's own
 * palette: green parameters, orange optimizer state, black inputs, purple
 * temporaries, vermillion activations, blues for gradients and autograd's
 * detail, grey for the unknown. The KV cache has the palette's last one,
 * yellow: Okabe and Ito chose the eight to stay apart for every colour
 * vision (protan, deutan, tritan), so it is told from the rest by all. */
static const char *const category_colour[NCAT] = {"#009e73", "#e69f00", "#000000",
                                                  "#cc79a7", "#d55e00", "#f0e442",
                                                  "#0072b2", "#56b4e9", "#999999"};

typedef struct {
    int64_t t, bytes[NCAT];
} sample;

struct vr_catchart {
    char *title;
    vr_chart_x_axis axis;
    int64_t peak[NCAT];
    sample *samples; /* VR_CATCHART_MAX_SAMPLES */
    size_t n;
};

/*-*** text and numbers ***/

/* x with `dec` decimals (0..2), by integer arithmetic. */
static void put_fixed(vr_buf *b, double x, int dec)
{
    static const long long scale[] = {1, 10, 100};
    /* A degenerate axis (one instant, no range) can hand over inf or NaN;
     * llround of those, or of anything past 2^63, is undefined. No
     * coordinate or share is anywhere near 1e12. */
    if (!isfinite(x))
        x = 0;
    x = fmax(-1e12, fmin(1e12, x));
    long long v = llround(x * (double)scale[dec]);
    if (v < 0) {
        vr_buf_putc(b, '-');
        v = -v;
    }
    vr_buf_printf(b, "%lld", v / scale[dec]);
    if (dec > 0)
        vr_buf_printf(b, ".%0*lld", dec, v % scale[dec]);
}

static void put_coord(vr_buf *b, double x)
{
    put_fixed(b, x, 1);
}

/* "2.41 GiB (2,592,465,920 B)" */
static void put_size(vr_buf *b, int64_t bytes)
{
    char h[32], exact[32];
    vr_units_bytes(bytes, h, sizeof h);
    vr_units_count(bytes, exact, sizeof exact);
    vr_buf_printf(b, "%s (%s B)", h, exact);
}

/* "37.2%" of `whole`. */
static void put_share(vr_buf *b, int64_t part, int64_t whole)
{
    double pct = whole > 0 ? 100.0 * (double)part / (double)whole : 0;
    put_fixed(b, pct, 1);
    vr_buf_putc(b, '%');
}

/*-*** the frame, the legend ***/

static void open_svg(vr_buf *b, int height, const char *cls, const char *title)
{
    vr_buf_printf(b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" "
                  "width=\"100%%\" role=\"img\" class=\"%s\" aria-label=\"",
                  VIEW_W, height, cls);
    vr_svg_text(b, title, (size_t)-1);
    vr_buf_printf(b,
                  "\" font-family=\"system-ui, sans-serif\" font-size=\"12\" fill=\"%s\">\n"
                  "<title>",
                  COLOUR_TEXT);
    vr_svg_text(b, title, (size_t)-1);
    vr_buf_printf(b,
                  "</title>\n<rect class=\"vr-bg\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n"
                  "<text class=\"vr-title\" x=\"%d\" y=\"20\" font-size=\"15\">",
                  VIEW_W, height, PAD);
    vr_svg_text(b, title, TITLE_MAX_CP);
    vr_buf_puts(b, "</text>\n");
}

/* Whether a category is in the legend: one with bytes at the peak, or
 * (unless `nonzero`) one the chart draws, `had` saying which had some
 * (NULL: none). A category empty all along is not listed: the report
 * names those once ("Nothing in: ..."), and "parameter: 0 B" beside a
 * chart that draws none is one more thing to read. */
static int listed(const int64_t bytes[NCAT], const int *had, int nonzero, int i)
{
    if (nonzero)
        return bytes[i] > 0;
    return bytes[i] > 0 || (had && had[i]);
}

/* The items in `cols` columns: swatch, name, bytes at the peak (and its
 * share of the peak when `whole` > 0), those listed() lets in. */
static int legend_items(const int64_t bytes[NCAT], const int *had, int nonzero)
{
    int n = 0;
    for (int i = 0; i < NCAT; i++)
        n += listed(bytes, had, nonzero, i);
    return n;
}

/* The legend's text is 11 units, which a phone's page sets to 15 (its
 * charts' text stays >= 10 px: templates/report.html.mustache); widths are
 * estimated at that size, so no item runs into the next one. */
#define LEGEND_CHAR_W_PHONE 8.4

/* Two columns when every item fits its half at a phone's text size, else one. */
static int legend_cols(const int64_t bytes[NCAT], const int *had, int nonzero)
{
    size_t longest = 0;
    for (int i = 0; i < NCAT; i++) {
        if (!listed(bytes, had, nonzero, i))
            continue;
        vr_buf t = VR_BUF_INIT;
        vr_buf_printf(&t, "%s: ", vr_category_names[i]);
        put_size(&t, bytes[i]);
        longest = t.len > longest ? t.len : longest;
        vr_buf_free(&t);
    }
    double col_w = (double)(VIEW_W - 2 * PAD) / 2;
    return 17 + LEGEND_CHAR_W_PHONE * (double)longest + 8 <= col_w ? 2 : 1;
}

static void draw_legend(vr_buf *b, double y0, int cols, const int64_t bytes[NCAT], int64_t whole,
                        const int *had, int nonzero)
{
    double col_w = (double)(VIEW_W - 2 * PAD) / cols;
    int rows = (legend_items(bytes, had, nonzero) + cols - 1) / cols;
    for (int i = 0, k = 0; i < NCAT; i++) {
        if (!listed(bytes, had, nonzero, i))
            continue;
        double x = PAD + col_w * (k / rows), y = y0 + LEGEND_ROW * (k % rows);
        k++;
        vr_buf_printf(b, "<g class=\"vr-legend vr-cat-%s\" data-bytes=\"%lld\"><rect x=\"",
                      vr_category_names[i], (long long)bytes[i]);
        put_coord(b, x);
        vr_buf_puts(b, "\" y=\"");
        put_coord(b, y - 10);
        vr_buf_printf(b, "\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"",
                      category_colour[i]);
        put_coord(b, x + 17);
        vr_buf_puts(b, "\" y=\"");
        put_coord(b, y);
        vr_buf_printf(b, "\" font-size=\"11\">%s: ", vr_category_names[i]);
        put_size(b, bytes[i]);
        if (whole > 0) {
            vr_buf_puts(b, ", ");
            put_share(b, bytes[i], whole);
        }
        vr_buf_puts(b, "</text></g>\n");
    }
}

/* The list of `n` items (legend_html.h), their texts freed. */
static char *legend_out(const vr_legend_item *items, vr_buf *text, size_t n)
{
    vr_buf out = VR_BUF_INIT;
    vr_legend_html(&out, items, n, (size_t)-1);
    for (size_t k = 0; k < n; k++)
        vr_buf_free(&text[k]);
    return vr_buf_detach(&out);
}

/* The same items as an HTML list (legend_html.h): swatch, name, bytes at
 * the peak, those listed() lets in. */
static char *legend_list(const int64_t bytes[NCAT], const int *had)
{
    char cls[NCAT][48];
    vr_legend_item items[NCAT];
    vr_buf text[NCAT];
    size_t n = 0;
    for (int i = 0; i < NCAT; i++) {
        if (!listed(bytes, had, 0, i))
            continue;
        text[n] = (vr_buf)VR_BUF_INIT;
        vr_buf_printf(&text[n], "%s: ", vr_category_names[i]);
        put_size(&text[n], bytes[i]);
        snprintf(cls[n], sizeof cls[n], "vr-cat-%s", vr_category_names[i]);
        items[n] = (vr_legend_item){cls[n], text[n].data, VR_SWATCH_BOX, category_colour[i],
                                    NULL,   NULL,         bytes[i]};
        n++;
    }
    return legend_out(items, text, n);
}

static int64_t sum_of(const int64_t bytes[NCAT])
{
    int64_t s = 0;
    for (int i = 0; i < NCAT; i++)
        s = vr_sat_add(s, bytes[i] > 0 ? bytes[i] : 0);
    return s;
}

/*-*** the categories over time ***/

vr_catchart *vr_catchart_new(const char *title, const vr_chart_x_axis *axis)
{
    vr_catchart *c = vr_xmalloc(sizeof *c);
    memset(c, 0, sizeof *c);
    c->title = vr_xstrdup(title ? title : "");
    c->axis = *axis;
    if (c->axis.t_hi <= c->axis.t_lo)
        c->axis.t_hi = vr_sat_add(c->axis.t_lo, 1);
    if (c->axis.nticks > VR_CHART_MAX_X_TICKS)
        c->axis.nticks = VR_CHART_MAX_X_TICKS;
    c->samples = vr_xmalloc(VR_CATCHART_MAX_SAMPLES * sizeof *c->samples);
    return c;
}

void vr_catchart_free(vr_catchart *c)
{
    if (!c)
        return;
    free(c->title);
    free(c->samples);
    free(c);
}

void vr_catchart_add_sample(vr_catchart *c, int64_t t_ns, const int64_t bytes[NCAT])
{
    if (c->n == VR_CATCHART_MAX_SAMPLES)
        return;
    sample *s = &c->samples[c->n++];
    s->t = c->n > 1 && t_ns < s[-1].t ? s[-1].t : t_ns;
    for (int i = 0; i < NCAT; i++)
        s->bytes[i] = bytes[i] > 0 ? bytes[i] : 0;
}

void vr_catchart_set_peak(vr_catchart *c, const int64_t bytes[NCAT])
{
    memcpy(c->peak, bytes, sizeof c->peak);
}

typedef struct {
    double left, right, top, bottom;
    int64_t lo, hi;
    double ymax;
} plot;

/* Distances in time as unsigned: lo <= t <= hi, so they are exact, where
 * a span past INT64_MAX (stamps near both ends) would overflow int64. */
static double px(const plot *p, int64_t t)
{
    t = t < p->lo ? p->lo : t > p->hi ? p->hi : t;
    double from_lo = (double)((uint64_t)t - (uint64_t)p->lo);
    double span = (double)((uint64_t)p->hi - (uint64_t)p->lo);
    return p->left + from_lo / span * (p->right - p->left);
}

static double py(const plot *p, int64_t v)
{
    return p->bottom - (double)v / p->ymax * (p->bottom - p->top);
}

/* 1, 2, 2.5 or 5 x 10^k cutting `range` into fewer than 6 steps (the
 * memory chart's rule). */
static double nice_step(double range)
{
    static const double mult[] = {1, 2, 2.5, 5, 10};
    double base = pow(10, floor(log10(range / 6)));
    for (size_t i = 0; i < sizeof mult / sizeof *mult; i++)
        if (range / (mult[i] * base) < 6)
            return mult[i] * base;
    return 10 * base;
}

/* Grid lines at round figures of the largest binary unit under the top
 * ("0", "1 GiB", "2 GiB", ...). */
static void draw_y_axis(vr_buf *b, const plot *p)
{
    static const char *const unit_name[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (u < 5 && p->ymax >= ldexp(1.0, 10 * (u + 1)))
        u++;
    double per = ldexp(1.0, 10 * u), step = nice_step(p->ymax / per);
    int dec = step < 1 ? 2 : step != floor(step) ? 1 : 0;
    for (long k = 0; k * step * per <= p->ymax; k++) {
        double y = py(p, (int64_t)(k * step * per));
        vr_buf_puts(b, "<line class=\"vr-grid\" x1=\"");
        put_coord(b, p->left);
        vr_buf_puts(b, "\" x2=\"");
        put_coord(b, p->right);
        vr_buf_puts(b, "\" y1=\"");
        put_coord(b, y);
        vr_buf_puts(b, "\" y2=\"");
        put_coord(b, y);
        vr_buf_printf(b, "\" stroke=\"%s\"/><text class=\"vr-axis\" x=\"", COLOUR_GRID);
        put_coord(b, p->left - 4);
        vr_buf_puts(b, "\" y=\"");
        put_coord(b, y + (k ? 4 : -3)); /* "0" on the axis, above the x labels */
        vr_buf_puts(b, "\" text-anchor=\"end\" font-size=\"11\">");
        if (k == 0)
            vr_buf_putc(b, '0');
        else {
            put_fixed(b, (double)k * step, dec);
            vr_buf_printf(b, " %s", unit_name[u]);
        }
        vr_buf_puts(b, "</text>\n");
    }
}

/* The memory chart's ticks, at the same x. */
static void draw_x_axis(vr_buf *b, const vr_catchart *c, const plot *p)
{
    for (int i = 0; i < c->axis.nticks; i++) {
        /* every other label hidden on a narrow screen, as the memory
         * chart's (chart_svg.c) */
        vr_buf_printf(b, "<text class=\"vr-axis%s\" x=\"",
                      c->axis.nticks > 4 && i % 2 == 1 ? " vr-tick-alt" : "");
        double x = c->axis.tick_x[i];
        /* The end labels stay inside the plot's width at a narrow phone's
         * text size, clear of the y axis's "0". */
        double half = CHAR_W_NARROW * (double)strlen(c->axis.tick_label[i]) / 2;
        put_coord(b, x);
        vr_buf_puts(b, "\" y=\"");
        put_coord(b, p->bottom + 19);
        vr_buf_printf(b, "\" text-anchor=\"%s\" font-size=\"11\">",
                      x - p->left < half    ? "start"
                      : p->right - x < half ? "end"
                                            : "middle");
        vr_svg_text(b, c->axis.tick_label[i], 24);
        vr_buf_puts(b, "</text>\n");
    }
}

/* The cumulative top of category `cat` in sample i (0 under the first). */
static int64_t stacked(const sample *s, int cat)
{
    int64_t v = 0;
    for (int i = 0; i < cat; i++)
        v = vr_sat_add(v, s->bytes[i]);
    return v;
}

/* A band: its top edge left to right, its bottom edge back, step-wise
 * (a sample's values hold until the next; the last to the range's end). */
static void band_path(vr_buf *b, const vr_catchart *c, const plot *p, int cat)
{
    vr_buf_puts(b, "M");
    for (size_t i = 0; i < c->n; i++) {
        int64_t next = i + 1 < c->n ? c->samples[i + 1].t : p->hi;
        put_coord(b, px(p, c->samples[i].t));
        vr_buf_putc(b, ',');
        put_coord(b, py(p, stacked(&c->samples[i], cat + 1)));
        vr_buf_puts(b, "H");
        put_coord(b, px(p, next));
        vr_buf_puts(b, i + 1 < c->n ? "L" : "V");
        if (i + 1 == c->n)
            put_coord(b, py(p, stacked(&c->samples[i], cat)));
    }
    for (size_t i = c->n; i-- > 0;) {
        vr_buf_puts(b, "H");
        put_coord(b, px(p, c->samples[i].t));
        if (i > 0) {
            vr_buf_puts(b, "V");
            put_coord(b, py(p, stacked(&c->samples[i - 1], cat)));
        }
    }
    vr_buf_puts(b, "Z");
}

static int64_t most_of(const vr_catchart *c, int cat)
{
    int64_t most = 0;
    for (size_t i = 0; i < c->n; i++)
        most = c->samples[i].bytes[cat] > most ? c->samples[i].bytes[cat] : most;
    return most;
}

static void draw_band(vr_buf *b, const vr_catchart *c, const plot *p, int cat)
{
    int64_t most = most_of(c, cat);
    if (most == 0)
        return;
    vr_buf_printf(b, "<path class=\"vr-band vr-cat-%s\" fill=\"%s\" data-bytes=\"%lld\" d=\"",
                  vr_category_names[cat], category_colour[cat], (long long)c->peak[cat]);
    band_path(b, c, p, cat);
    vr_buf_printf(b, "\"><title>%s: ", vr_category_names[cat]);
    put_size(b, c->peak[cat]);
    vr_buf_puts(b, " at the peak; at most ");
    put_size(b, most);
    vr_buf_puts(b, "</title></path>\n");
}

static double samples_max(const vr_catchart *c)
{
    int64_t m = sum_of(c->peak);
    for (size_t i = 0; i < c->n; i++) {
        int64_t s = sum_of(c->samples[i].bytes);
        m = s > m ? s : m;
    }
    return m > 0 ? (double)m * 1.05 : 1024.0 * 1024 * 1024;
}

/* The chart; its legend in it, or (`legend` not NULL) as an HTML list
 * there, the SVG then ending under its time axis. */
static char *catchart_svg(const vr_catchart *c, char **legend)
{
    plot p = {c->axis.left, c->axis.right, TOP,           TOP + PLOT_H,
              c->axis.t_lo, c->axis.t_hi,  samples_max(c)};
    int had[NCAT];
    for (int i = 0; i < NCAT; i++)
        had[i] = most_of(c, i) > 0;
    int cols = legend_cols(c->peak, had, 0);
    int height = legend ? TOP + PLOT_H + 24
                        : TOP + PLOT_H + 32 +
                              (legend_items(c->peak, had, 0) + cols - 1) / cols * LEGEND_ROW;
    vr_buf b = VR_BUF_INIT;
    open_svg(&b, height, "vr-chart vr-categories", c->title);
    draw_y_axis(&b, &p);
    for (int i = 0; i < NCAT; i++)
        draw_band(&b, c, &p, i);
    draw_x_axis(&b, c, &p);
    if (legend)
        *legend = legend_list(c->peak, had);
    else
        draw_legend(&b, p.bottom + 36, cols, c->peak, 0, had, 0);
    vr_buf_puts(&b, "</svg>");
    return vr_buf_detach(&b);
}

char *vr_catchart_svg(const vr_catchart *c)
{
    return catchart_svg(c, NULL);
}

char *vr_catchart_svg_html(const vr_catchart *c, char **legend)
{
    return catchart_svg(c, legend);
}

/*-*** the peak's composition ***/

/*-*** the device at the peak ***/

/* The parts beyond the categories, in the bar's order after them. The
 * cache's colour is the segment map's "free (cached)"; free is the page's
 * ground with an outline: empty room. */
enum { PART_CACHED, PART_OUTSIDE, PART_FREE, NPARTS };
#define MIN_PART_W 3.0 /* viewBox units */
static const struct {
    const char *cls, *name, *fill, *stroke;
} device_parts[NPARTS] = {
    {"cached", "cached, free (PyTorch's pool)", "#cfe6f5", "#fff"},
    {"outside", "outside PyTorch (nvidia-smi used less reserved)", "#555555", "#fff"},
    {"free", "free on the device", "#fff", "#8a8a8a"},
};

static void bar_part(vr_buf *b, double *x, double scale, const char *cls, const char *name,
                     const char *fill, const char *stroke, int64_t bytes, const char *share_of,
                     int64_t whole, double min_w)
{
    double w = scale * (double)bytes;
    w = w < min_w ? min_w : w;
    vr_buf_printf(b, "<rect class=\"vr-part %s\" data-bytes=\"%lld\" x=\"", cls,
                  (long long)bytes);
    put_coord(b, *x);
    vr_buf_printf(b, "\" y=\"%d\" width=\"", TOP);
    put_coord(b, w);
    vr_buf_printf(b, "\" height=\"%d\" fill=\"%s\" stroke=\"%s\" stroke-width=\"1\">", BAR_H,
                  fill, stroke);
    vr_buf_printf(b, "<title>%s: ", name);
    put_size(b, bytes);
    vr_buf_puts(b, ", ");
    put_share(b, bytes, whole);
    vr_buf_printf(b, " of %s</title></rect>\n", share_of);
    *x += w;
}


/* The bar's legend flows: each item (swatch, name, size, share; the exact
 * bytes are the part's tooltip and data-bytes) after the
 * one before while the row has room, by an estimate of its text's width
 * at a phone's text size (LEGEND_CHAR_W_PHONE), so that no item runs into
 * the next one there. */

typedef struct {
    double x, y;
    int rows;
} flow;

/* "name: 2.41 GiB, 37.2%" (the share only when `whole` > 0). */
static void item_text(vr_buf *text, const char *name, int64_t bytes, int64_t whole)
{
    char h[32]; /* the size alone: its exact bytes are the bar part's tooltip */
    vr_units_bytes(bytes, h, sizeof h);
    vr_buf_printf(text, "%s: %s", name, h);
    if (whole > 0) {
        vr_buf_puts(text, ", ");
        put_share(text, bytes, whole);
    }
}

static void flow_item(vr_buf *b, flow *f, const char *cls, const char *name, const char *fill,
                      const char *stroke, int64_t bytes, int64_t whole)
{
    vr_buf text = VR_BUF_INIT;
    item_text(&text, name, bytes, whole);
    double w = 17 + LEGEND_CHAR_W_PHONE * (double)text.len + 8;
    if (f->x > PAD && f->x + w > VIEW_W - PAD) {
        f->x = PAD;
        f->y += LEGEND_ROW;
        f->rows++;
    }
    if (f->rows == 0)
        f->rows = 1;
    vr_buf_printf(b, "<g class=\"vr-legend %s\" data-bytes=\"%lld\"><rect x=\"", cls,
                  (long long)bytes);
    put_coord(b, f->x);
    vr_buf_puts(b, "\" y=\"");
    put_coord(b, f->y - 10);
    vr_buf_printf(b, "\" width=\"12\" height=\"12\" fill=\"%s\" stroke=\"%s\"/><text x=\"", fill,
                  stroke);
    put_coord(b, f->x + 17);
    vr_buf_puts(b, "\" y=\"");
    put_coord(b, f->y);
    vr_buf_puts(b, "\" font-size=\"11\">");
    vr_buf_append(b, text.data, text.len);
    vr_buf_puts(b, "</text></g>\n");
    vr_buf_free(&text);
    f->x += w;
}

/* The legend's items, in the bar's order: the categories with bytes, then
 * the device's parts; its rows are counted when `b` is NULL. */
static int devbar_flow(vr_buf *b, double y, const int64_t cats[NCAT], int64_t peak,
                       const int64_t parts[NPARTS])
{
    vr_buf scratch = VR_BUF_INIT;
    vr_buf *out = b ? b : &scratch;
    flow f = {PAD, y, 0};
    for (int i = 0; i < NCAT; i++)
        if (cats[i] > 0) {
            char cls[48];
            snprintf(cls, sizeof cls, "vr-cat-%s", vr_category_names[i]);
            flow_item(out, &f, cls, vr_category_names[i], category_colour[i], category_colour[i],
                      cats[i], peak);
        }
    for (int i = 0; i < NPARTS; i++)
        if (parts[i] >= 0) {
            char cls[48];
            snprintf(cls, sizeof cls, "vr-dev-%s", device_parts[i].cls);
            flow_item(out, &f, cls, device_parts[i].name, device_parts[i].fill, "#8a8a8a",
                      parts[i], 0);
        }
    vr_buf_free(&scratch);
    return f.rows;
}

/* The same items as an HTML list (legend_html.h). */
#define DEVBAR_ITEMS (NCAT + NPARTS)
static char *devbar_list(const int64_t cats[NCAT], int64_t peak, const int64_t parts[NPARTS])
{
    vr_legend_item items[DEVBAR_ITEMS];
    vr_buf text[DEVBAR_ITEMS];
    char cls[DEVBAR_ITEMS][48];
    size_t n = 0;
    for (int i = 0; i < DEVBAR_ITEMS; i++) {
        int cat = i < NCAT, k = cat ? i : i - NCAT;
        int64_t bytes = cat ? cats[k] : parts[k];
        if (cat ? bytes <= 0 : bytes < 0)
            continue;
        const char *name = cat ? vr_category_names[k] : device_parts[k].name;
        text[n] = (vr_buf)VR_BUF_INIT;
        item_text(&text[n], name, bytes, cat ? peak : 0);
        snprintf(cls[n], sizeof cls[n], "vr-%s-%s", cat ? "cat" : "dev",
                 cat ? name : device_parts[k].cls);
        items[n] = (vr_legend_item){cls[n],
                                    text[n].data,
                                    VR_SWATCH_BOX,
                                    cat ? category_colour[k] : device_parts[k].fill,
                                    cat ? category_colour[k] : "#8a8a8a",
                                    NULL,
                                    bytes};
        n++;
    }
    return legend_out(items, text, n);
}

/* The bar; its legend in it, or (`legend` not NULL) as an HTML list
 * there. */
static char *devbar_svg(const char *title, const vr_devbar *d, char **legend)
{
    int64_t peak = sum_of(d->categories);
    int64_t parts[NPARTS] = {d->cached_free, d->outside, -1};
    int64_t used = peak;
    for (int i = 0; i < PART_FREE; i++)
        used = vr_sat_add(used, parts[i] > 0 ? parts[i] : 0);
    if (d->capacity > 0)
        parts[PART_FREE] = d->capacity > used ? d->capacity - used : 0;
    int64_t whole = d->capacity > used ? d->capacity : used;
    int extra = 0;
    for (int i = 0; i < NPARTS; i++)
        extra += parts[i] >= 0;
    /* The categories' legend in two columns, the ones with bytes only
     * (the table under the bar lists the others), keeps the bar and the
     * timeline below it within a first screen. */
    (void)extra;
    int rows = legend ? 0 : devbar_flow(NULL, TOP + BAR_H + 24, d->categories, peak, parts);
    int height = legend ? TOP + BAR_H + 10 : TOP + BAR_H + 24 + rows * LEGEND_ROW;
    /* The device's parts, when known and not empty, are never thinner
     * than MIN_PART_W (a reader sees that the cache, the rest and the
     * free room are there, however small): the room they take is the
     * others' less. */
    double room = VIEW_W - 2 * PAD;
    int64_t scaled = whole;
    for (int pass = 0; pass < 2; pass++) {
        room = VIEW_W - 2 * PAD;
        int64_t big = whole;
        for (int i = 0; i < NPARTS; i++)
            if (parts[i] > 0 &&
                (scaled > 0 ? room * (double)parts[i] / (double)scaled : 0) < MIN_PART_W) {
                room -= MIN_PART_W;
                big = vr_sat_sub(big, parts[i]);
            }
        scaled = big;
    }
    double x = PAD, scale = scaled > 0 ? room / (double)scaled : 0;
    vr_buf b = VR_BUF_INIT;
    open_svg(&b, height, "vr-chart vr-composition", title ? title : "");
    vr_buf_printf(&b, "<g class=\"vr-bar\" data-bytes=\"%lld\">\n", (long long)whole);
    for (int i = 0; i < NCAT; i++)
        if (d->categories[i] > 0) {
            char cls[48];
            snprintf(cls, sizeof cls, "vr-cat-%s", vr_category_names[i]);
            bar_part(&b, &x, scale, cls, vr_category_names[i], category_colour[i], "#fff",
                     d->categories[i], "the peak", peak, 0);
        }
    for (int i = 0; i < NPARTS; i++)
        if (parts[i] > 0) {
            char cls[48];
            snprintf(cls, sizeof cls, "vr-dev-%s", device_parts[i].cls);
            bar_part(&b, &x, scale, cls, device_parts[i].name, device_parts[i].fill,
                     device_parts[i].stroke, parts[i], "the device", whole, MIN_PART_W);
        }
    vr_buf_puts(&b, "</g>\n");
    if (d->capacity > 0) {
        /* The capacity: a tick at the bar's end, its size in its title. */
        char h[32];
        vr_units_bytes(d->capacity, h, sizeof h);
        vr_buf_printf(&b, "<path class=\"vr-capacity\" data-bytes=\"%lld\" d=\"M",
                      (long long)d->capacity);
        put_coord(&b, d->capacity >= used ? x : PAD + scale * (double)d->capacity);
        vr_buf_printf(
            &b, " %d V%d\" stroke=\"%s\" stroke-width=\"2\"><title>capacity: %s</title></path>\n",
            TOP - 4, TOP + BAR_H + 4, "#000000", h);
    }
    if (legend)
        *legend = devbar_list(d->categories, peak, parts);
    else
        devbar_flow(&b, TOP + BAR_H + 24, d->categories, peak, parts);
    vr_buf_puts(&b, "</svg>");
    return vr_buf_detach(&b);
}

char *vr_devbar_svg(const char *title, const vr_devbar *d)
{
    return devbar_svg(title, d, NULL);
}

char *vr_devbar_svg_html(const char *title, const vr_devbar *d, char **legend)
{
    return devbar_svg(title, d, legend);
}

char *vr_catbar_svg(const char *title, const int64_t bytes[NCAT])
{
    vr_devbar d = {{0}, -1, -1, 0};
    memcpy(d.categories, bytes, sizeof d.categories);
    return vr_devbar_svg(title, &d);
}
