/*-*** test_pickle.c: unit tests for the data-only pickle decoder ***/
/*
 * Hand-built byte strings for every opcode the decoder reads, each fed
 * whole and one byte at a time; every opcode that would import or call
 * code refused by name and offset; memo sharing; streaming with tags and
 * references; truncation at every offset; and the limits that stop
 * hostile files (huge declared lengths, deep nesting, memo bombs, cycles),
 * each checked to fail in bounded memory; the root's shape told before the
 * rest is read (on_root); a tuple of scalars got back after its element is
 * let go. Byte strings use 3-digit octal
 * escapes (a hex escape would swallow a following 'a' or 'e').
 */
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>

#include "parse/pickle.h"
#include "util/buf.h"

#include "harness.h"

/*-*** helpers ***/

/* A value in a Python-like notation, file order kept; a REF as &tag and an
 * int beyond 64 bits as big+ or big-. */
static void show(vr_buf *b, const vr_pk_value *v)
{
    switch (v->kind) {
    case VR_PK_NONE:
        vr_buf_puts(b, "None");
        break;
    case VR_PK_BOOL:
        vr_buf_puts(b, v->i ? "True" : "False");
        break;
    case VR_PK_INT:
        vr_buf_printf(b, "%lld", (long long)v->i);
        break;
    case VR_PK_TOO_LARGE:
        vr_buf_puts(b, v->i < 0 ? "big-" : "big+");
        break;
    case VR_PK_FLOAT:
        vr_buf_printf(b, "%g", v->f);
        break;
    case VR_PK_STR:
        vr_buf_putc(b, '\'');
        vr_buf_append(b, v->s, v->len);
        vr_buf_putc(b, '\'');
        break;
    case VR_PK_BYTES:
        vr_buf_puts(b, "b'");
        for (size_t i = 0; i < v->len; i++)
            vr_buf_printf(b, "%02x", (unsigned char)v->s[i]);
        vr_buf_putc(b, '\'');
        break;
    case VR_PK_LIST:
    case VR_PK_TUPLE:
        vr_buf_putc(b, v->kind == VR_PK_LIST ? '[' : '(');
        for (size_t i = 0; i < v->len; i++) {
            if (i)
                vr_buf_puts(b, ", ");
            show(b, v->items[i]);
        }
        vr_buf_puts(b, v->kind == VR_PK_LIST ? "]" : v->len == 1 ? ",)" : ")");
        break;
    case VR_PK_DICT:
        vr_buf_putc(b, '{');
        for (size_t i = 0; i < v->len; i++) {
            if (i)
                vr_buf_puts(b, ", ");
            show(b, v->items[2 * i]);
            vr_buf_puts(b, ": ");
            show(b, v->items[2 * i + 1]);
        }
        vr_buf_putc(b, '}');
        break;
    case VR_PK_REF:
        vr_buf_printf(b, "&%lld", (long long)v->i);
        break;
    }
}

/* What a decoding did, through the callbacks. */
typedef struct {
    const char *const *stream; /* path texts to stream (NULL-terminated) */
    const char *tag_key;       /* in elements: tag the value of this key (and below) */
    int64_t tag;               /* the tag given */
    int stop_at;               /* on_element returns -1 at this index (-1: never) */
    vr_buf paths;              /* "path;" per stream() call */
    vr_buf elems;              /* "path[i]=value;" per element */
    vr_buf root;               /* the root at on_done */
    int done;
    const vr_pickle *p;
    size_t held_max;         /* the most held during on_element */
    const vr_pk_value *seen; /* on_done: the root, for sharing checks */
    int shared;              /* on_done: items[0] and items[1] are one node */
    size_t stream_depth;     /* vr_pickle_stream_depth (0: ask about every list) */
    int count_only;          /* elements are counted in nelems, not shown in elems */
    size_t nelems;
} ctx;

static int want_stream(void *ud, const vr_pk_path *path)
{
    ctx *c = ud;
    vr_buf t = VR_BUF_INIT;
    vr_pk_path_text(path, &t);
    vr_buf_printf(&c->paths, "%s;", t.data);
    int yes = 0;
    for (size_t i = 0; c->stream && c->stream[i]; i++)
        yes |= strcmp(c->stream[i], t.data) == 0;
    vr_buf_free(&t);
    return yes;
}

static void tag_under(ctx *c, const vr_pk_value *v)
{
    if (!v || v->kind != VR_PK_DICT)
        return;
    for (size_t i = 0; i < v->len; i++) {
        const vr_pk_value *val = v->items[2 * i + 1];
        if (vr_pk_str_eq(v->items[2 * i], c->tag_key))
            vr_pk_set_tag(val, c->tag);
        else if (val->kind == VR_PK_DICT)
            tag_under(c, val);
        else if (val->kind == VR_PK_LIST)
            for (size_t j = 0; j < val->len; j++)
                tag_under(c, val->items[j]);
    }
}

static int on_element(void *ud, const vr_pk_path *path, size_t index, const vr_pk_value *elem,
                      vr_error *err)
{
    ctx *c = ud;
    if (c->stop_at >= 0 && index == (size_t)c->stop_at)
        return vr_fail(err, "stopped at element %zu", index);
    c->nelems++;
    if (c->count_only)
        return 0;
    vr_buf t = VR_BUF_INIT;
    vr_pk_path_text(path, &t);
    vr_buf_printf(&c->elems, "%s[%zu]=", t.data, index);
    show(&c->elems, elem);
    vr_buf_putc(&c->elems, ';');
    vr_buf_free(&t);
    if (c->tag_key)
        tag_under(c, elem);
    if (c->p && vr_pickle_held(c->p) > c->held_max)
        c->held_max = vr_pickle_held(c->p);
    return 0;
}

static int on_done(void *ud, const vr_pk_value *root, vr_error *err)
{
    ctx *c = ud;
    (void)err;
    c->done++;
    vr_buf_clear(&c->root);
    show(&c->root, root);
    c->shared = (root->kind == VR_PK_LIST || root->kind == VR_PK_TUPLE) && root->len >= 2 &&
                root->items[0] == root->items[1];
    return 0;
}

static void ctx_init(ctx *c)
{
    memset(c, 0, sizeof *c);
    c->stop_at = -1;
}

static void ctx_free(ctx *c)
{
    vr_buf_free(&c->paths);
    vr_buf_free(&c->elems);
    vr_buf_free(&c->root);
}

typedef struct {
    int rc; /* the first failing feed's -1, else finish()'s result */
    vr_error err;
    size_t peak; /* vr_pickle_peak at the end */
    size_t held; /* vr_pickle_held at the end */
    uint64_t trailing;
    int protocol;
} outcome;

/* Decodes data fed in chunks of `chunk` bytes (0: whole), each chunk an
 * exact-size heap copy, so a read past it is an ASan report. */
static outcome decode(ctx *c, const void *data, size_t len, size_t chunk, const vr_pk_limits *lim)
{
    vr_pk_handlers h = {want_stream, on_element, on_done, c, NULL};
    vr_pickle *p = vr_pickle_new(lim, &h);
    vr_pickle_stream_depth(p, c->stream_depth);
    outcome o;
    memset(&o, 0, sizeof o);
    c->p = p;
    size_t step = chunk ? chunk : len;
    for (size_t at = 0; at < len;) {
        size_t n = step < len - at ? step : len - at;
        char *copy = malloc(n);
        memcpy(copy, (const char *)data + at, n);
        int rc = vr_pickle_feed(p, copy, n, &o.err);
        free(copy);
        at += n;
        if (rc < 0) {
            o.rc = -1;
            break;
        }
    }
    if (o.rc == 0)
        o.rc = vr_pickle_finish(p, &o.err);
    o.peak = vr_pickle_peak(p);
    o.held = vr_pickle_held(p);
    o.trailing = vr_pickle_trailing(p);
    o.protocol = vr_pickle_protocol(p);
    vr_pickle_free(p);
    c->p = NULL;
    return o;
}

