/*-*** nvsmi_table.c: nvidia-smi's default table (old and new layouts) ***/
/*
 * The line parser (nvsmi_table.h) and the nvsmi_table reader. A table is
 * read as a small state machine over its boxes: the header box up to its
 * "|===" rule, then GPU rows, then (optionally) MIG devices and
 * processes, each after its own "|===" rule. Within a box a line is cut
 * into cells at '|'; what a cell holds is recognised by its content:
 * Real layouts: tests/data/realdata/nvsmi/exporter-capture-*.txt (new),
 * docs/formats/nvidia-smi-table.md (old, 79 columns).
 */
#include "import/readers/nvsmi/nvsmi_table.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    T_OUTSIDE,   /* between tables */
    T_HEAD,      /* the header box, before its "|===" */
    T_GPUS,      /* GPU rows */
    T_MIG_HEAD,  /* "| MIG devices:" box, before its "|===" */
    T_MIG,       /* MIG instance rows */
    T_PROC_HEAD, /* "| Processes:" box, before its "|===" */
    T_PROCS      /* process rows */
} table_state;

/* The box titles that change state, and the state after their rule. */
static const struct {
    const char *title;
    table_state head;
} boxes[] = {
    {"| MIG devices:", T_MIG_HEAD},
    {"| Processes:", T_PROC_HEAD},
};

/* The last token of a GPU's first cell: persistence mode or driver model,
 * not part of the name. */
static const char *const gpu_modes[] = {"On", "Off", "WDDM", "TCC", "MCDM", "N/A"};

#define MAX_CELLS 8

typedef struct {
    const char *s;
    size_t len;
} span;

static void trim(span *v)
{
    while (v->len && isspace((unsigned char)*v->s))
        v->s++, v->len--;
    while (v->len && isspace((unsigned char)v->s[v->len - 1]))
        v->len--;
}

static int has(span v, const char *marker)
{
    return memmem(v.s, v.len, marker, strlen(marker)) != NULL;
}

static int starts(span v, const char *prefix)
{
    size_t n = strlen(prefix);
    return v.len >= n && memcmp(v.s, prefix, n) == 0;
}

/* The next whitespace-separated token of v from *i; len 0 at the end. */
static span token(span v, size_t *i)
{
    while (*i < v.len && isspace((unsigned char)v.s[*i]))
        (*i)++;
    size_t start = *i;
    while (*i < v.len && !isspace((unsigned char)v.s[*i]))
        (*i)++;
    return (span){v.s + start, *i - start};
}

static int token_int(span t, int64_t *out)
{
    return t.len && vr_monitor_int(t.s, t.len, out) && isdigit((unsigned char)t.s[t.len - 1]);
}

/* The cells between '|' of a boxed row ("| a | b |" -> "a", "b"). */
static size_t cells(span row, span *out)
{
    size_t n = 0, start = 1;
    for (size_t i = 1; i < row.len && n < MAX_CELLS; i++)
        if (row.s[i] == '|') {
            out[n] = (span){row.s + start, i - start};
            trim(&out[n++]);
            start = i + 1;
        }
    return n;
}

/*-*** the GPU box ***/

static void remember(vr_nvsmi_table *t, int64_t idx, int64_t gpu, int64_t sample, const char *bus)
{
    vr_xgrow(&t->gpus, &t->gpus_cap, t->ngpus + 1, sizeof *t->gpus, 8);
    vr_nvsmi_table_gpu *g = &t->gpus[t->ngpus++];
    g->idx = idx;
    g->gpu_id = gpu;
    g->sample_id = sample;
    strcpy(g->bus_id, bus);
}

static const vr_nvsmi_table_gpu *table_gpu(const vr_nvsmi_table *t, int64_t idx)
{
    for (size_t i = 0; i < t->ngpus; i++)
        if (t->gpus[i].idx == idx)
            return &t->gpus[i];
    return NULL;
}

static void copy_span(char *dst, size_t size, span v)
{
    size_t n = v.len < size - 1 ? v.len : size - 1;
    memcpy(dst, v.s, n);
    dst[n] = '\0';
}

