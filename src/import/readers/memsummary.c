/* Reader for torch.cuda.memory_summary() text, and the line parser
 * (memsummary.h) it shares with the job-log reader. The layout is
 * PyTorch's (torch/cuda/memory.py, memory_summary; notes in
 * docs/formats/memory-summary.md): a 75-column box, a title with the
 * device, a header with the OOM and retry counts, then one row per metric
 * and pool with four columns (current, peak, allocated, freed). Every
 * figure becomes an allocator_stat row under memory_stats()'s key; this
 * file owns the rows of its source. */
#include "import/readers/memsummary.h"

#include <stdio.h>
#include <string.h>

#include "import/reader.h"

/*-*** the box's vocabulary ***/

typedef struct {
    const char *label; /* the row's text in the box */
    const char *key;   /* memory_stats()'s metric */
    int is_size;       /* sizes with units, else counts */
    int has_pools;     /* followed by "from large/small pool" rows */
} metric_row;

static const metric_row metrics[] = {
    {"Allocated memory", "allocated_bytes", 1, 1},
    {"Active memory", "active_bytes", 1, 1},
    {"Requested memory", "requested_bytes", 1, 1},
    {"GPU reserved memory", "reserved_bytes", 1, 1},
    {"Non-releasable memory", "inactive_split_bytes", 1, 1},
    {"Allocations", "allocation", 0, 1},
    {"Active allocs", "active", 0, 1},
    {"GPU reserved segments", "segment", 0, 1},
    {"Non-releasable allocs", "inactive_split", 0, 1},
    {"Oversize allocations", "oversize_allocations", 0, 0},
    {"Oversize GPU segments", "oversize_segments", 0, 0},
};
#define NMETRICS ((int)(sizeof metrics / sizeof *metrics))

/* Pool rows: index 1 and 2 (0 is the metric's own row, "all"). */
static const char *const pool_labels[] = {NULL, "from large pool", "from small pool"};
static const char *const pool_keys[] = {"all", "large_pool", "small_pool"};
static const char *const stat_keys[] = {"current", "peak", "allocated", "freed"};
#define NSTATS 4

/* The OOM header's bit in `seen`, after the rows' (metric * 3 + pool). */
#define SEEN_HEADER (NMETRICS * 3)

/* _format_size's prefixes, old (KB, written by PyTorch < 1.13) and new
 * (KiB): both are powers of 1024, as the code divides by 1024. */
static const struct {
    const char *unit;
    int64_t mult;
} size_units[] =
    {
        {"B", 1},
        {"KB", INT64_C(1) << 10},
        {"KiB", INT64_C(1) << 10},
        {"MB", INT64_C(1) << 20},
        {"MiB", INT64_C(1) << 20},
        {"GB", INT64_C(1) << 30},
        {"GiB", INT64_C(1) << 30},
        {"TB", INT64_C(1) << 40},
        {"TiB", INT64_C(1) << 40},
        {"PB", INT64_C(1) << 50},
        {"PiB", INT64_C(1) << 50},
},
  count_units[] = {
      {"", 1}, {"K", 1000}, {"M", 1000000}, /* _format_count: [" ", "K", "M"] */
};

/*-*** cells ***/

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static void trim(const char **s, size_t *len)
{
    while (*len && is_space(**s))
        (*s)++, (*len)--;
    while (*len && is_space((*s)[*len - 1]))
        (*len)--;
}

static int64_t unit_multiplier(const char *u, size_t n, int is_size)
{
    size_t count = is_size ? sizeof size_units / sizeof *size_units
                           : sizeof count_units / sizeof *count_units;
    for (size_t i = 0; i < count; i++) {
        const char *name = is_size ? size_units[i].unit : count_units[i].unit;
        if (strlen(name) == n && memcmp(name, u, n) == 0)
            return is_size ? size_units[i].mult : count_units[i].mult;
    }
    return 0;
}

