/*-*** pickle_dump.c: a pickle, decoded by src/parse/pickle.c, as canonical JSON ***/
/*
 * The test oracle's other half (tests/pickle.sh decodes the same file with
 * Python's own Unpickler and prints it the same way). Canonical form: no
 * spaces; dict keys sorted by their UTF-8 bytes (a key set twice: its last
 * value); strings as their bytes, with only '"', '\' and bytes below 0x20
 * escaped; ints exact; floats "%.17g" ({"__float__":"inf"} and the like
 * when not finite); bytes {"__bytes__":"hex"}; tuples as lists; an int
 * beyond 64 bits {"__too_large__":true}; a dict with a key that is not a
 * string {"__dict__":[[key,value],...]} sorted by the keys' canonical text.
 *
 *   pickle_dump [options] FILE
 *     --chunk N        read and feed N bytes at a time (default 65536; 0:
 *                      sizes 1 to 4096 from a fixed pseudo-random sequence)
 *     --stream PATHS   stream the lists at these paths (comma-separated;
 *                      steps joined by '.', '*' any step, '$' the root) and
 *                      print "PATH<TAB>COUNT" for each at the end instead
 *                      of the root; every container of an element is
 *                      tagged, so later references to it come back as REFs
 *     --elements       with --stream: also print "PATH<TAB>INDEX<TAB>JSON"
 *                      for each element (a REF printed as what it stood for)
 *     --repeat N       decode N times, print nothing but the throughput,
 *                      the decoder's peak and the process's max RSS
 *     --stream-depth N the decoder asks about lists at most N deep only
 *                      (vr_pickle_stream_depth; the output must not change
 *                      when no pattern matches a deeper list)
 *     --max-bytes N, --max-depth N, --max-nodes N   the decoder's limits
 *                      (max-nodes defaults to 1 << 24 here: the output is
 *                      printed in full)
 *     --memo-in-memory N  bytes of the memo kept in memory (the rest goes
 *                      to a temporary file; 32768: two pages)
 *
 * Exit status: 0 decoded; 1 refused (one line on stderr); 3 truncated
 * (no STOP); 2 usage or I/O.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "parse/pickle.h"
#include "util/buf.h"

typedef struct {
    char **patterns;
    size_t npatterns;
    int elements;
    /* streamed lists, by their first element's path text */
    char **lists;
    size_t *counts;
    size_t nlists, lists_cap;
    /* tag -> canonical text of what was tagged (with --elements) */
    char **texts;
    size_t ntexts, texts_cap;
    int64_t next_tag;
    const vr_pk_step *last_steps;
    size_t last_list;
    vr_buf out;
    FILE *print;
} dump_ctx;

/*-*** canonical JSON ***/

static void put_str(vr_buf *b, const char *s, size_t n)
{
    vr_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            vr_buf_putc(b, '\\');
            vr_buf_putc(b, (char)c);
        } else if (c < 0x20) {
            vr_buf_printf(b, "\\u%04x", c);
        } else {
            vr_buf_putc(b, (char)c);
        }
    }
    vr_buf_putc(b, '"');
}

static void put_value(dump_ctx *c, vr_buf *b, const vr_pk_value *v);

typedef struct {
    const char *s;
    size_t len;
    size_t index;
    char *own;
} key_text;

