/*-*** gpustat.c: gpustat's text snapshots (one-shot, --watch, -cpu, colours) ***/
/*
 * gpustat (github.com/wookayin/gpustat, gpustat/core.py: GPUStat.print_to
 * and GPUStatCollection.print_formatted) prints a header line and one line
 * per GPU:
 *
 *   myhost              Mon Nov 30 12:00:00 2026  535.104.05
 *   [0] NVIDIA A100-SXM4-80GB | 45°C,  99 % | 61234 / 81920 MB | user(61230M)
 *
 * The header is "{hostname:{width}}  {time}  {driver}", the time in the
 * locale's D_T_FMT (C locale: ctime's layout) or, on Windows,
 * "%Y-%m-%d %H:%M:%S": a wall clock without a zone (VR_CLOCK_WALL_LOCAL).
 * Each header starts a snapshot (--watch / -i repeat them); a GPU line
 * takes the time of the last header (none with --no-header).
 * The GPU line's cells, split at '|': "[index] name", then
 * "T°C[, F %], U %[ (E: .. D: ..)][,  P / L W]" (older releases: "T'C";
 * "??" for a figure NVML did not give), then "USED / TOTAL MB", then the
 * processes, each "[user][:command][/pid](NM)" ("(Not Supported)" when
 * NVML lists none). gpustat's MB are MiB: memory.used // (1024 * 1024)
 * from nvmlDeviceGetMemoryInfo, and a process's "NM" is usedGpuMemory //
 * (1024 * 1024); both are read as N * 2^20 bytes.
 *
 * Colours (--force-color, or a terminal captured by script(1)) are ANSI
 * escapes: stripped before reading. -f's full command lines (" ├─ pid")
 * and anything else between snapshots are passed over. What is stored
 * (monitor.h): a gpu row per index (name, total), a gpu_sample per GPU
 * line (time, used, total, utilisation), a process_sample per listed
 * process: pid when shown, the label before "/pid" as its name ("user",
 * "user:python"), its memory. Temperature and power have no column and
 * are not stored. nvtop's curses screen is not read (no text layout to
 * parse; its output is a terminal drawing).
 *
 * A GPU line cut at the end of the input is the truncated last snapshot:
 * what came before is imported and the source marked truncated; a bad
 * GPU line elsewhere is skipped and counted (malformed_line).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/tz.h"
#include "import/monitor.h"
#include "scan/statcheck.h"

#define MIB ((int64_t)1 << 20)

/* A gpustat line is under 1 KiB but for a long process list. */
#define MAX_LINE ((size_t)64 << 10)

typedef struct {
    const char *s;
    size_t len;
} span;

typedef struct {
    vr_monitor *mon;
    vr_buf clean;  /* the line without its escapes */
    vr_buf host;   /* the last header's host name */
    int64_t stamp; /* the last header's time, or NONE */
    int stamped;   /* some header gave a time */
    int64_t gpu_lines;
    int64_t skipped; /* malformed lines before the last one */
    int last_bad;    /* the last non-empty line was a bad GPU line */
} gpustat_state;

/*-*** text helpers ***/

static void trim(span *v)
{
    while (v->len && isspace((unsigned char)*v->s))
        v->s++, v->len--;
    while (v->len && isspace((unsigned char)v->s[v->len - 1]))
        v->len--;
}

static int ends_with(span v, const char *suffix)
{
    size_t n = strlen(suffix);
    return v.len >= n && memcmp(v.s + v.len - n, suffix, n) == 0;
}

/* Digits only: 1 and *out; 0 for anything else ("??", "--", ""). */
static int whole_number(span v, int64_t *out)
{
    trim(&v);
    if (v.len == 0 || v.len > 15)
        return 0;
    int64_t n = 0;
    for (size_t i = 0; i < v.len; i++) {
        if (!isdigit((unsigned char)v.s[i]))
            return 0;
        n = n * 10 + (v.s[i] - '0');
    }
    *out = n;
    return 1;
}

/* The length of the ANSI escape at s (s[0] is ESC): a CSI sequence
 * (ESC '[' ... final byte 0x40-0x7E), a charset designation (ESC '(' 'B',
 * blessings' sgr0) or another two-byte escape. */
static size_t escape_len(const char *s, size_t len)
{
    size_t i = 1;
    if (i < len && s[i] == '[') {
        for (i++; i < len && !(s[i] >= 0x40 && s[i] <= 0x7e); i++)
            ;
        i++;
    } else {
        i += i < len && (s[i] == '(' || s[i] == ')') ? 2 : 1;
    }
    return i < len ? i : len;
}

