/* Unit tests of the diff's comparison (src/render/diff/diff.c) on
 * documents made here, where tests/diff.sh's real files cannot reach:
 * several ranks and devices paired by (rank, index), two rankless devices
 * of one index paired in order, the unpaired listed on each side; exact
 * 64-bit deltas past 2^53; sites classified; findings gone and new; the
 * growth gate's edges. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "render/diff/diff.h"
#include "harness.h"

#define DEV(id, rank, peak)                                                      \
    "{\"id\": \"" id "\", \"rank\": " rank ", \"peak_allocated_bytes\": " peak   \
    ", \"peak_reserved_bytes\": null, \"peak_breakdown\": {\"parameter\": " peak \
    ", \"activation\": 0}, \"top_sites\": [], \"steps\": [], \"phase_peaks\": []}"

static const char before_json[] =
    "{\"tool\": {\"name\": \"vramreport\", \"version\": \"t\"}, \"sources\": [],"
    " \"oom_event_count\": 0, \"advice\": [], \"devices\": [" DEV("cuda:0", "0", "100") "," DEV(
        "cuda:1", "0",
        "200") "," DEV("cuda:0", "1",
                       "300") "," DEV("cuda:0", "null",
                                      "1") "," DEV("cuda:0", "null",
                                                   "2") "],"
                                                        " \"findings\": [{\"kind\": "
                                                        "\"fragmentation\", \"device\": "
                                                        "\"cuda:0\", \"rank\": 1,"
                                                        "   \"severity\": \"critical\", "
                                                        "\"title\": \"frag\"},"
                                                        "  {\"kind\": \"leak\", \"device\": "
                                                        "\"cuda:0\", \"rank\": 0, \"severity\": "
                                                        "\"warning\","
                                                        "   \"title\": \"leak\"}]}";

static const char after_json[] =
    "{\"tool\": {\"name\": \"vramreport\", \"version\": \"t\"}, \"sources\": [],"
    " \"oom_event_count\": 1, \"advice\": [], \"devices\": [" DEV("cuda:0", "1", "150") "," DEV(
        "cuda:0", "0",
        "100") "," DEV("cuda:1", "0",
                       "0") "," DEV("cuda:0", "null",
                                    "5") "," DEV("cuda:2", "2",
                                                 "7") "],"
                                                      " \"findings\": [{\"kind\": "
                                                      "\"near-capacity\", \"device\": "
                                                      "\"cuda:0\", \"rank\": 1,"
                                                      "   \"severity\": \"warning\", \"title\": "
                                                      "\"near\"}]}";

static long long int_at(const cJSON *obj, const char *key)
{
    long long v;
    return vr_results_member_int(obj, key, &v) ? v : -999;
}

static const cJSON *at(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static const cJSON *pair_with(const cJSON *diff, const char *id, long long rank)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, at(at(diff, "diff"), "devices"))
    {
        long long r;
        int has = vr_results_member_int(p, "rank", &r);
        if (strcmp(at(p, "before_id")->valuestring, id) == 0 &&
            (rank < 0 ? !has : has && r == rank))
            return p;
    }
    return NULL;
}

static cJSON *build(cJSON **b, cJSON **a)
{
    *b = cJSON_Parse(before_json);
    *a = cJSON_Parse(after_json);
    vr_diff_side sb = {"before", 0}, sa = {"after", 1};
    return vr_diff_build(*b, *a, &sb, &sa);
}

static void test_pairing(void)
{
    cJSON *b, *a, *d = build(&b, &a);
    const cJSON *dd = at(d, "diff");
    INT_EQ(cJSON_GetArraySize(at(dd, "devices")), 4, "four pairs");
    const cJSON *p = pair_with(d, "cuda:0", 1);
    OK(p != NULL, "rank 1's cuda:0 pairs though the after side lists it first");
    INT_EQ(int_at(at(p, "peak_allocated_bytes"), "delta"), -150, "its delta is 150 - 300");
    p = pair_with(d, "cuda:1", 0);
    INT_EQ(int_at(at(p, "peak_allocated_bytes"), "after"), 0, "rank 0's cuda:1 pairs");
    p = pair_with(d, "cuda:0", -1);
    INT_EQ(int_at(at(p, "peak_allocated_bytes"), "before"), 1,
           "the first rankless cuda:0 pairs with the rankless one");
    const cJSON *ub = at(at(dd, "unpaired"), "before"), *ua = at(at(dd, "unpaired"), "after");
    INT_EQ(cJSON_GetArraySize(ub), 1, "one device of before is unpaired");
    INT_EQ(cJSON_GetArraySize(ua), 1, "one device of after is unpaired");
    STR_EQ(at(cJSON_GetArrayItem(ua, 0), "id")->valuestring, "cuda:2", "rank 2's cuda:2");
    OK(cJSON_IsTrue(at(dd, "pairs_differ")), "the sides differ");
    OK(cJSON_IsTrue(at(at(dd, "after"), "partial")), "after's partial is kept");
    INT_EQ(int_at(at(dd, "oom_event_count"), "delta"), 1, "one more OOM");
    cJSON_Delete(d);
    cJSON_Delete(b);
    cJSON_Delete(a);
}

static void test_findings(void)
{
    cJSON *b, *a, *d = build(&b, &a);
    const cJSON *f = at(pair_with(d, "cuda:0", 1), "findings");
    STR_EQ(cJSON_GetArrayItem(at(f, "gone"), 0)->valuestring, "fragmentation",
           "rank 1's fragmentation is gone");
    STR_EQ(cJSON_GetArrayItem(at(f, "new"), 0)->valuestring, "near-capacity",
           "its near-capacity is new");
    f = at(pair_with(d, "cuda:0", 0), "findings");
    INT_EQ(cJSON_GetArraySize(at(f, "before")), 1, "rank 0's cuda:0 has its own leak only");
    STR_EQ(cJSON_GetArrayItem(at(f, "gone"), 0)->valuestring, "leak", "the leak went away");
    INT_EQ(cJSON_GetArraySize(at(at(at(d, "diff"), "findings"), "gone")), 2,
           "the run's findings: two kinds gone");
    cJSON_Delete(d);
    cJSON_Delete(b);
    cJSON_Delete(a);
}

/* A finding without a kind (an older document's, or a hostile one)
 * after one with a kind: no kind to compare, and no crash. */
