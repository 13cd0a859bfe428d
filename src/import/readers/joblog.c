/* Job logs (docs/formats/job-log-oom.md): the stdout/stderr of a training job,
 * plain or gzip/zstd, with CUDA/HIP out-of-memory errors in it. The
 * scanning is joblog_scan.c's (the wordings are its tables); this file
 * stores what it finds: one oom_event per error (its figures, the device
 * it names, its rank, line, wording, user frame and message), one
 * oom_process per "Process N has X memory in use" (pid NULL for "this
 * process"), and log_line rows for the error's lines and the lines before
 * it (role 'oom', 'traceback', 'context'; at most 30 before it, a line
 * an earlier error kept stored once; the text as written, bounded to 4
 * KiB, without terminal colours and HTML escapes). Embedded nvidia-smi
 * tables and memory_summary() boxes are kept as two log_line rows each (role
 * 'smi_table' / 'memory_summary': the first line, holding the whole box's
 * text, bounded, and the last line) and read, line by line from that
 * text, by the parsers of their own files, one of each for the whole log:
 * memsummary.h's (allocator_stat rows, written by memsummary.c's
 * vr_memsummary_insert_stat; dumps numbered across the log) and
 * nvsmi_table.h's through one vr_monitor (gpu, gpu_sample,
 * process_sample; a "[rank1]: " prefix is stripped for it, the summary
 * parser strips its own). A box past the scanner's bound (64 KiB, 400 lines) is
 * read up to it and counted (cut_log_box); rows the parsers cannot read
 * are theirs to count (malformed_stat, malformed_line). A profiler table
 * (key_averages().table(), role 'profiler_table') is read by proftable.h
 * into one profiler_table row and a profiler_table_op row per op (rows
 * cut mid-line counted: malformed_profiler_row). A memory print
 * ("allocated: 12.34 GB, reserved: ...", memprint.h's rules) is one
 * memory_print row: its figures in bytes (units read 1024-based), step
 * and epoch (the line's, else the nearest of the 3 lines before it), its
 * stamp (likewise), rank and the device it names. An inference server's
 * memory line (vLLM's "model weights take 14.96GiB; ...", SGLang's "KV
 * Cache is allocated. #tokens: ..., K size: ...": servermem.h's
 * wordings) is a server_memory row per figure, with its stamp (likewise)
 * and rank (its prefix's, else the TP rank it names).
 *
 * Times: the stamps lines start with (joblog_scan.c's table). Stamps that
 * name their zone are stored as UTC (VR_CLOCK_WALL_UTC), stamps without
 * one as written (VR_CLOCK_WALL_LOCAL: --tz applies; a log mixing both is
 * read as local), a log without stamps is unplaced (VR_CLOCK_NONE). A
 * table's reading is at the table's own stamp line (nvidia-smi's ctime
 * line just above the box: a wall clock without zone, so such a log is
 * local), else unplaced: a log line's stamp is never lent to it, so a
 * reading's time is always one nvidia-smi wrote.
 *
 * Any text may be a log, so the sniff takes text as a fallback; a text
 * that turns out to hold no error and no box is not a job log after all
 * (VR_ERR_NOT_RECOGNISED), so a folder's notes and configs are skipped,
 * not imported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/sat.h"
#include "scan/joblog_scan.h"
#include "scan/memprint.h"
#include "scan/servermem.h"
#include "import/readers/memsummary.h"
#include "import/monitor.h"
#include "import/readers/nvsmi/nvsmi_table.h"
#include "scan/proftable.h"
#include "import/reader.h"

static const char import_sql[] = "schemas/import.sql";

#define READ_CHUNK (1u << 20)

/*-*** sniff ***/

static int has(const char *head, size_t len, const char *marker)
{
    return memmem(head, len, marker, strlen(marker)) != NULL;
}

/* The allocator's error names the format; other text is only a fallback
 * (logs are text, but so is everything else in a run folder). */
static const char *const signatures[] = {"CUDA out of memory",
                                         "OutOfMemoryError",
                                         "HIP out of memory",
                                         "CUDA error: out of memory",
                                         "cudaErrorMemoryAllocation",
                                         "cuda runtime error (2) : out of memory",
                                         "would exceed allowed memory. (out of memory)",
                                         "MPS backend out of memory",
                                         "XPU out of memory"};