/* The line without its escapes, into out (cap bytes at most); its length. */
static size_t strip_escapes(const char *line, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n < cap;)
        if (line[i] == 0x1b)
            i += escape_len(line + i, len - i);
        else
            out[n++] = line[i++];
    return n;
}

/* "[N] ": the start of a GPU line; *rest after the ']'. */
static int gpu_index(span v, int64_t *idx, span *rest)
{
    if (v.len < 3 || v.s[0] != '[')
        return 0;
    const char *close = memchr(v.s, ']', v.len);
    if (!close || !whole_number((span){v.s + 1, (size_t)(close - v.s - 1)}, idx))
        return 0;
    *rest = (span){close + 1, v.len - (size_t)(close + 1 - v.s)};
    return 1;
}

/* Up to `max` cells of v split at '|', trimmed; their count. */
static size_t split_cells(span v, span *out, size_t max)
{
    size_t n = 0;
    while (n < max) {
        const char *bar = n + 1 < max ? memchr(v.s, '|', v.len) : NULL;
        size_t len = bar ? (size_t)(bar - v.s) : v.len;
        out[n] = (span){v.s, len};
        trim(&out[n++]);
        if (!bar)
            break;
        v = (span){bar + 1, v.len - len - 1};
    }
    return n;
}

/*-*** the cells of a GPU line ***/

/* "45°C,  30 %,  99 % (E: 0 % D: 0 %),  68 / 250 W": the utilisation is
 * the last "N %" item before any codec parenthesis (the fan's, when
 * shown, comes first). */
static int64_t utilisation(span cell)
{
    const char *paren = memchr(cell.s, '(', cell.len);
    if (paren)
        cell.len = (size_t)(paren - cell.s);
    int64_t util = VR_MONITOR_NONE, n;
    while (cell.len) {
        const char *comma = memchr(cell.s, ',', cell.len);
        span item = {cell.s, comma ? (size_t)(comma - cell.s) : cell.len};
        trim(&item);
        if (ends_with(item, "%") && whole_number((span){item.s, item.len - 1}, &n))
            util = n;
        if (!comma)
            break;
        cell = (span){comma + 1, cell.len - (size_t)(comma + 1 - cell.s)};
    }
    return util;
}

/* A size in MiB: "61234", "109 MiB" (the first releases); 0 for "??". */
static int mib(span v, int64_t *bytes)
{
    trim(&v);
    if (ends_with(v, "MiB"))
        v.len -= 3;
    int64_t n;
    /* past 1 PiB no GPU's (and 15 digits of MiB overflowed int64) */
    if (!whole_number(v, &n) || n > VR_STAT_MAX_BYTES / MIB)
        return 0;
    *bytes = n * MIB;
    return 1;
}

/* "61234 / 81920 MB" (older: "Mem: 11721 / 12287 MB", first releases
 * "Mem:   109 MiB / 12287 MiB"); "?? / ?? MB" leaves both NONE. 0 when
 * the cell is not a memory cell at all. */
static int memory_cell(span cell, int64_t *used, int64_t *total)
{
    static const char mem_prefix[] = "Mem:";
    if (cell.len >= 4 && memcmp(cell.s, mem_prefix, 4) == 0)
        cell = (span){cell.s + 4, cell.len - 4};
    const char *slash = memchr(cell.s, '/', cell.len);
    if (!slash || !(ends_with(cell, " MB") || ends_with(cell, "MiB")))
        return 0;
    if (ends_with(cell, " MB"))
        cell.len -= 3;
    *used = *total = VR_MONITOR_NONE;
    mib((span){cell.s, (size_t)(slash - cell.s)}, used);
    mib((span){slash + 1, cell.len - (size_t)(slash + 1 - cell.s)}, total);
    return 1;
}

/*-*** processes ***/

