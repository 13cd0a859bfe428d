/*-*** test_json_pull.c: vr_json, the pull reader of one value (parse/json_pull) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "db/db.h"
#include "import/import.h"
#include "parse/json_pull.h"
#include "util/buf.h"

#include "fixtures.h"
#include "harness.h"

/*-*** vr_json ***/

/* Runs `text` as one value through the reader, from a heap copy of exactly
 * its size (so ASan sees any read past the end). */
typedef struct {
    char *copy;
    vr_json j;
    vr_json_faults t;
} jdoc;

static void jdoc_open(jdoc *d, const char *text, size_t len)
{
    d->copy = vr_xmalloc(len ? len : 1);
    memcpy(d->copy, text, len);
    memset(&d->t, 0, sizeof d->t);
    vr_json_init(&d->j, d->copy, len, &d->t);
}

static void jdoc_close(jdoc *d)
{
    free(d->copy);
}

static int us_to_ns(const char *text, int64_t *out, vr_json_faults *t)
{
    jdoc d;
    jdoc_open(&d, text, strlen(text));
    int ok = vr_json_us_to_ns(&d.j, out);
    if (t)
        *t = d.t;
    jdoc_close(&d);
    return ok;
}

static char *str_dup(const vr_json_str *s)
{
    return vr_xstrndup(s->s, s->len);
}

static char *unescaped(const char *raw, vr_json_faults *t)
{
    vr_json_str s = {raw, strlen(raw), strchr(raw, '\\') != NULL};
    vr_buf out = VR_BUF_INIT;
    vr_json_unescape(&s, &out, t);
    vr_buf_putc(&out, '\0');
    return vr_buf_detach(&out);
}

/* Reads every value in the document the way an importer would, following
 * each kind; returns how many values were read. Never loops forever: each
 * step must consume bytes or fail. */
static int walk(vr_json *j, vr_buf *scratch, int depth)
{
    int n = 0;
    vr_json_str s;
    int64_t v;
    int b;
    switch (vr_json_peek(j)) {
    case VR_JSON_OBJECT:
        if (depth > 64) {
            vr_json_skip(j);
            return 1;
        }
        if (vr_json_enter_object(j)) {
            const char *last = NULL;
            while (vr_json_next_member(j, &s)) {
                vr_buf_clear(scratch);
                vr_json_unescape(&s, scratch, j->faults);
                if (j->p == last)
                    break;
                last = j->p;
                n += walk(j, scratch, depth + 1);
            }
        }
        return n + 1;
    case VR_JSON_ARRAY:
        if (depth > 64) {
            vr_json_skip(j);
            return 1;
        }
        if (vr_json_enter_array(j)) {
            const char *last = NULL;
            while (vr_json_next_element(j)) {
                if (j->p == last)
                    break;
                last = j->p;
                n += walk(j, scratch, depth + 1);
            }
        }
        return n + 1;
    case VR_JSON_STRING:
        if (vr_json_string(j, &s)) {
            vr_buf_clear(scratch);
            vr_json_unescape(&s, scratch, j->faults);
        }
        return 1;
    case VR_JSON_NUMBER: {
        vr_json copy = *j;
        vr_json_us_to_ns(&copy, &v);
        vr_json_int64(j, &v);
        return 1;
    }
    case VR_JSON_TRUE:
    case VR_JSON_FALSE:
        vr_json_bool(j, &b);
        return 1;
    case VR_JSON_NULL:
        vr_json_skip(j);
        return 1;
    default:
        return 0;
    }
}