static int looks_like_log_text(const char *head, size_t len)
{
    size_t bad = 0, i = 0;
    while (i < len && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
        i++;
    if (i < len && (head[i] == '{' || head[i] == '<'))
        return 0; /* a JSON object or XML: a document, not a log ("[rank0]:" may start one) */
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)head[i];
        bad +=
            c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != 0x1b);
    }
    return len > 0 && bad * 100 <= len;
}

static vr_sniff_level sniff_job_log(const char *head, size_t len)
{
    for (size_t k = 0; k < sizeof signatures / sizeof *signatures; k++)
        if (has(head, len, signatures[k]))
            return VR_SNIFF_SIGNATURE;
    return looks_like_log_text(head, len) ? VR_SNIFF_FALLBACK : VR_SNIFF_NO;
}

/*-*** rows ***/

/* The parsers of the boxes, one of each for the whole log: a second
 * memory_summary() box is a new dump, a second table a new reading. */
typedef struct {
    vr_import_ctx *ctx;
    vr_memsummary summary;
    vr_monitor mon;
    vr_nvsmi_table table;
    vr_proftable_stats prof;
    int64_t prof_table; /* the profiler_table row being written */
    int64_t prof_line;  /* its first line */
    uint64_t cut_boxes;
    vr_memprint_rules *print_rules;
    uint64_t prints;       /* memory_print rows written */
    uint64_t server_lines; /* lines with server_memory rows */
    uint64_t bad_server;   /* server figures that cannot be (over 1 PiB), not read */
    uint64_t bad_server_line;
    uint64_t bad_prints;     /* prints with a figure over 1 PiB, not read */
    uint64_t bad_print_line; /* the first one's */
    int bad_print_role;
} log_import;

static int insert_line(vr_import_ctx *c, const vr_log_line *l, int64_t oom_id, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(c->db, import_sql, "insert_log_line", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", c->source_id, err) < 0 ||
        vr_db_bind_int(st, ":line", (int64_t)l->number, err) < 0 ||
        vr_db_bind_opt_int(st, ":ts", l->has_ts, l->ts_ns, err) < 0 ||
        vr_db_bind_text(st, ":role", l->role, strlen(l->role), err) < 0 ||
        vr_db_bind_opt_int(st, ":oom", oom_id >= 0, oom_id, err) < 0 ||
        vr_db_bind_text(st, ":text", l->text, l->len, err) < 0)
        return -1;
    return vr_db_step_done(c->db, st, err);
}

/* The figures bound by name: the message's own, NULL when it lacks one. */
static const struct {
    const char *param;
    vr_oom_figure figure;
} figure_params[] = {
    {":requested", VR_OOM_REQUESTED},
    {":capacity", VR_OOM_CAPACITY},
    {":free", VR_OOM_FREE},
    {":allocated", VR_OOM_ALLOCATED},
    {":reserved_unallocated", VR_OOM_RESERVED_UNALLOCATED},
    {":allowed", VR_OOM_ALLOWED},
    {":private_pools", VR_OOM_PRIVATE_POOLS},
};

static int has_figure(const vr_oom *o, vr_oom_figure f)
{
    return (o->has >> f) & 1u;
}

/* Reserved in total: as the message says, or allocated plus reserved-but-unallocated. */
static int bind_reserved(sqlite3_stmt *st, const vr_oom *o, vr_error *err)
{
    if (has_figure(o, VR_OOM_RESERVED))
        return vr_db_bind_int(st, ":reserved", o->figure[VR_OOM_RESERVED], err);
    if (has_figure(o, VR_OOM_ALLOCATED) && has_figure(o, VR_OOM_RESERVED_UNALLOCATED))
        return vr_db_bind_int(
            st, ":reserved",
            vr_sat_add(o->figure[VR_OOM_ALLOCATED], o->figure[VR_OOM_RESERVED_UNALLOCATED]), err);
    return vr_db_bind_null(st, ":reserved", err);
}

