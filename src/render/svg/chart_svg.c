/*-*** chart_svg.c: the memory-over-time chart as inline SVG ***/
/*
 * Two halves:
 *
 *  - Downsampling. The declared time range is cut into NBUCKETS buckets; a
 *    series keeps, per bucket, its first, minimum, maximum and last point.
 *    Buckets are closed as soon as a point lands in a later one, so a series
 *    holds one open bucket plus a fixed array of closed ones: memory is the
 *    same for a thousand points or a billion. Keeping min and max per bucket
 *    means spikes survive (the global maximum is always one of the kept
 *    points); keeping first and last keeps the step shape between buckets.
 *
 *  - Rendering. Plain string building into a growable buffer. Numbers are
 *    printed with integer arithmetic, never with %f, so a caller that ran
 *    setlocale() cannot turn "12.5" into "12,5" and break the SVG.
 */
#include "render/svg/chart_svg.h"
#include "util/sat.h"
#include "util/units.h"
#include "util/utf8.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "render/svg/legend_html.h"
#include "render/svg/svg_text.h"

/* Four kept points per bucket: first, min, max, last. */
#define NBUCKETS (VR_CHART_MAX_POINTS / 4)

/* Geometry in viewBox units. 560 wide is a compromise: at phone width
 * (~390 px) 13-unit text would be ~9 px, so the page sets it to 15 units
 * there (PHONE_TEXT_GROWTH below), and on desktop the page can cap the
 * width with CSS (svg.vr-chart { max-width: ... }). */
#define VIEW_W 560
#define VIEW_H 320
/* A small multiple: title and legend share the top line, the plot keeps
 * ~100 units, so a stack of them still reads at a glance. */
#define VIEW_H_COMPACT 170
#define PAD 12  /* outer padding */
#define FONT 13 /* axis, legend and marker text */
#define FONT_TITLE 16
#define CHAR_W 7.2       /* rough average glyph width at FONT, for layout */
#define CHAR_W_TITLE 8.9 /* the same at FONT_TITLE */
#define LEGEND_ROW 20
/* The report page sets the charts' text to 15 units (titles 16) on a
 * phone and to 18 on a narrow one (under 380 px: 320 px wide, 10.3 px;
 * templates/report.html.mustache): labels whose side or place is chosen
 * by their width, and the y axis's labels' margin, allow for 18. */
#define PHONE_TEXT_GROWTH (18.0 / FONT)
#define TITLE_MAX_CP 64 /* longer titles are cut (full text in <title>) */
#define LABEL_MAX_CP 28

#define NS_PER_S 1e9
/* Narrower time ranges are widened to a second (vr_chart_new): 4 steps of
 * a double at the largest int64, so the x scale never divides by zero. */
#define MIN_RANGE_NS 4096u

static const char *const series_colour[VR_CHART_MAX_SERIES] = {
    /* Okabe-Ito: colourblind-safe, readable on white paper. */
    "#d55e00", /* vermillion: the "allocated" series */
    "#0072b2", /* blue: "reserved" */
    "#009e73", /* bluish green */
    "#cc79a7", /* reddish purple */
};
#define COLOUR_TEXT "#333"
#define COLOUR_MUTED "#666"
#define COLOUR_GRID "#e3e3e3"
#define COLOUR_CAPACITY "#777"
/* Black: apart from every series colour for any colour vision (the page's
 * dark mode repaints it light). */
#define COLOUR_OOM "#000000"

/*** data ***/

typedef struct {
    int64_t t, v;
} pt;

/* A point of the open bucket, with its arrival number so that the four
 * candidates can be put back in arrival order and de-duplicated. */
typedef struct {
    pt p;
    uint64_t seq;
} seq_pt;

typedef struct {
    char *label;
    char *css_class;
    pt *kept; /* closed buckets, VR_CHART_MAX_POINTS allocated */
    size_t nkept;
    long bucket; /* index of the open bucket */
    seq_pt first, lo, hi, last;
    uint64_t seen; /* points added */
    pt peak;       /* first occurrence of the maximum */
} series;

typedef struct {
    int64_t t;
    char *label;
} step_mark;

typedef struct {
    int64_t t, level, requested;
    char *detail;
} oom_mark;

typedef struct {
    int64_t t, allocated, reserved; /* reserved < 0: not printed */
    char *detail;
} print_mark;

struct vr_chart {
    char *title;
    int64_t t0, t1;   /* t1 > t0 after widening */
    int64_t origin;   /* x labels count from here (t0 unless set) */
    int64_t y_top;    /* fixed top of the y axis; 0: from the data */
    int shared;       /* origin or y_top set: the axes are stated */
    int64_t data_end; /* the last values hold until here... */
    int has_data_end; /* ...when set; else to the range's end */
    int compact;
    int html_legend; /* the legend is an HTML list, not in the SVG */
    int64_t entries; /* > 0: times are entry ordinals of so many (a snapshot without clock) */
    int64_t x_span;  /* the span the x unit is chosen by; 0: the range's */
    int nseries;
    series s[VR_CHART_MAX_SERIES];
    int64_t capacity;
    char *capacity_label;
    int64_t baseline; /* live before the record began; 0: none */
    char *baseline_label;
    step_mark *steps; /* VR_CHART_MAX_STEPS, allocated on first use */
    size_t nsteps, steps_dropped;
    oom_mark ooms[VR_CHART_MAX_OOMS];
    size_t nooms, ooms_dropped;
    print_mark *prints; /* VR_CHART_MAX_PRINTS, allocated on first use */
    size_t nprints, prints_dropped;
};

vr_chart *vr_chart_new(const char *title, int64_t t0_ns, int64_t t1_ns)
{
    vr_chart *c = vr_xcalloc(1, sizeof *c);
    c->title = vr_xstrdup(title ? title : "");
    c->t0 = t0_ns;
    /* An empty range would divide by zero; one second is a sane width for
     * "everything happened at once". So would one that doubles cannot
     * tell apart: at epoch nanoseconds (2^60 and up) they step by 256 ns
     * or more, and the scale and ticks are doubles. */
    if (t1_ns > t0_ns && (uint64_t)t1_ns - (uint64_t)t0_ns >= MIN_RANGE_NS)
        c->t1 = t1_ns;
    else if (t0_ns <= INT64_MAX - (int64_t)NS_PER_S)
        c->t1 = t0_ns + (int64_t)NS_PER_S;
    else { /* at the very end of time: widen backwards instead */
        c->t0 = t0_ns - (int64_t)NS_PER_S;
        c->t1 = t0_ns;
    }
    c->origin = c->t0;
    return c;
}

void vr_chart_set_origin(vr_chart *chart, int64_t t_ns)
{
    if (!chart)
        return;
    chart->origin = t_ns;
    chart->shared = 1;
}

void vr_chart_set_entries(vr_chart *chart, int64_t count)
{
    if (!chart)
        return;
    chart->entries = count > 0 ? count : 1;
    chart->t0 = 0;
    chart->t1 = count > 1 ? count - 1 : 1;
    chart->origin = 0;
}

void vr_chart_set_x_span(vr_chart *chart, int64_t span_ns)
{
    if (chart && span_ns > 0)
        chart->x_span = span_ns;
}

void vr_chart_set_y_top(vr_chart *chart, int64_t bytes)
{
    if (!chart)
        return;
    chart->y_top = bytes > 0 ? bytes : 0;
    chart->shared = 1;
}

void vr_chart_set_data_end(vr_chart *chart, int64_t t_ns)
{
    if (!chart)
        return;
    chart->data_end = t_ns;
    chart->has_data_end = 1;
}

void vr_chart_set_compact(vr_chart *chart, int compact)
{
    if (chart)
        chart->compact = compact != 0;
}

void vr_chart_set_html_legend(vr_chart *chart, int html)
{
    if (chart)
        chart->html_legend = html != 0;
}

void vr_chart_free(vr_chart *chart)
{
    if (!chart)
        return;
    for (int i = 0; i < chart->nseries; i++) {
        free(chart->s[i].label);
        free(chart->s[i].css_class);
        free(chart->s[i].kept);
    }
    for (size_t i = 0; i < chart->nsteps; i++)
        free(chart->steps[i].label);
    free(chart->steps);
    for (size_t i = 0; i < chart->nooms; i++)
        free(chart->ooms[i].detail);
    for (size_t i = 0; i < chart->nprints; i++)
        free(chart->prints[i].detail);
    free(chart->prints);
    free(chart->title);
    free(chart->capacity_label);
    free(chart->baseline_label);
    free(chart);
}

int vr_chart_add_series(vr_chart *chart, const char *label, const char *css_class)
{
    if (!chart || chart->nseries >= VR_CHART_MAX_SERIES)
        return -1;
    series *s = &chart->s[chart->nseries];
    memset(s, 0, sizeof *s);
    s->label = vr_xstrdup(label ? label : "");
    s->css_class = vr_xstrdup(css_class ? css_class : "");
    /* Allocated once, up front, so adding points never allocates. */
    s->kept = vr_xcalloc(VR_CHART_MAX_POINTS, sizeof *s->kept);
    return chart->nseries++;
}

void vr_chart_set_capacity(vr_chart *chart, int64_t bytes, const char *label)
{
    if (!chart)
        return;
    free(chart->capacity_label);
    chart->capacity_label = vr_xstrdup(label && *label ? label : "capacity");
    chart->capacity = bytes > 0 ? bytes : 0;
}

void vr_chart_set_baseline(vr_chart *chart, int64_t bytes, const char *label)
{
    if (!chart)
        return;
    free(chart->baseline_label);
    chart->baseline_label = vr_xstrdup(label && *label ? label : "before the record");
    chart->baseline = bytes > 0 ? bytes : 0;
}