static void test_json_reader(void)
{
    static const char ev[] =
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 12, "
        "\"tid\": \"25738\", \"ts\": 1712195495519689.047, \"dur\": 63.813,\n"
        "  \"args\": {\"External id\": 7, \"nested\": {\"a\": [1, 2, {\"b\": null}]},"
        " \"flag\": true, \"off\": false}, \"id\": 9}";
    jdoc d;
    jdoc_open(&d, ev, sizeof ev - 1);
    vr_json *j = &d.j;
    vr_json_str key, s, args = {0};
    int64_t pid = 0, tid = 0, ts = 0, dur = 0, id = 0;
    char *ph = NULL, *cat = NULL, *name = NULL;
    int members = 0;
    OK(vr_json_peek(j) == VR_JSON_OBJECT, "peek sees an object");
    OK(vr_json_enter_object(j), "enter_object");
    while (vr_json_next_member(j, &key)) {
        members++;
        if (vr_json_str_eq(&key, "ph") && vr_json_string(j, &s))
            ph = str_dup(&s);
        else if (vr_json_str_eq(&key, "cat") && vr_json_string(j, &s))
            cat = str_dup(&s);
        else if (vr_json_str_eq(&key, "name") && vr_json_string(j, &s))
            name = str_dup(&s);
        else if (vr_json_str_eq(&key, "pid"))
            vr_json_int64(j, &pid);
        else if (vr_json_str_eq(&key, "tid"))
            vr_json_int64(j, &tid);
        else if (vr_json_str_eq(&key, "ts"))
            vr_json_us_to_ns(j, &ts);
        else if (vr_json_str_eq(&key, "dur"))
            vr_json_us_to_ns(j, &dur);
        else if (vr_json_str_eq(&key, "args"))
            vr_json_raw(j, &args);
        else if (vr_json_str_eq(&key, "id"))
            vr_json_int64(j, &id);
        else
            vr_json_skip(j);
    }
    OK(!j->failed, "the event reads without failure");
    INT_EQ(members, 9, "nine members");
    INT_EQ(j->depth, 0, "depth back to 0 after the closing brace");
    OK(j->p == j->end, "reader consumed the whole event");
    STR_EQ(ph, "X", "ph");
    STR_EQ(cat, "cpu_op", "cat");
    STR_EQ(name, "aten::mm", "name");
    INT_EQ(pid, 12, "pid as a number");
    INT_EQ(tid, 25738, "tid as a numeric string \"25738\"");
    INT_EQ(ts, 1712195495519689047LL, "ts 1712195495519689.047 us in ns");
    INT_EQ(dur, 63813, "dur 63.813 us in ns");
    INT_EQ(id, 9, "member after args still read");
    free(ph);
    free(cat);
    free(name);

    /* args: nested objects and arrays, read from the raw span. */
    OK(args.s && args.len > 0 && args.s[0] == '{' && args.s[args.len - 1] == '}',
       "vr_json_raw returns the args object's bytes");
    vr_json a;
    vr_json_init(&a, args.s, args.len, NULL);
    int64_t ext = 0;
    int flag = -1, off = -1, saw_nested = 0;
    OK(vr_json_enter_object(&a), "enter args");
    while (vr_json_next_member(&a, &key)) {
        if (vr_json_str_eq(&key, "External id")) {
            vr_json_int64(&a, &ext);
        } else if (vr_json_str_eq(&key, "flag")) {
            vr_json_bool(&a, &flag);
        } else if (vr_json_str_eq(&key, "off")) {
            vr_json_bool(&a, &off);
        } else if (vr_json_str_eq(&key, "nested")) {
            OK(vr_json_enter_object(&a), "enter nested");
            OK(vr_json_next_member(&a, &key) && vr_json_str_eq(&key, "a"), "nested.a");
            OK(vr_json_enter_array(&a), "enter nested.a");
            int64_t v1 = 0, v2 = 0;
            OK(vr_json_next_element(&a) && vr_json_int64(&a, &v1) && v1 == 1, "a[0] == 1");
            OK(vr_json_next_element(&a) && vr_json_int64(&a, &v2) && v2 == 2, "a[1] == 2");
            OK(vr_json_next_element(&a) && vr_json_peek(&a) == VR_JSON_OBJECT,
               "a[2] is an object");
            vr_json_skip(&a);
            OK(!vr_json_next_element(&a), "a ends after 3 elements");
            OK(!vr_json_next_member(&a, &key), "nested ends");
            saw_nested = 1;
        } else {
            vr_json_skip(&a);
        }
    }
    OK(!a.failed && saw_nested, "args walked without failure");
    INT_EQ(ext, 7, "args.External id");
    INT_EQ(flag, 1, "args.flag true");
    INT_EQ(off, 0, "args.off false");
    jdoc_close(&d);

    /* Arrays of mixed numbers: numeric strings, exponents, and fractions
     * that are no integer (skipped: got[] keeps its 0). */
    static const char arr[] = "[1, \"2\", 3.9, -4.2, 1e3, \"-17\"]";
    jdoc_open(&d, arr, sizeof arr - 1);
    int64_t want[] = {1, 2, 0, 0, 1000, -17}, got[6] = {0};
    int k = 0;
    OK(vr_json_enter_array(&d.j), "enter array");
    while (vr_json_next_element(&d.j) && k < 6)
        vr_json_int64(&d.j, &got[k++]);
    INT_EQ(k, 6, "six elements");
    for (int i = 0; i < 6; i++)
        INT_EQ(got[i], want[i], "array element %d as int64", i);
    OK(!d.j.failed, "array read without failure");
    INT_EQ(d.t.inexact_number, 2, "3.9 and -4.2 counted as inexact numbers");
    jdoc_close(&d);

    /* Kind mismatch: the value is skipped and 0 returned; reading goes on. */
    static const char mm[] = "{\"a\": 5, \"b\": {\"x\": [1]}, \"c\": \"s\", \"d\": 8}";
    jdoc_open(&d, mm, sizeof mm - 1);
    int64_t dv = 0;
    vr_json_enter_object(&d.j);
    vr_json_next_member(&d.j, &key);
    OK(!vr_json_string(&d.j, &s), "vr_json_string on a number returns 0");
    vr_json_next_member(&d.j, &key);
    OK(!vr_json_int64(&d.j, &dv), "vr_json_int64 on an object returns 0");
    vr_json_next_member(&d.j, &key);
    OK(!vr_json_int64(&d.j, &dv), "vr_json_int64 on a non-numeric string returns 0");
    OK(vr_json_next_member(&d.j, &key) && vr_json_str_eq(&key, "d") && vr_json_int64(&d.j, &dv) &&
           dv == 8,
       "the member after the mismatches is read");
    OK(!vr_json_next_member(&d.j, &key) && !d.j.failed, "object closes cleanly");
    jdoc_close(&d);
}

