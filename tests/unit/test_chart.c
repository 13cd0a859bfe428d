/*-*** test_chart.c: unit tests for the SVG memory chart ***/
/*
 * TAP-like output: "ok N - name" / "not ok N - name", then a summary line
 * "# P passed, F failed". Exit status 0 only if every check passed.
 */
#include "render/svg/chart_svg.h"
#include "render/svg/segmap_svg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB (1024LL * 1024 * 1024)
#define MIB (1024LL * 1024)
#define S_NS 1000000000LL

static int n_pass, n_fail;

static void check(int cond, const char *name)
{
    if (cond)
        n_pass++;
    else
        n_fail++;
    printf("%sok %d - %s\n", cond ? "" : "not ", n_pass + n_fail, name);
}

static int contains(const char *hay, const char *needle)
{
    return hay && strstr(hay, needle) != NULL;
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/*** a tiny well-formedness check ***/

/* Entity at s is one of the five XML ones or a numeric reference. */
static int valid_entity(const char *s)
{
    static const char *const ok[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!strncmp(s, ok[i], strlen(ok[i])))
            return 1;
    if (s[1] != '#')
        return 0;
    const char *p = s + 2;
    while (*p >= '0' && *p <= '9')
        p++;
    return p > s + 2 && *p == ';';
}

/* Scans one start or end tag at *pp ('<' already seen). Attribute values
 * must be quoted and hold no '<'. Sets *end and *self; copies the name. */
static int scan_tag(const char **pp, char *name, size_t size, int *end, int *self)
{
    const char *p = *pp + 1;
    *end = *p == '/';
    p += *end;
    size_t n = 0;
    while (*p && !strchr(" \t\n/>", *p) && n + 1 < size)
        name[n++] = *p++;
    name[n] = '\0';
    if (!n)
        return 0;
    while (*p && *p != '>') {
        if (*p == '"' || *p == '\'') {
            char q = *p++;
            while (*p && *p != q) {
                if (*p == '<' || (*p == '&' && !valid_entity(p)))
                    return 0;
                p++;
            }
            if (!*p)
                return 0;
        } else if (*p == '=' && p[1] != '"' && p[1] != '\'') {
            return 0;
        }
        p++;
    }
    if (!*p)
        return 0;
    *self = p[-1] == '/';
    *pp = p + 1;
    return 1;
}

/* Balanced tags, one root <svg>, quoted attributes, no stray '&'. */
static int well_formed(const char *doc)
{
    char stack[32][32];
    int depth = 0, roots = 0;
    const char *p = doc;
    if (!doc)
        return 0;
    while (*p) {
        if (*p == '&' && !valid_entity(p))
            return 0;
        if (*p != '<') {
            if (!depth && !strchr(" \t\r\n", *p))
                return 0; /* text outside the root */
            p++;
            continue;
        }
        char name[32];
        int end, self;
        if (!scan_tag(&p, name, sizeof name, &end, &self))
            return 0;
        if (end) {
            if (!depth || strcmp(stack[--depth], name))
                return 0;
        } else if (!self) {
            if (depth == 32)
                return 0;
            if (!depth && roots++)
                return 0;
            strcpy(stack[depth++], name);
        } else if (!depth) {
            return 0;
        }
    }
    return depth == 0 && roots == 1 && !strncmp(doc, "<svg ", 5);
}

/* Numbers inside d="", x="", y="", cx="", cy="" have at most 1 decimal. */
static int coords_short(const char *doc)
{
    static const char *const attrs[] = {" d=\"", " x=\"", " y=\"", " cx=\"", " cy=\""};
    for (size_t a = 0; a < sizeof attrs / sizeof *attrs; a++) {
        for (const char *p = doc; (p = strstr(p, attrs[a]));) {
            p += strlen(attrs[a]);
            for (; *p && *p != '"'; p++)
                if (*p == '.' && p[1] >= '0' && p[1] <= '9' && p[2] >= '0' && p[2] <= '9')
                    return 0;
        }
    }
    return 1;
}

static int no_bad_numbers(const char *doc)
{
    return doc && !contains(doc, "nan") && !contains(doc, "inf") && !contains(doc, "NaN");
}

static int self_contained(const char *doc)
{
    /* The only URL allowed is the SVG namespace itself. */
    return doc && count_of(doc, "http") == 1 && !contains(doc, "href") &&
           !contains(doc, "url(") && !contains(doc, "<script") && !contains(doc, "@import") &&
           !contains(doc, "<foreignObject");
}

/*** tests ***/

/* Deterministic noise: a 64-bit LCG. */
static uint64_t rng_state = 88172645463325252ULL;
static uint64_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return rng_state >> 33;
}