void vr_chart_add_step(vr_chart *chart, int64_t t_ns, const char *label)
{
    if (!chart)
        return;
    if (!chart->steps)
        chart->steps = vr_xmalloc(VR_CHART_MAX_STEPS * sizeof *chart->steps);
    if (chart->nsteps == VR_CHART_MAX_STEPS) {
        chart->steps_dropped++;
        return;
    }
    step_mark *m = &chart->steps[chart->nsteps++];
    m->t = t_ns;
    m->label = vr_xstrdup(label ? label : "");
}

void vr_chart_add_oom(vr_chart *chart, int64_t t_ns, int64_t level, int64_t requested,
                      const char *detail)
{
    if (!chart)
        return;
    if (chart->nooms == VR_CHART_MAX_OOMS) {
        chart->ooms_dropped++;
        return;
    }
    oom_mark *m = &chart->ooms[chart->nooms++];
    m->t = t_ns;
    m->level = level > 0 ? level : 0;
    m->requested = requested > 0 ? requested : 0;
    m->detail = vr_xstrdup(detail ? detail : "out of memory");
}

void vr_chart_add_print(vr_chart *chart, int64_t t_ns, int64_t allocated, int64_t reserved,
                        const char *detail)
{
    if (!chart)
        return;
    if (!chart->prints)
        chart->prints = vr_xmalloc(VR_CHART_MAX_PRINTS * sizeof *chart->prints);
    if (chart->nprints == VR_CHART_MAX_PRINTS) {
        chart->prints_dropped++;
        return;
    }
    print_mark *m = &chart->prints[chart->nprints++];
    m->t = t_ns;
    m->allocated = allocated > 0 ? allocated : 0;
    m->reserved = reserved;
    m->detail = vr_xstrdup(detail ? detail : "");
}

/*** downsampling ***/

/* Points outside [t0,t1] fall into the first or last bucket: the bound on
 * kept points holds whatever the caller sends. */
static long bucket_of(const vr_chart *c, int64_t t)
{
    double f = ((double)t - (double)c->t0) / ((double)c->t1 - (double)c->t0);
    double b = floor(f * NBUCKETS);
    if (!(b >= 0))
        return 0;
    return b >= NBUCKETS ? NBUCKETS - 1 : (long)b;
}

/* The open bucket's distinct candidates in arrival order; returns how many
 * (0 to 4). First <= min,max <= last in arrival, so sorting 4 is enough. */
static size_t open_bucket(const series *s, pt out[4])
{
    if (!s->seen)
        return 0;
    seq_pt c[4] = {s->first, s->lo, s->hi, s->last};
    for (int i = 1; i < 4; i++)
        for (int j = i; j > 0 && c[j - 1].seq > c[j].seq; j--) {
            seq_pt tmp = c[j];
            c[j] = c[j - 1];
            c[j - 1] = tmp;
        }
    size_t n = 0;
    for (int i = 0; i < 4; i++)
        if (i == 0 || c[i].seq != c[i - 1].seq)
            out[n++] = c[i].p;
    return n;
}

static void close_bucket(series *s)
{
    pt tmp[4];
    size_t n = open_bucket(s, tmp);
    /* Each bucket closes once and buckets only move forward, so this never
     * overflows; the check is a guard, not a code path. */
    if (s->nkept + n > VR_CHART_MAX_POINTS)
        n = VR_CHART_MAX_POINTS - s->nkept;
    memcpy(s->kept + s->nkept, tmp, n * sizeof *tmp);
    s->nkept += n;
}

static void open_new_bucket(series *s, long b, seq_pt p)
{
    s->bucket = b;
    s->first = s->lo = s->hi = s->last = p;
}

void vr_chart_add_point(vr_chart *chart, int series_ix, int64_t t_ns, int64_t bytes)
{
    if (!chart || series_ix < 0 || series_ix >= chart->nseries)
        return;
    series *s = &chart->s[series_ix];
    /* Out-of-order times would draw backwards; pin them to the last time
     * (the value still counts, as a change at that instant). */
    if (s->seen && t_ns < s->last.p.t)
        t_ns = s->last.p.t;
    seq_pt p = {{t_ns, bytes}, s->seen};
    long b = bucket_of(chart, t_ns);
    if (!s->seen) {
        open_new_bucket(s, b, p);
        s->peak = p.p;
    } else if (b > s->bucket) {
        close_bucket(s);
        open_new_bucket(s, b, p);
    } else {
        /* Strict comparisons keep the first occurrence of an extreme. */
        if (bytes < s->lo.p.v)
            s->lo = p;
        if (bytes > s->hi.p.v)
            s->hi = p;
        s->last = p;
    }
    if (bytes > s->peak.v)
        s->peak = p.p;
    s->seen++;
}

void vr_chart_clear_points(vr_chart *chart)
{
    if (!chart)
        return;
    for (int i = 0; i < chart->nseries; i++) {
        series *s = &chart->s[i];
        s->nkept = 0;
        s->bucket = 0;
        s->first = s->lo = s->hi = s->last = (seq_pt){{0, 0}, 0};
        s->seen = 0;
        s->peak = (pt){0, 0};
    }
}

size_t vr_chart_points(const vr_chart *chart, int series_ix)
{
    if (!chart || series_ix < 0 || series_ix >= chart->nseries)
        return 0;
    pt tmp[4];
    const series *s = &chart->s[series_ix];
    return s->nkept + open_bucket(s, tmp);
}

int vr_chart_peak(const vr_chart *chart, int series_ix, int64_t *t_ns, int64_t *bytes)
{
    if (!chart || series_ix < 0 || series_ix >= chart->nseries || !chart->s[series_ix].seen)
        return -1;
    if (t_ns)
        *t_ns = chart->s[series_ix].peak.t;
    if (bytes)
        *bytes = chart->s[series_ix].peak.v;
    return 0;
}

/* All kept points of a series, closed buckets then the open one, without
 * modifying the chart (rendering is const and may happen mid-stream). */
typedef struct {
    const pt *kept;
    size_t nkept;
    pt tail[4];
    size_t n;
} view;

static void view_init(view *v, const series *s)
{
    v->kept = s->kept;
    v->nkept = s->nkept;
    v->n = s->nkept + open_bucket(s, v->tail);
}

static pt view_at(const view *v, size_t i)
{
    return i < v->nkept ? v->kept[i] : v->tail[i - v->nkept];
}

/*** string building ***/

/* Fixed-point decimal with at most `dec` (0..6) decimals, trailing zeros
 * dropped: 12.50 -> "12.5", 3.0 -> "3", -0.04 at 1 decimal -> "0". */
static void fmt_fixed(char *out, size_t size, double x, int dec)
{
    static const long long pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
    long long m = pow10[dec];
    double scaled = x * (double)m;
    if (!(fabs(scaled) < 9e18)) /* NaN or absurd: never print garbage */
        scaled = 0;
    long long q = llround(scaled);
    const char *sign = q < 0 ? "-" : "";
    unsigned long long u = q < 0 ? 0ULL - (unsigned long long)q : (unsigned long long)q;
    unsigned long long ip = u / (unsigned long long)m;
    unsigned long long fp = u % (unsigned long long)m;
    if (!fp) {
        snprintf(out, size, "%s%llu", sign, ip);
        return;
    }
    while (fp % 10 == 0) {
        fp /= 10;
        dec--;
    }
    snprintf(out, size, "%s%llu.%0*llu", sign, ip, dec, fp);
}

/* A coordinate: one decimal is finer than any screen or printer needs and
 * keeps a 2000-point path around 20 KB. */
static void sb_coord(vr_buf *b, double x)
{
    char tmp[32];
    fmt_fixed(tmp, sizeof tmp, x, 1);
    vr_buf_puts(b, tmp);
}

static void sb_esc(vr_buf *b, const char *s)
{
    vr_svg_text(b, s, (size_t)-1);
}

/* Characters as a reader counts them, for layout estimates. */
static size_t count_cp(const char *s, size_t max_cp)
{
    size_t n = 0, left = strlen(s);
    uint32_t c;
    for (const char *u = s; *u; n++) {
        size_t len = vr_utf8_decode(u, left, &c);
        u += len ? len : 1;
        left -= len ? len : 1;
    }
    return n < max_cp ? n : max_cp + 1;
}

/*** units ***/

static const char *const byte_unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};

/* Largest binary unit not above |v| (bytes below 1 KiB stay bytes). */
static int unit_of(double v)
{
    int u = 0;
    v = fabs(v);
    while (u < 5 && v >= ldexp(1.0, 10 * (u + 1)))
        u++;
    return u;
}

/* "5.06 GiB", "12.5 GiB", "640 MiB", "17 B": three significant digits,
 * which is what a reader compares at a glance. */
static void fmt_bytes(char *out, size_t size, int64_t v)
{
    int u = unit_of((double)v);
    if (u == 0) {
        snprintf(out, size, "%lld B", (long long)v);
        return;
    }
    double x = (double)v / ldexp(1.0, 10 * u);
    int dec = fabs(x) < 10 ? 2 : fabs(x) < 100 ? 1 : 0;
    fmt_fixed(out, size, x, dec);
    size_t n = strlen(out);
    snprintf(out + n, size - n, " %s", byte_unit[u]);
}

/*** scales and ticks ***/

typedef struct {
    double left, right, top, bottom; /* plot area */
    int64_t tmin, tmax;              /* ns: the x range */
    double tlo, thi;                 /* the same, as doubles */
    double ymax;                     /* bytes at the top edge */
    double ymin;                     /* bytes at the bottom edge: 0, or a broken axis's floor */
} scale;

