/* Unit tests of the categories (src/db/category.c: names, exact sums),
 * their charts (src/render/svg/category_svg.c: exact figures, escaping,
 * bounded samples) and the categorizer (src/analyze/categorize.h: one
 * allocation at a time, as the categorize pass's UPDATE decides it). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/categorize.h"
#include "db/category.h"
#include "import/import.h"
#include "render/svg/category_svg.h"
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
    /* Nine since kv_cache (an inference server's, no PyTorch category)
     * came after activation; PyTorch's keep their order around it. */
    INT_EQ(N, 9, "nine categories: PyTorch's eight and kv_cache");
    STR_EQ(vr_category_names[4], "activation", "index 4 is activation");
    STR_EQ(vr_category_names[5], "kv_cache", "kv_cache comes right after activation");
    INT_EQ(vr_category_index("kv_cache"), VR_CATEGORY_KV_CACHE, "kv_cache is found by name");
    STR_EQ(vr_category_names[8], "unknown", "index 8 (the last) is unknown");
    INT_EQ(vr_category_index("gradient"), 6, "gradient is 6");
    INT_EQ(vr_category_index("autograd_detail"), 7, "autograd_detail is 7");
    INT_EQ(vr_category_index(NULL), VR_CATEGORY_UNKNOWN, "NULL is unknown");
    INT_EQ(vr_category_index("Activation"), VR_CATEGORY_UNKNOWN, "spelling is exact");
}

static void test_settle_under(void)
{
    int64_t in[N] = {100, 0, 0, 0, 50, 0, 0, 0, 10}, out[N];
    vr_category_settle(in, 1000, out);
    INT_EQ(out[0], 100, "known categories kept");
    INT_EQ(out[4], 50, "activation kept");
    INT_EQ(out[VR_CATEGORY_UNKNOWN], 850, "the rest is unknown");
    INT_EQ(sum_of(out), 1000, "sums to the target");
}

static void test_settle_negative(void)
{
    int64_t in[N] = {-300, 200, 0, 0, 0, 0, 0, 0, 0}, out[N];
    vr_category_settle(in, 500, out);
    INT_EQ(out[0], 0, "a negative sum counts as none");
    INT_EQ(out[VR_CATEGORY_UNKNOWN], 300, "unknown takes the rest");
    INT_EQ(sum_of(out), 500, "sums to the target");
}

static void test_settle_over(void)
{
    int64_t in[N] = {3000, 1000, 7, 0, 2, 0, 0, 0, 1}, out[N];
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
    int64_t in[N] = {big, big, big, big, big, 0, 0, 0, 0}, out[N];
    vr_category_settle(in, INT64_MAX - 5, out);
    INT_EQ(sum_of(out), INT64_MAX - 5, "huge figures sum exactly");
    vr_category_settle(in, -7, out);
    INT_EQ(sum_of(out), 0, "a negative target is 0");
}

static void test_bar_figures(void)
{
    int64_t peak[N] = {102440608, 0, 19395584, 0, 2592465920, 0, 0, 0, 134218152};
    char *svg = vr_catbar_svg("cuda:0 <b>&\"x'\x01", peak);
    OK(svg != NULL, "the bar renders");
    OK(strstr(svg, "activation: 2.41 GiB (2,592,465,920 B), 91.0% of the peak") != NULL,
       "a part's title has its exact bytes and share");
    OK(strstr(svg, "data-bytes=\"134218152\"") != NULL, "the legend states exact bytes");
    OK(strstr(svg, "<b>") == NULL &&
           strstr(svg, "&lt;b&gt;&amp;&quot;x&#39;\xef\xbf\xbd") != NULL,
       "the title is escaped, the control replaced");
    free(svg);
}

static void test_chart_bounded(void)
{
    vr_chart_x_axis axis = {56, 548, 0, 1000, 0, {0}, {{0}}};
    vr_catchart *c = vr_catchart_new("t", &axis);
    int64_t b[N] = {1, 2, 3, 4, 5, 9, 6, 7, 8};
    for (int i = 0; i < 5000; i++)
        vr_catchart_add_sample(c, i, b);
    vr_catchart_set_peak(c, b);
    char *svg = vr_catchart_svg(c);
    OK(svg != NULL, "the chart renders");
    size_t h = 0;
    for (const char *p = svg; (p = strstr(p, "H")) != NULL; p++)
        h++;
    OK(h <= (size_t)N * 2 * VR_CATCHART_MAX_SAMPLES + 64,
       "samples beyond the bound are left out");
    OK(strstr(svg, "<title>autograd_detail: 7 B (7 B) at the peak; at most 7 B (7 B)</title>"),
       "a band's title has its exact bytes");
    free(svg);
    vr_catchart_free(c);
}

