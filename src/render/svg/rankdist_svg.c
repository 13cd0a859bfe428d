/* The ranks' peaks side by side (rankdist_svg.h). */
#include "render/svg/rankdist_svg.h"

#include <stdio.h>
#include <stdlib.h>

#include "render/svg/legend_html.h"
#include "util/buf.h"
#include "util/units.h"

/* The picture: 560 units wide as the report's other charts; the plot
 * between the margins, bars from its bottom. */
#define W 560
#define H 236
#define LEFT 72
#define RIGHT 548
#define TOP 24
#define BOTTOM 196
#define FONT 13

static const char colour_in[] = "#0072b2";  /* within the median's band */
static const char colour_off[] = "#d55e00"; /* off it */
static const char colour_median[] = "#333";

/* Ranks named over their bars at most: the highest of the off ones. */
#define NAMED_MAX 3

int vr_rankdist_off(int64_t peak, int64_t median)
{
    if (median <= 0)
        return 0;
    int64_t gap = peak > median ? peak - median : median - peak;
    /* gap / median >= permille / 1000, without overflow for any int64 */
    return (double)gap * 1000.0 >= (double)median * VR_RANKDIST_OFF_PERMILLE;
}

static double y_of(int64_t v, int64_t top)
{
    return BOTTOM - (double)(BOTTOM - TOP) * ((double)v / (double)top);
}

static void coord(vr_buf *b, double v)
{
    vr_buf_printf(b, "%.1f", v);
}

/* The y axis: 0, half and the top, in the report's units. */
static void draw_y_axis(vr_buf *b, int64_t top)
{
    for (int k = 0; k <= 2; k++) {
        int64_t v = top / 2 * k;
        char t[32];
        vr_units_bytes(v, t, sizeof t);
        double y = y_of(v, top);
        vr_buf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"", LEFT, RIGHT);
        coord(b, y);
        vr_buf_puts(b, "\" y2=\"");
        coord(b, y);
        vr_buf_puts(b, "\" stroke=\"#e3e3e3\" stroke-width=\"1\"/>\n");
        vr_buf_printf(b, "<text x=\"%d\" y=\"", LEFT - 6);
        coord(b, y + 4);
        vr_buf_printf(b, "\" text-anchor=\"end\" fill=\"#666\">%s</text>\n", t);
    }
}

/* The x axis: the first, middle and last rank under their bars. */
static void draw_x_axis(vr_buf *b, const vr_rank_peak *r, size_t n, double bw)
{
    vr_buf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#666\"/>\n", LEFT, RIGHT,
                  BOTTOM, BOTTOM);
    size_t at[3] = {0, n / 2, n - 1};
    for (int k = 0; k < 3; k++) {
        if ((k == 1 && (n < 3 || at[1] == at[2])) || (k == 2 && n < 2))
            continue;
        const char *anchor = k == 0 ? "start" : k == 1 ? "middle" : "end";
        double x = LEFT + bw * ((double)at[k] + 0.5);
        if (k == 0)
            x = LEFT;
        if (k == 2)
            x = RIGHT;
        vr_buf_puts(b, "<text x=\"");
        coord(b, x);
        vr_buf_printf(b, "\" y=\"%d\" text-anchor=\"%s\" fill=\"#666\">rank %lld</text>\n",
                      BOTTOM + 18, anchor, (long long)r[at[k]].rank);
    }
}

static void draw_bars(vr_buf *b, const vr_rank_peak *r, size_t n, int64_t median, int64_t top,
                      double bw)
{
    /* a gap between bars while they are wide enough to show one */
    double gap = bw >= 4 ? 1 : 0;
    for (size_t i = 0; i < n; i++) {
        double y = y_of(r[i].peak, top);
        vr_buf_puts(b, "<rect x=\"");
        coord(b, LEFT + bw * (double)i);
        vr_buf_puts(b, "\" y=\"");
        coord(b, y);
        vr_buf_puts(b, "\" width=\"");
        coord(b, bw - gap > 0.3 ? bw - gap : 0.3);
        vr_buf_puts(b, "\" height=\"");
        coord(b, BOTTOM - y);
        char t[32];
        vr_units_bytes(r[i].peak, t, sizeof t);
        vr_buf_printf(b, "\" fill=\"%s\"><title>rank %lld: %s</title></rect>\n",
                      vr_rankdist_off(r[i].peak, median) ? colour_off : colour_in,
                      (long long)r[i].rank, t);
    }
}