/* "1.23" as 123 with 2 fraction digits; at most 18 digits in all. */
static size_t read_decimal(const char *s, size_t len, uint64_t *mant, int *frac)
{
    size_t i = 0, digits = 0;
    int seen_point = 0;
    *mant = 0;
    *frac = 0;
    for (; i < len; i++) {
        if (s[i] == '.' && !seen_point && digits) {
            seen_point = 1;
            continue;
        }
        if (s[i] < '0' || s[i] > '9' || ++digits > 18)
            break;
        *mant = *mant * 10 + (uint64_t)(s[i] - '0');
        *frac += seen_point;
    }
    if (i < len && s[i] >= '0' && s[i] <= '9')
        return 0; /* over 18 digits */
    return digits && s[i - 1] != '.' ? i : 0;
}

/* mant / 10^frac * mult, rounded to the nearest, within int64. */
static int scale(uint64_t mant, int frac, int64_t mult, int64_t *out)
{
    if (mant > UINT64_MAX / (uint64_t)mult)
        return 0;
    uint64_t v = mant * (uint64_t)mult, div = 1;
    for (int i = 0; i < frac; i++)
        div *= 10;
    uint64_t q = v / div + (v % div >= div - div / 2 ? 1 : 0);
    if (q > (uint64_t)INT64_MAX)
        return 0;
    *out = (int64_t)q;
    return 1;
}

/* A cell and the unit it was written in (the figure's rounding). */
static int read_cell(const char *s, size_t len, int is_size, int64_t *out, int64_t *unit_bytes)
{
    trim(&s, &len);
    int negative = len && s[0] == '-';
    if (negative)
        s++, len--;
    uint64_t mant;
    int frac;
    size_t n = read_decimal(s, len, &mant, &frac);
    if (!n)
        return 0;
    const char *unit = s + n;
    size_t ulen = len - n;
    trim(&unit, &ulen);
    int64_t mult = unit_multiplier(unit, ulen, is_size);
    if (!mult || !scale(mant, frac, mult, out))
        return 0;
    if (negative)
        *out = -*out;
    *unit_bytes = mult;
    return 1;
}

int vr_memsummary_cell(const char *s, size_t len, int is_size, int64_t *out)
{
    int64_t unit;
    return read_cell(s, len, is_size, out, &unit);
}

/*-*** dumps and figures ***/

void vr_memsummary_init(vr_memsummary *s, vr_memsummary_stat_fn on_stat, void *ud)
{
    memset(s, 0, sizeof *s);
    s->on_stat = on_stat;
    s->ud = ud;
    s->dump = -1;
    s->device_idx = -1;
    s->next_device = -1;
    s->metric = -1;
}

static int emit(vr_memsummary *s, const char *key, int64_t value, vr_error *err)
{
    s->stats++;
    return s->on_stat(s->ud, s->dump, s->device_idx, key, value, err);
}

static int emit_held(void *ud, const char *key, int64_t value, vr_error *err)
{
    return emit(ud, key, value, err);
}

/* The end of the current dump: its held figures checked and passed on. */
static int end_dump(vr_memsummary *s, vr_error *err)
{
    return vr_stat_pairs_release(&s->held, emit_held, s, &s->bad, &s->skipped, err);
}

/* `device` < 0: the one a "device: N" line announced, if any. */
static int start_dump(vr_memsummary *s, int64_t device, vr_error *err)
{
    if (end_dump(s, err) < 0)
        return -1;
    if (s->dump < 0 || s->seen) { /* two titles in a row make one dump */
        s->dump++;
        s->dumps++;
    }
    s->device_idx = device >= 0 ? device : s->next_device;
    s->next_device = -1;
    s->metric = -1;
    s->seen = 0;
    return 0;
}

/* A part of a dump: in the current one, unless it already has this part. */
static int enter_dump(vr_memsummary *s, int bit, vr_error *err)
{
    if ((s->dump < 0 || (s->seen & (UINT64_C(1) << bit))) && start_dump(s, -1, err) < 0)
        return -1;
    s->seen |= UINT64_C(1) << bit;
    return 0;
}

/* A figure read: left out when impossible (counted), held when the dump's
 * end checks it, else passed on. */
static int take(vr_memsummary *s, const char *key, int64_t v, int64_t unit, vr_error *err)
{
    const char *why = vr_stat_impossible(key, v);
    if (why) {
        vr_stat_bad_note(&s->bad, key, v, why, s->line);
        s->skipped++;
        return 0;
    }
    if (vr_stat_pairs_hold(&s->held, key, v, unit, s->line))
        return 0;
    return emit(s, key, v, err);
}

