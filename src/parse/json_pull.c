#include "parse/json_pull.h"

#include "util/utf8.h"

#include <string.h>

static int is_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Kineto pretty-prints: most calls find a run of indentation. */
static void skip_ws(vr_json *j)
{
    const char *p = j->p, *end = j->end;
    while (p < end && (unsigned char)*p <= ' ' && is_ws((unsigned char)*p))
        p++;
    j->p = p;
}

void vr_json_init(vr_json *j, const char *bytes, size_t len, vr_json_faults *t)
{
    j->p = bytes;
    j->end = bytes + len;
    j->depth = 0;
    j->failed = 0;
    j->faults = t;
}

vr_json_kind vr_json_peek(vr_json *j)
{
    skip_ws(j);
    if (j->failed || j->p >= j->end)
        return VR_JSON_NONE;
    switch (*j->p) {
    case '{':
        return VR_JSON_OBJECT;
    case '[':
        return VR_JSON_ARRAY;
    case '"':
        return VR_JSON_STRING;
    case 't':
        return VR_JSON_TRUE;
    case 'f':
        return VR_JSON_FALSE;
    case 'n':
        return VR_JSON_NULL;
    default:
        return VR_JSON_NUMBER;
    }
}

static int fail(vr_json *j)
{
    j->failed = 1;
    return 0;
}

/* Same rule as json_scan: a quote ends the string only if what follows could
 * follow a string. */
static int quote_closes(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (is_ws(c))
            continue;
        return c == ',' || c == ':' || c == '}' || c == ']';
    }
    return 1;
}

/* 1 for the bytes that end a run of plain string bytes. */
static const unsigned char string_stop[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,           1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1 /* '"' */, ['\\'] = 1};

static int read_string(vr_json *j, vr_json_str *out)
{
    const char *p = j->p + 1, *end = j->end;
    out->s = p;
    out->has_escapes = 0;
    while (p < end) {
        while (p < end && !string_stop[(unsigned char)*p])
            p++;
        if (p >= end)
            break;
        unsigned char c = (unsigned char)*p;
        if (c == '\\') {
            out->has_escapes = 1;
            p += 2;
            continue;
        }
        if (c == '"') {
            if (quote_closes(p, end))
                break;
            if (j->faults)
                j->faults->repaired_quotes++;
        } else if (c < 0x20 && j->faults) {
            j->faults->control_chars++;
        }
        p++;
    }
    if (p >= end)
        return fail(j);
    out->len = (size_t)(p - out->s);
    j->p = p + 1;
    return 1;
}

static const char *scan_number(const char *p, const char *end)
{
    while (p < end && ((*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == '.' ||
                       *p == 'e' || *p == 'E'))
        p++;
    return p;
}

void vr_json_skip(vr_json *j)
{
    vr_json_str tmp;
    int depth = 0;
    do {
        skip_ws(j);
        if (j->p >= j->end) {
            fail(j);
            return;
        }
        char c = *j->p;
        if (c == '"') {
            if (!read_string(j, &tmp))
                return;
        } else if (c == '{' || c == '[') {
            depth++;
            j->p++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) {
                fail(j);
                return;
            }
            depth--;
            j->p++;
        } else if (c == ',' || c == ':') {
            if (depth == 0) {
                fail(j);
                return;
            }
            j->p++;
        } else {
            const char *q = scan_number(j->p, j->end);
            if (q == j->p) { /* true, false, null, or junk: to a delimiter */
                while (q < j->end && !is_ws((unsigned char)*q) && *q != ',' && *q != '}' &&
                       *q != ']' && *q != ':')
                    q++;
            }
            j->p = q;
        }
    } while (depth > 0 && !j->failed);
}

int vr_json_raw(vr_json *j, vr_json_str *out)
{
    skip_ws(j);
    out->s = j->p;
    out->has_escapes = 0;
    vr_json_skip(j);
    out->len = (size_t)(j->p - out->s);
    return !j->failed;
}