static void test_million_points(void)
{
    const int64_t t0 = 1700000000LL * S_NS; /* absolute, like a real trace */
    const long n = 1000000, spike_i = 654321;
    const int64_t step = 60 * S_NS / n, spike_v = 5433000000LL;
    vr_chart *c = vr_chart_new("GPU 0", t0, t0 + 60 * S_NS);
    int s0 = vr_chart_add_series(c, "allocated", "allocated");
    int s1 = vr_chart_add_series(c, "reserved", "reserved");
    check(s0 == 0 && s1 == 1, "series indices are 0 and 1");
    for (long i = 0; i < n; i++) {
        int64_t t = t0 + i * step;
        int64_t v = 2 * GIB + (int64_t)(rng() % (uint64_t)(3 * GIB / 2));
        vr_chart_add_point(c, s0, t, i == spike_i ? spike_v : v);
        vr_chart_add_point(c, s1, t, 4 * GIB + (int64_t)(rng() % 1000));
    }
    vr_chart_set_capacity(c, 32 * GIB, "capacity");
    size_t k0 = vr_chart_points(c, s0), k1 = vr_chart_points(c, s1);
    check(k0 <= VR_CHART_MAX_POINTS && k0 >= VR_CHART_MAX_POINTS / 2,
          "1M points downsampled to <= 2000 (series 0)");
    check(k1 <= VR_CHART_MAX_POINTS, "1M points downsampled (series 1)");
    int64_t pt = 0, pv = 0;
    int rc = vr_chart_peak(c, s0, &pt, &pv);
    check(rc == 0 && pv == spike_v, "peak value is the spike, exactly");
    check(pt == t0 + spike_i * step, "peak time is the spike's, exactly");

    char *svg = vr_chart_svg(c);
    check(contains(svg, ">peak 5.06 GiB<"), "SVG labels the peak 5.06 GiB");
    check(contains(svg, "(5433000000 bytes) at 39.25926 s"),
          "SVG marker title has exact bytes and time");
    check(contains(svg, "capacity 32 GiB"), "capacity label with size");
    check(well_formed(svg), "large SVG is well-formed");
    check(coords_short(svg), "coordinates use at most 1 decimal");
    check(svg && strlen(svg) < 80000, "large SVG stays small");
    check(self_contained(svg), "no scripts or external references");
    check(contains(svg, ">0 s<") && contains(svg, ">60 s<"), "x axis in seconds relative to t0");
    FILE *f = fopen("/tmp/chart_sample.svg", "w");
    if (f) {
        fputs(svg ? svg : "", f);
        fclose(f);
    }
    free(svg);
    vr_chart_free(c);
}

static void test_svg_root(void)
{
    vr_chart *c = vr_chart_new("t", 0, S_NS);
    int s = vr_chart_add_series(c, "allocated", "allocated");
    vr_chart_add_point(c, s, 0, GIB);
    char *svg = vr_chart_svg(c);
    check(svg && !strncmp(svg,
                          "<svg xmlns=\"http://www.w3.org/2000/svg\" "
                          "viewBox=\"0 0 ",
                          51),
          "root element has namespace and viewBox");
    check(contains(svg, "width=\"100%\"") && contains(svg, "role=\"img\"") &&
              contains(svg, "aria-label=\"t, peak 1 GiB at 0 s\""),
          "root scales and is labelled for screen readers");
    check(contains(svg, "<title>t</title>"), "has a <title>");
    check(contains(svg, "font-family=\"system-ui, sans-serif\""), "system fonts only");
    check(contains(svg, "class=\"vr-series vr-series-0 allocated\"") &&
              contains(svg, "stroke=\"#d55e00\""),
          "series carries CSS class and inline colour");
    free(svg);
    vr_chart_free(c);
}

static void test_empty(void)
{
    vr_chart *c = vr_chart_new("", 0, 10 * S_NS);
    char *svg = vr_chart_svg(c);
    check(well_formed(svg) && no_bad_numbers(svg),
          "chart without series renders well-formed SVG");
    check(contains(svg, "no data"), "empty chart says no data");
    free(svg);
    int s = vr_chart_add_series(c, "allocated", NULL);
    svg = vr_chart_svg(c);
    check(well_formed(svg) && no_bad_numbers(svg) && vr_chart_points(c, s) == 0,
          "series without points renders");
    check(vr_chart_peak(c, s, NULL, NULL) == -1 && !contains(svg, "peak"),
          "no peak without points");
    free(svg);
    vr_chart_free(c);
    vr_chart_free(NULL);
    check(vr_chart_points(NULL, 0) == 0 && vr_chart_svg(NULL) == NULL, "NULL chart is tolerated");
}

static void test_zero_range(void)
{
    vr_chart *c = vr_chart_new("same instant", 5 * S_NS, 5 * S_NS);
    int s = vr_chart_add_series(c, "allocated", "allocated");
    for (int i = 0; i < 10; i++)
        vr_chart_add_point(c, s, 5 * S_NS, i * MIB);
    char *svg = vr_chart_svg(c);
    check(well_formed(svg) && no_bad_numbers(svg), "t0 == t1 renders");
    check(vr_chart_points(c, s) <= 4, "t0 == t1 keeps one bucket");
    check(contains(svg, ">peak 9 MiB<"), "t0 == t1 still marks the peak");
    free(svg);
    vr_chart_free(c);

    /* One nanosecond at epoch nanoseconds (found by fuzz_import): as
     * doubles both ends are the same number. */
    const int64_t t = INT64_C(1772688692031316999);
    c = vr_chart_new("1 ns", t, t + 1);
    s = vr_chart_add_series(c, "allocated", "allocated");
    vr_chart_add_point(c, s, t, MIB);
    vr_chart_add_point(c, s, t + 1, 2 * MIB);
    vr_chart_x_axis axis;
    vr_chart_get_x_axis(c, &axis);
    svg = vr_chart_svg(c);
    check(well_formed(svg) && no_bad_numbers(svg), "a 1 ns range at epoch nanoseconds renders");
    check(axis.nticks >= 2 && !contains(axis.tick_label[0], "nan"), "and its x axis has ticks");
    free(svg);
    vr_chart_free(c);
}

static void test_all_zero(void)
{
    vr_chart *c = vr_chart_new("idle", 0, S_NS * 3);
    int s = vr_chart_add_series(c, "allocated", "allocated");
    for (int i = 0; i < 3000; i++)
        vr_chart_add_point(c, s, i * S_NS / 1000, 0);
    char *svg = vr_chart_svg(c);
    check(well_formed(svg) && no_bad_numbers(svg), "all-zero series renders");
    check(contains(svg, "GiB<"), "all-zero series gets a default y axis");
    free(svg);
    vr_chart_free(c);
}

