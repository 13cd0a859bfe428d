/* A rank database copied into the job database, ids remapped, its raw
 * tables thinned to what a report reads (merge.h). The statements are
 * built from the schema itself (every table of the job's, every column of
 * each) and two static tables: how each table is copied, and which space
 * of ids each id column names. A column named id or *_id that neither
 * table knows stops the merge: a new one must be added here. */
#include "db/merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/buf.h"

#define RANK "vr_rank" /* the attached rank database's schema name */

/* How a table is copied. */
typedef enum { COPY_ALL, COPY_KEPT, COPY_IGNORE, COPY_SKIP } copy_kind;

static const struct {
    const char *table;
    copy_kind kind;
    const char *keep; /* COPY_KEPT: the temp table of the ids kept */
} tables[] = {
    {"mem_event", COPY_KEPT, "vr_keep_event"},
    {"allocation", COPY_KEPT, "vr_keep_alloc"},
    {"op", COPY_KEPT, "vr_keep_op"},
    {"trace_entry_other", COPY_KEPT, "vr_keep_entry"},
    {"trace_action", COPY_IGNORE, NULL},   /* the same fixed codes in every database */
    {"capacity_given", COPY_IGNORE, NULL}, /* one row: the first rank's */
    {"analysis_state", COPY_SKIP, NULL},   /* set once the rank is in */
    {"merged_rank", COPY_SKIP, NULL},      /* the job's own */
    {"gpu_op", COPY_SKIP, NULL},           /* kernels and copies: no report reads them */
    {"name", COPY_SKIP, NULL},             /* by their text (vr_map_name) */
    {"frame", COPY_SKIP, NULL},            /* by their names and line (vr_map_frame) */
};

/* The space of ids an id column names; a space is its table, whose ids
 * are shifted past the job's (name and frame: looked up, shared). */
static const struct {
    const char *table; /* NULL: in any table */
    const char *column;
    const char *space;
} columns[] = {
    {NULL, "source_id", "source"},
    {NULL, "with_source_id", "source"},
    {"device", "scope", "source"},
    {NULL, "device_id", "device"},
    {NULL, "name_id", "name"},
    {NULL, "filename_id", "name"},
    {NULL, "function_id", "name"},
    {NULL, "call_from_id", "name"},
    {NULL, "frame_id", "frame"},
    {NULL, "user_frame_id", "frame"},
    {NULL, "stack_id", "stack"},
    {NULL, "example_stack_id", "stack"},
    {NULL, "op_id", "op"},
    {NULL, "peak_allocated_op_id", "op"},
    {NULL, "alloc_event_id", "mem_event"},
    {NULL, "free_event_id", "mem_event"},
    {NULL, "peak_allocated_event_id", "mem_event"},
    {NULL, "finding_id", "finding"},
    {NULL, "oom_id", "oom_event"},
    {"oom_twin", "first_id", "oom_event"},
    {NULL, "gpu_id", "gpu"},
    {NULL, "sample_id", "gpu_sample"},
    {NULL, "segment_id", "segment"},
    {NULL, "block_id", "block"},
    {NULL, "table_id", "profiler_table"},
    {NULL, "pci_bus_id", ""},  /* "": not an id */
    {NULL, "external_id", ""}, /* the trace's correlation, not a row's */
};

/* What is kept of the rank's raw tables, in order (each may read the
 * ones before): the allocations live at each device's peak (as the
 * report's live_at_peak reads them), the events of the peaks, of those
 * allocations and of the timeline's buckets, the operators they name,
 * and the last entry of each snapshot history. */
