#include "db/db.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resources/resources.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/timing.h"

typedef struct cached_stmt {
    const char *file; /* a resource name: static */
    char *name;       /* a copy: callers may build names in buffers */
    sqlite3_stmt *stmt;
    struct cached_stmt *next;
} cached_stmt;

/* Open-addressing map from name text to id. It only speeds lookups (the
 * names live in SQLite), so it is bounded in count and in bytes: past
 * either bound the database itself is asked, and hostile inputs with
 * millions of distinct or huge names cannot grow memory without limit.
 * Real traces have a few thousand names of under 1 KiB. */
#define MAX_NAMES (1u << 20)
#define MAX_NAME_BYTES ((size_t)32 << 20)
typedef struct {
    uint64_t hash;
    char *text;
    size_t len;
    int64_t id;
} name_slot;

struct vr_db {
    sqlite3 *conn;
    char *path;
    cached_stmt *stmts;
    name_slot *names;
    size_t names_cap, names_len;
    size_t names_bytes; /* text held by the cache */
    int in_tx;
    int created;       /* this connection made the file */
    int made_schema;   /* ... and wrote its schema into it */
    dev_t dev;         /* the file opened (a kept database): a removal */
    ino_t ino;         /* or a commit checks it is still the one */
    int data_version;  /* PRAGMA data_version after its own schema */
    int64_t wait_ms;   /* how long to wait for another's lock */
    double wait_since; /* when the present wait began */
    int said_wait;
    const vr_warner *on_wait;
};

/* SQLite gave up waiting for another process's lock (wait_for_lock): one
 * error that says so, wherever the statement was. 0 when it did not. */
static int busy_fail(vr_db *db, vr_error *err)
{
    if ((sqlite3_errcode(db->conn) & 0xff) != SQLITE_BUSY)
        return 0;
    return vr_fail_code(err, VR_ERR_DATABASE,
                        "%s: another process holds the database (another vramreport "
                        "importing into it?); gave up after waiting %lld s "
                        "(VRAMREPORT_DB_TIMEOUT sets how long)",
                        db->path, (long long)(db->wait_ms / 1000));
}

int vr_db_fail(vr_db *db, vr_error *err, const char *what)
{
    if (busy_fail(db, err) < 0)
        return -1;
    return vr_fail_code(err, VR_ERR_DATABASE, "%s: %s: %s", db->path, what,
                        sqlite3_errmsg(db->conn));
}

int vr_db_functions(vr_db *db, const vr_db_function *fns, size_t n, void *state, vr_error *err)
{
    int failed = 0;
    for (size_t i = 0; i < n && !(failed && state); i++) {
        const vr_db_function *f = &fns[i];
        failed |=
            sqlite3_create_function(db->conn, f->name, f->nargs, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                    state, state ? f->func : NULL, state ? f->step : NULL,
                                    state ? f->final : NULL) != SQLITE_OK;
    }
    return failed ? vr_db_fail(db, err,
                               state ? "registering the analysis's functions"
                                     : "removing the analysis's functions")
                  : 0;
}

static int exec_sql(vr_db *db, const char *sql, vr_error *err, const char *what)
{
    char *msg = NULL;
    if (sqlite3_exec(db->conn, sql, NULL, NULL, &msg) != SQLITE_OK) {
        if (busy_fail(db, err) == 0)
            vr_fail_code(err, VR_ERR_DATABASE, "%s: %s: %s", db->path, what, msg ? msg : "error");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* PRAGMA application_id of our databases from version 2 on ("vrmr"). */
#define APPLICATION_ID 1987210610

typedef struct {
    int version; /* PRAGMA user_version */
    int application_id;
    int objects; /* entries in sqlite_schema */
    int ours;    /* the foundation's tables are there */
} db_identity;

static int query_int(vr_db *db, const char *sql, int *out, vr_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL) != SQLITE_OK)
        return vr_db_fail(db, err, "not a readable SQLite database");
    int rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(db, err, "not a readable SQLite database");
    return 0;
}