/* One "[user][:command][/pid](NM)" entry; 0 when it is not one. */
static int parse_process(span tok, vr_monitor_process *p)
{
    if (!ends_with(tok, "M)"))
        return 0;
    const char *open = NULL;
    for (size_t i = tok.len; i-- > 0;)
        if (tok.s[i] == '(') {
            open = tok.s + i;
            break;
        }
    if (!open)
        return 0;
    span label = {tok.s, (size_t)(open - tok.s)};
    span mem = {open + 1, tok.len - label.len - 3};
    int64_t n;
    p->pid = p->used_bytes = VR_MONITOR_NONE;
    p->type = (vr_monitor_text){NULL, 0};
    if (whole_number(mem, &n))
        p->used_bytes = n * MIB;
    const char *slash = NULL;
    for (size_t i = label.len; i-- > 0;)
        if (label.s[i] == '/') {
            slash = label.s + i;
            break;
        }
    span pid =
        slash ? (span){slash + 1, label.len - (size_t)(slash + 1 - label.s)} : (span){"", 0};
    if (whole_number(pid, &n))
        p->pid = n;
    if (whole_number(pid, &n) || (pid.len == 2 && memcmp(pid.s, "--", 2) == 0))
        label.len = (size_t)(slash - label.s); /* "--": pid not known */
    p->name = (vr_monitor_text){label.len ? label.s : NULL, label.len};
    return 1;
}

static int add_processes(gpustat_state *st, int64_t gpu, int64_t sample, span cell, vr_error *err)
{
    size_t i = 0;
    while (i < cell.len) {
        while (i < cell.len && cell.s[i] == ' ')
            i++;
        size_t start = i;
        while (i < cell.len && cell.s[i] != ' ')
            i++;
        vr_monitor_process p;
        span tok = {cell.s + start, i - start};
        if (tok.len && parse_process(tok, &p) &&
            vr_monitor_add_process(st->mon, gpu, sample, st->stamp, &p, err) < 0)
            return -1;
    }
    return 0;
}

/*-*** lines ***/

/* 1: the line was a GPU line and is stored; 0: it looked like one but
 * is not whole (skipped); -1: a database error. */
static int gpu_line(gpustat_state *st, int64_t idx, span rest, vr_error *err)
{
    span c[4];
    size_t n = split_cells(rest, c, 4);
    vr_monitor_sample s;
    vr_monitor_sample_clear(&s);
    if (n < 3 || !memory_cell(c[2], &s.used_bytes, &s.total_bytes))
        return 0;
    s.util_gpu_pct = utilisation(c[1]);
    if (s.used_bytes == VR_MONITOR_NONE && s.total_bytes == VR_MONITOR_NONE &&
        s.util_gpu_pct == VR_MONITOR_NONE)
        return 1; /* "[1] ((GPU is lost)) | ?°C, ? % | ? / ? MB": nothing to keep */
    vr_monitor_gpu g;
    vr_monitor_gpu_clear(&g);
    g.idx = idx;
    g.name = (vr_monitor_text){c[0].len ? c[0].s : NULL, c[0].len};
    g.host = (vr_monitor_text){st->host.len ? st->host.data : NULL, st->host.len};
    g.memory_total_bytes = s.total_bytes;
    s.ts_ns = st->stamp;
    int64_t gpu = vr_monitor_gpu_id(st->mon, &g, err);
    int64_t sample = gpu < 0 ? -1 : vr_monitor_add_sample(st->mon, gpu, &s, err);
    if (sample < 0)
        return -1;
    st->gpu_lines++;
    return n == 4 && add_processes(st, gpu, sample, c[3], err) < 0 ? -1 : 1;
}