static int key_cmp(const void *a, const void *b)
{
    const key_text *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int r = memcmp(x->s, y->s, n);
    if (r)
        return r;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void put_dict(dump_ctx *c, vr_buf *b, const vr_pk_value *d)
{
    int all_str = 1;
    for (size_t i = 0; i < d->len; i++)
        all_str &= d->items[2 * i]->kind == VR_PK_STR;
    key_text *keys = vr_xmalloc((d->len + 1) * sizeof *keys);
    for (size_t i = 0; i < d->len; i++) {
        const vr_pk_value *k = d->items[2 * i];
        keys[i] = (key_text){k->s, k->len, i, NULL};
        if (!all_str) {
            vr_buf kb = VR_BUF_INIT;
            put_value(c, &kb, k);
            keys[i].own = vr_buf_detach(&kb);
            keys[i].s = keys[i].own;
            keys[i].len = strlen(keys[i].own);
        }
    }
    qsort(keys, d->len, sizeof *keys, key_cmp);
    vr_buf_puts(b, all_str ? "{" : "{\"__dict__\":[");
    int first = 1;
    for (size_t i = 0; i < d->len; i++) {
        /* a key set twice: the last one (sorted by index within the run) */
        if (i + 1 < d->len && keys[i + 1].len == keys[i].len &&
            memcmp(keys[i + 1].s, keys[i].s, keys[i].len) == 0)
            continue;
        if (!first)
            vr_buf_putc(b, ',');
        first = 0;
        if (all_str) {
            put_str(b, keys[i].s, keys[i].len);
            vr_buf_putc(b, ':');
        } else {
            vr_buf_putc(b, '[');
            vr_buf_append(b, keys[i].s, keys[i].len);
            vr_buf_putc(b, ',');
        }
        put_value(c, b, d->items[2 * keys[i].index + 1]);
        if (!all_str)
            vr_buf_putc(b, ']');
    }
    vr_buf_puts(b, all_str ? "}" : "]}");
    for (size_t i = 0; i < d->len; i++)
        free(keys[i].own);
    free(keys);
}

static void put_float(vr_buf *b, double f)
{
    if (isnan(f))
        vr_buf_puts(b, "{\"__float__\":\"nan\"}");
    else if (isinf(f))
        vr_buf_puts(b, f > 0 ? "{\"__float__\":\"inf\"}" : "{\"__float__\":\"-inf\"}");
    else
        vr_buf_printf(b, "%.17g", f);
}

static void put_value(dump_ctx *c, vr_buf *b, const vr_pk_value *v)
{
    switch (v->kind) {
    case VR_PK_NONE:
        vr_buf_puts(b, "null");
        break;
    case VR_PK_BOOL:
        vr_buf_puts(b, v->i ? "true" : "false");
        break;
    case VR_PK_INT:
        vr_buf_printf(b, "%lld", (long long)v->i);
        break;
    case VR_PK_TOO_LARGE:
        vr_buf_puts(b, "{\"__too_large__\":true}");
        break;
    case VR_PK_FLOAT:
        put_float(b, v->f);
        break;
    case VR_PK_STR:
        put_str(b, v->s, v->len);
        break;
    case VR_PK_BYTES:
        vr_buf_puts(b, "{\"__bytes__\":\"");
        for (size_t i = 0; i < v->len; i++)
            vr_buf_printf(b, "%02x", (unsigned char)v->s[i]);
        vr_buf_puts(b, "\"}");
        break;
    case VR_PK_LIST:
    case VR_PK_TUPLE:
        vr_buf_putc(b, '[');
        for (size_t i = 0; i < v->len; i++) {
            if (i)
                vr_buf_putc(b, ',');
            put_value(c, b, v->items[i]);
        }
        vr_buf_putc(b, ']');
        break;
    case VR_PK_DICT:
        put_dict(c, b, v);
        break;
    case VR_PK_REF:
        if (c && v->i >= 0 && (size_t)v->i < c->ntexts && c->texts[v->i])
            vr_buf_puts(b, c->texts[v->i]);
        else
            vr_buf_printf(b, "{\"__ref__\":%lld}", (long long)v->i);
        break;
    }
}

/*-*** streaming ***/

static int step_matches(const vr_pk_step *s, const char *pat, size_t n)
{
    if (n == 1 && pat[0] == '*')
        return 1;
    if (s->key)
        return s->key_len == n && memcmp(s->key, pat, n) == 0;
    char num[32];
    int k = snprintf(num, sizeof num, "%zu", s->index);
    return (size_t)k == n && memcmp(num, pat, n) == 0;
}

static int pattern_matches(const char *pat, const vr_pk_path *p)
{
    if (strcmp(pat, "$") == 0)
        return p->depth == 0;
    size_t depth = 0;
    for (const char *s = pat;;) {
        const char *dot = strchr(s, '.');
        size_t n = dot ? (size_t)(dot - s) : strlen(s);
        if (depth >= p->depth || !step_matches(&p->steps[depth], s, n))
            return 0;
        depth++;
        if (!dot)
            break;
        s = dot + 1;
    }
    return depth == p->depth;
}

static int want(void *ud, const vr_pk_path *path)
{
    dump_ctx *c = ud;
    for (size_t i = 0; i < c->npatterns; i++) {
        if (pattern_matches(c->patterns[i], path)) {
            vr_buf t = VR_BUF_INIT;
            vr_pk_path_text(path, &t);
            vr_xgrow(&c->lists, &c->lists_cap, c->nlists + 1, sizeof *c->lists, 8);
            c->counts = vr_xrealloc(c->counts, c->lists_cap * sizeof *c->counts);
            c->lists[c->nlists] = vr_buf_detach(&t);
            c->counts[c->nlists++] = 0;
            return 1;
        }
    }
    return 0;
}

/* Tags every container of an element, after its items, keeping its
 * canonical text when --elements asked for it. */
static void tag_all(dump_ctx *c, const vr_pk_value *v, int depth)
{
    if (v->kind != VR_PK_LIST && v->kind != VR_PK_TUPLE && v->kind != VR_PK_DICT)
        return;
    size_t n = v->kind == VR_PK_DICT ? 2 * v->len : v->len;
    for (size_t i = 0; i < n && depth < 4096; i++)
        tag_all(c, v->items[i], depth + 1);
    int64_t tag = c->next_tag++;
    if (c->elements) {
        vr_buf t = VR_BUF_INIT;
        put_value(c, &t, v);
        vr_xgrow(&c->texts, &c->texts_cap, (size_t)tag + 1, sizeof *c->texts, 64);
        c->texts[tag] = vr_buf_detach(&t);
        c->ntexts = (size_t)tag + 1;
    }
    vr_pk_set_tag(v, tag);
}

static size_t list_index(dump_ctx *c, const vr_pk_path *path)
{
    /* one streamed list's elements come with the same path */
    if (path->steps && path->steps == c->last_steps && c->last_list < c->nlists)
        return c->last_list;
    vr_buf t = VR_BUF_INIT;
    vr_pk_path_text(path, &t);
    size_t i = c->nlists;
    while (i-- > 0)
        if (strcmp(c->lists[i], t.data) == 0)
            break;
    vr_buf_free(&t);
    c->last_steps = path->steps;
    c->last_list = i;
    return i;
}

static int on_element(void *ud, const vr_pk_path *path, size_t index, const vr_pk_value *elem,
                      vr_error *err)
{
    dump_ctx *c = ud;
    (void)err;
    size_t li = list_index(c, path);
    if (li < c->nlists)
        c->counts[li]++;
    if (c->elements && c->print) {
        vr_buf_clear(&c->out);
        put_value(c, &c->out, elem);
        fprintf(c->print, "%s\t%zu\t", li < c->nlists ? c->lists[li] : "?", index);
        fwrite(c->out.data, 1, c->out.len, c->print);
        fputc('\n', c->print);
    }
    tag_all(c, elem, 0);
    return 0;
}

static int on_done(void *ud, const vr_pk_value *root, vr_error *err)
{
    dump_ctx *c = ud;
    (void)err;
    if (!c->print || c->npatterns)
        return 0;
    vr_buf_clear(&c->out);
    put_value(c, &c->out, root);
    fwrite(c->out.data, 1, c->out.len, c->print);
    fputc('\n', c->print);
    return 0;
}

static void reset_ctx(dump_ctx *c)
{
    for (size_t i = 0; i < c->nlists; i++)
        free(c->lists[i]);
    for (size_t i = 0; i < c->ntexts; i++)
        free(c->texts[i]);
    c->nlists = c->ntexts = 0;
    c->next_tag = 0;
    c->last_steps = NULL;
}

/*-*** the run ***/

typedef struct {
    const char *file;
    size_t chunk;
    long repeat;
    vr_pk_limits lim;
    size_t stream_depth;
} options;

static size_t next_chunk(const options *o, uint32_t *seed)
{
    if (o->chunk)
        return o->chunk;
    *seed = *seed * 1103515245u + 12345u;
    return 1 + (*seed >> 8) % 4096;
}

/* One decoding of the file, read a chunk at a time (the decoder's memory
 * is then what the process holds): 0, 1 (refused), 3 (truncated), 2 (I/O). */
static int decode(const options *o, dump_ctx *c, size_t *peak)
{
    FILE *f = fopen(o->file, "rb");
    if (!f) {
        fprintf(stderr, "pickle_dump: %s: cannot read it\n", o->file);
        return 2;
    }
    vr_pk_handlers h = {c->npatterns ? want : NULL, on_element, on_done, c, NULL};
    vr_pickle *p = vr_pickle_new(&o->lim, &h);
    vr_pickle_stream_depth(p, o->stream_depth);
    vr_error err = VR_ERROR_INIT;
    uint32_t seed = 12345;
    unsigned char *buf = vr_xmalloc(o->chunk ? o->chunk : 4096);
    size_t n;
    int rc = 0;
    while (rc == 0 && (n = fread(buf, 1, next_chunk(o, &seed), f)) > 0)
        rc = vr_pickle_feed(p, buf, n, &err);
    int io = ferror(f);
    fclose(f);
    free(buf);
    if (io) {
        fprintf(stderr, "pickle_dump: %s: read error\n", o->file);
        vr_pickle_free(p);
        return 2;
    }
    if (rc == 0)
        rc = vr_pickle_finish(p, &err);
    if (rc < 0)
        fprintf(stderr, "pickle_dump: %s: %s\n", o->file, err.msg);
    else if (rc == 1)
        fprintf(stderr, "pickle_dump: %s: truncated: the input ends at byte %llu, before STOP\n",
                o->file, (unsigned long long)vr_pickle_offset(p));
    *peak = vr_pickle_peak(p);
    vr_pickle_free(p);
    return rc < 0 ? 1 : rc == 1 ? 3 : 0;
}

static void print_counts(const dump_ctx *c)
{
    for (size_t i = 0; i < c->nlists; i++)
        printf("%s\t%zu\n", c->lists[i], c->counts[i]);
}

static int bench(const options *o, dump_ctx *c)
{
    FILE *f = fopen(o->file, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0) {
        fprintf(stderr, "pickle_dump: %s: cannot read it\n", o->file);
        if (f)
            fclose(f);
        return 2;
    }
    long len = ftell(f);
    fclose(f);
    struct timespec t0, t1;
    size_t peak = 0;
    int rc = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < o->repeat && rc == 0; i++) {
        rc = decode(o, c, &peak);
        reset_ctx(c);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(
        stderr,
        "%ld x %ld bytes in %.3f s: %.1f MB/s; decoder peak held %zu bytes; max RSS %ld KiB\n",
        o->repeat, len, s, (double)len * (double)o->repeat / s / 1e6, peak, ru.ru_maxrss);
    return rc;
}

static void split_patterns(dump_ctx *c, char *list)
{
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        c->patterns = vr_xrealloc(c->patterns, (c->npatterns + 1) * sizeof *c->patterns);
        c->patterns[c->npatterns++] = tok;
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: pickle_dump [--chunk N] [--stream PATHS [--elements]] [--repeat N]\n"
                    "                   [--stream-depth N] [--max-bytes N] [--max-depth N]\n"
                    "                   [--max-nodes N] [--memo-in-memory N] FILE\n");
    return 2;
}