static double sx(const scale *sc, double t)
{
    return sc->left + (t - sc->tlo) / (sc->thi - sc->tlo) * (sc->right - sc->left);
}

static double sy(const scale *sc, double v)
{
    if (v < 0)
        v = 0; /* memory is never negative; keep bad input on the axis */
    if (v < sc->ymin)
        v = sc->ymin; /* under a broken axis's floor: on the floor */
    return sc->bottom - (v - sc->ymin) / (sc->ymax - sc->ymin) * (sc->bottom - sc->top);
}

/* Ticks at k*step, k = first..last, in display units (GiB, s, ms...). */
typedef struct {
    double step;
    long first, last;
    int dec;         /* decimals that step needs */
    double per_unit; /* raw units (bytes, ns) per display unit */
    const char *unit;
    int relative; /* labels count from tick `zero`, as "+20 ms" */
    long zero;
    double shift; /* raw units a tick sits before its value (entry N at ordinal N - 1) */
} ticks;

/* The smallest step from 1, 2, 2.5, 5 x 10^k that cuts `range` into fewer
 * than 6 intervals. The candidates grow by at most 2x, so the previous one
 * gave >= 6 intervals and this one gives >= 3: 4 to 6 lines counting 0. */
static double nice_step(double range)
{
    static const double mult[] = {1, 2, 2.5, 5, 10};
    double base = pow(10, floor(log10(range / 6)));
    for (int i = 0; i < 5; i++)
        if (range / (mult[i] * base) < 6)
            return mult[i] * base;
    return 10 * base;
}

static void ticks_fill(ticks *tk, double lo, double hi)
{
    tk->step = nice_step(hi - lo);
    tk->first = (long)ceil(lo / tk->step - 1e-9);
    tk->last = (long)floor(hi / tk->step + 1e-9);
    int dec = (int)ceil(-log10(tk->step)) + 1;
    tk->dec = dec < 0 ? 0 : dec > 6 ? 6 : dec;
    tk->relative = 0;
    tk->zero = 0;
    tk->shift = 0;
}

static void y_ticks(ticks *tk, double ymin, double ymax)
{
    int u = unit_of(ymax);
    tk->per_unit = ldexp(1.0, 10 * u);
    tk->unit = byte_unit[u];
    ticks_fill(tk, ymin / tk->per_unit, ymax / tk->per_unit);
}

/* A level far above the churn: when every value lies in the top half of
 * an axis from 0 (a flat 178 GiB on 0-200 GiB), the churn the chart is
 * for would be a flat line; the axis is broken instead, as for a far
 * capacity, and starts at a floor under the lowest value (a tick, 0:
 * none). Not on a fixed (shared) scale, nor under prints or a baseline
 * band, which are measured from 0. */
static double y_floor(const vr_chart *c, double ymax)
{
    if (c->y_top || c->baseline > 0 || c->nprints)
        return 0;
    double lo = -1, hi = 0;
    for (int i = 0; i < c->nseries; i++) {
        view v;
        view_init(&v, &c->s[i]);
        for (size_t k = 0; k < v.n; k++) {
            double y = (double)view_at(&v, k).v;
            lo = lo < 0 || y < lo ? y : lo;
            hi = y > hi ? y : hi;
        }
    }
    if (lo <= 0 || lo < 0.5 * ymax)
        return 0;
    ticks tk;
    double want = lo - 0.2 * (hi - lo > 0 ? hi - lo : lo * 0.05);
    y_ticks(&tk, want, ymax);
    double floor_v = floor(want / tk.per_unit / tk.step) * tk.step * tk.per_unit;
    return floor_v > 0 ? floor_v : 0;
}

static void x_ticks(ticks *tk, const vr_chart *c, const scale *sc)
{
    if (c->entries) {
        /* Entry numbers count from 1, as the tables' "entry 3,697 of
         * 6,832": the tick "1,000 entries" stands at ordinal 999, the
         * thousandth entry. Whole steps, no decimals. */
        double lo = sc->tlo - (double)c->origin + 1, hi = sc->thi - (double)c->origin + 1;
        tk->per_unit = 1;
        tk->unit = "entries";
        ticks_fill(tk, lo, hi);
        if (tk->step < 1) {
            tk->step = 1;
            tk->first = (long)ceil(lo);
            tk->last = (long)floor(hi);
        }
        tk->dec = 0;
        tk->shift = 1;
        return;
    }
    /* Under a second, seconds would need "0.0005 s"; ms reads better. The
     * devices of one report read in one unit (vr_chart_set_x_span). */
    double span = c->x_span ? (double)c->x_span : sc->thi - sc->tlo;
    int ms = span < NS_PER_S;
    tk->per_unit = ms ? 1e6 : NS_PER_S;
    tk->unit = ms ? "ms" : "s";
    ticks_fill(tk, (sc->tlo - (double)c->origin) / tk->per_unit,
               (sc->thi - (double)c->origin) / tk->per_unit);
    /* A device whose record starts far from the report's origin (two
     * unrelated files, days apart) would need labels of nine digits that
     * overprint each other ("717159250 ms"): its ticks count from its
     * first one instead ("+0 ms", "+10 ms"); its tables give the times. */
    if (tk->first > 0 &&
        (double)tk->first * tk->step > 1000 * (double)(tk->last - tk->first + 1) * tk->step) {
        tk->relative = 1;
        tk->zero = tk->first;
    }
}

static double tick_x(const scale *sc, const vr_chart *c, const ticks *tk, long k)
{
    return sx(sc, (double)c->origin + (double)k * tk->step * tk->per_unit - tk->shift);
}

static void tick_label(char *out, size_t size, const ticks *tk, long k)
{
    if (tk->shift) { /* entry numbers, grouped as the tables write them: "1,000 entries" */
        char n[32];
        vr_units_count((long long)k * (long long)tk->step, n, sizeof n);
        snprintf(out, size, "%s %s", n, tk->unit);
        return;
    }
    if (tk->relative && size > 1) {
        out[0] = '+';
        fmt_fixed(out + 1, size - 1, (double)(k - tk->zero) * tk->step, tk->dec);
    } else
        fmt_fixed(out, size, (double)k * tk->step, tk->dec);
    size_t n = strlen(out);
    snprintf(out + n, size - n, " %s", tk->unit);
}

static int64_t values_max(const vr_chart *c)
{
    int64_t vmax = 0;
    for (int i = 0; i < c->nseries; i++)
        if (c->s[i].seen && c->s[i].peak.v > vmax)
            vmax = c->s[i].peak.v;
    for (size_t i = 0; i < c->nprints; i++) {
        int64_t v = c->prints[i].allocated > c->prints[i].reserved ? c->prints[i].allocated
                                                                   : c->prints[i].reserved;
        vmax = v > vmax ? v : vmax;
    }
    return vmax;
}

/* A job that uses a few percent of a large GPU would be a flat line at the
 * bottom of a chart scaled to the capacity: past 4x the highest value the
 * axis is broken and the capacity line drawn along the top, above it. */
static int capacity_fits(int64_t vmax, int64_t capacity)
{
    return capacity > 0 && (vmax == 0 || capacity / 4 <= vmax);
}

/* On a fixed (shared) scale nothing is broken: the capacity line is drawn
 * where it falls under the top, and left out above it. */
static int capacity_on_scale(const vr_chart *c)
{
    if (c->y_top)
        return c->capacity > 0 && c->capacity <= c->y_top;
    return capacity_fits(values_max(c), c->capacity);
}

/* A fixed scale leaves out a capacity above its top (there is no break). */
static int draws_capacity(const vr_chart *c)
{
    return c->capacity > 0 && (!c->y_top || capacity_on_scale(c));
}

/* Top of the y axis: room above the capacity line for its label, or above
 * the highest value; an arbitrary but meaningful 1 GiB when all is zero. */
static double auto_top(int64_t vmax, int64_t capacity)
{
    if (capacity_fits(vmax, capacity))
        return (double)(capacity > vmax ? capacity : vmax) * 1.05;
    if (capacity > 0 && vmax > 0) /* broken axis: keep a band for the line */
        return (double)vmax * 1.25;
    if (vmax > 0)
        return (double)vmax * 1.1;
    return ldexp(1.0, 30);
}

static double y_top(const vr_chart *c)
{
    return c->y_top ? (double)c->y_top : auto_top(values_max(c), c->capacity);
}

int64_t vr_chart_top_for(int64_t values_max, int64_t capacity)
{
    return vr_sat_from_double(ceil(auto_top(values_max > 0 ? values_max : 0, capacity)));
}

/* The x range is the declared one, stretched over any stray points. */
static void time_range(const vr_chart *c, int64_t *lo, int64_t *hi)
{
    *lo = c->t0;
    *hi = c->t1;
    for (int i = 0; i < c->nseries; i++) {
        view v;
        view_init(&v, &c->s[i]);
        if (!v.n)
            continue;
        int64_t a = view_at(&v, 0).t, z = view_at(&v, v.n - 1).t;
        *lo = a < *lo ? a : *lo;
        *hi = z > *hi ? z : *hi;
    }
    /* An OOM is the point of the chart: never off its edge, nor on it
     * (it usually ends the record): a margin of 1/25 of the range after
     * the last one leaves room for its request bracket. */
    int64_t last_oom = INT64_MIN;
    for (size_t i = 0; i < c->nooms; i++) {
        *lo = c->ooms[i].t < *lo ? c->ooms[i].t : *lo;
        last_oom = c->ooms[i].t > last_oom ? c->ooms[i].t : last_oom;
    }
    if (!c->nooms)
        return;
    /* Unsigned: lo <= last_oom and lo <= hi, and the span may be past
     * INT64_MAX (stamps near both ends of time). */
    uint64_t room = ((uint64_t)*hi - (uint64_t)*lo) / 25;
    if (last_oom <= *hi && room <= (uint64_t)*hi - (uint64_t)last_oom)
        return;
    uint64_t margin = ((uint64_t)last_oom - (uint64_t)*lo) / 25;
    /* margin < 2^63 / 12: it fits after a negative last_oom */
    *hi = last_oom >= 0 && margin > (uint64_t)(INT64_MAX - last_oom) ? INT64_MAX
                                                                     : last_oom + (int64_t)margin;
}

