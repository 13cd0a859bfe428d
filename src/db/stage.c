/* A staging database's rows copied into the run's, ids as a sequential
 * import gives them (stage.h). The fixed statements are schemas/stage.sql;
 * each table's copy is built from the schema (every column of it) and
 * merge.c's spaces of ids, so a column added by a migration is copied
 * without a change here, and an id column no space names stops the
 * import rather than copy a wrong id. */
#include "db/stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/merge.h"
#include "util/alloc.h"
#include "util/buf.h"

static const char stage_sql[] = "schemas/stage.sql";

/* Tables not copied row by row: name and device are matched (stage.sql),
 * the others hold the schema's own rows in every database. */
static const char *const not_copied[] = {"name",           "device",         "trace_action",
                                         "analysis_state", "capacity_given", "merged_rank"};

static int copied(const char *table)
{
    for (size_t i = 0; i < sizeof not_copied / sizeof not_copied[0]; i++)
        if (strcmp(not_copied[i], table) == 0)
            return 0;
    return strncmp(table, "sqlite", 6) != 0;
}

/* Prepares `sql`, binds :table to `table` where it has one, steps it to
 * its end; *out: the first row's first column when out is not NULL. */
static int run(vr_db *db, const char *sql, size_t len, const char *table, int64_t *out,
               vr_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(vr_db_handle(db), sql, (int)len, &st, NULL) != SQLITE_OK)
        return vr_db_fail(db, err, "copying a staged file");
    int i = sqlite3_bind_parameter_index(st, ":table");
    int rc = i > 0 ? sqlite3_bind_text(st, i, table, -1, SQLITE_TRANSIENT) : SQLITE_OK;
    if (rc != SQLITE_OK) {
        sqlite3_finalize(st);
        return vr_db_fail(db, err, "copying a staged file");
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (out) {
            *out = sqlite3_column_int64(st, 0);
            out = NULL;
        }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "copying a staged file");
}

/* Block `name` of stage.sql prepared (one statement), :table bound to
 * `table` where it has one; NULL with err set. The caller finalizes. */
static sqlite3_stmt *prepare_named(vr_db *db, const char *name, const char *table, vr_error *err)
{
    size_t len;
    const char *sql = vr_db_sql_block(stage_sql, name, &len);
    sqlite3_stmt *st = NULL;
    if (!sql)
        vr_fail_code(err, VR_ERR_DATABASE, "internal: no SQL block %s in %s", name, stage_sql);
    else if (sqlite3_prepare_v2(vr_db_handle(db), sql, (int)len, &st, NULL) != SQLITE_OK)
        vr_db_fail(db, err, "copying a staged file");
    int i = st ? sqlite3_bind_parameter_index(st, ":table") : 0;
    if (i > 0 && sqlite3_bind_text(st, i, table, -1, SQLITE_TRANSIENT) != SQLITE_OK) {
        vr_db_fail(db, err, "copying a staged file");
        sqlite3_finalize(st);
        st = NULL;
    }
    return st;
}

/* Block `name` of stage.sql: every statement of it, or the one whose first
 * value `out` receives. */
static int run_named(vr_db *db, const char *name, int64_t *out, vr_error *err)
{
    if (!out)
        return vr_db_exec_named(db, stage_sql, name, err);
    size_t len;
    const char *sql = vr_db_sql_block(stage_sql, name, &len);
    if (!sql)
        return vr_fail_code(err, VR_ERR_DATABASE, "internal: no SQL block %s in %s", name,
                            stage_sql);
    return run(db, sql, len, NULL, out, err);
}

int vr_db_stage_configure(vr_db *stage, vr_error *err)
{
    return vr_db_exec_named(stage, stage_sql, "staging_pragmas", err);
}

int vr_db_stage_attach(vr_db *db, const char *path, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, stage_sql, "attach", err);
    if (!st || vr_db_bind_text(st, ":path", path, strlen(path), err) < 0)
        return -1;
    return vr_db_step_done(db, st, err);
}

void vr_db_stage_detach(vr_db *db)
{
    vr_error ignored = VR_ERROR_INIT;
    vr_db_exec_named(db, stage_sql, "drop_maps", &ignored);
    vr_db_exec_named(db, stage_sql, "detach", &ignored);
}

/* A file's devices are few: their new ids as one CASE over the column
 * (its %s the column's name), which costs each row far less than a look-up in the
 * map table. Empty when the map is too long for that. */
static int device_case(vr_db *db, vr_buf *out, vr_error *err)
{
    sqlite3_stmt *st = prepare_named(db, "device_map_rows", NULL, err);
    if (!st)
        return -1;
    int rc, n = 0;
    vr_buf_puts(out, "CASE x.\"%s\"");
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && n++ < 64)
        vr_buf_printf(out, " WHEN %lld THEN %lld", (long long)sqlite3_column_int64(st, 0),
                      (long long)sqlite3_column_int64(st, 1));
    vr_buf_puts(out, " END");
    sqlite3_finalize(st);
    if (n == 0 || n > 64)
        vr_buf_clear(out);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0
                                                 : vr_db_fail(db, err, "copying a staged file");
}

