/*-*** nvsmi_csv.c: nvidia-smi --query-gpu / --query-compute-apps CSV ***/
/*
 * The line parser (nvsmi_csv.h) and the nvsmi_csv reader that feeds it a
 * whole file. Which fields are read, and how, is one table (fields[]);
 * every other field of a query is skipped. Layout as nvidia-smi writes it
 * (docs/formats/nvidia-smi-csv.md, and the real captures in
 * tests/data/realdata/nvsmi/): values separated by ", ", a header of
 * names with units in brackets, "[N/A]" / "[Not Supported]" / "N/A" where
 * a value is unavailable (stored as NULL).
 */
#include "import/readers/nvsmi/nvsmi_csv.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

/*-*** the fields read ***/

typedef enum { Q_ANY, Q_GPU, Q_APPS } query_kind;

typedef enum { V_STAMP, V_INT, V_PCT, V_SIZE, V_TEXT } value_kind;

typedef enum {
    F_STAMP,
    F_INDEX,
    F_NAME,
    F_UUID,
    F_BUS,
    F_TOTAL,
    F_USED,
    F_FREE,
    F_RESERVED,
    F_UTIL_GPU,
    F_UTIL_MEMORY,
    F_PID,
    F_PROCESS_NAME,
    F_PROCESS_USED,
    F_COUNT
} field_id;

/* Names as nvidia-smi's --help-query-gpu / --help-query-compute-apps
 * list them, aliases included ("name" is the GPU's in --query-gpu and the
 * process's in --query-compute-apps). */
static const struct {
    const char *name;
    query_kind query;
    field_id id;
    value_kind kind;
} fields[] = {
    {"timestamp", Q_ANY, F_STAMP, V_STAMP},
    {"index", Q_GPU, F_INDEX, V_INT},
    {"name", Q_GPU, F_NAME, V_TEXT},
    {"gpu_name", Q_ANY, F_NAME, V_TEXT},
    {"uuid", Q_GPU, F_UUID, V_TEXT},
    {"gpu_uuid", Q_ANY, F_UUID, V_TEXT},
    {"pci.bus_id", Q_GPU, F_BUS, V_TEXT},
    {"gpu_bus_id", Q_ANY, F_BUS, V_TEXT},
    {"memory.total", Q_GPU, F_TOTAL, V_SIZE},
    {"memory.used", Q_GPU, F_USED, V_SIZE},
    {"memory.free", Q_GPU, F_FREE, V_SIZE},
    {"memory.reserved", Q_GPU, F_RESERVED, V_SIZE},
    {"utilization.gpu", Q_GPU, F_UTIL_GPU, V_PCT},
    {"utilization.memory", Q_GPU, F_UTIL_MEMORY, V_PCT},
    {"pid", Q_APPS, F_PID, V_INT},
    {"process_name", Q_APPS, F_PROCESS_NAME, V_TEXT},
    {"name", Q_APPS, F_PROCESS_NAME, V_TEXT},
    {"used_gpu_memory", Q_APPS, F_PROCESS_USED, V_SIZE},
    {"used_memory", Q_APPS, F_PROCESS_USED, V_SIZE},
};

#define NFIELDS (sizeof fields / sizeof *fields)

/* Fields only --query-compute-apps has: a header with one is that query. */
static const char *const apps_only[] = {"pid", "process_name", "used_gpu_memory", "used_memory"};

/* nvidia-smi writes memory in MiB: a bare number without a header unit. */
#define DEFAULT_UNIT ((int64_t)1 << 20)

static int span_is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(s, word, len) == 0;
}

static int field_index(const char *s, size_t len, query_kind q)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if ((fields[i].query == Q_ANY || fields[i].query == q || q == Q_ANY) &&
            span_is(s, len, fields[i].name))
            return (int)i;
    return -1;
}

/*-*** splitting ***/

static void trim(const char **s, size_t *len)
{
    while (*len && isspace((unsigned char)**s))
        (*s)++, (*len)--;
    while (*len && isspace((unsigned char)(*s)[*len - 1]))
        (*len)--;
}

/* A UTF-8 byte order mark (Windows editors, PowerShell's utf8) dropped. */
static void drop_bom(const char **s, size_t *len)
{
    if (*len >= 3 && memcmp(*s, "\xEF\xBB\xBF", 3) == 0)
        *s += 3, *len -= 3;
}

