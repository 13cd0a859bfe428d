/* The locate pass: where in the user's code each allocation was made.
 *
 * Owns allocation.frame_id and allocation.module (migration 8) of the
 * allocations it places; a stack's frame is categorize.c's (see below).
 *
 * Traces recorded with with_stack=True carry the Python interpreter's calls
 * as `python_function` events on the thread that made them (PyTorch's
 * python tracer, torch/csrc/autograd/profiler_python.cpp), named
 * "file(line): function" (file with sys.path prefixes cut: "train.py",
 * "torch/nn/modules/module.py"), "nn.Module: Linear_0" for a module's
 * __call__ (class name and the instance's number among that class's
 * instances), or the repr of a C function ("<built-in method ...>"). One
 * ordered merge of those frames with the allocations, both by source,
 * thread and time (as attribute.c merges cpu_ops with memory events),
 * keeps the frames open on the thread; each level of that stack knows the
 * innermost user frame and the module path below it, so an allocation is
 * placed in O(1) whatever the depth. Its line is where its function
 * begins (the event's name), or, when recent PyTorch says where each call
 * was made ("CallFrom", op.call_from_id), the line of the innermost user
 * frame that made the call open above it. User code is any file that is not
 * torch's, an installed package's (site-packages, dist-packages), the
 * standard library's or the interpreter's (<frozen ...>, <string>).
 *
 * Snapshot allocations already know their stack: their first frame outside
 * torch (stack.user_frame_id) is their frame, which the categorize pass
 * writes in the same rewrite of the row as its category (categorize.c:
 * rewriting every row twice cost more than either pass's own work).
 *
 * Memory: the stack of open frames and the module path of the deepest
 * (capped), plus a bounded cache of name classes.
 */
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/hash.h"
#include "util/idmap.h"
#include "util/sat.h"
#include "analyze/analyze.h"
#include "analyze/thread_key.h"

static const char sql[] = "schemas/analyze.sql";
static const char snapshot_sql[] = "schemas/snapshot.sql";

/* Longest module path kept; deeper modules end it with ".…". */
#define MAX_MODULE_PATH 1024
/* Name classes the cache holds (then names are parsed again). */
#define MAX_CACHED_NAMES (1u << 18)

static const char module_prefix[] = "nn.Module: ";

/* What a python_function name is, as cached (idmap values are non-zero):
 * a user frame's value is its frame id (> 0). */
enum { NAME_OTHER = -1, NAME_MODULE = -2 };

/* Files that are not the user's code: matched on the file as PyTorch
 * writes it (sys.path prefixes cut, so installed packages and the standard
 * library lose their folder; absolute paths remain when they were outside
 * sys.path). */
typedef enum { AT_START, ANYWHERE, WHOLE } match_how;
static const struct {
    match_how how;
    const char *text;
} not_user[] = {
    {AT_START, "<"}, /* <frozen importlib._bootstrap>, <string>, <built-in> */
    {AT_START, "torch/"},
    {AT_START, "torch\\"},
    {ANYWHERE, "/torch/"},
    {ANYWHERE, "\\torch\\"},
    {AT_START, "functorch/"},
    {ANYWHERE, "site-packages/"},
    {ANYWHERE, "site-packages\\"},
    {ANYWHERE, "dist-packages/"},
    {ANYWHERE, "dist-packages\\"},
    {ANYWHERE, "/lib/python"},
    {AT_START, "importlib/"},
    {WHOLE, "contextlib.py"},
    {WHOLE, "functools.py"},
    {WHOLE, "threading.py"},
    {WHOLE, "runpy.py"},
    {WHOLE, "abc.py"},
    {WHOLE, "typing.py"},
    {WHOLE, "weakref.py"},
    {WHOLE, "copy.py"},
    {WHOLE, "enum.py"},
    {WHOLE, "dataclasses.py"},
};

typedef vr_thread_key thread_key;

/* One open frame: where it ends, the innermost user frame at or below it
 * (frame id, 0: none), the frame itself when it is a user frame (its
 * calls are placed in it), and the module path's length then. */
typedef struct {
    int64_t end_ns;
    int64_t user_frame, own_frame;
    size_t path_len;
    int path_cut;
} level;

typedef struct {
    thread_key thread;
    int64_t ts, dur, name_id, call_from_id;
    const char *text, *call_from;
    size_t len, call_from_len;
} frame_row;