/* "   0  NVIDIA H100 80GB HBM3   On  " | "   00000000:00:09.0 Off " */
static int gpu_first_line(vr_nvsmi_table *t, const span *c, size_t n)
{
    size_t i = 0, k = 0;
    int64_t idx;
    if (n < 2 || !token_int(token(c[0], &i), &idx))
        return 0;
    span bus = token(c[1], &k);
    if (!memchr(bus.s, ':', bus.len) || bus.len >= sizeof t->pending_bus)
        return 0;
    span name = {c[0].s + i, c[0].len - i};
    trim(&name);
    for (size_t m = 0; m < sizeof gpu_modes / sizeof *gpu_modes; m++) {
        size_t ml = strlen(gpu_modes[m]);
        if (name.len > ml && memcmp(name.s + name.len - ml, gpu_modes[m], ml) == 0 &&
            isspace((unsigned char)name.s[name.len - ml - 1])) {
            name.len -= ml;
            trim(&name);
            break;
        }
    }
    t->pending = 1;
    t->pending_idx = idx;
    copy_span(t->pending_name, sizeof t->pending_name, name);
    copy_span(t->pending_bus, sizeof t->pending_bus, bus);
    return 1;
}

/* "   19818MiB /  81559MiB ": used and total; 0 when not this cell. */
static int memory_cell(span c, int64_t *used, int64_t *total)
{
    const char *slash = memchr(c.s, '/', c.len);
    if (!slash || !has(c, "iB"))
        return 0;
    size_t left = (size_t)(slash - c.s);
    return vr_monitor_size(c.s, left, 1, used) &&
           vr_monitor_size(slash + 1, c.len - left - 1, 1, total);
}

/* The first token of a cell as a percentage ("100%"), or NONE. */
static int64_t percent(span c)
{
    size_t i = 0;
    int64_t v;
    span tok = token(c, &i);
    return tok.len && tok.s[tok.len - 1] == '%' && vr_monitor_int(tok.s, tok.len, &v)
               ? v
               : VR_MONITOR_NONE;
}

static int store_gpu(vr_nvsmi_table *t, int64_t used, int64_t total, int64_t util, vr_error *err)
{
    vr_monitor_gpu g;
    vr_monitor_gpu_clear(&g);
    g.idx = t->pending_idx;
    g.name = (vr_monitor_text){t->pending_name, strlen(t->pending_name)};
    g.bus_id = (vr_monitor_text){t->pending_bus, strlen(t->pending_bus)};
    g.memory_total_bytes = total;
    t->pending = 0;
    int64_t gpu = vr_monitor_gpu_id(t->mon, &g, err);
    if (gpu < 0)
        return -1;
    vr_monitor_sample s;
    vr_monitor_sample_clear(&s);
    s.ts_ns = t->table_stamp;
    s.used_bytes = used;
    s.total_bytes = total; /* free is not total - used: the driver reserves some */
    s.util_gpu_pct = util;
    int64_t sample = vr_monitor_add_sample(t->mon, gpu, &s, err);
    if (sample < 0)
        return -1;
    t->samples++;
    remember(t, g.idx, gpu, sample, t->pending_bus);
    return 0;
}

static int gpu_row(vr_nvsmi_table *t, const span *c, size_t n, vr_error *err)
{
    int64_t used, total;
    if (t->pending && n >= 2 && memory_cell(c[1], &used, &total))
        return store_gpu(t, used, total, n >= 3 ? percent(c[2]) : VR_MONITOR_NONE, err);
    int was_pending = t->pending;
    if (gpu_first_line(t, c, n))
        t->skipped += (uint64_t)was_pending; /* the GPU before lost its memory line */
    else if (t->pending && n >= 2 && has(c[1], "MiB"))
        t->skipped++; /* a memory cell that does not read */
    return 0;
}

/*-*** the MIG devices box ***/

/* "  0    1   0   0  " | "     19MiB / 40192MiB " ...: an instance of
 * GPU 0 (GI 1, CI 0) with its own memory; the BAR1 line under it has no
 * indices and is not read. */
