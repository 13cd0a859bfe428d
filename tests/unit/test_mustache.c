/*-*** test_mustache.c: Mustache spec suite and robustness tests ***/
/*
 * Usage: test_mustache [SPEC_DIR]
 * SPEC_DIR defaults to $VR_MUSTACHE_SPEC_DIR, then tests/spec/mustache.
 * Prints TAP-style "ok N - file: name" lines and a final
 * "# N passed, N failed"; exits 0 only when everything passed.
 */
#include "render/view/mustache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const spec_files[] = {
    "comments", "delimiters", "interpolation", "inverted", "partials", "sections",
};

static int n_pass, n_fail;

/*-- reporting ------------------------------------------------------------*/

static void print_escaped(const char *label, const char *s, size_t n)
{
    size_t i;

    printf("#   %-9s \"", label);
    for (i = 0; s && i < n && i < 400; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n')
            fputs("\\n", stdout);
        else if (c == '\r')
            fputs("\\r", stdout);
        else if (c == '\t')
            fputs("\\t", stdout);
        else if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            printf("\\x%02x", c);
        else
            putchar(c);
    }
    printf("\"%s\n", s && n > 400 ? "..." : "");
}

static void report(int ok, const char *file, const char *name)
{
    if (ok)
        n_pass++;
    else
        n_fail++;
    printf("%sok %d - %s: %s\n", ok ? "" : "not ", n_pass + n_fail, file, name);
}

/* Byte-for-byte comparison with a diff hint on mismatch. */
static int check_output(const char *file, const char *name, const char *want, const char *got,
                        size_t got_len, const char *err)
{
    size_t wn = strlen(want), i = 0;
    int ok = got && got_len == wn && memcmp(got, want, wn) == 0;

    report(ok, file, name);
    if (ok)
        return 1;
    if (!got) {
        printf("#   render failed: %s\n", err);
        print_escaped("expected:", want, wn);
        return 0;
    }
    while (i < wn && i < got_len && want[i] == got[i])
        i++;
    print_escaped("expected:", want, wn);
    print_escaped("got:", got, got_len);
    printf("#   first difference at byte %zu\n", i);
    return 0;
}

/*-- spec suite -----------------------------------------------------------*/

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL, *p;
    size_t len = 0, cap = 0, n;

    if (!f)
        return NULL;
    do {
        if (cap - len < 4096) {
            cap = cap ? cap * 2 : 65536;
            p = realloc(s, cap + 1);
            if (!p) {
                free(s);
                fclose(f);
                return NULL;
            }
            s = p;
        }
        n = fread(s + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    fclose(f);
    s[len] = '\0';
    return s;
}

/* userdata is the test's "partials" object (or NULL). */
static const char *spec_partial(void *userdata, const char *name, size_t *len)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(userdata, name);

    if (!cJSON_IsString(p) || !p->valuestring)
        return NULL;
    *len = strlen(p->valuestring);
    return p->valuestring;
}

static void run_spec_test(const char *file, const cJSON *test)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(test, "name");
    const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(test, "template");
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(test, "expected");
    cJSON *partials = cJSON_GetObjectItemCaseSensitive(test, "partials");
    const char *tname = cJSON_IsString(name) ? name->valuestring : "?";
    vr_mustache_opts opts = {vr_mustache_escape_html, spec_partial, partials};
    char err[256];
    size_t out_len = 0;
    char *out;

    if (!cJSON_IsString(tmpl) || !cJSON_IsString(want)) {
        report(0, file, tname);
        printf("#   malformed spec entry\n");
        return;
    }
    out = vr_mustache_render(tmpl->valuestring, strlen(tmpl->valuestring),
                             cJSON_GetObjectItemCaseSensitive(test, "data"), &opts, &out_len, err,
                             sizeof err);
    check_output(file, tname, want->valuestring, out, out_len, err);
    free(out);
}