static void test_finding_without_kind(void)
{
    static const char one[] =
        "{\"tool\": {}, \"sources\": [], \"oom_event_count\": 0, \"advice\": [],"
        " \"devices\": [" DEV("cuda:0", "0", "1") "], \"findings\": ["
        "{\"kind\": \"leak\", \"device\": \"cuda:0\", \"rank\": 0, \"title\": \"l\"},"
        " {\"device\": \"cuda:0\", \"rank\": 0, \"title\": \"no kind\"}]}";
    static const char none[] = "{\"tool\": {}, \"sources\": [], \"oom_event_count\": 0,"
                               " \"advice\": [], \"devices\": [" DEV("cuda:0", "0", "1") "],"
                               " \"findings\": []}";
    cJSON *b = cJSON_Parse(one), *a = cJSON_Parse(none);
    vr_diff_side sb = {"b", 0}, sa = {"a", 0};
    cJSON *d = vr_diff_build(b, a, &sb, &sa);
    const cJSON *gone = at(at(at(d, "diff"), "findings"), "gone");
    OK(d && cJSON_GetArraySize(gone) == 1 && strcmp(cJSON_GetArrayItem(gone, 0)->valuestring,
                                                    "leak") == 0,
       "a finding without a kind: only the leak is gone");
    cJSON_Delete(d);
    cJSON_Delete(b);
    cJSON_Delete(a);
}