static int64_t insert_oom(vr_import_ctx *c, const vr_oom *o, vr_error *err)
{
    int64_t rank = o->rank >= 0 ? o->rank : c->rank;
    int64_t device =
        o->device_idx >= 0 ? vr_reader_device(c, rank, "cuda", o->device_idx, err) : -2;
    sqlite3_stmt *st = device != -1 ? vr_db_stmt(c->db, import_sql, "insert_log_oom", err) : NULL;
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", c->source_id, err) < 0 ||
        vr_db_bind_opt_int(st, ":device", device >= 0, device, err) < 0 ||
        vr_db_bind_opt_int(st, ":ts", o->has_ts, o->ts_ns, err) < 0)
        return -1;
    for (size_t k = 0; k < sizeof figure_params / sizeof *figure_params; k++)
        if (vr_db_bind_opt_int(st, figure_params[k].param, has_figure(o, figure_params[k].figure),
                               o->figure[figure_params[k].figure], err) < 0)
            return -1;
    if (bind_reserved(st, o, err) < 0 ||
        vr_db_bind_text(st, ":message", o->message, o->message_len, err) < 0 ||
        vr_db_bind_opt_int(st, ":device_idx", o->device_idx >= 0, o->device_idx, err) < 0 ||
        vr_db_bind_opt_int(st, ":rank", rank >= 0, rank, err) < 0 ||
        vr_db_bind_int(st, ":line", (int64_t)o->line, err) < 0 ||
        vr_db_bind_text(st, ":wording", o->wording, strlen(o->wording), err) < 0 ||
        (o->user_frame
             ? vr_db_bind_text(st, ":user_frame", o->user_frame, strlen(o->user_frame), err)
             : vr_db_bind_null(st, ":user_frame", err)) < 0 ||
        vr_db_step_done(c->db, st, err) < 0)
        return -1;
    return sqlite3_last_insert_rowid(vr_db_handle(c->db));
}

static int insert_processes(vr_import_ctx *c, const vr_oom *o, int64_t oom_id, vr_error *err)
{
    for (size_t k = 0; k < o->nprocess; k++) {
        sqlite3_stmt *st = vr_db_stmt(c->db, import_sql, "insert_oom_process", err);
        if (!st)
            return -1;
        if (vr_db_bind_int(st, ":oom", oom_id, err) < 0 ||
            vr_db_bind_opt_int(st, ":pid", o->process[k].pid >= 0, o->process[k].pid, err) < 0 ||
            vr_db_bind_int(st, ":used", o->process[k].used_bytes, err) < 0)
            return -1;
        if (vr_db_step_done(c->db, st, err) < 0)
            return -1;
    }
    return 0;
}

static int on_oom(void *ud, const vr_oom *o, const vr_log_line *lines, size_t nlines,
                  vr_error *err)
{
    log_import *li = ud;
    int64_t id = insert_oom(li->ctx, o, err);
    if (id < 0 || insert_processes(li->ctx, o, id, err) < 0)
        return -1;
    for (size_t k = 0; k < nlines; k++)
        if (insert_line(li->ctx, &lines[k], id, err) < 0)
            return -1;
    li->ctx->events++;
    return 0;
}

/*-*** profiler tables (proftable.h): profiler_table, profiler_table_op ***/

static int prof_begin(void *ud, const char *columns, size_t len, size_t ncolumns, vr_error *err)
{
    (void)ncolumns;
    log_import *li = ud;
    sqlite3_stmt *st = vr_db_stmt(li->ctx->db, import_sql, "insert_profiler_table", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", li->ctx->source_id, err) < 0 ||
        vr_db_bind_int(st, ":line", li->prof_line, err) < 0 ||
        vr_db_bind_text(st, ":columns", columns, len, err) < 0)
        return -1;
    if (vr_db_step_done(li->ctx->db, st, err) < 0)
        return -1;
    li->prof_table = sqlite3_last_insert_rowid(vr_db_handle(li->ctx->db));
    return 0;
}

/* The figures bound by name, NULL where the table lacks them. */
static const struct {
    const char *param;
    vr_prof_mem mem;
} prof_params[] = {{":self_cuda", VR_PROF_SELF_CUDA_MEM},
                   {":cuda", VR_PROF_CUDA_MEM},
                   {":self_cpu", VR_PROF_SELF_CPU_MEM},
                   {":cpu", VR_PROF_CPU_MEM}};