static void run_spec_file(const char *dir, const char *base)
{
    char path[4096], label[64];
    char *text;
    cJSON *root;
    const cJSON *test;

    snprintf(path, sizeof path, "%s/%s.json", dir, base);
    snprintf(label, sizeof label, "%s.json", base);
    text = read_file(path);
    root = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!root) {
        report(0, label, "cannot load spec file");
        printf("#   path: %s\n", path);
        return;
    }
    cJSON_ArrayForEach(test, cJSON_GetObjectItemCaseSensitive(root, "tests"))
        run_spec_test(label, test);
    cJSON_Delete(root);
}

/*-- robustness tests -----------------------------------------------------*/

/* Partials for the extra tests, as "name\0source" pairs. */
static const char *const extra_partials[][2] = {
    {"self", "[{{>self}}]"},
    {"twice", "{{>twice}}{{>twice}}"},
    {"standself", "  {{>standself}}\n"},
    {"broken", "ok {{#a}} never closed"},
    {"usesbroken", "{{>broken}}"},
    {"row", "{{name}}={{value}};"},
};

static const char *extra_partial(void *userdata, const char *name, size_t *len)
{
    size_t i;

    (void)userdata;
    for (i = 0; i < sizeof extra_partials / sizeof extra_partials[0]; i++)
        if (strcmp(name, extra_partials[i][0]) == 0) {
            *len = strlen(extra_partials[i][1]);
            return extra_partials[i][1];
        }
    return NULL;
}

static const vr_mustache_opts extra_opts = {vr_mustache_escape_html, extra_partial, NULL};

static const char extra_data[] =
    "{\"x\":\"<script>&'\\\"\",\"n\":1.210,\"i\":85,\"z\":-0.0,"
    "\"big\":1e20,\"tiny\":1e-300,\"third\":0.30000000000000004,"
    "\"neg\":-12.5,\"t\":true,\"f\":false,\"nul\":null,\"e\":[],\"o\":{},"
    "\"a\":{\"a\":{\"a\":{\"b\":\"deep\"}}},"
    "\"list\":[1,\"two\",{\"name\":\"k\",\"value\":3},[4,[5]],null,false],"
    "\"rows\":[{\"name\":\"a\",\"value\":1},{\"name\":\"b\",\"value\":2}]}";

/* Renders with extra_opts; returns the output (caller frees) or NULL. */
static char *render(const char *tmpl, size_t len, const cJSON *data, char *err, size_t errlen,
                    size_t *out_len)
{
    return vr_mustache_render(tmpl, len, data, &extra_opts, out_len, err, errlen);
}

static void expect_output_n(const cJSON *data, const char *name, const char *tmpl, size_t len,
                            const char *want)
{
    char err[256] = "";
    size_t n = 0;
    char *out = render(tmpl, len, data, err, sizeof err, &n);

    check_output("extra", name, want, out, n, err);
    free(out);
}

static void expect_output(const cJSON *data, const char *name, const char *tmpl, const char *want)
{
    expect_output_n(data, name, tmpl, strlen(tmpl), want);
}

/* Expects an error whose message starts with `prefix` (e.g. "line 3:"). */
static void expect_error(const cJSON *data, const char *name, const char *tmpl, size_t len,
                         const char *prefix)
{
    char err[256] = "";
    char *out = render(tmpl, len, data, err, sizeof err, NULL);
    int ok = !out && strncmp(err, prefix, strlen(prefix)) == 0 && !strchr(err, '\n');

    report(ok, "extra", name);
    if (!ok)
        printf("#   want error \"%s...\", got %s \"%s\"\n", prefix, out ? "output" : "error",
               out ? out : err);
    free(out);
}

/* Either outcome is fine; the point is no crash and no hang. */
static void expect_survival(const cJSON *data, const char *name, const char *tmpl, size_t len)
{
    char err[256] = "";
    char *out = render(tmpl, len, data, err, sizeof err, NULL);

    report(out || err[0], "extra", name);
    free(out);
}