int vr_json_enter_object(vr_json *j)
{
    if (vr_json_peek(j) != VR_JSON_OBJECT) {
        vr_json_skip(j);
        return 0;
    }
    j->p++;
    j->depth++;
    return 1;
}

int vr_json_enter_array(vr_json *j)
{
    if (vr_json_peek(j) != VR_JSON_ARRAY) {
        vr_json_skip(j);
        return 0;
    }
    j->p++;
    j->depth++;
    return 1;
}

/* Consumes a separating ',' if present; 0 when the container closes. */
static int next_in_container(vr_json *j, char close)
{
    skip_ws(j);
    if (j->p < j->end && *j->p == ',') {
        j->p++;
        skip_ws(j);
    }
    if (j->p >= j->end)
        return fail(j);
    if (*j->p == close) {
        j->p++;
        j->depth--;
        return 0;
    }
    return 1;
}

int vr_json_next_member(vr_json *j, vr_json_str *key)
{
    if (j->failed || !next_in_container(j, '}'))
        return 0;
    if (*j->p != '"' || !read_string(j, key))
        return fail(j);
    skip_ws(j);
    if (j->p >= j->end || *j->p != ':')
        return fail(j);
    j->p++;
    return 1;
}

int vr_json_next_element(vr_json *j)
{
    return !j->failed && next_in_container(j, ']');
}

int vr_json_string(vr_json *j, vr_json_str *out)
{
    if (vr_json_peek(j) != VR_JSON_STRING) {
        vr_json_skip(j);
        return 0;
    }
    return read_string(j, out);
}

int vr_json_parse_int64(const char *s, size_t n, int64_t *out, int *overflow)
{
    const char *p = s, *end = s + n;
    int neg = 0;
    *overflow = 0;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    if (p >= end || *p < '0' || *p > '9')
        return 0;
    uint64_t v = 0;
    const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (limit - d) / 10) {
            *overflow = 1;
            v = limit;
            while (p < end && *p >= '0' && *p <= '9')
                p++;
            break;
        }
        v = v * 10 + d;
    }
    if (neg)
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    else
        *out = (int64_t)v;
    return 1;
}

/* A number, or a string holding one, as a text span. */
static int number_text(vr_json *j, const char **s, size_t *n)
{
    vr_json_kind k = vr_json_peek(j);
    if (k == VR_JSON_NUMBER) {
        const char *q = scan_number(j->p, j->end);
        if (q == j->p)
            return fail(j);
        *s = j->p;
        *n = (size_t)(q - j->p);
        j->p = q;
        return 1;
    }
    if (k == VR_JSON_STRING) {
        vr_json_str str;
        if (!read_string(j, &str))
            return 0;
        *s = str.s;
        *n = str.len;
        return 1;
    }
    vr_json_skip(j);
    return 0;
}

/*-*** numbers as exact decimals ***/

/* JSON numbers may carry a fraction and an exponent ("2.5e9"). Reading
 * them through a double would lose digits beyond 2^53, so they are read as
 * text into
 *
 *     value = sign * 0.d1 d2 ... dn * 10^point
 *
 * with d1 the first nonzero digit and dn the last one (n = 0 for zero).
 * An integer needs at most 19 digits, and rounding to it one more, so only
 * the first DEC_KEEP digits are kept; the rest only move n. */
#define DEC_KEEP 20
/* Exponents saturate here: far beyond any int64 (19 digits) and beyond
 * any text in memory, so a saturated exponent still gives the right
 * answer and adding it to the point cannot overflow. */
#define DEC_CAP 1000000000000000000LL

typedef struct {
    int neg;
    int plain;                    /* digits only: no '.', no exponent */
    unsigned char lead[DEC_KEEP]; /* d1..d20 (those seen), as values 0-9 */
    int64_t nsig;                 /* n: digits up to the last nonzero one */
    int64_t seen;                 /* digits since d1, zeros included */
    int64_t point;
} decimal;

