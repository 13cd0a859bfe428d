/*-*** advise.c: the advise pass, advice with this job's numbers (docs/remedies.md) ***/
/*
 * After the diagnosis: for each finding, the remedies of the catalogue
 * schemas/remedies.sql whose trigger holds for this job, each with the
 * bytes it would save estimated from the job's own figures, ranked by
 * saving, and whether that saving would have made the failed request fit.
 *
 * The catalogue is data: every `-- name:` block of remedies.sql is one
 * remedy, run in file order over the facts analyze.sql's advise_facts
 * builds (one row per finding). A row it returns is one piece of advice;
 * this file only fills the texts' {figure} placeholders with the row's
 * columns and stores it. analyze.sql's rank_advice ranks and decides
 * would_fit. This pass owns `advice` (migration 13); docs/remedies.md.
 */
#include "analyze/analyze.h"

#include "resources/resources.h"
#include "util/buf.h"
#include "util/units.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char sql[] = "schemas/analyze.sql";
static const char catalogue[] = "schemas/remedies.sql";

/* The longest remedy id (a block name) taken. */
#define REMEDY_ID_MAX 64

/* A remedy row's fixed columns; the others are its figures. */
static const char *const text_columns[] = {"title", "setting", "evidence", "source"};
enum { T_TITLE, T_SETTING, T_EVIDENCE, T_SOURCE, T_COUNT };

/*-*** vr_sqrt(x): SQLite's sqrt() exists only in builds with its math
 * functions; checkpointing's 1/sqrt(L) needs one everywhere. ***/

static void sql_sqrt(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_double(argv[0]) < 0) {
        sqlite3_result_null(ctx);
        return;
    }
    sqlite3_result_double(ctx, sqrt(sqlite3_value_double(argv[0])));
}

static int register_functions(vr_db *db, vr_error *err)
{
    if (sqlite3_create_function(vr_db_handle(db), "vr_sqrt", 1,
                                SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_sqrt, NULL,
                                NULL) != SQLITE_OK)
        return vr_db_fail(db, err, "registering vr_sqrt");
    return 0;
}

/*-*** one row: texts filled, figures as JSON ***/

static int is_fixed_column(const char *name)
{
    if (strcmp(name, "finding_id") == 0 || strcmp(name, "saving_bytes") == 0)
        return 1;
    for (size_t i = 0; i < T_COUNT; i++)
        if (strcmp(name, text_columns[i]) == 0)
            return 1;
    return 0;
}

static int column_index(sqlite3_stmt *st, const char *name, size_t len)
{
    for (int i = 0; i < sqlite3_column_count(st); i++) {
        const char *c = sqlite3_column_name(st, i);
        if (strlen(c) == len && memcmp(c, name, len) == 0)
            return i;
    }
    return -1;
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A figure as the reader wants it: a *_bytes one as a size. */
static void put_figure(vr_buf *out, sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL) {
        vr_buf_puts(out, "unknown");
        return;
    }
    int64_t v = sqlite3_column_int64(st, col);
    if (has_suffix(sqlite3_column_name(st, col), "_bytes")) {
        char size[32];
        vr_units_bytes(v, size, sizeof size);
        vr_buf_puts(out, size);
    } else {
        vr_buf_printf(out, "%lld", (long long)v);
    }
}

/* The catalogue's text with each {column} replaced by the row's figure;
 * braces around anything else (JSON in a setting) are kept. */
static void fill_text(vr_buf *out, const char *text, sqlite3_stmt *st)
{
    const char *p = text ? text : "";
    while (*p) {
        size_t len = strspn(p + 1, "abcdefghijklmnopqrstuvwxyz_");
        int col = *p == '{' && p[1 + len] == '}' ? column_index(st, p + 1, len) : -1;
        if (col < 0) {
            vr_buf_putc(out, *p++);
            continue;
        }
        put_figure(out, st, col);
        p += len + 2;
    }
}

