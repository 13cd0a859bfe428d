/* The scanner is a byte-level state machine. Its hot loop (inside a value)
 * only looks for the bytes that change state: quotes, backslashes and
 * brackets, found through lookup tables so long strings are skipped fast. */
#include "parse/json_scan.h"

#include <stdio.h>
#include <string.h>

enum {
    S_TOP,        /* before the document */
    S_OBJ_KEY,    /* expecting a key or '}' */
    S_KEY,        /* inside a key string */
    S_COLON,      /* expecting ':' */
    S_VALUE,      /* expecting a member value */
    S_OBJ_NEXT,   /* expecting ',' or '}' */
    S_ARR_ELEM,   /* expecting an element, ',' or ']' */
    S_NEST_OUTER, /* in the nested array: expecting an array, an element, ',' or ']' */
    S_IN_VALUE,   /* inside a value being delivered */
    S_DONE,
    S_ERROR
};

/* Four bytes from c on, in a designated initializer. */
#define STOP4(c) [(c)] = 1, [(c) + 1] = 1, [(c) + 2] = 1, [(c) + 3] = 1

/* 1: ends a run of string bytes (control bytes, the quote, the escape). */
static const unsigned char string_stop[256] = {
    STOP4(0x00), STOP4(0x04), STOP4(0x08), STOP4(0x0c), STOP4(0x10),
    STOP4(0x14), STOP4(0x18), STOP4(0x1c), ['"'] = 1,   ['\\'] = 1};
/* 1: matters outside strings. */
static const unsigned char struct_stop[256] = {
    ['"'] = 1, ['{'] = 1, ['}'] = 1, ['['] = 1, [']'] = 1};

static int is_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

void vr_json_scan_init(vr_json_scan *s, const char *stream_key, vr_json_scan_member_fn on_member,
                       vr_json_scan_element_fn on_element, void *ud)
{
    memset(s, 0, sizeof *s);
    s->stream_key = stream_key;
    s->on_member = on_member;
    s->on_element = on_element;
    s->ud = ud;
    s->state = S_TOP;
}

void vr_json_scan_nest(vr_json_scan *s, const char *key, vr_json_scan_nested_fn on_nested)
{
    s->nested_key = key;
    s->on_nested = on_nested;
}

void vr_json_scan_free(vr_json_scan *s)
{
    vr_buf_free(&s->key);
    vr_buf_free(&s->value);
}

static vr_json_scan_status syntax(vr_json_scan *s, uint64_t offset, const char *what,
                                  unsigned char found)
{
    s->state = S_ERROR;
    s->error_offset = offset;
    if (found >= 0x20 && found < 0x7f)
        snprintf(s->error, sizeof s->error, "expected %s, found '%c'", what, found);
    else
        snprintf(s->error, sizeof s->error, "expected %s, found byte 0x%02x", what, found);
    return VR_JSON_SCAN_SYNTAX;
}

/* A quote closes a string when what follows it could follow a string in
 * JSON; otherwise it is an unescaped quote inside the text. Returns 1 or 0,
 * or -1 when the chunk ends before anything but whitespace follows: the
 * next chunk decides, so the result never depends on where chunks split.
 * `p` is just after the quote. */
static int quote_closes(const char *p, const char *end)
{
    for (; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (is_ws(c))
            continue;
        return c == ',' || c == ':' || c == '}' || c == ']';
    }
    return -1;
}

/* Scans string bytes from p; returns the position after the closing quote,
 * or `end` when the string goes on into the next chunk. */
