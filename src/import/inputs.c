/* Many inputs in one run: files, folders, stdin. Each input is imported
 * alone (its own transaction, import.c; with --jobs the files are read
 * ahead on workers, staging.h, and still taken in order here); this file
 * decides what a refusal means (a skip or a failure), tells the caller,
 * and records it so the report can list every input it did not use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/walk.h"
#include "import/import.h"
#include "import/reader.h"
#include "import/staging.h"
#include "util/alloc.h"

/* --jobs: what the walk met, in order, to be said and imported in that
 * order once the workers have the files. */
typedef enum { PLAN_FILE, PLAN_SKIPPED, PLAN_FAILED } plan_kind;

typedef struct {
    plan_kind kind;
    int in_folder;
    char *what;   /* PLAN_SKIPPED: what the file is */
    vr_error why; /* PLAN_FAILED: why (a folder that cannot be walked or is empty) */
} plan_entry;

typedef struct {
    plan_entry *entries;
    char **paths;
    size_t n, cap;
} plan;

typedef struct {
    vr_db *db;
    const vr_import_opts *opts;
    vr_input_fn on_input;
    void *ud;
    vr_inputs_counts *counts;
    vr_error *err;       /* set only for a fatal error */
    plan *plan;          /* --jobs: the walk only plans */
    vr_stage_pool *pool; /* --jobs: the files' workers */
    char **files;        /* --jobs: the plan's files the workers take, else NULL */
    size_t at;           /* --jobs: the plan's entry being imported */
} inputs_run;

/* input_issue: one row per input not used, for the report. */
static int record_issue(inputs_run *run, const char *path, const char *outcome, const char *what,
                        const char *message)
{
    if (!run->opts || !run->opts->record_issues)
        return 0;
    sqlite3_stmt *st = vr_db_stmt(run->db, "schemas/import.sql", "insert_input_issue", run->err);
    vr_error *err = run->err;
    if (!st || vr_db_bind_text(st, ":path", path, path ? strlen(path) : 0, err) < 0 ||
        vr_db_bind_text(st, ":outcome", outcome, strlen(outcome), err) < 0 ||
        (what ? vr_db_bind_text(st, ":what", what, strlen(what), err)
              : vr_db_bind_null(st, ":what", err)) < 0 ||
        (message ? vr_db_bind_text(st, ":message", message, strlen(message), err)
                 : vr_db_bind_null(st, ":message", err)) < 0)
        return -1;
    return vr_db_step_done(run->db, st, err);
}

static int skipped(inputs_run *run, const char *path, const char *what, const char *message)
{
    run->counts->skipped++;
    run->on_input(run->ud, path, VR_INPUT_SKIPPED, what);
    return record_issue(run, path, "skipped", what, message);
}

/* The message without the path it starts with: the report shows both. */
static const char *after_path(const char *msg, const char *path)
{
    size_t n = strlen(path);
    return strncmp(msg, path, n) == 0 && strncmp(msg + n, ": ", 2) == 0 ? msg + n + 2 : msg;
}

static int failed(inputs_run *run, const char *path, const vr_error *why)
{
    run->counts->failed++;
    run->on_input(run->ud, path, VR_INPUT_FAILED, why->msg);
    return record_issue(run, path, "failed", NULL, after_path(why->msg, path));
}

static void plan_add(plan *pl, plan_kind kind, const char *path, int in_folder, const char *what,
                     const vr_error *why)
{
    vr_xgrow(&pl->entries, &pl->cap, pl->n + 1, sizeof *pl->entries, 64);
    size_t cap = pl->cap;
    pl->paths = vr_xrealloc(pl->paths, cap * sizeof *pl->paths);
    plan_entry *e = &pl->entries[pl->n];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->in_folder = in_folder;
    e->what = what ? vr_xstrdup(what) : NULL;
    if (why)
        e->why = *why;
    pl->paths[pl->n++] = vr_xstrdup(path);
}

/* The file through the workers (--jobs) or here. */
static int import_one(inputs_run *run, const char *path, vr_import_result *res, vr_error *why)
{
    if (run->pool && run->files[run->at])
        return vr_stage_pool_import(run->pool, run->at, run->db, res, why);
    return vr_import_file(run->db, path, run->opts, res, why);
}