typedef struct {
    vr_db *db;
    vr_error *err;
    sqlite3_stmt *frames, *set_location;
    frame_row next;
    int have_frame;
    thread_key thread;
    level *stack;
    size_t depth, cap;
    vr_buf path;    /* module path of the deepest level */
    vr_idmap names; /* name id -> NAME_* or frame id */
    vr_idmap calls; /* (caller, call site) -> frame id, or -1 */
    uint64_t located;
} sweep;

/*-*** names ***/

static int has_at(const char *s, size_t len, size_t at, const char *lit, size_t n)
{
    return at + n <= len && memcmp(s + at, lit, n) == 0;
}

static int matches(const char *s, size_t len, match_how how, const char *lit)
{
    size_t n = strlen(lit);
    if (how == WHOLE)
        return len == n && memcmp(s, lit, n) == 0;
    if (how == AT_START)
        return has_at(s, len, 0, lit, n);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(s + i, lit, n) == 0)
            return 1;
    return 0;
}

static int is_user_file(const char *file, size_t len)
{
    if (len == 0)
        return 0;
    for (size_t i = 0; i < sizeof not_user / sizeof *not_user; i++)
        if (matches(file, len, not_user[i].how, not_user[i].text))
            return 0;
    return 1;
}

/* Splits "file(line): function" at its last "(digits): "; 0 when the name
 * is not a frame (a C function's repr, a module). */
static int parse_frame(const char *s, size_t len, size_t *file_len, int64_t *line, size_t *fn_at)
{
    for (size_t i = len >= 3 ? len - 3 : 0; i-- > 0;) {
        if (s[i + 1] != ')' || s[i + 2] != ':' || s[i + 3] != ' ')
            continue;
        size_t d = i + 1;
        int64_t v = 0;
        while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
            d--;
        if (d == i + 1 || d == 0 || s[d - 1] != '(' || i + 1 - d > 9)
            continue;
        for (size_t k = d; k <= i; k++)
            v = v * 10 + (s[k] - '0');
        *file_len = d - 1;
        *line = v;
        *fn_at = i + 4;
        return 1;
    }
    return 0;
}

/* The frame row of (file, line, function) by their name ids, shared with
 * the snapshots' (schemas/snapshot.sql); -1 on a database error. */
static int64_t frame_of(sweep *s, int64_t file_id, int64_t line, int64_t fn_id)
{
    sqlite3_stmt *ins = vr_db_stmt(s->db, snapshot_sql, "insert_frame", s->err);
    sqlite3_stmt *sel = vr_db_stmt(s->db, snapshot_sql, "select_frame", s->err);
    if (!ins || !sel)
        return -1;
    sqlite3_stmt *both[2] = {ins, sel};
    for (int i = 0; i < 2; i++)
        if (vr_db_bind_int(both[i], ":file", file_id, s->err) < 0 ||
            vr_db_bind_int(both[i], ":line", line, s->err) < 0 ||
            vr_db_bind_int(both[i], ":function", fn_id, s->err) < 0)
            return -1;
    if (vr_db_step_done(s->db, ins, s->err) < 0)
        return -1;
    int64_t id = sqlite3_step(sel) == SQLITE_ROW ? sqlite3_column_int64(sel, 0) : -1;
    sqlite3_reset(sel);
    return id < 0 ? vr_db_fail(s->db, s->err, "storing a frame") : id;
}

static int64_t intern_frame(sweep *s, const char *file, size_t file_len, int64_t line,
                            const char *fn, size_t fn_len)
{
    int64_t file_id = vr_db_intern(s->db, file, file_len, s->err);
    int64_t fn_id = file_id < 0 ? -1 : vr_db_intern(s->db, fn, fn_len, s->err);
    return fn_id < 0 ? -1 : frame_of(s, file_id, line, fn_id);
}

/* NAME_OTHER, NAME_MODULE, or a user frame's id; 0 on a database error. */
static int64_t classify(sweep *s, const frame_row *f)
{
    int64_t known = vr_idmap_get(&s->names, (uint64_t)f->name_id);
    if (known)
        return known;
    size_t file_len, fn_at;
    int64_t line, cls = NAME_OTHER;
    if (has_at(f->text, f->len, 0, module_prefix, sizeof module_prefix - 1))
        cls = NAME_MODULE;
    else if (parse_frame(f->text, f->len, &file_len, &line, &fn_at) &&
             is_user_file(f->text, file_len)) {
        cls = intern_frame(s, f->text, file_len, line, f->text + fn_at, f->len - fn_at);
        if (cls < 0)
            return 0;
    }
    vr_idmap_put(&s->names, (uint64_t)f->name_id, cls);
    return cls;
}

/*-*** calls made from a user frame ***/