static char *repeat(const char *a, size_t na, const char *b, size_t nb, size_t *len)
{
    size_t la = strlen(a), lb = strlen(b), i;
    char *s = malloc(la * na + lb * nb + 1), *p = s;

    if (!s)
        abort();
    for (i = 0; i < na; i++, p += la)
        memcpy(p, a, la);
    for (i = 0; i < nb; i++, p += lb)
        memcpy(p, b, lb);
    *p = '\0';
    *len = (size_t)(p - s);
    return s;
}

static void deep_nesting_tests(const cJSON *data)
{
    size_t len;
    char *s = repeat("{{#a}}", 10000, "", 0, &len);

    expect_survival(data, "10000 unclosed sections", s, len);
    expect_error(data, "10000 unclosed sections is an error", s, len, "line 1:");
    free(s);
    s = repeat("{{#a}}", 10000, "{{/a}}", 10000, &len);
    expect_survival(data, "10000 nested sections", s, len);
    free(s);
    s = repeat("{{#o}}", 250, "{{/o}}", 250, &len);
    expect_output_n(data, "250 nested sections render", s, len, "");
    free(s);
}

static void error_tests(const cJSON *data)
{
    expect_error(data, "unclosed tag", "{{x", 3, "line 1:");
    expect_error(data, "unclosed tag line number", "a\nb\n{{x", 7, "line 3:");
    expect_error(data, "unclosed triple", "{{{x}}", 6, "line 1:");
    expect_error(data, "unclosed section", "{{#a}}", 6, "line 1:");
    expect_error(data, "unclosed inverted", "x\n{{^a}}\n", 9, "line 2:");
    expect_error(data, "mismatched close", "{{#a}}{{/b}}", 12, "line 1:");
    expect_error(data, "stray close", "x\n\n{{/a}}", 9, "line 3:");
    expect_error(data, "bad delimiters (one)", "{{=<% =}}", 9, "line 1:");
    expect_error(data, "bad delimiters (empty)", "{{= =}}", 7, "line 1:");
    expect_error(data, "bad delimiters (no =)", "{{=<% %>}}", 10, "line 1:");
    expect_error(data, "unclosed after delimiter change", "{{=<% %>=}}<%x", 14, "line 1:");
    expect_error(data, "error inside a partial", "{{>usesbroken}}", 15, "line 1:");
    expect_error(data, "binary junk", "\x01{{\0\xff", 5, "line 1:");
}

static void partial_tests(const cJSON *data)
{
    size_t n;
    char *want = repeat("[", 64, "]", 64, &n); /* the depth cap is 64 */

    expect_output(data, "self-recursive partial terminates", "{{>self}}", want);
    free(want);
    expect_survival(data, "doubly self-recursive partial terminates", "{{>twice}}", 10);
    expect_survival(data, "standalone self-recursive partial terminates", "{{>standself}}\n", 15);
    expect_output(data, "partial per list item", "{{#rows}}{{>row}}{{/rows}}", "a=1;b=2;");
    expect_output(data, "missing partial", "<{{>nope}}>", "<>");
}

static void value_tests(const cJSON *data)
{
    expect_output(data, "escaping <script>&'\"", "{{x}}", "&lt;script&gt;&amp;&#39;&quot;");
    expect_output(data, "raw <script>&'\"", "{{{x}}}{{&x}}", "<script>&'\"<script>&'\"");
    expect_output(data, "numbers", "{{n}} {{i}} {{z}} {{big}} {{tiny}} {{third}} {{neg}}",
                  "1.21 85 0 100000000000000000000 1e-300 "
                  "0.30000000000000004 -12.5");
    expect_output(data, "booleans, null, containers", "{{t}}|{{f}}|{{nul}}|{{e}}|{{o}}|",
                  "true|false||||");
    expect_output(data, "truthiness",
                  "{{#o}}o{{/o}}{{#e}}e{{/e}}{{^e}}!e{{/e}}"
                  "{{#nul}}n{{/nul}}{{#i}}{{.}}{{/i}}",
                  "o!e85");
    expect_output(data, "implicit iterator over mixed list", "{{#list}}({{.}}){{/list}}",
                  "(1)(two)()()()(false)");
    expect_output(data, "nested implicit iterators", "{{#list}}{{#.}}<{{.}}>{{/.}}{{/list}}",
                  "<1><two><><4><>");
    expect_output(data, "deep dotted name", "{{a.a.a.b}}|{{a.a.b}}|{{a.}}|{{.a}}", "deep|||");
    expect_output_n(data, "names with NUL bytes", "{{x\0y}}|", 8, "|");
    expect_output(data, "empty tags", "{{}}{{{}}}{{&}}{{#}}{{/}}", "");
}

