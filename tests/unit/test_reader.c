/*-*** test_reader.c: the reader registry and the line reader (import/reader) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>
#include <string.h>

#include "import/readers/memsummary.h"
#include "import/reader.h"
#include "input/input.h"
#include "util/buf.h"

#include "fixtures.h"
#include "harness.h"

/* The registry: named sniff levels, formats recognised but not
 * read, what unknown content looks like, the "expected" message. */
static void test_reader_registry(void)
{
    static const struct {
        const char *head;
        size_t len;
        const char *reader; /* NULL: none */
        vr_sniff_level level;
    } cases[] = {
        {"{\"schemaVersion\": 1, \"traceEvents\": []}", 0, "kineto", VR_SNIFF_SIGNATURE},
        {"{\"lr\": 0.1}", 0, "kineto", VR_SNIFF_SHAPE},
        {"[{\"ph\": \"X\"}]", 0, "kineto", VR_SNIFF_SHAPE},
        {"[[0, 1, 512, 4]]", 0, "memory_timeline", VR_SNIFF_SHAPE},
        {"{\"segments\": [], \"device_traces\": []}", 0, "snapshot_json", VR_SNIFF_SIGNATURE},
        {"[{\"device\": 0, \"total_size\": 2, \"blocks\": []}]", 0, "snapshot_json",
         VR_SNIFF_SIGNATURE},
        {"{\"allocator_settings\": {}, \"device_traces\": [[{\"action\": \"alloc\"", 0,
         "snapshot_json", VR_SNIFF_SIGNATURE},
        {"\x80\x04\x95\x01\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x08segments", 24, "snapshot",
         VR_SNIFF_SIGNATURE},
        {"{\"allocated_bytes.all.current\": 1}", 0, "memory_stats", VR_SNIFF_SIGNATURE},
        {"<?xml version=\"1.0\" ?>\n<nvidia_smi_log>", 0, "nvsmi_xml", VR_SNIFF_SIGNATURE},
        {"timestamp, name, memory.used [MiB]\n2026/07/14 08:12:53.353, H100, 19818 MiB\n", 0,
         "nvsmi_csv", VR_SNIFF_SIGNATURE},
        {"2026/07/14 08:12:53.353, H100, 19818 MiB\n", 0, "nvsmi_csv", VR_SNIFF_SHAPE},
        {"Tue Jul 14 08:12:53 2026\n+---+\n| NVIDIA-SMI 590.48.01   Driver Version: 590.48.01 |\n"
         "| Fan  Temp   Perf   Pwr:Usage/Cap |   Memory-Usage |\n",
         0, "nvsmi_table", VR_SNIFF_SIGNATURE},
        {"####\n# $ nvidia-smi\n####\n| NVIDIA-SMI 1 | Memory-Usage |\n####\n# $ nvidia-smi -q\n"
         "####\n==============NVSMI LOG==============\n",
         0, "nvsmi_capture", VR_SNIFF_SIGNATURE},
        {"Traceback ...\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate", 0,
         "job_log", VR_SNIFF_SIGNATURE},
        /* any text may be a job log: a fallback, refused if no error is in it */
        {"epoch 1 loss 2.3\n", 0, "job_log", VR_SNIFF_FALLBACK},
        {"SQLite format 3", 16, NULL, VR_SNIFF_NO},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].head);
        vr_sniff_level level;
        const vr_reader *r = vr_reader_pick(cases[i].head, len, &level);
        STR_EQ(r ? r->name : NULL, cases[i].reader, "case %zu: reader", i);
        INT_EQ(level, cases[i].level, "case %zu: level", i);
    }
    STR_EQ(vr_reader_looks_like("epoch 1 loss 2.3\n", 17),
           "text, but not a format vramreport reads", "plain text looks like text");
    OK(strstr(vr_reader_looks_like("SQLite format 3", 16), "SQLite database") != NULL,
       "an SQLite file is named");
    STR_EQ(vr_reader_looks_like("\x01\x02\x03\x00\xff", 5), "binary data", "binary data");
    vr_buf expected = VR_BUF_INIT;
    vr_reader_expected(&expected);
    STR_EQ(
        expected.data,
        "a PyTorch profiler (Kineto) trace, a torch.profiler export_memory_timeline raw export, "
        "a CUDA caching-allocator snapshot (torch.cuda.memory._dump_snapshot pickle), "
        "a CUDA caching-allocator snapshot (JSON), torch.cuda.memory_stats() (JSON), "
        "a job log with a CUDA out-of-memory error, "
        "an nvidia-smi capture (several commands' output, one file), an nvidia-smi table log, "
        "an nvidia-smi --query-gpu / --query-compute-apps CSV log, "
        "an nvidia-smi -q -x log (XML), an nvidia-smi -q log, a gpustat log, "
        "torch.cuda.memory_summary() text",
        "the expected list names the formats read, from the registry");
    vr_buf_free(&expected);
}