/* The row's Source Location cell, when it has one (migration 29). */
static int prof_op_source(log_import *li, const vr_proftable_op *op, vr_error *err)
{
    if (!op->source)
        return 0;
    sqlite3_stmt *st = vr_db_stmt(li->ctx->db, import_sql, "insert_profiler_op_source", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":table", li->prof_table, err) < 0 ||
        vr_db_bind_int(st, ":position", (int64_t)li->prof.rows_in_table, err) < 0 ||
        vr_db_bind_text(st, ":source", op->source, op->source_len, err) < 0)
        return -1;
    return vr_db_step_done(li->ctx->db, st, err);
}

static int prof_op(void *ud, const vr_proftable_op *op, vr_error *err)
{
    log_import *li = ud;
    sqlite3_stmt *st = vr_db_stmt(li->ctx->db, import_sql, "insert_profiler_op", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":table", li->prof_table, err) < 0 ||
        vr_db_bind_int(st, ":position", (int64_t)li->prof.rows_in_table, err) < 0 ||
        vr_db_bind_text(st, ":name", op->name, op->name_len, err) < 0 ||
        vr_db_bind_opt_int(st, ":calls", op->has_calls, op->calls, err) < 0)
        return -1;
    for (size_t k = 0; k < sizeof prof_params / sizeof *prof_params; k++)
        if (vr_db_bind_opt_int(st, prof_params[k].param, op->has_mem[prof_params[k].mem],
                               op->mem[prof_params[k].mem], err) < 0)
            return -1;
    if (vr_db_step_done(li->ctx->db, st, err) < 0 || prof_op_source(li, op, err) < 0)
        return -1;
    li->prof.rows_in_table++;
    return 0;
}

static int prof_end(void *ud, uint64_t rows, int truncated, vr_error *err)
{
    log_import *li = ud;
    sqlite3_stmt *st = vr_db_stmt(li->ctx->db, import_sql, "end_profiler_table", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":id", li->prof_table, err) < 0 ||
        vr_db_bind_int(st, ":rows", (int64_t)rows, err) < 0 ||
        vr_db_bind_int(st, ":truncated", truncated, err) < 0)
        return -1;
    return vr_db_step_done(li->ctx->db, st, err);
}

static int read_profiler_table(log_import *li, const vr_log_box *box, vr_error *err)
{
    static const vr_proftable_sink sink = {prof_begin, prof_op, prof_end,
                                           vr_joblog_rank_prefix_length};
    li->prof_line = (int64_t)box->first->number;
    li->prof.rows_in_table = 0;
    return vr_proftable_read(box->first->text, box->first->len, box->cut, &sink, li, &li->prof,
                             err);
}

/* Each line of a box's text (lines without their ends) to its parser. */
static int read_box(log_import *li, const vr_log_box *box, vr_error *err)
{
    if (strcmp(box->first->role, "profiler_table") == 0) {
        li->cut_boxes += box->cut != 0;
        return read_profiler_table(li, box, err);
    }
    int smi = strcmp(box->first->role, "smi_table") == 0;
    if (smi && box->above) {
        size_t skip = vr_joblog_prefix_length(box->above, box->above_len);
        if (vr_nvsmi_table_line(&li->table, box->above + skip, box->above_len - skip, 0, err) < 0)
            return -1;
    }
    const char *p = box->first->text, *end = p + box->first->len;
    uint64_t number = box->first->number; /* for the summary's messages */
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        size_t len = n - (n > 0 && p[n - 1] == '\r');
        /* the bound may cut the last line: the parsers skip and count it */
        int cut = !nl && box->cut;
        /* the table parser knows no log prefix; the summary's strips its own */
        size_t skip = smi ? vr_joblog_prefix_length(p, len) : 0;
        li->summary.line = number++;
        if (smi ? vr_nvsmi_table_line(&li->table, p + skip, len - skip, cut, err) < 0
                : vr_memsummary_feed(&li->summary, p, len, err) < 0)
            return -1;
        p += n + (nl != NULL);
    }
    li->cut_boxes += box->cut != 0;
    return 0;
}

