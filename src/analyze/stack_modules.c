/* The stack_modules pass: the module path of a snapshot's stack.
 *
 * Owns stack_module (migration 23). A profiler trace recorded with
 * with_modules names each module instance ("nn.Module: Linear_0") and the
 * locate pass writes their path into allocation.module; an allocator
 * snapshot's stack names code only, but a module's __call__ runs its
 * forward, so the stack's frames whose function is `forward` are the
 * modules it was in, outer to inner. Each is named by its file's name and
 * line ("transformer_lm.py:56 › transformer_block.py:43 › swiglu.py:34"),
 * which tells apart the forwards of different modules and, in one
 * forward, the calls it made. torch's own __call__ wrappers
 * (_call_impl, _wrapped_call_impl) are not forwards; other `forward`
 * functions of torch's outside torch/nn/ (autograd Functions, compiled
 * graphs' runtime wrappers, checkpointing) are not modules and are left
 * out.
 *
 * The path is kept per stack, not per allocation: a stack is stored once
 * however many allocations share it, and the blocks in use since before
 * the record have a stack but no allocation row. Only the stacks a report
 * groups are read (peak_live's and block_before's: a few thousand at
 * most), not every stack of the file.
 */
#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "analyze/analyze.h"

static const char sql[] = "schemas/analyze.sql";

/* Longest path kept, as locate.c's; a longer one ends with " › …". */
#define MAX_MODULE_PATH 1024

static const char separator[] = " \xe2\x80\xba "; /* " › " */
static const char cut_mark[] = "\xe2\x80\xa6";    /* "…" */

/* Where "torch" is a folder of the path ("torch/", ".../torch/", either
 * slash): its offset past the slash, or -1. */
static long torch_folder(const char *file, size_t len)
{
    for (size_t i = 0; i + 6 <= len; i++) {
        if (memcmp(file + i, "torch", 5) != 0 || (file[i + 5] != '/' && file[i + 5] != '\\'))
            continue;
        if (i == 0 || file[i - 1] == '/' || file[i - 1] == '\\')
            return (long)(i + 6);
    }
    return -1;
}

/* Whether a `forward` in this file is a module's: any file but torch's
 * own outside torch/nn/ (nn.Linear's, nn.Sequential's, DDP's are). */
static int is_module_file(const char *file, size_t len)
{
    long at = torch_folder(file, len);
    if (at < 0)
        return 1;
    const char *rest = file + at;
    size_t left = len - (size_t)at;
    return left >= 3 && rest[0] == 'n' && rest[1] == 'n' && (rest[2] == '/' || rest[2] == '\\');
}

/* The file's last part ("/a/b/model.py" -> "model.py"; either slash). */
static const char *base_name(const char *file, size_t len, size_t *n)
{
    size_t i = len;
    while (i > 0 && file[i - 1] != '/' && file[i - 1] != '\\')
        i--;
    *n = len - i;
    return file + i;
}

typedef struct {
    vr_db *db;
    vr_error *err;
    sqlite3_stmt *insert;
    vr_buf path;
    int64_t stack;
    int cut;
} sweep;

/* Appends " › model.py:56" (the first without the separator), unless
 * the path would pass the cap: then it ends with " › …". */
static void add_frame(sweep *s, const char *file, size_t len, long long line)
{
    if (s->cut)
        return;
    size_t n;
    const char *base = base_name(file, len, &n);
    char num[24];
    int k = snprintf(num, sizeof num, ":%lld", line);
    size_t sep = s->path.len ? sizeof separator - 1 : 0;
    if (s->path.len + sep + n + (size_t)k + sizeof separator + sizeof cut_mark >
        MAX_MODULE_PATH) {
        if (sep)
            vr_buf_puts(&s->path, separator);
        vr_buf_puts(&s->path, cut_mark);
        s->cut = 1;
        return;
    }
    if (sep)
        vr_buf_puts(&s->path, separator);
    vr_buf_append(&s->path, n ? base : "?", n ? n : 1);
    vr_buf_append(&s->path, num, (size_t)k);
}

/* The stack's path, when one of its frames was a module's. */
static int flush(sweep *s)
{
    int rc = 0;
    if (s->path.len) {
        sqlite3_stmt *st = s->insert;
        if (vr_db_bind_int(st, ":stack", s->stack, s->err) < 0 ||
            vr_db_bind_text(st, ":module", s->path.data, s->path.len, s->err) < 0)
            return -1;
        rc = vr_db_step_done(s->db, st, s->err);
    }
    vr_buf_clear(&s->path);
    s->cut = 0;
    return rc;
}

static int run(sweep *s, sqlite3_stmt *st)
{
    int rc, have = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t stack = sqlite3_column_int64(st, 0);
        if (have && stack != s->stack && flush(s) < 0)
            return -1;
        s->stack = stack;
        have = 1;
        const char *file = (const char *)sqlite3_column_text(st, 1);
        size_t len = (size_t)sqlite3_column_bytes(st, 1);
        if (file && is_module_file(file, len))
            add_frame(s, file, len, (long long)sqlite3_column_int64(st, 2));
    }
    if (rc != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading the stacks' forward frames");
    return have ? flush(s) : 0;
}

/* The name id of "forward" into *id (0: no frame is named so). */
static int forward_name(vr_db *db, int64_t *id, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "stack_module_forward_name", err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    *id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading a name");
}

int vr_analyze_stack_modules(vr_db *db, vr_error *err)
{
    int64_t forward = 0;
    if (forward_name(db, &forward, err) < 0)
        return -1;
    if (!forward) /* no forward frame: no stack has a module */
        return 0;
    sweep s = {.db = db, .err = err};
    sqlite3_stmt *st = vr_db_stmt(db, sql, "stack_module_frames", err);
    s.insert = vr_db_stmt(db, sql, "insert_stack_module", err);
    int rc =
        !st || !s.insert || vr_db_bind_int(st, ":forward", forward, err) < 0 ? -1 : run(&s, st);
    if (st)
        sqlite3_reset(st);
    vr_buf_free(&s.path);
    return rc;
}
