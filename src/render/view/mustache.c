/*-*** mustache.c: Mustache renderer over cJSON data (see mustache.h) ***/
/*
 * A template is compiled once into a flat node array (a section node records
 * where its body ends), then rendered by walking that array, so list items do
 * not re-parse anything. Partials are compiled on first use and cached per
 * render, keyed by name and standalone indentation.
 *
 * Everything that can grow without bound is capped so that neither a hostile
 * template nor hostile data can exhaust the C stack or loop forever: section
 * nesting per template, render recursion, partial recursion depth and the
 * total number of partial expansions.
 */
#include "render/view/mustache.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

/* Partial recursion is legitimate (the spec renders trees that way) but must
 * stop even when the data never runs out; deeper includes render as "". */
#define MU_MAX_PARTIAL_DEPTH 64
/* A partial that includes itself twice per level is 2^64 expansions within
 * the depth cap; a total budget keeps that finite. Past it: "". */
#define MU_MAX_PARTIAL_EXPANSIONS 1000000UL
/* Rendering recurses per section level; these keep the C stack small. */
#define MU_MAX_NESTING 256
#define MU_MAX_RENDER_DEPTH 1024

#if defined(__GNUC__) || defined(__clang__)
#define MU_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MU_PRINTF(f, a)
#endif

/*-- small string helpers --------------------------------------------------*/

static int mu_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Like memmem (not in C11). */
static size_t mu_find(const char *h, size_t from, size_t hlen, const char *nd, size_t nlen)
{
    size_t i;

    if (nlen == 0 || hlen < nlen)
        return SIZE_MAX;
    for (i = from; i + nlen <= hlen; i++) {
        const char *q = memchr(h + i, nd[0], hlen - nlen + 1 - i);
        if (!q)
            return SIZE_MAX;
        i = (size_t)(q - h);
        if (memcmp(q, nd, nlen) == 0)
            return i;
    }
    return SIZE_MAX;
}