static int identify(vr_db *db, db_identity *id, vr_error *err)
{
    return query_int(db, "PRAGMA user_version", &id->version, err) < 0 ||
                   query_int(db, "PRAGMA application_id", &id->application_id, err) < 0 ||
                   query_int(db, "SELECT count(*) FROM sqlite_schema", &id->objects, err) < 0 ||
                   query_int(db,
                             "SELECT count(*) = 3 FROM sqlite_schema WHERE type = 'table' "
                             "AND name IN ('source', 'device', 'mem_event')",
                             &id->ours, err) < 0
               ? -1
               : 0;
}

/* A database is ours when it is new and empty, or carries our marks:
 * version 1 (before application_id) by its tables, later ones by the id. */
static int check_identity(vr_db *db, const db_identity *id, vr_error *err)
{
    if (id->version > VR_DB_SCHEMA_VERSION)
        return vr_fail_code(err, VR_ERR_DATABASE,
                            "%s: written by a newer vramreport (schema %d; this one "
                            "reads schema %d): upgrade vramreport",
                            db->path, id->version, VR_DB_SCHEMA_VERSION);
    int fresh = id->version == 0 && id->objects == 0 && id->application_id == 0;
    int v1 = id->version == 1 && id->ours && id->application_id == 0;
    int later = id->version >= 2 && id->ours && id->application_id == APPLICATION_ID;
    if (!fresh && !v1 && !later)
        return vr_fail_code(err, VR_ERR_DATABASE,
                            "%s: is an SQLite database but not a vramreport one; "
                            "give a new file to --db",
                            db->path);
    return 0;
}

static int migrate(vr_db *db, int from, vr_error *err)
{
    char pragma[48];
    for (int version = from > 0 ? from + 1 : 1; version <= VR_DB_SCHEMA_VERSION; version++) {
        snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", version);
        if (vr_db_exec_file(db, vr_migrations[version - 1], err) < 0 ||
            exec_sql(db, pragma, err, "setting the schema version") < 0)
            return -1;
    }
    return 0;
}

/* `report` reads what imports wrote: a database that holds none (an
 * empty file, or one whose every import failed) would report "OK" on no
 * evidence at all, so it is refused before anything is written to it. */
static int check_has_source(vr_db *db, const db_identity *id, vr_error *err)
{
    int any = 0;
    if (id->objects > 0 && query_int(db, "SELECT EXISTS (SELECT 1 FROM source)", &any, err) < 0)
        return -1;
    if (any)
        return 0;
    return vr_fail_code(err, VR_ERR_DATABASE,
                        "%s: holds no imported source, so there is nothing to report "
                        "(import into it first: vramreport import FILE... --db %s)",
                        db->path, db->path);
}

/* Brings the database to the current schema in one transaction: a failed
 * upgrade leaves it as it was. */
static int ensure_schema(vr_db *db, int need_source, vr_error *err)
{
    db_identity id;
    if (identify(db, &id, err) < 0 || check_identity(db, &id, err) < 0 ||
        (need_source && check_has_source(db, &id, err) < 0))
        return -1;
    if (id.version == VR_DB_SCHEMA_VERSION)
        return 0;
    /* Identified again holding the write lock: another vramreport opening
     * the same new database may have migrated it while this one waited. */
    if (vr_db_begin(db, err) < 0 || identify(db, &id, err) < 0 ||
        check_identity(db, &id, err) < 0 || migrate(db, id.version, err) < 0 ||
        vr_db_commit(db, err) < 0) {
        vr_db_rollback(db);
        return -1;
    }
    db->made_schema = db->created && id.objects == 0;
    return query_int(db, "PRAGMA data_version", &db->data_version, err);
}

/* SQLite's busy handler: called while another connection holds the lock
 * this one needs, `tries` counting from 0 for each lock. Waits up to
 * wait_ms for each, saying once that it waits. */
static int wait_for_lock(void *ud, int tries)
{
    vr_db *db = ud;
    double now = vr_now();
    if (tries == 0)
        db->wait_since = now;
    int64_t waited = (int64_t)((now - db->wait_since) * 1000);
    if (waited >= db->wait_ms)
        return 0;
    if (!db->said_wait && db->on_wait) {
        db->said_wait = 1;
        vr_warn(db->on_wait, "waiting for another vramreport holding %s (for up to %lld s)",
                db->path, (long long)(db->wait_ms / 1000));
    }
    int64_t nap = db->wait_ms - waited;
    sqlite3_sleep((int)(nap < 50 ? nap : 50));
    return 1;
}