/* "2026-11-30 12:00:00" (gpustat on Windows). */
static int iso_stamp(span v, int64_t *ns)
{
    int y, mo, d, h, mi, sec;
    char tail;
    char text[32];
    if (v.len >= sizeof text)
        return 0;
    memcpy(text, v.s, v.len);
    text[v.len] = 0;
    return sscanf(text, "%4d-%2d-%2d %2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &sec, &tail) == 6 &&
           vr_tz_civil_to_ns(y, mo, d, h, mi, sec, 0, ns) == 0;
}

static int is_stamp(span v, int64_t *ns)
{
    trim(&v);
    return vr_monitor_stamp(v.s, v.len, ns) || iso_stamp(v, ns);
}

/* "host  <time>  driver" (the driver "None" when NVML gave none; old
 * releases print no driver): the time is what lies between the first
 * and the last word, else all after the first. */
static int header_line(gpustat_state *st, span v)
{
    size_t h = 0;
    while (h < v.len && !isspace((unsigned char)v.s[h]))
        h++;
    size_t d = v.len;
    while (d > h && !isspace((unsigned char)v.s[d - 1]))
        d--;
    int64_t ns;
    if (!(d > h && is_stamp((span){v.s + h, d - h}, &ns)) &&
        !(h < v.len && is_stamp((span){v.s + h, v.len - h}, &ns)))
        return 0;
    st->host.len = 0;
    vr_buf_append(&st->host, v.s, h);
    st->stamp = ns;
    st->stamped = 1;
    return 1;
}

static int on_line(void *ud, const char *line, size_t len, uint64_t number, int cut,
                   vr_error *err)
{
    (void)number;
    gpustat_state *st = ud;
    vr_buf_reserve(&st->clean, len + 1);
    span v = {st->clean.data, strip_escapes(line, len, st->clean.data, len)};
    trim(&v);
    if (v.len == 0)
        return 0;
    st->skipped += st->last_bad;
    st->last_bad = 0;
    int64_t idx;
    span rest;
    if (!gpu_index(v, &idx, &rest))
        return cut ? 0 : (header_line(st, v), 0);
    int rc = cut ? 0 : gpu_line(st, idx, rest, err);
    st->last_bad = rc == 0;
    return rc < 0 ? -1 : 0;
}

/*-*** the reader ***/

/* A GPU line's shape: "[N] ", a '|', "°C" or "'C", and " MB" (" MiB"). */
static int looks_like_gpu_line(const char *s, size_t len)
{
    int64_t idx;
    span rest, v = {s, len};
    return gpu_index(v, &idx, &rest) && memchr(s, '|', len) &&
           (memmem(s, len, " MB", 3) || memmem(s, len, " MiB", 4)) &&
           (memmem(s, len,
                   "\xc2\xb0"
                   "C",
                   3) ||
            memmem(s, len, "'C", 2));
}

/* Whether a line of the head, escapes stripped, is a GPU line. */
static vr_sniff_level sniff_gpustat(const char *head, size_t len)
{
    char line[512];
    const char *p = head, *end = head + len;
    const char *nl;
    while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
        size_t n = strip_escapes(p, (size_t)(nl - p), line, sizeof line);
        span v = {line, n};
        trim(&v);
        if (looks_like_gpu_line(v.s, v.len))
            return VR_SNIFF_SIGNATURE;
        p = nl + 1;
    }
    return VR_SNIFF_NO;
}

static int finish(gpustat_state *st, vr_import_ctx *ctx, vr_error *err)
{
    if (st->last_bad) { /* the last snapshot was cut in a GPU line */
        ctx->truncated = 1;
        ctx->truncated_at = ctx->in ? vr_input_offset(ctx->in) : 0;
        ctx->truncated_where = "in a gpustat GPU line";
    }
    if (st->gpu_lines == 0)
        return vr_fail_code(err, VR_ERR_NOT_RECOGNISED,
                            "%s: no gpustat GPU line in it (expected '[0] NAME | T°C, U %% | "
                            "USED / TOTAL MB')",
                            vr_monitor_where(st->mon));
    return vr_reader_tally(ctx, "malformed_line", st->skipped, err);
}

typedef struct {
    vr_monitor mon;
    gpustat_state st;
} gpustat_file;

static void gpustat_init(void *state, vr_import_ctx *ctx)
{
    gpustat_file *f = state;
    vr_monitor_init(&f->mon, ctx);
    f->st = (gpustat_state){&f->mon, VR_BUF_INIT, VR_BUF_INIT, VR_MONITOR_NONE, 0, 0, 0, 0};
}

static int gpustat_line(void *state, const char *line, size_t len, uint64_t number, int cut,
                        vr_error *err)
{
    gpustat_file *f = state;
    return on_line(&f->st, line, len, number, cut, err);
}

static int gpustat_finish(void *state, vr_error *err)
{
    gpustat_file *f = state;
    int rc = finish(&f->st, f->mon.ctx, err);
    f->mon.ctx->clock = f->st.stamped ? VR_CLOCK_WALL_LOCAL : VR_CLOCK_NONE;
    return rc;
}

static void gpustat_free(void *state)
{
    gpustat_file *f = state;
    vr_buf_free(&f->st.clean);
    vr_buf_free(&f->st.host);
    vr_monitor_free(&f->mon);
}

static const vr_line_reader gpustat_lines = {sizeof(gpustat_file), MAX_LINE,       gpustat_init,
                                             gpustat_line,         gpustat_finish, gpustat_free};

const vr_reader vr_reader_gpustat = {"gpustat", "a gpustat log", sniff_gpustat, NULL,
                                     &gpustat_lines};