static int on_block(void *ud, const vr_log_box *box, vr_error *err)
{
    log_import *li = ud;
    const vr_log_line *first = box->first, *last = box->last;
    if (insert_line(li->ctx, first, -1, err) < 0 ||
        (last->number != first->number && insert_line(li->ctx, last, -1, err) < 0) ||
        read_box(li, box, err) < 0)
        return -1;
    li->ctx->events++;
    return 0;
}

/*-*** memory prints (memprint.h): memory_print ***/

/* The figures bound by name, NULL where the line lacks them. */
static const struct {
    const char *param;
    vr_memprint_role role;
} print_params[] = {{":allocated", VR_MP_ALLOCATED},
                    {":reserved", VR_MP_RESERVED},
                    {":max_allocated", VR_MP_MAX_ALLOCATED},
                    {":max_reserved", VR_MP_MAX_RESERVED}};

static int insert_print(vr_import_ctx *c, const vr_log_line *l, int64_t rank, int64_t ts_known,
                        int64_t ts, const vr_memprint *p, vr_error *err)
{
    int64_t device =
        p->device_idx >= 0 ? vr_reader_device(c, rank, "cuda", p->device_idx, err) : -2;
    sqlite3_stmt *st =
        device != -1 ? vr_db_stmt(c->db, import_sql, "insert_memory_print", err) : NULL;
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", c->source_id, err) < 0 ||
        vr_db_bind_int(st, ":line", (int64_t)l->number, err) < 0 ||
        vr_db_bind_opt_int(st, ":ts", (int)ts_known, ts, err) < 0 ||
        vr_db_bind_opt_int(st, ":step", p->has_step, p->step, err) < 0 ||
        vr_db_bind_opt_int(st, ":epoch", p->has_epoch, p->epoch, err) < 0 ||
        vr_db_bind_opt_int(st, ":rank", rank >= 0, rank, err) < 0 ||
        vr_db_bind_opt_int(st, ":device", device >= 0, device, err) < 0 ||
        vr_db_bind_text(st, ":framework", p->framework, strlen(p->framework), err) < 0 ||
        vr_db_bind_text(st, ":figure", p->figure, strlen(p->figure), err) < 0)
        return -1;
    for (size_t k = 0; k < sizeof print_params / sizeof *print_params; k++)
        if (vr_db_bind_opt_int(st, print_params[k].param, p->has[print_params[k].role],
                               p->bytes[print_params[k].role], err) < 0)
            return -1;
    if (vr_db_bind_text(st, ":unit", p->unit, strlen(p->unit), err) < 0 ||
        vr_db_bind_text(st, ":reading", VR_MEMPRINT_READING, strlen(VR_MEMPRINT_READING), err) <
            0)
        return -1;
    return vr_db_step_done(c->db, st, err);
}

/*-*** inference servers' memory lines (servermem.h): server_memory ***/

static int insert_server_value(vr_import_ctx *c, const vr_log_line *l, int64_t rank, int has_ts,
                               int64_t ts, const char *framework, const vr_servermem_value *v,
                               vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(c->db, import_sql, "insert_server_memory", err);
    if (!st)
        return -1;
    const char *figure = vr_servermem_figure_names[v->figure];
    if (vr_db_bind_int(st, ":source", c->source_id, err) < 0 ||
        vr_db_bind_int(st, ":line", (int64_t)l->number, err) < 0 ||
        vr_db_bind_opt_int(st, ":ts", has_ts, ts, err) < 0 ||
        vr_db_bind_opt_int(st, ":rank", rank >= 0, rank, err) < 0 ||
        vr_db_bind_text(st, ":framework", framework, strlen(framework), err) < 0 ||
        vr_db_bind_text(st, ":figure", figure, strlen(figure), err) < 0 ||
        vr_db_bind_opt_int(st, ":bytes", !v->is_count, v->value, err) < 0 ||
        vr_db_bind_opt_int(st, ":count", v->is_count, v->value, err) < 0)
        return -1;
    if (v->unit ? vr_db_bind_text(st, ":unit", v->unit, strlen(v->unit), err) < 0
                : vr_db_bind_null(st, ":unit", err) < 0)
        return -1;
    return vr_db_step_done(c->db, st, err);
}