/*-*** lines ***/

static const char *find(const char *line, size_t len, const char *what)
{
    return memmem(line, len, what, strlen(what));
}

/* The integer after `what` in the line ("CUDA OOMs: 1"), if there is one. */
static int int_after(const char *line, size_t len, const char *what, int64_t *out)
{
    const char *p = find(line, len, what);
    if (!p)
        return 0;
    p += strlen(what);
    const char *end = line + len;
    while (p < end && is_space(*p))
        p++;
    const char *q = p;
    while (q < end && *q >= '0' && *q <= '9')
        q++;
    return q > p && vr_memsummary_cell(p, (size_t)(q - p), 0, out);
}

/* At a '|': the row's label ("| Allocated memory      |"), as a metric
 * (pool 0) or a pool row (metric -1, pool 1 or 2). Returns the '|' after
 * the label, where the cells begin; NULL when no label matches. */
static const char *match_label(const char *bar, const char *end, int *metric, int *pool)
{
    const char *p = bar + 1;
    while (p < end && is_space(*p))
        p++;
    for (int m = -1; m < NMETRICS; m++) {
        int first = m < 0 ? 1 : 0, last = m < 0 ? 2 : 0;
        for (int k = first; k <= last; k++) {
            const char *label = m < 0 ? pool_labels[k] : metrics[m].label;
            size_t n = strlen(label);
            if ((size_t)(end - p) < n || memcmp(p, label, n) != 0)
                continue;
            const char *q = p + n;
            while (q < end && is_space(*q))
                q++;
            if (q < end && *q == '|') {
                *metric = m;
                *pool = k;
                return q;
            }
        }
    }
    return NULL;
}

/* The cells of a row: after the first '|' followed by a known label, which
 * may come after any prefix ("[rank0]: ", a time stamp); NULL: no row. */
static const char *find_row(const char *line, size_t len, int *metric, int *pool)
{
    const char *end = line + len, *cells = NULL;
    for (const char *p = line; !cells && (p = memchr(p, '|', (size_t)(end - p))); p++)
        cells = match_label(p, end, metric, pool);
    return cells;
}

/* The four cells after the label's '|': each one read when a '|' ends
 * it; a cut or malformed one is counted. */
static int read_cells(vr_memsummary *s, const metric_row *m, int pool, const char *cells,
                      const char *end, vr_error *err)
{
    char key[96];
    int read = 0;
    const char *p = cells + 1;
    for (int i = 0; i < NSTATS && p < end; i++) {
        const char *bar = memchr(p, '|', (size_t)(end - p));
        if (!bar)
            break;
        int64_t v, unit;
        if (read_cell(p, (size_t)(bar - p), m->is_size, &v, &unit)) {
            if (m->has_pools)
                snprintf(key, sizeof key, "%s.%s.%s", m->key, pool_keys[pool], stat_keys[i]);
            else
                snprintf(key, sizeof key, "%s.%s", m->key, stat_keys[i]);
            if (take(s, key, v, unit, err) < 0)
                return -1;
            read++;
        }
        p = bar + 1;
    }
    s->skipped += (uint64_t)(NSTATS - read);
    return 0;
}

static int read_row(vr_memsummary *s, const char *line, size_t len, vr_error *err)
{
    int metric, pool;
    const char *cells = find_row(line, len, &metric, &pool);
    if (!cells)
        return 0;
    if (metric < 0 && (s->metric < 0 || !metrics[s->metric].has_pools)) {
        s->skipped += NSTATS; /* a pool row whose metric is cut off */
        return 1;
    }
    int m = metric >= 0 ? metric : s->metric;
    if (enter_dump(s, m * 3 + pool, err) < 0)
        return -1;
    s->metric = m; /* also in a dump this row began */
    return read_cells(s, &metrics[m], pool, cells, line + len, err) < 0 ? -1 : 1;
}

/* "CUDA OOMs: 1 | cudaMalloc retries: 1" */
static int read_header(vr_memsummary *s, const char *line, size_t len, vr_error *err)
{
    int64_t ooms, retries;
    int have_ooms = int_after(line, len, "CUDA OOMs:", &ooms);
    int have_retries = int_after(line, len, "cudaMalloc retries:", &retries);
    if (enter_dump(s, SEEN_HEADER, err) < 0)
        return -1;
    s->skipped += (uint64_t)(!have_ooms + !have_retries);
    if ((have_ooms && take(s, "num_ooms", ooms, 1, err) < 0) ||
        (have_retries && take(s, "num_alloc_retries", retries, 1, err) < 0))
        return -1;
    return 1;
}