static int64_t clamp_cap(int64_t v)
{
    return v > DEC_CAP ? DEC_CAP : v < -DEC_CAP ? -DEC_CAP : v;
}

/* One run of digits. Before the '.', each digit from d1 on moves the point
 * right; after it, each zero before d1 moves it left. The counts are
 * bounded by the text's length, so they cannot overflow. */
static const char *read_digits(const char *p, const char *end, decimal *d, int before_point)
{
    int64_t seen = d->seen, nsig = d->nsig, point = d->point;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        unsigned char digit = (unsigned char)(*p - '0');
        if (seen == 0 && digit == 0) {
            point -= !before_point;
            continue;
        }
        if (seen < DEC_KEEP)
            d->lead[seen] = digit;
        seen++;
        if (digit)
            nsig = seen;
        point += before_point;
    }
    d->seen = seen;
    d->nsig = nsig;
    d->point = point;
    return p;
}

/* "e12", "E+3", "e-400", "e0000000000000000000003": added to the point.
 * A bare "e" is not an exponent and is left unread, like other trailing
 * text. */
static const char *read_exponent(const char *p, const char *end, decimal *d)
{
    if (p >= end || (*p != 'e' && *p != 'E'))
        return p;
    const char *q = p + 1;
    int neg = 0;
    if (q < end && (*q == '+' || *q == '-'))
        neg = *q++ == '-';
    if (q >= end || *q < '0' || *q > '9')
        return p;
    int64_t e = 0;
    for (; q < end && *q >= '0' && *q <= '9'; q++)
        e = e >= DEC_CAP / 10 ? DEC_CAP : e * 10 + (*q - '0');
    d->point = clamp_cap(d->point) + (neg ? -e : e);
    d->plain = 0;
    return q;
}

/* The number at the start of [s, s+n): sign, digits, optional '.' and
 * digits, optional exponent; text after it is ignored, as
 * vr_json_parse_int64 does. 0 when it does not start with a digit. */
static int read_decimal(const char *s, size_t n, decimal *d)
{
    const char *p = s, *end = s + n;
    d->neg = 0;
    d->plain = 1;
    d->nsig = d->seen = d->point = 0; /* lead[] is read only below seen */
    if (p < end && (*p == '-' || *p == '+'))
        d->neg = *p++ == '-';
    if (p >= end || *p < '0' || *p > '9')
        return 0;
    p = read_digits(p, end, d, 1);
    if (p < end && *p == '.') {
        d->plain = 0;
        p = read_digits(p + 1, end, d, 0);
    }
    read_exponent(p, end, d);
    return 1;
}

static int decimal_is_integral(const decimal *d)
{
    return d->nsig == 0 || d->nsig <= d->point;
}

/* Largest magnitude an int64 of that sign can hold. */
static uint64_t magnitude_limit(int neg)
{
    return neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
}

/* The digits before the point, as a magnitude within the int64 range of
 * its sign; 0 when it does not fit. At most 19 steps, whatever the
 * exponent. */
static int decimal_integer_part(const decimal *d, uint64_t *out)
{
    const uint64_t limit = magnitude_limit(d->neg);
    uint64_t v = 0;
    if (d->nsig > 0 && d->point > 19)
        return 0;
    for (int64_t i = 0; d->nsig > 0 && i < d->point; i++) {
        unsigned digit = i < d->nsig ? d->lead[i] : 0;
        if (v > (limit - digit) / 10)
            return 0;
        v = v * 10 + digit;
    }
    *out = v;
    return 1;
}

/* The first digit after the point (0 when there is none). */
static unsigned decimal_first_fraction_digit(const decimal *d)
{
    if (d->point < 0 || d->point >= d->nsig || d->point >= DEC_KEEP)
        return 0;
    return d->lead[d->point];
}

static int64_t signed_value(int neg, uint64_t magnitude)
{
    if (!neg)
        return (int64_t)magnitude;
    return magnitude == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)magnitude;
}