static int parse_args(int argc, char **argv, options *o, dump_ctx *c)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (strcmp(a, "--elements") == 0)
            c->elements = 1;
        else if (strcmp(a, "--chunk") == 0 && has)
            o->chunk = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--stream") == 0 && has)
            split_patterns(c, argv[++i]);
        else if (strcmp(a, "--repeat") == 0 && has)
            o->repeat = strtol(argv[++i], NULL, 10);
        else if (strcmp(a, "--stream-depth") == 0 && has)
            o->stream_depth = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--max-bytes") == 0 && has)
            o->lim.max_bytes = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--max-depth") == 0 && has)
            o->lim.max_depth = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--max-nodes") == 0 && has)
            o->lim.max_nodes = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--memo-in-memory") == 0 && has)
            o->lim.max_memo_in_memory = strtoull(argv[++i], NULL, 10);
        else if (a[0] == '-' || o->file)
            return -1;
        else
            o->file = a;
    }
    return o->file ? 0 : -1;
}

int main(int argc, char **argv)
{
    options o = {NULL, 65536, 0, {.max_nodes = (uint64_t)1 << 24}, 0};
    dump_ctx c;
    memset(&c, 0, sizeof c);
    if (parse_args(argc, argv, &o, &c) < 0)
        return usage();
    int rc;
    if (o.repeat > 0) {
        rc = bench(&o, &c);
    } else {
        size_t peak;
        c.print = stdout;
        rc = decode(&o, &c, &peak);
        if (rc == 0 && c.npatterns)
            print_counts(&c);
    }
    reset_ctx(&c);
    free(c.lists);
    free(c.counts);
    free(c.texts);
    free(c.patterns);
    vr_buf_free(&c.out);
    return rc;
}