static void test_json_numbers(void)
{
    static const struct {
        const char *text;
        int64_t ns;
    } ts[] = {
        {"1712195495519689.047", 1712195495519689047LL},
        {"\"1712195495519689.047\"", 1712195495519689047LL},
        {"1712195495519689", 1712195495519689000LL},
        {"63.813", 63813},
        {"63.8", 63800},
        {"63.", 63000},
        {"0", 0},
        {"0.001", 1},
        {"63.8125", 63813}, /* fourth decimal rounds: 63812.5 ns -> 63813 */
        {"63.8124", 63812},
        {"63.81249", 63812},
        {"63.9995", 64000},
        {"0.0005", 1},
        {"-63.813", -63813},
        {"-0.5", -500},
        {"-1712195495519689.047", -1712195495519689047LL},
        {"9223372036854775.807", INT64_MAX},
        {"\"25\"", 25000},
        /* up to three decimals: kineto's every ts and dur */
        {"1419247332972.313", 1419247332972313LL},
        {"1.5", 1500},
        {"1.50", 1500},
        {"0.05", 50},
        {"007.125", 7125},
        {"123456789012345.678", 123456789012345678LL},
        {"1234567890123456.789", 1234567890123456789LL},
        {"-0.001", -1},
        {"\"1.25\"", 1250},
    };
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) {
        int64_t v = 12345;
        vr_json_faults t;
        int ok = us_to_ns(ts[i].text, &v, &t);
        OK(ok && v == ts[i].ns && t.int_overflow == 0, "us_to_ns(%s) = %lld (got %lld)",
           ts[i].text, (long long)ts[i].ns, (long long)v);
    }

    vr_json_faults t;
    int64_t v;
    OK(!us_to_ns("9223372036854776", &v, &t) && t.int_overflow == 1,
       "us_to_ns beyond int64 ns: refused and counted");
    OK(!us_to_ns("99999999999999999999999", &v, &t) && t.int_overflow == 1,
       "us_to_ns beyond int64 us: refused and counted");
    OK(!us_to_ns("\"abc\"", &v, &t), "us_to_ns on a non-numeric string returns 0");
    OK(!us_to_ns("null", &v, &t), "us_to_ns on null returns 0");

    /* vr_json_int64: overflow clamps and counts, returns 1. */
    jdoc d;
    static const char big[] = "[99999999999999999999, -99999999999999999999, "
                              "9223372036854775807, -9223372036854775808, "
                              "\"18446744073709551616\"]";
    jdoc_open(&d, big, sizeof big - 1);
    int64_t got[5] = {0};
    int n = 0;
    vr_json_enter_array(&d.j);
    while (vr_json_next_element(&d.j) && n < 5) {
        OK(vr_json_int64(&d.j, &got[n]), "int64 element %d returns 1", n);
        n++;
    }
    INT_EQ(got[0], INT64_MAX, "positive overflow clamps to INT64_MAX");
    OK(got[1] == INT64_MIN, "negative overflow clamps to INT64_MIN");
    INT_EQ(got[2], INT64_MAX, "INT64_MAX itself");
    OK(got[3] == INT64_MIN, "INT64_MIN itself");
    INT_EQ(got[4], INT64_MAX, "overflow in a numeric string clamps too");
    INT_EQ(d.t.int_overflow, 3, "three overflows counted");
    jdoc_close(&d);

    /* vr_json_parse_int64 directly. */
    static const struct {
        const char *s;
        int ok, overflow;
        int64_t v;
    } p[] = {
        {"123", 1, 0, 123},
        {"-0", 1, 0, 0},
        {"+5", 1, 0, 5},
        {"12abc", 1, 0, 12},
        {"007", 1, 0, 7},
        {"9223372036854775807", 1, 0, INT64_MAX},
        {"9223372036854775808", 1, 1, INT64_MAX},
        {"-9223372036854775808", 1, 0, INT64_MIN},
        {"-9223372036854775809", 1, 1, INT64_MIN},
        {"", 0, 0, 0},
        {"-", 0, 0, 0},
        {"abc", 0, 0, 0},
        {" 1", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) {
        int64_t out = 42;
        int of = -1;
        size_t len = strlen(p[i].s);
        char *copy = vr_xmalloc(len ? len : 1);
        memcpy(copy, p[i].s, len);
        int ok = vr_json_parse_int64(copy, len, &out, &of);
        free(copy);
        OK(ok == p[i].ok && (!ok || (of == p[i].overflow && out == p[i].v)),
           "parse_int64(\"%s\") -> ok %d overflow %d value %lld", p[i].s, p[i].ok, p[i].overflow,
           (long long)p[i].v);
    }
}