static const char *scan_string(vr_json_scan *s, const char *p, const char *end)
{
    if (s->escaped) {
        s->escaped = 0;
        if (++p >= end)
            return end;
    }
    if (s->quote_pending) { /* a quote ended the last chunk */
        int closes = quote_closes(p, end);
        if (closes < 0)
            return end;
        s->quote_pending = 0;
        if (closes) {
            s->in_string = 0;
            return p;
        }
        s->repaired_quotes++;
    }
    for (;;) {
        while (p < end && !string_stop[(unsigned char)*p])
            p++;
        if (p >= end)
            return end;
        unsigned char c = (unsigned char)*p;
        if (c == '\\') {
            if (p + 1 >= end) {
                s->escaped = 1;
                return end;
            }
            p += 2;
        } else if (c == '"') {
            int closes = s->depth > 0 ? quote_closes(p + 1, end) : 1;
            if (closes == 0) {
                s->repaired_quotes++;
                p++;
                continue;
            }
            if (closes < 0) {
                s->quote_pending = 1;
                return end;
            }
            s->in_string = 0;
            return p + 1;
        } else {
            s->control_chars++;
            p++;
        }
    }
}

/* Advances through a value; returns the position just after it, or NULL
 * when it continues past `end`. */
static const char *scan_value(vr_json_scan *s, const char *p, const char *end, const char *base,
                              vr_json_scan_status *st)
{
    for (;;) {
        if (s->in_string) {
            p = scan_string(s, p, end);
            if (s->in_string)
                return NULL;
            if (s->depth == 0)
                return p;
            continue;
        }
        if (s->depth == 0) { /* a bare scalar: ends at a delimiter */
            while (p < end && !is_ws((unsigned char)*p) && *p != ',' && *p != '}' && *p != ']')
                p++;
            return p < end ? p : NULL;
        }
        while (p < end && !struct_stop[(unsigned char)*p])
            p++;
        if (p >= end)
            return NULL;
        unsigned char c = (unsigned char)*p;
        if (c == '"') {
            s->in_string = 1;
            p++;
        } else if (c == '{' || c == '[') {
            if (s->depth >= VR_JSON_SCAN_MAX_DEPTH) {
                *st = syntax(s, s->offset + (uint64_t)(p - base),
                             "nesting at most 1024 levels deep", c);
                return NULL;
            }
            s->stack[s->depth++] = c;
            p++;
        } else {
            unsigned char open = c == '}' ? '{' : '[';
            if (s->stack[s->depth - 1] != open) {
                *st = syntax(s, s->offset + (uint64_t)(p - base),
                             s->stack[s->depth - 1] == '{' ? "'}'" : "']'", c);
                return NULL;
            }
            s->depth--;
            p++;
            if (s->depth == 0)
                return p;
        }
    }
}

static void begin_value(vr_json_scan *s, const char *p, const char *base)
{
    unsigned char c = (unsigned char)*p;
    s->value_offset = s->offset + (uint64_t)(p - base);
    s->depth = 0;
    s->in_string = 0;
    s->escaped = 0;
    s->quote_pending = 0;
    s->gathering = s->skipping = 0;
    vr_buf_clear(&s->value);
    if (c == '{' || c == '[') {
        s->stack[0] = c;
        s->depth = 1;
    } else if (c == '"') {
        s->in_string = 1;
    }
    s->state = S_IN_VALUE;
}

static void gather(vr_json_scan *s, const char *from, const char *to)
{
    if (s->skipping)
        return;
    size_t n = (size_t)(to - from);
    if (s->value.len + n > VR_JSON_SCAN_MAX_VALUE) {
        s->skipping = 1;
        vr_buf_free(&s->value);
        return;
    }
    vr_buf_append(&s->value, from, n);
    s->gathering = 1;
}

static int deliver(vr_json_scan *s, const char *v, size_t n)
{
    if (s->nest_level) {
        s->elements++;
        return s->on_nested
                   ? s->on_nested(s->ud, s->nest_index, s->nest_level == 2, v, n, s->value_offset)
                   : 0;
    }
    int in_array = s->top_is_array || s->value_is_stream;
    if (in_array) {
        s->elements++;
        return s->on_element ? s->on_element(s->ud, v, n, s->value_offset) : 0;
    }
    return s->on_member ? s->on_member(s->ud, s->key.data, s->key.len, v, n, s->value_offset) : 0;
}