/* The root of a pickle decoded whole, streaming nothing, or the error. */
static char *root_of(const void *data, size_t len, size_t chunk, const vr_pk_limits *lim)
{
    ctx c;
    ctx_init(&c);
    outcome o = decode(&c, data, len, chunk, lim);
    char *s = o.rc == 0 ? vr_xstrdup(c.root.data ? c.root.data : "") : vr_xstrdup(o.err.msg);
    ctx_free(&c);
    return s;
}

static int starts(const char *s, const char *prefix)
{
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static int has(const char *s, const char *part)
{
    return s && strstr(s, part) != NULL;
}

/* A pickle built in a buffer. */
static void put_bytes(vr_buf *b, const char *s, size_t n)
{
    vr_buf_append(b, s, n);
}

#define PUT(b, lit) put_bytes((b), (lit), sizeof(lit) - 1)
/* A literal and its length, NUL bytes included. */
#define L(lit) (lit), sizeof(lit) - 1

static void put_u32(vr_buf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    vr_buf_append(b, x, 4);
}

/*-*** every opcode ***/

typedef struct {
    const char *name;
    const char *bytes;
    size_t len;
    const char *want;
} pk_case;

static const pk_case cases[] = {
    {"NONE", "\200\004N.", 4, "None"},
    {"NEWTRUE NEWFALSE TUPLE2", "\200\004\210\211\206.", 6, "(True, False)"},
    {"BININT -1", "\200\004J\377\377\377\377.", 8, "-1"},
    {"BININT min", "\200\004J\000\000\000\200.", 8, "-2147483648"},
    {"BININT1", "\200\004K\377.", 5, "255"},
    {"BININT2", "\200\004M\377\377.", 6, "65535"},
    {"LONG1 of no bytes", "\200\004\212\000.", 5, "0"},
    {"LONG1 -1", "\200\004\212\001\377.", 6, "-1"},
    {"LONG1 an address", "\200\004\212\006\000\000\000\042\274\177.", 11, "140446001004544"},
    {"LONG1 INT64_MAX", "\200\004\212\010\377\377\377\377\377\377\377\177.", 13,
     "9223372036854775807"},
    {"LONG1 INT64_MIN", "\200\004\212\010\000\000\000\000\000\000\000\200.", 13,
     "-9223372036854775808"},
    {"LONG1 2^63 is too large", "\200\004\212\011\000\000\000\000\000\000\000\200\000.", 14,
     "big+"},
    {"LONG1 -2^63-1 is too large", "\200\004\212\011\377\377\377\377\377\377\377\177\377.", 14,
     "big-"},
    {"LONG1 9 bytes that only extend the sign",
     "\200\004\212\011\376\377\377\377\377\377\377\377\377.", 14, "-2"},
    {"LONG4 256", "\200\004\213\002\000\000\000\000\001.", 10, "256"},
    {"LONG4 of 300 bytes",
     "\200\004\213,\001\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
     "\000\000\000\000\000\000\200.",
     308, "big-"},
    {"BINFLOAT big-endian", "\200\004G\077\370\000\000\000\000\000\000.", 12, "1.5"},
    {"BINFLOAT negative", "\200\004G\275\356\354{\325\022\265r.", 12, "-2.25e-10"},
    {"SHORT_BINUNICODE", "\200\004\214\003abc.", 8, "'abc'"},
    {"BINUNICODE", "\200\004X\002\000\000\000\303\251.", 10, "'\303\251'"},
    {"BINUNICODE8", "\200\004\215\001\000\000\000\000\000\000\000z.", 13, "'z'"},
    {"empty SHORT_BINUNICODE", "\200\004\214\000.", 5, "''"},
    {"SHORT_BINBYTES", "\200\003C\002\000\377.", 7, "b'00ff'"},
    {"BINBYTES", "\200\003B\001\000\000\000A.", 9, "b'41'"},
    {"BINBYTES8", "\200\004\216\000\000\000\000\000\000\000\000.", 12, "b''"},
    {"BYTEARRAY8", "\200\005\226\001\000\000\000\000\000\000\000\007.", 13, "b'07'"},
    {"EMPTY_TUPLE", "\200\004).", 4, "()"},
    {"TUPLE1", "\200\004K\001\205.", 6, "(1,)"},
    {"TUPLE3", "\200\004K\001K\002K\003\207.", 10, "(1, 2, 3)"},
    {"TUPLE after MARK", "\200\004(K\001K\002K\003K\004t.", 13, "(1, 2, 3, 4)"},
    {"EMPTY_LIST", "\200\004].", 4, "[]"},
    {"LIST after MARK", "\200\004(K\001K\002l.", 9, "[1, 2]"},
    {"APPEND", "\200\004]K\001a.", 7, "[1]"},
    {"APPENDS", "\200\004](K\001K\002e.", 10, "[1, 2]"},
    {"APPENDS in two batches", "\200\004](K\001e(K\002K\003e.", 14, "[1, 2, 3]"},
    {"EMPTY_DICT", "\200\004}.", 4, "{}"},
    {"DICT after MARK", "\200\004(\214\001aK\001d.", 10, "{'a': 1}"},
    {"SETITEM", "\200\004}\214\001aK\001s.", 10, "{'a': 1}"},
    {"SETITEMS", "\200\004}(\214\001aK\001\214\001bK\002u.", 16, "{'a': 1, 'b': 2}"},
    {"keys of every hashable kind",
     "\200\004}(K\001NNK\002\210K\003G\077\370\000\000\000\000\000"
     "\000K\004C\001xK\005K\001K\002\206K\006\212\011\000\000\000"
     "\000\000\000\000\000\001K\007u.",
     51, "{1: None, None: 2, True: 3, 1.5: 4, b'78': 5, (1, 2): 6, big+: 7}"},
    {"POP", "\200\004K\001K\0020.", 8, "1"},
    {"POP of an empty group pops its MARK", "\200\004K\001(0.", 7, "1"},
    {"POP_MARK", "\200\004K\001(K\002K\0031.", 11, "1"},
    {"DUP", "\200\004K\0012\206.", 7, "(1, 1)"},
    {"MEMOIZE and BINGET", "\200\004\214\001a\224h\000\206.", 10, "('a', 'a')"},
    {"BINPUT and LONG_BINGET", "\200\002\214\001aq\007j\007\000\000\000\206.", 14, "('a', 'a')"},
    {"LONG_BINPUT and BINGET", "\200\002Kar\005\000\000\000h\005\206.", 13, "(97, 97)"},
    {"MEMOIZE counts entries as len(memo)", "\200\004K\001q\005K\002\224h\001h\005\206\206.", 16,
     "(2, (2, 1))"},
    {"BINPUT over a slot in use", "\200\004K\001q\000K\002q\000h\000.", 13, "2"},
    {"FRAME", "\200\004\225\002\000\000\000\000\000\000\000N.", 13, "None"},
    {"FRAME that lies", "\200\004\225\377\377\377\377\377\377\377\177N.", 13, "None"},
    {"PROTO 2", "\200\002N.", 4, "None"},
    {"PROTO 5", "\200\005N.", 4, "None"},
    {"STOP leaves the rest", "\200\004K\001(K\002.", 8, "2"},
    {"a list of a dict of a tuple", "\200\004]}\214\001t)K\001\206sa.", 14, "[{'t': ((), 1)}]"},
};
/* pickle.dumps(snap, protocol=4), snap a snapshot in miniature: one segment of one
 * block whose frames list the one trace entry shares (its BINGET is at byte 237) */
static const char snap_pk[] =
    "\200\004\225\374\000\000\000\000\000\000\000}\224(\214\010segments\224]"
    "\224}\224(\214\007address\224\212\006\000\000\000\042\274\177\214\012tot"
    "al_size\224J\000\000 \000\214\006blocks\224]\224}\224(\214\004size\224M"
    "\000\002\214\005state\224\214\020active_allocated\224\214\006frames\224]"
    "\224}\224(\214\010filename\224\214\004a.py\224\214\004line\224K\001\214"
    "\004name\224\214\001f\224uauaua\214\015device_traces\224]\224]\224}\224("
    "\214\006action\224\214\005alloc\224\214\004addr\224\212\006\000\000\000"
    "\042\274\177h\011M\000\002h\014h\015\214\007time_us\224\212\007\311\345K"
    "\224;\025\006uaau.";
/* pickle.dumps({'a': [[], [1]], 'b': {'c': [2], 'z': 0}, 'd': ([3], [4], [5], [6]),
 *               'e': [{'f': [7]}]}, protocol=4) */
static const char paths_pk[] =
    "\200\004\225Y\000\000\000\000\000\000\000}\224(\214\001a\224]\224(]\224]"
    "\224K\001ae\214\001b\224}\224(\214\001c\224]\224K\002a\214\001z\224K\000"
    "u\214\001d\224(]\224K\003a]\224K\004a]\224K\005a]\224K\006at\224\214\001"
    "e\224]\224}\224\214\001f\224]\224K\007asau.";
/* pickle.dumps({'device_traces': [[{'action': 'alloc'}]], 'x': 1}, protocol=4) */
static const char single_pk[] =
    "\200\004\2255\000\000\000\000\000\000\000}\224(\214\015device_traces\224"
    "]\224]\224}\224\214\006action\224\214\005alloc\224saa\214\001x\224K\001u"
    ".";
/* pickle.dumps([[1], [2]], protocol=4) */
static const char bare_pk[] =
    "\200\004\225\017\000\000\000\000\000\000\000]\224(]\224K\001a]\224K\002a"
    "e.";
/* pickle.dumps({'a': 0, 'b': {'c': [2]}}, protocol=4) */
static const char lone_pk[] =
    "\200\004\225\033\000\000\000\000\000\000\000}\224(\214\001a\224K\000\214"
    "\001b\224}\224\214\001c\224]\224K\002asu.";
/* pickle.dumps({'a': 0, 'b': {}, 'c': [2]}, protocol=4) */
static const char empty_pk[] =
    "\200\004\225\032\000\000\000\000\000\000\000}\224(\214\001a\224K\000\214"
    "\001b\224}\224\214\001c\224]\224K\002au.";

static void test_opcodes(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const pk_case *k = &cases[i];
        char *whole = root_of(k->bytes, k->len, 0, NULL);
        char *bytewise = root_of(k->bytes, k->len, 1, NULL);
        STR_EQ(whole, k->want, "%s", k->name);
        STR_EQ(bytewise, whole, "%s: fed one byte at a time, the same", k->name);
        free(whole);
        free(bytewise);
    }
}