/* us * 1000 + frac must not overflow at the top of the range: a timestamp
 * just above INT64_MAX ns is refused and counted like the others. */
static void test_json_ts_edge(void)
{
    vr_json_faults t;
    int64_t v = 0;
    int ok = us_to_ns("9223372036854775.808", &v, &t);
    OK(!ok && t.int_overflow == 1,
       "us_to_ns(9223372036854775.808) (1 ns above INT64_MAX) is refused and counted "
       "(got ok=%d v=%lld)",
       ok, (long long)v);
    ok = us_to_ns("-9223372036854775.809", &v, &t);
    OK(!ok && t.int_overflow == 1,
       "us_to_ns(-9223372036854775.809) (1 ns below INT64_MIN) is refused and counted "
       "(got ok=%d v=%lld)",
       ok, (long long)v);
}

/*-*** numbers with a fraction or an exponent ***/

/* Reads `text` with vr_json_int64 as the first element of [text, 7]; sets
 * *next_ok when the 7 after it is still read (a skipped value is consumed,
 * as for a kind mismatch). */
static int int64_first_of_two(const char *text, int64_t *out, vr_json_faults *t, int *next_ok)
{
    size_t n = strlen(text);
    char *arr = vr_xmalloc(n + 6);
    arr[0] = '[';
    memcpy(arr + 1, text, n);
    memcpy(arr + 1 + n, ", 7]", 5);
    jdoc d;
    jdoc_open(&d, arr, n + 5);
    free(arr);
    int64_t seven = 0;
    int ok = vr_json_enter_array(&d.j) && vr_json_next_element(&d.j) && vr_json_int64(&d.j, out);
    *next_ok = vr_json_next_element(&d.j) && vr_json_int64(&d.j, &seven) && seven == 7 &&
               !vr_json_next_element(&d.j) && !d.j.failed;
    *t = d.t;
    jdoc_close(&d);
    return ok;
}

/* head, then `count` copies of `fill`, then tail (heap). */
static char *long_number(const char *head, char fill, size_t count, const char *tail)
{
    size_t h = strlen(head), t = strlen(tail);
    char *s = vr_xmalloc(h + count + t + 1);
    memcpy(s, head, h);
    memset(s + h, fill, count);
    memcpy(s + h + count, tail, t + 1);
    return s;
}

/* Integral values within int64 are read exactly, whatever their form:
 * decimal arithmetic on the digits, no double (which would lose
 * 9223372036854775807 and misread "2.5e9" as 2 before). */
static void test_json_exponents_exact(void)
{
    static const struct {
        const char *text;
        int64_t v;
    } exact[] = {
        {"2.5e9", 2500000000LL},
        {"2.5E+9", 2500000000LL},
        {"\"2.5e9\"", 2500000000LL},
        {"1E3", 1000},
        {"1e+3", 1000},
        {"1.0", 1},
        {"4096.0", 4096},
        {"63.", 63},
        {"-4.096e3", -4096},
        {"0e0", 0},
        {"1.0e0", 1},
        {"-0.0", 0},
        {"0.000e-5", 0},
        {"0e999999999999", 0},
        {"0.00120e4", 12},
        {"120e-1", 12},
        {"1e18", 1000000000000000000LL},
        {"9.223372036854775807e18", INT64_MAX},
        {"92233720368547758.07e2", INT64_MAX},
        {"-9.223372036854775808e18", INT64_MIN},
        {"123456789012345678900000000000e-11", 1234567890123456789LL},
        {"1e0000000000000000000003", 1000},
    };
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
        int64_t v = 42;
        vr_json_faults t;
        int next_ok;
        int ok = int64_first_of_two(exact[i].text, &v, &t, &next_ok);
        OK(ok && v == exact[i].v && next_ok && t.inexact_number == 0 && t.int_overflow == 0,
           "int64(%s) = %lld exactly (got ok=%d v=%lld inexact=%llu)", exact[i].text,
           (long long)exact[i].v, ok, (long long)v, (unsigned long long)t.inexact_number);
    }

    /* Beyond the 20 digits kept: trailing zeros still count, in the point. */
    static const struct {
        const char *head;
        size_t zeros;
        const char *tail;
        int64_t v;
    } longs[] = {
        {"1", 3000, "e-3000", 1},
        {"1", 3000, "e-2999", 10},
        {"0.", 2999, "1e3000", 1},
        {"-0.", 2999, "25e3002", -250},
    };
    for (size_t i = 0; i < sizeof longs / sizeof *longs; i++) {
        char *text = long_number(longs[i].head, '0', longs[i].zeros, longs[i].tail);
        int64_t v = 42;
        vr_json_faults t;
        int next_ok;
        int ok = int64_first_of_two(text, &v, &t, &next_ok);
        OK(ok && v == longs[i].v && next_ok && t.inexact_number == 0,
           "int64(%s + %zu zeros + %s) = %lld (got ok=%d v=%lld)", longs[i].head, longs[i].zeros,
           longs[i].tail, (long long)longs[i].v, ok, (long long)v);
        free(text);
    }
}