/* Renders random fragments soup: only looks for crashes (run under ASan or
 * valgrind to make that meaningful). */
static void random_tests(const cJSON *data)
{
    static const char *const frag[] = {
        "{{",        "}}",        "{{{",    "}}}",    "#",           "^",  "/",  "!",
        ">",         "&",         "=",      "{",      "}",           "a",  "x",  "list",
        ".",         "rows",      "self",   "twice",  "row",         " ",  "\n", "\r\n",
        "{{#list}}", "{{/list}}", "{{#a}}", "{{/a}}", "{{=<% %>=}}", "<%", "%>", "{{>self}}",
        "{{>row}}",  "{{.}}",     "\t",     "\0",
    };
    unsigned long seed = 12345;
    char tmpl[256];
    int iter, survived = 1;

    for (iter = 0; iter < 20000; iter++) {
        size_t len = 0;
        int k, nfrag;
        char err[64], *out;

        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
        nfrag = (int)((seed >> 33) % 24);
        for (k = 0; k < nfrag; k++) {
            const char *f;
            size_t fl;
            seed = seed * 6364136223846793005UL + 1442695040888963407UL;
            f = frag[(seed >> 33) % (sizeof frag / sizeof frag[0])];
            fl = f[0] ? strlen(f) : 1;
            if (len + fl > sizeof tmpl)
                break;
            memcpy(tmpl + len, f, fl);
            len += fl;
        }
        out = render(tmpl, len, data, err, sizeof err, NULL);
        survived &= out != NULL || err[0] != '\0';
        free(out);
    }
    report(survived, "extra", "20000 random templates");
}

static void api_tests(const cJSON *data)
{
    size_t n = 99;
    char *out = vr_mustache_render("{{a}}<{{x}}>", 12, NULL, NULL, &n, NULL, 0);
    int ok = out && n == 2 && strcmp(out, "<>") == 0;

    free(out);
    out = vr_mustache_render("{{x}}", 5, data, NULL, NULL, NULL, 0);
    ok = ok && out && strcmp(out, "<script>&'\"") == 0; /* no escaper */
    free(out);
    out = vr_mustache_render("{{x", 3, data, NULL, NULL, NULL, 0);
    ok = ok && !out;
    out = vr_mustache_render(NULL, 0, data, NULL, &n, NULL, 0);
    ok = ok && out && n == 0 && out[0] == '\0';
    free(out);
    report(ok, "extra", "NULL data/opts/err, NULL empty template");
}

static void run_extra_tests(void)
{
    cJSON *data = cJSON_Parse(extra_data);

    if (!data) {
        report(0, "extra", "cannot parse test data");
        return;
    }
    error_tests(data);
    deep_nesting_tests(data);
    partial_tests(data);
    value_tests(data);
    api_tests(data);
    random_tests(data);
    cJSON_Delete(data);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : getenv("VR_MUSTACHE_SPEC_DIR");
    size_t i;

    setvbuf(stdout, NULL, _IOLBF, 0); /* keep order with sanitizer output */
    if (!dir || !*dir)
        dir = "tests/spec/mustache";
    for (i = 0; i < sizeof spec_files / sizeof spec_files[0]; i++)
        run_spec_file(dir, spec_files[i]);
    run_extra_tests();
    printf("1..%d\n# %d passed, %d failed\n", n_pass + n_fail, n_pass, n_fail);
    return n_fail == 0 ? 0 : 1;
}