/* The expression of one staged column in the run's ids. */
static int column_expr(vr_buf *sql, const char *table, const char *column, const vr_buf *devices,
                       vr_error *err)
{
    const char *space = vr_db_merge_space(table, column);
    size_t n = strlen(column);
    int id_like = strcmp(column, "id") == 0 || (n > 3 && strcmp(column + n - 3, "_id") == 0);
    if (!space && id_like)
        return vr_fail_code(err, VR_ERR_DATABASE,
                            "internal: %s.%s names ids the staged copy does not know "
                            "(src/db/merge.c)",
                            table, column);
    if (!space || !*space)
        vr_buf_printf(sql, "x.\"%s\"", column);
    else if (strcmp(space, "device") == 0 && devices->len)
        vr_buf_printf(sql, devices->data, column);
    else if (strcmp(space, "name") == 0 || strcmp(space, "device") == 0)
        vr_buf_printf(sql, "(SELECT new FROM temp.vr_stage_%s WHERE old = x.\"%s\")", space,
                      column);
    else if (strcmp(space, "frame") == 0 || strcmp(space, "stack") == 0)
        /* none staged (vr_db_stage_copy): a profiler trace has no stacks */
        vr_buf_printf(sql, "x.\"%s\"", column);
    else
        vr_buf_printf(sql, "x.\"%s\" + (SELECT base FROM temp.vr_stage_base WHERE space = '%s')",
                      column, space);
    return 0;
}

/* INSERT INTO main.T (every column) SELECT (each remapped) FROM vr_stage.T. */
static int copy_table(vr_db *db, const char *table, const vr_buf *devices, vr_error *err)
{
    sqlite3_stmt *st = prepare_named(db, "staged_columns", table, err);
    if (!st)
        return -1;
    vr_buf cols = VR_BUF_INIT, exprs = VR_BUF_INIT, sql = VR_BUF_INIT;
    int rc = 0, step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *col = (const char *)sqlite3_column_text(st, 0);
        vr_buf_printf(&cols, "%s\"%s\"", cols.len ? ", " : "", col);
        if (exprs.len)
            vr_buf_puts(&exprs, ", ");
        rc = column_expr(&exprs, table, col, devices, err);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = vr_db_fail(db, err, "copying a staged file: reading a table's columns");
    sqlite3_finalize(st);
    /* the table's name is the schema's own (the staging database is ours) */
    if (rc == 0) {
        vr_buf_printf(&sql, "INSERT INTO main.\"%s\" (%s) SELECT %s FROM vr_stage.\"%s\" x",
                      table, cols.data, exprs.data, table);
        rc = run(db, sql.data, sql.len, NULL, NULL, err);
    }
    vr_buf_free(&cols);
    vr_buf_free(&exprs);
    vr_buf_free(&sql);
    return rc;
}

/* The staged tables that hold rows, by name; NULL-ended, the caller frees
 * each and the array. Out of memory exits (util/alloc.h), as everywhere. */
static char **staged_tables(vr_db *db, vr_error *err)
{
    sqlite3_stmt *st = prepare_named(db, "staged_tables", NULL, err);
    return st ? vr_db_text_list(db, st, "copying a staged file: listing its tables", err) : NULL;
}

/* Each table's base (its largest id in the run's database), and whether
 * the staged table holds rows. */
static int table_base(vr_db *db, const char *table, int *has_rows, vr_error *err)
{
    vr_buf sql = VR_BUF_INIT;
    int64_t has_id = 0, rows = 0;
    sqlite3_stmt *st = prepare_named(db, "has_id", table, err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : vr_db_fail(db, err, "copying a staged file");
    has_id = rc == 0 ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (rc == 0 && has_id) {
        vr_buf_printf(
            &sql,
            "INSERT INTO temp.vr_stage_base VALUES (:table, (SELECT coalesce(max(id), 0)"
            " FROM main.\"%s\"))",
            table);
        rc = run(db, sql.data, sql.len, table, NULL, err);
    }
    if (rc == 0) {
        vr_buf_clear(&sql);
        vr_buf_printf(&sql, "SELECT EXISTS (SELECT 1 FROM vr_stage.\"%s\")", table);
        rc = run(db, sql.data, sql.len, NULL, &rows, err);
    }
    *has_rows = rows != 0;
    vr_buf_free(&sql);
    return rc;
}

int vr_db_stage_copy(vr_db *db, int64_t *source_id, vr_error *err)
{
    char **names = staged_tables(db, err);
    if (!names)
        return -1;
    size_t n = 0;
    while (names[n])
        n++;
    int *rows = vr_xcalloc(n + 1, sizeof *rows);
    vr_buf devices = VR_BUF_INIT;
    int rc = run_named(db, "drop_maps", NULL, err);
    if (rc == 0)
        rc = run_named(db, "create_bases", NULL, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = table_base(db, names[i], &rows[i], err);
    if (rc == 0 && (rc = run_named(db, "copy_names", NULL, err)) == 0 &&
        (rc = run_named(db, "map_names", NULL, err)) == 0 &&
        (rc = run_named(db, "copy_devices", NULL, err)) == 0 &&
        (rc = run_named(db, "map_devices", NULL, err)) == 0)
        rc = device_case(db, &devices, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (rows[i] && (!strcmp(names[i], "frame") || !strcmp(names[i], "stack")))
            /* shared by their content (snapshots): never staged (import.c) */
            rc = vr_fail_code(err, VR_ERR_DATABASE, "internal: a staged file holds %s rows",
                              names[i]);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (rows[i] && copied(names[i]))
            rc = copy_table(db, names[i], &devices, err);
    *source_id = -1;
    if (rc == 0)
        rc = run_named(db, "staged_source", source_id, err);
    vr_db_text_list_free(names);
    free(rows);
    vr_buf_free(&devices);
    return rc;
}