static int finish_value(vr_json_scan *s, const char *start, const char *stop)
{
    int rc = 0;
    if (s->skipping) {
        s->oversized++;
    } else if (s->gathering) {
        gather(s, start, stop);
        if (s->skipping)
            s->oversized++;
        else
            rc = deliver(s, s->value.data, s->value.len);
    } else {
        rc = deliver(s, start, (size_t)(stop - start));
    }
    vr_buf_clear(&s->value);
    s->gathering = 0;
    if (s->nest_level == 1) { /* an element of the outer array that is not an array */
        s->nest_index++;
        s->state = S_NEST_OUTER;
    } else {
        s->state =
            (s->top_is_array || s->value_is_stream || s->nest_level) ? S_ARR_ELEM : S_OBJ_NEXT;
    }
    return rc;
}

static int key_is(const vr_json_scan *s, const char *name)
{
    return name && s->key.len == strlen(name) && memcmp(s->key.data, name, s->key.len) == 0;
}

/* In the nested array: its inner arrays are entered, anything else in it
 * is an element delivered whole. Consumes a delimiter; *pp left where it
 * was means an element that is not an array begins there. */
static vr_json_scan_status nest_outer(vr_json_scan *s, const char **pp, const char *data)
{
    unsigned char c = (unsigned char)**pp;
    if (is_ws(c) || c == ',') {
        (*pp)++;
    } else if (c == ']') {
        (*pp)++;
        s->nest_level = 0;
        s->state = S_OBJ_NEXT;
    } else if (c == '[') {
        (*pp)++;
        s->nest_level = 2;
        s->state = S_ARR_ELEM;
    } else if (c == '}' || c == ':') {
        return syntax(s, s->offset + (uint64_t)(*pp - data), "an array, ',' or ']'", c);
    }
    return VR_JSON_SCAN_OK;
}