static void test_capacity_and_ticks(void)
{
    vr_chart *c = vr_chart_new("ticks", 0, 20 * S_NS);
    int s = vr_chart_add_series(c, "allocated", "allocated");
    vr_chart_add_point(c, s, 0, 0);
    vr_chart_add_point(c, s, 10 * S_NS, 20 * GIB);
    vr_chart_set_capacity(c, 32 * GIB, "capacity");
    char *svg = vr_chart_svg(c);
    check(contains(svg, "class=\"vr-capacity\"") && contains(svg, "stroke-dasharray") &&
              contains(svg, ">capacity 32 GiB</text>"),
          "capacity line is dashed and labelled");
    check(contains(svg, ">10 GiB<") && contains(svg, ">30 GiB<") && !contains(svg, ">40 GiB<"),
          "y ticks are nice binary units");
    size_t grid = 0;
    const char *g = svg ? strstr(svg, "class=\"vr-grid\"") : NULL;
    const char *ge = g ? strstr(g, "</g>") : NULL;
    for (const char *p = g; p && p < ge && (p = strstr(p, "<path")); p++)
        grid++;
    check(grid + 1 >= 4 && grid + 1 <= 6, "4 to 6 gridlines with the axis");
    check(contains(svg, ">peak 20 GiB<"), "peak label strips zeros");
    check(contains(svg, "H") && contains(svg, "V"), "steps use H and V");
    free(svg);
    vr_chart_set_capacity(c, 0, NULL);
    svg = vr_chart_svg(c);
    check(!contains(svg, "vr-capacity"), "capacity 0 draws no line");
    free(svg);
    vr_chart_free(c);
}

/* A job using a few percent of its GPU: the axis is broken, the capacity
 * line runs along the top, and the ticks stay below it. */
static void test_broken_axis(void)
{
    vr_chart *c = vr_chart_new("small job", 0, 20 * S_NS);
    int s = vr_chart_add_series(c, "allocated", "allocated");
    vr_chart_add_point(c, s, 0, 0);
    vr_chart_add_point(c, s, 10 * S_NS, 2 * GIB);
    vr_chart_set_capacity(c, 80 * GIB, "capacity");
    char *svg = vr_chart_svg(c);
    check(contains(svg, ">capacity 80 GiB (axis broken)</text>") &&
              contains(svg, "stroke-dasharray"),
          "capacity far above the data: dashed line on a broken axis");
    check(contains(svg, ">2 GiB<") && !contains(svg, ">3 GiB<") && !contains(svg, ">80 GiB<"),
          "broken axis: ticks stop below the capacity band");
    free(svg);
    vr_chart_set_capacity(c, 6 * GIB, "capacity");
    svg = vr_chart_svg(c);
    check(contains(svg, ">capacity 6 GiB</text>") && !contains(svg, "axis broken"),
          "capacity within 4x of the data: drawn at its value");
    free(svg);
    vr_chart_free(c);
}

/* A level far above its churn (178-180 GiB on a 200 GiB device): the
 * axis is broken and starts at a floor under the lowest value, so the
 * churn fills the plot; data from 0 keeps the axis from 0. */
static void test_floor_axis(void)
{
    vr_chart *c = vr_chart_new("level", 0, 10 * S_NS);
    int s = vr_chart_add_series(c, "allocated", "allocated");
    for (int i = 0; i < 10; i++)
        vr_chart_add_point(c, s, (int64_t)i * S_NS, (178 + (i % 3)) * GIB);
    vr_chart_set_capacity(c, 200 * GIB, "capacity");
    char *svg = vr_chart_svg(c);
    check(contains(svg, "class=\"vr-axis-break\""), "a level far above 0: the axis is broken");
    check(!contains(svg, ">0</text>"), "a level far above 0: no 0 on the y axis");
    check(contains(svg, ">180 GiB</text>") || contains(svg, ">180.0 GiB</text>"),
          "a level far above 0: a tick at 180 GiB");
    free(svg);
    vr_chart_add_point(c, s, 10 * S_NS, 0);
    svg = vr_chart_svg(c);
    check(!contains(svg, "vr-axis-break") && contains(svg, ">0</text>"),
          "data down to 0: the axis from 0, unbroken");
    free(svg);
    vr_chart_free(c);
}

static void test_units(void)
{
    vr_chart *c = vr_chart_new("short", 0, S_NS / 2);
    int s = vr_chart_add_series(c, "allocated", "allocated");
    vr_chart_add_point(c, s, 0, 100 * MIB);
    vr_chart_add_point(c, s, S_NS / 4, 1536 * MIB);
    char *svg = vr_chart_svg(c);
    check(contains(svg, ">100 ms<") && contains(svg, ">0 ms<"), "sub-second range uses ms");
    check(contains(svg, ">peak 1.5 GiB<") && contains(svg, ">1.5 GiB<"), "fractional GiB labels");
    free(svg);
    vr_chart_free(c);
}

static void test_escaping(void)
{
    vr_chart *c = vr_chart_new("<script>&alert('x')\"", 0, S_NS);
    int s = vr_chart_add_series(c, "a\"b'c<d>&e", "x\" onload=\"y");
    vr_chart_add_point(c, s, 0, GIB);
    vr_chart_set_capacity(c, 2 * GIB, "<b>cap</b>");
    int bad = vr_chart_add_series(c, "bad utf8 \xff\xfe \x01", "z");
    vr_chart_add_point(c, bad, 0, MIB);
    char *svg = vr_chart_svg(c);
    check(contains(svg, "&lt;script&gt;&amp;alert(&#39;x&#39;)&quot;"), "title is escaped");
    check(svg && !contains(svg, "<script") && !contains(svg, "<b>"),
          "no caller markup comes through");
    check(contains(svg, "a&quot;b&#39;c&lt;d&gt;&amp;e"), "series label is escaped");
    check(contains(svg, "x&quot; onload=&quot;y"), "CSS class is escaped");
    check(contains(svg, "bad utf8 \xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd"),
          "invalid UTF-8 and controls become U+FFFD");
    check(well_formed(svg), "escaped SVG is well-formed");
    free(svg);
    vr_chart_free(c);
}

