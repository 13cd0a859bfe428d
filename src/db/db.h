/*-*** db.h: the SQLite database every stage reads and writes ***/
/*
 * vr_db wraps one SQLite connection with the schema built by the numbered
 * migrations in schemas/migrations/ (versioned with PRAGMA user_version;
 * older databases are upgraded on open, newer and foreign ones refused).
 * SQL statements
 * live in files under schemas/ as named blocks:
 *
 *     -- name: insert_mem_event
 *     INSERT INTO mem_event (...) VALUES (:source, :device, ...);
 *
 * and are prepared by (file, name); a prepared statement is cached in the
 * vr_db and reused, so hot loops pay for preparation once.
 *
 * Ownership: vr_db_open() returns a connection the caller closes with
 * vr_db_close(), which finalizes every cached statement. Statements
 * returned by vr_db_stmt() belong to the vr_db: reset them, never finalize.
 */
#ifndef VR_DB_H
#define VR_DB_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "resources/resources.h"
#include "util/error.h"

/* The schema's version: the number of the last migration in
 * schemas/migrations/ (PRAGMA user_version), as the build found them. */
#define VR_DB_SCHEMA_VERSION vr_migration_count

typedef struct vr_db vr_db;

/* An SQL function a pass registers for its own statements, its state
 * the user data: scalar (func) or aggregate (step, final). Registered
 * SQLITE_DIRECTONLY: callable only from SQL we prepare, never from a
 * trigger, view or index expression a database file brings (a database
 * passed to `report --db` is input too). */
typedef struct {
    const char *name;
    int nargs;
    void (*func)(sqlite3_context *, int, sqlite3_value **);
    void (*step)(sqlite3_context *, int, sqlite3_value **);
    void (*final)(sqlite3_context *);
} vr_db_function;

/* Registers the n functions with `state` as their user data; state NULL
 * removes them, every one even past a failure, so that none is left
 * pointing at a state gone (a pass removes its functions when it ends,
 * also after a registration that failed part way). -1 with err set when
 * one failed (removing fails only while a statement runs). */
int vr_db_functions(vr_db *db, const vr_db_function *fns, size_t n, void *state, vr_error *err);

/* A database file is input too (`report --db` reads one it did not
 * make), so every connection runs only what vramreport's own statements
 * say: triggers and views in the file never run (reading a view is an
 * error), the schema is not trusted with functions that have side effects,
 * and SQLite's defensive mode is on. vramreport's own schema has one view
 * (trace_entry, for people reading the database with sqlite3) and no
 * trigger; its code reads neither. */

/* How long a connection waits for another process that holds the
 * database (another vramreport importing into it), by default. */
#define VR_DB_WAIT_MS_DEFAULT 60000

typedef struct {
    /* `report`: the file must exist and hold an imported source. An empty
     * file, or a database that holds no source, is refused and left as it
     * was (never given a schema). */
    int need_source;
    /* How long to wait for another process's lock before failing with an
     * error that names the database; negative: VR_DB_WAIT_MS_DEFAULT. */
    int64_t wait_ms;
    /* Said once when the connection starts to wait (NULL: nothing). */
    const vr_warner *on_wait;
} vr_db_open_opts;

/* path NULL: a private temporary database, deleted when closed. A file
 * that does not exist is created (unless opts->need_source); when the
 * open then fails, it is removed. opts NULL: the defaults. */
vr_db *vr_db_open_with(const char *path, const vr_db_open_opts *opts, vr_error *err);
vr_db *vr_db_open(const char *path, vr_error *err);
void vr_db_close(vr_db *db);
/* Closes the connection. A database file this connection created is kept
 * only when it holds an imported source: otherwise (every input failed,
 * the disk filled) the file and its -journal, -wal and -shm are removed,
 * so that no database is left that a later `report` would find empty but
 * fine. A file that existed before is never removed. Returns 1 when the
 * file was removed, else 0. */
int vr_db_close_unless_empty(vr_db *db);
sqlite3 *vr_db_handle(vr_db *db);
const char *vr_db_path(const vr_db *db); /* "(temporary)" for NULL */

int vr_db_begin(vr_db *db, vr_error *err);
int vr_db_commit(vr_db *db, vr_error *err);
void vr_db_rollback(vr_db *db);

/* Runs every statement of the embedded SQL file `file`. */
int vr_db_exec_file(vr_db *db, const char *file, vr_error *err);
/* Runs the named block `name` of `file` (which may hold several
 * statements) once, without binding. */
int vr_db_exec_named(vr_db *db, const char *file, const char *name, vr_error *err);

/* The cached, reset statement for block `name` of `file`; NULL with err set
 * if it does not exist or does not compile. `file` is one of the embedded
 * resources' names (static); `name` is copied, so it may live in a buffer. */
sqlite3_stmt *vr_db_stmt(vr_db *db, const char *file, const char *name, vr_error *err);

/* Binding by the parameter's name (":source"), as the SQL files write
 * them (never by number: the SQL says which value is which). A name the
 * statement lacks is an error, -1 with err naming the statement's block
 * and the name: a mistyped name would otherwise bind nothing and leave
 * NULL there. Text is copied (text NULL binds NULL). */
#define VR_DB_BIND __attribute__((warn_unused_result))
VR_DB_BIND int vr_db_bind_int(sqlite3_stmt *st, const char *name, int64_t v, vr_error *err);
VR_DB_BIND int vr_db_bind_opt_int(sqlite3_stmt *st, const char *name, int has, int64_t v,
                                  vr_error *err); /* NULL unless has */
VR_DB_BIND int vr_db_bind_double(sqlite3_stmt *st, const char *name, double v, vr_error *err);
VR_DB_BIND int vr_db_bind_text(sqlite3_stmt *st, const char *name, const char *text, size_t len,
                               vr_error *err);
VR_DB_BIND int vr_db_bind_null(sqlite3_stmt *st, const char *name, vr_error *err);
/* The index of parameter `name` (from 1), or -1 with err set as above:
 * for a caller that binds one statement many times and looks its
 * parameters up once. */
VR_DB_BIND int vr_db_param(sqlite3_stmt *st, const char *name, vr_error *err);

/* Steps a statement that returns no rows, then resets it. */
int vr_db_step_done(vr_db *db, sqlite3_stmt *st, vr_error *err);

/* Steps st to its end and finalizes it: its first column's texts as a
 * NULL-ended array the caller frees with vr_db_text_list_free(), or NULL
 * with err ("PATH: what: SQLite's message"). */
char **vr_db_text_list(vr_db *db, sqlite3_stmt *st, const char *what, vr_error *err);
void vr_db_text_list_free(char **list);

/* Id of `text` in the name table, inserting it if new. Kept in a cache
 * bounded in count and bytes, so repeated names cost a hash lookup and
 * distinct ones cost no unbounded memory. Returns -1 on error. */
int64_t vr_db_intern(vr_db *db, const char *text, size_t len, vr_error *err);
/* The id of `text` when the cache holds it, else 0; never asks SQLite
 * (a reader may call it while a writer thread has the connection). */
int64_t vr_db_intern_cached(const vr_db *db, const char *text, size_t len);
/* Bytes of text the name cache holds (bounded; for tests and benchmarks). */
size_t vr_db_name_cache_bytes(const vr_db *db);

/* The text of block `name` of the embedded SQL file `file` (not
 * NUL-terminated: *len bytes), or NULL when there is none. */
const char *vr_db_sql_block(const char *file, const char *name, size_t *len);

/* Formats the connection's last error as "what: sqlite message". */
int vr_db_fail(vr_db *db, vr_error *err, const char *what);

#endif
