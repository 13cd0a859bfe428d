/* Many inputs in one run: files, folders, stdin. Each input is imported
 * alone (its own transaction, import.c); this file decides what a refusal
 * means (a skip or a failure), tells the caller, and records it so the
 * report can list every input it did not use. */
#include <stdio.h>
#include <string.h>

#include "input/walk.h"
#include "import/import.h"
#include "import/reader.h"

typedef struct {
    vr_db *db;
    const vr_import_opts *opts;
    vr_input_fn on_input;
    void *ud;
    vr_inputs_counts *counts;
    vr_error *err; /* set only for a fatal error */
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

/* One file. A database error stops the run; anything else is the input's. */
static int one_input(inputs_run *run, const char *path, int in_folder)
{
    vr_import_result res;
    vr_error why = VR_ERROR_INIT;
    if (vr_import_file(run->db, path, run->opts, &res, &why) < 0) {
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
    if (why_skipped)
        return skipped(run, path, why_skipped, why_skipped);
    return one_input(run, path, 1);
}

static int one_path(inputs_run *run, const char *path)
{
    if (strcmp(path, "-") == 0 || !vr_walk_is_folder(path))
        return one_input(run, path, 0);
    vr_inputs_counts before = *run->counts;
    vr_error why = VR_ERROR_INIT;
    unsigned flags = run->opts && run->opts->follow_links ? VR_WALK_FOLLOW_LINKS : 0;
    if (vr_walk(path, flags, on_entry, run, &why) < 0)
        return run->err->code == VR_ERR_DATABASE ? -1 : failed(run, path, &why);
    if (memcmp(&before, run->counts, sizeof before) == 0) {
        vr_fail_code(&why, VR_ERR_IO, "%s: the folder holds no files", path);
        return failed(run, path, &why);
    }
    return 0;
}

int vr_import_inputs(vr_db *db, char *const *paths, int n, const vr_import_opts *opts,
                     vr_input_fn on_input, void *ud, vr_inputs_counts *counts, vr_error *err)
{
    memset(counts, 0, sizeof *counts);
    err->code = VR_ERR_NONE;
    inputs_run run = {db, opts, on_input, ud, counts, err};
    for (int i = 0; i < n; i++)
        if (one_path(&run, paths[i]) < 0)
            return -1;
    return 0;
}

void vr_import_expected(vr_buf *out)
{
    vr_reader_expected(out);
}
