/*-*** json_pull.h: a pull reader for one small JSON value held in memory ***/
/*
 * Used on the bytes of one event (as delivered by json_scan) to pick out the
 * fields an importer needs without building a tree or allocating. The
 * reader is tolerant where real traces are broken: raw control characters
 * in strings, unescaped quotes (same rule as json_scan), invalid UTF-8 and
 * integers beyond int64 are accepted and counted in vr_json_faults.
 *
 * Numbers are read as decimal text, never through a double: "2.5e9" is
 * exactly 2500000000, and no digit beyond 2^53 is lost.
 *
 * Strings are returned as spans into the input (raw, still escaped, with
 * has_escapes set); vr_json_unescape() decodes one into a caller buffer,
 * replacing invalid UTF-8 with U+FFFD.
 *
 * Ownership: nothing is allocated; spans point into the caller's bytes.
 */
#ifndef VR_JSON_PULL_H
#define VR_JSON_PULL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/buf.h"

typedef struct {
    uint64_t invalid_utf8; /* strings with invalid UTF-8 (decoded ones) */
    uint64_t control_chars;
    uint64_t int_overflow;   /* integers beyond int64 (plain, clamped),
                                   times beyond int64 ns (refused) */
    uint64_t inexact_number; /* fraction/exponent numbers that are not an
                                   integer within int64 (refused) */
    uint64_t repaired_quotes;
    uint64_t base_time_missing; /* relative times without their base (1) */
} vr_json_faults;

typedef struct {
    const char *p, *end;
    int depth;
    int failed;
    vr_json_faults *faults; /* may be NULL */
} vr_json;

typedef struct {
    const char *s;
    size_t len;
    int has_escapes;
} vr_json_str;

typedef enum {
    VR_JSON_NONE, /* end of input or error */
    VR_JSON_OBJECT,
    VR_JSON_ARRAY,
    VR_JSON_STRING,
    VR_JSON_NUMBER,
    VR_JSON_TRUE,
    VR_JSON_FALSE,
    VR_JSON_NULL
} vr_json_kind;

void vr_json_init(vr_json *j, const char *bytes, size_t len, vr_json_faults *t);

/* Kind of the next value (skips whitespace), without consuming it. */
vr_json_kind vr_json_peek(vr_json *j);

/* Enters an object; returns 0 if the next value is not one. */
int vr_json_enter_object(vr_json *j);
/* Next member of the current object: sets *key and returns 1, positioned at
 * the member's value; returns 0 at the closing '}' (consumed) or on error. */
int vr_json_next_member(vr_json *j, vr_json_str *key);

int vr_json_enter_array(vr_json *j);
/* Returns 1 when another element follows (positioned at it), 0 at ']'. */
int vr_json_next_element(vr_json *j);

/* Readers consume the next value. On a kind mismatch they skip it and
 * return 0. */
int vr_json_string(vr_json *j, vr_json_str *out);
/* Integer, from a number or a numeric string ("25738"), read exactly:
 *  - plain digits ("-4096"): beyond int64 it clamps to INT64_MIN/MAX,
 *    counts int_overflow and returns 1 (traces carry such ids);
 *  - with a fraction and/or an exponent ("4096.0", "2.5E+9", "1e3"): read
 *    when the value is an integer within int64; otherwise ("3.7", "1e-400",
 *    "1e309") it is not rounded or clamped but skipped: counts
 *    inexact_number and returns 0, as for a kind mismatch.
 * Text after the number inside a string ("12abc") is ignored. */
int vr_json_int64(vr_json *j, int64_t *out);
/* A timestamp in microseconds, written as an integer, with a fraction
 * ("1712195495519689.047") and/or an exponent ("1.5e1"), parsed as text
 * into integer nanoseconds, rounded to the nearest (halves away from zero),
 * exponent included: a time needs no exact nanosecond. Also accepts the
 * number as a string. Beyond int64 nanoseconds: counts int_overflow and
 * returns 0. */
int vr_json_us_to_ns(vr_json *j, int64_t *out_ns);
int vr_json_bool(vr_json *j, int *out);
void vr_json_skip(vr_json *j);

/* Raw bytes of the next value, consumed. */
int vr_json_raw(vr_json *j, vr_json_str *out);

int vr_json_str_eq(const vr_json_str *s, const char *lit);
/* The same for a string literal, without strlen. */
#define VR_JSON_EQ(str, lit) \
    ((str)->len == sizeof(lit) - 1 && memcmp((str)->s, (lit), sizeof(lit) - 1) == 0)

/* Appends the decoded string to `out` (UTF-8; invalid sequences and lone
 * surrogates become U+FFFD and are counted). */
void vr_json_unescape(const vr_json_str *s, vr_buf *out, vr_json_faults *t);

/* Appends already-decoded text (from cJSON) with invalid UTF-8 replaced by
 * U+FFFD (counted) and control characters by spaces. */
void vr_json_sanitize_utf8(const char *s, size_t len, vr_buf *out, vr_json_faults *t);

/* Parses the decimal digits at the start of [s, s+n) ("-12", "12abc") as
 * int64; returns 0 if it does not start with one. No fraction or exponent:
 * "2.5e9" reads as 2 here; use vr_json_int64 for JSON values. Beyond
 * int64: clamps and sets *overflow. */
int vr_json_parse_int64(const char *s, size_t n, int64_t *out, int *overflow);

#endif