static void test_exact(void)
{
    cJSON *b = cJSON_Parse(before_json), *a = cJSON_Parse(after_json);
    cJSON *bd = cJSON_GetArrayItem(at(b, "devices"), 0),
          *ad = cJSON_GetArrayItem(at(a, "devices"), 1);
    cJSON_ReplaceItemInObjectCaseSensitive(bd, "peak_allocated_bytes",
                                           cJSON_CreateRaw("9007199254740993"));
    cJSON_ReplaceItemInObjectCaseSensitive(ad, "peak_allocated_bytes",
                                           cJSON_CreateRaw("9007199254740996"));
    vr_diff_side s = {"x", 0};
    cJSON *d = vr_diff_build(b, a, &s, &s);
    const cJSON *t = at(pair_with(d, "cuda:0", 0), "peak_allocated_bytes");
    OK(cJSON_IsRaw(at(t, "before")) &&
           strcmp(at(t, "before")->valuestring, "9007199254740993") == 0,
       "before is exact past 2^53");
    INT_EQ(int_at(t, "delta"), 3, "the delta is exact: 3");
    cJSON_Delete(d);
    cJSON_Delete(b);
    cJSON_Delete(a);
}

static void test_gate(void)
{
    cJSON *b, *a, *d = build(&b, &a);
    /* growths: rank 0 cuda:0 0 %, rank 0 cuda:1 -100 %, rank 1 -50 %,
     * rankless 1 -> 5: +400 % */
    INT_EQ(vr_diff_grew_over(d, 399.9), 1, "+400 %% is past 399.9 %%");
    INT_EQ(vr_diff_grew_over(d, 400), 0, "+400 %% is not past 400 %%");
    cJSON_Delete(d);
    cJSON *z = cJSON_Parse("{\"diff\": {\"devices\": [{\"peak_allocated_bytes\":"
                           " {\"before\": 0, \"after\": 1, \"delta\": 1}}]}}");
    INT_EQ(vr_diff_grew_over(z, 1e9), 1, "from 0 grows without bound");
    cJSON_Delete(z);
    cJSON_Delete(b);
    cJSON_Delete(a);
}

static void test_sites(void)
{
    cJSON *b = cJSON_Parse("{\"diff_sites\": {\"by\": \"frame\", \"sites\": ["
                           "{\"site\": \"a\", \"bytes\": 100}, {\"site\": \"b\", \"bytes\": 100},"
                           " {\"site\": \"d\", \"bytes\": 50},"
                           " {\"site\": \"(torch's own frames)\", \"bytes\": 10}]}}");
    cJSON *a = cJSON_Parse("{\"diff_sites\": {\"by\": \"frame\", \"sites\": ["
                           "{\"site\": \"a\", \"bytes\": 100}, {\"site\": \"c\", \"bytes\": 30},"
                           " {\"site\": \"d\", \"bytes\": 80},"
                           " {\"site\": \"(torch's own frames)\", \"bytes\": 5}]}}");
    cJSON *pair = cJSON_CreateObject();
    vr_diff_sites(pair, b, a);
    /* c and d both moved 30 B: the larger side (d's 80) first */
    const char *want[][2] = {{"b", "vanished"},
                             {"d", "grew"},
                             {"c", "appeared"},
                             {"(torch's own frames)", "shrank"},
                             {"a", "same"}};
    const cJSON *sites = at(pair, "sites");
    INT_EQ(cJSON_GetArraySize(sites), 5, "five sites");
    for (int i = 0; i < 5; i++) {
        const cJSON *s = cJSON_GetArrayItem(sites, i);
        STR_EQ(at(s, "site")->valuestring, want[i][0], "site %d by |delta|", i);
        STR_EQ(at(s, "change")->valuestring, want[i][1], "its change");
    }
    STR_EQ(at(pair, "sites_by")->valuestring, "frame", "named by frame");
    INT_EQ(int_at(at(pair, "sites_more"), "count"), 0, "no site left over");
    cJSON_Delete(pair);
    cJSON_Delete(b);
    cJSON_Delete(a);
}

/* More sites than are listed: the 20 largest changes, the rest summed,
 * and a site on both sides is never appeared or vanished, whatever its
 * rank on either side. */