static int is_separator(const char *line, size_t len)
{
    return find(line, len, "|-----") || find(line, len, "|=====");
}

/* A line that ends with "device: N" (after any prefix). */
static int device_line(const char *line, size_t len, int64_t *device)
{
    while (len && is_space(line[len - 1]))
        len--;
    size_t i = len;
    while (i && line[i - 1] >= '0' && line[i - 1] <= '9')
        i--;
    static const char tag[] = "device: ";
    size_t n = sizeof tag - 1;
    return i < len && len - i <= 6 && i >= n && memcmp(line + i - n, tag, n) == 0 &&
           vr_memsummary_cell(line + i, len - i, 0, device);
}

/* A line of the box, whole (or cut with nothing to wait for). */
static int read_line(vr_memsummary *s, const char *line, size_t len, vr_error *err)
{
    int64_t device;
    if (find(line, len, "memory summary, device ID")) {
        if (!int_after(line, len, "device ID", &device))
            device = -1;
        return start_dump(s, device, err) < 0 ? -1 : 1;
    }
    if (find(line, len, "CUDA OOMs:"))
        return read_header(s, line, len, err);
    if (find(line, len, "| Cur Usage") || is_separator(line, len))
        return 1;
    int rc = read_row(s, line, len, err);
    if (rc != 0)
        return rc;
    /* "device: 1" before a box, as some scripts print it: it names the
     * next box's device, but is the log's own line, not the box's. */
    if (device_line(line, len, &device))
        s->next_device = device;
    return 0;
}

/* The rest of a row cut at its line's end: digits, units, bars. */
static int is_continuation(const char *line, size_t len)
{
    static const char allowed[] = " \t0123456789.|-BKMGTPi";
    if (!len || memmem(line, len, "--", 2)) /* a separator is a line of its own */
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!memchr(allowed, line[i], sizeof allowed - 1))
            return 0;
    return 1;
}

static int flush_pending(vr_memsummary *s, vr_error *err)
{
    if (!s->pending_len)
        return 0;
    size_t n = s->pending_len;
    uint64_t line = s->line;
    s->pending_len = 0;
    s->line = s->pending_line; /* the row's figures are where it began */
    int rc = read_line(s, s->pending, n, err);
    s->line = line;
    return rc < 0 ? -1 : 0;
}

/* A row of the box that lacks some of its cells' closing bars: cut at
 * the line's end (where its rest may follow on the next line). */
static int row_unfinished(const char *line, size_t len)
{
    int metric, pool;
    const char *cells = find_row(line, len, &metric, &pool);
    if (!cells)
        return 0;
    int bars = 0;
    for (const char *p = cells + 1; p < line + len; p++)
        bars += *p == '|';
    return bars < NSTATS;
}

/* A log's "[rank3]: " before the rest of a wrapped row. */
static size_t rank_prefix(const char *line, size_t len)
{
    if (len < 9 || memcmp(line, "[rank", 5) != 0)
        return 0;
    const char *end = memchr(line, ']', len);
    return end && (size_t)(end - line) + 2 <= len && end[1] == ':' ? (size_t)(end - line) + 2 : 0;
}

int vr_memsummary_feed(vr_memsummary *s, const char *line, size_t len, vr_error *err)
{
    if (s->pending_len) {
        size_t skip = rank_prefix(line, len);
        if (is_continuation(line + skip, len - skip) &&
            s->pending_len + len - skip < sizeof s->pending) {
            line += skip;
            len -= skip;
            memcpy(s->pending + s->pending_len, line, len);
            s->pending_len += len;
            s->box_lines++;
            if (!row_unfinished(s->pending, s->pending_len) && flush_pending(s, err) < 0)
                return -1;
            return 1;
        }
        if (flush_pending(s, err) < 0)
            return -1;
    }
    /* A row cut at the line's end may go on on the next line. */
    if (len < sizeof s->pending && row_unfinished(line, len)) {
        memcpy(s->pending, line, len);
        s->pending_len = len;
        s->pending_line = s->line;
        s->box_lines++;
        return 1;
    }
    int rc = read_line(s, line, len, err);
    s->box_lines += rc > 0;
    return rc;
}