/* Splits at each ',' into p->vals (trimmed); returns the count. */
static size_t split(vr_nvsmi_csv *p, const char *line, size_t len)
{
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && line[i] != ',')
            continue;
        vr_xgrow(&p->vals, &p->vals_cap, n + 1, sizeof *p->vals, 32);
        const char *s = line + start;
        size_t l = i - start;
        trim(&s, &l);
        p->vals[n++] = (vr_nvsmi_csv_span){s, l};
        start = i + 1;
    }
    return n;
}

/*-*** the header ***/

/* "memory.used [MiB]" -> name "memory.used", unit "MiB"; 0 when the
 * text is not a field name. */
static int header_field(const char *s, size_t len, vr_nvsmi_csv_span *name,
                        vr_nvsmi_csv_span *unit)
{
    size_t i = 0;
    while (i < len && (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.'))
        i++;
    if (i == 0 || !isalpha((unsigned char)s[0]))
        return 0;
    *name = (vr_nvsmi_csv_span){s, i};
    *unit = (vr_nvsmi_csv_span){NULL, 0};
    while (i < len && s[i] == ' ')
        i++;
    if (i == len)
        return 1;
    if (s[i] != '[' || s[len - 1] != ']')
        return 0;
    *unit = (vr_nvsmi_csv_span){s + i + 1, len - i - 2};
    return 1;
}

int vr_nvsmi_csv_is_header(const char *line, size_t len)
{
    drop_bom(&line, &len);
    int known = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && line[i] != ',')
            continue;
        const char *s = line + start;
        size_t l = i - start;
        trim(&s, &l);
        vr_nvsmi_csv_span name, unit;
        if (!header_field(s, l, &name, &unit))
            return 0;
        known |= field_index(name.s, name.len, Q_ANY) >= 0;
        start = i + 1;
    }
    return known;
}

/* The bytes of a header unit ("MiB"); the default for "%", "W" ... */
static int64_t unit_bytes(vr_nvsmi_csv_span unit)
{
    char text[32];
    int64_t bytes;
    if (unit.len == 0 || unit.len > 16)
        return DEFAULT_UNIT;
    snprintf(text, sizeof text, "1 %.*s", (int)unit.len, unit.s);
    return vr_monitor_size(text, strlen(text), 1, &bytes) ? bytes : DEFAULT_UNIT;
}

static int is_apps(const vr_nvsmi_csv_span *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < sizeof apps_only / sizeof *apps_only; k++)
            if (span_is(names[i].s, names[i].len, apps_only[k]))
                return 1;
    return 0;
}

/* Columns from names and units (parallel arrays). */
static void set_columns(vr_nvsmi_csv *p, const vr_nvsmi_csv_span *names,
                        const vr_nvsmi_csv_span *units, size_t n, int apps)
{
    p->apps = apps;
    p->ncols = 0;
    p->absorb = -1;
    vr_xgrow(&p->cols, &p->cols_cap, n ? n : 1, sizeof *p->cols, 32);
    for (size_t i = 0; i < n; i++) {
        int f = field_index(names[i].s, names[i].len, apps ? Q_APPS : Q_GPU);
        p->cols[i] = (vr_nvsmi_csv_column){f, units ? unit_bytes(units[i]) : DEFAULT_UNIT};
        if (f >= 0 && fields[f].kind == V_TEXT &&
            fields[f].id == (apps ? F_PROCESS_NAME : F_NAME))
            p->absorb = (int)i;
    }
    p->ncols = n;
    p->have_header = 1;
    p->one_gpu = !apps;
    for (size_t i = 0; i < n; i++) {
        field_id id = p->cols[i].field >= 0 ? fields[p->cols[i].field].id : F_COUNT;
        if (id == F_INDEX || id == F_UUID || id == F_BUS)
            p->one_gpu = 0;
    }
}

static void read_header(vr_nvsmi_csv *p, const char *line, size_t len)
{
    size_t n = split(p, line, len);
    vr_nvsmi_csv_span *names = vr_xmalloc(2 * n * sizeof *names), *units = names + n;
    for (size_t i = 0; i < n; i++)
        header_field(p->vals[i].s, p->vals[i].len, &names[i], &units[i]);
    set_columns(p, names, units, n, is_apps(names, n));
    free(names);
}