static void test_sites_more(void)
{
    cJSON *b = cJSON_Parse("{\"diff_sites\": {\"by\": \"module\", \"sites\": []}}");
    cJSON *a = cJSON_Parse("{\"diff_sites\": {\"by\": \"module\", \"sites\": []}}");
    cJSON *bl = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(b, "diff_sites"), "sites");
    cJSON *al = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(a, "diff_sites"), "sites");
    long long sum_b = 0, sum_a = 0;
    for (int i = 0; i < 30; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%02d", i);
        cJSON *x = cJSON_CreateObject(), *y = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "site", name);
        cJSON_AddNumberToObject(x, "bytes", 1000 + i);
        cJSON_AddStringToObject(y, "site", name);
        cJSON_AddNumberToObject(y, "bytes", 1000 + 2 * i);
        cJSON_AddItemToArray(bl, x);
        cJSON_AddItemToArray(al, y);
        sum_b += 1000 + i;
        sum_a += 1000 + 2 * i;
    }
    cJSON *pair = cJSON_CreateObject();
    vr_diff_sites(pair, b, a);
    const cJSON *sites = at(pair, "sites"), *more = at(pair, "sites_more"), *s;
    INT_EQ(cJSON_GetArraySize(sites), 20, "twenty sites listed");
    INT_EQ(int_at(more, "count"), 10, "ten summed");
    STR_EQ(at(cJSON_GetArrayItem(sites, 0), "site")->valuestring, "m29",
           "the largest change first");
    long long lb = int_at(more, "before_bytes"), la = int_at(more, "after_bytes");
    int same = 0;
    cJSON_ArrayForEach(s, sites)
    {
        lb += int_at(s, "before_bytes");
        la += int_at(s, "after_bytes");
        same += strcmp(at(s, "change")->valuestring, "grew") == 0;
    }
    INT_EQ(lb, sum_b, "sites and sites_more add up to before's bytes");
    INT_EQ(la, sum_a, "and to after's");
    INT_EQ(int_at(more, "delta_bytes"),
           int_at(more, "after_bytes") - int_at(more, "before_bytes"), "the rest's delta");
    INT_EQ(int_at(more, "delta_bytes"), 45, "the rest: m00..m09, which moved 0..9 B");
    INT_EQ(same, 20, "every listed site, on both sides, grew");
    cJSON_Delete(pair);
    cJSON_Delete(b);
    cJSON_Delete(a);
}

/* The timelines are aligned on the lowest step both mark (the marks by
 * step, as diff_timeline.c gives them), each side's start of it kept;
 * none in common, no alignment. */
static void test_aligned(void)
{
    const char *doc = "{\"tool\": {}, \"sources\": [], \"oom_event_count\": 0, \"advice\": [],"
                      " \"findings\": [], \"devices\": [{\"id\": \"cuda:0\", \"rank\": null,"
                      " \"peak_allocated_bytes\": 1, \"diff_step_starts\": %s}]}";
    char bj[512], aj[512], cj[512];
    snprintf(bj, sizeof bj, doc, "[[5, 100], [6, 500], [7, 900]]");
    snprintf(aj, sizeof aj, doc, "[[6, 200], [7, 50]]");
    snprintf(cj, sizeof cj, doc, "[[8, 10]]");
    cJSON *b = cJSON_Parse(bj), *a = cJSON_Parse(aj), *c = cJSON_Parse(cj);
    vr_diff_side sb = {"b", 0}, sa = {"a", 0};
    cJSON *d = vr_diff_build(b, a, &sb, &sa);
    const cJSON *on = at(at(pair_with(d, "cuda:0", -1), "timeline"), "aligned_on");
    INT_EQ(int_at(on, "step"), 6, "aligned on step 6, the lowest both mark");
    INT_EQ(int_at(on, "before_ns"), 500, "before's start of it");
    INT_EQ(int_at(on, "after_ns"), 200, "after's start of it");
    cJSON *e = vr_diff_build(b, c, &sb, &sa);
    OK(cJSON_IsNull(at(at(pair_with(e, "cuda:0", -1), "timeline"), "aligned_on")),
       "no step in common: not aligned");
    cJSON_Delete(d);
    cJSON_Delete(e);
    cJSON_Delete(b);
    cJSON_Delete(a);
    cJSON_Delete(c);
}

int main(void)
{
    RUN(test_pairing);
    RUN(test_findings);
    RUN(test_finding_without_kind);
    RUN(test_exact);
    RUN(test_gate);
    RUN(test_sites);
    RUN(test_sites_more);
    RUN(test_aligned);
    return harness_summary();
}