static const char *const keep_sql[] = {
    "CREATE TEMP TABLE vr_keep_alloc (id INTEGER PRIMARY KEY)",
    "CREATE TEMP TABLE vr_keep_event (id INTEGER PRIMARY KEY)",
    "CREATE TEMP TABLE vr_keep_op (id INTEGER PRIMARY KEY)",
    "CREATE TEMP TABLE vr_keep_entry (id INTEGER PRIMARY KEY)",
    "INSERT OR IGNORE INTO vr_keep_alloc SELECT a.id FROM " RANK ".allocation a"
    "  JOIN " RANK
    ".device_summary ds ON ds.device_id = a.device_id AND ds.source_id = a.source_id"
    "  JOIN " RANK ".mem_event pe ON pe.id = ds.peak_allocated_event_id"
    " WHERE (a.alloc_ts_ns < pe.ts_ns OR (a.alloc_ts_ns = pe.ts_ns AND a.alloc_event_id <= "
    "pe.id))"
    "   AND (a.free_ts_ns IS NULL OR a.free_ts_ns > pe.ts_ns"
    "        OR (a.free_ts_ns = pe.ts_ns AND a.free_event_id > pe.id))",
    "INSERT OR IGNORE INTO vr_keep_event"
    " SELECT peak_allocated_event_id FROM " RANK ".device_summary"
    "  WHERE peak_allocated_event_id IS NOT NULL"
    " UNION SELECT peak_allocated_event_id FROM " RANK ".device_source_summary"
    "  WHERE peak_allocated_event_id IS NOT NULL"
    " UNION SELECT alloc_event_id FROM " RANK ".allocation"
    "  WHERE id IN vr_keep_alloc AND alloc_event_id IS NOT NULL"
    " UNION SELECT free_event_id FROM " RANK ".allocation"
    "  WHERE id IN vr_keep_alloc AND free_event_id IS NOT NULL",
    /* each bucket's highest allocated and reserved (the row of the max,
     * SQLite's bare column), the first, the last and the last numbered
     * event of each device and source: a sort a grouping, no window */
    "INSERT OR IGNORE INTO vr_keep_event"
    " WITH span AS (SELECT device_id, source_id, min(ts_ns) AS t0,"
    "                      max(ts_ns) - min(ts_ns) + 1 AS w"
    "                 FROM " RANK ".mem_event GROUP BY device_id, source_id),"
    " b AS MATERIALIZED (SELECT m.id, m.device_id, m.source_id, m.ts_ns, m.seq,"
    "                           m.total_allocated, m.total_reserved,"
    "                           (m.ts_ns - s.t0) * :points / s.w AS k"
    "   FROM " RANK ".mem_event m"
    "   JOIN span s ON s.device_id = m.device_id AND s.source_id = m.source_id)"
    " SELECT id FROM (SELECT id, max(total_allocated) FROM b GROUP BY device_id, source_id, k)"
    " UNION ALL SELECT id FROM (SELECT id, max(total_reserved) FROM b"
    "                            GROUP BY device_id, source_id, k)"
    " UNION ALL SELECT id FROM (SELECT id, min(ts_ns) FROM b GROUP BY device_id, source_id)"
    " UNION ALL SELECT id FROM (SELECT id, max(ts_ns) FROM b GROUP BY device_id, source_id)"
    " UNION ALL SELECT id FROM (SELECT id, max(seq) FROM b GROUP BY device_id, source_id)",
    "INSERT OR IGNORE INTO vr_keep_op"
    " SELECT op_id FROM " RANK ".allocation WHERE id IN vr_keep_alloc AND op_id IS NOT NULL"
    " UNION SELECT op_id FROM " RANK ".mem_event WHERE id IN vr_keep_event AND op_id IS NOT NULL"
    " UNION SELECT peak_allocated_op_id FROM " RANK ".device_summary"
    "  WHERE peak_allocated_op_id IS NOT NULL"
    " UNION SELECT peak_allocated_op_id FROM " RANK ".device_source_summary"
    "  WHERE peak_allocated_op_id IS NOT NULL"
    " UNION SELECT op_id FROM " RANK ".oom_event WHERE op_id IS NOT NULL"
    " UNION SELECT op_id FROM " RANK ".op_weight"
    " UNION SELECT id FROM " RANK ".op WHERE cat = 'user_annotation'"
    " UNION SELECT min(id) FROM " RANK ".op WHERE cat = 'python_function' GROUP BY source_id",
    "INSERT OR IGNORE INTO vr_keep_entry"
    " SELECT max(id) FROM " RANK ".trace_entry_other GROUP BY source_id, device_id",
    /* names by their text, frames by their names and line: shared */
    "INSERT OR IGNORE INTO main.name (text) SELECT text FROM " RANK ".name",
    "CREATE TEMP TABLE vr_map_name AS SELECT o.id AS old, n.id AS new"
    "  FROM " RANK ".name o JOIN main.name n ON n.text = o.text",
    "CREATE UNIQUE INDEX temp.vr_map_name_old ON vr_map_name (old)",
    "INSERT OR IGNORE INTO main.frame (filename_id, line, function_id)"
    " SELECT (SELECT new FROM vr_map_name WHERE old = f.filename_id), f.line,"
    "        (SELECT new FROM vr_map_name WHERE old = f.function_id) FROM " RANK ".frame f",
    "CREATE TEMP TABLE vr_map_frame AS SELECT f.id AS old, n.id AS new FROM " RANK ".frame f"
    "  JOIN main.frame n ON n.line = f.line"
    "   AND n.filename_id = (SELECT new FROM vr_map_name WHERE old = f.filename_id)"
    "   AND n.function_id = (SELECT new FROM vr_map_name WHERE old = f.function_id)",
    "CREATE UNIQUE INDEX temp.vr_map_frame_old ON vr_map_frame (old)",
    "CREATE TEMP TABLE vr_base (space TEXT PRIMARY KEY, base INTEGER NOT NULL)",
};