static void test_bounds(void)
{
    vr_chart *c = vr_chart_new("bounds", 0, 10 * S_NS);
    int s = vr_chart_add_series(c, "a", "a");
    /* Times before t0, after t1 and going backwards must not grow memory. */
    for (long i = 0; i < 3000000; i++) {
        int64_t t = (i % 3 == 0) ? -S_NS : (i % 3 == 1) ? 20 * S_NS : 0;
        vr_chart_add_point(c, s, t + i, (int64_t)(i % 977));
    }
    check(vr_chart_points(c, s) <= VR_CHART_MAX_POINTS, "stray and unordered times stay bounded");
    char *svg = vr_chart_svg(c);
    check(well_formed(svg) && no_bad_numbers(svg), "stray times render");
    free(svg);
    for (int i = 1; i < VR_CHART_MAX_SERIES; i++)
        vr_chart_add_series(c, "more", "more");
    check(vr_chart_add_series(c, "one too many", "x") == -1,
          "series beyond the maximum are refused");
    vr_chart_add_point(c, 99, 0, 1); /* ignored, must not crash */
    vr_chart_free(c);
}

static void test_small_series_exact(void)
{
    vr_chart *c = vr_chart_new("small", 0, 100 * S_NS);
    int s = vr_chart_add_series(c, "a", "a");
    for (int i = 0; i < 100; i++)
        vr_chart_add_point(c, s, i * S_NS, (i % 7) * MIB);
    check(vr_chart_points(c, s) == 100, "sparse points are all kept");
    /* Ties: the first occurrence of the maximum is the peak. */
    int64_t t = -1, v = -1;
    vr_chart_peak(c, s, &t, &v);
    check(t == 6 * S_NS && v == 6 * MIB, "peak is the first of equal maxima");
    char *a = vr_chart_svg(c), *b = vr_chart_svg(c);
    check(a && b && !strcmp(a, b), "rendering is repeatable");
    free(a);
    free(b);
    vr_chart_free(c);
}

/* Points cleared (a reader that read out of order reads again) leave the
 * chart as one that never had them: the same SVG, the same peak. */
static vr_chart *two_series(void)
{
    vr_chart *c = vr_chart_new("cleared", 0, 100 * S_NS);
    vr_chart_add_series(c, "allocated", "allocated");
    vr_chart_add_series(c, "reserved", "reserved");
    return c;
}

static void test_clear_points(void)
{
    vr_chart *fresh = two_series(), *cleared = two_series();
    for (int i = 0; i < 5000; i++) /* past a bucket's worth: closed buckets too */
        vr_chart_add_point(cleared, i % 2, (int64_t)(5000 - i) * S_NS / 50, 9 * GIB);
    vr_chart_clear_points(cleared);
    check(vr_chart_points(cleared, 0) == 0 && vr_chart_points(cleared, 1) == 0,
          "cleared: no point kept");
    for (int i = 0; i < 300; i++) {
        vr_chart_add_point(fresh, 0, i * S_NS / 3, (i % 11) * MIB);
        vr_chart_add_point(cleared, 0, i * S_NS / 3, (i % 11) * MIB);
    }
    int64_t t = -1, v = -1;
    vr_chart_peak(cleared, 0, &t, &v);
    check(v == 10 * MIB && t == 10 * S_NS / 3, "cleared: the peak is the new points'");
    check(vr_chart_peak(cleared, 1, &t, &v) == -1, "cleared: a series given none has no peak");
    char *a = vr_chart_svg(fresh), *b = vr_chart_svg(cleared);
    check(a && b && !strcmp(a, b),
          "cleared then drawn again: the SVG of a chart never given them");
    free(a);
    free(b);
    vr_chart_free(fresh);
    vr_chart_free(cleared);
}

/*** small multiples: charts on shared axes ***/

/* The text of the first element that starts with `open` up to its `close`
 * (malloc'ed; NULL when there is none). */
static char *section_of(const char *svg, const char *open, const char *close)
{
    const char *a = svg ? strstr(svg, open) : NULL;
    const char *z = a ? strstr(a, close) : NULL;
    if (!z)
        return NULL;
    size_t n = (size_t)(z - a);
    char *out = malloc(n + 1);
    memcpy(out, a, n);
    out[n] = '\0';
    return out;
}

static int same_section(const char *a, const char *b, const char *open, const char *close)
{
    char *x = section_of(a, open, close), *y = section_of(b, open, close);
    int same = x && y && !strcmp(x, y);
    free(x);
    free(y);
    return same;
}

/* A rank's chart as the report makes them: one range, origin 0, one y top,
 * compact. */
static vr_chart *rank_chart(const char *title, int64_t peak, int64_t top)
{
    vr_chart *c = vr_chart_new(title, 2 * S_NS, 12 * S_NS);
    int a = vr_chart_add_series(c, "allocated", "allocated");
    int r = vr_chart_add_series(c, "reserved", "reserved");
    vr_chart_set_origin(c, 0);
    vr_chart_set_y_top(c, top);
    vr_chart_set_compact(c, 1);
    vr_chart_add_point(c, a, 3 * S_NS, peak / 2);
    vr_chart_add_point(c, a, 7 * S_NS, peak);
    vr_chart_add_point(c, a, 9 * S_NS, peak / 4);
    vr_chart_add_point(c, r, 3 * S_NS, peak);
    return c;
}

