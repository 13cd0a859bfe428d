/*-*** test_markdown.c: Markdown escaping and the results document's text rules (render/) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/report.h"
#include "render/results/doc.h"
#include "util/buf.h"
#include "util/utf8.h"

#include "harness.h"

/*-*** Markdown escaping ***/

/* The text rules of the results document (cut, UTF-8), which the escapers
 * rely on; included here so this section stays self-contained. */

static char *md_escape(const char *s, size_t n)
{
    vr_buf out = VR_BUF_INIT;
    vr_report_escape_markdown(&out, vr_buf_append_cb, s, n);
    vr_buf_putc(&out, '\0');
    return vr_buf_detach(&out);
}

/* UTF-8 of code point cp into out (NUL-terminated); its length. */
static size_t utf8_of(uint32_t cp, char *out)
{
    size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    static const unsigned char lead[] = {0, 0, 0xc0, 0xe0, 0xf0};
    for (size_t i = n - 1; i > 0; i--, cp >>= 6)
        out[i] = (char)(0x80 | (cp & 0x3f));
    out[0] = (char)(n == 1 ? cp : lead[n] | cp);
    out[n] = '\0';
    return n;
}

/* Every control and bidi character shows as the text \uXXXX (its
 * backslash escaped for Markdown), between ordinary text; none of its
 * bytes is left. Tab, LF and CR stay whitespace (spaces). */
static void test_markdown_escape_controls(void)
{
    static const struct {
        uint32_t lo, hi;
    } controls[] = {{0x00, 0x08},     {0x0b, 0x0c},     {0x0e, 0x1f},     {0x7f, 0x9f},
                    {0x061c, 0x061c}, {0x200e, 0x200f}, {0x202a, 0x202e}, {0x2066, 0x2069}};
    int bad = 0;
    for (size_t r = 0; r < sizeof controls / sizeof *controls; r++)
        for (uint32_t cp = controls[r].lo; cp <= controls[r].hi; cp++) {
            char in[16] = "a", ch[8], want[32];
            size_t n = utf8_of(cp, ch);
            memcpy(in + 1, ch, n);
            in[n + 1] = 'b';
            snprintf(want, sizeof want, "a\\\\u%04xb", (unsigned)cp);
            char *got = md_escape(in, n + 2);
            if (strcmp(got, want) != 0 || (n > 1 && strstr(got, ch))) {
                if (bad++ < 5)
                    printf("# U+%04X: got \"%s\", want \"%s\"\n", (unsigned)cp, got, want);
            }
            free(got);
        }
    INT_EQ(bad, 0, "C0, DEL, C1 and bidi controls show as \\\\uXXXX");
    char *got = md_escape("\x1b[2Jx\xc2\x9b\x08"
                          "9\xe2\x80\xae",
                          12);
    STR_EQ(got, "\\\\u001b\\[2Jx\\\\u009b\\\\u00089\\\\u202e", "ESC [2J, CSI, BS, RLO");
    free(got);
    got = md_escape("a\0b", 3);
    STR_EQ(got, "a\\\\u0000b", "NUL within the length shows");
    free(got);
    /* Neighbours of the ranges are ordinary text: NBSP, ZWJ, U+202F, U+2065, U+061B. */
    static const char neighbours[] = "\xc2\xa0 \xe2\x80\x8d \xe2\x80\xaf \xe2\x81\xa5 \xd8\x9b";
    got = md_escape(neighbours, sizeof neighbours - 1);
    STR_EQ(got, neighbours, "characters next to the control ranges unchanged");
    free(got);
}

/* Bytes that are not well-formed UTF-8 show as \xFF, one escape a byte;
 * the characters around them are kept. */