static void test_outcome_details(void)
{
    ctx c;
    ctx_init(&c);
    static const char tail[] = "\200\004N.garbage";
    outcome o = decode(&c, tail, sizeof tail - 1, 0, NULL);
    INT_EQ(o.rc, 0, "STOP read: finish() is 0");
    INT_EQ(o.trailing, 7, "the 7 bytes after STOP are counted, not read");
    INT_EQ(o.protocol, 4, "the protocol is 4");
    INT_EQ(c.done, 1, "on_done is called once");
    ctx_free(&c);

    ctx_init(&c);
    static const char two[] = "\200\004\214\001a\224h\000\206.";
    o = decode(&c, two, sizeof two - 1, 0, NULL);
    OK(c.shared, "a value met twice through the memo is one node, not a copy");
    INT_EQ(o.held, 0, "after STOP nothing is held but the decoder's buffers");
    ctx_free(&c);

    /* A list shared by two places in a tuple stays one node. */
    ctx_init(&c);
    static const char lists[] = "\200\004]\224K\001ah\000\206.";
    o = decode(&c, lists, sizeof lists - 1, 0, NULL);
    STR_EQ(c.root.data, "([1], [1])", "the shared list, twice");
    OK(c.shared, "and one node");
    ctx_free(&c);
}

static void test_lookups(void)
{
    /* {'a': 1, 'a': 2, 'b': True, 'n': 'x'}: a key set twice */
    static const char dup[] =
        "\200\004}(\214\001aK\001\214\001aK\002\214\001b\210\214\001n\214\001xu.";
    char *r = root_of(dup, sizeof dup - 1, 0, NULL);
    STR_EQ(r, "{'a': 1, 'a': 2, 'b': True, 'n': 'x'}", "a key set twice is kept twice");
    free(r);

    /* vr_pk_get and friends on a value built by hand */
    vr_pk_value k1 = {VR_PK_STR, 0, 0, "a", 1, NULL}, v1 = {VR_PK_INT, 1, 0, NULL, 0, NULL};
    vr_pk_value k2 = {VR_PK_STR, 0, 0, "a", 1, NULL}, v2 = {VR_PK_INT, 2, 0, NULL, 0, NULL};
    vr_pk_value k3 = {VR_PK_INT, 7, 0, NULL, 0, NULL}, v3 = {VR_PK_BOOL, 1, 0, NULL, 0, NULL};
    vr_pk_value *items[6] = {&k1, &v1, &k2, &v2, &k3, &v3};
    vr_pk_value d = {VR_PK_DICT, 0, 0, NULL, 3, items};
    int64_t x = 0;
    OK(vr_pk_int(vr_pk_get(&d, "a"), &x) && x == 2,
       "vr_pk_get: the last value of a key, as Python");
    OK(vr_pk_get(&d, "b") == NULL, "vr_pk_get: a missing key is NULL");
    OK(vr_pk_get(&k1, "a") == NULL && vr_pk_get(NULL, "a") == NULL,
       "vr_pk_get: not a dict, NULL");
    OK(vr_pk_int(&v3, &x) && x == 1, "vr_pk_int reads a bool");
    OK(!vr_pk_int(&k1, &x) && !vr_pk_int(NULL, &x), "vr_pk_int: not an int");
    OK(vr_pk_str_eq(&k1, "a") && !vr_pk_str_eq(&k1, "ab") && !vr_pk_str_eq(&v1, "a"),
       "vr_pk_str_eq");
    vr_pk_set_tag(&k1, 5); /* not a container: ignored (and no crash) */
    vr_pk_set_tag(NULL, 5);
    OK(1, "vr_pk_set_tag ignores what is not a container");
}

/*-*** refusals ***/