/*** layout ***/

static int view_h(const vr_chart *c)
{
    return c->compact ? VIEW_H_COMPACT : VIEW_H;
}

/* A compact chart starts its legend on the title's line, after it. */
static double legend_start(const vr_chart *c)
{
    if (!c->compact || !*c->title)
        return PAD;
    return PAD + CHAR_W_TITLE * (double)count_cp(c->title, TITLE_MAX_CP) + 24;
}

/* The legend's items: the series, then the job's prints' markers. */
#define LEGEND_ITEMS (VR_CHART_MAX_SERIES + 1)
#define LEGEND_PRINTS VR_CHART_MAX_SERIES
static const char print_legend[] = "printed by the job";

/* A series without a point (reserved memory an old trace does not give)
 * has nothing to name: it leaves the legend; so do prints without one. */
static int has_item(const vr_chart *c, int i)
{
    if (i == LEGEND_PRINTS)
        return c->nprints > 0;
    return i < c->nseries && c->s[i].seen > 0;
}

/* In the SVG's legend: none when it is an HTML list (vr_chart_legend_html). */
static int in_legend(const vr_chart *c, int i)
{
    return !c->html_legend && has_item(c, i);
}

static const char *legend_label(const vr_chart *c, int i)
{
    return i == LEGEND_PRINTS ? print_legend : c->s[i].label;
}

/* Legend items flow left to right and wrap, so four long names still fit
 * at phone width. Returns the number of rows; fills x and row per item
 * (items left out of the legend keep theirs unset). */
static int legend_layout(const vr_chart *c, double x[], int row[])
{
    double cx = legend_start(c);
    int r = 0, shown = 0;
    for (int i = 0; i < LEGEND_ITEMS; i++) {
        if (!in_legend(c, i))
            continue;
        shown++;
        double w = 22 + CHAR_W * (double)count_cp(legend_label(c, i), LABEL_MAX_CP);
        if (cx > PAD && cx + w > VIEW_W - PAD) {
            cx = PAD;
            r++;
        }
        x[i] = cx;
        row[i] = r;
        cx += w + 16;
    }
    return shown ? r + 1 : 0;
}

/* Baseline of a legend row; the title's line is given back when there is
 * no title. */
static double legend_y(const vr_chart *c, int row)
{
    return (*c->title && !c->compact ? 44 : 22) + row * LEGEND_ROW;
}

static double y_label_width(const ticks *tk)
{
    char tmp[48];
    size_t w = 1;
    for (long k = tk->first > 1 ? tk->first : 1; k <= tk->last; k++) {
        tick_label(tmp, sizeof tmp, tk, k);
        size_t n = strlen(tmp);
        w = n > w ? n : w;
    }
    return CHAR_W * PHONE_TEXT_GROWTH * (double)w;
}

/*** drawing ***/

/* Charts drawn to be compared say their axes, so a reader (or a test) can
 * tell they share them: x in ns after the origin, y in bytes. */
static void draw_shared_axes(vr_buf *b, const vr_chart *c, const scale *sc)
{
    if (!c->shared)
        return;
    vr_buf_printf(b, "data-x-range=\"%lld %lld\" data-y-top=\"%lld\" ",
                  (long long)vr_sat_sub(sc->tmin, c->origin),
                  (long long)vr_sat_sub(sc->tmax, c->origin),
                  (long long)vr_sat_from_double(ceil(sc->ymax)));
}

static void draw_open(vr_buf *b, const vr_chart *c, const scale *sc, const char *summary)
{
    vr_buf_printf(b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" "
                  "viewBox=\"0 0 %d %d\" width=\"100%%\" role=\"img\" "
                  "class=\"vr-chart%s\" ",
                  VIEW_W, view_h(c), c->compact ? " vr-compact" : "");
    draw_shared_axes(b, c, sc);
    vr_buf_puts(b, "aria-label=\"");
    sb_esc(b, *c->title ? c->title : "Memory over time");
    sb_esc(b, summary);
    vr_buf_printf(b,
                  "\" font-family=\"system-ui, sans-serif\" font-size=\"%d\" "
                  "fill=\"%s\">\n<title>",
                  FONT, COLOUR_TEXT);
    sb_esc(b, c->title);
    vr_buf_puts(b, "</title>\n");
    /* White, not transparent: readable on a dark page, free on paper. */
    vr_buf_printf(b,
                  "<rect class=\"vr-bg\" width=\"%d\" height=\"%d\" "
                  "fill=\"#fff\"/>\n",
                  VIEW_W, view_h(c));
}

static void draw_title(vr_buf *b, const vr_chart *c)
{
    if (!*c->title)
        return;
    vr_buf_printf(b,
                  "<text class=\"vr-title\" x=\"%d\" y=\"22\" "
                  "font-size=\"%d\" font-weight=\"600\">",
                  PAD, FONT_TITLE);
    vr_svg_text(b, c->title, TITLE_MAX_CP);
    vr_buf_puts(b, "</text>\n");
}

static int prints_reserved(const vr_chart *c)
{
    for (size_t i = 0; i < c->nprints; i++)
        if (c->prints[i].reserved >= 0)
            return 1;
    return 0;
}

/* The prints' legend item: their markers side by side (the square only
 * when some print gives reserved). */
static void draw_print_key(vr_buf *b, const vr_chart *c, double x, double y)
{
    vr_buf_puts(b, "<circle class=\"vr-print-allocated\" cx=\"");
    sb_coord(b, x + 4);
    vr_buf_puts(b, "\" cy=\"");
    sb_coord(b, y - 4);
    vr_buf_printf(b, "\" r=\"3.5\" fill=\"%s\" stroke=\"#fff\"/>", series_colour[0]);
    if (prints_reserved(c)) {
        vr_buf_puts(b, "<rect class=\"vr-print-reserved\" x=\"");
        sb_coord(b, x + 9);
        vr_buf_puts(b, "\" y=\"");
        sb_coord(b, y - 7.5);
        vr_buf_printf(b, "\" width=\"7\" height=\"7\" fill=\"%s\" stroke=\"#fff\"/>",
                      series_colour[1]);
    }
    vr_buf_puts(b, "<text x=\"");
    sb_coord(b, x + 22);
    vr_buf_puts(b, "\" y=\"");
    sb_coord(b, y);
    vr_buf_printf(b, "\">%s</text>\n", print_legend);
}

static void draw_legend(vr_buf *b, const vr_chart *c)
{
    double x[LEGEND_ITEMS];
    int row[LEGEND_ITEMS];
    if (!legend_layout(c, x, row))
        return;
    vr_buf_puts(b, "<g class=\"vr-legend\">\n");
    if (in_legend(c, LEGEND_PRINTS))
        draw_print_key(b, c, x[LEGEND_PRINTS], legend_y(c, row[LEGEND_PRINTS]));
    for (int i = 0; i < c->nseries; i++) {
        if (!in_legend(c, i))
            continue;
        double y = legend_y(c, row[i]);
        vr_buf_printf(b, "<path class=\"vr-series-%d ", i);
        sb_esc(b, c->s[i].css_class);
        vr_buf_puts(b, "\" d=\"M");
        sb_coord(b, x[i]);
        vr_buf_puts(b, " ");
        sb_coord(b, y - 4);
        vr_buf_printf(b,
                      "h16\" fill=\"none\" stroke=\"%s\" stroke-width=\"3\"/>"
                      "<text x=\"",
                      series_colour[i]);
        sb_coord(b, x[i] + 22);
        vr_buf_puts(b, "\" y=\"");
        sb_coord(b, y);
        vr_buf_puts(b, "\">");
        vr_svg_text(b, c->s[i].label, LABEL_MAX_CP);
        vr_buf_puts(b, "</text>\n");
    }
    vr_buf_puts(b, "</g>\n");
}

/* The same items as an HTML list (legend_html.h), with the series'
 * colours and classes. */
char *vr_chart_legend_html(const vr_chart *chart)
{
    if (!chart)
        return NULL;
    vr_buf b = VR_BUF_INIT;
    vr_legend_item items[LEGEND_ITEMS];
    static const char *const cls[VR_CHART_MAX_SERIES] = {"vr-series-0", "vr-series-1",
                                                         "vr-series-2", "vr-series-3"};
    size_t n = 0;
    for (int i = 0; i < chart->nseries; i++) {
        if (!has_item(chart, i))
            continue;
        items[n++] = (vr_legend_item){
            cls[i], chart->s[i].label, VR_SWATCH_LINE, series_colour[i], NULL, NULL, -1};
    }
    if (has_item(chart, LEGEND_PRINTS))
        items[n++] = (vr_legend_item){"vr-prints-key",
                                      print_legend,
                                      VR_SWATCH_MARKS,
                                      series_colour[0],
                                      prints_reserved(chart) ? series_colour[1] : NULL,
                                      NULL,
                                      -1};
    vr_legend_html(&b, items, n, LABEL_MAX_CP);
    return vr_buf_detach(&b);
}

