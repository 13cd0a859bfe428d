/* Reader for torch.profiler's export_memory_timeline raw form
 * (`*.raw.json.gz`): a JSON list of [t_ns, action, bytes, category] rows,
 * where t = -1 marks memory that existed before profiling. It records only
 * one device (cuda:0 unless told otherwise) and no addresses, so rows
 * become memory events with running totals rebuilt by analysis, like 2021
 * traces. Each event keeps the row's category in PyTorch's spelling
 * (mem_event.category), which the breakdown pass sums at the peak; the
 * counts per category also go to source_events. Pre-existing rows stay one
 * event each, placed at the first timed row (they are the memory live when
 * profiling began), so each category's running sum stays exact. The
 * indices are PyTorch's (_CATEGORY_TO_INDEX), read by name into ours
 * (category.h has one PyTorch does not: kv_cache). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/category.h"
#include "parse/json_scan.h"
#include "parse/json_pull.h"
#include "import/reader.h"


/* PyTorch's _CATEGORY_TO_INDEX, in its order (None is unknown). */
static const char *const pytorch_category[] = {"parameter",       "optimizer_state", "input",
                                               "temporary",       "activation",      "gradient",
                                               "autograd_detail", "unknown"};
#define PYTORCH_CATEGORIES ((int64_t)(sizeof pytorch_category / sizeof *pytorch_category))

typedef struct {
    vr_import_ctx *ctx;
    vr_error *err;
    sqlite3_stmt *ins;
    int64_t device_id;
    int64_t first_ts;            /* the first timed row's t; -1: none yet */
    int64_t pre_first, pre_last; /* ids of rows stored at t = -1 (0: none) */
    uint64_t per_category[VR_CATEGORY_COUNT];
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

static int insert_row(memtimeline *m, int64_t ts, int64_t bytes, int category)
{
    if (ts >= 0 && ts < m->ctx->start_ns)
        m->ctx->start_ns = ts;
    if (ts > m->ctx->end_ns)
        m->ctx->end_ns = ts;
    sqlite3_stmt *st = m->ins;
    const char *name = vr_category_names[category];
    if (vr_db_bind_int(st, ":source", m->ctx->source_id, m->err) < 0 ||
        vr_db_bind_int(st, ":device", m->device_id, m->err) < 0 ||
        vr_db_bind_int(st, ":ts", ts, m->err) < 0 ||
        vr_db_bind_int(st, ":bytes", bytes, m->err) < 0 ||
        vr_db_bind_text(st, ":category", name, strlen(name), m->err) < 0 ||
        vr_db_step_done(m->ctx->db, st, m->err) < 0) {
        m->failed = 1;
        return -1;
    }
    return 0;
}

/* A pre-existing row before any timed one waits at t = -1 for
 * place_preexisting(); after one, it takes the first timed row's t. */
static int insert_preexisting(memtimeline *m, int64_t bytes, int category)
{
    if (insert_row(m, m->first_ts, bytes, category) < 0)
        return -1;
    if (m->first_ts < 0) {
        int64_t id = sqlite3_last_insert_rowid(vr_db_handle(m->ctx->db));
        if (!m->pre_first)
            m->pre_first = id;
        m->pre_last = id;
    }
    return 0;
}

/* Memory that existed before profiling has no time: it is placed at the
 * first timed row (or at 0 when there is none). */
static int place_preexisting(memtimeline *m)
{
    if (!m->pre_first)
        return 0;
    int64_t ts = m->first_ts < 0 ? 0 : m->first_ts;
    sqlite3_stmt *st =
        vr_db_stmt(m->ctx->db, "schemas/import.sql", "place_preexisting_mem_events", m->err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":ts", ts, m->err) < 0 ||
        vr_db_bind_int(st, ":first", m->pre_first, m->err) < 0 ||
        vr_db_bind_int(st, ":last", m->pre_last, m->err) < 0)
        return -1;
    if (ts < m->ctx->start_ns)
        m->ctx->start_ns = ts;
    if (ts > m->ctx->end_ns)
        m->ctx->end_ns = ts;
    return vr_db_step_done(m->ctx->db, st, m->err);
}

static int on_row(void *ud, const char *bytes, size_t len, uint64_t offset)
{
    memtimeline *m = ud;
    vr_json j;
    int64_t v[4];
    int n = 0;
    (void)offset;
    m->ctx->events++;
    vr_json_init(&j, bytes, len, &m->ctx->json_faults);
    if (vr_json_enter_array(&j))
        while (vr_json_next_element(&j)) {
            if (n >= 4 || !vr_json_int64(&j, &v[n])) {
                n = -1;
                break;
            }
            n++;
        }
    if (j.failed || n != 4 || v[3] < 0 || v[3] >= PYTORCH_CATEGORIES) {
        m->malformed++;
        return 0;
    }
    int category = vr_category_index(pytorch_category[v[3]]);
    m->per_category[category]++;
    if (v[0] < 0)
        return insert_preexisting(m, v[2], category);
    if (m->first_ts < 0)
        m->first_ts = v[0];
    return insert_row(m, v[0], v[2], category);
}

static int record(memtimeline *m)
{
    sqlite3_stmt *st = vr_db_stmt(m->ctx->db, "schemas/import.sql", "insert_event_count", m->err);
    if (!st)
        return -1;
    for (int i = 0; i < VR_CATEGORY_COUNT; i++) {
        if (!m->per_category[i])
            continue;
        char kind[64];
        snprintf(kind, sizeof kind, "memory:%s", vr_category_names[i]);
        if (vr_db_bind_int(st, ":source", m->ctx->source_id, m->err) < 0 ||
            vr_db_bind_text(st, ":kind", kind, strlen(kind), m->err) < 0 ||
            vr_db_bind_int(st, ":count", (int64_t)m->per_category[i], m->err) < 0 ||
            vr_db_step_done(m->ctx->db, st, m->err) < 0)
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
    m.first_ts = -1;
    m.ins = vr_db_stmt(ctx->db, "schemas/import.sql", "insert_categorised_mem_event", err);
    sqlite3_stmt *mark =
        vr_db_stmt(ctx->db, "schemas/import.sql", "mark_device_totals_unknown", err);
    if (!m.ins || !mark)
        return -1;
    m.device_id = vr_reader_device(ctx, ctx->rank, "cuda", 0, err);
    if (m.device_id < 0)
        return -1;
    if (vr_db_bind_int(mark, ":device", m.device_id, err) < 0 ||
        vr_db_step_done(ctx->db, mark, err) < 0)
        return -1;
    vr_json_scan scan;
    vr_json_scan_init(&scan, NULL, NULL, on_row, &m);
    int rc = vr_reader_scan_json(ctx, &scan, err);
    vr_json_scan_free(&scan);
    if (rc == 0)
        rc = place_preexisting(&m);
    if (rc == 0 && ctx->events == 0)
        rc = vr_fail_code(err, VR_ERR_NOT_RECOGNISED, "%s: the memory timeline holds no rows",
                          vr_input_path(ctx->in));
    return rc < 0 ? -1 : record(&m);
}

const vr_reader vr_reader_memtimeline = {
    "memory_timeline", "a torch.profiler export_memory_timeline raw export", sniff, import, NULL};