static int mig_row(vr_nvsmi_table *t, const span *c, size_t n, vr_error *err)
{
    int64_t id[4], used, total;
    size_t i = 0;
    for (int k = 0; k < 4; k++)
        if (!token_int(token(c[0], &i), &id[k]))
            return 0;
    if (n < 2 || !memory_cell(c[1], &used, &total)) {
        t->skipped++;
        return 0;
    }
    const vr_nvsmi_table_gpu *parent = table_gpu(t, id[0]);
    char mig[64];
    int len = snprintf(mig, sizeof mig, "GI %lld / CI %lld", (long long)id[1], (long long)id[2]);
    vr_monitor_gpu g;
    vr_monitor_gpu_clear(&g);
    g.idx = id[0];
    g.mig = (vr_monitor_text){mig, (size_t)len};
    if (parent)
        g.bus_id = (vr_monitor_text){parent->bus_id, strlen(parent->bus_id)};
    g.memory_total_bytes = total;
    int64_t gpu = vr_monitor_gpu_id(t->mon, &g, err);
    if (gpu < 0)
        return -1;
    vr_monitor_sample s;
    vr_monitor_sample_clear(&s);
    s.ts_ns = t->table_stamp;
    s.used_bytes = used;
    s.total_bytes = total;
    t->samples++;
    return vr_monitor_add_sample(t->mon, gpu, &s, err) < 0 ? -1 : 0;
}

/*-*** the process box ***/

/* "C", "G", "C+G", "M", "M+C" ...: the process type. */
static int is_type(span tok)
{
    if (!tok.len)
        return 0;
    for (size_t i = 0; i < tok.len; i++) {
        char ch = tok.s[i];
        int letter = ch == 'C' || ch == 'G' || ch == 'M';
        if (i % 2 == 0 ? !letter : ch != '+')
            return 0;
    }
    return tok.len % 2 == 1;
}

/* "    0   N/A  N/A   11327   C   /root/tools/memhog   2566MiB ": the GPU,
 * GI and CI (new layouts), PID, type, name (may hold spaces), memory. */
static int process_row(vr_nvsmi_table *t, span row, vr_error *err)
{
    if (has(row, "No running processes found"))
        return 0;
    size_t i = 0;
    int64_t idx, pid = VR_MONITOR_NONE, used = VR_MONITOR_NONE;
    if (!token_int(token(row, &i), &idx))
        return t->skipped++, 0;
    span tok, prev = {NULL, 0};
    while ((tok = token(row, &i)).len && !is_type(tok))
        prev = tok;
    if (!tok.len || !token_int(prev, &pid))
        return t->skipped++, 0;
    span rest = {row.s + i, row.len - i};
    trim(&rest);
    size_t last = rest.len;
    while (last && !isspace((unsigned char)rest.s[last - 1]))
        last--;
    span mem = {rest.s + last, rest.len - last};
    if (!mem.len || (!vr_monitor_size(mem.s, mem.len, 1, &used) && !starts(mem, "N/A")))
        return t->skipped++, 0;
    span name = {rest.s, last};
    trim(&name);
    const vr_nvsmi_table_gpu *g = table_gpu(t, idx);
    vr_monitor_process p = {pid, {name.s, name.len}, {tok.s, tok.len}, used};
    t->processes++;
    return vr_monitor_add_process(t->mon, g ? g->gpu_id : VR_MONITOR_NONE,
                                  g ? g->sample_id : VR_MONITOR_NONE, t->table_stamp, &p, err);
}

/*-*** the parser ***/

void vr_nvsmi_table_init(vr_nvsmi_table *t, vr_monitor *mon)
{
    memset(t, 0, sizeof *t);
    t->mon = mon;
    t->stamp = t->table_stamp = VR_MONITOR_NONE;
}

void vr_nvsmi_table_free(vr_nvsmi_table *t)
{
    free(t->gpus);
    memset(t, 0, sizeof *t);
}

/* A GPU whose memory line never came (the table was cut) is counted. */
static void end_table(vr_nvsmi_table *t)
{
    t->skipped += (uint64_t)t->pending;
    t->pending = 0;
    t->state = T_OUTSIDE;
}

static void start_table(vr_nvsmi_table *t)
{
    end_table(t);
    t->state = T_HEAD;
    t->tables++;
    t->ngpus = 0;
    t->table_stamp = t->stamp;
    t->stamp = VR_MONITOR_NONE;
}