static void draw_y_axis(vr_buf *b, const scale *sc, const ticks *tk)
{
    char label[48];
    vr_buf_printf(b, "<g class=\"vr-grid\" stroke=\"%s\">\n", COLOUR_GRID);
    for (long k = tk->first > 1 ? tk->first : 1; k <= tk->last; k++) {
        vr_buf_puts(b, "<path d=\"M");
        sb_coord(b, sc->left);
        vr_buf_puts(b, " ");
        sb_coord(b, sy(sc, (double)k * tk->step * tk->per_unit));
        vr_buf_puts(b, "H");
        sb_coord(b, sc->right);
        vr_buf_puts(b, "\"/>\n");
    }
    vr_buf_printf(b,
                  "</g>\n<g class=\"vr-axis vr-axis-y\" fill=\"%s\" "
                  "text-anchor=\"end\">\n",
                  COLOUR_MUTED);
    if (tk->first > 0) { /* a floor under the data: the axis's break */
        vr_buf_printf(b,
                      "<path class=\"vr-axis-break\" d=\"M%.1f %.1fl8 -5M%.1f %.1fl8 -5\" "
                      "stroke=\"%s\" stroke-width=\"1.5\"/>\n",
                      sc->left - 4, sc->bottom - 4, sc->left - 4, sc->bottom, COLOUR_CAPACITY);
    }
    for (long k = tk->first > 0 ? tk->first : 0; k <= tk->last; k++) {
        if (k)
            tick_label(label, sizeof label, tk, k);
        vr_buf_puts(b, "<text x=\"");
        sb_coord(b, sc->left - 6);
        vr_buf_puts(b, "\" y=\"");
        /* "0" stands on the axis line, clear of the x axis's first label
         * below it; the others are centred on their grid lines. */
        sb_coord(b, sy(sc, (double)k * tk->step * tk->per_unit) +
                        (k > (tk->first > 0 ? tk->first : 0) ? 4 : -3));
        vr_buf_printf(b, "\">%s</text>\n", k ? label : "0");
    }
    vr_buf_puts(b, "</g>\n");
}

/* More than four time labels: every other one is marked, and a narrow
 * screen's page hides those (its larger text needs the room; the ticks
 * stay). */
#define TICK_ALT " class=\"vr-tick-alt\""
static int tick_alt(long nticks, long i)
{
    return nticks > 4 && i % 2 == 1;
}

static void draw_x_axis(vr_buf *b, const vr_chart *c, const scale *sc, const ticks *tk)
{
    char label[48];
    vr_buf_printf(b, "<path class=\"vr-axis-line\" d=\"M");
    sb_coord(b, sc->left);
    vr_buf_puts(b, " ");
    sb_coord(b, sc->bottom);
    vr_buf_puts(b, "H");
    sb_coord(b, sc->right);
    vr_buf_printf(b,
                  "\" stroke=\"%s\"/>\n<g class=\"vr-axis vr-axis-x\" "
                  "fill=\"%s\" text-anchor=\"middle\">\n",
                  COLOUR_MUTED, COLOUR_MUTED);
    for (long k = tk->first; k <= tk->last; k++) {
        double x = tick_x(sc, c, tk, k);
        tick_label(label, sizeof label, tk, k);
        /* Keep the end labels inside the plot's width (at a phone's text
         * size), clear of the y axis's labels. */
        double half = CHAR_W * PHONE_TEXT_GROWTH * (double)strlen(label) / 2;
        const char *anchor = x - sc->left < half    ? " text-anchor=\"start\""
                             : sc->right - x < half ? " text-anchor=\"end\""
                                                    : "";
        vr_buf_puts(b, "<path d=\"M");
        sb_coord(b, x);
        vr_buf_puts(b, " ");
        sb_coord(b, sc->bottom);
        vr_buf_printf(b, "v4\" stroke=\"%s\"/><text%s x=\"", COLOUR_MUTED,
                      tick_alt(tk->last - tk->first + 1, k - tk->first) ? TICK_ALT : "");
        sb_coord(b, x);
        vr_buf_puts(b, "\" y=\"");
        sb_coord(b, sc->bottom + 18);
        vr_buf_printf(b, "\"%s>%s</text>\n", anchor, label);
    }
    vr_buf_puts(b, "</g>\n");
}

/* Text with a white halo, so labels stay readable over lines. */
static const char *const HALO = " stroke=\"#fff\" stroke-width=\"3\" "
                                "stroke-linejoin=\"round\" "
                                "paint-order=\"stroke\"";

/* Where the capacity line is drawn: at its value, or along the top of a
 * broken axis. */
static double capacity_y(const vr_chart *c, const scale *sc)
{
    return capacity_on_scale(c) ? sy(sc, (double)c->capacity) : sc->top + 2;
}

static double capacity_label_y(const vr_chart *c, const scale *sc)
{
    return capacity_y(c, sc) - 5;
}

static void draw_capacity(vr_buf *b, const vr_chart *c, const scale *sc)
{
    char v[32];
    double y = capacity_y(c, sc);
    int broken = !capacity_on_scale(c);
    fmt_bytes(v, sizeof v, c->capacity);
    vr_buf_puts(b, "<g class=\"vr-capacity\">\n");
    if (broken) { /* the axis break: two slashes across the y axis */
        double yb = y + 10;
        vr_buf_printf(b,
                      "<path d=\"M%.1f %.1fl8 -5M%.1f %.1fl8 -5\" stroke=\"%s\" "
                      "stroke-width=\"1.5\"/>\n",
                      sc->left - 4, yb + 3, sc->left - 4, yb + 7, COLOUR_CAPACITY);
    }
    vr_buf_puts(b, "<path d=\"M");
    sb_coord(b, sc->left);
    vr_buf_puts(b, " ");
    sb_coord(b, y);
    vr_buf_puts(b, "H");
    sb_coord(b, sc->right);
    vr_buf_printf(b,
                  "\" stroke=\"%s\" stroke-width=\"1.5\" "
                  "stroke-dasharray=\"6 4\"/>\n<text x=\"",
                  COLOUR_CAPACITY);
    sb_coord(b, sc->right - 4);
    vr_buf_puts(b, "\" y=\"");
    sb_coord(b, y - 5);
    vr_buf_printf(b, "\" text-anchor=\"end\" fill=\"%s\"%s>", COLOUR_MUTED, HALO);
    vr_svg_text(b, c->capacity_label, LABEL_MAX_CP);
    vr_buf_printf(b, " %s%s</text>\n</g>\n", v, broken ? " (axis broken)" : "");
}

/* The band under the line stays faint: the series are drawn over it. Its
 * label is drawn last, on top, inside the band under the line (above the
 * line when the band is too low to hold it). */
static int draws_baseline(const vr_chart *c, const scale *sc)
{
    return c->baseline > 0 && (double)c->baseline <= sc->ymax;
}

static void draw_baseline(vr_buf *b, const vr_chart *c, const scale *sc)
{
    double y = sy(sc, (double)c->baseline);
    vr_buf_printf(b, "<g class=\"vr-baseline\" data-bytes=\"%lld\">\n<rect x=\"",
                  (long long)c->baseline);
    sb_coord(b, sc->left);
    vr_buf_puts(b, "\" y=\"");
    sb_coord(b, y);
    vr_buf_puts(b, "\" width=\"");
    sb_coord(b, sc->right - sc->left);
    vr_buf_puts(b, "\" height=\"");
    sb_coord(b, sc->bottom - y);
    vr_buf_printf(b, "\" fill=\"%s\" fill-opacity=\"0.12\"/>\n<path d=\"M", COLOUR_CAPACITY);
    sb_coord(b, sc->left);
    vr_buf_puts(b, " ");
    sb_coord(b, y);
    vr_buf_puts(b, "H");
    sb_coord(b, sc->right);
    vr_buf_printf(b, "\" stroke=\"%s\" stroke-dasharray=\"2 3\"/>\n</g>\n", COLOUR_CAPACITY);
}

/* The baseline label's baseline (inside the band when it holds it). */
static double baseline_label_y(const vr_chart *c, const scale *sc)
{
    double y = sy(sc, (double)c->baseline);
    return sc->bottom - y > FONT + 6 ? y + FONT + 3 : y - 5;
}

static void draw_baseline_label(vr_buf *b, const vr_chart *c, const scale *sc)
{
    char v[32];
    fmt_bytes(v, sizeof v, c->baseline);
    vr_buf_puts(b, "<text class=\"vr-baseline-label\" x=\"");
    sb_coord(b, sc->left + 6);
    vr_buf_puts(b, "\" y=\"");
    sb_coord(b, baseline_label_y(c, sc));
    vr_buf_printf(b, "\" fill=\"%s\"%s>", COLOUR_MUTED, HALO);
    vr_svg_text(b, c->baseline_label, LABEL_MAX_CP);
    vr_buf_printf(b, ": %s</text>\n", v);
}

/* The pen of a step path, in tenths of a unit (the printed precision). A
 * horizontal move is held back until the next vertical one: a run of
 * points at the same height then costs one "H", and a point that rounds to
 * where the pen already is costs nothing. */
typedef struct {
    long x, y; /* where the pen is */
    long hx;   /* where it is heading horizontally */
} pen;

static void pen_flush(vr_buf *b, pen *p)
{
    if (p->hx != p->x) {
        vr_buf_puts(b, "H");
        sb_coord(b, (double)p->hx / 10);
        p->x = p->hx;
    }
}