/* The highest off ranks, named over their bars, each clear of the last
 * named (a label needs some 60 units). */
static void draw_names(vr_buf *b, const vr_rank_peak *r, size_t n, int64_t median, int64_t top,
                       double bw)
{
    double placed[NAMED_MAX];
    int named = 0;
    for (int round = 0; round < NAMED_MAX; round++) {
        size_t best = n;
        for (size_t i = 0; i < n; i++) {
            if (!vr_rankdist_off(r[i].peak, median) || r[i].peak <= median)
                continue;
            double x = LEFT + bw * ((double)i + 0.5);
            int clear = 1;
            for (int k = 0; k < named; k++)
                clear &= x < placed[k] - 64 || x > placed[k] + 64;
            if (clear && (best == n || r[i].peak > r[best].peak))
                best = i;
        }
        if (best == n)
            break;
        double x = LEFT + bw * ((double)best + 0.5);
        placed[named++] = x;
        const char *anchor = x < LEFT + 40 ? "start" : x > RIGHT - 40 ? "end" : "middle";
        vr_buf_puts(b, "<text x=\"");
        coord(b, x);
        vr_buf_puts(b, "\" y=\"");
        coord(b, y_of(r[best].peak, top) - 5);
        vr_buf_printf(b, "\" text-anchor=\"%s\" fill=\"#333\">rank %lld</text>\n", anchor,
                      (long long)r[best].rank);
    }
}

static void draw_median(vr_buf *b, int64_t median, int64_t top)
{
    double y = y_of(median, top);
    vr_buf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"", LEFT, RIGHT);
    coord(b, y);
    vr_buf_puts(b, "\" y2=\"");
    coord(b, y);
    vr_buf_printf(b, "\" stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>\n",
                  colour_median);
}

static char *legend_of(int64_t median, size_t off, size_t n)
{
    char m[64], in_text[96], off_text[96];
    char mb[32];
    vr_units_bytes(median, mb, sizeof mb);
    snprintf(m, sizeof m, "the median, %s", mb);
    snprintf(in_text, sizeof in_text, "within %d %% of it (%zu)", VR_RANKDIST_OFF_PERMILLE / 10,
             n - off);
    snprintf(off_text, sizeof off_text, "%d %% or more from it (%zu)",
             VR_RANKDIST_OFF_PERMILLE / 10, off);
    vr_legend_item items[3] = {
        {"vr-rank-median", m, VR_SWATCH_LINE, colour_median, NULL, "5 3", -1},
        {"vr-rank-in", in_text, VR_SWATCH_BOX, colour_in, NULL, NULL, -1},
        {"vr-rank-off", off_text, VR_SWATCH_BOX, colour_off, NULL, NULL, -1},
    };
    vr_buf out = VR_BUF_INIT;
    vr_legend_html(&out, items, off ? 3 : 2, (size_t)-1);
    return vr_buf_detach(&out);
}

char *vr_rankdist_svg(const vr_rank_peak *r, size_t n, int64_t median, char **legend)
{
    *legend = NULL;
    if (n == 0)
        return NULL;
    int64_t top = median;
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].peak > top)
            top = r[i].peak;
        off += (size_t)vr_rankdist_off(r[i].peak, median);
    }
    if (top <= 0)
        top = 1;
    double bw = (double)(RIGHT - LEFT) / (double)n;
    char mb[32];
    vr_units_bytes(median, mb, sizeof mb);
    vr_buf b = VR_BUF_INIT;
    vr_buf_printf(&b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" "
                  "height=\"%d\" class=\"vr-chart vr-rankdist\" role=\"img\" font-size=\"%d\" "
                  "font-family=\"system-ui, sans-serif\" aria-label=\"Peak allocated memory of "
                  "each of %zu ranks; median %s; %zu ranks %d %% or more from it\">\n",
                  W, H, W, H, FONT, n, mb, off, VR_RANKDIST_OFF_PERMILLE / 10);
    vr_buf_printf(&b, "<title>Peak allocated memory of each of %zu ranks</title>\n", n);
    draw_y_axis(&b, top);
    draw_bars(&b, r, n, median, top, bw);
    draw_median(&b, median, top);
    draw_names(&b, r, n, median, top, bw);
    draw_x_axis(&b, r, n, bw);
    vr_buf_puts(&b, "</svg>\n");
    *legend = legend_of(median, off, n);
    return vr_buf_detach(&b);
}