static void test_forbidden(void)
{
    static const struct {
        const char *name;
        unsigned char byte;
        const char *verb;
    } bad[] = {
        {"GLOBAL", 0x63, "import"}, {"STACK_GLOBAL", 0x93, "import"}, {"INST", 0x69, "import"},
        {"EXT1", 0x82, "import"},   {"EXT2", 0x83, "import"},         {"EXT4", 0x84, "import"},
        {"REDUCE", 0x52, "call"},   {"BUILD", 0x62, "call"},          {"OBJ", 0x6f, "call"},
        {"NEWOBJ", 0x81, "call"},   {"NEWOBJ_EX", 0x92, "call"},      {"PERSID", 0x50, "call"},
        {"BINPERSID", 0x51, "call"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char data[] = "\200\004NN?.";
        data[4] = (char)bad[i].byte;
        char want[160];
        snprintf(want, sizeof want,
                 "byte 4: opcode %s (0x%02x) would %s code: refused (vramreport never runs what "
                 "a file holds)",
                 bad[i].name, bad[i].byte, bad[i].verb);
        ctx c;
        ctx_init(&c);
        outcome o = decode(&c, data, sizeof data - 1, 0, NULL);
        INT_EQ(o.rc, -1, "%s is refused", bad[i].name);
        STR_EQ(o.err.msg, want, "%s: named with its offset", bad[i].name);
        INT_EQ(o.err.code, VR_ERR_MALFORMED, "%s: VR_ERR_MALFORMED", bad[i].name);
        INT_EQ(c.done, 0, "%s: nothing was finished", bad[i].name);
        ctx_free(&c);
    }
    /* Data opcodes pickle.dump does not write for plain data. */
    static const unsigned char other[] = {'I', 'L', 'F',  'S',  'T',  'U',  'V',
                                          'g', 'p', 0x8f, 0x90, 0x91, 0x97, 0x98};
    for (size_t i = 0; i < sizeof other; i++) {
        char data[] = "\200\004?.";
        data[2] = (char)other[i];
        char *r = root_of(data, sizeof data - 1, 0, NULL);
        OK(starts(r, "byte 2: opcode ") && has(r, "is not read"), "opcode 0x%02x: %s", other[i],
           r);
        free(r);
    }
    static const char unknown[] = "\200\004K\001\377.";
    char *r = root_of(unknown, sizeof unknown - 1, 0, NULL);
    STR_EQ(r, "byte 4: unknown pickle opcode 0xff", "an unknown opcode, by its byte");
    free(r);
}

static void test_not_a_pickle(void)
{
    ctx c;
    ctx_init(&c);
    outcome o = decode(&c, "", 0, 0, NULL);
    INT_EQ(o.rc, -1, "empty input: finish() is -1");
    OK(has(o.err.msg, "empty"), "and says so: %s", o.err.msg);
    INT_EQ(o.err.code, VR_ERR_NOT_RECOGNISED, "VR_ERR_NOT_RECOGNISED");
    o = decode(&c, "\200", 1, 0, NULL);
    INT_EQ(o.rc, -1, "only the PROTO byte: finish() is -1");
    vr_pickle *p = vr_pickle_new(NULL, NULL);
    vr_error err = VR_ERROR_INIT;
    INT_EQ(vr_pickle_feed(p, NULL, 0, &err), 0, "feeding nothing (NULL, 0) is fine");
    INT_EQ(vr_pickle_finish(p, &err), -1, "and is still empty input");
    vr_pickle_free(p);
    o = decode(&c, "{\"a\": 1}", 8, 0, NULL);
    INT_EQ(o.rc, -1, "JSON is refused at its first byte");
    STR_EQ(o.err.msg, "byte 0: not a pickle: it begins with byte 0x7b, not PROTO (0x80)",
           "with what it found");
    INT_EQ(o.err.code, VR_ERR_NOT_RECOGNISED, "VR_ERR_NOT_RECOGNISED");
    o = decode(&c, "\200\006N.", 4, 0, NULL);
    INT_EQ(o.err.code, VR_ERR_NOT_SUPPORTED, "protocol 6: not supported");
    OK(starts(o.err.msg, "byte 0: pickle protocol 6 is not read"), "%s", o.err.msg);
    o = decode(&c, "\200\001N.", 4, 0, NULL);
    INT_EQ(o.rc, -1, "protocol 1 is refused too");
    ctx_free(&c);
}

static void test_broken_streams(void)
{
    static const struct {
        const char *bytes;
        size_t len;
        const char *want;
    } bad[] = {
#define C(lit, want) {lit, sizeof(lit) - 1, want}
        C("\200\004a.", "byte 2: APPEND needs 2 values on the stack, found 0"),
        C("\200\004]K\001e.", "byte 5: APPENDS without a MARK before it"),
        C("\200\004(K\001e.", "byte 5: APPENDS into nothing : only a list takes elements"),
        C("\200\004}K\001a.", "byte 5: APPEND into a dict: only a list takes elements"),
        C("\200\004](K\001K\002u.", "byte 8: SETITEMS into a list: only a dict takes items"),
        C("\200\004}(K\001u.", "byte 6: SETITEMS with an odd number of items (1): a key without "
                               "its value"),
        C("\200\004(K\001d.", "byte 5: DICT with an odd number of items (1): a key without its "
                              "value"),
        C("\200\004}]K\001s.", "byte 6: SETITEM with a list as a key (not hashable)"),
        C("\200\004}(]\205K\001u.", "byte 8: SETITEMS with a tuple as a key (not hashable)"),
        C("\200\004}\226\001\000\000\000\000\000\000\000xK\001s.",
          "byte 15: SETITEM with a bytes as a key (not hashable)"),
        C("\200\004.", "byte 2: STOP needs 1 value on the stack, found 0"),
        C("\200\004K\001(.",
          "byte 5: STOP needs 1 value on the stack after the last MARK, found 0"),
        C("\200\004h\003.", "byte 2: BINGET of memo slot 3, which was never set"),
        C("\200\004j\000\000\001\000.", "byte 2: LONG_BINGET of memo slot 65536, which was never "
                                        "set"),
        C("\200\004\224.", "byte 2: MEMOIZE needs 1 value on the stack, found 0"),
        C("\200\004\213\377\377\377\377.", "byte 2: LONG4 with a negative byte count (-1)"),
        C("\200\0041.", "byte 2: POP_MARK without a MARK before it"),
        C("\200\0040.", "byte 2: POP needs 1 value on the stack, found 0"),
        C("\200\004K\001\206.", "byte 4: TUPLE2 needs 2 values on the stack, found 1"),
        C("\200\004t.", "byte 2: TUPLE without a MARK before it"),
        C("\200\004(2.", "byte 3: DUP needs 1 value on the stack after the last MARK, found 0"),
#undef C
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *r = root_of(bad[i].bytes, bad[i].len, 0, NULL);
        STR_EQ(r, bad[i].want, "refused with one clear line");
        free(r);
        r = root_of(bad[i].bytes, bad[i].len, 1, NULL);
        STR_EQ(r, bad[i].want, "the same fed a byte at a time");
        free(r);
    }
}

/*-*** streaming ***/

static void test_paths(void)
{
    static const struct {
        const char *bytes;
        size_t len;
        const char *want;
    } cases_[] = {
        {paths_pk, sizeof paths_pk - 1, "a;a.0;a.1;b.c;d.0;d.1;d.2;d.3;e;e.0.f;"},
        {single_pk, sizeof single_pk - 1, "device_traces;device_traces.0;"},
        {bare_pk, sizeof bare_pk - 1, "$;0;1;"},
        {snap_pk, sizeof snap_pk - 1,
         "segments;segments.0.blocks;segments.0.blocks.0.frames;device_traces;device_traces.0;"},
        /* {'a': 0, 'b': {}, 'c': [2]}: an empty dict among a MARK's items is complete */
        {empty_pk, sizeof empty_pk - 1, "c;"},
        /* {'a': 0, 'b': {'c': [2]}}: the documented misreading, pinned: a lone value of
         * a dict among a MARK's items reads as the outer dict's */
        {lone_pk, sizeof lone_pk - 1, "c;"},
        {L("\200\004K\001]\206."), "?;"},
        {L("\200\004}K\001]s."), "?;"},
        {L("\200\004(K\001]t."), "1;"},
    };
    for (size_t i = 0; i < sizeof cases_ / sizeof cases_[0]; i++) {
        ctx c;
        ctx_init(&c);
        outcome o = decode(&c, cases_[i].bytes, cases_[i].len, 0, NULL);
        INT_EQ(o.rc, 0, "case %zu decodes", i);
        STR_EQ(c.paths.data, cases_[i].want, "case %zu: each list's place", i);
        ctx_free(&c);
    }
}

static const char *const snap_streams[] = {"segments", "device_traces.0", NULL};

/* vr_pickle_stream_depth: deeper lists and unreadable places are not
 * asked about, and what streams is the same. */
static void test_stream_depth(void)
{
    ctx all, two;
    ctx_init(&all);
    ctx_init(&two);
    all.stream = two.stream = snap_streams;
    all.tag_key = two.tag_key = "frames";
    all.tag = two.tag = 42;
    two.stream_depth = 2;
    outcome a = decode(&all, snap_pk, sizeof snap_pk - 1, 0, NULL);
    outcome b = decode(&two, snap_pk, sizeof snap_pk - 1, 3, NULL);
    OK(a.rc == 0 && b.rc == 0, "decodes with and without a depth (%s%s)", a.err.msg, b.err.msg);
    STR_EQ(two.paths.data, "segments;device_traces;device_traces.0;",
           "depth 2: only the lists at most 2 deep are asked about");
    STR_EQ(two.elems.data, all.elems.data, "depth 2: the same elements");
    STR_EQ(two.root.data, all.root.data, "depth 2: the same root");
    ctx_free(&all);
    ctx_free(&two);

    ctx_init(&two);
    two.stream_depth = 1;
    a = decode(&two, L("\200\004K\001]\206."), 0, NULL);
    OK(a.rc == 0 && two.paths.len == 0, "an unreadable place is not asked about");
    ctx_free(&two);

    /* A list right after a MARK whose container is still to come: the
     * stack slot at the MARK's place is past the values, never pushed (a
     * NULL stack) or freed (a string popped), and is not the container
     * (read under ASan, a null load and a use after free before). */
    static const struct {
        const char *pk;
        size_t len;
        const char *root;
    } marks[] = {
        {L("\200\004(]t."), "([],)"},
        {L("\200\004X\005\000\000\000abcde0(]t."), "([],)"},
        {L("\200\004(]]]t."), "([], [], [])"},
    };
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++) {
        ctx_init(&two);
        two.stream_depth = 2;
        a = decode(&two, marks[i].pk, marks[i].len, 0, NULL);
        OK(a.rc == 0, "a list after a MARK, depth 2: decodes (%zu, %s)", i, a.err.msg);
        STR_EQ(two.root.data, marks[i].root, "a list after a MARK, depth 2: the root (%zu)", i);
        ctx_free(&two);
    }
}