static void test_top_for(void)
{
    check(vr_chart_top_for(0, 0) == GIB, "top_for: nothing gives 1 GiB");
    check(vr_chart_top_for(10 * GIB, 0) == 11 * GIB,
          "top_for: 10% above the data without a capacity");
    int64_t t = vr_chart_top_for(10 * GIB, 32 * GIB);
    check(t >= 32 * GIB / 100 * 105 && t <= 32 * GIB / 100 * 105 + 100,
          "top_for: 5% above a capacity within 4x of the data");
    check(vr_chart_top_for(2 * GIB, 80 * GIB) == 5 * GIB / 2,
          "top_for: a band above the data when the capacity is far above");
}

static void test_small_multiples(void)
{
    int64_t top = vr_chart_top_for(6 * GIB, 0);
    int64_t t2 = vr_chart_top_for(2 * GIB, 0);
    top = t2 > top ? t2 : top;
    vr_chart *a = rank_chart("rank 0", 2 * GIB, top);
    vr_chart *b = rank_chart("rank 1", 6 * GIB, top);
    char *sa = vr_chart_svg(a), *sb = vr_chart_svg(b);
    check(well_formed(sa) && well_formed(sb) && no_bad_numbers(sa) && self_contained(sa) &&
              coords_short(sa),
          "small multiples are well-formed, self-contained SVG");
    check(contains(sa, "viewBox=\"0 0 560 170\"") &&
              contains(sa, "class=\"vr-chart vr-compact\""),
          "small multiples are compact (170 units high)");
    check(contains(sa, "data-x-range=\"2000000000 12000000000\"") &&
              contains(sb, "data-x-range=\"2000000000 12000000000\""),
          "both state the one x range, in ns after the origin");
    char want[64];
    snprintf(want, sizeof want, "data-y-top=\"%lld\"", (long long)top);
    check(contains(sa, want) && contains(sb, want), "both state the one y top");
    check(same_section(sa, sb, "<g class=\"vr-axis vr-axis-x\"", "</g>"), "x axes are identical");
    check(same_section(sa, sb, "<g class=\"vr-axis vr-axis-y\"", "</g>") &&
              same_section(sa, sb, "<g class=\"vr-grid\"", "</g>"),
          "y axes and grids are identical, whatever each one's peak");
    check(contains(sa, ">6 GiB<") && contains(sa, ">peak 2 GiB<"),
          "the lower rank is drawn on the higher one's scale");
    check(contains(sa, ">2 s<") && contains(sa, ">12 s<") && !contains(sa, ">0 s<"),
          "x labels count from the origin, not from the range's start");
    check(contains(sb, "(6442450944 bytes) at 7 s"), "the peak's time counts from the origin");
    check(contains(sa, "y=\"22\">allocated</text>"), "the legend shares the title's line");
    free(sa);
    free(sb);
    vr_chart_free(a);
    vr_chart_free(b);
}

/* The last value of a series that ends early stops where its data ends,
 * not at the end of a longer shared range. */
static void test_data_end(void)
{
    vr_chart *c = vr_chart_new("", 0, 10 * S_NS);
    int s = vr_chart_add_series(c, "allocated", "allocated");
    vr_chart_add_point(c, s, 0, GIB);
    vr_chart_add_point(c, s, 2 * S_NS, 2 * GIB);
    char *whole = vr_chart_svg(c);
    char *path = section_of(whole, "<path class=\"vr-series", "\" fill");
    size_t n = path ? strlen(path) : 0;
    check(n > 4 && !strcmp(path + n - 4, "H548"),
          "by default the last value holds to the range's end");
    free(path);
    vr_chart_set_data_end(c, 4 * S_NS);
    char *cut = vr_chart_svg(c);
    path = section_of(cut, "<path class=\"vr-series", "\" fill");
    check(path && !contains(path, "H548") && well_formed(cut),
          "with a data end, the last value stops there");
    free(path);
    vr_chart_set_data_end(c, S_NS); /* before the last point: ignored */
    free(cut);
    cut = vr_chart_svg(c);
    check(well_formed(cut) && no_bad_numbers(cut),
          "a data end before the last point never draws backwards");
    free(whole);
    free(cut);
    vr_chart_free(c);
}

/* Times near both ends of int64 (stamps gone wild, +-9.2e15 us): the
 * span is past INT64_MAX, yet the OOM at the end still gets its margin
 * after it (the span was a signed overflow, wrapped negative: no margin). */
static void test_extreme_times(void)
{
    int64_t lo = -INT64_C(9000000000000000000), hi = INT64_C(9000000000000000000);
    vr_chart *c = vr_chart_new("", lo, hi);
    int s = vr_chart_add_series(c, "allocated", "allocated");
    vr_chart_add_point(c, s, lo, GIB);
    vr_chart_add_point(c, s, hi, 2 * GIB);
    vr_chart_add_oom(c, hi, 2 * GIB, GIB, "oom");
    vr_chart_x_axis axis;
    vr_chart_get_x_axis(c, &axis);
    check(axis.t_lo == lo && axis.t_hi > hi, "an OOM at the end of a huge span has its margin");
    char *svg = vr_chart_svg(c);
    check(well_formed(svg) && no_bad_numbers(svg), "a span past INT64_MAX renders");
    free(svg);
    vr_chart_free(c);
}

/* On a fixed scale the axis is never broken: a capacity under the top is
 * drawn at its value, one above it is left out. */