/* Rounded to the nearest integer, halves away from zero; 0 when the
 * result does not fit in int64. */
static int decimal_round(const decimal *d, int64_t *out)
{
    uint64_t v;
    if (!decimal_integer_part(d, &v))
        return 0;
    if (decimal_first_fraction_digit(d) >= 5) {
        if (v == magnitude_limit(d->neg))
            return 0;
        v++;
    }
    *out = signed_value(d->neg, v);
    return 1;
}

/* Most numbers in a trace are short plain integers (sizes, addresses,
 * ids, 2022 timestamps): those are read in one loop, exactly. Anything
 * else (a fraction, an exponent, a '+', 19 digits or more, trailing text)
 * takes the decimal path. */
static int read_short_plain(const char *s, size_t n, int64_t *out)
{
    size_t i = n > 0 && s[0] == '-';
    if (n <= i || n - i > 18)
        return 0;
    int64_t v = 0;
    for (size_t k = i; k < n; k++) {
        unsigned digit = (unsigned)((unsigned char)s[k] - '0');
        if (digit > 9)
            return 0;
        v = v * 10 + (int64_t)digit;
    }
    *out = i ? -v : v;
    return 1;
}

/* See json_pull.h for the rule. */
int vr_json_int64(vr_json *j, int64_t *out)
{
    const char *s;
    size_t n;
    decimal d;
    uint64_t v;
    if (!number_text(j, &s, &n))
        return 0;
    if (read_short_plain(s, n, out))
        return 1;
    if (!read_decimal(s, n, &d))
        return 0;
    if (decimal_is_integral(&d) && decimal_integer_part(&d, &v)) {
        *out = signed_value(d.neg, v);
        return 1;
    }
    if (!d.plain) { /* "2.5", "1e309": a value we cannot give exactly */
        if (j->faults)
            j->faults->inexact_number++;
        return 0;
    }
    if (j->faults) /* a plain integer beyond int64: clamped, as it always was */
        j->faults->int_overflow++;
    *out = d.neg ? INT64_MIN : INT64_MAX;
    return 1;
}

/* Microseconds with at most three decimals ("1419247332972.313", as
 * kineto writes every ts and dur) to nanoseconds: exact, no rounding, so
 * the same as the decimal path gives; anything else is left to it. */
static int read_short_us(const char *s, size_t n, int64_t *out_ns)
{
    size_t i = n > 0 && s[0] == '-', k = i;
    int64_t us = 0, frac = 0;
    for (; k < n && k - i < 15; k++) {
        unsigned digit = (unsigned)((unsigned char)s[k] - '0');
        if (digit > 9)
            break;
        us = us * 10 + (int64_t)digit;
    }
    if (k == i || k + 1 >= n || s[k] != '.' || n - (k + 1) > 3)
        return 0;
    int places = 0;
    for (k++; k < n; k++, places++) {
        unsigned digit = (unsigned)((unsigned char)s[k] - '0');
        if (digit > 9)
            return 0;
        frac = frac * 10 + (int64_t)digit;
    }
    for (; places < 3; places++)
        frac *= 10;
    int64_t ns = us * 1000 + frac;
    *out_ns = i ? -ns : ns;
    return 1;
}

int vr_json_us_to_ns(vr_json *j, int64_t *out_ns)
{
    const char *s;
    size_t n;
    decimal d;
    int64_t us;
    if (!number_text(j, &s, &n))
        return 0;
    if (read_short_plain(s, n, &us) && us <= INT64_MAX / 1000 && us >= -(INT64_MAX / 1000)) {
        *out_ns = us * 1000;
        return 1;
    }
    if (read_short_us(s, n, out_ns))
        return 1;
    if (!read_decimal(s, n, &d))
        return 0;
    d.point = clamp_cap(d.point) + 3; /* microseconds to nanoseconds, exactly */
    if (!decimal_round(&d, out_ns)) {
        if (j->faults)
            j->faults->int_overflow++;
        return 0;
    }
    return 1;
}

