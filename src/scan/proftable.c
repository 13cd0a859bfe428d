/* Profiler tables (proftable.h): the layout is the rule under the header;
 * the column names, the memory units and the device spellings are tables
 * below, after torch/autograd/profiler_util.py (_build_table,
 * _format_memory) of github.com/pytorch/pytorch. */
#include "scan/proftable.h"

#include <string.h>

#include "util/buf.h"

/*-*** the tables ***/

typedef enum { KEY_OTHER = 0, KEY_NAME, KEY_CALLS, KEY_MEM, KEY_SOURCE } column_key;

/* Header names we read; the rest are kept as names only. The device is
 * use_device.upper(): "CUDA" (the cuda_* figures), "XPU", ..., or
 * "Device" in newer releases; all are the device's. */
static const struct {
    const char *header;
    column_key key;
    vr_prof_mem mem;
} columns[] = {
    {"Name", KEY_NAME, 0},
    {"# of Calls", KEY_CALLS, 0},
    {"Number of Calls", KEY_CALLS, 0},
    {"Self CPU Mem", KEY_MEM, VR_PROF_SELF_CPU_MEM},
    {"CPU Mem", KEY_MEM, VR_PROF_CPU_MEM},
    {"Self CUDA Mem", KEY_MEM, VR_PROF_SELF_CUDA_MEM},
    {"CUDA Mem", KEY_MEM, VR_PROF_CUDA_MEM},
    {"Self Device Mem", KEY_MEM, VR_PROF_SELF_CUDA_MEM},
    {"Device Mem", KEY_MEM, VR_PROF_CUDA_MEM},
    {"Self DEVICE Mem", KEY_MEM, VR_PROF_SELF_CUDA_MEM},
    {"DEVICE Mem", KEY_MEM, VR_PROF_CUDA_MEM},
    {"Self XPU Mem", KEY_MEM, VR_PROF_SELF_CUDA_MEM},
    {"XPU Mem", KEY_MEM, VR_PROF_CUDA_MEM},
    {"Self MTIA Mem", KEY_MEM, VR_PROF_SELF_CUDA_MEM},
    {"MTIA Mem", KEY_MEM, VR_PROF_CUDA_MEM},
    {"Self HPU Mem", KEY_MEM, VR_PROF_SELF_CUDA_MEM},
    {"HPU Mem", KEY_MEM, VR_PROF_CUDA_MEM},
    {"Source Location", KEY_SOURCE, 0},
};

/* _format_memory's units ("b" below 1 Kb); forks print B/KB/MB/GB. */
static const struct {
    const char *name;
    int shift;
} units[] = {{"b", 0}, {"Kb", 10}, {"Mb", 20}, {"Gb", 30}, {"Tb", 40},
             {"B", 0}, {"KB", 10}, {"MB", 20}, {"GB", 30}, {"TB", 40}};

/* The calls column's names, which every header has: the scanner's marker. */
static const char *const header_markers[] = {"# of Calls", "Number of Calls"};

static const char *const total_prefix = "Self ";
static const char *const total_marker = " time total:";

/*-*** small helpers ***/

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static size_t trim_end(const char *s, size_t n)
{
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    return n;
}

/* [*a, *b) without the blanks around it. */
static void trim(const char *s, size_t *a, size_t *b)
{
    while (*a < *b && s[*a] == ' ')
        (*a)++;
    while (*b > *a && s[*b - 1] == ' ')
        (*b)--;
}

/*-*** cells ***/

int vr_proftable_memory(const char *s, size_t n, int64_t *bytes)
{
    size_t i = 0;
    int neg = i < n && s[i] == '-';
    i += (size_t)neg;
    uint64_t ip = 0, frac = 0, scale = 1;
    size_t digits = 0;
    for (; i < n && is_digit(s[i]); i++, digits++)
        if (digits < 15)
            ip = ip * 10 + (uint64_t)(s[i] - '0');
    if (!digits || digits >= 15)
        return 0;
    if (i < n && s[i] == '.')
        for (i++; i < n && is_digit(s[i]); i++)
            if (scale < 1000000) {
                frac = frac * 10 + (uint64_t)(s[i] - '0');
                scale *= 10;
            }
    if (i >= n || s[i] != ' ')
        return 0;
    i++;
    for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
        if (n - i != strlen(units[u].name) || memcmp(s + i, units[u].name, n - i) != 0)
            continue;
        /* ip < 10^15, shift <= 40: the product stays below 2^63 only for
         * ip < 2^23 at Tb; refuse what would not fit */
        if (ip > (UINT64_C(1) << (62 - units[u].shift)) / scale)
            return 0;
        uint64_t v = ((ip * scale + frac) << units[u].shift) + scale / 2;
        *bytes = (int64_t)(v / scale) * (neg ? -1 : 1);
        return 1;
    }
    return 0;
}