/* Not an integer, or beyond int64, in fraction/exponent form: skipped and
 * counted, never rounded, truncated or clamped. */
static void test_json_exponents_inexact(void)
{
    static const char *const inexact[] = {
        "1e309",
        "-1e309",
        "1e999999999999",
        "1e99999999999999999999999999",
        "9.223372036854775808e18",
        "-9.223372036854775809e18",
        "1e19",
        "99999999999999999999.0",
        "1e-400",
        "1e-999999999999",
        "12e-1",
        "3.7",
        "-4.2",
        "0.5",
        "\"3.7\"",
        "123456789012345678901234567890e-10",
        "1.00000000000000000000001",
        "2.5e-1",
    };
    for (size_t i = 0; i < sizeof inexact / sizeof *inexact; i++) {
        int64_t v = 42;
        vr_json_faults t;
        int next_ok;
        int ok = int64_first_of_two(inexact[i], &v, &t, &next_ok);
        OK(!ok && v == 42 && next_ok && t.inexact_number == 1 && t.int_overflow == 0,
           "int64(%s) skipped and counted as inexact (got ok=%d v=%lld inexact=%llu)", inexact[i],
           ok, (long long)v, (unsigned long long)t.inexact_number);
    }

    /* A nonzero digit far beyond the 20 kept makes it no integer. */
    char *text = long_number("1", '0', 3000, "1e-3001");
    int64_t v = 42;
    vr_json_faults t;
    int next_ok;
    int ok = int64_first_of_two(text, &v, &t, &next_ok);
    OK(!ok && next_ok && t.inexact_number == 1, "int64(1 + 3000 zeros + 1e-3001) is inexact");
    free(text);
}

/* Timestamps: microseconds to nanoseconds with the exponent applied
 * exactly, then rounded to the nearest ns as for plain fractions. */
static void test_json_exponents_ts(void)
{
    static const struct {
        const char *text;
        int64_t ns;
    } ts[] = {
        {"1.5e1", 15000},
        {"\"1.5e1\"", 15000},
        {"2E+3", 2000000},
        {"1.712195495519689047e15", 1712195495519689047LL},
        {"1712195495519689047e-3", 1712195495519689047LL},
        {"1.5e-3", 2}, /* 1.5 ns: halves away from zero, as "0.0015" */
        {"-1.5e-3", -2},
        {"4.4e-4", 0},
        {"5e-4", 1},
        {"1e-400", 0},
        {"0e999999999999", 0},
        {"1e0000000000000000000003", 1000000},
        {"9.223372036854775807e15", INT64_MAX},
        {"-9.223372036854775808e15", INT64_MIN},
    };
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) {
        int64_t v = 12345;
        vr_json_faults t;
        int ok = us_to_ns(ts[i].text, &v, &t);
        OK(ok && v == ts[i].ns && t.int_overflow == 0 && t.inexact_number == 0,
           "us_to_ns(%s) = %lld (got ok=%d v=%lld)", ts[i].text, (long long)ts[i].ns, ok,
           (long long)v);
    }

    static const char *const beyond[] = {"1e309", "-1e309", "1e999999999999",
                                         "9.223372036854775808e15", "1e16"};
    for (size_t i = 0; i < sizeof beyond / sizeof *beyond; i++) {
        int64_t v = 12345;
        vr_json_faults t;
        int ok = us_to_ns(beyond[i], &v, &t);
        OK(!ok && v == 12345 && t.int_overflow == 1,
           "us_to_ns(%s) beyond int64 ns: refused and counted (got ok=%d v=%lld)", beyond[i], ok,
           (long long)v);
    }
}

