/*-*** test_json_scan.c: vr_json_scan, the streaming scanner (parse/json_scan) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/json_scan.h"
#include "util/buf.h"

#include "harness.h"

/*-*** vr_json_scan ***/

typedef struct {
    vr_buf log;
    int members, elements;
    int stop_after; /* stop when this many elements were seen (0: never) */
} scan_log;

static int log_member(void *ud, const char *key, size_t keylen, const char *val, size_t vallen,
                      uint64_t offset)
{
    scan_log *l = ud;
    l->members++;
    vr_buf_printf(&l->log, "M %.*s @%llu = %.*s\n", (int)keylen, key ? key : "",
                  (unsigned long long)offset, (int)vallen, val);
    return 0;
}

static int log_element(void *ud, const char *val, size_t vallen, uint64_t offset)
{
    scan_log *l = ud;
    l->elements++;
    vr_buf_printf(&l->log, "E @%llu = %.*s\n", (unsigned long long)offset, (int)vallen, val);
    return l->stop_after && l->elements >= l->stop_after;
}

/* Feeds `doc` in chunks of `chunk` bytes, each from its own heap copy. */
static vr_json_scan_status feed_chunks(vr_json_scan *s, const char *doc, size_t len, size_t chunk)
{
    if (len == 0)
        return vr_json_scan_feed(s, "", 0);
    for (size_t i = 0; i < len; i += chunk) {
        size_t n = len - i < chunk ? len - i : chunk;
        char *c = vr_xmalloc(n);
        memcpy(c, doc + i, n);
        vr_json_scan_status st = vr_json_scan_feed(s, c, n);
        free(c);
        if (st != VR_JSON_SCAN_OK)
            return st;
    }
    return VR_JSON_SCAN_OK;
}

typedef struct {
    vr_json_scan_status st;
    int complete, in_stream, stream_seen;
    uint64_t elements, repaired, control;
    uint64_t err_offset;
    char err[160];
    char *log;
} scan_result;

static void scan_doc(const char *doc, size_t len, size_t chunk, scan_result *r)
{
    scan_log l;
    memset(&l, 0, sizeof l);
    vr_json_scan s;
    vr_json_scan_init(&s, "traceEvents", log_member, log_element, &l);
    r->st = feed_chunks(&s, doc, len, chunk);
    r->complete = vr_json_scan_complete(&s);
    r->in_stream = vr_json_scan_in_stream(&s);
    r->stream_seen = vr_json_scan_stream_seen(&s);
    r->elements = s.elements;
    r->repaired = s.repaired_quotes;
    r->control = s.control_chars;
    r->err_offset = r->st == VR_JSON_SCAN_SYNTAX ? vr_json_scan_error_offset(&s) : 0;
    snprintf(r->err, sizeof r->err, "%s",
             r->st == VR_JSON_SCAN_SYNTAX ? vr_json_scan_error(&s) : "");
    vr_buf_putc(&l.log, '\0');
    r->log = vr_buf_detach(&l.log);
    vr_json_scan_free(&s);
}

/* Same outcome for every chunk size 1..40 as for one feed. */
static void check_chunking(const char *what, const char *doc, int check_counts)
{
    size_t len = strlen(doc);
    scan_result one, r;
    scan_doc(doc, len, len ? len : 1, &one);
    int same = 1, counts_same = 1;
    for (size_t chunk = 1; chunk <= 40; chunk++) {
        scan_doc(doc, len, chunk, &r);
        if (r.st != one.st || r.complete != one.complete || r.elements != one.elements ||
            strcmp(r.log, one.log) != 0 || r.err_offset != one.err_offset) {
            if (same)
                printf("# %s: chunks of %zu differ from one feed:\n# one:\n%s# chunked:\n%s",
                       what, chunk, one.log, r.log);
            same = 0;
        }
        if (r.repaired != one.repaired || r.control != one.control) {
            if (counts_same)
                printf("# %s: chunks of %zu count %llu repaired quotes, one feed %llu\n", what,
                       chunk, (unsigned long long)r.repaired, (unsigned long long)one.repaired);
            counts_same = 0;
        }
        free(r.log);
    }
    OK(same, "%s: chunks of 1..40 bytes deliver what one feed delivers", what);
    if (check_counts)
        OK(counts_same, "%s: chunks of 1..40 bytes count what one feed counts", what);
    free(one.log);
}

