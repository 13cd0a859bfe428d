/*-*** json_scan.h: a streaming scanner for one big JSON document ***/
/*
 * Finds the parts of a JSON document that matter to an importer without
 * building a tree and without holding the document: bytes are fed in
 * chunks of any size, and the scanner calls back with
 *   - each member of a top-level object (key and the complete value text),
 *     except that the member named by `stream_key` ("traceEvents") whose
 *     value is an array is not delivered whole: each of its elements is;
 *   - each element of a top-level array;
 *   - with vr_json_scan_nest(), for the member named `nested_key` whose value
 *     is an array of arrays (a snapshot's device_traces: one list of
 *     entries per device), each element of each inner array, one at a
 *     time, with the inner array's index; an element of the outer array
 *     that is not an array is delivered whole, flagged.
 * Values are delivered as the exact bytes of their JSON text; when a value
 * lies within one chunk it is passed in place, else it is gathered in an
 * internal buffer. The scanner checks only what it needs to find value
 * boundaries (strings, brackets): each value is parsed later by its user.
 *
 * Tolerance: raw control characters inside strings are accepted; a quote
 * that is not followed by one of , : } ] (an unescaped quote, as some
 * PyTorch versions write in names) is taken as part of the string. Both are
 * counted.
 *
 * Ownership: the scanner is caller-owned (vr_json_scan_init/vr_json_scan_free on a
 * caller-provided struct); bytes passed to callbacks are valid only during
 * the call.
 */
#ifndef VR_JSON_SCAN_H
#define VR_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Returns 0 to go on, non-zero to stop scanning (the value is returned by
 * vr_json_scan_feed). */
typedef int (*vr_json_scan_member_fn)(void *ud, const char *key, size_t keylen, const char *val,
                                      size_t vallen, uint64_t offset);
typedef int (*vr_json_scan_element_fn)(void *ud, const char *val, size_t vallen, uint64_t offset);
/* An element of the nested arrays: `outer` the index of its array in the
 * outer one; `inner` 1 for an element of an inner array, 0 for an element
 * of the outer array that is not an array itself. */
typedef int (*vr_json_scan_nested_fn)(void *ud, size_t outer, int inner, const char *val,
                                      size_t vallen, uint64_t offset);

typedef enum {
    VR_JSON_SCAN_OK = 0,
    VR_JSON_SCAN_SYNTAX = -1, /* vr_json_scan_error() says where and what */
    VR_JSON_SCAN_STOPPED = -2 /* a callback returned non-zero */
} vr_json_scan_status;

#define VR_JSON_SCAN_MAX_DEPTH 1024
#define VR_JSON_SCAN_MAX_VALUE (256u * 1024 * 1024) /* bytes gathered for one value */

typedef struct {
    /* configuration */
    const char *stream_key;
    vr_json_scan_member_fn on_member;
    vr_json_scan_element_fn on_element;
    const char *nested_key; /* vr_json_scan_nest(); NULL: none */
    vr_json_scan_nested_fn on_nested;
    void *ud;

    /* counters a caller may read */
    uint64_t elements;        /* elements delivered */
    uint64_t control_chars;   /* raw bytes < 0x20 inside strings */
    uint64_t repaired_quotes; /* quotes taken as part of a string */
    uint64_t oversized;       /* values skipped: larger than MAX_VALUE */
    uint64_t trailing;        /* bytes after the document, ignored */

    /* private */
    int state;
    int in_string, escaped, depth;
    int quote_pending;   /* a quote ended a chunk: undecided */
    int value_is_stream; /* current member value is the stream array */
    int top_is_array;
    int stream_seen, stream_done, top_done;
    int nest_level;        /* 1: in the nested_key array, 2: in one of its arrays */
    size_t nest_index;     /* the outer array's element being read */
    uint64_t offset;       /* bytes fed so far */
    uint64_t value_offset; /* where the current value started */
    uint64_t error_offset;
    uint8_t stack[VR_JSON_SCAN_MAX_DEPTH]; /* '{' or '[' per nesting level */
    vr_buf key;
    vr_buf value;
    int gathering; /* value spans chunks: bytes are in `value` */
    int skipping;  /* value too large: scanned, not kept */
    char error[160];
} vr_json_scan;

void vr_json_scan_init(vr_json_scan *s, const char *stream_key, vr_json_scan_member_fn on_member,
                       vr_json_scan_element_fn on_element, void *ud);
void vr_json_scan_free(vr_json_scan *s);

/* Streams the array of arrays under the top-level member `key` through
 * `on_nested` (call after vr_json_scan_init, before the first feed). Its
 * elements count in `elements`, and truncation inside it reads as inside
 * the stream. */
void vr_json_scan_nest(vr_json_scan *s, const char *key, vr_json_scan_nested_fn on_nested);

/* Feeds the next `len` bytes. Returns VR_JSON_SCAN_OK, VR_JSON_SCAN_SYNTAX or
 * VR_JSON_SCAN_STOPPED; after a non-OK status the scanner must not be fed. */
vr_json_scan_status vr_json_scan_feed(vr_json_scan *s, const char *data, size_t len);

/* At the end of input: 1 when the document was complete, 0 when it was cut
 * (vr_json_scan_where() then says inside what). */
int vr_json_scan_complete(const vr_json_scan *s);

/* Describes the scanner's position, e.g. "inside traceEvents", for
 * truncation warnings. */
const char *vr_json_scan_where(const vr_json_scan *s);
int vr_json_scan_in_stream(const vr_json_scan *s);   /* stream array open, not closed */
int vr_json_scan_stream_seen(const vr_json_scan *s); /* the stream array was found */

/* For VR_JSON_SCAN_SYNTAX: byte offset and a message "expected ..." */
uint64_t vr_json_scan_error_offset(const vr_json_scan *s);
const char *vr_json_scan_error(const vr_json_scan *s);

#endif