/* A line that may be a server's memory line: its figures' rows, with
 * its stamp (else the nearest before it) and rank (its prefix's, else
 * the TP rank the line names). 1 when it was one. */
static int server_line(log_import *li, const vr_log_line *line, int64_t rank,
                       const vr_log_line *before, size_t nbefore, vr_error *err)
{
    vr_servermem m;
    size_t n = vr_servermem_match(line->text, line->len, &m);
    if (m.impossible && li->bad_server++ == 0)
        li->bad_server_line = line->number;
    if (n == 0)
        return 0;
    int has_ts = line->has_ts;
    int64_t ts = line->ts_ns;
    for (size_t k = 0; k < nbefore && !has_ts; k++)
        if (before[k].has_ts) {
            has_ts = 1;
            ts = before[k].ts_ns;
        }
    if (rank < 0)
        rank = m.tp_rank >= 0 ? m.tp_rank : li->ctx->rank;
    for (size_t k = 0; k < n; k++)
        if (insert_server_value(li->ctx, line, rank, has_ts, ts, m.framework, &m.v[k], err) < 0)
            return -1;
    li->server_lines++;
    li->ctx->events++;
    return 1;
}

/* A line that may be a memory print: its step, epoch and stamp are its
 * own, else the nearest line's before it that gives one. A line that is
 * no print may be a server's memory line (no wording of one is a print's:
 * tests/kv-cache.sh reads every real one); the prints, many of the lines
 * a training log hands here, are so not read twice. */
static int on_text(void *ud, const vr_log_line *line, int64_t rank, const vr_log_line *before,
                   size_t nbefore, vr_error *err)
{
    log_import *li = ud;
    vr_memprint p;
    int m = vr_memprint_match(li->print_rules, line->text, line->len, &p);
    if (m < 0 && li->bad_prints++ == 0) {
        li->bad_print_line = line->number;
        li->bad_print_role = p.impossible;
    }
    if (m == 0)
        return server_line(li, line, rank, before, nbefore, err) < 0 ? -1 : 0;
    if (m < 0)
        return 0;
    int has_ts = line->has_ts;
    int64_t ts = line->ts_ns;
    for (size_t k = 0; k < nbefore; k++) {
        vr_memprint_context(li->print_rules, before[k].text, before[k].len, &p);
        if (!has_ts && before[k].has_ts) {
            has_ts = 1;
            ts = before[k].ts_ns;
        }
    }
    if (insert_print(li->ctx, line, rank >= 0 ? rank : li->ctx->rank, has_ts, ts, &p, err) < 0)
        return -1;
    li->prints++;
    li->ctx->events++;
    return 0;
}

/*-*** import ***/

/* The input read straight into the scanner's window. */
static int feed_all(vr_import_ctx *c, vr_joblog_scan *scan, vr_error *err)
{
    for (;;) {
        size_t room;
        char *to = vr_joblog_scan_space(scan, &room);
        ptrdiff_t n = vr_input_read(c->in, to, room < READ_CHUNK ? room : READ_CHUNK, err);
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        if (vr_joblog_scan_wrote(scan, (size_t)n, err) < 0)
            return -1;
        vr_progress_update(c->progress, vr_input_raw_offset(c->in), c->events);
    }
    return vr_joblog_scan_finish(scan, err);
}

/* What the scan tells the source: its clock, its span, what was passed
 * over. A table's own stamp is a wall-clock time without a zone, like a
 * log line's without one. */
static int finish(vr_import_ctx *c, const vr_joblog_stats *st, int table_stamped, vr_error *err)
{
    c->clock = st->seen_local || table_stamped ? VR_CLOCK_WALL_LOCAL
               : st->seen_zoned                ? VR_CLOCK_WALL_UTC
                                               : VR_CLOCK_NONE;
    if (st->start_ns < c->start_ns) /* the readings' times are there already */
        c->start_ns = st->start_ns;
    if (st->end_ns > c->end_ns)
        c->end_ns = st->end_ns;
    if (vr_input_truncated(c->in)) {
        c->truncated = 1;
        c->truncated_at = vr_input_offset(c->in);
        c->truncated_where = "in a line";
    }
    return vr_reader_tally(c, "unreadable_oom_figure", st->unreadable, err) < 0 ||
                   vr_reader_tally(c, "repeated_oom", st->repeats, err) < 0 ||
                   vr_reader_tally(c, "long_log_line", st->cut_lines, err) < 0
               ? -1
               : 0;
}