static void test_stream_tag_ref(void)
{
    ctx c;
    ctx_init(&c);
    c.stream = snap_streams;
    c.tag_key = "frames";
    c.tag = 42;
    outcome o = decode(&c, snap_pk, sizeof snap_pk - 1, 0, NULL);
    INT_EQ(o.rc, 0, "streamed and tagged: decodes (%s)", o.err.msg);
    STR_EQ(
        c.elems.data,
        "segments[0]={'address': 140446001004544, 'total_size': 2097152, 'blocks': [{'size': "
        "512, 'state': 'active_allocated', 'frames': [{'filename': 'a.py', 'line': 1, 'name': "
        "'f'}]}]};device_traces.0[0]={'action': 'alloc', 'addr': 140446001004544, 'size': 512, "
        "'frames': &42, 'time_us': 1712195495519689};",
        "each element complete, in order; the frames met again is a REF with its tag");
    STR_EQ(c.root.data, "{'segments': [], 'device_traces': [[]]}",
           "the root holds the streamed lists empty");
    INT_EQ(o.held, 0, "after STOP nothing is held");
    ctx_free(&c);

    /* One byte at a time: the same. */
    ctx_init(&c);
    c.stream = snap_streams;
    c.tag_key = "frames";
    c.tag = 42;
    o = decode(&c, snap_pk, sizeof snap_pk - 1, 1, NULL);
    OK(o.rc == 0 && has(c.elems.data, "'frames': &42"), "the same fed a byte at a time");
    ctx_free(&c);

    /* Not streamed: the frames list is the real list, twice. */
    ctx_init(&c);
    o = decode(&c, snap_pk, sizeof snap_pk - 1, 0, NULL);
    OK(o.rc == 0 && !has(c.root.data, "&") &&
           has(c.root.data, "'frames': [{'filename': 'a.py', 'line': 1, 'name': 'f'}], "
                            "'time_us'"),
       "streaming nothing: the shared frames list is there in full");
    ctx_free(&c);
}

static void test_stream_gone(void)
{
    ctx c;
    ctx_init(&c);
    c.stream = snap_streams;
    outcome o = decode(&c, snap_pk, sizeof snap_pk - 1, 0, NULL);
    INT_EQ(o.rc, -1, "an untagged container met again after its element was handed over");
    OK(starts(o.err.msg, "byte 237: BINGET refers to a value no longer held"), "%s", o.err.msg);
    INT_EQ(o.err.code, VR_ERR_MALFORMED, "VR_ERR_MALFORMED");
    ctx_free(&c);

    /* The frame dict tagged, not its list: the list is still gone. */
    ctx_init(&c);
    c.stream = snap_streams;
    c.tag_key = "filename"; /* tags nothing that is a container */
    o = decode(&c, snap_pk, sizeof snap_pk - 1, 0, NULL);
    INT_EQ(o.rc, -1, "a tag on something else does not keep it");
    ctx_free(&c);

    /* An EMPTY list met again (torch shares one empty frames list between
     * every block with no stack): {'segments': [{'frames': x}, {'frames':
     * x}]} with x = [], as pickle.dumps(..., 4) writes it. */
    static const char shared_empty_pk[] =
        "\x80\x04\x95\x28\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x8c\x08"
        "segments\x94\x5d\x94"
        "\x28\x7d\x94\x8c\x06"
        "frames\x94\x5d\x94\x73\x7d\x94\x68\x04\x68\x05\x73\x65\x73\x2e";
    ctx_init(&c);
    c.stream = snap_streams;
    o = decode(&c, shared_empty_pk, sizeof shared_empty_pk - 1, 0, NULL);
    INT_EQ(o.rc, 0, "an empty list met again after its element was handed over (%s)", o.err.msg);
    STR_EQ(c.elems.data, "segments[0]={'frames': []};segments[1]={'frames': []};",
           "it is an empty list again");
    ctx_free(&c);
}

static void test_stream_forms(void)
{
    static const char *const root[] = {"$", NULL};
    static const struct {
        const char *bytes;
        size_t len;
        const char *elems;
    } forms[] = {
        {L("\200\004]K\001a."), "$[0]=1;"},
        {L("\200\004](K\001K\002e(K\003e."), "$[0]=1;$[1]=2;$[2]=3;"},
        {L("\200\004(K\001K\002l."), "$[0]=1;$[1]=2;"},
        {L("\200\004]\224(K\001h\000e."), ""},
    };
    for (size_t i = 0; i < 3; i++) {
        ctx c;
        ctx_init(&c);
        c.stream = root;
        outcome o = decode(&c, forms[i].bytes, forms[i].len, 0, NULL);
        INT_EQ(o.rc, 0, "form %zu decodes", i);
        STR_EQ(c.elems.data, forms[i].elems, "form %zu: elements handed over in order", i);
        STR_EQ(c.root.data, "[]", "form %zu: the streamed root is empty", i);
        ctx_free(&c);
    }
    ctx c;
    ctx_init(&c);
    c.stream = root;
    outcome o = decode(&c, forms[3].bytes, forms[3].len, 0, NULL);
    OK(o.rc == -1 && has(o.err.msg, "inside itself"), "a streamed list appended to itself: %s",
       o.err.msg);
    ctx_free(&c);

    /* on_element says stop: its error stands, and stays. */
    ctx_init(&c);
    c.stream = root;
    c.stop_at = 1;
    vr_pk_handlers h = {want_stream, on_element, on_done, &c, NULL};
    vr_pickle *p = vr_pickle_new(NULL, &h);
    vr_error err = VR_ERROR_INIT;
    INT_EQ(vr_pickle_feed(p, forms[1].bytes, forms[1].len, &err), -1, "on_element stops it");
    STR_EQ(err.msg, "stopped at element 1", "with the callback's own message");
    vr_error again = VR_ERROR_INIT;
    INT_EQ(vr_pickle_feed(p, "N", 1, &again), -1, "a feed after a failure fails");
    STR_EQ(again.msg, "stopped at element 1", "with the same message");
    INT_EQ(vr_pickle_finish(p, &again), -1, "and so does finish()");
    vr_pickle_free(p);
    ctx_free(&c);
}

/* {'segments': [{'d': {'s': <10 KB string, not memoized>}} x 2000]}, both
 * dicts memoized, appended in batches of 10: the memo must not keep the
 * strings of elements already handed over. */