/* What a database file brings never runs (db.h): its triggers, its
 * views, functions with side effects in its schema; and no statement may
 * change the schema's bookkeeping behind SQLite's back. */
static int distrust_the_file(vr_db *db, vr_error *err)
{
    static const int off[] = {SQLITE_DBCONFIG_ENABLE_TRIGGER, SQLITE_DBCONFIG_ENABLE_VIEW,
                              SQLITE_DBCONFIG_TRUSTED_SCHEMA};
    int failed = 0;
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        failed |= sqlite3_db_config(db->conn, off[i], 0, NULL) != SQLITE_OK;
    failed |= sqlite3_db_config(db->conn, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL) != SQLITE_OK;
    return failed ? vr_db_fail(db, err, "cannot configure") : 0;
}

/* O_EXCL: this process made the file, so it may remove it again; a file
 * that was there before (or that another process made first) is never
 * removed. Mode as SQLite would give it. */
static int create_file(vr_db *db, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return 0;
    struct stat st;
    if (fstat(fd, &st) == 0)
        db->dev = st.st_dev, db->ino = st.st_ino;
    close(fd);
    return 1;
}

/* Whether the path still names the file this connection opened. */
static int same_file(const vr_db *db)
{
    struct stat st;
    return stat(db->path, &st) == 0 && st.st_dev == db->dev && st.st_ino == db->ino;
}

static void remove_files(const char *path)
{
    static const char *const suffixes[] = {"", "-journal", "-wal", "-shm"};
    vr_buf name = VR_BUF_INIT;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        vr_buf_clear(&name);
        vr_buf_printf(&name, "%s%s", path, suffixes[i]);
        unlink(name.data);
    }
    vr_buf_free(&name);
}

/* Whether the file holds nothing worth keeping: no object at all, or our
 * source table with no row. Asked holding the exclusive lock, so that no
 * other connection is between its import and its commit. 1: removed. */
static int remove_if_empty(vr_db *db)
{
    struct stat st;
    if (!db->conn || !db->ino) { /* a file made, that SQLite could not open */
        if (db->ino && same_file(db) && stat(db->path, &st) == 0 && st.st_size == 0)
            unlink(db->path);
        return 0;
    }
    vr_db_rollback(db);
    if (sqlite3_exec(db->conn, "BEGIN EXCLUSIVE", NULL, NULL, NULL) != SQLITE_OK)
        return 0;
    vr_error err = VR_ERROR_INIT;
    int objects = 1, has_source = 0, sources = 1;
    int empty = query_int(db, "SELECT count(*) FROM sqlite_schema", &objects, &err) == 0 &&
                query_int(db,
                          "SELECT count(*) FROM sqlite_schema WHERE type = 'table' "
                          "AND name = 'source'",
                          &has_source, &err) == 0 &&
                (!has_source ||
                 query_int(db, "SELECT EXISTS (SELECT 1 FROM source)", &sources, &err) == 0) &&
                (objects == 0 || (has_source && sources == 0));
    /* The schema must be this connection's and nothing committed since by
     * another: a second vramreport may have opened the new file to import
     * into it (and its commit checks the file is still there). */
    int version = db->data_version;
    empty = empty && same_file(db) &&
            (objects == 0 ||
             (db->made_schema && query_int(db, "PRAGMA data_version", &version, &err) == 0 &&
              version == db->data_version));
    if (empty)
        remove_files(db->path);
    sqlite3_exec(db->conn, "ROLLBACK", NULL, NULL, NULL);
    return empty;
}

static void open_failed(vr_db *db)
{
    if (db->created)
        remove_if_empty(db);
    vr_db_close(db);
}