static const char exp_trace[] =
    "{\"schemaVersion\": 1,\n"
    " \"deviceProperties\": [{\"id\": 0, \"name\": \"Exp GPU\", \"totalGlobalMem\": "
    "85899345920}],\n"
    " \"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 7, \"tid\": 7, "
    "\"ts\": 1e3, \"dur\": 1.0e3},\n"
    "  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1.25e3, \"args\": {\"Total Reserved\": 4.194304e9, "
    "\"Total Allocated\": 2.5e9, \"Bytes\": 2.5E+9, \"Addr\": 1.0e1, \"Device Id\": 0e0, "
    "\"Device Type\": 1}},\n"
    "  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1500, \"args\": {\"Total Reserved\": 2097152, "
    "\"Total Allocated\": 0, \"Bytes\": 3.7, \"Addr\": 11, \"Device Id\": 0, "
    "\"Device Type\": 1}},\n"
    "  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
    "\"pid\": 7, \"tid\": 7, \"ts\": 1.6e3, \"args\": {\"Total Reserved\": 2097152, "
    "\"Total Allocated\": 0, \"Bytes\": -25e8, \"Addr\": 10, \"Device Id\": 0, "
    "\"Device Type\": 1}}\n"
    " ]}\n";

/* Through an import: exponent forms reach the database exactly, and an
 * inexact "Bytes" skips its event and is tallied. */
static void test_json_exponents_import(void)
{
    make_tmpdir();
    vr_error err = VR_ERROR_INIT;
    vr_db *db = vr_db_open(NULL, &err);
    OK(db != NULL, "vr_db_open(NULL) (%s)", err.msg);
    if (!db) {
        remove_tmpdir();
        return;
    }
    sqlite3 *h = vr_db_handle(db);
    const char *path = tmp_path("exp.pt.trace.json");
    write_file(path, exp_trace, sizeof exp_trace - 1);
    vr_import_result res;
    int rc = vr_import_file(db, path, NULL, &res, &err);
    OK(rc == 0 && res.status == VR_IMPORTED, "import of the exponent trace (%s)",
       rc ? err.msg : "ok");
    INT_EQ(q_int(h, "SELECT count(*) FROM mem_event"), 2, "two memory events kept");
    INT_EQ(q_int(h, "SELECT bytes FROM mem_event WHERE ts_ns = 1250000"), 2500000000LL,
           "Bytes 2.5E+9 at ts 1.25e3 us");
    INT_EQ(q_int(h, "SELECT addr FROM mem_event WHERE ts_ns = 1250000"), 10, "Addr 1.0e1");
    INT_EQ(q_int(h, "SELECT total_reserved FROM mem_event WHERE ts_ns = 1250000"), 4194304000LL,
           "Total Reserved 4.194304e9");
    INT_EQ(q_int(h, "SELECT bytes FROM mem_event WHERE ts_ns = 1600000"), -2500000000LL,
           "Bytes -25e8 at ts 1.6e3 us");
    INT_EQ(q_int(h, "SELECT count FROM source_tally WHERE kind = 'inexact_number'"), 1,
           "Bytes 3.7 tallied as inexact_number");
    INT_EQ(q_int(h, "SELECT count(*) FROM source_tally WHERE kind = 'int_overflow'"), 0,
           "no int_overflow tallied");
    vr_db_close(db);
    remove_tmpdir();
}