static const char sample_trace[] =
    "\xEF\xBB\xBF{\n"
    "  \"schemaVersion\": 1,\n"
    "  \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU \\\"x\\\" [0] {y}\"}],\n"
    "  \"k\\\"ey\": \"v]}\",\n"
    "  \"traceEvents\": [\n"
    "    {\"ph\": \"X\", \"name\": \"a{b[c\", \"args\": {\"s\": \"}]\\\"\", \"n\": [1, {\"x\": "
    "2}]}},\n"
    "    {\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 12.5},\n"
    "    42,\n"
    "    \"str\\\"ing]\",\n"
    "    [1, [2]],\n"
    "    {\"e\": \"\\\\\"},\n"
    "    {\"ctl\": \"a\tb\"}\n"
    "  ],\n"
    "  \"baseTimeNanoseconds\": 1712195495000000000,\n"
    "  \"displayTimeUnit\": \"ms\"\n"
    "}\n";

static void test_json_scan_chunks(void)
{
    size_t len = sizeof sample_trace - 1;
    scan_result r;
    scan_doc(sample_trace, len, len, &r);
    INT_EQ(r.st, VR_JSON_SCAN_OK, "sample trace scans OK");
    OK(r.complete, "sample trace complete");
    OK(!r.in_stream && r.stream_seen, "stream seen and closed");
    INT_EQ(r.elements, 7, "seven elements");
    INT_EQ(r.control, 1, "one raw control character counted");
    INT_EQ(r.repaired, 0, "no quote repaired in the sample");

    /* The log holds exact values at exact offsets. */
    char want[512];
    const char *p;
    p = strstr(sample_trace, "{\"ph\": \"X\"");
    snprintf(
        want, sizeof want,
        "E @%zu = {\"ph\": \"X\", \"name\": \"a{b[c\", \"args\": {\"s\": \"}]\\\"\", \"n\": [1, "
        "{\"x\": 2}]}}\n",
        (size_t)(p - sample_trace));
    OK(strstr(r.log, want) != NULL, "first event delivered whole with its offset");
    p = strstr(sample_trace, "42,");
    snprintf(want, sizeof want, "E @%zu = 42\n", (size_t)(p - sample_trace));
    OK(strstr(r.log, want) != NULL, "bare number element delivered");
    p = strstr(sample_trace, "\"str");
    snprintf(want, sizeof want, "E @%zu = \"str\\\"ing]\"\n", (size_t)(p - sample_trace));
    OK(strstr(r.log, want) != NULL, "string element with escaped quote and bracket delivered");
    snprintf(want, sizeof want, "M schemaVersion @%zu = 1\n",
             (size_t)(strstr(sample_trace, "1,\n") - sample_trace));
    OK(strstr(r.log, want) != NULL, "scalar member schemaVersion delivered");
    OK(strstr(r.log, "M deviceProperties @") &&
           strstr(r.log, "= [{\"id\": 0, \"name\": \"GPU \\\"x\\\" [0] {y}\"}]\n"),
       "array member deviceProperties delivered whole");
    OK(strstr(r.log, "M k\\\"ey @") && strstr(r.log, "= \"v]}\"\n"),
       "key with an escaped quote and value with brackets");
    OK(strstr(r.log, "M baseTimeNanoseconds @") && strstr(r.log, "= 1712195495000000000\n"),
       "member after traceEvents (baseTimeNanoseconds) delivered");
    OK(strstr(r.log, "M displayTimeUnit @") && strstr(r.log, "= \"ms\"\n"),
       "last member delivered");
    OK(strstr(r.log, "M traceEvents") == NULL, "the stream array is not delivered as a member");
    OK(strstr(r.log, "E @") < strstr(r.log, "M baseTimeNanoseconds"),
       "callbacks arrive in document order");
    free(r.log);

    check_chunking("sample trace", sample_trace, 1);

    /* The top-level array form. */
    static const char bare[] =
        "[{\"ph\": \"X\", \"name\": \"]\"}, {\"ph\": \"i\"}, [1], \"s\", 7]";
    scan_doc(bare, sizeof bare - 1, sizeof bare - 1, &r);
    OK(r.st == VR_JSON_SCAN_OK && r.complete && r.elements == 5 && r.stream_seen && !r.in_stream,
       "bare array: five elements, complete");
    OK(strstr(r.log, "M ") == NULL, "bare array: no members");
    OK(strncmp(r.log, "E @1 = {\"ph\": \"X\", \"name\": \"]\"}\n", 32) == 0,
       "bare array: first element at offset 1");
    free(r.log);
    check_chunking("bare array", bare, 1);

    /* Object without traceEvents, and an empty stream. */
    scan_doc("{\"a\": {\"b\": 1}}", 15, 15, &r);
    OK(r.st == VR_JSON_SCAN_OK && r.complete && !r.stream_seen && r.elements == 0,
       "object without traceEvents: complete, stream not seen");
    free(r.log);
    scan_doc("{\"traceEvents\": []}", 19, 19, &r);
    OK(r.st == VR_JSON_SCAN_OK && r.complete && r.stream_seen && r.elements == 0,
       "empty traceEvents: complete, seen, no elements");
    free(r.log);
    /* A traceEvents that is not an array is delivered as a member. */
    scan_doc("{\"traceEvents\": {\"x\": 1}}", 25, 25, &r);
    OK(r.st == VR_JSON_SCAN_OK && !r.stream_seen &&
           strstr(r.log, "M traceEvents @16 = {\"x\": 1}"),
       "traceEvents as an object is a plain member");
    free(r.log);
    /* Trailing bytes after the document are ignored. */
    scan_doc("{\"traceEvents\": [1]} trailing junk", 34, 34, &r);
    OK(r.st == VR_JSON_SCAN_OK && r.complete && r.elements == 1,
       "trailing bytes after the end ignored");
    free(r.log);

    /* A callback can stop the scan. */
    scan_log l;
    memset(&l, 0, sizeof l);
    l.stop_after = 2;
    vr_json_scan s;
    vr_json_scan_init(&s, "traceEvents", log_member, log_element, &l);
    vr_json_scan_status st = vr_json_scan_feed(&s, sample_trace, sizeof sample_trace - 1);
    OK(st == VR_JSON_SCAN_STOPPED && l.elements == 2,
       "callback non-zero stops with VR_JSON_SCAN_STOPPED");
    vr_json_scan_free(&s);
    vr_buf_free(&l.log);
}