vr_db *vr_db_open_with(const char *path, const vr_db_open_opts *opts, vr_error *err)
{
    vr_db *db = vr_xcalloc(1, sizeof *db);
    int need_source = opts && opts->need_source;
    db->path = vr_xstrdup(path ? path : "(temporary database)");
    db->wait_ms = opts && opts->wait_ms >= 0 ? opts->wait_ms : VR_DB_WAIT_MS_DEFAULT;
    db->on_wait = opts ? opts->on_wait : NULL;
    /* Each connection is used by one thread; memory statistics would cost a
     * global mutex on every allocation. Fails harmlessly (SQLITE_MISUSE)
     * once SQLite is initialised. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    int flags =
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (need_source ? 0 : SQLITE_OPEN_CREATE);
    db->created = path && !need_source && create_file(db, path);
    if (sqlite3_open_v2(path ? path : "", &db->conn, flags, NULL) != SQLITE_OK) {
        vr_db_fail(db, err, "cannot open");
        open_failed(db);
        return NULL;
    }
    struct stat st;
    if (path && !db->created && stat(path, &st) == 0)
        db->dev = st.st_dev, db->ino = st.st_ino;
    sqlite3_busy_handler(db->conn, wait_for_lock, db);
    /* Bounded memory whatever the trace size: SQLite's page cache and its
     * sorter (an ORDER BY, a CREATE INDEX) are the large consumers, and
     * cache_size bounds both: a sort keeps that much in memory before it
     * spills to a temporary file, and its records cost about twice their
     * size on the heap. At 64 MiB a 1.1 GB trace peaked at 203 MiB (the
     * phases pass's sort of every operator); at 16 MiB at 95 MiB, for the
     * same processor time (the pages spilled come back from the kernel's
     * cache). A temporary database needs no durability; a kept one keeps
     * its rollback journal so a failed import leaves it as it was. */
    const char *pragmas =
        path ? "PRAGMA page_size=16384; PRAGMA cache_size=-16384; PRAGMA synchronous=NORMAL;"
             : "PRAGMA page_size=16384; PRAGMA cache_size=-16384; PRAGMA synchronous=OFF;"
               "PRAGMA journal_mode=MEMORY;";
    if (distrust_the_file(db, err) < 0 || exec_sql(db, pragmas, err, "cannot configure") < 0 ||
        ensure_schema(db, need_source, err) < 0) {
        open_failed(db);
        return NULL;
    }
    return db;
}

vr_db *vr_db_open(const char *path, vr_error *err)
{
    return vr_db_open_with(path, NULL, err);
}

void vr_db_close(vr_db *db)
{
    if (!db)
        return;
    while (db->stmts) {
        cached_stmt *next = db->stmts->next;
        sqlite3_finalize(db->stmts->stmt);
        free(db->stmts->name);
        free(db->stmts);
        db->stmts = next;
    }
    for (size_t i = 0; i < db->names_cap; i++)
        free(db->names[i].text);
    free(db->names);
    sqlite3_close(db->conn);
    free(db->path);
    free(db);
}

int vr_db_close_unless_empty(vr_db *db)
{
    int removed = db && db->created && remove_if_empty(db);
    vr_db_close(db);
    return removed;
}

sqlite3 *vr_db_handle(vr_db *db)
{
    return db->conn;
}
const char *vr_db_path(const vr_db *db)
{
    return db->path;
}

int vr_db_begin(vr_db *db, vr_error *err)
{
    /* IMMEDIATE: the write lock is taken (or waited for) here. A deferred
     * transaction that read first could not wait for it later: SQLite
     * refuses at once rather than risk a deadlock. */
    if (exec_sql(db, "BEGIN IMMEDIATE", err, "cannot begin a transaction") < 0)
        return -1;
    db->in_tx = 1;
    return 0;
}

/* A commit that fails (the disk full) is undone: the transaction's work is
 * lost either way, and the database stays as it was before it. */
int vr_db_commit(vr_db *db, vr_error *err)
{
    if (exec_sql(db, "COMMIT", err, "cannot commit") < 0) {
        vr_db_rollback(db);
        return -1;
    }
    db->in_tx = 0;
    /* A kept database removed or replaced under this run (by another
     * vramreport that made the new file and whose import failed, or by
     * hand): what was committed went to no file. Said, never lost quietly. */
    if (db->ino && !same_file(db))
        return vr_fail_code(err, VR_ERR_DATABASE,
                            "%s: the database file was removed or replaced while this run "
                            "wrote to it (another vramreport's import into the same new "
                            "database failed?): import again",
                            db->path);
    return 0;
}