/* The boxes' parsers' ends: rows still pending, what they skipped. */
static int finish_boxes(log_import *li, vr_error *err)
{
    if (vr_memsummary_finish(&li->summary, err) < 0 || vr_nvsmi_table_finish(&li->table, err) < 0)
        return -1;
    vr_stat_bad_warn(&li->summary.bad, li->ctx->warn, vr_input_path(li->ctx->in), "line");
    if (li->bad_server)
        vr_warn(li->ctx->warn,
                "%s: line %llu: an inference server's memory line gives a size over 1 PiB or "
                "a count past 10^15: that figure is not read (%llu such line%s, counted as "
                "malformed)",
                vr_input_path(li->ctx->in), (unsigned long long)li->bad_server_line,
                (unsigned long long)li->bad_server, li->bad_server == 1 ? "" : "s");
    if (li->bad_prints)
        vr_warn(li->ctx->warn,
                "%s: line %llu: a memory print's %s is impossible (over 1 PiB, more than any "
                "GPU holds): the print is not read (%llu such print%s, counted as malformed)",
                vr_input_path(li->ctx->in), (unsigned long long)li->bad_print_line,
                vr_memprint_role_names[li->bad_print_role], (unsigned long long)li->bad_prints,
                li->bad_prints == 1 ? "" : "s");
    return vr_reader_tally(li->ctx, "malformed_event", li->bad_prints + li->bad_server, err) <
                       0 ||
                   vr_reader_tally(li->ctx, "malformed_stat", li->summary.skipped, err) < 0 ||
                   vr_reader_tally(li->ctx, "cut_log_box", li->cut_boxes, err) < 0 ||
                   vr_reader_tally(li->ctx, "malformed_profiler_row", li->prof.skipped, err) < 0
               ? -1
               : 0;
}

static int insert_stat(void *ud, int64_t dump, int64_t device_idx, const char *key, int64_t value,
                       vr_error *err)
{
    log_import *li = ud;
    return vr_memsummary_insert_stat(li->ctx, dump, device_idx, key, value, err);
}

static int import_job_log(vr_import_ctx *c, vr_error *err)
{
    log_import li = {.ctx = c};
    static const vr_joblog_sink sink = {on_oom, on_block, on_text};
    li.print_rules = vr_memprint_rules_builtin(err);
    if (!li.print_rules)
        return -1;
    vr_memsummary_init(&li.summary, insert_stat, &li);
    vr_monitor_init(&li.mon, c);
    vr_nvsmi_table_init(&li.table, &li.mon);
    vr_joblog_scan *scan = vr_joblog_scan_new(&sink, &li);
    int rc = feed_all(c, scan, err);
    const vr_joblog_stats st = *vr_joblog_scan_stats(scan);
    vr_joblog_scan_free(scan);
    if (rc == 0)
        rc = finish_boxes(&li, err);
    if (rc == 0)
        rc = finish(c, &st, li.table.stamped, err);
    vr_nvsmi_table_free(&li.table);
    vr_monitor_free(&li.mon);
    vr_memprint_rules_free(li.print_rules);
    if (rc < 0)
        return -1;
    if (st.ooms == 0 && st.blocks == 0 && li.prints == 0 && li.server_lines == 0) {
        vr_buf expected = VR_BUF_INIT;
        vr_reader_expected(&expected);
        vr_fail_code(err, VR_ERR_NOT_RECOGNISED,
                     "%s: not a recognised input: text without a CUDA out-of-memory error, "
                     "a memory print or an inference server's memory line "
                     "(%llu lines read); expected %s",
                     vr_input_path(c->in), (unsigned long long)st.lines, expected.data);
        vr_buf_free(&expected);
        return -1;
    }
    return 0;
}

const vr_reader vr_reader_job_log = {"job_log", "a job log with a CUDA out-of-memory error",
                                     sniff_job_log, import_job_log, NULL};
