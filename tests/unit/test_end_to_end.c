/*-*** test_end_to_end.c: an import, analysis and report through the library API, checked with SQL ***/
/* Each function runs in its own child process (see harness.h). */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "analyze/analyze.h"
#include "db/db.h"
#include "import/import.h"
#include "render/report.h"
#include "util/buf.h"

#include "fixtures.h"
#include "harness.h"

/* First column of the first row as a malloc'ed string; NULL for NULL/none. */
static char *q_str(sqlite3 *h, const char *sql)
{
    sqlite3_stmt *st;
    char *v = NULL;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        printf("# SQL error: %s: %s\n", sqlite3_errmsg(h), sql);
        return NULL;
    }
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = vr_xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

#define NULL_VAL LLONG_MIN

static const char e2e_trace[] =
    "{\n"
    "  \"schemaVersion\": 1,\n"
    "  \"deviceProperties\": [{\"id\": 0, \"name\": \"Test GPU 80GB\", \"totalGlobalMem\": "
    "85899345920}],\n"
    "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 2},\n"
    "  \"traceEvents\": [\n"
    "    {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"pid\": 7, "
    "\"tid\": 7, \"ts\": 1000, \"dur\": 1000},\n"
    "    {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 7, \"tid\": "
    "7, "
    "\"ts\": 1100, \"dur\": 400, \"args\": {\"External id\": 11}},\n"
    "    {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 7, \"tid\": 7, "
    "\"ts\": 1200, \"dur\": 100, \"args\": {\"External id\": 12}},\n"
    "    {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1150, \"args\": {\"Total Reserved\": 2097152, "
    "\"Total Allocated\": 1000, \"Bytes\": 1000, \"Addr\": 10, \"Device Id\": 0, "
    "\"Device Type\": 1}},\n"
    "    {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1250.25, \"args\": {\"Total Reserved\": 2097152, "
    "\"Total Allocated\": 5096, \"Bytes\": 4096, \"Addr\": 11, \"Device Id\": 0, "
    "\"Device Type\": 1}},\n"
    "    {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1260, \"args\": {\"Total Reserved\": 2097152, "
    "\"Total Allocated\": 4096, \"Bytes\": -1000, \"Addr\": 10, \"Device Id\": 0, "
    "\"Device Type\": 1}},\n"
    "    {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1600, \"args\": {\"Total Reserved\": 4194304, "
    "\"Total Allocated\": 6144, \"Bytes\": 2048, \"Addr\": 12, \"Device Id\": 0, "
    "\"Device Type\": 1}},\n"
    "    {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 2500, \"args\": {\"Total Reserved\": 4194304, "
    "\"Total Allocated\": 4096, \"Bytes\": -2048, \"Addr\": 12, \"Device Id\": 0, "
    "\"Device Type\": 1}},\n"
    "    {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1300, \"args\": {\"Bytes\": 64, \"Addr\": 99, "
    "\"Device Id\": -1, \"Device Type\": 0}},\n"
    "    {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sgemm_<128>\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 1210, \"dur\": 30, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 5, "
    "\"External id\": 12}},\n"
    "    {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 7, \"args\": {\"name\": "
    "\"python\"}}\n"
    "  ],\n"
    "  \"traceName\": \"unit | test\",\n"
    "  \"baseTimeNanoseconds\": 1700000000000000000\n"
    "}\n";

static int count_rows(sqlite3 *h, const char *table, long long *out)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    *out = q_int(h, sql);
    return 0;
}

static const char *const tables[] = {
    "source", "source_tally", "source_events", "source_meta", "device",   "mem_event",
    "op",     "name",         "gpu_op",        "step",        "oom_event"};

#define NTABLES (sizeof tables / sizeof *tables)

static void snapshot(sqlite3 *h, long long *counts)
{
    for (size_t i = 0; i < NTABLES; i++)
        count_rows(h, tables[i], &counts[i]);
}