void vr_nvsmi_csv_fields(vr_nvsmi_csv *p, const char *list, size_t len, int apps)
{
    size_t n = split(p, list, len);
    set_columns(p, p->vals, NULL, n, apps);
}

/*-*** rows ***/

typedef enum { STAMP_NONE, STAMP_CIVIL, STAMP_EPOCH } stamp_kind;

typedef struct {
    int64_t num[F_COUNT];
    vr_monitor_text text[F_COUNT];
    stamp_kind stamp;
} row_values;

/* Epoch seconds and milliseconds: what a script's `date +%s` (or
 * `date +%s.%N`, `date +%s%3N`) writes before a noheader query's values.
 * The magnitude tells which, without doubt: 10^8 to 10^11 as seconds is
 * 1973 to 5138, and as milliseconds 1970's first day; 10^11 to 10^14 as
 * milliseconds is 1973 to 5138. A smaller number is no epoch (seconds
 * since the job began, say), a larger one not seconds nor milliseconds. */
#define EPOCH_S_MIN INT64_C(100000000)
#define EPOCH_S_MAX INT64_C(100000000000)
#define EPOCH_MS_MAX INT64_C(100000000000000)

/* "1762903990", "1762903990.25", "1762903990250": ns since the epoch. */
static int epoch_stamp(const char *s, size_t len, int64_t *ns)
{
    size_t i = 0;
    int64_t whole = 0, frac_ns = 0, scale = INT64_C(100000000);
    while (i < len && isdigit((unsigned char)s[i]) && whole < EPOCH_MS_MAX)
        whole = whole * 10 + (s[i++] - '0');
    if (i == 0 || whole < EPOCH_S_MIN || whole >= EPOCH_MS_MAX)
        return 0;
    if (i < len && s[i] == '.' && ++i == len)
        return 0; /* "1762903990." */
    for (; i < len && isdigit((unsigned char)s[i]); i++, scale /= 10)
        frac_ns += (s[i] - '0') * scale;
    if (i != len)
        return 0;
    /* Past 2262 nanoseconds leave int64: no stamp of a real job (and
     * 20260000000, a date's digits run together, is not one). */
    if (whole < EPOCH_S_MAX) {
        if (whole > (INT64_MAX - INT64_C(999999999)) / INT64_C(1000000000))
            return 0;
        *ns = whole * INT64_C(1000000000) + frac_ns;
        return 1;
    }
    if (whole > (INT64_MAX - INT64_C(999999)) / INT64_C(1000000))
        return 0;
    *ns = whole * INT64_C(1000000) + frac_ns / 1000; /* the fraction of a ms */
    return 1;
}

/* "[N/A]", "[Not Supported]", "[Requested functionality has been
 * deprecated]", "N/A", "": a value the GPU does not give. */
static int not_available(const char *s, size_t len)
{
    return len == 0 || span_is(s, len, "N/A") || (s[0] == '[' && s[len - 1] == ']');
}

/* 1: read into v; 0: not available; -1: not what the field holds. */
static int read_value(const vr_nvsmi_csv_column *c, vr_nvsmi_csv_span v, row_values *r)
{
    if (not_available(v.s, v.len))
        return 0;
    field_id id = fields[c->field].id;
    int64_t *out = &r->num[id];
    switch (fields[c->field].kind) {
    case V_STAMP:
        if (vr_monitor_stamp(v.s, v.len, out))
            r->stamp = STAMP_CIVIL;
        else if (epoch_stamp(v.s, v.len, out))
            r->stamp = STAMP_EPOCH;
        return r->stamp != STAMP_NONE ? 1 : -1;
    case V_INT:
    case V_PCT:
        return vr_monitor_int(v.s, v.len, out) ? 1 : -1;
    case V_SIZE:
        return vr_monitor_size(v.s, v.len, c->unit, out) ? 1 : -1;
    case V_TEXT:
        r->text[id] = (vr_monitor_text){v.s, v.len};
        return 1;
    }
    return -1;
}