/* Splits "file:line" at its last ':'; 0 when no line follows it. */
static int parse_call_site(const char *s, size_t len, size_t *file_len, int64_t *line)
{
    size_t d = len;
    while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
        d--;
    if (d == len || d == 0 || s[d - 1] != ':' || len - d > 9)
        return 0;
    int64_t v = 0;
    for (size_t k = d; k < len; k++)
        v = v * 10 + (s[k] - '0');
    *file_len = d - 1;
    *line = v;
    return 1;
}

/* The caller frame at the line of a call it made (its file must be the
 * caller's): the frame id, 0 when the call says nothing of it, -1 on a
 * database error. */
static int64_t call_frame_in_db(sweep *s, int64_t caller, const frame_row *f)
{
    size_t file_len;
    int64_t line;
    if (!parse_call_site(f->call_from, f->call_from_len, &file_len, &line))
        return 0;
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "select_frame_parts", s->err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":frame", caller, s->err) < 0)
        return -1;
    int rc = sqlite3_step(st), same = 0;
    int64_t file_id = 0, fn_id = 0;
    if (rc == SQLITE_ROW) {
        same = (size_t)sqlite3_column_bytes(st, 0) == file_len &&
               memcmp(sqlite3_column_text(st, 0), f->call_from, file_len) == 0;
        file_id = sqlite3_column_int64(st, 1);
        fn_id = sqlite3_column_int64(st, 2);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading a frame");
    return same ? frame_of(s, file_id, line, fn_id) : 0;
}

/* As call_frame_in_db, through a bounded cache of (caller, call site). */
static int64_t call_frame(sweep *s, int64_t caller, const frame_row *f)
{
    int64_t key[2] = {caller, f->call_from_id};
    vr_hash h;
    vr_hash_init(&h, 0xca11);
    vr_hash_update(&h, key, sizeof key);
    uint64_t digest = vr_hash_digest(&h);
    int64_t id = vr_idmap_get(&s->calls, digest);
    if (id)
        return id < 0 ? 0 : id;
    id = call_frame_in_db(s, caller, f);
    if (id >= 0)
        vr_idmap_put(&s->calls, digest, id ? id : -1);
    return id;
}

/*-*** the stack of open frames ***/

static int fetch_frame(sweep *s)
{
    int rc = sqlite3_step(s->frames);
    s->have_frame = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading Python frames");
    if (!s->have_frame)
        return 0;
    sqlite3_stmt *st = s->frames;
    frame_row *f = &s->next;
    f->thread = (thread_key){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                             sqlite3_column_int64(st, 2)};
    f->ts = sqlite3_column_int64(st, 3);
    f->dur = sqlite3_column_int64(st, 4);
    f->name_id = sqlite3_column_int64(st, 5);
    f->text = (const char *)sqlite3_column_text(st, 6);
    f->len = (size_t)sqlite3_column_bytes(st, 6);
    if (!f->text)
        f->text = "";
    f->call_from_id = sqlite3_column_int64(st, 7);
    f->call_from = (const char *)sqlite3_column_text(st, 8);
    f->call_from_len = f->call_from ? (size_t)sqlite3_column_bytes(st, 8) : 0;
    return 0;
}

static void pop_to(sweep *s, size_t depth)
{
    s->depth = depth;
    s->path.len = depth ? s->stack[depth - 1].path_len : 0;
}

static void enter_thread(sweep *s, const thread_key *t)
{
    if (vr_thread_cmp(t, &s->thread) != 0) {
        pop_to(s, 0);
        s->thread = *t;
    }
}

/* A module's level extends the path by ".Linear_0" (its label after the
 * prefix), unless that would pass the cap. */
static void extend_path(sweep *s, level *l, const frame_row *f)
{
    const char *label = f->text + (sizeof module_prefix - 1);
    size_t n = f->len - (sizeof module_prefix - 1);
    if (l->path_cut || s->path.len + n + 1 > MAX_MODULE_PATH) {
        l->path_cut = 1;
        return;
    }
    if (s->path.len)
        vr_buf_putc(&s->path, '.');
    vr_buf_append(&s->path, label, n);
    l->path_len = s->path.len;
}