static void figures_json(vr_buf *out, sqlite3_stmt *st)
{
    vr_buf_putc(out, '{');
    int n = 0;
    for (int i = 0; i < sqlite3_column_count(st); i++) {
        const char *name = sqlite3_column_name(st, i);
        if (is_fixed_column(name))
            continue;
        vr_buf_printf(out, "%s\"%s\": ", n++ ? ", " : "", name);
        if (sqlite3_column_type(st, i) == SQLITE_NULL)
            vr_buf_puts(out, "null");
        else
            vr_buf_printf(out, "%lld", (long long)sqlite3_column_int64(st, i));
    }
    vr_buf_putc(out, '}');
}

static int bind_buf(sqlite3_stmt *st, const char *name, const vr_buf *b, vr_error *err)
{
    return vr_db_bind_text(st, name, b->data ? b->data : "", b->len, err);
}

static int store_row(vr_db *db, const char *remedy, sqlite3_stmt *row, vr_error *err)
{
    sqlite3_stmt *ins = vr_db_stmt(db, sql, "insert_advice", err);
    if (!ins)
        return -1;
    vr_buf text[T_COUNT], figures = VR_BUF_INIT;
    for (int i = 0; i < T_COUNT; i++) {
        text[i] = (vr_buf)VR_BUF_INIT;
        int col = column_index(row, text_columns[i], strlen(text_columns[i]));
        fill_text(&text[i], col < 0 ? "" : (const char *)sqlite3_column_text(row, col), row);
    }
    figures_json(&figures, row);
    int64_t saving = sqlite3_column_int64(row, column_index(row, "saving_bytes", 12));
    int rc = vr_db_bind_int(ins, ":finding", sqlite3_column_int64(row, 0), err) < 0 ||
                     vr_db_bind_text(ins, ":remedy", remedy, strlen(remedy), err) < 0 ||
                     vr_db_bind_int(ins, ":saving", saving, err) < 0 ||
                     bind_buf(ins, ":title", &text[T_TITLE], err) < 0 ||
                     bind_buf(ins, ":setting", &text[T_SETTING], err) < 0 ||
                     bind_buf(ins, ":evidence", &text[T_EVIDENCE], err) < 0 ||
                     bind_buf(ins, ":source", &text[T_SOURCE], err) < 0 ||
                     bind_buf(ins, ":figures", &figures, err) < 0
                 ? -1
                 : vr_db_step_done(db, ins, err);
    for (int i = 0; i < T_COUNT; i++)
        vr_buf_free(&text[i]);
    vr_buf_free(&figures);
    return rc;
}

/* A row whose saving is unknown or none is no advice: the trigger held
 * but this job's figures do not show a saving (docs/remedies.md). */
static int row_saves(sqlite3_stmt *row)
{
    int col = column_index(row, "saving_bytes", 12);
    return col >= 0 && sqlite3_column_type(row, col) != SQLITE_NULL &&
           sqlite3_column_int64(row, col) > 0;
}

static int run_remedy(vr_db *db, const char *remedy, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, catalogue, remedy, err);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (row_saves(st) && store_row(db, remedy, st, err) < 0) {
            sqlite3_reset(st);
            return -1;
        }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, remedy);
}

/*-*** the catalogue's blocks, in file order ***/

/* Each `-- name:` block of the catalogue, run in turn. vr_db_stmt()
 * copies the name it caches a statement under, so a local buffer does. */
static int run_catalogue(vr_db *db, vr_error *err)
{
    static const char marker[] = "\n-- name: ";
    const char *text = vr_resource_get(catalogue, NULL);
    if (!text)
        return vr_fail(err, "internal: %s not built in", catalogue);
    for (const char *p = strstr(text, marker); p; p = strstr(p, marker)) {
        p += sizeof marker - 1;
        size_t len = strcspn(p, " \t\r\n");
        if (len == 0 || len >= REMEDY_ID_MAX)
            return vr_fail(err, "internal: %s: a remedy name of %zu bytes", catalogue, len);
        char id[REMEDY_ID_MAX];
        memcpy(id, p, len);
        id[len] = '\0';
        if (run_remedy(db, id, err) < 0)
            return -1;
    }
    return 0;
}

int vr_analyze_advise(vr_db *db, vr_error *err)
{
    if (register_functions(db, err) < 0 || vr_db_exec_named(db, sql, "advise_facts", err) < 0 ||
        run_catalogue(db, err) < 0)
        return -1;
    return vr_db_exec_named(db, sql, "rank_advice", err);
}