typedef struct {
    vr_buf all; /* "len:cut:text|" per line */
    uint64_t last;
} lines_seen;

static int on_test_line(void *ud, const char *line, size_t len, uint64_t number, int cut,
                        vr_error *err)
{
    lines_seen *ls = ud;
    (void)err;
    ls->last = number;
    if (len > 12)
        vr_buf_printf(&ls->all, "%zu:%d:%.3s..%.3s|", len, cut, line, line + len - 3);
    else
        vr_buf_printf(&ls->all, "%zu:%d:%.*s|", len, cut, (int)len, line);
    return 0;
}

static void scan_lines_of(const char *name, const char *data, size_t len, size_t max,
                          lines_seen *ls)
{
    write_file(tmp_path(name), data, len);
    vr_error err = VR_ERROR_INIT;
    vr_input *in = vr_input_open(tmp_path(name), &err);
    vr_import_ctx ctx = {.in = in};
    memset(ls, 0, sizeof *ls);
    int rc = in ? vr_reader_scan_lines(&ctx, max, on_test_line, ls, &err) : -1;
    OK(rc == 0, "%s: scanned (%s)", name, rc ? err.msg : "ok");
    vr_input_close(in);
}

/* Lines for the text readers to come: CRLF, no final newline, empty
 * lines, a line far past the bound, lines across 1 MiB reads. */
/* memory_summary()'s cells, exactly (tests/memstats.sh reads whole boxes). */
static void test_memsummary_cells(void)
{
    static const struct {
        const char *cell;
        int is_size, ok;
        int64_t value;
    } cases[] = {
        {"   1062 MB ", 1, 1, INT64_C(1062) << 20},
        {"  10344 MiB ", 1, 1, INT64_C(10344) << 20},
        {"      0 B   ", 1, 1, 0},
        {"   4096 B  ", 1, 1, 4096},
        {" 1.23 GiB", 1, 1, INT64_C(1320702444)}, /* 1320702443.52, rounded */
        {" 1.5 GiB", 1, 1, INT64_C(1610612736)},
        {" 767743 GB", 1, 1, INT64_C(767743) << 30},
        {" 8191 PiB", 1, 1, INT64_C(8191) << 50},
        {" 8192 PiB", 1, 0, 0}, /* 2^63: beyond int64 */
        {" -4 KiB", 1, 1, -4096},
        {" 12 XB", 1, 0, 0},
        {" 12", 1, 0, 0}, /* a size needs its unit */
        {" 1x2 MB", 1, 0, 0},
        {" 1. MB", 1, 0, 0},
        {" 1234567890123456789 B", 1, 0, 0}, /* over 18 digits */
        {"   1234 K  ", 0, 1, 1234000},
        {"      7    ", 0, 1, 7},
        {"      2 M  ", 0, 1, 2000000},
        {"      5 KB ", 0, 0, 0}, /* a count has no byte unit */
        {"", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int64_t v = 0;
        int ok = vr_memsummary_cell(cases[i].cell, strlen(cases[i].cell), cases[i].is_size, &v);
        INT_EQ(ok, cases[i].ok, "cell '%s' read or refused", cases[i].cell);
        if (ok && cases[i].ok)
            INT_EQ(v, cases[i].value, "cell '%s' value", cases[i].cell);
    }
}

static void test_reader_lines(void)
{
    make_tmpdir();
    lines_seen ls;
    scan_lines_of("crlf", "a\r\nbb\n\nccc", 10, 100, &ls);
    STR_EQ(ls.all.data, "1:0:a|2:0:bb|0:0:|3:0:ccc|", "CRLF and LF ends, empty line, last line");
    INT_EQ(ls.last, 4, "four lines numbered");
    vr_buf_free(&ls.all);

    vr_buf big = VR_BUF_INIT;
    vr_buf_puts(&big, "head\n");
    for (int i = 0; i < 3000000; i++)
        vr_buf_putc(&big, 'x');
    vr_buf_puts(&big, "\r\ntail\n");
    scan_lines_of("long", big.data, big.len, 1000, &ls);
    STR_EQ(ls.all.data, "4:0:head|1000:1:xxx..xxx|4:0:tail|",
           "a 3 MB line is passed cut to the bound, flagged, and the next line is whole");
    vr_buf_free(&ls.all);
    vr_buf_free(&big);

    for (int i = 0; i < 200000; i++)
        vr_buf_printf(&big, "line %06d\n", i);
    scan_lines_of("many", big.data, big.len, 100, &ls);
    OK(ls.last == 200000 && ls.all.len == 200000 * strlen("11:0:line 000000|"),
       "200,000 lines across 1 MiB reads, none split (%llu)", (unsigned long long)ls.last);
    vr_buf_free(&ls.all);
    vr_buf_free(&big);
    remove_tmpdir();
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_reader_registry);
    RUN(test_reader_lines);
    RUN(test_memsummary_cells);
    return harness_summary();
}
