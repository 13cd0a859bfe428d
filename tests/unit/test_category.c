/* Unit tests of the categories (src/db/category.c: names, exact sums) and
 * their charts (src/render/category_svg.c: exact figures, escaping,
 * bounded samples). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/db/category.h"
#include "../../src/render/category_svg.h"
#include "harness.h"

#define N VR_CATEGORY_COUNT

static int64_t sum_of(const int64_t v[N])
{
    int64_t s = 0;
    for (int i = 0; i < N; i++)
        s += v[i];
    return s;
}

static void test_names(void)
{
    STR_EQ(vr_category_names[0], "parameter", "index 0 is PyTorch's PARAMETER");
    STR_EQ(vr_category_names[7], "unknown", "index 7 is unknown");
    INT_EQ(vr_category_index("autograd_detail"), 6, "autograd_detail is 6");
    INT_EQ(vr_category_index(NULL), VR_CATEGORY_UNKNOWN, "NULL is unknown");
    INT_EQ(vr_category_index("Activation"), VR_CATEGORY_UNKNOWN, "spelling is exact");
}

static void test_settle_under(void)
{
    int64_t in[N] = {100, 0, 0, 0, 50, 0, 0, 10}, out[N];
    vr_category_settle(in, 1000, out);
    INT_EQ(out[0], 100, "known categories kept");
    INT_EQ(out[4], 50, "activation kept");
    INT_EQ(out[7], 850, "the rest is unknown");
    INT_EQ(sum_of(out), 1000, "sums to the target");
}

static void test_settle_negative(void)
{
    int64_t in[N] = {-300, 200, 0, 0, 0, 0, 0, 0}, out[N];
    vr_category_settle(in, 500, out);
    INT_EQ(out[0], 0, "a negative sum counts as none");
    INT_EQ(out[7], 300, "unknown takes the rest");
    INT_EQ(sum_of(out), 500, "sums to the target");
}

static void test_settle_over(void)
{
    int64_t in[N] = {3000, 1000, 7, 0, 2, 0, 0, 1}, out[N];
    vr_category_settle(in, 2001, out);
    INT_EQ(sum_of(out), 2001, "scaled down: sums exactly to the target");
    /* Each its share rounded down; the largest also takes what the
     * rounding left (less than one byte per category). */
    for (int i = 0; i < N; i++) {
        int64_t floor_share = in[i] * 2001 / 4010;
        int64_t slack = i == 0 ? N : 0;
        OK(out[i] >= floor_share && out[i] <= floor_share + slack,
           "category %d: its share of the target (%lld)", i, (long long)out[i]);
    }
}

static void test_settle_huge(void)
{
    int64_t big = INT64_MAX / 4;
    int64_t in[N] = {big, big, big, big, big, 0, 0, 0}, out[N];
    vr_category_settle(in, INT64_MAX - 5, out);
    INT_EQ(sum_of(out), INT64_MAX - 5, "huge figures sum exactly");
    vr_category_settle(in, -7, out);
    INT_EQ(sum_of(out), 0, "a negative target is 0");
}

static void test_bar_figures(void)
{
    int64_t peak[N] = {102440608, 0, 19395584, 0, 2592465920, 0, 0, 134218152};
    char *svg = vr_catbar_svg("cuda:0 <b>&\"x'\x01", peak);
    OK(svg != NULL, "the bar renders");
    OK(strstr(svg, "activation: 2.41 GiB (2,592,465,920 B), 91.0% of the peak") != NULL,
       "a part's title has its exact bytes and share");
    OK(strstr(svg, "data-bytes=\"134218152\"") != NULL, "the legend states exact bytes");
    OK(strstr(svg, "<b>") == NULL && strstr(svg, "&lt;b&gt;&amp;&quot;x&#39;\xef\xbf\xbd") != NULL,
       "the title is escaped, the control replaced");
    free(svg);
}

static void test_chart_bounded(void)
{
    vr_chart_x_axis axis = {56, 548, 0, 1000, 0, {0}, {{0}}};
    vr_catchart *c = vr_catchart_new("t", &axis);
    int64_t b[N] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int i = 0; i < 5000; i++)
        vr_catchart_add_sample(c, i, b);
    vr_catchart_set_peak(c, b);
    char *svg = vr_catchart_svg(c);
    OK(svg != NULL, "the chart renders");
    size_t h = 0;
    for (const char *p = svg; (p = strstr(p, "H")) != NULL; p++)
        h++;
    OK(h <= (size_t)N * 2 * VR_CATCHART_MAX_SAMPLES + 64, "samples beyond the bound are left out");
    OK(strstr(svg, "<title>autograd_detail: 7 B (7 B) at the peak; at most 7 B (7 B)</title>"),
       "a band's title has its exact bytes");
    free(svg);
    vr_catchart_free(c);
}

int main(void)
{
    RUN(test_names);
    RUN(test_settle_under);
    RUN(test_settle_negative);
    RUN(test_settle_over);
    RUN(test_settle_huge);
    RUN(test_bar_figures);
    RUN(test_chart_bounded);
    return harness_summary();
}