static void test_memo_does_not_pin(void)
{
    vr_buf b = VR_BUF_INIT;
    PUT(&b, "\200\004}\224(\214\010segments\224]\224(");
    char *big = malloc(10000);
    memset(big, 'x', 10000);
    for (int i = 0; i < 2000; i++) {
        PUT(&b, "}\224\214\001d}\224\214\001sX");
        put_u32(&b, 10000);
        put_bytes(&b, big, 10000);
        PUT(&b, "ss");
        if (i % 10 == 9)
            PUT(&b, "e(");
    }
    PUT(&b, "e.");
    free(big);
    static const char *const segs[] = {"segments", NULL};
    ctx c;
    ctx_init(&c);
    c.stream = segs;
    outcome o = decode(&c, b.data, b.len, 4096, NULL);
    INT_EQ(o.rc, 0, "2000 elements of 10 KB decode (%s)", o.err.msg);
    OK(o.peak < 400 * 1024, "held at most %zu bytes: the memo kept no element's string", o.peak);
    OK(has(c.elems.data, "segments[1999]={'d': {'s': 'xxx"), "the last element was handed over");
    ctx_free(&c);

    /* Streaming nothing, the same file holds all of it: the figure above is real. */
    ctx_init(&c);
    o = decode(&c, b.data, b.len, 0, NULL);
    OK(o.rc == 0 && o.peak > 20000000, "decoded whole it holds %zu bytes", o.peak);
    ctx_free(&c);
    vr_buf_free(&b);
}

/* A memo larger than what stays in memory (3 million slots, 12 MiB):
 * held at most 8 MiB of it, the rest in its temporary file. */
static void test_memo_stays_flat(void)
{
    vr_buf b = VR_BUF_INIT;
    PUT(&b, "\200\004}\224(\214\010segments\224]\224(");
    for (int i = 0; i < 3000000; i++) {
        PUT(&b, "}\224");
        if (i % 1000 == 999)
            PUT(&b, "e(");
    }
    PUT(&b, "eu.");
    static const char *const segs[] = {"segments", NULL};
    ctx c;
    ctx_init(&c);
    c.stream = segs;
    c.count_only = 1;
    outcome o = decode(&c, b.data, b.len, 65536, NULL);
    INT_EQ(o.rc, 0, "3,000,000 memoized dicts, streamed: decoded (%s)", o.err.msg);
    INT_EQ(c.nelems, 3000000, "every one handed over");
    OK(o.peak < (9 << 20), "held at most %zu bytes: 8 MiB of the 12 MiB memo and a little",
       o.peak);
    ctx_free(&c);
    vr_buf_free(&b);
}

static void test_truncation(void)
{
    static const struct {
        const char *bytes;
        size_t len;
    } whole[] = {{snap_pk, sizeof snap_pk - 1}, {paths_pk, sizeof paths_pk - 1}};
    for (size_t w = 0; w < 2; w++) {
        int ok = 1, chunked_same = 1;
        for (size_t n = 0; n < whole[w].len; n++) {
            ctx c;
            ctx_init(&c);
            c.stream = snap_streams;
            c.tag_key = "frames";
            outcome o = decode(&c, whole[w].bytes, n, 0, NULL);
            int want = n < 2 ? -1 : 1;
            if (o.rc != want || c.done) {
                ok = 0;
                printf("#   cut at %zu: finish() %d (%s)\n", n, o.rc, o.err.msg);
            }
            vr_buf first = c.elems;
            c.elems = (vr_buf)VR_BUF_INIT;
            outcome o1 = decode(&c, whole[w].bytes, n, 1, NULL);
            const char *a = first.data ? first.data : "", *b = c.elems.data ? c.elems.data : "";
            if (o1.rc != o.rc || strcmp(a, b) != 0)
                chunked_same = 0;
            vr_buf_free(&first);
            ctx_free(&c);
        }
        OK(ok, "pickle %zu cut at each of its %zu offsets: truncated (1), or -1 before PROTO", w,
           whole[w].len);
        OK(chunked_same, "pickle %zu: the same elements whole and byte by byte", w);
    }
}

/*-*** limits ***/

static void test_huge_lengths(void)
{
    static const struct {
        const char *name;
        const char *bytes;
        size_t len;
    } huge[] = {
        {"BINUNICODE8", "\200\004\215\000\000\000\000\000\000\000\020abc", 13},
        {"BINBYTES8", "\200\004\216\000\000\000\000\000\000\000\020abc", 13},
        {"BYTEARRAY8", "\200\005\226\000\000\000\000\000\000\000\020abc", 13},
    };
    for (size_t i = 0; i < 3; i++) {
        ctx c;
        ctx_init(&c);
        outcome o = decode(&c, huge[i].bytes, huge[i].len, 0, NULL);
        char want[160];
        snprintf(want, sizeof want,
                 "byte 2: %s declares 1152921504606846976 bytes, more than the decoder's limit "
                 "of 256 MiB",
                 huge[i].name);
        STR_EQ(o.err.msg, want, "%s declaring 2^60 bytes", huge[i].name);
        OK(o.peak < 4096, "refused before allocating (%zu bytes held)", o.peak);
        ctx_free(&c);
    }
    ctx c;
    ctx_init(&c);
    static const char long4[] = "\200\004\213\377\377\377\177\000";
    outcome o = decode(&c, long4, sizeof long4 - 1, 0, NULL);
    STR_EQ(o.err.msg,
           "byte 2: LONG4 declares 2147483647 bytes, more than the decoder's limit of "
           "256 MiB",
           "LONG4 declaring 2^31 - 1 bytes");
    /* Within the limit but absent: only what arrives is allocated. */
    static const char claim[] = "\200\004X\000\302\353\013abcdefgh";
    o = decode(&c, claim, sizeof claim - 1, 0, NULL);
    INT_EQ(o.rc, 1, "a 200 MB string the file does not hold: truncated");
    OK(o.peak < 65536, "and only %zu bytes were held", o.peak);
    vr_pk_limits small = {.max_bytes = 1 << 20};
    o = decode(&c, claim, sizeof claim - 1, 0, &small);
    STR_EQ(o.err.msg,
           "byte 2: BINUNICODE declares 200000000 bytes, more than the decoder's "
           "limit of 1 MiB",
           "beyond a smaller max_bytes");
    ctx_free(&c);
}

static void expect_refused(vr_buf *b, const vr_pk_limits *lim, const char *part, const char *what)
{
    ctx c;
    ctx_init(&c);
    outcome o = decode(&c, b->data, b->len, 0, lim);
    INT_EQ(o.rc, -1, "%s: refused", what);
    OK(has(o.err.msg, part) && starts(o.err.msg, "byte ") && !strchr(o.err.msg, '\n'),
       "%s: one line saying so: %s", what, o.err.msg);
    OK(o.peak < 8 << 20, "%s: in bounded memory (%zu bytes held at most)", what, o.peak);
    ctx_free(&c);
    vr_buf_clear(b);
}

static void test_deep_nesting(void)
{
    vr_buf b = VR_BUF_INIT;
    PUT(&b, "\200\004");
    for (int i = 0; i < 10000; i++)
        PUT(&b, "](");
    expect_refused(&b, NULL, "more than 256 MARKs open", "10,000 lists each opened by a MARK");

    PUT(&b, "\200\004");
    for (int i = 0; i < 10000; i++)
        PUT(&b, "]");
    for (int i = 0; i < 9999; i++)
        PUT(&b, "a");
    PUT(&b, ".");
    expect_refused(&b, NULL, "nested more than 256 deep",
                   "10,000 lists appended into each other");

    PUT(&b, "\200\004)");
    for (int i = 0; i < 10000; i++)
        PUT(&b, "\205");
    PUT(&b, ".");
    expect_refused(&b, NULL, "nested more than 256 deep", "10,000 one-tuples");

    PUT(&b, "\200\004");
    for (int i = 0; i < 10000; i++)
        PUT(&b, "}\214\001k");
    PUT(&b, "}");
    for (int i = 0; i < 10000; i++)
        PUT(&b, "s");
    PUT(&b, ".");
    expect_refused(&b, NULL, "nested more than 256 deep", "10,000 dicts set into each other");

    /* Deep but within a raised limit: decodes. */
    PUT(&b, "\200\004");
    for (int i = 0; i < 1000; i++)
        PUT(&b, "]");
    for (int i = 0; i < 999; i++)
        PUT(&b, "a");
    PUT(&b, ".");
    vr_pk_limits deep = {.max_depth = 2000};
    ctx c;
    ctx_init(&c);
    outcome o = decode(&c, b.data, b.len, 0, &deep);
    INT_EQ(o.rc, 0, "1,000 levels with max_depth 2000: decoded, and freed");
    ctx_free(&c);
    vr_buf_free(&b);
}