static void mu_trim(const char **s, size_t *n)
{
    while (*n && mu_is_space(**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && mu_is_space((*s)[*n - 1]))
        (*n)--;
}

/* Names and delimiters end up in one-line error messages: keep them short,
 * printable and free of newlines whatever the template contains. */
static const char *mu_clean(char dst[48], const char *s, size_t n)
{
    size_t i, k = 0;

    for (i = 0; i < n && k < 40; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[k++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (i < n) {
        memcpy(dst + k, "...", 3);
        k += 3;
    }
    dst[k] = '\0';
    return dst;
}

/*-- compiled template -----------------------------------------------------*/

typedef enum {
    MU_TEXT,     /* literal bytes */
    MU_VAR,      /* {{name}}: escaped */
    MU_RAW,      /* {{{name}}}, {{&name}} */
    MU_SECTION,  /* {{#name}} ... {{/name}} */
    MU_INVERTED, /* {{^name}} ... {{/name}} */
    MU_PARTIAL   /* {{>name}} */
} mu_kind;

typedef struct {
    mu_kind kind;
    const char *s; /* text, or the trimmed tag name; points into the source */
    size_t n;
    const char *ind; /* partial: indentation of a standalone tag */
    size_t indn;
    size_t end; /* section: index of the first node after its body */
} mu_node;

typedef struct {
    mu_node *v;
    size_t n, cap;
} mu_tpl;

static void mu_tpl_free(mu_tpl *t)
{
    free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}

/*-- parser ----------------------------------------------------------------*/

typedef struct {
    size_t node; /* index of the section node */
    size_t at;   /* source offset of its tag, for error messages */
} mu_open;

typedef struct {
    const char *src;
    size_t len;
    const char *otag, *ctag; /* current delimiters (point into src) */
    size_t olen, clen;
    mu_tpl *t;
    mu_open stack[MU_MAX_NESTING];
    size_t depth;
    char *err;
    size_t errlen;
} mu_parser;

typedef struct {
    char sigil; /* 0 for a plain variable, '{' for a triple mustache */
    const char *name;
    size_t n;
    size_t end; /* offset just past the closing delimiter */
} mu_tag;

static size_t mu_line_of(const char *s, size_t at)
{
    size_t i, line = 1;

    for (i = 0; i < at; i++)
        line += s[i] == '\n';
    return line;
}

MU_PRINTF(3, 4)
static int mu_perr(mu_parser *p, size_t at, const char *fmt, ...)
{
    va_list ap;
    int k;

    if (!p->err || !p->errlen)
        return 0;
    k = snprintf(p->err, p->errlen, "line %zu: ", mu_line_of(p->src, at));
    if (k < 0 || (size_t)k >= p->errlen)
        return 0;
    va_start(ap, fmt);
    vsnprintf(p->err + k, p->errlen - (size_t)k, fmt, ap);
    va_end(ap);
    return 0;
}

/* Always 1 (the parser's calls chain on it); growth failure exits (util/alloc.h). */
static int mu_push(mu_parser *p, mu_kind kind, const char *s, size_t n)
{
    mu_tpl *t = p->t;

    vr_xgrow(&t->v, &t->cap, t->n + 1, sizeof *t->v, 16);
    t->v[t->n] = (mu_node){kind, s, n, NULL, 0, 0};
    t->n++;
    return 1;
}

/* {{{name}}} ends at "}" followed by the closing delimiter. */
static int mu_scan_triple(mu_parser *p, size_t o, size_t s, mu_tag *tg)
{
    char buf[48];
    size_t q = s;

    for (;;) {
        q = mu_find(p->src, q, p->len, p->ctag, p->clen);
        if (q == SIZE_MAX)
            return mu_perr(p, o, "unclosed tag, expected '}%s'", mu_clean(buf, p->ctag, p->clen));
        if (q > s && p->src[q - 1] == '}')
            break;
        q++;
    }
    tg->sigil = '{';
    tg->name = p->src + s;
    tg->n = q - 1 - s;
    tg->end = q + p->clen;
    mu_trim(&tg->name, &tg->n);
    return 1;
}

static int mu_scan_tag(mu_parser *p, size_t o, mu_tag *tg)
{
    char buf[48];
    size_t s = o + p->olen, q;

    if (s < p->len && p->src[s] == '{')
        return mu_scan_triple(p, o, s + 1, tg);
    q = mu_find(p->src, s, p->len, p->ctag, p->clen);
    if (q == SIZE_MAX)
        return mu_perr(p, o, "unclosed tag, expected '%s'", mu_clean(buf, p->ctag, p->clen));
    tg->end = q + p->clen;
    tg->sigil = 0;
    if (q > s && p->src[s] != '\0' && strchr("#^/!>&=", p->src[s]))
        tg->sigil = p->src[s++];
    tg->name = p->src + s;
    tg->n = q - s;
    if (tg->sigil == '=') {
        if (tg->n == 0 || p->src[q - 1] != '=')
            return mu_perr(p, o, "set-delimiter tag must end with '='");
        tg->n--;
    }
    if (tg->sigil != '!' && tg->sigil != '=')
        mu_trim(&tg->name, &tg->n);
    return 1;
}

static size_t mu_word(const char *s, size_t i, size_t n)
{
    while (i < n && !mu_is_space(s[i]))
        i++;
    return i;
}

static size_t mu_skip_space(const char *s, size_t i, size_t n)
{
    while (i < n && mu_is_space(s[i]))
        i++;
    return i;
}

/* "{{=<% %>=}}": two words, no whitespace or '=' inside either. */
static int mu_set_delims(mu_parser *p, const mu_tag *tg, size_t o)
{
    const char *s = tg->name;
    size_t n = tg->n, a0, a1, b0, b1;

    a0 = mu_skip_space(s, 0, n);
    a1 = mu_word(s, a0, n);
    b0 = mu_skip_space(s, a1, n);
    b1 = mu_word(s, b0, n);
    if (a1 == a0 || b1 == b0 || mu_skip_space(s, b1, n) != n || memchr(s + a0, '=', a1 - a0) ||
        memchr(s + b0, '=', b1 - b0))
        return mu_perr(p, o,
                       "bad set-delimiter tag, expected "
                       "'=open close='");
    p->otag = s + a0;
    p->olen = a1 - a0;
    p->ctag = s + b0;
    p->clen = b1 - b0;
    return 1;
}

static int mu_open_section(mu_parser *p, const mu_tag *tg, size_t o)
{
    if (p->depth == MU_MAX_NESTING)
        return mu_perr(p, o, "sections nested more than %d deep", MU_MAX_NESTING);
    mu_push(p, tg->sigil == '#' ? MU_SECTION : MU_INVERTED, tg->name, tg->n);
    p->stack[p->depth].node = p->t->n - 1;
    p->stack[p->depth].at = o;
    p->depth++;
    return 1;
}

static int mu_close_section(mu_parser *p, const mu_tag *tg, size_t o)
{
    char b1[48], b2[48];
    mu_node *open;

    if (p->depth == 0)
        return mu_perr(p, o, "'/%s' closes no open section", mu_clean(b1, tg->name, tg->n));
    open = &p->t->v[p->stack[p->depth - 1].node];
    if (open->n != tg->n || memcmp(open->s, tg->name, tg->n) != 0)
        return mu_perr(p, o, "expected '/%s', found '/%s'", mu_clean(b1, open->s, open->n),
                       mu_clean(b2, tg->name, tg->n));
    open->end = p->t->n;
    p->depth--;
    return 1;
}

/* `ind` is the whitespace before a standalone tag (NULL otherwise). */
static int mu_apply_tag(mu_parser *p, const mu_tag *tg, size_t o, const char *ind, size_t indn)
{
    switch (tg->sigil) {
    case '!':
        return 1;
    case '=':
        return mu_set_delims(p, tg, o);
    case '#':
    case '^':
        return mu_open_section(p, tg, o);
    case '/':
        return mu_close_section(p, tg, o);
    case '>':
        if (!mu_push(p, MU_PARTIAL, tg->name, tg->n))
            return 0;
        p->t->v[p->t->n - 1].ind = ind;
        p->t->v[p->t->n - 1].indn = indn;
        return 1;
    case '&':
    case '{':
        return mu_push(p, MU_RAW, tg->name, tg->n);
    default:
        return mu_push(p, MU_VAR, tg->name, tg->n);
    }
}

static int mu_text(mu_parser *p, size_t from, size_t to)
{
    return from >= to || mu_push(p, MU_TEXT, p->src + from, to - from);
}

/* Only these tags may stand alone; interpolations are content. */
static int mu_can_stand_alone(char sigil)
{
    return sigil && sigil != '&' && sigil != '{';
}

static int mu_blank(const char *s, size_t a, size_t b)
{
    for (; a < b; a++)
        if (s[a] != ' ' && s[a] != '\t')
            return 0;
    return 1;
}

/* Offset just past the end of the line if only blanks follow `e` on it. */
static size_t mu_line_rest(const mu_parser *p, size_t e)
{
    while (e < p->len && (p->src[e] == ' ' || p->src[e] == '\t'))
        e++;
    if (e == p->len)
        return e;
    if (p->src[e] == '\n')
        return e + 1;
    if (p->src[e] == '\r' && e + 1 < p->len && p->src[e + 1] == '\n')
        return e + 2;
    return SIZE_MAX;
}

typedef struct {
    size_t start; /* offset where the current line begins */
    int has_tag;  /* a tag already appeared on the current line */
} mu_line;

static void mu_line_advance(mu_line *ln, const char *s, size_t from, size_t to)
{
    while (to > from) {
        if (s[--to] == '\n') {
            ln->start = to + 1;
            ln->has_tag = 0;
            return;
        }
    }
}

/* Handles the tag opening at `o`; returns the offset to continue at. */
static size_t mu_parse_tag(mu_parser *p, mu_line *ln, size_t pos, size_t o)
{
    mu_tag tg;
    size_t text_end = o, next, indn = 0;
    const char *ind = NULL;

    mu_line_advance(ln, p->src, pos, o);
    if (!mu_scan_tag(p, o, &tg))
        return SIZE_MAX;
    next = tg.end;
    if (mu_can_stand_alone(tg.sigil) && !ln->has_tag && mu_blank(p->src, ln->start, o)) {
        size_t after = mu_line_rest(p, tg.end);
        if (after != SIZE_MAX) {
            text_end = ln->start;
            ind = p->src + ln->start;
            indn = o - ln->start;
            next = after;
        }
    }
    if (!mu_text(p, pos, text_end) || !mu_apply_tag(p, &tg, o, ind, indn))
        return SIZE_MAX;
    if (ind) /* the standalone line was consumed up to its newline */
        ln->start = next;
    ln->has_tag = ind == NULL;
    return next;
}

static int mu_parse(const char *src, size_t len, mu_tpl *t, char *err, size_t errlen)
{
    mu_parser *p = vr_xmalloc(sizeof *p);
    mu_line ln = {0, 0};
    size_t pos = 0;
    int ok = 0;

    *p = (mu_parser){.src = src,
                     .len = len,
                     .otag = "{{",
                     .ctag = "}}",
                     .olen = 2,
                     .clen = 2,
                     .t = t,
                     .err = err,
                     .errlen = errlen};
    while (pos != SIZE_MAX) {
        size_t o = mu_find(src, pos, len, p->otag, p->olen);
        if (o == SIZE_MAX) {
            ok = mu_text(p, pos, len);
            break;
        }
        pos = mu_parse_tag(p, &ln, pos, o);
    }
    if (ok && p->depth) {
        char buf[48];
        mu_open *top = &p->stack[p->depth - 1];
        ok = mu_perr(p, top->at, "unclosed section '%s'",
                     mu_clean(buf, t->v[top->node].s, t->v[top->node].n));
    }
    free(p);
    if (!ok)
        mu_tpl_free(t);
    return ok;
}

/*-- data lookup -----------------------------------------------------------*/

typedef struct mu_ctx {
    const cJSON *v;
    const struct mu_ctx *up;
} mu_ctx;

/* Keys from the template are not NUL-terminated and may hold NUL bytes. */
static const cJSON *mu_get(const cJSON *obj, const char *k, size_t n)
{
    const cJSON *it;

    for (it = obj->child; it; it = it->next) {
        size_t i = 0;
        if (!it->string)
            continue;
        while (i < n && it->string[i] && it->string[i] == k[i])
            i++;
        if (i == n && it->string[n] == '\0')
            return it;
    }
    return NULL;
}

static size_t mu_part_len(const char *s, size_t n)
{
    const char *dot = memchr(s, '.', n);
    return dot ? (size_t)(dot - s) : n;
}

/* Only the first part of a dotted name searches the context stack; the
 * rest must resolve inside what it found (spec: "Context Precedence"). */
static const cJSON *mu_lookup(const mu_ctx *c, const char *s, size_t n)
{
    const cJSON *v = NULL;
    size_t k;

    if (n == 1 && s[0] == '.')
        return c ? c->v : NULL;
    k = mu_part_len(s, n);
    for (; c && !v; c = c->up)
        if (cJSON_IsObject(c->v))
            v = mu_get(c->v, s, k);
    while (v && k < n) {
        s += k + 1;
        n -= k + 1;
        k = mu_part_len(s, n);
        v = cJSON_IsObject(v) ? mu_get(v, s, k) : NULL;
    }
    return v;
}

static int mu_truthy(const cJSON *v)
{
    if (!v || cJSON_IsFalse(v) || cJSON_IsNull(v) || cJSON_IsInvalid(v))
        return 0;
    if (cJSON_IsArray(v))
        return v->child != NULL;
    return 1;
}

/* Beyond 2^53 every double is integral; below, the cast tells. */
static int mu_is_integral(double d)
{
    if (d > -1e21 && d < 1e21)
        return d <= -9e15 || d >= 9e15 || (double)(long long)d == d;
    return 0;
}

/* Shortest "%g" that reads back to the same double, so 1.210 prints as
 * "1.21" and 0.1 as "0.1"; integers below 1e21 print in full, as in JSON
 * producers (and without "-0"). */
static size_t mu_fmt_number(char out[64], double d)
{
    int prec;

    if (d == 0)
        d = 0; /* drops the sign of -0.0 */
    if (mu_is_integral(d))
        return (size_t)snprintf(out, 64, "%.0f", d);
    for (prec = 15; prec < 17; prec++) {
        snprintf(out, 64, "%.*g", prec, d);
        if (strtod(out, NULL) == d)
            return strlen(out);
    }
    return (size_t)snprintf(out, 64, "%.17g", d);
}

/*-- renderer --------------------------------------------------------------*/

typedef struct mu_partial {
    struct mu_partial *next;
    const char *name; /* NUL-terminated copies, in mem[] */
    size_t nn;
    const char *ind;
    size_t indn;
    char *owned; /* indented copy of the source, when there is indentation */
    mu_tpl t;
    char mem[];
} mu_partial;

typedef struct {
    const vr_mustache_opts *o;
    vr_buf out;
    mu_partial *cache;
    unsigned pdepth, depth;
    unsigned long expansions;
    int failed;
    char *err;
    size_t errlen;
} mu_rd;

static void mu_render(mu_rd *r, const mu_tpl *t, size_t i, size_t end, const mu_ctx *c);

static void mu_emit(mu_rd *r, const char *s, size_t n, int escape)
{
    if (n == 0)
        return;
    if (escape && r->o->escape)
        r->o->escape(&r->out, vr_buf_append_cb, s, n);
    else
        vr_buf_append(&r->out, s, n);
}

/* Objects and lists have no spec'd text form; they render as "". */
static void mu_value(mu_rd *r, const cJSON *v, int escape)
{
    char num[64];

    if (!v)
        return;
    if ((cJSON_IsString(v) || cJSON_IsRaw(v)) && v->valuestring)
        mu_emit(r, v->valuestring, strlen(v->valuestring), escape);
    else if (cJSON_IsNumber(v))
        mu_emit(r, num, mu_fmt_number(num, v->valuedouble), escape);
    else if (cJSON_IsTrue(v))
        mu_emit(r, "true", 4, escape);
    else if (cJSON_IsFalse(v))
        mu_emit(r, "false", 5, escape);
}

static void mu_section(mu_rd *r, const mu_tpl *t, size_t i, const mu_ctx *c)
{
    const mu_node *nd = &t->v[i];
    const cJSON *v = mu_lookup(c, nd->s, nd->n);
    mu_ctx sub = {v, c};

    if (r->depth >= MU_MAX_RENDER_DEPTH)
        return;
    r->depth++;
    if (nd->kind == MU_INVERTED) {
        if (!mu_truthy(v))
            mu_render(r, t, i + 1, nd->end, c);
    } else if (cJSON_IsArray(v)) {
        for (sub.v = v->child; sub.v && !r->failed; sub.v = sub.v->next)
            mu_render(r, t, i + 1, nd->end, &sub);
    } else if (mu_truthy(v)) {
        mu_render(r, t, i + 1, nd->end, &sub);
    }
    r->depth--;
}

/* The spec indents every line of a standalone partial's source; doing it
 * on the source (not the output) leaves interpolated newlines alone. */
static char *mu_indent(const char *src, size_t len, const char *ind, size_t indn, size_t *outlen)
{
    size_t i, lines = 1, k = 0;
    char *out;

    for (i = 0; i + 1 < len; i++)
        lines += src[i] == '\n';
    if (lines > (SIZE_MAX - len - 1) / indn)
        return NULL;
    out = vr_xmalloc(len + lines * indn + 1);
    memcpy(out, ind, indn);
    k = indn;
    for (i = 0; i < len; i++) {
        out[k++] = src[i];
        if (src[i] == '\n' && i + 1 < len) {
            memcpy(out + k, ind, indn);
            k += indn;
        }
    }
    out[k] = '\0';
    *outlen = k;
    return out;
}

static void mu_fail(mu_rd *r, const char *msg, const char *name, size_t n)
{
    char buf[48];

    r->failed = 1;
    if (r->err && r->errlen)
        snprintf(r->err, r->errlen, "%s (in partial '%s')", msg, mu_clean(buf, name, n));
}

static void mu_partial_free(mu_partial *e)
{
    while (e) {
        mu_partial *next = e->next;
        mu_tpl_free(&e->t);
        free(e->owned);
        free(e);
        e = next;
    }
}

/* Loads and compiles a partial; a missing one compiles to nothing. */
static int mu_partial_compile(mu_rd *r, mu_partial *e)
{
    char msg[200] = "out of memory";
    const char *src = NULL;
    size_t len = SIZE_MAX;

    if (r->o->partial)
        src = r->o->partial(r->o->partial_userdata, e->name, &len);
    if (!src)
        return 1;
    if (len == SIZE_MAX) /* loader did not say */
        len = strlen(src);
    if (e->indn && len) {
        e->owned = mu_indent(src, len, e->ind, e->indn, &len);
        src = e->owned;
    }
    if (src && mu_parse(src, len, &e->t, msg, sizeof msg))
        return 1;
    mu_fail(r, msg, e->name, e->nn);
    return 0;
}

static const mu_partial *mu_partial_get(mu_rd *r, const mu_node *nd)
{
    mu_partial *e;

    for (e = r->cache; e; e = e->next)
        if (e->nn == nd->n && e->indn == nd->indn && memcmp(e->name, nd->s, nd->n) == 0 &&
            (!nd->indn || memcmp(e->ind, nd->ind, nd->indn) == 0))
            return e;
    if (nd->n > SIZE_MAX / 2 - sizeof *e || nd->indn > SIZE_MAX / 2) {
        mu_fail(r, "partial name too long", nd->s, nd->n);
        return NULL;
    }
    size_t size = sizeof *e + nd->n + nd->indn + 2;
    e = memset(vr_xmalloc(size), 0, size);
    memcpy(e->mem, nd->s, nd->n);
    if (nd->indn)
        memcpy(e->mem + nd->n + 1, nd->ind, nd->indn);
    e->name = e->mem;
    e->nn = nd->n;
    e->ind = e->mem + nd->n + 1;
    e->indn = nd->indn;
    if (!mu_partial_compile(r, e)) {
        mu_partial_free(e);
        return NULL;
    }
    e->next = r->cache;
    r->cache = e;
    return e;
}

static void mu_include(mu_rd *r, const mu_node *nd, const mu_ctx *c)
{
    const mu_partial *e;

    if (r->pdepth >= MU_MAX_PARTIAL_DEPTH || r->expansions >= MU_MAX_PARTIAL_EXPANSIONS)
        return;
    r->expansions++;
    e = mu_partial_get(r, nd);
    if (!e)
        return;
    r->pdepth++;
    mu_render(r, &e->t, 0, e->t.n, c);
    r->pdepth--;
}

static void mu_render(mu_rd *r, const mu_tpl *t, size_t i, size_t end, const mu_ctx *c)
{
    while (i < end && !r->failed) {
        const mu_node *nd = &t->v[i];
        switch (nd->kind) {
        case MU_TEXT:
            vr_buf_append(&r->out, nd->s, nd->n);
            break;
        case MU_VAR:
        case MU_RAW:
            mu_value(r, mu_lookup(c, nd->s, nd->n), nd->kind == MU_VAR);
            break;
        case MU_SECTION:
        case MU_INVERTED:
            mu_section(r, t, i, c);
            i = nd->end;
            continue;
        case MU_PARTIAL:
            mu_include(r, nd, c);
            break;
        }
        i++;
    }
}

/*-- public API ------------------------------------------------------------*/

static const char *mu_html_entity(char c)
{
    switch (c) {
    case '&':
        return "&amp;";
    case '"':
        return "&quot;";
    case '<':
        return "&lt;";
    case '>':
        return "&gt;";
    case '\'':
        return "&#39;";
    default:
        return NULL;
    }
}

void vr_mustache_escape_html(void *out, vr_mustache_append_fn append, const char *s, size_t len)
{
    size_t i, run = 0;

    for (i = 0; i < len; i++) {
        const char *rep = mu_html_entity(s[i]);
        if (!rep)
            continue;
        if (i > run)
            append(out, s + run, i - run);
        append(out, rep, strlen(rep));
        run = i + 1;
    }
    if (len > run)
        append(out, s + run, len - run);
}

static char *mu_finish(mu_rd *r, size_t *out_len)
{
    if (r->failed) {
        vr_buf_free(&r->out);
        return NULL;
    }
    vr_buf_reserve(&r->out, 0); /* a string even when nothing was written */
    r->out.data[r->out.len] = '\0';
    if (out_len)
        *out_len = r->out.len;
    return vr_buf_detach(&r->out);
}

char *vr_mustache_render(const char *tmpl, size_t len, const cJSON *data,
                         const vr_mustache_opts *opts, size_t *out_len, char *err, size_t errlen)
{
    static const vr_mustache_opts none = {NULL, NULL, NULL};
    mu_rd r = {.o = opts ? opts : &none, .err = err, .errlen = errlen};
    mu_ctx root = {data, NULL};
    mu_tpl t = {NULL, 0, 0};
    char *out;

    if (err && errlen)
        err[0] = '\0';
    if (!tmpl && len) {
        if (err && errlen)
            snprintf(err, errlen, "line 1: no template");
        return NULL;
    }
    if (!mu_parse(tmpl ? tmpl : "", len, &t, err, errlen))
        return NULL;
    mu_render(&r, &t, 0, t.n, &root);
    out = mu_finish(&r, out_len);
    mu_tpl_free(&t);
    mu_partial_free(r.cache);
    return out;
}
