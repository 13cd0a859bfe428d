/* Unit tests of how the report's and the importer's parts are put
 * together: the results document's tables of parts (src/render/results/
 * results.c: each part after the parts it needs) and the line splitter
 * the line readers' driver runs (src/parse/lines.c). */
#include <stdio.h>
#include <string.h>

#include "parse/lines.h"
#include "render/results/results.h"
#include "util/buf.h"
#include "harness.h"

static void test_results_parts_in_order(void)
{
    vr_error err = VR_ERROR_INIT;
    int rc = vr_results_parts_check(&err);
    INT_EQ(rc, 0, "each results part runs after the parts it needs%s%s", rc ? ": " : "",
           rc ? err.msg : "");
}

/* The lines of `data` fed in pieces of `piece` bytes (0: whole) through
 * a buffer of `size`, as "number@offset:len:cut:text|" each. */
static void lines_of(const char *data, size_t len, size_t piece, size_t size, vr_buf *out)
{
    char buf[64];
    vr_lines ls;
    vr_line line;
    vr_lines_init(&ls, buf, size);
    vr_buf_clear(out);
    for (size_t at = 0; at < len;) {
        size_t n = piece && len - at > piece ? piece : len - at;
        const char *p = data + at;
        at += n;
        while (vr_lines_next(&ls, &p, &n, &line))
            vr_buf_printf(out, "%llu@%llu:%zu:%d:%s|", (unsigned long long)line.number,
                          (unsigned long long)line.offset, line.len, line.cut, line.text);
    }
    if (vr_lines_end(&ls, &line))
        vr_buf_printf(out, "%llu@%llu:%zu:%d:%s|", (unsigned long long)line.number,
                      (unsigned long long)line.offset, line.len, line.cut, line.text);
}

static void test_lines_ends(void)
{
    vr_buf got = VR_BUF_INIT;
    static const char text[] = "a\r\nbb\n\nccc";
    lines_of(text, strlen(text), 0, 64, &got);
    STR_EQ(got.data, "1@0:1:0:a|2@3:2:0:bb|3@6:0:0:|4@7:3:0:ccc|",
           "CRLF and LF ends, an empty line, a last line without one; numbers and offsets");
    lines_of("\n", 1, 0, 64, &got);
    STR_EQ(got.data, "1@0:0:0:|", "a lone LF is one empty line, and no line after it");
    lines_of("x\n\r", 3, 0, 64, &got);
    STR_EQ(got.data, "1@0:1:0:x|2@2:0:0:|", "a last lone CR is an empty line");
    lines_of("", 0, 0, 64, &got);
    STR_EQ(got.data ? got.data : "", "", "no input, no line");
    vr_buf_free(&got);
}

static void test_lines_bound(void)
{
    vr_buf got = VR_BUF_INIT;
    static const char text[] = "abc\r\nabcd\r\nabcdefgh\nxy";
    lines_of(text, strlen(text), 0, 5, &got);
    STR_EQ(got.data, "1@0:3:0:abc|2@5:4:1:abcd|3@11:4:1:abcd|4@20:2:0:xy|",
           "a line past the bound comes cut (a CR past it too), the next one whole");
    vr_buf_free(&got);
}

static void test_lines_pieces(void)
{
    static const char text[] = "head\r\n\r\nabcdefghij\nk\r\nlast";
    vr_buf whole = VR_BUF_INIT, got = VR_BUF_INIT;
    lines_of(text, strlen(text), 0, 8, &whole);
    int same = 1;
    for (size_t piece = 1; piece <= strlen(text); piece++) {
        lines_of(text, strlen(text), piece, 8, &got);
        if (strcmp(got.data, whole.data) != 0) {
            same = 0;
            printf("# pieces of %zu: %s\n", piece, got.data);
        }
    }
    OK(same, "the same lines, numbers, offsets and cuts in pieces of any size (%s)", whole.data);
    vr_buf_free(&whole);
    vr_buf_free(&got);
}

int main(void)
{
    RUN(test_results_parts_in_order);
    RUN(test_lines_ends);
    RUN(test_lines_bound);
    RUN(test_lines_pieces);
    return harness_summary();
}