/* Joins the values a name with ", " in it was split into. */
static size_t absorb_surplus(vr_nvsmi_csv *p, size_t n)
{
    size_t surplus = n - p->ncols, a = (size_t)p->absorb;
    vr_nvsmi_csv_span *v = p->vals;
    v[a].len = (size_t)(v[a + surplus].s + v[a + surplus].len - v[a].s);
    memmove(v + a + 1, v + a + 1 + surplus, (n - a - 1 - surplus) * sizeof *v);
    return p->ncols;
}

/* The row's values; 0 when the row is malformed (cut, or a value that is
 * not what its field holds). */
static int read_row(vr_nvsmi_csv *p, const char *line, size_t len, row_values *r)
{
    size_t n = split(p, line, len);
    if (n > p->ncols && p->absorb >= 0)
        n = absorb_surplus(p, n);
    if (n != p->ncols)
        return 0;
    for (int f = 0; f < F_COUNT; f++) {
        r->num[f] = VR_MONITOR_NONE;
        r->text[f] = (vr_monitor_text){NULL, 0};
    }
    r->stamp = STAMP_NONE;
    for (size_t i = 0; i < n; i++)
        if (p->cols[i].field >= 0 && read_value(&p->cols[i], p->vals[i], r) < 0)
            return 0;
    p->stamped |= r->stamp == STAMP_CIVIL;
    p->epoch_stamped |= r->stamp == STAMP_EPOCH;
    return 1;
}

static void row_gpu(const vr_nvsmi_csv *p, const row_values *r, vr_monitor_gpu *g)
{
    vr_monitor_gpu_clear(g);
    g->uuid = r->text[F_UUID];
    g->bus_id = r->text[F_BUS];
    g->name = r->text[F_NAME];
    g->idx = p->one_gpu ? 0 : r->num[F_INDEX];
    g->memory_total_bytes = r->num[F_TOTAL];
}

static int store_reading(vr_nvsmi_csv *p, const row_values *r, vr_error *err)
{
    vr_monitor_gpu g;
    row_gpu(p, r, &g);
    int64_t gpu = vr_monitor_gpu_id(p->mon, &g, err);
    if (gpu < 0)
        return -1;
    vr_monitor_sample s;
    vr_monitor_sample_clear(&s);
    s.ts_ns = r->num[F_STAMP];
    s.used_bytes = r->num[F_USED];
    s.total_bytes = r->num[F_TOTAL];
    s.free_bytes = r->num[F_FREE];
    s.reserved_bytes = r->num[F_RESERVED];
    s.util_gpu_pct = r->num[F_UTIL_GPU];
    s.util_memory_pct = r->num[F_UTIL_MEMORY];
    return vr_monitor_add_sample(p->mon, gpu, &s, err) < 0 ? -1 : 0;
}

/* A process on the GPU its uuid or bus id names (none: GPU unknown). */
static int store_process(vr_nvsmi_csv *p, const row_values *r, vr_error *err)
{
    int64_t gpu = VR_MONITOR_NONE;
    if (r->text[F_UUID].len || r->text[F_BUS].len) {
        vr_monitor_gpu g;
        row_gpu(p, r, &g);
        if ((gpu = vr_monitor_gpu_id(p->mon, &g, err)) < 0)
            return -1;
    }
    vr_monitor_process proc = {
        r->num[F_PID], r->text[F_PROCESS_NAME], {NULL, 0}, r->num[F_PROCESS_USED]};
    return vr_monitor_add_process(p->mon, gpu, VR_MONITOR_NONE, r->num[F_STAMP], &proc, err);
}

/*-*** the parser ***/

void vr_nvsmi_csv_init(vr_nvsmi_csv *p, vr_monitor *mon)
{
    memset(p, 0, sizeof *p);
    p->mon = mon;
    p->absorb = -1;
}

void vr_nvsmi_csv_free(vr_nvsmi_csv *p)
{
    free(p->cols);
    free(p->vals);
    memset(p, 0, sizeof *p);
}