int vr_json_bool(vr_json *j, int *out)
{
    vr_json_kind k = vr_json_peek(j);
    if (k == VR_JSON_TRUE || k == VR_JSON_FALSE) {
        size_t n = k == VR_JSON_TRUE ? 4 : 5;
        if ((size_t)(j->end - j->p) < n)
            return fail(j);
        *out = k == VR_JSON_TRUE;
        j->p += n;
        return 1;
    }
    vr_json_skip(j);
    return 0;
}

int vr_json_str_eq(const vr_json_str *s, const char *lit)
{
    size_t n = strlen(lit);
    return s->len == n && memcmp(s->s, lit, n) == 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void put_utf8(vr_buf *out, uint32_t cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6)), b[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12)), b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18)), b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    vr_buf_append(out, b, n);
}

static int read_hex4(const char *p, const char *end, uint32_t *v)
{
    if (end - p < 4)
        return 0;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0)
            return 0;
        *v = *v << 4 | (uint32_t)h;
    }
    return 1;
}

/* Length of a valid UTF-8 sequence at p, or 0. */
static size_t utf8_valid_len(const unsigned char *p, const unsigned char *end)
{
    uint32_t cp;
    return vr_utf8_decode((const char *)p, (size_t)(end - p), &cp);
}

static const char *unescape_one(const char *p, const char *end, vr_buf *out, int *bad)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (p + 1 >= end) {
        *bad = 1;
        return end;
    }
    const char *hit = strchr(from, p[1]);
    if (p[1] && hit) {
        vr_buf_putc(out, to[hit - from]);
        return p + 2;
    }
    uint32_t cp, lo;
    if (p[1] != 'u' || !read_hex4(p + 2, end, &cp)) {
        *bad = 1;
        vr_buf_putc(out, p[1]);
        return p + 2;
    }
    p += 6;
    if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
        read_hex4(p + 2, end, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        p += 6;
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
        cp = 0xFFFD;
        *bad = 1;
    }
    if (cp == 0) /* NUL would cut C strings short later */
        cp = 0xFFFD;
    put_utf8(out, cp);
    return p;
}

void vr_json_sanitize_utf8(const char *s, size_t len, vr_buf *out, vr_json_faults *t)
{
    const char *p = s, *end = s + len;
    int bad = 0;
    while (p < end) {
        size_t n = utf8_valid_len((const unsigned char *)p, (const unsigned char *)end);
        if (!n) {
            put_utf8(out, 0xFFFD);
            bad = 1;
            p++;
        } else if (n == 1 && (unsigned char)*p < 0x20) {
            vr_buf_putc(out, ' ');
            p++;
        } else {
            vr_buf_append(out, p, n);
            p += n;
        }
    }
    if (bad && t)
        t->invalid_utf8++;
}

void vr_json_unescape(const vr_json_str *s, vr_buf *out, vr_json_faults *t)
{
    const char *p = s->s, *end = s->s + s->len;
    int bad = 0;
    vr_buf_reserve(out, s->len);
    while (p < end) {
        const char *run = p;
        while (p < end && (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x80 && *p != '\\')
            p++;
        if (p > run)
            vr_buf_append(out, run, (size_t)(p - run));
        if (p >= end)
            break;
        if (*p == '\\') {
            p = unescape_one(p, end, out, &bad);
        } else if ((unsigned char)*p < 0x20) {
            vr_buf_putc(out, ' '); /* raw control characters: keep the text readable */
            p++;
        } else {
            size_t n = utf8_valid_len((const unsigned char *)p, (const unsigned char *)end);
            if (n) {
                vr_buf_append(out, p, n);
                p += n;
            } else {
                put_utf8(out, 0xFFFD);
                bad = 1;
                p++;
            }
        }
    }
    if (bad && t)
        t->invalid_utf8++;
}