static const char *const drop_sql[] = {
    "DROP TABLE IF EXISTS temp.vr_keep_alloc", "DROP TABLE IF EXISTS temp.vr_keep_event",
    "DROP TABLE IF EXISTS temp.vr_keep_op",    "DROP TABLE IF EXISTS temp.vr_keep_entry",
    "DROP TABLE IF EXISTS temp.vr_map_name",   "DROP TABLE IF EXISTS temp.vr_map_frame",
    "DROP TABLE IF EXISTS temp.vr_base",
};

/* Prepares, binds the parameters it has of :points and :path, and steps
 * `sql` to its end. */
/* Binds the parameters the merge's statements name: :points, :path
 * and :table (a table of the job: `text`, as :path is). */
static void bind_known(sqlite3_stmt *st, const char *text)
{
    int i = sqlite3_bind_parameter_index(st, ":points");
    if (i > 0)
        sqlite3_bind_int(st, i, VR_MERGE_POINTS);
    if ((i = sqlite3_bind_parameter_index(st, ":path")) > 0)
        sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
    if ((i = sqlite3_bind_parameter_index(st, ":table")) > 0)
        sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
}

static int run(vr_db *db, const char *sql, const char *path, vr_error *err)
{
    sqlite3 *c = vr_db_handle(db);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c, sql, -1, &st, NULL) != SQLITE_OK)
        return vr_db_fail(db, err, "merging");
    bind_known(st, path);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        ;
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "merging");
}

/* The first row's two text columns of `sql` (bound as run() binds), or
 * *found 0. */
static int query_texts(vr_db *db, const char *sql, char *a, char *b, size_t cap, int *found,
                       vr_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(vr_db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return vr_db_fail(db, err, "merging");
    int rc = sqlite3_step(st);
    *found = rc == SQLITE_ROW;
    if (*found) {
        const unsigned char *x = sqlite3_column_text(st, 0), *y = sqlite3_column_text(st, 1);
        snprintf(a, cap, "%s", x ? (const char *)x : "");
        snprintf(b, cap, "%s", y ? (const char *)y : "");
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "merging");
}

static int query_int(vr_db *db, const char *sql, const char *table, int64_t *out,
                     vr_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(vr_db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return vr_db_fail(db, err, "merging");
    bind_known(st, table);
    int rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "merging");
}

/* A rank, or a trace, that the job holds already: refused. */
static int check_new(vr_db *db, const char *path, vr_error *err)
{
    char a[512], b[512];
    int found;
    if (query_texts(db,
                    "SELECT x.rank, (SELECT m.path FROM main.merged_rank m"
                    "                 WHERE ',' || m.ranks || ',' LIKE '%,' || x.rank || ',%')"
                    "  FROM " RANK ".device x WHERE x.rank >= 0"
                    "   AND EXISTS (SELECT 1 FROM main.device d WHERE d.rank = x.rank) LIMIT 1",
                    a, b, sizeof a, &found, err) < 0)
        return -1;
    if (found)
        return vr_fail(err, "%s: rank %s is merged already (from %s); give each rank once", path,
                       a, b);
    if (query_texts(db,
                    "SELECT s.path, m.path FROM " RANK ".source s"
                    "  JOIN main.source m ON m.data_hash = s.data_hash"
                    " WHERE s.data_hash IS NOT NULL LIMIT 1",
                    a, b, sizeof a, &found, err) < 0)
        return -1;
    if (found)
        return vr_fail(err, "%s: its trace %s is merged already (the same content as %s)", path,
                       a, b);
    return 0;
}

static copy_kind kind_of(const char *table, const char **keep)
{
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        if (strcmp(tables[i].table, table) == 0) {
            *keep = tables[i].keep;
            return tables[i].kind;
        }
    *keep = NULL;
    return COPY_ALL;
}

const char *vr_db_merge_space(const char *table, const char *column)
{
    if (strcmp(column, "id") == 0)
        return table;
    for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++)
        if ((!columns[i].table || strcmp(columns[i].table, table) == 0) &&
            strcmp(columns[i].column, column) == 0)
            return columns[i].space;
    return NULL;
}