static int same_counts(const long long *a, const long long *b)
{
    int same = 1;
    for (size_t i = 0; i < NTABLES; i++)
        if (a[i] != b[i]) {
            printf("# %s: %lld rows before, %lld after\n", tables[i], a[i], b[i]);
            same = 0;
        }
    return same;
}

/* A large trace of unique names, so its gzip is over 256 KiB. */
static void big_trace(vr_buf *b, int events, const char *tag)
{
    uint32_t x = 99;
    vr_buf_puts(b, "{\"traceEvents\": [\n");
    for (int i = 0; i < events; i++) {
        x = x * 1664525u + 1013904223u;
        vr_buf_printf(
            b,
            "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s_%08x_%d\", \"pid\": 1, "
            "\"tid\": 2, \"ts\": %d.%03u, \"dur\": 1},\n",
            tag, x, i, i * 3, x % 1000);
    }
    vr_buf_puts(b, "{\"ph\": \"M\"}]}\n");
}

static void test_end_to_end(void)
{
    make_tmpdir();
    vr_error err = VR_ERROR_INIT;
    vr_db *db = vr_db_open(NULL, &err);
    OK(db != NULL, "vr_db_open(NULL) opens a temporary database (%s)", err.msg);
    if (!db) {
        remove_tmpdir();
        return;
    }
    sqlite3 *h = vr_db_handle(db);
    INT_EQ(q_int(h, "PRAGMA user_version"), VR_DB_SCHEMA_VERSION, "schema version set");

    const char *path = tmp_path("e2e.pt.trace.json");
    write_file(path, e2e_trace, sizeof e2e_trace - 1);
    vr_import_result res;
    int rc = vr_import_file(db, path, NULL, &res, &err);
    OK(rc == 0 && res.status == VR_IMPORTED, "import of the tiny trace (%s)",
       rc ? err.msg : "ok");
    STR_EQ(res.format, "kineto", "format kineto");
    INT_EQ(res.events, 11, "eleven events read");
    INT_EQ(res.truncated, 0, "not truncated");
    int64_t source_id = res.source_id;

    rc = vr_analyze(db, &err);
    OK(rc == 0, "vr_analyze (%s)", rc ? err.msg : "ok");

    /* source */
    INT_EQ(q_int(h, "SELECT base_time_ns FROM source"), 1700000000000000000LL,
           "baseTimeNanoseconds after the events is kept");
    INT_EQ(q_int(h, "SELECT rank FROM source"), 0, "rank from distributedInfo");
    INT_EQ(q_int(h, "SELECT world_size FROM source"), 2, "world_size from distributedInfo");
    INT_EQ(q_int(h, "SELECT truncated FROM source"), 0, "source not truncated");
    INT_EQ(q_int(h, "SELECT raw_bytes FROM source"), sizeof e2e_trace - 1, "raw bytes");
    char *s = q_str(h, "SELECT compression FROM source");
    STR_EQ(s, "plain", "compression plain");
    free(s);
    s = q_str(h, "SELECT value FROM source_meta WHERE key = 'traceName'");
    STR_EQ(s, "unit | test", "scalar member kept as metadata");
    free(s);
    INT_EQ(q_int(h, "SELECT start_ns FROM source"), 1000000, "source start");
    INT_EQ(q_int(h, "SELECT end_ns FROM source"), 2500000, "source end");

    /* device */
    s = q_str(h, "SELECT label || ' ' || model FROM device");
    STR_EQ(s, "cuda:0 Test GPU 80GB", "one device, cuda:0, model from deviceProperties");
    free(s);
    INT_EQ(q_int(h, "SELECT count(*) FROM device"), 1, "CPU memory events make no device");
    INT_EQ(q_int(h, "SELECT capacity_bytes FROM device"), 85899345920LL, "capacity");
    INT_EQ(q_int(h, "SELECT count FROM source_events WHERE kind = 'cpu_memory'"), 1,
           "CPU memory event counted");
    INT_EQ(q_int(h, "SELECT count(*) FROM mem_event"), 5, "five GPU memory events");
    INT_EQ(q_int(h, "SELECT count(*) FROM gpu_op"), 1, "one kernel");
    INT_EQ(q_int(h, "SELECT ts_ns FROM mem_event WHERE addr = 11"), 1250250,
           "fractional ts in ns");

    /* peak */
    INT_EQ(q_int(h, "SELECT peak_allocated_bytes FROM device_summary"), 6144,
           "device_summary.peak_allocated_bytes");
    INT_EQ(q_int(h, "SELECT peak_allocated_ts_ns FROM device_summary"), 1600000, "peak time");
    INT_EQ(q_int(h, "SELECT peak_reserved_bytes FROM device_summary"), 4194304, "peak reserved");
    INT_EQ(q_int(h, "SELECT peak_allocated_step FROM device_summary"), 3, "peak in step 3");
    INT_EQ(q_int(h, "SELECT events FROM device_summary"), 5, "device events");

    /* allocation pairing */
    INT_EQ(q_int(h, "SELECT count(*) FROM allocation"), 3, "three allocations");
    INT_EQ(q_int(h, "SELECT free_ts_ns FROM allocation WHERE addr = 10"), 1260000,
           "freed allocation: free_ts_ns set");
    INT_EQ(q_int(h, "SELECT free_ts_ns FROM allocation WHERE addr = 11"), NULL_VAL,
           "live allocation: free_ts_ns NULL");
    INT_EQ(q_int(h, "SELECT free_ts_ns FROM allocation WHERE addr = 12"), 2500000,
           "second freed allocation");
    INT_EQ(q_int(h, "SELECT bytes FROM allocation WHERE addr = 11"), 4096, "allocation bytes");

    /* innermost enclosing op */
    static const char op_of[] = "SELECT n.text FROM mem_event m JOIN op o ON o.id = m.op_id JOIN "
                                "name n ON n.id = o.name_id "
                                "WHERE m.ts_ns = %d";
    char sql[512];
    snprintf(sql, sizeof sql, op_of, 1150000);
    s = q_str(h, sql);
    STR_EQ(s, "aten::linear", "event inside linear, outside addmm: op is linear");
    free(s);
    snprintf(sql, sizeof sql, op_of, 1250250);
    s = q_str(h, sql);
    STR_EQ(s, "aten::addmm", "event inside addmm: op is addmm (innermost)");
    free(s);
    snprintf(sql, sizeof sql, op_of, 1260000);
    s = q_str(h, sql);
    STR_EQ(s, "aten::addmm", "free inside addmm: op is addmm");
    free(s);
    INT_EQ(q_int(h, "SELECT op_id FROM mem_event WHERE ts_ns = 1600000"), NULL_VAL,
           "event outside every cpu_op: op NULL (user_annotation does not count)");
    INT_EQ(q_int(h, "SELECT op_id FROM mem_event WHERE ts_ns = 2500000"), NULL_VAL,
           "event after the ops: op NULL");

    /* op_memory (per op name and device): self vs incl */
    static const char om[] =
        "SELECT %s FROM op_memory m JOIN name n ON n.id = m.name_id WHERE n.text = '%s'";
    static const struct {
        const char *op, *col;
        long long want;
    } omx[] = {
        {"aten::linear", "self_alloc_count", 1},    {"aten::linear", "self_alloc_bytes", 1000},
        {"aten::linear", "self_free_bytes", 0},     {"aten::linear", "incl_alloc_count", 2},
        {"aten::linear", "incl_alloc_bytes", 5096}, {"aten::linear", "incl_free_bytes", 1000},
        {"aten::addmm", "self_alloc_count", 1},     {"aten::addmm", "self_alloc_bytes", 4096},
        {"aten::addmm", "self_free_bytes", 1000},   {"aten::addmm", "incl_alloc_count", 1},
        {"aten::addmm", "incl_alloc_bytes", 4096},  {"aten::addmm", "incl_free_bytes", 1000},
    };
    for (size_t i = 0; i < sizeof omx / sizeof *omx; i++) {
        snprintf(sql, sizeof sql, om, omx[i].col, omx[i].op);
        INT_EQ(q_int(h, sql), omx[i].want, "op_memory %s.%s", omx[i].op, omx[i].col);
    }
    INT_EQ(q_int(h, "SELECT count(*) FROM op_memory"), 2,
           "op_memory rows only for ops with events");
    INT_EQ(q_int(h, "SELECT sum(calls) FROM op_calls c JOIN name n ON n.id = c.name_id "
                    "WHERE n.text IN ('aten::linear', 'aten::addmm')"),
           2, "op_calls: one call each of linear and addmm");

    /* steps */
    INT_EQ(q_int(h, "SELECT count(*) FROM step"), 1, "one step");
    INT_EQ(q_int(h, "SELECT number FROM step"), 3, "step number 3 from ProfilerStep#3");
    INT_EQ(q_int(h, "SELECT count(*) FROM step_summary"), 1, "one step_summary row");
    INT_EQ(q_int(h, "SELECT peak_allocated_bytes FROM step_summary WHERE step = 3"), 6144,
           "step_summary peak");
    INT_EQ(q_int(h, "SELECT alloc_count FROM step_summary WHERE step = 3"), 3,
           "step 3 holds the three allocations inside it");
    INT_EQ(q_int(h, "SELECT alloc_bytes FROM step_summary WHERE step = 3"), 7144,
           "step 3 alloc bytes");
    INT_EQ(q_int(h, "SELECT start_allocated_bytes FROM step_summary WHERE step = 3"), 0,
           "step 3 starts at 0 allocated");
    INT_EQ(q_int(h, "SELECT end_allocated_bytes FROM step_summary WHERE step = 3"), 6144,
           "step 3 ends before the free at 2500 us (outside the step)");

    /* analysing twice gives the same database */
    OK(vr_analyze(db, &err) == 0 && q_int(h, "SELECT count(*) FROM allocation") == 3 &&
           q_int(h, "SELECT count(*) FROM op_memory") == 2 &&
           q_int(h, "SELECT peak_allocated_bytes FROM device_summary") == 6144,
       "vr_analyze again: same derived tables");

    /* report */
    vr_buf md = VR_BUF_INIT, html = VR_BUF_INIT, js = VR_BUF_INIT;
    vr_report_opts ro = {.format = VR_FORMAT_MARKDOWN};
    OK(vr_report_render(db, &ro, &md, &err) == 0 && md.len > 0, "markdown report renders");
    OK(md.data && strstr(md.data, "6.00 KiB"), "markdown report shows the 6.00 KiB peak");
    OK(md.data && strstr(md.data, "Test GPU 80GB"), "markdown report names the device");
    ro.format = VR_FORMAT_HTML;
    OK(vr_report_render(db, &ro, &html, &err) == 0 && html.data && strstr(html.data, "<svg"),
       "HTML report renders with a chart");
    OK(html.data && !strstr(html.data, "vrchart"), "HTML chart placeholders all replaced");
    ro.format = VR_FORMAT_JSON;
    OK(vr_report_render(db, &ro, &js, &err) == 0 && js.data && js.data[0] == '{',
       "JSON results render");
    vr_buf_free(&md);
    vr_buf_free(&html);
    vr_buf_free(&js);

    /* the same file again */
    long long before[NTABLES], after[NTABLES];
    snapshot(h, before);
    rc = vr_import_file(db, path, NULL, &res, &err);
    OK(rc == 0 && res.status == VR_ALREADY_IMPORTED && res.source_id == source_id,
       "importing the same file again: VR_ALREADY_IMPORTED with the earlier source id");
    /* the same content under another name and compression is new bytes */
    vr_buf gz = VR_BUF_INIT;
    gzip_bytes(e2e_trace, sizeof e2e_trace - 1, &gz, 6);
    write_file(tmp_path("copy.json"), e2e_trace, sizeof e2e_trace - 1);
    rc = vr_import_file(db, tmp_path("copy.json"), NULL, &res, &err);
    OK(rc == 0 && res.status == VR_ALREADY_IMPORTED,
       "same bytes under another name: already imported");
    snapshot(h, after);
    OK(same_counts(before, after), "repeat imports change no rows");

    /* A corrupt gzip fails and leaves every table as it was. */
    vr_buf big = VR_BUF_INIT, bgz = VR_BUF_INIT;
    big_trace(&big, 30000, "corrupt");
    gzip_bytes(big.data, big.len, &bgz, 1);
    OK(bgz.len > 300 * 1024, "big trace gzip is %zu bytes (over one 256 KiB raw chunk)", bgz.len);
    for (size_t i = bgz.len * 3 / 4; i < bgz.len * 3 / 4 + 256; i++)
        bgz.data[i] ^= 0xa5;
    write_file(tmp_path("corrupt.json.gz"), bgz.data, bgz.len);
    rc = vr_import_file(db, tmp_path("corrupt.json.gz"), NULL, &res, &err);
    OK(rc == -1 && strstr(err.msg, "corrupt gzip"), "corrupt gzip import fails (%s)", err.msg);
    snapshot(h, after);
    OK(same_counts(before, after), "failed import leaves row counts unchanged");

    /* A syntax error after many events also rolls everything back. */
    vr_buf_clear(&big);
    big_trace(&big, 3000, "syntax");
    big.len -= 4; /* drop "]}\n" and the last '}' */
    vr_buf_puts(&big, "]]\n");
    write_file(tmp_path("syntax.json"), big.data, big.len);
    rc = vr_import_file(db, tmp_path("syntax.json"), NULL, &res, &err);
    OK(rc == -1 && strstr(err.msg, "byte") && strstr(err.msg, "expected"),
       "syntax error import fails with an offset (%s)", err.msg);
    snapshot(h, after);
    OK(same_counts(before, after), "syntax error leaves row counts unchanged");

    /* The names of the failed import are not remembered: importing them for
     * real later gives ops whose names exist. */
    vr_buf_clear(&big);
    big_trace(&big, 50, "syntax");
    write_file(tmp_path("good.json"), big.data, big.len);
    rc = vr_import_file(db, tmp_path("good.json"), NULL, &res, &err);
    OK(rc == 0 && res.status == VR_IMPORTED, "a good import after failed ones (%s)",
       rc ? err.msg : "ok");
    INT_EQ(q_int(h, "SELECT count(*) FROM op o LEFT JOIN name n ON n.id = o.name_id "
                    "WHERE n.id IS NULL"),
           0, "every op's name_id exists after rolled-back imports");
    INT_EQ(q_int(h, "SELECT count(*) FROM op o JOIN name n ON n.id = o.name_id "
                    "WHERE n.text LIKE 'syntax_%'"),
           50, "the new ops carry their own names");

    /* A truncated gzip imports what was complete. */
    vr_buf_clear(&big);
    vr_buf_clear(&bgz);
    big_trace(&big, 20000, "cut");
    gzip_bytes(big.data, big.len, &bgz, 6);
    write_file(tmp_path("cut.json.gz"), bgz.data, bgz.len / 2);
    rc = vr_import_file(db, tmp_path("cut.json.gz"), NULL, &res, &err);
    OK(rc == 0 && res.status == VR_IMPORTED && res.truncated && res.events > 0 &&
           res.events < 20001,
       "truncated gzip: imported %llu complete events, flagged truncated (%s)",
       (unsigned long long)res.events, rc ? err.msg : "ok");
    snprintf(sql, sizeof sql, "SELECT truncated FROM source WHERE id = %lld",
             (long long)res.source_id);
    INT_EQ(q_int(h, sql), 1, "source.truncated set");
    snprintf(sql, sizeof sql, "SELECT count(*) FROM op WHERE source_id = %lld",
             (long long)res.source_id);
    INT_EQ(q_int(h, sql), res.events, "every complete event before the cut stored");

    /* Not a trace at all. */
    write_file(tmp_path("notes.txt"), "hello world\n", 12);
    rc = vr_import_file(db, tmp_path("notes.txt"), NULL, &res, &err);
    OK(rc == -1 && strstr(err.msg, "not a recognised input"), "a text file is refused (%s)",
       err.msg);
    write_file(tmp_path("empty.json"), "", 0);
    rc = vr_import_file(db, tmp_path("empty.json"), NULL, &res, &err);
    OK(rc == -1 && strstr(err.msg, "empty input"), "an empty file is refused (%s)", err.msg);

    /* A 2021-style trace (no Addr, no totals) gets totals rebuilt. */
    static const char old[] =
        "{\"traceEvents\": [\n"
        "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": "
        "10, "
        "\"args\": {\"Device Type\": 1, \"Device Id\": 3, \"Bytes\": 512}},\n"
        "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": "
        "20, "
        "\"args\": {\"Device Type\": 1, \"Device Id\": 3, \"Bytes\": 1024}},\n"
        "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": "
        "30, "
        "\"args\": {\"Device Type\": 1, \"Device Id\": 3, \"Bytes\": -512}}\n"
        "]}";
    write_file(tmp_path("old.json"), old, sizeof old - 1);
    rc = vr_import_file(db, tmp_path("old.json"), NULL, &res, &err);
    OK(rc == 0 && vr_analyze(db, &err) == 0, "2021-style trace imported and analysed (%s)",
       err.msg);
    INT_EQ(q_int(h, "SELECT totals_known FROM device WHERE idx = 3"), 0,
           "device without totals marked");
    INT_EQ(q_int(h, "SELECT ds.peak_allocated_bytes FROM device_summary ds JOIN device d "
                    "ON d.id = ds.device_id WHERE d.idx = 3"),
           1536, "rebuilt peak from running sums");
    INT_EQ(q_int(h, "SELECT peak_allocated_bytes FROM device_summary ds JOIN device d "
                    "ON d.id = ds.device_id WHERE d.idx = 0"),
           6144, "the first device's peak is unchanged");

    vr_buf_free(&big);
    vr_buf_free(&bgz);
    vr_buf_free(&gz);
    vr_db_close(db);
    remove_tmpdir();
}