/* One file. A database error stops the run; anything else is the input's. */
static int one_input(inputs_run *run, const char *path, int in_folder)
{
    if (run->plan) {
        plan_add(run->plan, PLAN_FILE, path, in_folder, NULL, NULL);
        return 0;
    }
    vr_import_result res;
    vr_error why = VR_ERROR_INIT;
    if (import_one(run, path, &res, &why) < 0) {
        if (why.code == VR_ERR_DATABASE) {
            *run->err = why;
            return -1;
        }
        int not_ours = why.code == VR_ERR_NOT_RECOGNISED || why.code == VR_ERR_NOT_SUPPORTED;
        /* Our own report is never an input, named or found: skipped. */
        int own = res.looks_like && strcmp(res.looks_like, VR_READER_OWN_REPORT) == 0;
        if (!own && (!in_folder || !not_ours))
            return failed(run, path, &why);
        char what[256];
        snprintf(what, sizeof what, "%s%s", res.looks_like ? res.looks_like : "not read",
                 why.code == VR_ERR_NOT_SUPPORTED ? ", not read yet" : "");
        return skipped(run, path, what, after_path(why.msg, path));
    }
    if (res.status == VR_ALREADY_IMPORTED) {
        char id[32];
        snprintf(id, sizeof id, "%lld", (long long)res.source_id);
        run->counts->already++;
        run->on_input(run->ud, path, VR_INPUT_ALREADY, id);
        return 0;
    }
    run->counts->imported++;
    run->on_input(run->ud, path, VR_INPUT_IMPORTED, NULL);
    return 0;
}

static int on_entry(void *ud, const char *path, const char *why_skipped)
{
    inputs_run *run = ud;
    if (!why_skipped)
        return one_input(run, path, 1);
    if (!run->plan)
        return skipped(run, path, why_skipped, why_skipped);
    plan_add(run->plan, PLAN_SKIPPED, path, 1, why_skipped, NULL);
    return 0;
}

static int one_path(inputs_run *run, const char *path)
{
    if (strcmp(path, "-") == 0 || !vr_walk_is_folder(path))
        return one_input(run, path, 0);
    vr_inputs_counts before = *run->counts;
    size_t planned = run->plan ? run->plan->n : 0;
    vr_error why = VR_ERROR_INIT;
    unsigned flags = run->opts && run->opts->follow_links ? VR_WALK_FOLLOW_LINKS : 0;
    int rc = vr_walk(path, flags, on_entry, run, &why);
    if (rc < 0 && run->err->code == VR_ERR_DATABASE)
        return -1;
    if (rc == 0 &&
        (run->plan ? run->plan->n != planned : memcmp(&before, run->counts, sizeof before) != 0))
        return 0;
    if (rc == 0)
        vr_fail_code(&why, VR_ERR_IO, "%s: the folder holds no files", path);
    if (!run->plan)
        return failed(run, path, &why);
    plan_add(run->plan, PLAN_FAILED, path, 0, NULL, &why);
    return 0;
}

/* --jobs: the plan said and imported in its order, its files (not
 * standard input) through the workers. */
static int run_plan(inputs_run *run, const plan *pl)
{
    char **files = vr_xcalloc(pl->n ? pl->n : 1, sizeof *files);
    for (size_t i = 0; i < pl->n; i++)
        if (pl->entries[i].kind == PLAN_FILE && strcmp(pl->paths[i], "-") != 0)
            files[i] = pl->paths[i];
    size_t staged = 0;
    for (size_t i = 0; i < pl->n; i++)
        staged += files[i] != NULL;
    run->plan = NULL;
    run->files = files;
    /* one file: nothing to do at once */
    run->pool = staged > 1 ? vr_stage_pool_start(files, pl->n, run->opts) : NULL;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < pl->n; i++) {
        const plan_entry *e = &pl->entries[i];
        run->at = i;
        if (e->kind == PLAN_FILE)
            rc = one_input(run, pl->paths[i], e->in_folder);
        else if (e->kind == PLAN_SKIPPED)
            rc = skipped(run, pl->paths[i], e->what, e->what);
        else
            rc = failed(run, pl->paths[i], &e->why);
    }
    vr_stage_pool_end(run->pool);
    run->pool = NULL;
    free(files);
    return rc;
}

static void plan_free(plan *pl)
{
    for (size_t i = 0; i < pl->n; i++) {
        free(pl->paths[i]);
        free(pl->entries[i].what);
    }
    free(pl->paths);
    free(pl->entries);
}

int vr_import_inputs(vr_db *db, char *const *paths, int n, const vr_import_opts *opts,
                     vr_input_fn on_input, void *ud, vr_inputs_counts *counts, vr_error *err)
{
    memset(counts, 0, sizeof *counts);
    err->code = VR_ERR_NONE;
    inputs_run run = {db, opts, on_input, ud, counts, err, NULL, NULL, NULL, 0};
    plan pl = {0};
    /* several files at once: planned first, so the workers can run ahead */
    if (opts && opts->jobs > 1)
        run.plan = &pl;
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++)
        rc = one_path(&run, paths[i]);
    if (rc == 0 && run.plan)
        rc = run_plan(&run, &pl);
    plan_free(&pl);
    return rc;
}

void vr_import_expected(vr_buf *out)
{
    vr_reader_expected(out);
}