int vr_memsummary_finish(vr_memsummary *s, vr_error *err)
{
    return flush_pending(s, err) < 0 ? -1 : end_dump(s, err);
}

/*-*** the reader ***/

/* The box's title, or (a copy pasted without its header) its rows. */
static vr_sniff_level sniff(const char *head, size_t len)
{
    if (memmem(head, len, "PyTorch CUDA memory summary", 27))
        return VR_SNIFF_SIGNATURE;
    return memmem(head, len, "| Allocated memory ", 19) &&
                   memmem(head, len, "|       from large pool |", 25)
               ? VR_SNIFF_SIGNATURE
               : VR_SNIFF_NO;
}

typedef struct {
    vr_import_ctx *ctx;
    vr_memsummary parser;
} summary_file;

int vr_memsummary_insert_stat(vr_import_ctx *ctx, int64_t dump, int64_t device_idx,
                              const char *key, int64_t value, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(ctx->db, "schemas/import.sql", "insert_allocator_stat", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", ctx->source_id, err) < 0 ||
        vr_db_bind_opt_int(st, ":device", device_idx >= 0, device_idx, err) < 0 ||
        vr_db_bind_int(st, ":dump", dump, err) < 0 ||
        vr_db_bind_text(st, ":key", key, strlen(key), err) < 0 ||
        vr_db_bind_int(st, ":value", value, err) < 0)
        return -1;
    ctx->events++;
    return vr_db_step_done(ctx->db, st, err);
}

int vr_memsummary_dump_ooms(vr_import_ctx *ctx, const char *label, const char *wording,
                            vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(ctx->db, "schemas/import.sql", "insert_dump_ooms", err);
    if (!st || vr_db_bind_int(st, ":source", ctx->source_id, err) < 0 ||
        vr_db_bind_text(st, ":label", label, strlen(label), err) < 0 ||
        vr_db_bind_text(st, ":wording", wording, strlen(wording), err) < 0)
        return -1;
    return vr_db_step_done(ctx->db, st, err);
}

static int insert_stat(void *ud, int64_t dump, int64_t device_idx, const char *key, int64_t value,
                       vr_error *err)
{
    summary_file *f = ud;
    return vr_memsummary_insert_stat(f->ctx, dump, device_idx, key, value, err);
}

static int on_line(void *ud, const char *line, size_t len, uint64_t number, int cut,
                   vr_error *err)
{
    summary_file *f = ud;
    (void)cut; /* a line over the limit is no box line: its cells count as cut */
    f->parser.line = number;
    return vr_memsummary_feed(&f->parser, line, len, err) < 0 ? -1 : 0;
}

static void summary_init(void *state, vr_import_ctx *ctx)
{
    summary_file *f = state;
    f->ctx = ctx;
    ctx->clock = VR_CLOCK_NONE;
    vr_memsummary_init(&f->parser, insert_stat, f);
}

static int summary_finish(void *state, vr_error *err)
{
    summary_file *f = state;
    vr_import_ctx *ctx = f->ctx;
    if (vr_memsummary_finish(&f->parser, err) < 0)
        return -1;
    if (f->parser.stats == 0)
        return vr_fail_code(err, VR_ERR_NOT_RECOGNISED,
                            "%s: no memory_summary() figures in it (expected rows like "
                            "'| Allocated memory      |   1062 MiB | ...')",
                            vr_input_path(ctx->in));
    vr_stat_bad_warn(&f->parser.bad, ctx->warn, vr_input_path(ctx->in), "line");
    if (vr_memsummary_dump_ooms(ctx, "CUDA OOMs", "memory_summary", err) < 0)
        return -1;
    return vr_reader_tally(ctx, "malformed_stat", f->parser.skipped, err);
}

static const vr_line_reader summary_lines = {sizeof(summary_file), 4096, summary_init, on_line,
                                             summary_finish,       NULL};

const vr_reader vr_reader_memory_summary = {"memory_summary", "torch.cuda.memory_summary() text",
                                            sniff, NULL, &summary_lines};
