/* Reader for torch.profiler's export_memory_timeline raw form
 * (`*.raw.json.gz`): a JSON list of [t_ns, action, bytes, category] rows,
 * where t = -1 marks memory that existed before profiling. It records only
 * one device (cuda:0 unless told otherwise) and no addresses, so rows
 * become memory events with running totals rebuilt by analysis, like 2021
 * traces. The category (parameter, gradient, activation, ...) is kept in
 * source_events counts for now. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/sat.h"
#include "jscan.h"
#include "json.h"
#include "reader.h"


/* _CATEGORY_TO_INDEX order in torch/profiler/_memory_profiler.py */
static const char *const categories[] = {
    "parameter", "optimizer_state", "input", "temporary", "activation",
    "gradient", "autograd_detail", "unknown"};

typedef struct {
    vr_import_ctx *ctx;
    vr_error *err;
    sqlite3_stmt *ins;
    int64_t device_id;
    int64_t pre_bytes;         /* rows at t = -1, summed: they become one */
    int pre_pending;           /* event at the first timed row */
    uint64_t per_category[8];
    uint64_t malformed;
    int failed;
} memtimeline;

/* A list of lists: only this export writes JSON of that shape. */
static vr_sniff_level sniff(const char *head, size_t len)
{
    size_t i = 0;
    while (i < len && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
        i++;
    if (i + 1 >= len || head[i] != '[')
        return VR_SNIFF_NO;
    for (i++; i < len && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r'); i++)
        ;
    return i < len && head[i] == '[' ? VR_SNIFF_SHAPE : VR_SNIFF_NO;
}

static int insert_row(memtimeline *m, int64_t ts, int64_t bytes)
{
    if (ts < m->ctx->start_ns)
        m->ctx->start_ns = ts;
    if (ts > m->ctx->end_ns)
        m->ctx->end_ns = ts;
    sqlite3_stmt *st = m->ins;
    sqlite3_bind_int64(st, 1, m->ctx->source_id);
    sqlite3_bind_int64(st, 2, m->device_id);
    sqlite3_bind_int64(st, 3, ts);
    sqlite3_bind_int64(st, 4, bytes);
    for (int c = 5; c <= 9; c++)
        sqlite3_bind_null(st, c);
    if (vr_db_step_done(m->ctx->db, st, m->err) < 0) {
        m->failed = 1;
        return -1;
    }
    return 0;
}

/* Memory that existed before profiling has no time: it is one event at the
 * first timed row (or at 0 when there is none). */
static int flush_preexisting(memtimeline *m, int64_t ts)
{
    if (!m->pre_pending)
        return 0;
    m->pre_pending = 0;
    return insert_row(m, ts, m->pre_bytes);
}

static int on_row(void *ud, const char *bytes, size_t len, uint64_t offset)
{
    memtimeline *m = ud;
    vr_json j;
    int64_t v[4];
    int n = 0;
    (void)offset;
    m->ctx->events++;
    vr_json_init(&j, bytes, len, &m->ctx->tally);
    if (vr_json_enter_array(&j))
        while (vr_json_next_element(&j)) {
            if (n >= 4 || !vr_json_int64(&j, &v[n])) {
                n = -1;
                break;
            }
            n++;
        }
    if (j.failed || n != 4 || v[3] < 0 || v[3] > 7) {
        m->malformed++;
        return 0;
    }
    m->per_category[v[3]]++;
    if (v[0] < 0) {
        m->pre_bytes = vr_sat_add(m->pre_bytes, v[2]);
        m->pre_pending = 1;
        return 0;
    }
    if (flush_preexisting(m, v[0]) < 0)
        return -1;
    return insert_row(m, v[0], v[2]);
}

static int record(memtimeline *m)
{
    sqlite3_stmt *st = vr_db_stmt(m->ctx->db, "schemas/import.sql", "insert_event_count", m->err);
    if (!st)
        return -1;
    for (int i = 0; i < 8; i++) {
        if (!m->per_category[i])
            continue;
        char kind[64];
        snprintf(kind, sizeof kind, "memory:%s", categories[i]);
        sqlite3_bind_int64(st, 1, m->ctx->source_id);
        sqlite3_bind_text(st, 2, kind, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 3, (int64_t)m->per_category[i]);
        if (vr_db_step_done(m->ctx->db, st, m->err) < 0)
            return -1;
    }
    return vr_reader_tally(m->ctx, "malformed_event", m->malformed, m->err);
}

static int import(vr_import_ctx *ctx, vr_error *err)
{
    memtimeline m;
    memset(&m, 0, sizeof m);
    m.ctx = ctx;
    m.err = err;
    m.ins = vr_db_stmt(ctx->db, "schemas/import.sql", "insert_mem_event", err);
    sqlite3_stmt *mark = vr_db_stmt(ctx->db, "schemas/import.sql", "mark_device_totals_unknown", err);
    if (!m.ins || !mark)
        return -1;
    m.device_id = vr_reader_device(ctx, ctx->rank, "cuda", 0, err);
    if (m.device_id < 0)
        return -1;
    sqlite3_bind_int64(mark, 1, m.device_id);
    if (vr_db_step_done(ctx->db, mark, err) < 0)
        return -1;
    vr_jscan scan;
    vr_jscan_init(&scan, NULL, NULL, on_row, &m);
    int rc = vr_reader_scan_json(ctx, &scan, err);
    vr_jscan_free(&scan);
    if (rc == 0)
        rc = flush_preexisting(&m, 0);
    if (rc == 0 && ctx->events == 0)
        rc = vr_fail_code(err, VR_ERR_NOT_RECOGNISED, "%s: the memory timeline holds no rows",
                          vr_input_path(ctx->in));
    return rc < 0 ? -1 : record(&m);
}

const vr_reader vr_reader_memtimeline = {
    "memory_timeline", "a torch.profiler export_memory_timeline raw export",
    sniff, import};