static void test_fixed_scale_capacity(void)
{
    vr_chart *c = vr_chart_new("fixed", 0, 10 * S_NS);
    int s = vr_chart_add_series(c, "allocated", "allocated");
    vr_chart_add_point(c, s, S_NS, 2 * GIB);
    vr_chart_set_capacity(c, 80 * GIB, "capacity");
    vr_chart_set_y_top(c, 10 * GIB);
    char *svg = vr_chart_svg(c);
    check(!contains(svg, "vr-capacity") && !contains(svg, "axis broken") &&
              contains(svg, ">10 GiB<"),
          "fixed top: a capacity above it is not drawn, the ticks reach the top");
    free(svg);
    vr_chart_set_capacity(c, 8 * GIB, "capacity");
    svg = vr_chart_svg(c);
    check(contains(svg, ">capacity 8 GiB</text>") && !contains(svg, "axis broken"),
          "fixed top: a capacity under it is drawn at its value");
    free(svg);
    vr_chart_free(c);
    c = vr_chart_new("alone", 0, S_NS);
    svg = vr_chart_svg(c);
    check(!contains(svg, "data-x-range") && !contains(svg, "data-y-top"),
          "a chart on its own axes states none");
    free(svg);
    vr_chart_free(c);
}

/*** the pre-existing memory band ***/

static void test_baseline(void)
{
    vr_chart *c = vr_chart_new("base", 0, 10 * S_NS);
    int s = vr_chart_add_series(c, "allocated", "allocated");
    vr_chart_add_point(c, s, 0, 3 * GIB);
    vr_chart_add_point(c, s, 5 * S_NS, 5 * GIB);
    char *svg = vr_chart_svg(c);
    check(!contains(svg, "vr-baseline"), "no baseline unless set");
    free(svg);
    vr_chart_set_baseline(c, 2 * GIB, "<live> before");
    svg = vr_chart_svg(c);
    check(contains(svg, "<g class=\"vr-baseline\" data-bytes=\"2147483648\">"),
          "the baseline states its bytes");
    check(contains(svg, "&lt;live&gt; before: 2 GiB</text>"),
          "the baseline's label is escaped and says the figure");
    check(well_formed(svg) && coords_short(svg), "a chart with a baseline is well-formed");
    /* The label is drawn after the series, so it stays readable. */
    check(svg && strstr(svg, "vr-baseline-label") > strstr(svg, "vr-series-0"),
          "the baseline's label is drawn over the series");
    free(svg);
    vr_chart_set_baseline(c, 0, "x");
    svg = vr_chart_svg(c);
    check(!contains(svg, "vr-baseline"), "a zero baseline draws nothing");
    free(svg);
    vr_chart_free(c);
}

/*** the segment map ***/