static void pen_step(vr_buf *b, pen *p, double x, double y)
{
    long ny = lround(y * 10);
    p->hx = lround(x * 10);
    if (ny != p->y) {
        pen_flush(b, p);
        vr_buf_puts(b, "V");
        sb_coord(b, (double)ny / 10);
        p->y = ny;
    }
}

/* Where the last value stops: the end of the range, or the end of the
 * data when that was set (never before the last point, nor past the
 * plot). */
static double series_end(const vr_chart *c, const scale *sc, double last_x)
{
    if (!c->has_data_end)
        return sc->right;
    double x = sx(sc, (double)c->data_end);
    x = x < sc->right ? x : sc->right;
    return x > last_x ? x : last_x;
}

/* A step function: the value holds until the next point (horizontal), then
 * jumps (vertical); the last value holds to the end of the range (or of
 * the data). */
static void draw_series(vr_buf *b, const vr_chart *c, const scale *sc, int i)
{
    view v;
    view_init(&v, &c->s[i]);
    if (!v.n)
        return;
    pt p = view_at(&v, 0);
    pen pn;
    pn.x = pn.hx = lround(sx(sc, (double)p.t) * 10);
    pn.y = lround(sy(sc, (double)p.v) * 10);
    vr_buf_printf(b, "<path class=\"vr-series vr-series-%d ", i);
    sb_esc(b, c->s[i].css_class);
    vr_buf_puts(b, "\" d=\"M");
    sb_coord(b, (double)pn.x / 10);
    vr_buf_puts(b, " ");
    sb_coord(b, (double)pn.y / 10);
    for (size_t k = 1; k < v.n; k++) {
        p = view_at(&v, k);
        pen_step(b, &pn, sx(sc, (double)p.t), sy(sc, (double)p.v));
    }
    pn.hx = lround(series_end(c, sc, (double)pn.hx / 10) * 10);
    pen_flush(b, &pn);
    vr_buf_printf(b,
                  "\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" "
                  "stroke-linejoin=\"round\"/>\n",
                  series_colour[i], i == 0 ? "2" : "1.5");
}

typedef struct {
    double x0, y0, x1, y1;
} box;