vr_json_scan_status vr_json_scan_feed(vr_json_scan *s, const char *data, size_t len)
{
    const char *p = data, *end = data + len;
    const char *value_start = s->state == S_IN_VALUE ? data : NULL;
    vr_json_scan_status st = VR_JSON_SCAN_OK;
    if (s->state == S_ERROR)
        return VR_JSON_SCAN_SYNTAX;
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        switch (s->state) {
        case S_TOP:
            if (is_ws(c) || c == 0xEF || c == 0xBB || c == 0xBF) {
                p++;
            } else if (c == '{') {
                s->state = S_OBJ_KEY;
                p++;
            } else if (c == '[') {
                s->top_is_array = 1;
                s->state = S_ARR_ELEM;
                p++;
            } else {
                return syntax(s, s->offset + (uint64_t)(p - data), "'{' or '[' (a JSON trace)",
                              c);
            }
            break;
        case S_OBJ_KEY:
        case S_OBJ_NEXT:
            if (is_ws(c) || (c == ',' && s->state == S_OBJ_NEXT)) {
                s->state = c == ',' ? S_OBJ_KEY : s->state;
                p++;
            } else if (c == '}') {
                s->state = S_DONE;
                s->top_done = 1;
                p++;
            } else if (c == '"' && s->state == S_OBJ_KEY) {
                vr_buf_clear(&s->key);
                s->escaped = 0;
                s->state = S_KEY;
                p++;
            } else {
                return syntax(s, s->offset + (uint64_t)(p - data),
                              s->state == S_OBJ_KEY ? "a key string or '}'" : "',' or '}'", c);
            }
            break;
        case S_KEY: {
            const char *q = p;
            while (q < end && (s->escaped || *q != '"')) {
                s->escaped = !s->escaped && *q == '\\';
                q++;
            }
            if (s->key.len + (size_t)(q - p) > 4096)
                return syntax(s, s->offset + (uint64_t)(p - data),
                              "a key shorter than 4096 bytes", c);
            vr_buf_append(&s->key, p, (size_t)(q - p));
            if (q < end) {
                s->state = S_COLON;
                q++;
            }
            p = q;
            break;
        }
        case S_COLON:
            if (is_ws(c)) {
                p++;
            } else if (c == ':') {
                s->state = S_VALUE;
                p++;
            } else {
                return syntax(s, s->offset + (uint64_t)(p - data), "':'", c);
            }
            break;
        case S_VALUE:
            if (is_ws(c)) {
                p++;
            } else if (c == '[' && key_is(s, s->nested_key) && !s->top_is_array) {
                s->nest_level = 1;
                s->nest_index = 0;
                s->state = S_NEST_OUTER;
                p++;
            } else if (c == '[' && key_is(s, s->stream_key)) {
                s->value_is_stream = 1;
                s->stream_seen = 1;
                s->state = S_ARR_ELEM;
                p++;
            } else if (c == ',' || c == '}' || c == ']' || c == ':') {
                return syntax(s, s->offset + (uint64_t)(p - data), "a value", c);
            } else {
                begin_value(s, p, data);
                value_start = p;
                if (c == '{' || c == '[' || c == '"')
                    p++;
            }
            break;
        case S_ARR_ELEM:
            if (is_ws(c) || c == ',') {
                p++;
            } else if (c == ']' && s->nest_level == 2) {
                p++;
                s->nest_level = 1;
                s->nest_index++;
                s->state = S_NEST_OUTER;
            } else if (c == ']') {
                p++;
                if (s->top_is_array) {
                    s->state = S_DONE;
                    s->top_done = 1;
                } else {
                    s->value_is_stream = 0;
                    s->stream_done = 1;
                    s->state = S_OBJ_NEXT;
                }
            } else if (c == '}' || c == ':') {
                return syntax(s, s->offset + (uint64_t)(p - data), "an array element, ',' or ']'",
                              c);
            } else {
                begin_value(s, p, data);
                value_start = p;
                if (c == '{' || c == '[' || c == '"')
                    p++;
            }
            break;
        case S_NEST_OUTER: {
            const char *before = p;
            st = nest_outer(s, &p, data);
            if (st != VR_JSON_SCAN_OK)
                return st;
            if (p == before) { /* an element that is not an array */
                begin_value(s, p, data);
                value_start = p;
                if (c == '{' || c == '"')
                    p++;
            }
            break;
        }
        case S_IN_VALUE: {
            const char *stop = scan_value(s, p, end, data, &st);
            if (st != VR_JSON_SCAN_OK)
                return st;
            if (!stop) {
                gather(s, value_start, end);
                value_start = NULL;
                p = end;
                break;
            }
            if (finish_value(s, value_start, stop)) {
                s->offset += (uint64_t)(stop - data);
                return VR_JSON_SCAN_STOPPED;
            }
            value_start = NULL;
            p = stop;
            break;
        }
        case S_DONE:
            /* Bytes after the document (a second document, garbage) are
             * not read but counted, from the first one that is not
             * whitespace, so the importer can say data was ignored. */
            if (!s->trailing && is_ws(c)) {
                p++;
                break;
            }
            s->trailing += (uint64_t)(end - p);
            p = end;
            break;
        }
    }
    /* A value that began at the very end of this chunk has not been
     * scanned yet: keep its first bytes for the next feed. */
    if (s->state == S_IN_VALUE && value_start)
        gather(s, value_start, end);
    s->offset += len;
    return st;
}

int vr_json_scan_complete(const vr_json_scan *s)
{
    return s->state == S_DONE;
}

int vr_json_scan_in_stream(const vr_json_scan *s)
{
    return s->nest_level ||
           ((s->value_is_stream || s->top_is_array) && !s->stream_done && !s->top_done);
}

int vr_json_scan_stream_seen(const vr_json_scan *s)
{
    return s->stream_seen || s->top_is_array;
}

const char *vr_json_scan_where(const vr_json_scan *s)
{
    if (s->state == S_TOP)
        return "before the document began";
    if (vr_json_scan_in_stream(s))
        return s->state == S_IN_VALUE ? "inside an event" : "between events";
    if (s->state == S_DONE)
        return "after the end";
    return "outside the event list";
}

uint64_t vr_json_scan_error_offset(const vr_json_scan *s)
{
    return s->error_offset;
}
const char *vr_json_scan_error(const vr_json_scan *s)
{
    return s->error;
}