/* A category is listed only with bytes: the timeline's legend leaves
 * kv_cache (and a 0 B gradient: the report says "Nothing in: gradient"
 * once) out while it holds none, and draws it, in its own yellow, once a
 * sample has some. */
static void test_chart_kv_cache_legend(void)
{
    vr_chart_x_axis axis = {56, 548, 0, 1000, 0, {0}, {{0}}};
    int64_t none[N] = {10, 0, 0, 0, 20, 0, 0, 0, 5};
    int64_t some[N] = {10, 0, 0, 0, 20, 64, 0, 0, 5};
    vr_catchart *c = vr_catchart_new("t", &axis);
    vr_catchart_add_sample(c, 0, none);
    vr_catchart_set_peak(c, none);
    char *svg = vr_catchart_svg(c);
    OK(svg && !strstr(svg, "vr-cat-kv_cache") && !strstr(svg, "vr-cat-gradient") &&
           strstr(svg, "vr-cat-parameter"),
       "no kv_cache and no 0 B gradient in the legend; a parameter with bytes listed");
    free(svg);
    vr_catchart_free(c);
    c = vr_catchart_new("t", &axis);
    vr_catchart_add_sample(c, 0, none);
    vr_catchart_add_sample(c, 500, some);
    vr_catchart_set_peak(c, none);
    svg = vr_catchart_svg(c);
    OK(svg && strstr(svg, "<g class=\"vr-legend vr-cat-kv_cache\" data-bytes=\"0\">") &&
           strstr(svg, "class=\"vr-band vr-cat-kv_cache\" fill=\"#f0e442\""),
       "a KV cache some time holds: its band (yellow) and its legend");
    free(svg);
    vr_catchart_free(c);
    svg = vr_catbar_svg("t", some);
    OK(svg && strstr(svg, "kv_cache: 64 B (64 B), 64.6% of the peak"),
       "the peak's bar has the KV cache's part");
    free(svg);
}

/* Times near both ends of int64 (a trace's stamps gone wild): the span
 * is 1.8e19 ns, past INT64_MAX, yet a sample half-way is drawn half-way
 * (x 302 of 56..548), not wrapped round (signed overflow before). */
static void test_chart_extreme_times(void)
{
    vr_chart_x_axis axis = {
        56, 548, -INT64_C(9000000000000000000), INT64_C(9000000000000000000), 0, {0}, {{0}}};
    vr_catchart *c = vr_catchart_new("t", &axis);
    int64_t b[N] = {1, 0, 0, 0, 0, 0, 0, 0, 0};
    vr_catchart_add_sample(c, axis.t_lo, b);
    vr_catchart_add_sample(c, 0, b);
    vr_catchart_add_sample(c, axis.t_hi, b);
    vr_catchart_set_peak(c, b);
    char *svg = vr_catchart_svg(c);
    const char *band = svg ? strstr(svg, "vr-cat-parameter") : NULL;
    const char *d = band ? strstr(band, " d=\"M") : NULL;
    OK(d && strncmp(d, " d=\"M56.0,", 9) == 0, "the first sample is at the left edge");
    OK(d && strstr(d, "H302.0") != NULL, "the middle sample is half-way");
    OK(d && strstr(d, "H548.0") != NULL, "the last sample is at the right edge");
    free(svg);
    vr_catchart_free(c);
}

/* Real inputs with ops and phases (a trace) and with stacks whose frames
 * match the rules (snapshots), analysed by the passes. */
static const char *const real_inputs[] = {
    "kineto/hta-v100x2-rank1-2022.pt.trace.json.gz",
    "snapshot/cs336-bcrafton.pickle",
    "snapshot/cs336-magma27-training.pickle",
};

static vr_db *analysed_db(void)
{
    const char *src = getenv("VR_SRCDIR");
    vr_error err = VR_ERROR_INIT;
    vr_db *db = vr_db_open(NULL, &err);
    OK(db != NULL, "a temporary database (%s)", err.msg);
    for (size_t i = 0; db && i < sizeof real_inputs / sizeof real_inputs[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/tests/data/realdata/%s", src ? src : "..",
                 real_inputs[i]);
        vr_import_result res;
        OK(vr_import_file(db, path, NULL, &res, &err) == 0, "imports %s (%s)", real_inputs[i],
           err.msg);
    }
    if (db)
        OK(vr_analyze(db, &err) == 0, "analyses them (%s)", err.msg);
    return db;
}

static int same_text(const char *a, const unsigned char *b)
{
    return a && b ? strcmp(a, (const char *)b) == 0 : !a && !b;
}

