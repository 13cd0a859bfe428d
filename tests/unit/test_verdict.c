/* Unit tests of the verdict (src/render/results/verdict.c) on documents made
 * here: the state from findings and OOMs, the top advice read from
 * findings[].advice[] (the remedies branch's keys) and none without it,
 * the summary's bound cut at a line, the terminal's line with the input's
 * controls made visible. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "render/results/verdict.h"
#include "render/view/view.h"
#include "harness.h"

static const char doc_with_advice[] =
    "{\"devices\": [{\"id\": \"cuda:0\", \"rank\": null, \"capacity_bytes\": 1000,"
    "  \"peak_allocated_bytes\": 600, \"peak_reserved_bytes\": 700}],"
    " \"oom_events\": [{}],"
    " \"findings\": [{\"kind\": \"fragmentation\", \"severity\": \"critical\","
    "   \"confidence\": \"high\", \"device\": \"cuda:0\", \"rank\": null,"
    "   \"title\": \"cuda:0 ran out\", \"evidence\": {"
    "     \"requested_bytes\": {\"value\": 200, \"source\": \"log\"},"
    "     \"device_free_bytes\": {\"value\": 50, \"source\": \"log\"},"
    "     \"reserved_bytes\": {\"value\": 900, \"source\": \"log\"},"
    "     \"cache_free_bytes\": {\"value\": 300, \"source\": \"derived\"},"
    "     \"outside_allocator_bytes\": {\"value\": -10, \"source\": \"derived\"}},"
    "   \"advice\": [{\"id\": \"expandable-segments\", \"title\": \"Expandable segments\","
    "     \"saving_bytes\": 300, \"would_fit\": true,"
    "     \"setting\": \"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\","
    "     \"evidence\": \"300 B free in pieces\"},"
    "    {\"id\": \"a\", \"title\": \"A\"}, {\"id\": \"b\", \"title\": \"B\"},"
    "    {\"id\": \"c\", \"title\": \"C\"}]}]}";

static long long int_at(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsRaw(item))
        return strtoll(item->valuestring, NULL, 10);
    return cJSON_IsNumber(item) ? (long long)item->valuedouble : -1;
}

static void test_failed_with_advice(void)
{
    cJSON *doc = cJSON_Parse(doc_with_advice);
    vr_verdict_add(doc);
    cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "verdict");
    STR_EQ(cJSON_GetObjectItemCaseSensitive(v, "state")->valuestring, "failed", "an OOM: failed");
    STR_EQ(cJSON_GetObjectItemCaseSensitive(v, "cause")->valuestring, "cuda:0 ran out",
           "the cause is the first finding's title");
    INT_EQ(int_at(v, "peak_bytes"), 900, "the peak is at least what the OOM reserved");
    INT_EQ(int_at(v, "capacity_bytes"), 1000, "the device's capacity when the OOM states none");
    OK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(v, "outside_pytorch_bytes")),
       "a negative capacity - free - reserved is not memory outside PyTorch");
    vr_verdict_view(doc, 10, 3);
    cJSON *advice = cJSON_GetObjectItemCaseSensitive(v, "advice");
    INT_EQ(cJSON_GetArraySize(advice), 3, "the top three advice items");
    STR_EQ(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(advice, 0), "setting")->valuestring,
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "the first item with its setting");
    INT_EQ(int_at(v, "advice_more"), 1, "one more said");
    OK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "has_advice")), "has_advice");
    cJSON *para = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(v, "paragraphs"), 0);
    STR_EQ(cJSON_GetObjectItemCaseSensitive(para, "proof")->valuestring,
           "requested 200 B; free in the cache 300 B; free on the device 50 B",
           "fragmentation's three figures, in its order");
    char *html = vr_verdict_banner_html(doc);
    OK(strstr(html, "<div id=\"verdict\" class=\"vr-verdict vr-failed\"") != NULL,
       "the banner: id verdict, class vr-failed");
    free(html);
    cJSON_Delete(doc);
}

static void test_no_advice(void)
{
    cJSON *doc = cJSON_Parse("{\"devices\": [], \"oom_events\": [], \"findings\": [{"
                             "\"kind\": \"leak\", \"severity\": \"warning\", \"title\": \"t\","
                             "\"evidence\": {}, \"advice\": []}]}");
    vr_verdict_add(doc);
    vr_verdict_view(doc, 10, 3);
    cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "verdict");
    STR_EQ(cJSON_GetObjectItemCaseSensitive(v, "state")->valuestring, "at-risk",
           "a warning and no OOM: at risk");
    OK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(v, "has_advice")),
       "no advice: has_advice false");
    STR_EQ(vr_verdict_label(v), "AT RISK", "its label");
    cJSON_Delete(doc);
}

static void test_fit(void)
{
    size_t max = 200, len = 0;
    char md[1024];
    for (int i = 0; len + 20 < sizeof md - 1; i++)
        len += (size_t)snprintf(md + len, sizeof md - len, "- line %d of text\n", i);
    vr_verdict_fit(md, &len, max);
    OK(len <= max && strlen(md) == len, "cut to at most 200 bytes (%zu)", len);
    OK(strstr(md, "Cut to fit one comment") != NULL, "and says so");
    const char *note = strstr(md, "\n_Cut");
    OK(note && note > md && note[-1] == '\n', "at a line's end");
    char short_md[] = "short\n";
    len = strlen(short_md);
    vr_verdict_fit(short_md, &len, max);
    STR_EQ(short_md, "short\n", "a short text is left alone");
}

static void test_line(void)
{
    char line[256];
    vr_verdict_line("FAILED", "cuda:0 \x1b[31mran out", "out.md", 2048, line, sizeof line);
    STR_EQ(line, "wrote out.md (2.00 KiB): FAILED: cuda:0 \\u001b[31mran out",
           "the line: path, size, verdict; an escape made visible");
    vr_verdict_line("OK", "", "-", 10, line, sizeof line);
    STR_EQ(line, "wrote - (10 B): OK", "no cause: the label alone");
}

int main(void)
{
    RUN(test_failed_with_advice);
    RUN(test_no_advice);
    RUN(test_fit);
    RUN(test_line);
    return harness_summary();
}