/* 1 put in memo slots 4096 apart (LONG_BINPUT): a page each. */
static void sparse_memo(vr_buf *b, uint32_t pages)
{
    PUT(b, "\200\004K\001");
    for (uint32_t i = 0; i < pages; i++) {
        PUT(b, "r");
        put_u32(b, i << 12);
    }
    PUT(b, ".");
}

static void test_memo_bombs(void)
{
    vr_buf b = VR_BUF_INIT;
    /* X0 = []; Xk = [X(k-1), X(k-1)] through LONG_BINGET and DUP: tiny in
     * memory, 2^k nodes to walk. */
    PUT(&b, "\200\004]\224");
    for (uint32_t k = 1; k <= 60; k++) {
        PUT(&b, "]\224(j");
        put_u32(&b, k - 1);
        PUT(&b, "2e");
    }
    PUT(&b, ".");
    expect_refused(&b, NULL, "expands to more than 268435456 nodes", "DUP+APPENDS doubling");

    PUT(&b, "\200\004]\224(");
    for (int i = 0; i < 1000; i++)
        PUT(&b, "h\000");
    PUT(&b, "e.");
    expect_refused(&b, NULL, "APPENDS puts a list inside itself", "a list appended to itself");

    PUT(&b, "\200\004]\224h\000a.");
    expect_refused(&b, NULL, "APPEND puts a list inside itself", "APPEND of a list to itself");

    /* Refused after items already moved in (fill_list and fill_dict move
     * scalars on a fast path and clear their stack slots only on an
     * error): each is released once (ASan says if not). */
    PUT(&b, "\200\004]\224(K\001\214\001xJ\000\000\001\000h\000e.");
    expect_refused(&b, NULL, "APPENDS puts a list inside itself",
                   "a list appended to itself after three items");
    PUT(&b, "\200\004}\224(\214\001a\224K\001\214\001bJ\000\000\001\000\214\001ch\000u.");
    expect_refused(&b, NULL, "SETITEMS puts a dict inside itself",
                   "a dict set in itself after two items");

    PUT(&b, "\200\004}\224\214\001a]\224h\000as.");
    expect_refused(&b, NULL, "SETITEM into a dict already inside another value",
                   "a dict put in its own value");

    /* A million references to one value: the pending stack alone passes 1 MiB. */
    PUT(&b, "\200\004K\001\224](");
    for (int i = 0; i < 1000000; i++)
        PUT(&b, "h\000");
    PUT(&b, "e.");
    vr_pk_limits mib = {.max_bytes = 1 << 20};
    expect_refused(&b, &mib, "more than 1 MiB held at once",
                   "a million BINGETs, max_bytes 1 MiB");

    PUT(&b, "\200\004](");
    for (int i = 0; i < 11; i++)
        PUT(&b, "K\001");
    PUT(&b, "e.");
    vr_pk_limits ten = {.max_items = 10};
    expect_refused(&b, &ten, "more than 10 items in one list", "max_items 10");

    PUT(&b, "\200\004K\001r\377\377\377\377.");
    expect_refused(&b, NULL, "memo slot 4294967295, beyond the decoder's limit of 1073741824",
                   "a memo slot beyond max_memo");

    /* The memo is paged: a far slot costs one page (16 KiB), not the
     * slots before it. */
    PUT(&b, "\200\004K\001r");
    put_u32(&b, 60000000);
    PUT(&b, "q\0000h\000j");
    put_u32(&b, 60000000);
    PUT(&b, "\206.");
    ctx c;
    ctx_init(&c);
    outcome o = decode(&c, b.data, b.len, 0, NULL);
    INT_EQ(o.rc, 0, "a sparse memo slot 60,000,000 and slot 0: decodes");
    STR_EQ(c.root.data, "(1, 1)", "both give the value put there");
    OK(o.peak < 1 << 20, "in bounded memory (%zu bytes held at most)", o.peak);
    ctx_free(&c);
    vr_buf_clear(&b);

    /* Pages in memory are counted: 64 pages, 4096 slots apart, past a
     * max_bytes of 512 KiB (with the memo's default 8 MiB in memory). */
    sparse_memo(&b, 64);
    vr_pk_limits small = {.max_bytes = 512 << 10};
    expect_refused(&b, &small, "more than 524288 bytes held at once",
                   "64 sparse memo pages, 512 KiB");

    /* A memo spread thinner than the file could fill (one far slot a
     * LONG_BINPUT, 5 bytes, a 16 KiB page each) is refused past the first
     * thousand pages, before it fills the disk. */
    sparse_memo(&b, 2000);
    vr_pk_limits mib_in_memory = {.max_memo_in_memory = 1 << 20};
    expect_refused(&b, &mib_in_memory,
                   "the memo spreads over more pages than a file this long could fill",
                   "2,000 sparse memo pages");
    vr_buf_free(&b);
}

/* N ints, each memoized (BINPUT) and popped, then a list of every third
 * one read back (BINGET), the last first: a memo of N slots read back in
 * an order that jumps between pages. */
static void memo_readback(vr_buf *b, uint32_t n)
{
    PUT(b, "\200\004");
    for (uint32_t i = 0; i < n; i++) {
        PUT(b, "J");
        put_u32(b, i * 7u);
        PUT(b, "r");
        put_u32(b, i);
        PUT(b, "0");
    }
    PUT(b, "(");
    for (uint32_t i = n; i-- > 0;)
        if (i % 3 == 0) {
            PUT(b, "j");
            put_u32(b, i);
        }
    PUT(b, "l.");
}