int vr_nvsmi_csv_line(vr_nvsmi_csv *p, const char *line, size_t len, uint64_t number, int cut,
                      vr_error *err)
{
    drop_bom(&line, &len);
    const char *s = line;
    size_t l = len;
    trim(&s, &l);
    if (l == 0)
        return 0;
    if (!cut && vr_nvsmi_csv_is_header(s, l)) {
        read_header(p, s, l);
        return 0;
    }
    if (!p->have_header) {
        if (p->headless++ == 0)
            p->first_headless = number;
        return 0;
    }
    row_values r;
    if (cut || !read_row(p, s, l, &r)) {
        p->skipped++;
        return 0;
    }
    p->rows++;
    return p->apps ? store_process(p, &r, err) : store_reading(p, &r, err);
}

int vr_nvsmi_csv_finish(vr_nvsmi_csv *p, vr_error *err)
{
    vr_import_ctx *ctx = p->mon->ctx;
    if (p->headless && p->rows == 0)
        return vr_fail_code(err, VR_ERR_MALFORMED,
                            "%s: line %llu: an nvidia-smi CSV row without a header line: which "
                            "fields it holds is unknown; run nvidia-smi with --format=csv (not "
                            "noheader) so the header names them",
                            vr_monitor_where(p->mon), (unsigned long long)p->first_headless);
    return vr_reader_tally(ctx, "malformed_line", p->skipped + p->headless, err);
}

/*-*** the reader: a whole file ***/

/* "2024/03/12 10:15:32.123, ": a row of a query that starts with its
 * timestamp, as a noheader log does. */
static int starts_with_stamp(const char *s, size_t len)
{
    static const char shape[] = "dddd/dd/dd dd:dd:dd";
    if (len < sizeof shape)
        return 0;
    for (size_t i = 0; i + 1 < sizeof shape; i++)
        if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
            return 0;
    return memchr(s, ',', len) != NULL;
}

/* A header with a memory field, or (shape only: the import then says
 * to keep the header) rows of a noheader query. */
static vr_sniff_level sniff_nvsmi_csv(const char *head, size_t len)
{
    const char *nl = memchr(head, '\n', len);
    size_t first = nl ? (size_t)(nl - head) : len;
    if (first && head[first - 1] == '\r')
        first--;
    if (vr_nvsmi_csv_is_header(head, first) &&
        (memmem(head, first, "memory.", 7) || memmem(head, first, "used_gpu_memory", 15) ||
         memmem(head, first, "used_memory", 11)))
        return VR_SNIFF_SIGNATURE;
    return starts_with_stamp(head, first) && memmem(head, first, " MiB", 4) ? VR_SNIFF_SHAPE
                                                                            : VR_SNIFF_NO;
}

typedef struct {
    vr_monitor mon;
    vr_nvsmi_csv p;
} csv_file;

static void csv_init(void *state, vr_import_ctx *ctx)
{
    csv_file *f = state;
    vr_monitor_init(&f->mon, ctx);
    vr_nvsmi_csv_init(&f->p, &f->mon);
}

static int csv_line(void *state, const char *line, size_t len, uint64_t number, int cut,
                    vr_error *err)
{
    csv_file *f = state;
    return vr_nvsmi_csv_line(&f->p, line, len, number, cut, err);
}

static int csv_finish(void *state, vr_error *err)
{
    csv_file *f = state;
    int rc = vr_nvsmi_csv_finish(&f->p, err);
    /* nvidia-smi's own stamps are local wall time; epoch stamps are UTC
     * (a file with both is taken as local: --tz moves both). */
    f->mon.ctx->clock = f->p.stamped         ? VR_CLOCK_WALL_LOCAL
                        : f->p.epoch_stamped ? VR_CLOCK_WALL_UTC
                                             : VR_CLOCK_NONE;
    return rc;
}

static void csv_free(void *state)
{
    csv_file *f = state;
    vr_nvsmi_csv_free(&f->p);
    vr_monitor_free(&f->mon);
}

/* Rows carry a whole process path or 212 fields: 64 KiB is plenty. */
static const vr_line_reader csv_lines = {sizeof(csv_file), (size_t)64 << 10, csv_init,
                                         csv_line,         csv_finish,       csv_free};

const vr_reader vr_reader_nvsmi_csv = {"nvsmi_csv",
                                       "an nvidia-smi --query-gpu / --query-compute-apps CSV log",
                                       sniff_nvsmi_csv, NULL, &csv_lines};