/* The name cache may hold ids inserted by the transaction being undone. */
static void forget_names(vr_db *db)
{
    for (size_t i = 0; i < db->names_cap; i++) {
        free(db->names[i].text);
        db->names[i].text = NULL;
    }
    db->names_len = 0;
    db->names_bytes = 0;
}

void vr_db_rollback(vr_db *db)
{
    if (!db->in_tx)
        return;
    /* SQLite may have rolled back already (after an I/O error). */
    if (!sqlite3_get_autocommit(db->conn))
        sqlite3_exec(db->conn, "ROLLBACK", NULL, NULL, NULL);
    db->in_tx = 0;
    forget_names(db);
}

int vr_db_exec_file(vr_db *db, const char *file, vr_error *err)
{
    const char *sql = vr_resource_get(file, NULL);
    if (!sql)
        return vr_fail_code(err, VR_ERR_DATABASE, "internal: no embedded SQL file %s", file);
    return exec_sql(db, sql, err, file);
}

/* Finds "-- name: NAME" in `sql` and returns the block from that line up
 * to the next "-- name:" line (or the end): a statement prepared from it
 * names itself in its text (sqlite3_sql), which a bind's error quotes. */
/* The next "-- name: " at or after p, as strstr(p, "-- name: ") finds it.
 * Not strstr itself: AddressSanitizer's strstr measures the whole rest of
 * the file on every call, which made each lookup quadratic in the file's
 * blocks and was most of a small run's time in the sanitizer build;
 * strchr and strncmp read only up to what they find. */
static const char *next_name_line(const char *p)
{
    for (p = strchr(p, '-'); p; p = strchr(p + 1, '-'))
        if (strncmp(p, "-- name: ", 9) == 0)
            return p;
    return NULL;
}

static const char *find_block(const char *sql, const char *name, size_t *len)
{
    size_t nlen = strlen(name);
    for (const char *p = next_name_line(sql); p; p = next_name_line(p + 1)) {
        const char *n = p + 9;
        if (strncmp(n, name, nlen) == 0 &&
            (n[nlen] == '\n' || n[nlen] == '\r' || n[nlen] == ' ')) {
            const char *body = strchr(n, '\n');
            if (!body)
                return NULL;
            const char *next = next_name_line(body);
            *len = next ? (size_t)(next - p) : strlen(p);
            return p;
        }
    }
    return NULL;
}

const char *vr_db_sql_block(const char *file, const char *name, size_t *len)
{
    const char *sql = vr_resource_get(file, NULL);
    return sql ? find_block(sql, name, len) : NULL;
}

int vr_db_exec_named(vr_db *db, const char *file, const char *name, vr_error *err)
{
    const char *sql = vr_resource_get(file, NULL);
    size_t len;
    const char *block = sql ? find_block(sql, name, &len) : NULL;
    if (!block)
        return vr_fail_code(err, VR_ERR_DATABASE, "internal: no SQL block %s in %s", name, file);
    char *copy = vr_xstrndup(block, len);
    int rc = exec_sql(db, copy, err, name);
    free(copy);
    return rc;
}

/* Our statements compile against our schema; one that does not is ours
 * to fix, unless the database put a view of its own where a table of ours
 * was (views never run: distrust_the_file). */
static void not_preparable(vr_db *db, const char *file, const char *name, vr_error *err)
{
    char why[256];
    snprintf(why, sizeof why, "%s", sqlite3_errmsg(db->conn));
    int foreign_views = 0;
    vr_error ignored = VR_ERROR_INIT;
    query_int(db,
              "SELECT count(*) FROM sqlite_schema WHERE type = 'view' "
              "AND name <> 'trace_entry'",
              &foreign_views, &ignored);
    if (foreign_views)
        vr_fail_code(err, VR_ERR_DATABASE,
                     "%s: cannot be read: %s (it holds views vramreport did not make, and "
                     "vramreport runs none of them; import into a new --db)",
                     db->path, why);
    else
        vr_fail_code(err, VR_ERR_DATABASE, "internal: SQL %s in %s: %s", name, file, why);
}