static int looks_like_id(const char *column)
{
    size_t n = strlen(column);
    return strcmp(column, "id") == 0 || (n > 3 && strcmp(column + n - 3, "_id") == 0);
}

/* The expression of one column of the rank's row, in the job's ids. */
static int column_expr(vr_buf *sql, const char *table, const char *column, copy_kind kind,
                       vr_error *err)
{
    const char *space = kind == COPY_IGNORE ? "" : vr_db_merge_space(table, column);
    if (!space && looks_like_id(column))
        return vr_fail(err, "merge: %s.%s names ids merge does not know (src/db/merge.c)", table,
                       column);
    if (!space || !*space)
        vr_buf_printf(sql, "x.\"%s\"", column);
    else if (strcmp(space, "name") == 0 || strcmp(space, "frame") == 0)
        vr_buf_printf(sql, "(SELECT new FROM temp.vr_map_%s WHERE old = x.\"%s\")", space,
                      column);
    else if (strcmp(table, "device") == 0 && strcmp(column, "scope") == 0)
        vr_buf_printf(sql, "iif(x.scope = 0, 0, x.scope + (SELECT base FROM temp.vr_base"
                           " WHERE space = 'source'))");
    else
        vr_buf_printf(sql, "x.\"%s\" + (SELECT base FROM temp.vr_base WHERE space = '%s')",
                      column, space);
    return 0;
}

/* INSERT INTO main.T (...) SELECT ... FROM vr_rank.T x [WHERE kept]. */
static int copy_table(vr_db *db, const char *table, vr_error *err)
{
    const char *keep;
    copy_kind kind = kind_of(table, &keep);
    if (kind == COPY_SKIP)
        return 0;
    vr_buf cols = VR_BUF_INIT, exprs = VR_BUF_INIT, sql = VR_BUF_INIT;
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(vr_db_handle(db),
                                "SELECT name FROM pragma_table_info(:table, 'main') ORDER BY cid",
                                -1, &st, NULL) == SQLITE_OK
                 ? 0
                 : -1;
    if (rc < 0)
        vr_db_fail(db, err, "merging");
    else
        bind_known(st, table);
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *col = (const char *)sqlite3_column_text(st, 0);
        if (cols.len) {
            vr_buf_puts(&cols, ", ");
            vr_buf_puts(&exprs, ", ");
        }
        vr_buf_printf(&cols, "\"%s\"", col);
        /* a stack's digest is of the rank's frame ids: made unique by its id */
        if (strcmp(table, "stack") == 0 && strcmp(col, "digest") == 0)
            vr_buf_puts(&exprs, "x.digest || '/' || (x.id + (SELECT base FROM temp.vr_base"
                                " WHERE space = 'stack'))");
        else
            rc = column_expr(&exprs, table, col, kind, err);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = vr_db_fail(db, err, "merging: reading a table's columns");
    if (st)
        sqlite3_finalize(st);
    if (rc == 0) {
        vr_buf_clear(&sql);
        vr_buf_printf(&sql, "INSERT %sINTO main.\"%s\" (%s) SELECT %s FROM " RANK ".\"%s\" x",
                      kind == COPY_IGNORE ? "OR IGNORE " : "", table, cols.data, exprs.data,
                      table);
        if (kind == COPY_KEPT)
            vr_buf_printf(&sql, " WHERE x.id IN temp.%s", keep);
        rc = run(db, sql.data, NULL, err);
    }
    vr_buf_free(&cols);
    vr_buf_free(&exprs);
    vr_buf_free(&sql);
    return rc;
}

/* The job's tables (the schema's, in a fixed order), NULL-ended; the
 * caller frees each and the array. */
static char **job_tables(vr_db *db, vr_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(vr_db_handle(db),
                           "SELECT name FROM main.sqlite_schema WHERE type = 'table'"
                           " AND name NOT LIKE 'sqlite%' ORDER BY name",
                           -1, &st, NULL) != SQLITE_OK) {
        vr_db_fail(db, err, "merging");
        return NULL;
    }
    return vr_db_text_list(db, st, "merging: listing the job's tables", err);
}