static void test_json_scan_truncation(void)
{
    scan_result r;
    const char *cut = "{\"traceEvents\": [{\"ph\": \"X\"}, {\"ph\": \"X\", \"na";
    scan_doc(cut, strlen(cut), 7, &r);
    OK(r.st == VR_JSON_SCAN_OK, "cut inside an event: no error");
    OK(!r.complete, "cut inside an event: vr_json_scan_complete() == 0");
    OK(r.in_stream, "cut inside an event: vr_json_scan_in_stream() == 1");
    INT_EQ(r.elements, 1, "the complete event before the cut was delivered");
    free(r.log);

    vr_json_scan s;
    vr_json_scan_init(&s, "traceEvents", NULL, NULL, NULL);
    vr_json_scan_feed(&s, cut, strlen(cut));
    STR_EQ(vr_json_scan_where(&s), "inside an event", "where: inside an event");
    vr_json_scan_free(&s);

    static const struct {
        const char *doc, *where;
        int in_stream;
    } cases[] = {
        {"", "before the document began", 0},
        {"  ", "before the document began", 0},
        {"{\"traceEvents\": [{\"a\": 1},", "between events", 1},
        {"{\"traceEvents\": [", "between events", 1},
        {"{\"traceEvents\": []", "outside the event list", 0},
        {"{\"schemaVersion\": 1, \"devi", "outside the event list", 0},
        {"{\"traceEvents\": [], \"baseTimeNanoseconds\": 17", "outside the event list", 0},
        {"[{\"a\": 1}, {\"b", "inside an event", 1},
        {"{\"traceEvents\": []}", "after the end", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        vr_json_scan_init(&s, "traceEvents", NULL, NULL, NULL);
        vr_json_scan_status st = feed_chunks(&s, cases[i].doc, strlen(cases[i].doc), 3);
        int complete = vr_json_scan_complete(&s);
        OK(st == VR_JSON_SCAN_OK && complete == (strcmp(cases[i].where, "after the end") == 0) &&
               vr_json_scan_in_stream(&s) == cases[i].in_stream &&
               strcmp(vr_json_scan_where(&s), cases[i].where) == 0,
           "\"%s\": complete %d, in_stream %d, where \"%s\" (got %d, %d, \"%s\")", cases[i].doc,
           strcmp(cases[i].where, "after the end") == 0, cases[i].in_stream, cases[i].where,
           complete, vr_json_scan_in_stream(&s), vr_json_scan_where(&s));
        vr_json_scan_free(&s);
    }

    /* Every prefix of the sample: no error, and complete only at the end. */
    size_t len = sizeof sample_trace - 1;
    int ok = 1;
    for (size_t n = 0; n < len; n++) {
        scan_doc(sample_trace, n, 5, &r);
        /* The document ends at its '}'; only the final newline may be cut. */
        int should_complete = n >= len - 1;
        if (r.st != VR_JSON_SCAN_OK || r.complete != should_complete) {
            if (ok)
                printf("# prefix %zu: st %d complete %d\n", n, r.st, r.complete);
            ok = 0;
        }
        free(r.log);
    }
    OK(ok, "every prefix of the sample scans without error and is incomplete");
}

static void expect_syntax(const char *doc, uint64_t offset, const char *msg)
{
    size_t chunks[] = {strlen(doc), 1, 4};
    for (size_t i = 0; i < 3; i++) {
        scan_result r;
        scan_doc(doc, strlen(doc), chunks[i] ? chunks[i] : 1, &r);
        OK(r.st == VR_JSON_SCAN_SYNTAX && r.err_offset == offset && strstr(r.err, msg) != NULL,
           "syntax error in '%s' (chunks of %zu) at byte %llu: \"%s\" (got st %d at %llu: "
           "\"%s\")",
           doc, chunks[i], (unsigned long long)offset, msg, r.st,
           (unsigned long long)r.err_offset, r.err);
        free(r.log);
    }
}

static void test_json_scan_errors(void)
{
    expect_syntax("x", 0, "expected '{' or '[' (a JSON trace), found 'x'");
    expect_syntax("   \n<html>", 4, "found '<'");
    expect_syntax("\x01", 0, "found byte 0x01");
    expect_syntax("{\"traceEvents\":[{]}", 17, "expected '}', found ']'");
    expect_syntax("{\"traceEvents\":[[}]]}", 17, "expected ']', found '}'");
    expect_syntax("{\"a\": {\"b\": [1}}", 14, "expected ']', found '}'");
    expect_syntax("{\"a\" 1}", 5, "expected ':', found '1'");
    expect_syntax("{\"a\": 1 \"b\": 2}", 8, "expected ',' or '}', found '\"'");
    expect_syntax("{\"a\": ,}", 6, "expected a value, found ','");
    expect_syntax("{\"traceEvents\": [}", 17, "expected an array element, ',' or ']', found '}'");
    expect_syntax("{1: 2}", 1, "expected a key string or '}', found '1'");
    expect_syntax("{\"traceEvents\": [{\"a\": \"}\"}, {\"b\": [}]}", 36,
                  "expected ']', found '}'");

    /* After an error the scanner refuses further input. */
    vr_json_scan s;
    vr_json_scan_init(&s, "traceEvents", NULL, NULL, NULL);
    OK(vr_json_scan_feed(&s, "x", 1) == VR_JSON_SCAN_SYNTAX &&
           vr_json_scan_feed(&s, "{}", 2) == VR_JSON_SCAN_SYNTAX && !vr_json_scan_complete(&s),
       "after a syntax error every feed returns VR_JSON_SCAN_SYNTAX");
    vr_json_scan_free(&s);

    /* Nesting: exactly MAX_DEPTH levels is fine, one more is an error. */
    for (int extra = 0; extra <= 1; extra++) {
        int levels = VR_JSON_SCAN_MAX_DEPTH + extra;
        vr_buf doc = VR_BUF_INIT;
        vr_buf_puts(&doc, "{\"traceEvents\":[");
        for (int i = 0; i < levels; i++)
            vr_buf_putc(&doc, '[');
        for (int i = 0; i < levels; i++)
            vr_buf_putc(&doc, ']');
        vr_buf_puts(&doc, "]}");
        const size_t sizes[] = {doc.len, 64, 1};
        for (size_t k = 0; k < 3; k++) {
            size_t chunk = sizes[k];
            scan_result r;
            scan_doc(doc.data, doc.len, chunk, &r);
            if (extra == 0)
                OK(r.st == VR_JSON_SCAN_OK && r.complete && r.elements == 1,
                   "%d levels deep (chunks of %zu): scanned", levels, chunk);
            else
                OK(r.st == VR_JSON_SCAN_SYNTAX && r.err_offset == 16 + VR_JSON_SCAN_MAX_DEPTH &&
                       strstr(r.err, "nesting at most 1024 levels deep") != NULL,
                   "%d levels deep (chunks of %zu): syntax error at byte %d (got st %d at %llu: "
                   "%s)",
                   levels, chunk, 16 + VR_JSON_SCAN_MAX_DEPTH, r.st,
                   (unsigned long long)r.err_offset, r.err);
            free(r.log);
        }
        vr_buf_free(&doc);
    }
    /* Far deeper, with objects: an error, never a crash. */
    vr_buf doc = VR_BUF_INIT;
    vr_buf_puts(&doc, "{\"meta\": ");
    for (int i = 0; i < 100000; i++)
        vr_buf_puts(&doc, "{\"a\":[");
    scan_result r;
    scan_doc(doc.data, doc.len, 4096, &r);
    OK(r.st == VR_JSON_SCAN_SYNTAX && strstr(r.err, "nesting") != NULL,
       "100000-level nesting in a member: syntax error");
    free(r.log);
    vr_buf_free(&doc);

    /* An overlong key is refused. */
    vr_buf key = VR_BUF_INIT;
    vr_buf_puts(&key, "{\"");
    for (int i = 0; i < 5000; i++)
        vr_buf_putc(&key, 'k');
    vr_buf_puts(&key, "\": 1}");
    scan_doc(key.data, key.len, 1000, &r);
    OK(r.st == VR_JSON_SCAN_SYNTAX && strstr(r.err, "key shorter than 4096") != NULL,
       "a 5000-byte key is a syntax error");
    free(r.log);
    vr_buf_free(&key);
}

/* Strings holding brackets, escaped quotes and escaped backslashes at every
 * chunk boundary, and unescaped quotes (repaired) whose next byte lies in
 * the next chunk. */
/* The nested stream (a snapshot's device_traces): each inner array's
 * elements, one at a time, with the inner array's index; an outer element
 * that is not an array whole, flagged; the same in chunks of any size. */
static int log_nested(void *ud, size_t outer, int inner, const char *val, size_t vallen,
                      uint64_t offset)
{
    scan_log *l = ud;
    l->elements++;
    vr_buf_printf(&l->log, "N%d %zu @%llu = %.*s\n", inner, outer, (unsigned long long)offset,
                  (int)vallen, val);
    return 0;
}

static char *scan_nested(const char *doc, size_t chunk, vr_json_scan_status *st, int *complete,
                         int *in_stream)
{
    scan_log l;
    memset(&l, 0, sizeof l);
    vr_json_scan s;
    vr_json_scan_init(&s, "segments", log_member, log_element, &l);
    vr_json_scan_nest(&s, "device_traces", log_nested);
    *st = feed_chunks(&s, doc, strlen(doc), chunk);
    *complete = vr_json_scan_complete(&s);
    *in_stream = vr_json_scan_in_stream(&s);
    if (*st == VR_JSON_SCAN_SYNTAX)
        vr_buf_printf(&l.log, "error @%llu: %s\n",
                      (unsigned long long)vr_json_scan_error_offset(&s), vr_json_scan_error(&s));
    vr_buf_putc(&l.log, '\0');
    vr_json_scan_free(&s);
    return vr_buf_detach(&l.log);
}

static void test_json_scan_nested(void)
{
    static const char doc[] =
        "{\"segments\": [{\"a\": [1]}, {\"b\": \"]\"}],\n"
        " \"device_traces\": [[{\"x\": 1}, {\"y\": [2, {\"z\": \"[\"}]}], [], [{\"w\": 3}], "
        "{\"flat\": 4}, 5],\n"
        " \"other\": [[1], [2]]}";
    static const char want[] = "E @14 = {\"a\": [1]}\n"
                               "E @26 = {\"b\": \"]\"}\n"
                               "N1 0 @59 = {\"x\": 1}\n"
                               "N1 0 @69 = {\"y\": [2, {\"z\": \"[\"}]}\n"
                               "N1 2 @99 = {\"w\": 3}\n"
                               "N0 3 @110 = {\"flat\": 4}\n"
                               "N0 4 @123 = 5\n"
                               "M other @137 = [[1], [2]]\n";
    vr_json_scan_status st;
    int complete, in_stream, same = 1;
    for (size_t chunk = 1;; chunk = chunk == 40 ? sizeof doc : chunk + 1) {
        char *log = scan_nested(doc, chunk, &st, &complete, &in_stream);
        if (strcmp(log, want) != 0 || st != VR_JSON_SCAN_OK || !complete || in_stream) {
            if (same)
                printf("# chunks of %zu:\n%s", chunk, log);
            same = 0;
        }
        free(log);
        if (chunk == sizeof doc)
            break;
    }
    OK(same, "nested stream: inner elements by their array's index, outer non-arrays flagged, "
             "in chunks of 1..40 bytes and whole");

    char *log =
        scan_nested("{\"device_traces\": [[{\"x\": 1}, {\"y\"", 7, &st, &complete, &in_stream);
    OK(st == VR_JSON_SCAN_OK && !complete && in_stream &&
           strcmp(log, "N1 0 @20 = {\"x\": 1}\n") == 0,
       "nested stream cut inside an entry: what came before, incomplete, in the stream (%s)",
       log);
    free(log);
    log = scan_nested("{\"device_traces\": [[1], }", 64, &st, &complete, &in_stream);
    OK(st == VR_JSON_SCAN_SYNTAX && strstr(log, "error @24: expected an array, ',' or ']'"),
       "nested stream: a '}' in the outer array is a syntax error at its offset (%s)", log);
    free(log);
    log = scan_nested("[{\"device_traces\": [[1]]}]", 64, &st, &complete, &in_stream);
    OK(st == VR_JSON_SCAN_OK && complete &&
           strcmp(log, "E @1 = {\"device_traces\": [[1]]}\n") == 0,
       "nested stream: only a top-level member is nested (%s)", log);
    free(log);
}

static void test_json_scan_strings(void)
{
    check_chunking("escapes at chunk ends",
                   "{\"traceEvents\": [{\"n\": \"\\\\\"}, {\"n\": \"\\\"]\\\\\\\"}\"}, "
                   "{\"n\": \"\\\\\\\\\", \"m\": \"{[\"}], \"k\\\\\": \"\\\"\"}",
                   1);

    /* Unescaped quote: a quote followed by a byte that cannot follow a
     * string is part of the string, wherever the chunk boundary falls. */
    static const char rq[] =
        "{\"traceEvents\": [{\"name\": \"say \"hi\" now\", \"ph\": \"X\"}, {\"ph\": \"i\"}]}";
    scan_result r;
    scan_doc(rq, sizeof rq - 1, sizeof rq - 1, &r);
    OK(r.st == VR_JSON_SCAN_OK && r.complete && r.elements == 2 && r.repaired == 2,
       "unescaped quotes repaired in one feed (2 counted)");
    free(r.log);
    check_chunking("unescaped quotes (\"say \"hi\" now\")", rq, 1);

    static const char rq2[] =
        "{\"traceEvents\": [{\"name\": \"f\"x{y\", \"ph\": \"X\"}, {\"ph\": \"i\"}]}";
    scan_doc(rq2, sizeof rq2 - 1, sizeof rq2 - 1, &r);
    OK(r.st == VR_JSON_SCAN_OK && r.complete && r.elements == 2 && r.repaired == 1,
       "unescaped quote before a bracket repaired in one feed");
    free(r.log);
    check_chunking("unescaped quote before a bracket (\"f\"x{y\")", rq2, 1);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_json_scan_chunks);
    RUN(test_json_scan_truncation);
    RUN(test_json_scan_errors);
    RUN(test_json_scan_strings);
    RUN(test_json_scan_nested);
    return harness_summary();
}