static int push_frame(sweep *s, const frame_row *f)
{
    enter_thread(s, &f->thread);
    int64_t end = vr_sat_add(f->ts, f->dur);
    size_t d = s->depth;
    while (d > 0 && s->stack[d - 1].end_ns < end)
        d--;
    pop_to(s, d);
    int64_t cls = classify(s, f);
    if (cls == 0)
        return -1;
    level l = d ? s->stack[d - 1] : (level){0, 0, 0, 0, 0};
    l.end_ns = end;
    l.own_frame = 0;
    /* A call made by a user frame: that frame, at the line of the call. */
    if (d && s->stack[d - 1].own_frame && f->call_from_len) {
        int64_t at = call_frame(s, s->stack[d - 1].own_frame, f);
        if (at < 0)
            return -1;
        if (at > 0)
            l.user_frame = at;
    }
    if (cls == NAME_MODULE)
        extend_path(s, &l, f);
    else if (cls > 0)
        l.user_frame = l.own_frame = cls;
    vr_xgrow(&s->stack, &s->cap, d + 1, sizeof *s->stack, 64);
    s->stack[s->depth++] = l;
    return 0;
}

/* Brings the stack to the state at time ts on thread t. */
static int advance(sweep *s, const thread_key *t, int64_t ts)
{
    while (s->have_frame) {
        int c = vr_thread_cmp(&s->next.thread, t);
        if (c > 0 || (c == 0 && s->next.ts > ts))
            break;
        if (push_frame(s, &s->next) < 0 || fetch_frame(s) < 0)
            return -1;
    }
    enter_thread(s, t);
    size_t d = s->depth;
    while (d > 0 && s->stack[d - 1].end_ns < ts)
        d--;
    pop_to(s, d);
    return 0;
}

/*-*** allocations ***/

static int write_location(sweep *s, int64_t allocation)
{
    const level *top = &s->stack[s->depth - 1];
    if (!top->user_frame && !s->path.len && !top->path_cut)
        return 0;
    sqlite3_stmt *st = s->set_location;
    if (vr_db_bind_int(st, ":allocation", allocation, s->err) < 0 ||
        vr_db_bind_opt_int(st, ":frame", top->user_frame > 0, top->user_frame, s->err) < 0)
        return -1;
    int rc;
    if (top->path_cut) {
        size_t len = s->path.len;
        vr_buf_puts(&s->path, len ? ".\xe2\x80\xa6" : "\xe2\x80\xa6");
        rc = vr_db_bind_text(st, ":module", s->path.data, s->path.len, s->err);
        s->path.len = len;
    } else if (s->path.len) {
        rc = vr_db_bind_text(st, ":module", s->path.data, s->path.len, s->err);
    } else {
        rc = vr_db_bind_null(st, ":module", s->err);
    }
    if (rc < 0)
        return -1;
    s->located++;
    return vr_db_step_done(s->db, st, s->err);
}

static int on_allocation(sweep *s, sqlite3_stmt *al)
{
    thread_key t = {sqlite3_column_int64(al, 1), sqlite3_column_int64(al, 2),
                    sqlite3_column_int64(al, 3)};
    if (advance(s, &t, sqlite3_column_int64(al, 4)) < 0)
        return -1;
    return s->depth ? write_location(s, sqlite3_column_int64(al, 0)) : 0;
}

static int run_sweep(sweep *s)
{
    sqlite3_stmt *al = vr_db_stmt(s->db, sql, "select_allocations_by_thread", s->err);
    if (!al || fetch_frame(s) < 0)
        return -1;
    int rc = 0, step = SQLITE_DONE;
    /* Past the last frame, with none open, nothing is left to place. */
    while (rc == 0 && (s->have_frame || s->depth) && (step = sqlite3_step(al)) == SQLITE_ROW)
        rc = on_allocation(s, al);
    if (rc == 0 && step != SQLITE_DONE && step != SQLITE_ROW)
        rc = vr_db_fail(s->db, s->err, "reading allocations");
    sqlite3_reset(al);
    sqlite3_reset(s->frames);
    return rc;
}

int vr_analyze_locate(vr_db *db, vr_error *err)
{
    sweep s;
    memset(&s, 0, sizeof s);
    s.db = db;
    s.err = err;
    s.thread = (thread_key){INT64_MIN, INT64_MIN, INT64_MIN};
    vr_idmap_init(&s.names, MAX_CACHED_NAMES);
    vr_idmap_init(&s.calls, MAX_CACHED_NAMES);
    s.frames = vr_db_stmt(db, sql, "select_python_frames_by_thread", err);
    s.set_location = vr_db_stmt(db, sql, "set_allocation_location", err);
    int rc = !s.frames || !s.set_location ? -1 : run_sweep(&s);
    free(s.stack);
    vr_buf_free(&s.path);
    vr_idmap_free(&s.names);
    vr_idmap_free(&s.calls);
    return rc;
}