static int read_count(const char *s, size_t n, int64_t *out)
{
    int64_t v = 0;
    if (n == 0 || n > 18)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

/*-*** lines for the scanner ***/

int vr_proftable_is_rule(const char *s, size_t n, size_t *at)
{
    n = trim_end(s, n);
    size_t i = n, runs = 0;
    while (i > 0 && s[i - 1] == '-') {
        size_t end = i;
        while (i > 0 && s[i - 1] == '-')
            i--;
        if (end - i < 3)
            return 0;
        runs++;
        if (i >= 2 && s[i - 1] == ' ' && s[i - 2] == ' ' && (i == 2 || s[i - 3] == '-'))
            i -= 2;
        else
            break;
    }
    if (runs < 2)
        return 0;
    *at = i;
    return 1;
}

int vr_proftable_fits(const char *rule, size_t rule_len, const char *s, size_t n)
{
    n = trim_end(s, n);
    if (n == 0)
        return 1;
    size_t at;
    if (!vr_proftable_is_rule(rule, rule_len, &at))
        return 0;
    const char *gap = memchr(rule + at, ' ', rule_len - at);
    size_t first_end = gap ? (size_t)(gap - rule) : rule_len;
    if (n < first_end)
        return 0;
    for (size_t i = 0; i < n && i < rule_len; i++)
        if (rule[i] == ' ' && s[i] != ' ')
            return 0;
    return 1;
}

int vr_proftable_is_total(const char *s, size_t n)
{
    size_t k = strlen(total_prefix);
    return n > k && memcmp(s, total_prefix, k) == 0 &&
           memmem(s, n, total_marker, strlen(total_marker)) != NULL;
}

int vr_proftable_is_header(const char *s, size_t n)
{
    for (size_t k = 0; k < sizeof header_markers / sizeof *header_markers; k++)
        if (memmem(s, n, header_markers[k], strlen(header_markers[k])))
            return 1;
    return 0;
}

/*-*** one table ***/

typedef struct {
    size_t start[VR_PROFTABLE_MAX_COLUMNS], end[VR_PROFTABLE_MAX_COLUMNS];
    column_key key[VR_PROFTABLE_MAX_COLUMNS];
    vr_prof_mem mem[VR_PROFTABLE_MAX_COLUMNS];
    size_t n;
    size_t needed; /* a row is whole when it reaches this offset */
} layout;

typedef struct {
    const char *p, *end;
    const vr_proftable_sink *sink;
} line_reader;

/* The next line without its end and the log prefix; 0 at the end. */
static int next_line(line_reader *r, const char **line, size_t *len)
{
    if (r->p >= r->end)
        return 0;
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    size_t n = (size_t)((nl ? nl : r->end) - r->p);
    *line = r->p;
    *len = n - (n > 0 && r->p[n - 1] == '\r');
    r->p += n + (nl != NULL);
    size_t skip = r->sink->prefix ? r->sink->prefix(*line, *len) : 0;
    *line += skip;
    *len -= skip;
    return 1;
}

/* The columns of the rule starting at `at` (what is before it, a log's
 * stamp say, may hold dashes of its own). */
static void read_layout(const char *s, size_t n, size_t at, layout *l)
{
    n = trim_end(s, n);
    l->n = 0;
    for (size_t i = at; i < n && l->n < VR_PROFTABLE_MAX_COLUMNS;) {
        if (s[i] != '-') {
            i++;
            continue;
        }
        l->start[l->n] = i;
        while (i < n && s[i] == '-')
            i++;
        l->end[l->n++] = i;
    }
}

/* Column c of the line, trimmed: from the end of the column before (a
 * right-aligned value a little wider than its column spills into the
 * gap), the last one to the line's end (Source Location is left-aligned
 * and may be longer). */
static void cell(const layout *l, size_t c, const char *s, size_t n, size_t *a, size_t *b)
{
    size_t from = c == 0 ? l->start[0] : l->end[c - 1];
    *a = from < n ? from : n;
    *b = c + 1 == l->n ? n : (l->end[c] < n ? l->end[c] : n);
    trim(s, a, b);
}

static column_key key_of(const char *s, size_t n, vr_prof_mem *mem)
{
    for (size_t k = 0; k < sizeof columns / sizeof *columns; k++)
        if (strlen(columns[k].header) == n && memcmp(columns[k].header, s, n) == 0) {
            *mem = columns[k].mem;
            return columns[k].key;
        }
    return KEY_OTHER;
}

/* The header's names, split at runs of two blanks or more (no name has
 * one): a name wider than its column ("CUDA time avg" in 12) pushes the
 * rest of the header right, so widths cannot cut it. 1 when there are
 * as many names as columns. */
static int split_header(const layout *l, const char *s, size_t n, size_t *from, size_t *to)
{
    size_t k = 0, i = l->start[0]; /* what is before the rule is a log's */
    while (i < n) {
        while (i < n && s[i] == ' ')
            i++;
        if (i >= n)
            break;
        if (k == l->n)
            return 0;
        from[k] = i;
        while (i < n && !(s[i] == ' ' && (i + 1 >= n || s[i + 1] == ' ')))
            i++;
        to[k++] = i;
    }
    return k == l->n;
}

/* The header's names into the layout's keys and `names` (tab-joined);
 * by the columns' widths when the split does not give one per column. */
static void read_header(layout *l, const char *s, size_t n, vr_buf *names)
{
    size_t from[VR_PROFTABLE_MAX_COLUMNS], to[VR_PROFTABLE_MAX_COLUMNS];
    n = trim_end(s, n);
    int split = split_header(l, s, n, from, to);
    l->needed = 0;
    for (size_t c = 0; c < l->n; c++) {
        size_t a = from[c], b = to[c];
        if (!split)
            cell(l, c, s, n, &a, &b);
        if (c)
            vr_buf_putc(names, '\t');
        vr_buf_append(names, s + a, b - a);
        l->key[c] = key_of(s + a, b - a, &l->mem[c]);
        /* Source Location is left-aligned and often blank: a row is
         * whole without it. */
        if (l->key[c] != KEY_OTHER && l->key[c] != KEY_SOURCE && l->end[c] > l->needed)
            l->needed = l->end[c];
    }
}

/* A row into `op`: 1 read, 0 a line to pass over (blank, a stack
 * line), -1 cut short or unreadable (counted). */
static int read_row(const layout *l, const char *s, size_t n, vr_proftable_op *op)
{
    n = trim_end(s, n);
    memset(op, 0, sizeof *op);
    int bad = 0;
    for (size_t c = 0; c < l->n; c++) {
        size_t a, b;
        cell(l, c, s, n, &a, &b);
        if (l->key[c] == KEY_NAME) {
            op->name = s + a;
            op->name_len = b - a;
        } else if (l->key[c] == KEY_CALLS) {
            op->has_calls = read_count(s + a, b - a, &op->calls);
            bad |= !op->has_calls;
        } else if (l->key[c] == KEY_MEM) {
            op->has_mem[l->mem[c]] = vr_proftable_memory(s + a, b - a, &op->mem[l->mem[c]]);
            bad |= !op->has_mem[l->mem[c]];
        } else if (l->key[c] == KEY_SOURCE && b > a) {
            op->source = s + a;
            op->source_len = b - a;
        }
    }
    if (!op->name || op->name_len == 0)
        return 0;
    return n < l->needed || bad ? -1 : 1;
}

/* The rows up to the closing rule; 1 when it came, -1 on a callback's error. */
static int read_rows(line_reader *r, const layout *l, void *ud, vr_proftable_stats *st,
                     uint64_t *rows, vr_error *err)
{
    const char *s;
    size_t n, at;
    while (next_line(r, &s, &n)) {
        if (vr_proftable_is_rule(s, n, &at))
            return 1;
        vr_proftable_op op;
        int got = read_row(l, s, n, &op);
        if (got < 0)
            st->skipped++;
        if (got <= 0)
            continue;
        (*rows)++;
        if (r->sink->on_op && r->sink->on_op(ud, &op, err) < 0)
            return -1;
    }
    return 0;
}

/* Up to the rule under the header: its layout and names; 0 when the
 * text holds no table. */
static int read_head(line_reader *r, layout *l, vr_buf *names)
{
    const char *s, *header = NULL;
    size_t n, at, header_len = 0;
    int ruled = 0;
    while (next_line(r, &s, &n)) {
        if (vr_proftable_is_rule(s, n, &at)) {
            if (header) {
                read_layout(s, n, at, l);
                read_header(l, header, header_len, names);
                return l->n > 1;
            }
            ruled = 1;
        } else if (ruled && vr_proftable_is_header(s, n)) {
            header = s;
            header_len = n;
        } else {
            return 0;
        }
    }
    return 0;
}

int vr_proftable_read(const char *text, size_t len, int cut, const vr_proftable_sink *sink,
                      void *ud, vr_proftable_stats *st, vr_error *err)
{
    line_reader r = {text, text + len, sink};
    layout l;
    vr_buf names = VR_BUF_INIT;
    if (!read_head(&r, &l, &names)) {
        vr_buf_free(&names);
        return 0;
    }
    int rc = sink->on_begin
                 ? sink->on_begin(ud, names.data ? names.data : "", names.len, l.n, err)
                 : 0;
    vr_buf_free(&names);
    uint64_t rows = 0;
    int closed = rc < 0 ? -1 : read_rows(&r, &l, ud, st, &rows, err);
    if (closed < 0)
        return -1;
    st->tables++;
    st->rows += rows;
    return sink->on_end ? sink->on_end(ud, rows, cut || !closed, err) : 0;
}