/* A report is never drawn from derived tables that do not match the
 * sources: before the analysis commits, rendering refuses. */
static void test_report_needs_analysis(void)
{
    make_tmpdir();
    const char *path = tmp_path("needs-analysis.json");
    write_file(path, e2e_trace, sizeof e2e_trace - 1);
    vr_error err = VR_ERROR_INIT;
    vr_db *db = vr_db_open(NULL, &err);
    vr_import_result res;
    OK(db && vr_import_file(db, path, NULL, &res, &err) == 0, "import without analysis");
    vr_report_opts ro = {.format = VR_FORMAT_JSON};
    vr_buf out = VR_BUF_INIT;
    int rc = vr_report_render(db, &ro, &out, &err);
    OK(rc < 0 && strstr(err.msg, "analysis is not complete"),
       "rendering before the analysis is refused (%s)", err.msg);
    INT_EQ(out.len, 0, "and writes nothing");
    OK(vr_analyze(db, &err) == 0, "vr_analyze");
    rc = vr_report_render(db, &ro, &out, &err);
    OK(rc == 0 && strstr(out.data, "\"peak_allocated_bytes\""), "after it the report renders");
    vr_buf_free(&out);
    OK(vr_import_file(db, path, NULL, &res, &err) == 0 && res.status == VR_ALREADY_IMPORTED,
       "a repeated import changes nothing");
    vr_buf out2 = VR_BUF_INIT;
    OK(vr_report_render(db, &ro, &out2, &err) == 0, "so the analysis stays complete");
    vr_buf_free(&out2);
    vr_db_close(db);
    remove_tmpdir();
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_end_to_end);
    RUN(test_report_needs_analysis);
    return harness_summary();
}