sqlite3_stmt *vr_db_stmt(vr_db *db, const char *file, const char *name, vr_error *err)
{
    for (cached_stmt *c = db->stmts; c; c = c->next)
        if (strcmp(c->name, name) == 0 && strcmp(c->file, file) == 0)
            return c->stmt;
    const char *sql = vr_resource_get(file, NULL);
    size_t len;
    const char *block = sql ? find_block(sql, name, &len) : NULL;
    if (!block) {
        vr_fail_code(err, VR_ERR_DATABASE, "internal: no SQL block %s in %s", name, file);
        return NULL;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v3(db->conn, block, (int)len, SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
        SQLITE_OK) {
        /* Preparing reads the schema, which may wait for a lock too. */
        if (busy_fail(db, err) == 0)
            not_preparable(db, file, name, err);
        return NULL;
    }
    cached_stmt *c = vr_xmalloc(sizeof *c);
    c->file = file;
    c->name = vr_xstrdup(name);
    c->stmt = st;
    c->next = db->stmts;
    db->stmts = c;
    return st;
}

/* The statement's block, from the "-- name: NAME" line its text starts
 * with (vr_db_stmt prepares from that line), else its first words. */
static int no_param(sqlite3_stmt *st, const char *name, vr_error *err)
{
    const char *sql = sqlite3_sql(st);
    sql = sql ? sql : "";
    if (strncmp(sql, "-- name: ", 9) == 0)
        sql += 9;
    int n = (int)strcspn(sql, "\r\n");
    return vr_fail_code(err, VR_ERR_DATABASE, "internal: SQL %.*s%s has no parameter %s",
                        n > 60 ? 60 : n, sql, n > 60 ? "..." : "", name);
}

int vr_db_param(sqlite3_stmt *st, const char *name, vr_error *err)
{
    int i = sqlite3_bind_parameter_index(st, name);
    return i > 0 ? i : no_param(st, name, err);
}

/* A bind SQLite refused (out of memory, a text over its limit). */
static int bound(sqlite3_stmt *st, const char *name, int rc, vr_error *err)
{
    if (rc == SQLITE_OK)
        return 0;
    return vr_fail_code(err, VR_ERR_DATABASE, "binding %s: %s", name,
                        sqlite3_errmsg(sqlite3_db_handle(st)));
}

int vr_db_bind_int(sqlite3_stmt *st, const char *name, int64_t v, vr_error *err)
{
    int i = vr_db_param(st, name, err);
    return i < 0 ? -1 : bound(st, name, sqlite3_bind_int64(st, i, v), err);
}

int vr_db_bind_opt_int(sqlite3_stmt *st, const char *name, int has, int64_t v, vr_error *err)
{
    return has ? vr_db_bind_int(st, name, v, err) : vr_db_bind_null(st, name, err);
}

int vr_db_bind_double(sqlite3_stmt *st, const char *name, double v, vr_error *err)
{
    int i = vr_db_param(st, name, err);
    return i < 0 ? -1 : bound(st, name, sqlite3_bind_double(st, i, v), err);
}

int vr_db_bind_text(sqlite3_stmt *st, const char *name, const char *text, size_t len,
                    vr_error *err)
{
    int i = vr_db_param(st, name, err);
    return i < 0 ? -1
                 : bound(st, name,
                         sqlite3_bind_text(st, i, text, len > INT32_MAX ? INT32_MAX : (int)len,
                                           SQLITE_TRANSIENT),
                         err);
}

int vr_db_bind_null(sqlite3_stmt *st, const char *name, vr_error *err)
{
    int i = vr_db_param(st, name, err);
    return i < 0 ? -1 : bound(st, name, sqlite3_bind_null(st, i), err);
}

int vr_db_step_done(vr_db *db, sqlite3_stmt *st, vr_error *err)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return vr_db_fail(db, err, "write failed");
    return 0;
}

static uint64_t hash_text(const char *s, size_t n)
{
    vr_hash h;
    vr_hash_init(&h, 0x5eed);
    vr_hash_update(&h, s, n);
    return vr_hash_digest(&h);
}