/* Every allocation's own events, as a pass writing the row has them. */
static const char rows_sql[] =
    "SELECT a.source_id, a.alloc_ts_ns, a.free_ts_ns, a.op_id, fe.op_id, ae.stack_id,"
    "       ae.category, a.category, a.alloc_phase, a.free_phase, a.category_rule, a.frame_id"
    "  FROM allocation a JOIN mem_event ae ON ae.id = a.alloc_event_id"
    "  LEFT JOIN mem_event fe ON fe.id = a.free_event_id ORDER BY a.id";

static void read_in(sqlite3_stmt *st, vr_categorize_in *in)
{
    memset(in, 0, sizeof *in);
    in->source = sqlite3_column_int64(st, 0);
    in->alloc_ts = sqlite3_column_int64(st, 1);
    in->freed = sqlite3_column_type(st, 2) != SQLITE_NULL;
    in->free_ts = sqlite3_column_int64(st, 2);
    in->has_op = sqlite3_column_type(st, 3) != SQLITE_NULL;
    in->op = sqlite3_column_int64(st, 3);
    in->has_free_op = sqlite3_column_type(st, 4) != SQLITE_NULL;
    in->free_op = sqlite3_column_int64(st, 4);
    in->has_stack = sqlite3_column_type(st, 5) != SQLITE_NULL;
    in->stack = sqlite3_column_int64(st, 5);
    in->stated = sqlite3_column_type(st, 6) == SQLITE_NULL
                     ? -1
                     : vr_category_index((const char *)sqlite3_column_text(st, 6));
}

/* The row's columns as the pass wrote them; a frame the categorizer
 * leaves to the locate pass (0) may be anything. */
static int row_agrees(sqlite3_stmt *st, const vr_categorize_out *o)
{
    return same_text(o->category, sqlite3_column_text(st, 7)) &&
           same_text(o->alloc_phase, sqlite3_column_text(st, 8)) &&
           same_text(o->free_phase, sqlite3_column_text(st, 9)) &&
           same_text(o->rule, sqlite3_column_text(st, 10)) &&
           (o->frame == 0 || o->frame == sqlite3_column_int64(st, 11));
}

static void test_categorizer_agrees(void)
{
    vr_db *db = analysed_db();
    if (!db)
        return;
    vr_error err = VR_ERROR_INIT;
    vr_categorizer *c = NULL;
    OK(vr_categorizer_open(db, &c, &err) == 0, "opens after the analysis (%s)", err.msg);
    sqlite3_stmt *st = NULL;
    OK(sqlite3_prepare_v2(vr_db_handle(db), rows_sql, -1, &st, NULL) == SQLITE_OK,
       "reads the allocations");
    long rows = 0, agree = 0, with_op = 0, framed = 0, categories = 0, rules = 0;
    char seen_cat[VR_CATEGORY_COUNT] = {0};
    const char *rule_seen[64] = {0};
    while (c && st && sqlite3_step(st) == SQLITE_ROW) {
        vr_categorize_in in;
        vr_categorize_out out;
        read_in(st, &in);
        if (vr_categorizer_decide(c, &in, &out, &err) < 0)
            break;
        rows++;
        agree += row_agrees(st, &out);
        with_op += in.has_op;
        framed += out.frame != 0;
        int k = vr_category_index(out.category);
        categories += !seen_cat[k];
        seen_cat[k] = 1;
        for (long i = 0; i < 64; i++)
            if (!rule_seen[i] || rule_seen[i] == out.rule) {
                rules += !rule_seen[i];
                rule_seen[i] = out.rule;
                break;
            }
    }
    OK(rows > 15000, "every allocation decided (%ld, %s)", rows, err.msg);
    INT_EQ(agree, rows, "each as the pass wrote it");
    OK(with_op > 10000 && framed > 2000, "ops and stacks' frames among them (%ld, %ld)", with_op,
       framed);
    OK(categories >= 4 && rules >= 6, "several categories and rules (%ld, %ld)", categories,
       rules);
    vr_categorize_in stated = {.source = 1, .alloc_ts = 0, .stated = 2};
    vr_categorize_out out;
    OK(vr_categorizer_decide(c, &stated, &out, &err) == 0 && strcmp(out.category, "input") == 0 &&
           strcmp(out.rule, "stated-by-source") == 0,
       "a category the source states is taken as it is");
    sqlite3_finalize(st);
    vr_categorizer_free(c);
    vr_db_close(db);
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
    RUN(test_chart_kv_cache_legend);
    RUN(test_chart_extreme_times);
    RUN(test_categorizer_agrees);
    return harness_summary();
}