static void test_markdown_escape_invalid_utf8(void)
{
    static const struct {
        const char *in, *want, *what;
    } cases[] = {
        {"bad\xffname", "bad\\\\xFFname", "a stray 0xFF"},
        {"x\xe2\x82", "x\\\\xE2\\\\x82", "a sequence cut at the end"},
        {"\xc0\xaf/", "\\\\xC0\\\\xAF/", "an overlong '/'"},
        {"\xed\xa0\x80", "\\\\xED\\\\xA0\\\\x80", "a surrogate"},
        {"\xf4\x90\x80\x80", "\\\\xF4\\\\x90\\\\x80\\\\x80", "beyond U+10FFFF"},
        {"\x80\xc3\xa9", "\\\\x80\xc3\xa9", "a lone continuation byte, then \xc3\xa9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = md_escape(cases[i].in, strlen(cases[i].in));
        STR_EQ(got, cases[i].want, "invalid UTF-8: %s", cases[i].what);
        free(got);
    }
}

static char *text_of(const char *s, size_t n)
{
    vr_buf out = VR_BUF_INIT;
    vr_results_text(&out, s, n);
    vr_buf_putc(&out, '\0');
    return vr_buf_detach(&out);
}

static int valid_utf8(const char *s)
{
    uint32_t cp;
    for (size_t left = strlen(s), n; left; s += n, left -= n)
        if (!(n = vr_utf8_decode(s, left, &cp)))
            return 0;
    return 1;
}

/* Text from the database: up to 256 bytes whole; longer, its first 120
 * and last 40 characters around the cut's size; never split in a
 * character; repaired to valid UTF-8. */
static void test_results_text_cut(void)
{
    char in[601], want[400];
    memset(in, 'a', 256);
    char *got = text_of(in, 256);
    INT_EQ((long long)strlen(got), 256, "256 bytes are kept whole");
    free(got);
    memset(in, 'h', 120);
    memset(in + 120, 'm', 97);
    memset(in + 217, 't', 40);
    snprintf(want, sizeof want, "%.120s \xe2\x80\xa6 (97 bytes cut) \xe2\x80\xa6 %.40s", in,
             in + 217);
    got = text_of(in, 257);
    STR_EQ(got, want, "257 bytes: the first 120 and last 40 characters, the cut marked");
    free(got);
    for (int i = 0; i < 300; i++)
        memcpy(in + 2 * i, "\xc3\xa9", 2);
    in[600] = '\0';
    got = text_of(in, 600);
    OK(valid_utf8(got) && strstr(got, "(280 bytes cut)") && strncmp(got, in, 240) == 0 &&
           strcmp(got + strlen(got) - 80, in + 520) == 0,
       "two-byte characters are cut whole (%s)", got);
    free(got);
    for (int i = 0; i < 70; i++)
        memcpy(in + 4 * i, "\xf0\x9f\x98\x80", 4);
    got = text_of(in, 280);
    OK(strlen(got) == 280 && memcmp(got, in, 280) == 0,
       "text the kept characters cover is not cut");
    free(got);
    got = text_of("bad\xffname", 8);
    STR_EQ(got, "bad\\xFFname", "invalid UTF-8 as \\xFF");
    free(got);
    size_t big = (size_t)20 << 20;
    char *huge = malloc(big);
    memset(huge, 'x', big);
    memcpy(huge, "HEAD", 4);
    memcpy(huge + big - 5, "\xffTAIL", 5);
    got = text_of(huge, big);
    OK(strlen(got) < 256 && strncmp(got, "HEADxxx", 7) == 0 &&
           strstr(got, "(20,971,360 bytes cut)") && strstr(got, "x\\xFFTAIL") && valid_utf8(got),
       "20 MiB: head and tail only (%s)", got);
    free(got);
    free(huge);
}

static void test_markdown_escape(void)
{
    static const char special[] = "\\`*_{}[]<>&#|~!";
    for (const char *c = special; *c; c++) {
        char in[4] = {'a', *c, 'b', 0}, want[8] = {'a', '\\', *c, 'b', 0};
        /* '#' before a letter: no word joiner (only "#12" links; a
         * "# comment" in a command stays as it is copied) */
        char *got = md_escape(in, 3);
        STR_EQ(got, want, "'%c' gets a backslash", *c);
        free(got);
    }
    /* GitHub and GitLab link these in the rendered text: a WORD JOINER
     * (U+2060) breaks each pattern, the text reads the same. */
    static const struct {
        const char *in, *want, *what;
    } inert[] = {
        {"@octocat", "@\xe2\x81\xa0octocat", "a mention"},
        {"#12",
         "\\#\xe2\x81\xa0"
         "12",
         "an issue link"},
        {"a@b.example",
         "a@\xe2\x81\xa0"
         "b.example",
         "an e-mail address"},
        {"http://x.example/y", "http:\xe2\x81\xa0//x.example/y", "a URL"},
        {"see WWW.x.example", "see WWW\xe2\x81\xa0.x.example", "a www. link"},
        {"www", "www", "www alone"},
        {"aten::mm", "aten::mm", "an operator's '::'"},
    };
    for (size_t i = 0; i < sizeof inert / sizeof *inert; i++) {
        char *got = md_escape(inert[i].in, strlen(inert[i].in));
        STR_EQ(got, inert[i].want, "%s stays inert", inert[i].what);
        free(got);
    }
    char *got = md_escape("line\none\r\ttwo", 13);
    STR_EQ(got, "line one  two", "newline, CR and tab become spaces");
    free(got);
    static const char plain[] = "aten::addmm (cuda:0) 1.50 KiB, 37.2% - ok; \"quoted\" 'x' =/?";
    got = md_escape(plain, sizeof plain - 1);
    STR_EQ(got, plain, "plain text unchanged");
    free(got);
    got = md_escape("<script>alert(1)</script>", 25);
    STR_EQ(got, "\\<script\\>alert(1)\\</script\\>", "HTML tags escaped");
    free(got);
    got = md_escape("**[x](javascript:y)**", 21);
    STR_EQ(got, "\\*\\*\\[x\\](javascript:y)\\*\\*", "link and emphasis escaped");
    free(got);
    got = md_escape("", 0);
    STR_EQ(got, "", "empty string");
    free(got);
    got = md_escape("ab|cd", 2);
    STR_EQ(got, "ab", "only len bytes are read");
    free(got);
    got = md_escape("\xC3\xA9\xE2\x82\xAC", 5);
    STR_EQ(got, "\xC3\xA9\xE2\x82\xAC", "UTF-8 unchanged");
    free(got);
    test_markdown_escape_controls();
    test_markdown_escape_invalid_utf8();
    test_results_text_cut();
}

/* What a user copies out of a sentence is a code span: options and the
 * settings and calls render/view/commands.c names; nothing else is. */
static void test_markdown_commands(void)
{
    static const struct {
        const char *in, *want, *what;
    } cases[] = {
        {"give it with --capacity (80GiB)", "give it with `--capacity` (80GiB)", "an option"},
        {"run --format=csv, then", "run `--format=csv`, then", "an option with its value"},
        {"a GPU from vramreport estimate --list-gpus)", "a GPU from `vramreport estimate --list-gpus`)",
         "a whole command"},
        {"with profile_memory=True.", "with `profile_memory=True`.", "a setting"},
        {"torch.cuda.memory_stats() or", "`torch.cuda.memory_stats()` or", "the longest call"},
        {"NCCL_DEBUG=INFO's lines", "`NCCL_DEBUG=INFO`'s lines", "a setting before 's"},
        {"x.memory_stats()", "x.memory\\_stats()", "not a call the table names"},
        {"a--capacity", "a--capacity", "not inside a word"},
        {"|---|", "\\|---\\|", "a table's dashes"},
        {"--Capacity --a_b", "--Capacity --a\\_b", "not an option's shape"},
        {"-- x", "-- x", "a dash"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = md_escape(cases[i].in, strlen(cases[i].in));
        STR_EQ(got, cases[i].want, "%s", cases[i].what);
        free(got);
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_markdown_escape);
    RUN(test_markdown_commands);
    return harness_summary();
}