/* Each space's base: the job's largest id so far. */
static int set_bases(vr_db *db, char **names, vr_error *err)
{
    int rc = 0;
    vr_buf sql = VR_BUF_INIT;
    for (size_t i = 0; rc == 0 && names[i]; i++) {
        int64_t has_id;
        if ((rc = query_int(db,
                            "SELECT count(*) FROM pragma_table_info(:table, 'main')"
                            " WHERE name = 'id'",
                            names[i], &has_id, err)) < 0 ||
            !has_id)
            continue;
        /* the table's name is an identifier here: the schema's own
         * (job_tables), never an input's */
        vr_buf_clear(&sql);
        vr_buf_printf(&sql,
                      "INSERT INTO temp.vr_base VALUES (:table, (SELECT coalesce(max(id), 0)"
                      " FROM main.\"%s\"))",
                      names[i]);
        rc = run(db, sql.data, names[i], err);
    }
    vr_buf_free(&sql);
    return rc;
}

static int copy_rank(vr_db *db, const char *path, vr_merge_counts *counts, vr_error *err)
{
    if (check_new(db, path, err) < 0)
        return -1;
    for (size_t i = 0; i < sizeof keep_sql / sizeof keep_sql[0]; i++)
        if (run(db, keep_sql[i], path, err) < 0)
            return -1;
    char **names = job_tables(db, err);
    if (!names)
        return -1;
    int rc = set_bases(db, names, err);
    for (size_t i = 0; rc == 0 && names[i]; i++)
        rc = copy_table(db, names[i], err);
    vr_db_text_list_free(names);
    if (rc < 0 ||
        query_int(db, "SELECT count(*) FROM " RANK ".source", NULL, &counts->sources, err) < 0 ||
        query_int(db, "SELECT count(*) FROM " RANK ".mem_event", NULL, &counts->mem_events,
                  err) < 0 ||
        query_int(db, "SELECT count(*) FROM temp.vr_keep_event", NULL, &counts->kept_events,
                  err) < 0)
        return -1;
    /* the counts, just read, by the same statements */
    rc = run(db,
             "INSERT INTO main.merged_rank (path, ranks, sources, mem_events, kept_events)"
             " VALUES (:path, (SELECT group_concat(r, ',') FROM (SELECT DISTINCT rank AS r"
             " FROM " RANK ".device WHERE rank >= 0 ORDER BY rank)),"
             " (SELECT count(*) FROM " RANK ".source), (SELECT count(*) FROM " RANK ".mem_event),"
             " (SELECT count(*) FROM temp.vr_keep_event))",
             path, err);
    if (rc == 0)
        rc = run(db,
                 "INSERT OR REPLACE INTO main.analysis_state (id, complete, analysed_at,"
                 " category_rules) SELECT id, complete, analysed_at, category_rules FROM " RANK
                 ".analysis_state",
                 NULL, err);
    return rc;
}

static void drop_temps(vr_db *db)
{
    vr_error ignored = VR_ERROR_INIT;
    for (size_t i = 0; i < sizeof drop_sql / sizeof drop_sql[0]; i++)
        run(db, drop_sql[i], NULL, &ignored);
}

int vr_db_merge_rank(vr_db *job, const char *path, vr_merge_counts *counts, vr_error *err)
{
    *counts = (vr_merge_counts){0};
    if (run(job, "ATTACH DATABASE :path AS " RANK, path, err) < 0) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        return vr_fail(err, "%s: cannot be attached (%s)", path, why);
    }
    /* bounded: the rank's pages, as the job's, in a few MiB of cache */
    run(job, "PRAGMA " RANK ".cache_size = -8192", NULL, err);
    int rc = vr_db_begin(job, err);
    if (rc == 0 && (rc = copy_rank(job, path, counts, err)) == 0)
        rc = vr_db_commit(job, err);
    if (rc < 0) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        vr_db_rollback(job);
        if (strncmp(why, path, strlen(path)) == 0)
            vr_fail(err, "%s", why);
        else
            vr_fail(err, "%s: %s", path, why);
    }
    drop_temps(job);
    vr_error ignored = VR_ERROR_INIT;
    run(job, "DETACH DATABASE " RANK, NULL, &ignored);
    return rc;
}

int vr_db_is_merged(vr_db *db, int *merged, vr_error *err)
{
    int64_t n = 0;
    int rc = query_int(db, "SELECT EXISTS (SELECT 1 FROM merged_rank)", NULL, &n, err);
    *merged = n != 0;
    return rc;
}