static void test_memo_in_file(void)
{
    /* 40,000 slots: ten pages, two in memory. Every value comes back from
     * the temporary file as it was put there, as with the memo in memory. */
    vr_buf b = VR_BUF_INIT;
    memo_readback(&b, 40000);
    ctx whole, paged;
    ctx_init(&whole);
    ctx_init(&paged);
    vr_pk_limits two_pages = {.max_memo_in_memory = 2 * 4096 * 4};
    outcome o1 = decode(&whole, b.data, b.len, 0, NULL);
    outcome o2 = decode(&paged, b.data, b.len, 7, &two_pages);
    INT_EQ(o1.rc, 0, "40,000 memoized ints: decoded");
    INT_EQ(o2.rc, 0, "the same, two memo pages in memory, 7-byte chunks: decoded");
    OK(strncmp(whole.root.data, "[279993, 279972, ", 17) == 0, "the last one first: %.30s",
       whole.root.data);
    OK(whole.root.len == paged.root.len &&
           memcmp(whole.root.data, paged.root.data, whole.root.len) == 0,
       "the same values with the memo mostly in the file (%zu bytes of output)", paged.root.len);
    OK(o2.peak + 8 * 4096 * 4 < o1.peak, "and less held: %zu bytes at most, against %zu", o2.peak,
       o1.peak);
    ctx_free(&whole);
    ctx_free(&paged);

    /* TMPDIR that cannot be written: the memo's file cannot be made, and
     * the error says so and what to do. */
    const char *old = getenv("TMPDIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("TMPDIR", "/nonexistent/vramreport-test", 1);
    ctx c;
    ctx_init(&c);
    outcome o3 = decode(&c, b.data, b.len, 0, &two_pages);
    INT_EQ(o3.rc, -1, "no folder for the memo's file: refused");
    OK(has(o3.err.msg, "cannot keep the memo in a temporary file (No such file or directory; "
                       "the folder is $TMPDIR") &&
           !strchr(o3.err.msg, '\n'),
       "one line saying why: %s", o3.err.msg);
    INT_EQ(o3.err.code, VR_ERR_IO, "an I/O error");
    ctx_free(&c);

    if (saved) {
        setenv("TMPDIR", saved, 1);
        free(saved);
    } else {
        unsetenv("TMPDIR");
    }

    /* A memo allowed a TiB of memory costs what it holds, not its bound. */
    vr_pk_limits tib = {.max_memo_in_memory = (size_t)1 << 40};
    ctx_init(&c);
    outcome o5 = decode(&c, "\200\004]\224.", 5, 0, &tib);
    OK(o5.rc == 0 && o5.peak < 65536,
       "a TiB of memo allowed in memory, one slot used: %zu bytes held", o5.peak);
    ctx_free(&c);

    /* The file fails while an element is let go (a page read back for its
     * dict's slot pushes another out, past a 16 KiB file size limit): that
     * error, met where nothing could return it, fails the decode at once. */
    vr_buf_clear(&b);
    PUT(&b, "\200\004]\224}\224");
    for (int i = 0; i < 8200; i++)
        PUT(&b, "K\001\2240");
    PUT(&b, "a.");
    static const char *const root[] = {"$", NULL};
    ctx_init(&c);
    c.stream = root;
    struct rlimit was;
    getrlimit(RLIMIT_FSIZE, &was);
    struct rlimit small = {16384, was.rlim_max};
    void (*xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &small);
    outcome o4 = decode(&c, b.data, b.len, 0, &two_pages);
    setrlimit(RLIMIT_FSIZE, &was);
    signal(SIGXFSZ, xfsz);
    INT_EQ(o4.rc, -1, "the memo's file full while an element is let go: refused");
    OK(has(o4.err.msg, "cannot keep the memo in a temporary file (File too large"),
       "saying why: %s", o4.err.msg);
    ctx_free(&c);
    vr_buf_free(&b);
}

/*-*** the root's shape, told early (on_root) ***/

typedef struct {
    int calls;
    vr_buf seen;       /* "kind key" at the call */
    uint64_t fed_then; /* bytes fed when it was called */
    const vr_pickle *p;
    int refuse; /* return -1 */
} root_ctx;

static int root_seen(void *ud, const vr_pk_value *root, const vr_pk_value *key, vr_error *err)
{
    root_ctx *r = ud;
    r->calls++;
    r->fed_then = vr_pickle_offset(r->p);
    vr_buf_clear(&r->seen);
    if (!root)
        vr_buf_puts(&r->seen, "mark");
    else
        show(&r->seen, root);
    if (key) {
        vr_buf_putc(&r->seen, ' ');
        show(&r->seen, key);
    }
    return r->refuse ? vr_fail(err, "not mine") : 0;
}

/* Fed one byte at a time: rc of the decoding, r filled. */
static int root_decode(root_ctx *r, const char *data, size_t len)
{
    vr_pk_handlers h = {NULL, NULL, NULL, r, root_seen};
    vr_pickle *p = vr_pickle_new(NULL, &h);
    vr_error err = VR_ERROR_INIT;
    r->p = p;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < len; i++)
        rc = vr_pickle_feed(p, data + i, 1, &err);
    if (rc == 0)
        rc = vr_pickle_finish(p, &err);
    vr_pickle_free(p);
    return rc;
}

static void test_on_root(void)
{
    root_ctx r = {0};
    /* {"lr": [1, 2]}: EMPTY_DICT MEMOIZE SHORT_BINUNICODE 'lr' ... */
    static const char d[] = "\200\004}\224\214\002lr\224]\224(K\001K\002es.";
    INT_EQ(root_decode(&r, d, sizeof d - 1), 0, "a dict decodes");
    INT_EQ(r.calls, 1, "on_root is called once");
    STR_EQ(r.seen.data, "{} 'lr'", "with the empty dict and its first key");
    /* fed one byte at a time: the key's last byte is the 8th */
    INT_EQ(r.fed_then + 1, 8, "as soon as the key is read, before its value (byte %llu)",
           (unsigned long long)r.fed_then + 1);
    /* the same with SETITEMS: MARK after the dict */
    static const char m[] = "\200\004}\224(\214\001a\224K\001\214\001b\224K\002u.";
    r.calls = 0;
    INT_EQ(root_decode(&r, m, sizeof m - 1), 0, "SETITEMS decodes");
    STR_EQ(r.seen.data, "{} 'a'", "the first key after the MARK");
    INT_EQ(r.calls, 1, "once");
    static const char l[] = "\200\004]\224K\001a.";
    r.calls = 0;
    INT_EQ(root_decode(&r, l, sizeof l - 1), 0, "a list decodes");
    STR_EQ(r.seen.data, "[]", "a list: no key");
    static const char t[] = "\200\004(K\001K\002K\003K\004t.";
    r.calls = 0;
    root_decode(&r, t, sizeof t - 1);
    STR_EQ(r.seen.data, "mark", "a MARK first: no root value");
    static const char g[] = "\200\004\214\013collections\224\214\013OrderedDict\224\223.";
    r.calls = 0;
    INT_EQ(root_decode(&r, g, sizeof g - 1), -1, "STACK_GLOBAL is refused");
    STR_EQ(r.seen.data, "'collections'", "but the first value was told before it");
    static const char e[] = "\200\004}\224.";
    r.calls = 0;
    INT_EQ(root_decode(&r, e, sizeof e - 1), 0, "an empty dict decodes");
    INT_EQ(r.calls, 0, "an empty dict shows no key: on_root is not called");
    r.refuse = 1;
    r.calls = 0;
    INT_EQ(root_decode(&r, d, sizeof d - 1), -1, "on_root's -1 stops the decoding");
    vr_buf_free(&r.seen);
}

/* A tuple of scalars an element held stays in the memo when the element
 * is let go, untagged: a later BINGET gets it back (10,000 segments
 * sharing one segment_pool_id). A list is still refused. */
static void test_shared_tuple(void)
{
    ctx c;
    static const char *const root[] = {"$", NULL};
    ctx_init(&c);
    c.stream = root;
    /* [{'p': (3, 7)}, {'p': <BINGET 3>}], APPEND after each: the first
     * element is handed over and let go before the BINGET */
    static const char t[] =
        "\200\004]\224}\224\214\001p\224K\003K\007\206\224sa}\224h\002h\003sa.";
    outcome o = decode(&c, t, sizeof t - 1, 1, NULL);
    INT_EQ(o.rc, 0, "the second element's BINGET of the tuple: %s", o.err.msg);
    STR_EQ(c.elems.data, "$[0]={'p': (3, 7)};$[1]={'p': (3, 7)};", "both have it");
    ctx_free(&c);
    ctx_init(&c);
    c.stream = root;
    static const char l[] = "\200\004]\224}\224\214\001p\224]\224K\003asa}\224h\002h\003sa.";
    o = decode(&c, l, sizeof l - 1, 1, NULL);
    INT_EQ(o.rc, -1, "a list shared the same way, untagged, is still refused");
    ctx_free(&c);
}

int main(void)
{
    RUN(test_opcodes);
    RUN(test_memo_in_file);
    RUN(test_memo_stays_flat);
    RUN(test_outcome_details);
    RUN(test_lookups);
    RUN(test_forbidden);
    RUN(test_not_a_pickle);
    RUN(test_broken_streams);
    RUN(test_paths);
    RUN(test_stream_tag_ref);
    RUN(test_stream_depth);
    RUN(test_stream_gone);
    RUN(test_stream_forms);
    RUN(test_memo_does_not_pin);
    RUN(test_truncation);
    RUN(test_huge_lengths);
    RUN(test_deep_nesting);
    RUN(test_memo_bombs);
    RUN(test_on_root);
    RUN(test_shared_tuple);
    return harness_summary();
}