/* The value of attribute `name` in the first element at or after `from`. */
static long long attr_ll(const char *from, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *p = from ? strstr(from, key) : NULL;
    return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

static void add_segment(vr_segmap *m, int64_t total, const char *type, int expandable)
{
    vr_segmap_segment seg = {total, type, NULL, expandable};
    vr_segmap_add_segment(m, &seg);
}

static void test_segmap_states(void)
{
    check(vr_segmap_state_of("active_allocated") == VR_SEGMAP_ALLOCATED &&
              vr_segmap_state_of("active_pending_free") == VR_SEGMAP_PENDING &&
              vr_segmap_state_of("active_awaiting_free") == VR_SEGMAP_PENDING &&
              vr_segmap_state_of("inactive") == VR_SEGMAP_FREE &&
              vr_segmap_state_of("weird") == VR_SEGMAP_OTHER &&
              vr_segmap_state_of(NULL) == VR_SEGMAP_OTHER,
          "block states map to their colours");
}

static void test_segmap_pieces(void)
{
    vr_segmap *m = vr_segmap_new("pieces");
    add_segment(m, 100 * MIB, "large", 0);
    vr_segmap_add_block(m, 40 * MIB, VR_SEGMAP_ALLOCATED);
    vr_segmap_add_block(m, 40 * MIB, VR_SEGMAP_FREE);
    vr_segmap_add_block(m, 20 * MIB, VR_SEGMAP_ALLOCATED);
    check(vr_segmap_pieces(m, 0) == 3, "wide blocks stay apart (splits show)");
    add_segment(m, 100 * MIB, "large", 0);
    vr_segmap_add_block(m, 50 * MIB, VR_SEGMAP_ALLOCATED);
    vr_segmap_add_block(m, 1024, VR_SEGMAP_FREE);
    vr_segmap_add_block(m, 50 * MIB - 1024, VR_SEGMAP_ALLOCATED);
    check(vr_segmap_pieces(m, 1) == 3, "a tiny block between wide ones keeps its place");
    /* 1 GiB cut into 100,000 tiny blocks of every state. */
    add_segment(m, 100000LL * 10240, "large", 0);
    int64_t sums[VR_SEGMAP_NSTATES] = {0};
    for (int i = 0; i < 100000; i++) {
        vr_segmap_state st = (vr_segmap_state)(i % 3);
        vr_segmap_add_block(m, 10240, st);
        sums[st] += 10240;
    }
    size_t n = vr_segmap_pieces(m, 2);
    check(n > 50 && n <= 2 * 560 / VR_SEGMAP_MIN_PIECE + 4,
          "100,000 tiny blocks merge into a bounded number of pieces");
    /* Blocks far past their segment's size: still bounded. */
    add_segment(m, 10, "small", 1);
    for (int i = 0; i < 10000; i++)
        vr_segmap_add_block(m, MIB, VR_SEGMAP_ALLOCATED);
    check(vr_segmap_pieces(m, 3) <= 2 * 560 / VR_SEGMAP_MIN_PIECE + 4,
          "blocks overrunning their segment stay bounded");
    char *svg = vr_segmap_svg(m);
    check(well_formed(svg) && coords_short(svg) && no_bad_numbers(svg) && self_contained(svg),
          "the map is well-formed and self-contained");
    const char *row = svg;
    for (int i = 0; i < 3 && row; i++)
        row = strstr(row + 1, "<g class=\"vr-segment\"");
    check(attr_ll(row, "data-allocated") == sums[0] && attr_ll(row, "data-pending") == sums[1] &&
              attr_ll(row, "data-free") == sums[2] && attr_ll(row, "data-other") == 0,
          "a merged row still states its exact bytes per state");
    check(count_of(svg, "class=\"vr-segment\"") == 4 && !contains(svg, "vr-segment-rest"),
          "one row per segment, no rest row when all fit");
    check(contains(svg, "stroke-dasharray=\"3 2\"") && contains(svg, "small exp."),
          "an expandable small-pool segment is marked");
    free(svg);
    vr_segmap_free(m);
}

static void test_segmap_gap(void)
{
    vr_segmap *m = vr_segmap_new("gap");
    add_segment(m, 20 * MIB, "large", 0);
    vr_segmap_add_block(m, 12 * MIB, VR_SEGMAP_ALLOCATED);
    vr_segmap_add_block(m, 6 * MIB, VR_SEGMAP_FREE);
    char *svg = vr_segmap_svg(m);
    const char *row = strstr(svg, "<g class=\"vr-segment\"");
    check(attr_ll(row, "data-bytes") == 20 * MIB && attr_ll(row, "data-allocated") == 12 * MIB &&
              attr_ll(row, "data-free") == 6 * MIB && attr_ll(row, "data-other") == 2 * MIB,
          "bytes in no block are counted as other");
    check(contains(svg, "other / in no block"), "the legend names other when there is some");
    free(svg);
    vr_segmap_free(m);
}

static void test_segmap_many(void)
{
    vr_segmap *m = vr_segmap_new("10,000 segments");
    int64_t rest = 0, rest_used = 0;
    for (int i = 0; i < 10000; i++) {
        int64_t total = (int64_t)(20000 - i) * 2 * MIB;
        add_segment(m, total, i % 2 ? "small" : "large", 0);
        vr_segmap_add_block(m, total / 4, VR_SEGMAP_ALLOCATED);
        vr_segmap_add_block(m, total - total / 4, VR_SEGMAP_FREE);
        if (i >= VR_SEGMAP_MAX_ROWS) {
            rest += total;
            rest_used += total / 4;
        }
    }
    check(vr_segmap_rows(m) == VR_SEGMAP_MAX_ROWS, "the largest segments get a row each");
    check(vr_segmap_rest_segments(m) == 10000 - VR_SEGMAP_MAX_ROWS &&
              vr_segmap_rest_bytes(m, VR_SEGMAP_NSTATES) == rest &&
              vr_segmap_rest_bytes(m, VR_SEGMAP_ALLOCATED) == rest_used,
          "the others are summed into the last row");
    char *svg = vr_segmap_svg(m);
    const char *r = strstr(svg, "<g class=\"vr-segment-rest\"");
    check(attr_ll(r, "data-segments") == 10000 - VR_SEGMAP_MAX_ROWS &&
              attr_ll(r, "data-bytes") == rest && attr_ll(r, "data-allocated") == rest_used &&
              attr_ll(r, "data-free") == rest - rest_used,
          "the last row states its count and bytes");
    check(contains(svg, "9,976 more segments"), "the last row says how many");
    check(svg && strlen(svg) < 100 * 1024 && well_formed(svg),
          "10,000 segments: a well-formed SVG under 100 KB");
    free(svg);
    vr_segmap_free(m);
}

/* The worst a row can cost: blocks exactly as wide as a piece, or tiny
 * blocks of every state, in every kept row. */
static void test_segmap_worst(void)
{
    vr_segmap *m = vr_segmap_new("worst");
    for (int r = 0; r < VR_SEGMAP_MAX_ROWS; r++) {
        add_segment(m, GIB, "large", r % 2);
        for (int i = 0; i < 200000; i++)
            vr_segmap_add_block(m, r % 2 ? GIB / 200000 : GIB / 100,
                                (vr_segmap_state)(i % VR_SEGMAP_NSTATES));
    }
    char *svg = vr_segmap_svg(m);
    check(svg && strlen(svg) < 300 * 1024 && well_formed(svg),
          "the worst rows stay under 300 KB");
    free(svg);
    vr_segmap_free(m);
}

static void test_segmap_escaping(void)
{
    vr_segmap *m = vr_segmap_new("<script>alert(1)</script>");
    vr_segmap_segment seg = {MIB, "<b>\"x", "1,<i>\xff", 0};
    vr_segmap_add_segment(m, &seg);
    vr_segmap_add_block(m, MIB, VR_SEGMAP_ALLOCATED);
    char *svg = vr_segmap_svg(m);
    check(svg && !contains(svg, "<script") && !contains(svg, "<b>") && !contains(svg, "<i>"),
          "no caller markup comes through the map");
    check(contains(svg, "&lt;script&gt;") && contains(svg, "&lt;b&gt;&quot;x") &&
              contains(svg, "private pool 1,&lt;i&gt;\xef\xbf\xbd"),
          "title, type and pool are escaped");
    check(well_formed(svg), "an escaped map is well-formed");
    free(svg);
    vr_segmap_free(m);
    m = vr_segmap_new("");
    svg = vr_segmap_svg(m);
    check(well_formed(svg) && contains(svg, "data-segments=\"0\""), "an empty map renders");
    free(svg);
    vr_segmap_free(m);
}

/* A series that never gets a point (reserved memory an old trace does not
 * record) leaves the legend; the others keep their colours. */
static void test_legend_without_empty_series(void)
{
    vr_chart *c = vr_chart_new("", 0, 10 * S_NS);
    int s0 = vr_chart_add_series(c, "allocated", "allocated");
    int s1 = vr_chart_add_series(c, "reserved", "reserved");
    int s2 = vr_chart_add_series(c, "nvidia-smi used", "smi-used");
    vr_chart_add_point(c, s0, S_NS, GIB);
    vr_chart_add_point(c, s2, S_NS, 2 * GIB);
    char *svg = vr_chart_svg(c);
    char *legend = section_of(svg, "<g class=\"vr-legend\">", "</g>");
    check(legend && contains(legend, ">allocated<") && contains(legend, ">nvidia-smi used<"),
          "series with points are in the legend");
    check(legend && !contains(legend, "reserved"), "a series without points leaves the legend");
    check(legend && contains(legend, "vr-series-2 smi-used") && count_of(legend, "<path") == 2,
          "the series after it keeps its own colour class");
    check(well_formed(svg), "the chart is well-formed");
    vr_chart_add_point(c, s1, S_NS, 3 * GIB);
    free(legend);
    free(svg);
    svg = vr_chart_svg(c);
    legend = section_of(svg, "<g class=\"vr-legend\">", "</g>");
    check(legend && contains(legend, ">reserved<"), "given a point, the series is in the legend");
    free(legend);
    free(svg);
    vr_chart_free(c);
}

/* Marks are bounded (a million steps keep a fixed array), escaped, and an
 * OOM past the data widens the x range with room after it. */
static void test_marks(void)
{
    vr_chart *c = vr_chart_new("", 0, 10 * S_NS);
    int s0 = vr_chart_add_series(c, "allocated", "allocated");
    vr_chart_add_point(c, s0, S_NS, GIB);
    vr_chart_set_capacity(c, 4 * GIB, "capacity");
    for (int i = 0; i < 1000000; i++)
        vr_chart_add_step(c, (int64_t)i * 10000, "step");
    for (int i = 0; i < 40; i++)
        vr_chart_add_oom(c, 12 * S_NS, 3 * GIB, 2 * GIB, "asked <b>&");
    vr_chart_x_axis axis;
    vr_chart_get_x_axis(c, &axis);
    char *svg = vr_chart_svg(c);
    check(well_formed(svg), "a chart with marks is well-formed");
    check(contains(svg, "data-steps=\"1000000\"") &&
              count_of(svg, "class=\"vr-step\"") <= VR_CHART_MAX_STEPS,
          "steps past the bound are counted, not drawn");
    check(count_of(svg, "class=\"vr-oom\"") == VR_CHART_MAX_OOMS,
          "OOMs past the bound are not drawn");
    check(contains(svg, "<title>asked &lt;b&gt;&amp;</title>"), "an OOM's detail is escaped");
    check(axis.t_hi > 12 * S_NS, "an OOM after the range widens it, with room after");
    check(count_of(svg, ">step</text>") < 20, "step labels are thinned to what has room");
    free(svg);
    vr_chart_free(c);
}

/* For the HTML report the legend leaves the SVG (its plot takes the room)
 * and comes as a list: an item per series with points, then the prints,
 * each with a swatch in the series' colour and its label escaped. */
static void test_html_legend(void)
{
    vr_chart *c = vr_chart_new("t", 0, 10 * S_NS);
    int s0 = vr_chart_add_series(c, "alloc <b>&\"", "allocated");
    vr_chart_add_series(c, "reserved", "reserved");
    vr_chart_add_point(c, s0, S_NS, GIB);
    vr_chart_add_print(c, 2 * S_NS, GIB, 2 * GIB, "p");
    char *in_svg = vr_chart_svg(c);
    vr_chart_set_html_legend(c, 1);
    char *svg = vr_chart_svg(c), *list = vr_chart_legend_html(c);
    check(contains(in_svg, "<g class=\"vr-legend\">") && !contains(svg, "vr-legend"),
          "with an HTML legend, the SVG draws none");
    check(well_formed(svg), "the chart without its legend is well-formed");
    check(contains(list, "<ul class=\"vr-legend\">") && count_of(list, "<li") == 2,
          "the list: the series with points and the prints");
    check(contains(list, "<span>alloc &lt;b&gt;&amp;&quot;</span>") && !contains(list, "<b>"),
          "labels are escaped");
    check(contains(list, "<li class=\"vr-series-0\"><svg class=\"vr-swatch\"") &&
              contains(list, "stroke=\"#d55e00\""),
          "a series' swatch is its line in its colour");
    check(contains(list, "<span>printed by the job</span>") && contains(list, "<circle") &&
              contains(list, "fill=\"#0072b2\""),
          "the prints' item shows both markers");
    check(!contains(list, "reserved"), "a series without points is not listed");
    free(in_svg);
    free(svg);
    free(list);
    vr_chart_free(c);
    vr_chart *e = vr_chart_new("", 0, S_NS);
    vr_chart_set_html_legend(e, 1);
    list = vr_chart_legend_html(e);
    check(list && !*list, "nothing to list: an empty string");
    free(list);
    vr_chart_free(e);
    check(vr_chart_legend_html(NULL) == NULL, "a NULL chart: NULL");
}

int main(void)
{
    test_marks();
    test_million_points();
    test_svg_root();
    test_empty();
    test_zero_range();
    test_all_zero();
    test_capacity_and_ticks();
    test_broken_axis();
    test_floor_axis();
    test_units();
    test_escaping();
    test_bounds();
    test_small_series_exact();
    test_clear_points();
    test_top_for();
    test_small_multiples();
    test_data_end();
    test_extreme_times();
    test_fixed_scale_capacity();
    test_baseline();
    test_legend_without_empty_series();
    test_html_legend();
    test_segmap_states();
    test_segmap_pieces();
    test_segmap_gap();
    test_segmap_many();
    test_segmap_worst();
    test_segmap_escaping();
    printf("# %d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