static void names_grow(vr_db *db)
{
    size_t cap = db->names_cap ? db->names_cap * 2 : 4096;
    name_slot *slots = vr_xcalloc(cap, sizeof *slots);
    for (size_t i = 0; i < db->names_cap; i++) {
        name_slot *o = &db->names[i];
        if (!o->text)
            continue;
        size_t j = o->hash & (cap - 1);
        while (slots[j].text)
            j = (j + 1) & (cap - 1);
        slots[j] = *o;
    }
    free(db->names);
    db->names = slots;
    db->names_cap = cap;
}

char **vr_db_text_list(vr_db *db, sqlite3_stmt *st, const char *what, vr_error *err)
{
    /* out of memory exits (util/alloc.h), as everywhere */
    size_t n = 0, cap = 0;
    char **list = NULL;
    vr_xgrow(&list, &cap, 1, sizeof *list, 64);
    list[0] = NULL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *text = sqlite3_column_text(st, 0);
        vr_xgrow(&list, &cap, n + 2, sizeof *list, 64);
        list[n] = vr_xstrdup(text ? (const char *)text : "");
        list[++n] = NULL;
    }
    if (rc != SQLITE_DONE) {
        vr_db_fail(db, err, what);
        vr_db_text_list_free(list);
        list = NULL;
    }
    sqlite3_finalize(st);
    return list;
}

void vr_db_text_list_free(char **list)
{
    for (size_t i = 0; list && list[i]; i++)
        free(list[i]);
    free(list);
}

static int64_t intern_in_db(vr_db *db, const char *text, size_t len, vr_error *err)
{
    sqlite3_stmt *ins = vr_db_stmt(db, "schemas/import.sql", "insert_name", err);
    sqlite3_stmt *sel = vr_db_stmt(db, "schemas/import.sql", "select_name", err);
    if (!ins || !sel)
        return -1;
    if (vr_db_bind_text(ins, ":text", text, len, err) < 0 || vr_db_step_done(db, ins, err) < 0 ||
        vr_db_bind_text(sel, ":text", text, len, err) < 0)
        return -1;
    int rc = sqlite3_step(sel);
    int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(sel, 0) : -1;
    sqlite3_reset(sel);
    /* No row after an insert that succeeded (a trigger or a constraint of
     * a foreign schema ignored it) is no SQLite error: SQLite's message
     * would be "not an error". */
    if (rc == SQLITE_DONE)
        vr_fail_code(err, VR_ERR_DATABASE,
                     "%s: interning a name: the name table kept no row for it (is this "
                     "vramreport's schema?)",
                     db->path);
    else if (id < 0)
        vr_db_fail(db, err, "interning a name");
    return id;
}

static int64_t cached_name(const vr_db *db, uint64_t h, const char *text, size_t len)
{
    if (db->names_cap) {
        size_t j = h & (db->names_cap - 1);
        for (; db->names[j].text; j = (j + 1) & (db->names_cap - 1)) {
            const name_slot *s = &db->names[j];
            if (s->hash == h && s->len == len && memcmp(s->text, text, len) == 0)
                return s->id;
        }
    }
    return 0;
}

int64_t vr_db_intern_cached(const vr_db *db, const char *text, size_t len)
{
    return cached_name(db, hash_text(text, len), text, len);
}

int64_t vr_db_intern(vr_db *db, const char *text, size_t len, vr_error *err)
{
    uint64_t h = hash_text(text, len);
    int64_t known = cached_name(db, h, text, len);
    if (known)
        return known;
    int64_t id = intern_in_db(db, text, len, err);
    if (id < 0 || db->names_len >= MAX_NAMES || len > MAX_NAME_BYTES - db->names_bytes)
        return id;
    if ((db->names_len + 1) * 2 > db->names_cap)
        names_grow(db);
    size_t j = h & (db->names_cap - 1);
    while (db->names[j].text)
        j = (j + 1) & (db->names_cap - 1);
    db->names[j] = (name_slot){h, vr_xstrndup(text, len), len, id};
    db->names_len++;
    db->names_bytes += len;
    return id;
}

size_t vr_db_name_cache_bytes(const vr_db *db)
{
    return db->names_bytes;
}
