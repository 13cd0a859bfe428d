#include "import/reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/lines.h"

int vr_reader_tally(vr_import_ctx *ctx, const char *kind, uint64_t count, vr_error *err)
{
    if (!count)
        return 0;
    sqlite3_stmt *st = vr_db_stmt(ctx->db, "schemas/import.sql", "insert_tally", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", ctx->source_id, err) < 0 ||
        vr_db_bind_text(st, ":kind", kind, strlen(kind), err) < 0 ||
        vr_db_bind_int(st, ":count", (int64_t)count, err) < 0)
        return -1;
    return vr_db_step_done(ctx->db, st, err);
}

int64_t vr_reader_device(vr_import_ctx *ctx, int64_t rank, const char *platform, int64_t idx,
                         vr_error *err)
{
    static const char f[] = "schemas/import.sql";
    sqlite3_stmt *ins = vr_db_stmt(ctx->db, f, "upsert_device", err);
    sqlite3_stmt *sel = vr_db_stmt(ctx->db, f, "select_device", err);
    if (!ins || !sel)
        return -1;
    /* Without a rank the device belongs to this source alone (schema.sql). */
    int64_t scope = rank >= 0 ? 0 : ctx->source_id;
    /* ROCm builds of PyTorch still name their devices cuda:N. */
    const char *prefix = platform[0] == 'r' ? "cuda" : platform;
    char label[64];
    snprintf(label, sizeof label, "%s:%lld", prefix, (long long)idx);
    sqlite3_stmt *both[2] = {ins, sel};
    for (int i = 0; i < 2; i++)
        if (vr_db_bind_int(both[i], ":rank", rank, err) < 0 ||
            vr_db_bind_text(both[i], ":platform", platform, strlen(platform), err) < 0 ||
            vr_db_bind_int(both[i], ":idx", idx, err) < 0 ||
            vr_db_bind_int(both[i], ":scope", scope, err) < 0)
            return -1;
    if (vr_db_bind_text(ins, ":label", label, strlen(label), err) < 0 ||
        vr_db_step_done(ctx->db, ins, err) < 0)
        return -1;
    int64_t id = sqlite3_step(sel) == SQLITE_ROW ? sqlite3_column_int64(sel, 0) : -1;
    sqlite3_reset(sel);
    if (id < 0)
        vr_db_fail(ctx->db, err, "creating a device");
    return id;
}

#define SCAN_CHUNK (1u << 20)

int vr_reader_scan_json(vr_import_ctx *c, vr_json_scan *scan, vr_error *err)
{
    char *chunk = vr_xmalloc(SCAN_CHUNK);
    int rc = 0;
    ptrdiff_t n;
    while (rc == 0 && (n = vr_input_read(c->in, chunk, SCAN_CHUNK, err)) > 0) {
        vr_json_scan_status st = vr_json_scan_feed(scan, chunk, (size_t)n);
        if (st == VR_JSON_SCAN_SYNTAX)
            vr_fail_code(err, VR_ERR_MALFORMED, "%s: byte %llu: %s", vr_input_path(c->in),
                         (unsigned long long)vr_json_scan_error_offset(scan),
                         vr_json_scan_error(scan));
        rc = st == VR_JSON_SCAN_OK ? 0 : -1;
        vr_progress_update(c->progress, vr_input_raw_offset(c->in), c->events);
    }
    free(chunk);
    if (rc == 0 && n < 0)
        rc = -1;
    if (rc == 0 && (!vr_json_scan_complete(scan) || vr_input_truncated(c->in))) {
        c->truncated = 1;
        c->truncated_at = vr_input_offset(c->in);
        c->truncated_where = vr_json_scan_where(scan);
    }
    /* What the scanner passed over is data the report must not claim. */
    if (rc == 0 && (vr_reader_tally(c, "oversized_value", scan->oversized, err) < 0 ||
                    vr_reader_tally(c, "trailing_data", scan->trailing, err) < 0))
        rc = -1;
    return rc;
}

/*-*** lines ***/

int vr_reader_scan_lines(vr_import_ctx *c, size_t max_line, vr_line_fn on_line, void *state,
                         vr_error *err)
{
    size_t max = max_line ? max_line : 1;
    char *chunk = vr_xmalloc(SCAN_CHUNK), *buf = vr_xmalloc(max + 1);
    vr_lines ls;
    vr_line line;
    vr_lines_init(&ls, buf, max + 1);
    int rc = 0;
    ptrdiff_t n;
    while (rc == 0 && (n = vr_input_read(c->in, chunk, SCAN_CHUNK, err)) > 0) {
        const char *p = chunk;
        size_t left = (size_t)n;
        while (rc == 0 && vr_lines_next(&ls, &p, &left, &line))
            rc = on_line(state, line.text, line.len, line.number, line.cut, err) < 0 ? -1 : 0;
        vr_progress_update(c->progress, vr_input_raw_offset(c->in), c->events);
    }
    if (rc == 0 && n < 0)
        rc = -1;
    if (rc == 0 && vr_lines_end(&ls, &line))
        rc = on_line(state, line.text, line.len, line.number, line.cut, err) < 0 ? -1 : 0;
    if (rc == 0 && vr_input_truncated(c->in)) {
        c->truncated = 1;
        c->truncated_at = vr_input_offset(c->in);
        c->truncated_where = "in a line";
    }
    free(chunk);
    free(buf);
    return rc;
}

static int read_lines(vr_import_ctx *ctx, const vr_line_reader *lr, vr_error *err)
{
    void *state = vr_xmalloc(lr->state_size);
    memset(state, 0, lr->state_size);
    lr->init(state, ctx);
    int rc = vr_reader_scan_lines(ctx, lr->max_line, lr->line, state, err);
    if (rc == 0)
        rc = lr->finish(state, err);
    if (lr->free)
        lr->free(state);
    free(state);
    return rc;
}

int vr_reader_reads(const vr_reader *r)
{
    return r->import || r->lines;
}

int vr_reader_run(const vr_reader *r, vr_import_ctx *ctx, vr_error *err)
{
    return r->lines ? read_lines(ctx, r->lines, err) : r->import(ctx, err);
}
