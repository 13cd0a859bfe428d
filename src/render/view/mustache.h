/*-*** mustache.h: a Mustache template renderer over cJSON data ***/
/*
 * Implements the Mustache spec (github.com/mustache/spec, v1.x, the required
 * modules): interpolation, sections, inverted sections, comments, partials,
 * set delimiters, standalone-line rules and partial indentation. Lambdas and
 * the optional ~modules are not implemented.
 *
 * Data is a cJSON tree. Truthiness follows the spec: false, null, empty list
 * and missing keys are falsey; "" and 0 are truthy. Numbers are printed the
 * way the spec expects (85 -> "85", 1.210 -> "1.21").
 *
 * Ownership: the renderer never takes ownership of its arguments. The string
 * returned by vr_mustache_render() is malloc'ed and belongs to the caller
 * (free()); the string returned by a partial loader belongs to the loader and
 * must stay valid until vr_mustache_render() returns.
 */
#ifndef VR_MUSTACHE_H
#define VR_MUSTACHE_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Escapes `len` bytes of `s` for the output format and appends the result
 * with `append(out, bytes, n)`. Used for {{name}}; {{{name}}} and {{&name}}
 * bypass it. NULL means "no escaping". */
typedef void (*vr_mustache_append_fn)(void *out, const char *bytes, size_t n);
typedef void (*vr_mustache_escape_fn)(void *out, vr_mustache_append_fn append, const char *s,
                                      size_t len);

/* Returns the source of partial `name` (NUL-terminated, *len set), or NULL
 * when there is none (the spec renders a missing partial as ""). */
typedef const char *(*vr_mustache_partial_fn)(void *userdata, const char *name, size_t *len);

typedef struct {
    vr_mustache_escape_fn escape;   /* NULL: no escaping */
    vr_mustache_partial_fn partial; /* NULL: no partials */
    void *partial_userdata;
} vr_mustache_opts;

/* HTML escaping as the spec requires: & " < > (and ' as &#39;). */
void vr_mustache_escape_html(void *out, vr_mustache_append_fn append, const char *s, size_t len);

/* Renders `tmpl` (`len` bytes) against `data`. On success returns the
 * output (malloc'ed, NUL-terminated; *out_len set when out_len is not NULL).
 * On a template error (unclosed tag or section, mismatched section end, bad
 * delimiter change) returns NULL and, when `err` is not NULL, writes a
 * one-line message "line N: what was expected" into err (errlen bytes). */
char *vr_mustache_render(const char *tmpl, size_t len, const cJSON *data,
                         const vr_mustache_opts *opts, size_t *out_len, char *err, size_t errlen);

#endif