static void test_json_strings(void)
{
    vr_json_faults t;
    char *u;

    memset(&t, 0, sizeof t);
    u = unescaped("plain text", &t);
    STR_EQ(u, "plain text", "plain string unchanged");
    free(u);

    u = unescaped("q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t", &t);
    STR_EQ(u, "q\" b\\ s/ \b\f\n\r\t", "the two-character escapes");
    INT_EQ(t.invalid_utf8, 0, "no invalid UTF-8 so far");
    free(u);

    u = unescaped("a\\u00e9b\\u20AC\\u0041", &t);
    STR_EQ(u,
           "a\xC3\xA9"
           "b\xE2\x82\xAC"
           "A",
           "\\uXXXX in 2- and 3-byte UTF-8, either case");
    free(u);

    u = unescaped("\\ud83d\\ude00!", &t);
    STR_EQ(u, "\xF0\x9F\x98\x80!", "surrogate pair -> U+1F600 in 4 bytes");
    INT_EQ(t.invalid_utf8, 0, "valid escapes are not counted");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("x\\ud83dy", &t);
    STR_EQ(u, "x\xEF\xBF\xBDy", "lone high surrogate -> U+FFFD");
    INT_EQ(t.invalid_utf8, 1, "lone surrogate counted as invalid_utf8");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("\\ude00", &t);
    STR_EQ(u, "\xEF\xBF\xBD", "lone low surrogate -> U+FFFD");
    INT_EQ(t.invalid_utf8, 1, "lone low surrogate counted");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("\\ud83d\\u0041", &t);
    STR_EQ(u,
           "\xEF\xBF\xBD"
           "A",
           "high surrogate followed by a non-surrogate escape");
    INT_EQ(t.invalid_utf8, 1, "counted once per string");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("a\xff"
                  "b",
                  &t);
    STR_EQ(u,
           "a\xEF\xBF\xBD"
           "b",
           "invalid byte 0xFF -> U+FFFD");
    INT_EQ(t.invalid_utf8, 1, "invalid UTF-8 counted");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("\xC0\xAF|\xED\xA0\x80|\xE2\x82", &t);
    STR_EQ(u,
           "\xEF\xBF\xBD\xEF\xBF\xBD|\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD|"
           "\xEF\xBF\xBD\xEF\xBF\xBD",
           "overlong, encoded surrogate and cut sequence -> one U+FFFD per byte");
    INT_EQ(t.invalid_utf8, 1, "one string with invalid UTF-8 counted once");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", &t);
    STR_EQ(u, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", "valid multibyte UTF-8 passes through");
    INT_EQ(t.invalid_utf8, 0, "valid UTF-8 not counted");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("nul\\u0000here", &t);
    STR_EQ(u, "nul\xEF\xBF\xBDhere", "\\u0000 -> U+FFFD (no NUL in C strings)");
    free(u);

    u = unescaped("tab\x01"
                  "x",
                  &t);
    STR_EQ(u, "tab x", "a raw control character becomes a space");
    free(u);

    memset(&t, 0, sizeof t);
    u = unescaped("bad\\q", &t);
    STR_EQ(u, "badq", "an unknown escape keeps its character");
    INT_EQ(t.invalid_utf8, 1, "an unknown escape is counted");
    free(u);

    /* Escapes cut at the end of the span never read past it. */
    static const char *const cut[] = {"\\", "a\\u", "a\\u12", "a\\ud83d\\u", "a\\ud83d\\ude0"};
    for (size_t i = 0; i < sizeof cut / sizeof *cut; i++) {
        size_t n = strlen(cut[i]);
        char *copy = vr_xmalloc(n);
        memcpy(copy, cut[i], n);
        vr_json_str s = {copy, n, 1};
        vr_buf out = VR_BUF_INIT;
        memset(&t, 0, sizeof t);
        vr_json_unescape(&s, &out, &t);
        OK(t.invalid_utf8 == 1, "cut escape \"%s\" handled and counted", cut[i]);
        vr_buf_free(&out);
        free(copy);
    }

    /* Raw control characters inside a string are counted by the reader. */
    static const char ctl[] = "{\"name\": \"a\tb\x01"
                              "c\", \"x\": 1}";
    jdoc d;
    jdoc_open(&d, ctl, sizeof ctl - 1);
    vr_json_str key, s;
    vr_json_enter_object(&d.j);
    OK(vr_json_next_member(&d.j, &key) && vr_json_string(&d.j, &s) && s.len == 5,
       "string with raw control characters read");
    INT_EQ(d.t.control_chars, 2, "two raw control characters counted");
    jdoc_close(&d);

    /* An unescaped quote inside a string is taken as part of it. */
    static const char rq[] = "{\"name\": \"a\"b\", \"ph\": \"X\"}";
    jdoc_open(&d, rq, sizeof rq - 1);
    char *name = NULL, *ph = NULL;
    vr_json_enter_object(&d.j);
    while (vr_json_next_member(&d.j, &key)) {
        if (vr_json_str_eq(&key, "name") && vr_json_string(&d.j, &s))
            name = str_dup(&s);
        else if (vr_json_str_eq(&key, "ph") && vr_json_string(&d.j, &s))
            ph = str_dup(&s);
        else
            vr_json_skip(&d.j);
    }
    STR_EQ(name, "a\"b", "unescaped quote repaired: name is a\"b");
    STR_EQ(ph, "X", "member after the repaired string read");
    INT_EQ(d.t.repaired_quotes, 1, "repaired quote counted");
    OK(!d.j.failed, "no failure");
    free(name);
    free(ph);
    jdoc_close(&d);

    /* has_escapes is set only when there are escapes. */
    static const char he[] = "[\"a\\nb\", \"ab\"]";
    jdoc_open(&d, he, sizeof he - 1);
    vr_json_str s1 = {0}, s2 = {0};
    vr_json_enter_array(&d.j);
    vr_json_next_element(&d.j);
    vr_json_string(&d.j, &s1);
    vr_json_next_element(&d.j);
    vr_json_string(&d.j, &s2);
    OK(s1.has_escapes && !s2.has_escapes && s1.len == 4 && s2.len == 2,
       "spans are raw; has_escapes marks escaped ones");
    jdoc_close(&d);

    vr_json_str lit = {"abc", 3, 0};
    OK(vr_json_str_eq(&lit, "abc") && !vr_json_str_eq(&lit, "ab") &&
           !vr_json_str_eq(&lit, "abcd"),
       "vr_json_str_eq compares length and bytes");
}

static void test_json_skip_and_truncation(void)
{
    /* Skipping a deeply nested value is iterative: 100000 levels. */
    enum { DEEP = 100000 };
    vr_buf doc = VR_BUF_INIT;
    vr_buf_puts(&doc, "{\"a\": ");
    for (int i = 0; i < DEEP; i++)
        vr_buf_puts(&doc, i % 2 ? "{\"k\":" : "[");
    vr_buf_puts(&doc, "\"}]\"");
    for (int i = DEEP - 1; i >= 0; i--)
        vr_buf_puts(&doc, i % 2 ? "}" : "]");
    vr_buf_puts(&doc, ", \"b\": 5}");
    jdoc d;
    jdoc_open(&d, doc.data, doc.len);
    vr_json_str key;
    int64_t b = 0;
    vr_json_enter_object(&d.j);
    OK(vr_json_next_member(&d.j, &key) && vr_json_str_eq(&key, "a"), "key a");
    vr_json_skip(&d.j);
    OK(!d.j.failed, "skipped %d nested levels", DEEP);
    OK(vr_json_next_member(&d.j, &key) && vr_json_str_eq(&key, "b") && vr_json_int64(&d.j, &b) &&
           b == 5,
       "member after the deep value read");
    jdoc_close(&d);
    vr_buf_free(&doc);

    /* Skip/raw of scalars and junk stop at delimiters. */
    static const char junk[] = "[true, null, @#!, -1.5e+3, \"x\"]";
    jdoc_open(&d, junk, sizeof junk - 1);
    int count = 0;
    vr_json_enter_array(&d.j);
    while (vr_json_next_element(&d.j) && count < 10) {
        vr_json_str raw;
        vr_json_raw(&d.j, &raw);
        count++;
    }
    INT_EQ(count, 5, "five elements skipped as raw values");
    OK(!d.j.failed, "junk scalar skipped without failure");
    jdoc_close(&d);

    /* Every proper prefix of an event is reported as failed, and the
     * reader stays within the prefix (the copy has exactly its size). */
    static const char ev[] =
        "{\"ph\": \"X\", \"name\": \"a\\\"b\\u00e9\\ud83d\\ude00\", \"ok\": true, \"no\": false, "
        "\"nil\": null, \"tid\": \"25738\", \"ts\": -1712195495519689.047, "
        "\"args\": {\"list\": [1, [2, {\"x\": \"}]\"}], 3e5], \"q\": \"a\"b\"}}";
    vr_buf scratch = VR_BUF_INIT;
    int all_failed = 1, walked = 0;
    for (size_t len = 1; len < sizeof ev - 1; len++) {
        jdoc_open(&d, ev, len);
        walk(&d.j, &scratch, 0);
        if (!d.j.failed) {
            all_failed = 0;
            printf("# prefix of %zu bytes not reported as failed\n", len);
        }
        jdoc_close(&d);
        walked++;
    }
    OK(all_failed, "all %d truncated prefixes set failed", walked);
    jdoc_open(&d, ev, sizeof ev - 1);
    int values = walk(&d.j, &scratch, 0);
    OK(!d.j.failed && values > 10, "the whole event walks without failure (%d values)", values);
    jdoc_close(&d);

    /* Truncated in the middle of a skip, a string, a bool. */
    static const char *const cuts[] = {
        "{\"a\": [1, [2", "{\"a\": \"abc", "{\"a\": tr", "[", "{", "{\"a\"", "{\"a\":", "\"",
        "{\"a\": \"x\\"};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        jdoc_open(&d, cuts[i], strlen(cuts[i]));
        walk(&d.j, &scratch, 0);
        OK(d.j.failed, "truncated \"%s\" sets failed", cuts[i]);
        jdoc_close(&d);
    }
    /* Empty input: nothing to read. */
    jdoc_open(&d, "", 0);
    OK(vr_json_peek(&d.j) == VR_JSON_NONE && !vr_json_enter_object(&d.j), "empty input: NONE");
    jdoc_close(&d);
    vr_buf_free(&scratch);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_json_reader);
    RUN(test_json_numbers);
    RUN(test_json_ts_edge);
    RUN(test_json_exponents_exact);
    RUN(test_json_exponents_inexact);
    RUN(test_json_exponents_ts);
    RUN(test_json_exponents_import);
    RUN(test_json_strings);
    RUN(test_json_skip_and_truncation);
    return harness_summary();
}