/* A "|===" rule: the box's rows start. */
static void rule(vr_nvsmi_table *t)
{
    static const table_state after[] = {
        [T_HEAD] = T_GPUS, [T_MIG_HEAD] = T_MIG, [T_PROC_HEAD] = T_PROCS};
    if (t->state == T_HEAD || t->state == T_MIG_HEAD || t->state == T_PROC_HEAD)
        t->state = (int)after[t->state];
}

static int boxed_row(vr_nvsmi_table *t, span v, int cut, vr_error *err)
{
    for (size_t b = 0; b < sizeof boxes / sizeof *boxes; b++)
        if (starts(v, boxes[b].title)) {
            t->pending = 0;
            t->state = (int)boxes[b].head;
            return 0;
        }
    if (t->state != T_GPUS && t->state != T_MIG && t->state != T_PROCS)
        return 0;
    if (cut || v.len < 2 || v.s[v.len - 1] != '|')
        return t->skipped++, 0; /* cut short */
    span c[MAX_CELLS];
    size_t n = cells(v, c);
    if (t->state == T_PROCS)
        return process_row(t, (span){v.s + 1, v.len - 2}, err);
    if (n == 0)
        return 0;
    return t->state == T_GPUS ? gpu_row(t, c, n, err) : mig_row(t, c, n, err);
}

int vr_nvsmi_table_line(vr_nvsmi_table *t, const char *line, size_t len, int cut, vr_error *err)
{
    span v = {line, len};
    int64_t ns;
    trim(&v);
    if (v.len == 0)
        return 0;
    if (!cut && v.s[0] != '|' && v.s[0] != '+' && vr_monitor_stamp(v.s, v.len, &ns)) {
        end_table(t);
        t->stamp = ns;
        t->stamped = 1;
        return 0;
    }
    if (starts(v, "| NVIDIA-SMI ")) {
        start_table(t);
        return 0;
    }
    if (starts(v, "|=")) {
        rule(t);
        return 0;
    }
    if (v.s[0] == '|')
        return boxed_row(t, v, cut, err);
    return 0; /* borders, and text around the tables */
}

int vr_nvsmi_table_finish(vr_nvsmi_table *t, vr_error *err)
{
    end_table(t);
    return vr_reader_tally(t->mon->ctx, "malformed_line", t->skipped, err);
}

/*-*** the reader: a whole file ***/

static vr_sniff_level sniff_nvsmi_table(const char *head, size_t len)
{
    return memmem(head, len, "| NVIDIA-SMI ", 13) && memmem(head, len, "Memory-Usage", 12)
               ? VR_SNIFF_SIGNATURE
               : VR_SNIFF_NO;
}

typedef struct {
    vr_monitor mon;
    vr_nvsmi_table t;
} table_file;

static void table_init(void *state, vr_import_ctx *ctx)
{
    table_file *f = state;
    vr_monitor_init(&f->mon, ctx);
    vr_nvsmi_table_init(&f->t, &f->mon);
}

static int table_line(void *state, const char *line, size_t len, uint64_t number, int cut,
                      vr_error *err)
{
    table_file *f = state;
    (void)number;
    return vr_nvsmi_table_line(&f->t, line, len, cut, err);
}

static int table_finish(void *state, vr_error *err)
{
    table_file *f = state;
    int rc = vr_nvsmi_table_finish(&f->t, err);
    if (rc == 0 && f->t.tables == 0)
        rc = vr_fail_code(err, VR_ERR_NOT_RECOGNISED,
                          "%s: no nvidia-smi table in it (no '| NVIDIA-SMI' line)",
                          vr_monitor_where(&f->mon));
    f->mon.ctx->clock = f->t.stamped ? VR_CLOCK_WALL_LOCAL : VR_CLOCK_NONE;
    return rc;
}

static void table_free(void *state)
{
    table_file *f = state;
    vr_nvsmi_table_free(&f->t);
    vr_monitor_free(&f->mon);
}

/* A table's line is under 200 bytes; a longer one is not a table's. */
static const vr_line_reader table_lines = {sizeof(table_file), (size_t)4 << 10, table_init,
                                           table_line,         table_finish,    table_free};

const vr_reader vr_reader_nvsmi_table = {"nvsmi_table", "an nvidia-smi table log",
                                         sniff_nvsmi_table, NULL, &table_lines};