static int overlaps(box a, box b)
{
    return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

/* A label's box at a phone's text size (PHONE_TEXT_GROWTH): `chars`
 * wide, its baseline at y, from x (or ending at x when `end`). */
static box label_box(double x, double y, size_t chars, int end)
{
    double w = CHAR_W * PHONE_TEXT_GROWTH * (double)chars, h = FONT * PHONE_TEXT_GROWTH;
    return (box){end ? x - w : x, y - h, end ? x : x + w, y + 4};
}

/* Whether an OOM's line crosses the box (its label is beside it). */
static int crosses_oom(const vr_chart *c, const scale *sc, box me)
{
    for (size_t i = 0; i < c->nooms; i++) {
        double x = sx(sc, (double)c->ooms[i].t);
        if (x > me.x0 - 2 && x < me.x1 + 2)
            return 1;
    }
    return 0;
}

/* Whether a segment from (x0, y0) to (x1, y1), level or upright, meets
 * the box. */
static int segment_hits(box me, double x0, double y0, double x1, double y1)
{
    box seg = {fmin(x0, x1) - 1, fmin(y0, y1) - 1, fmax(x0, x1) + 1, fmax(y0, y1) + 1};
    return overlaps(me, seg);
}

/* Whether any series' line (the step path draw_series draws) meets the
 * box. */
static int hits_series(const vr_chart *c, const scale *sc, box me)
{
    for (int i = 0; i < c->nseries; i++) {
        view v;
        view_init(&v, &c->s[i]);
        if (!v.n)
            continue;
        pt p = view_at(&v, 0);
        double x = sx(sc, (double)p.t), y = sy(sc, (double)p.v);
        for (size_t k = 1; k < v.n; k++) {
            pt q = view_at(&v, k);
            double nx = sx(sc, (double)q.t), ny = sy(sc, (double)q.v);
            if (segment_hits(me, x, y, nx, y) || segment_hits(me, nx, y, nx, ny))
                return 1;
            x = nx;
            y = ny;
        }
        if (segment_hits(me, x, y, series_end(c, sc, x), y))
            return 1;
    }
    return 0;
}

/* The baseline label's box, when it is drawn. */
static int baseline_label_box(const vr_chart *c, const scale *sc, box *out)
{
    if (!draws_baseline(c, sc))
        return 0;
    size_t bn = count_cp(c->baseline_label, LABEL_MAX_CP) + 12;
    *out = label_box(sc->left + 6, baseline_label_y(c, sc), bn, 0);
    return 1;
}

/* Where each OOM's label goes: beside its line, turned left of it in the
 * plot's right half (OOMs end jobs: they sit at the right), at the first
 * height from two fifths down (clear of the capacity and peak labels up
 * top; a phone's line lower for each of the two OOMs before it), then
 * further down and up, where it covers neither the baseline label, nor an
 * earlier OOM's, nor a series' line. Boxes at a phone's text size. */
typedef struct {
    double x, y;
    int left;
    box b;
} oom_place;

static size_t oom_chars(const oom_mark *m)
{
    return 5 + (m->requested ? 16 : 0);
}

static int oom_place_free(const vr_chart *c, const scale *sc, const box *me,
                          const oom_place *done, size_t n, const box *base)
{
    if (base && overlaps(*me, *base))
        return 0;
    for (size_t j = 0; j < n; j++)
        if (overlaps(*me, done[j].b))
            return 0;
    return !hits_series(c, sc, *me);
}

static void oom_places(const vr_chart *c, const scale *sc, oom_place out[VR_CHART_MAX_OOMS])
{
    double h = FONT * PHONE_TEXT_GROWTH, step = h + 4;
    box base;
    int has_base = baseline_label_box(c, sc, &base);
    for (size_t i = 0; i < c->nooms; i++) {
        double x = sx(sc, (double)c->ooms[i].t);
        oom_place *p = &out[i];
        p->left = x > (sc->left + sc->right) / 2;
        p->x = p->left ? x - 7 : x + 7;
        double y0 = sc->top + 0.4 * (sc->bottom - sc->top) + (double)(i % 3) * step;
        p->y = y0;
        /* y0, y0 + step, y0 - step, y0 + 2 step, ... within the plot */
        for (int k = 0; k < 64; k++) {
            double y = y0 + (double)((k + 1) / 2) * step * (k % 2 ? 1 : -1);
            if (y - h < sc->top || y + 4 > sc->bottom)
                continue;
            box me = label_box(p->x, y, oom_chars(&c->ooms[i]), p->left);
            if (oom_place_free(c, sc, &me, out, i, has_base ? &base : NULL)) {
                p->y = y;
                break;
            }
        }
        p->b = label_box(p->x, p->y, oom_chars(&c->ooms[i]), p->left);
    }
}

/* The capacity label's box, when it is drawn. */
static int capacity_label_box(const vr_chart *c, const scale *sc, box *out)
{
    if (!draws_capacity(c))
        return 0;
    size_t cn = count_cp(c->capacity_label, LABEL_MAX_CP) + (capacity_on_scale(c) ? 10 : 25);
    *out = label_box(sc->right - 4, capacity_label_y(c, sc), cn, 1);
    return 1;
}

/* A peak label's place: clear of the plot's edges, the other labels (the
 * capacity's, the baseline's, the OOMs'), the OOMs' lines and every
 * series' line. */
static int peak_place_ok(const vr_chart *c, const scale *sc, const oom_place *places, box me)
{
    box other;
    if (me.x0 < sc->left || me.x1 > sc->right || me.y0 < sc->top - 6 || me.y1 > sc->bottom)
        return 0;
    if (capacity_label_box(c, sc, &other) && overlaps(me, other))
        return 0;
    if (baseline_label_box(c, sc, &other) && overlaps(me, other))
        return 0;
    for (size_t i = 0; i < c->nooms; i++)
        if (overlaps(me, places[i].b))
            return 0;
    return !crosses_oom(c, sc, me) && !hits_series(c, sc, me);
}

/* How far the point is from the box (0 inside). */
static double box_distance(box me, double x, double y)
{
    double dx = x < me.x0 ? me.x0 - x : x > me.x1 ? x - me.x1 : 0;
    double dy = y < me.y0 ? me.y0 - y : y > me.y1 ? y - me.y1 : 0;
    return hypot(dx, dy);
}

/* Where the peak's label goes: up-right of the marker (up-left near the
 * right edge) when that place is clear (peak_place_ok); else the clear
 * place nearest the marker, searched beside it and further off to either
 * side at every height of the plot (a leader line then joins them:
 * draw_peak); when none is clear, the first place, below the marker when
 * it would leave the plot or cover the capacity label. */
#define PEAK_X_STEPS 8
#define PEAK_X_STEP 24.0
#define PEAK_Y_STEP 3.0
static void peak_label_pos(const vr_chart *c, const scale *sc, double px, double py, size_t chars,
                           double *x, double *y, int *end)
{
    double wp = CHAR_W * PHONE_TEXT_GROWTH * (double)chars, h = FONT * PHONE_TEXT_GROWTH;
    *end = px + 8 + wp > sc->right;
    *x = *end ? px - 8 : px + 8;
    *y = py - 8;
    /* Placed once here, not per candidate: each placement walks every
     * series' points up to 64 times an OOM. */
    oom_place places[VR_CHART_MAX_OOMS];
    oom_places(c, sc, places);
    if (peak_place_ok(c, sc, places, label_box(*x, *y, chars, *end)))
        return;
    double best = -1;
    for (int side = 0; side < 2; side++)
        for (int k = 0; k < PEAK_X_STEPS; k++) {
            double lx = side ? px - 8 - PEAK_X_STEP * k : px + 8 + PEAK_X_STEP * k;
            for (double ly = sc->top + h; ly <= sc->bottom - 4; ly += PEAK_Y_STEP) {
                box me = label_box(lx, ly, chars, side);
                double d = box_distance(me, px, py);
                if ((best < 0 || d < best) && peak_place_ok(c, sc, places, me)) {
                    best = d;
                    *x = lx;
                    *y = ly;
                    *end = side;
                }
            }
        }
    if (best >= 0)
        return;
    box cap, me = label_box(*x, *y, chars, *end);
    if ((capacity_label_box(c, sc, &cap) && overlaps(me, cap)) || me.y0 < sc->top - 6)
        *y = py + 8 + FONT;
}

static int draws_peak(const vr_chart *c)
{
    return c->nseries && c->s[0].seen && c->s[0].peak.v > 0;
}

/* "peak 3.59 GiB" */
static void peak_text(char *out, size_t size, const vr_chart *c)
{
    char v[32];
    fmt_bytes(v, sizeof v, c->s[0].peak.v);
    snprintf(out, size, "peak %s", v);
}

/* The peak label's box, when it is drawn. */
static int peak_label_box(const vr_chart *c, const scale *sc, box *out)
{
    if (!draws_peak(c))
        return 0;
    char label[48];
    peak_text(label, sizeof label, c);
    double x, y;
    int end;
    peak_label_pos(c, sc, sx(sc, (double)c->s[0].peak.t), sy(sc, (double)c->s[0].peak.v),
                   strlen(label), &x, &y, &end);
    *out = label_box(x, y, strlen(label), end);
    return 1;
}

/* A label placed away from its marker: a thin line from the marker's
 * edge to the nearest point of the label's box (at a phone's text size:
 * on a wider page the line stops short of the text, never under it). */
static void draw_leader(vr_buf *b, double px, double py, box me)
{
    double d = box_distance(me, px, py);
    if (d < 14)
        return;
    double qx = px < me.x0 ? me.x0 : px > me.x1 ? me.x1 : px;
    double qy = py < me.y0 ? me.y0 : py > me.y1 ? me.y1 : py;
    double k = 6 / d; /* from the circle's edge */
    vr_buf_puts(b, "<path class=\"vr-leader\" d=\"M");
    sb_coord(b, px + (qx - px) * k);
    vr_buf_puts(b, " ");
    sb_coord(b, py + (qy - py) * k);
    vr_buf_puts(b, "L");
    sb_coord(b, qx);
    vr_buf_puts(b, " ");
    sb_coord(b, qy);
    vr_buf_printf(b, "\" stroke=\"%s\" stroke-width=\"1\"/>\n", COLOUR_MUTED);
}

/* When a mark is: "1.250000 s" after the origin, or on a chart of entry
 * ordinals as the tables say it (view.c): "entry 3,697 of 6,832", counted
 * from 1; the opening level "the start, before entry 1", the closing one
 * "the end, after entry 6,832". */
static void when_text(char *out, size_t size, const vr_chart *c, int64_t t, int dec)
{
    if (c->entries) {
        long long k = vr_sat_sub(t, c->origin);
        char a[32], n[32];
        vr_units_count(vr_sat_add(k, 1), a, sizeof a);
        vr_units_count(c->entries, n, sizeof n);
        if (k < 0)
            snprintf(out, size, "the start, before entry 1 of %s", n);
        else if (k >= c->entries)
            snprintf(out, size, "the end, after entry %s of %s", n, n);
        else
            snprintf(out, size, "entry %s of %s", a, n);
        return;
    }
    fmt_fixed(out, size, ((double)t - (double)c->origin) / NS_PER_S, dec);
    size_t n = strlen(out);
    snprintf(out + n, size - n, " s");
}

static void draw_peak(vr_buf *b, const vr_chart *c, const scale *sc)
{
    const series *s = &c->s[0];
    char t[96], label[48];
    peak_text(label, sizeof label, c);
    when_text(t, sizeof t, c, s->peak.t, 6);
    double px = sx(sc, (double)s->peak.t), py = sy(sc, (double)s->peak.v);
    double x, y;
    int end;
    peak_label_pos(c, sc, px, py, strlen(label), &x, &y, &end);
    vr_buf_printf(b,
                  "<g class=\"vr-peak\">\n<title>%s (%lld bytes) at %s"
                  "</title>\n<circle cx=\"",
                  label, (long long)s->peak.v, t);
    sb_coord(b, px);
    vr_buf_puts(b, "\" cy=\"");
    sb_coord(b, py);
    vr_buf_printf(b,
                  "\" r=\"4.5\" fill=\"#fff\" stroke=\"%s\" "
                  "stroke-width=\"2\"/>\n",
                  series_colour[0]);
    draw_leader(b, px, py, label_box(x, y, strlen(label), end));
    vr_buf_puts(b, "<text x=\"");
    sb_coord(b, x);
    vr_buf_puts(b, "\" y=\"");
    sb_coord(b, y);
    vr_buf_printf(b, "\"%s font-weight=\"600\"%s>%s</text>\n</g>\n",
                  end ? " text-anchor=\"end\"" : "", HALO, label);
}

/* Step starts: faint lines behind the series; a label at the foot of
 * each line while labels have room (one per ~40 units), so a hundred
 * steps still read as a rhythm, not a smear of text. */
#define STEP_LABEL_GAP 40

static void draw_steps(vr_buf *b, const vr_chart *c, const scale *sc)
{
    if (!c->nsteps)
        return;
    vr_buf_printf(b,
                  "<g class=\"vr-steps\" data-steps=\"%zu\" stroke=\"%s\" "
                  "stroke-dasharray=\"2 3\" fill=\"%s\" font-size=\"10\">\n",
                  c->nsteps + c->steps_dropped, COLOUR_CAPACITY, COLOUR_MUTED);
    double last_label = -1e9;
    for (size_t i = 0; i < c->nsteps; i++) {
        double t = (double)c->steps[i].t;
        if (t < sc->tlo || t > sc->thi)
            continue;
        double x = sx(sc, t);
        vr_buf_printf(b, "<path class=\"vr-step\" data-t-ns=\"%lld\" d=\"M",
                      (long long)vr_sat_sub(c->steps[i].t, c->origin));
        sb_coord(b, x);
        vr_buf_puts(b, " ");
        sb_coord(b, sc->top);
        vr_buf_puts(b, "V");
        sb_coord(b, sc->bottom);
        vr_buf_puts(b, "\"/>\n");
        if (x - last_label < STEP_LABEL_GAP || sc->right - x < STEP_LABEL_GAP / 2)
            continue;
        last_label = x;
        vr_buf_puts(b, "<text x=\"");
        sb_coord(b, x + 3);
        vr_buf_puts(b, "\" y=\"");
        sb_coord(b, sc->bottom - 4);
        vr_buf_printf(b, "\" stroke-dasharray=\"none\"%s>", HALO);
        vr_svg_text(b, c->steps[i].label, 12);
        vr_buf_puts(b, "</text>\n");
    }
    vr_buf_puts(b, "</g>\n");
}

/* The request as a bracket standing on what PyTorch held: where its top
 * passes the capacity line, the allocation could not fit. Clipped to
 * the plot. */
static void draw_request(vr_buf *b, const scale *sc, const oom_mark *m, double x)
{
    if (!m->requested || !m->level)
        return;
    double y0 = sy(sc, (double)m->level);
    double y1 = sy(sc, (double)m->level + (double)m->requested);
    y1 = y1 < sc->top ? sc->top : y1;
    vr_buf_puts(b, "<rect class=\"vr-oom-request\" x=\"");
    sb_coord(b, x - 4);
    vr_buf_puts(b, "\" y=\"");
    sb_coord(b, y1);
    vr_buf_puts(b, "\" width=\"8\" height=\"");
    sb_coord(b, y0 - y1);
    vr_buf_printf(b, "\" fill=\"%s\" fill-opacity=\"0.35\" stroke=\"%s\"/>\n", COLOUR_OOM,
                  COLOUR_OOM);
}

/* The labels an OOM's line passes behind (a gap in the line): the peak's,
 * the capacity's, the baseline's and the other OOMs'. At most
 * VR_CHART_MAX_OOMS + 2 boxes. */
#define MAX_GAPS (VR_CHART_MAX_OOMS + 3)
static size_t label_boxes(const vr_chart *c, const scale *sc, size_t oom, box out[MAX_GAPS])
{
    size_t n = 0;
    n += (size_t)peak_label_box(c, sc, &out[n]);
    n += (size_t)capacity_label_box(c, sc, &out[n]);
    n += (size_t)baseline_label_box(c, sc, &out[n]);
    oom_place places[VR_CHART_MAX_OOMS];
    oom_places(c, sc, places);
    for (size_t j = 0; j < c->nooms; j++)
        if (j != oom)
            out[n++] = places[j].b;
    return n;
}

/* OOM i's line from the plot's top to its bottom at x, with a gap behind
 * each label it would cross, so no label lies over it. */
static void oom_line(vr_buf *b, const vr_chart *c, const scale *sc, size_t i, double x)
{
    box boxes[MAX_GAPS];
    size_t n = label_boxes(c, sc, i, boxes), k = 0;
    double gap[MAX_GAPS][2];
    for (size_t j = 0; j < n; j++) {
        if (!(x > boxes[j].x0 - 2 && x < boxes[j].x1 + 2))
            continue;
        size_t at = k++; /* insertion by top */
        while (at > 0 && gap[at - 1][0] > boxes[j].y0 - 2) {
            gap[at][0] = gap[at - 1][0];
            gap[at][1] = gap[at - 1][1];
            at--;
        }
        gap[at][0] = boxes[j].y0 - 2;
        gap[at][1] = boxes[j].y1 + 2;
    }
    double y = sc->top;
    vr_buf_puts(b, "<path d=\"M");
    sb_coord(b, x);
    vr_buf_puts(b, " ");
    sb_coord(b, y);
    for (size_t j = 0; j < k; j++) {
        if (gap[j][1] <= y || gap[j][0] >= sc->bottom)
            continue;
        if (gap[j][0] > y) {
            vr_buf_puts(b, "V");
            sb_coord(b, gap[j][0]);
        }
        y = gap[j][1];
        vr_buf_puts(b, "M");
        sb_coord(b, x);
        vr_buf_puts(b, " ");
        sb_coord(b, y < sc->bottom ? y : sc->bottom);
    }
    if (y < sc->bottom) {
        vr_buf_puts(b, "V");
        sb_coord(b, sc->bottom);
    }
    vr_buf_printf(b, "\" stroke=\"%s\" stroke-width=\"1.5\"/>\n", COLOUR_OOM);
}

/* Each OOM: a line across the plot (oom_line), the request (draw_request)
 * and "OOM: asked 2.00 GiB" (oom_places). */
static void draw_ooms(vr_buf *b, const vr_chart *c, const scale *sc)
{
    oom_place places[VR_CHART_MAX_OOMS];
    oom_places(c, sc, places);
    for (size_t i = 0; i < c->nooms; i++) {
        const oom_mark *m = &c->ooms[i];
        double x = sx(sc, (double)m->t);
        char v[32];
        fmt_bytes(v, sizeof v, m->requested);
        vr_buf_printf(b,
                      "<g class=\"vr-oom\" data-t-ns=\"%lld\" "
                      "data-requested-bytes=\"%lld\" data-level-bytes=\"%lld\">\n<title>",
                      (long long)vr_sat_sub(m->t, c->origin), (long long)m->requested,
                      (long long)m->level);
        sb_esc(b, m->detail);
        vr_buf_puts(b, "</title>\n");
        oom_line(b, c, sc, i, x);
        draw_request(b, sc, m, x);
        oom_place p = places[i];
        vr_buf_puts(b, "<text x=\"");
        sb_coord(b, p.x);
        vr_buf_puts(b, "\" y=\"");
        sb_coord(b, p.y);
        vr_buf_printf(b, "\"%s font-weight=\"600\" fill=\"%s\"%s>OOM",
                      p.left ? " text-anchor=\"end\"" : "", COLOUR_OOM, HALO);
        if (m->requested)
            vr_buf_printf(b, ": asked %s", v);
        vr_buf_puts(b, "</text>\n</g>\n");
    }
}

/* One print: allocated as a dot, reserved (when printed) as a square,
 * in the series' colours, the exact bytes in the <title>. */
static void draw_print(vr_buf *b, const vr_chart *c, const scale *sc, const print_mark *m)
{
    double x = sx(sc, (double)m->t);
    vr_buf_printf(b, "<g class=\"vr-print\" data-t-ns=\"%lld\" data-allocated-bytes=\"%lld\"",
                  (long long)vr_sat_sub(m->t, c->origin), (long long)m->allocated);
    if (m->reserved >= 0)
        vr_buf_printf(b, " data-reserved-bytes=\"%lld\"", (long long)m->reserved);
    vr_buf_puts(b, "><title>");
    sb_esc(b, m->detail);
    vr_buf_puts(b, "</title>");
    if (m->reserved >= 0) {
        vr_buf_puts(b, "<rect class=\"vr-print-reserved\" x=\"");
        sb_coord(b, x - 3.5);
        vr_buf_puts(b, "\" y=\"");
        sb_coord(b, sy(sc, (double)m->reserved) - 3.5);
        vr_buf_printf(b, "\" width=\"7\" height=\"7\" fill=\"%s\" stroke=\"#fff\"/>",
                      series_colour[1]);
    }
    vr_buf_puts(b, "<circle class=\"vr-print-allocated\" cx=\"");
    sb_coord(b, x);
    vr_buf_puts(b, "\" cy=\"");
    sb_coord(b, sy(sc, (double)m->allocated));
    vr_buf_printf(b, "\" r=\"3.5\" fill=\"%s\" stroke=\"#fff\"/></g>\n", series_colour[0]);
}

/* The job's prints over the series; those outside the chart's time range
 * are left out (a log can span hours around a trace of seconds). */
static void draw_prints(vr_buf *b, const vr_chart *c, const scale *sc)
{
    if (!c->nprints)
        return;
    vr_buf_printf(b, "<g class=\"vr-prints\" data-prints=\"%zu\">\n",
                  c->nprints + c->prints_dropped);
    for (size_t i = 0; i < c->nprints; i++)
        if ((double)c->prints[i].t >= sc->tlo && (double)c->prints[i].t <= sc->thi)
            draw_print(b, c, sc, &c->prints[i]);
    vr_buf_puts(b, "</g>\n");
}

static int has_points(const vr_chart *c)
{
    if (c->nprints)
        return 1;
    for (int i = 0; i < c->nseries; i++)
        if (c->s[i].seen)
            return 1;
    return 0;
}

static void draw_no_data(vr_buf *b, const scale *sc)
{
    vr_buf_puts(b, "<text class=\"vr-empty\" x=\"");
    sb_coord(b, (sc->left + sc->right) / 2);
    vr_buf_puts(b, "\" y=\"");
    sb_coord(b, (sc->top + sc->bottom) / 2);
    vr_buf_printf(b, "\" text-anchor=\"middle\" fill=\"%s\">no data</text>\n", COLOUR_MUTED);
}

/* ", peak 5.06 GiB at 1.25 s" for screen readers; empty without data. */
static void summary_text(char *out, size_t size, const vr_chart *c)
{
    out[0] = '\0';
    if (!c->nseries || !c->s[0].seen)
        return;
    char v[32], t[96];
    fmt_bytes(v, sizeof v, c->s[0].peak.v);
    when_text(t, sizeof t, c, c->s[0].peak.t, 3);
    snprintf(out, size, ", peak %s at %s", v, t);
}

static void make_scale(const vr_chart *c, scale *sc, ticks *yt)
{
    double x[LEGEND_ITEMS];
    int row[LEGEND_ITEMS];
    int rows = legend_layout(c, x, row);
    sc->ymax = y_top(c);
    sc->ymin = y_floor(c, sc->ymax);
    /* Over a broken axis, the ticks stop below the capacity line's band. */
    int broken = !c->y_top && c->capacity > 0 && !capacity_on_scale(c) && values_max(c) > 0;
    y_ticks(yt, sc->ymin, broken ? (double)values_max(c) * 1.1 : sc->ymax);
    sc->left = PAD + y_label_width(yt) + 8;
    sc->right = VIEW_W - PAD;
    /* Under the title: room for a label at a phone's text size above a
     * line along the plot's top (a broken axis's capacity). */
    sc->top = rows ? legend_y(c, rows - 1) + 20 : *c->title ? 22 + 26 : 20;
    sc->bottom = view_h(c) - 30;
    time_range(c, &sc->tmin, &sc->tmax);
    sc->tlo = (double)sc->tmin;
    sc->thi = (double)sc->tmax;
}

void vr_chart_get_x_axis(const vr_chart *chart, vr_chart_x_axis *axis)
{
    scale sc;
    ticks yt, xt;
    make_scale(chart, &sc, &yt);
    x_ticks(&xt, chart, &sc);
    axis->left = sc.left;
    axis->right = sc.right;
    axis->t_lo = sc.tmin;
    axis->t_hi = sc.tmax;
    axis->nticks = 0;
    for (long k = xt.first; k <= xt.last && axis->nticks < VR_CHART_MAX_X_TICKS; k++) {
        axis->tick_x[axis->nticks] = tick_x(&sc, chart, &xt, k);
        tick_label(axis->tick_label[axis->nticks], sizeof axis->tick_label[0], &xt, k);
        axis->nticks++;
    }
}

char *vr_chart_svg(const vr_chart *chart)
{
    if (!chart)
        return NULL;
    vr_buf b = VR_BUF_INIT;
    scale sc;
    ticks yt, xt;
    char summary[192];
    make_scale(chart, &sc, &yt);
    x_ticks(&xt, chart, &sc);
    summary_text(summary, sizeof summary, chart);

    draw_open(&b, chart, &sc, summary);
    draw_y_axis(&b, &sc, &yt);
    draw_x_axis(&b, chart, &sc, &xt);
    if (draws_capacity(chart))
        draw_capacity(&b, chart, &sc);
    if (draws_baseline(chart, &sc))
        draw_baseline(&b, chart, &sc);
    draw_steps(&b, chart, &sc);
    /* Reverse order: series 0 (allocated) is drawn last, on top. */
    for (int i = chart->nseries - 1; i >= 0; i--)
        draw_series(&b, chart, &sc, i);
    draw_prints(&b, chart, &sc);
    if (draws_peak(chart))
        draw_peak(&b, chart, &sc);
    draw_ooms(&b, chart, &sc);
    if (draws_baseline(chart, &sc))
        draw_baseline_label(&b, chart, &sc);
    if (!has_points(chart))
        draw_no_data(&b, &sc);
    draw_title(&b, chart);
    draw_legend(&b, chart);
    vr_buf_puts(&b, "</svg>\n");
    return vr_buf_detach(&b);
}
