#include "import/import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/stage.h"
#include "db/tolerated.h"
#include "input/input.h"
#include "util/hash.h"
#include "import/identity.h"
#include "import/reader.h"

#define SNIFF_BYTES 65536

/* The earlier source of the same content: one whose XXH64 (`block`: of
 * the raw or of the decompressed bytes) is `hex` and whose BLAKE2b-256 is
 * `digest`. XXH64 can be collided on purpose, so it only finds candidates;
 * the BLAKE2b decides. A source imported before migration 19 has none: its
 * XXH64 alone decides, as when it was imported. `digest` NULL: any
 * candidate. Its id, -1 when none, -2 on error. */
static int64_t find_source(vr_db *db, const char *block, const char *hex, const char *digest,
                           vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/import.sql", block, err);
    if (!st)
        return -2;
    if (vr_db_bind_text(st, ":hash", hex, strlen(hex), err) < 0)
        return -2;
    int64_t id = -1;
    int rc = SQLITE_DONE;
    while (id < 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *theirs = (const char *)sqlite3_column_text(st, 1);
        if (!digest || !theirs || strcmp(theirs, digest) == 0)
            id = sqlite3_column_int64(st, 0);
    }
    if (id < 0 && rc != SQLITE_DONE) {
        vr_db_fail(db, err, "looking for the same content");
        id = -2;
    }
    sqlite3_reset(st);
    return id;
}

/* The reader for the input's content. When none reads it, the error
 * says what the content looks like (VR_ERR_NOT_RECOGNISED) or which
 * format it is (VR_ERR_NOT_SUPPORTED, recognised but not read yet), and
 * what is read. */
static const vr_reader *pick_reader(vr_input *in, vr_sniff_level *level, const char **what,
                                    vr_error *err)
{
    char *head = vr_xmalloc(SNIFF_BYTES);
    ptrdiff_t n = vr_input_peek(in, head, SNIFF_BYTES, err);
    if (n > 0 && vr_reader_is_own_report(head, (size_t)n)) {
        *what = VR_READER_OWN_REPORT;
        vr_fail_code(err, VR_ERR_NOT_RECOGNISED,
                     "%s: " VR_READER_OWN_REPORT " (vramreport's output, not an input)",
                     vr_input_path(in));
        free(head);
        return NULL;
    }
    const vr_reader *r = n > 0 ? vr_reader_pick(head, (size_t)n, level) : NULL;
    /* Said if the reader, reading on, finds the content is not its own. */
    *what = n >= 0 ? vr_reader_looks_like(head, (size_t)n) : NULL;
    if (n >= 0 && (!r || !vr_reader_reads(r))) {
        vr_buf expected = VR_BUF_INIT;
        vr_reader_expected(&expected);
        *what = r ? r->description : vr_reader_looks_like(head, (size_t)(n > 0 ? n : 0));
        if (r)
            vr_fail_code(err, VR_ERR_NOT_SUPPORTED,
                         "%s: %s: not read yet (this version reads %s)", vr_input_path(in),
                         r->description, expected.data);
        else if (n == 0)
            vr_fail_code(err, VR_ERR_NOT_RECOGNISED, "%s: empty input (expected %s)",
                         vr_input_path(in), expected.data);
        else
            vr_fail_code(err, VR_ERR_NOT_RECOGNISED,
                         "%s: not a recognised input: %s; expected %s (plain, gzip or zstd)",
                         vr_input_path(in), vr_reader_looks_like(head, (size_t)(n > 0 ? n : 0)),
                         expected.data);
        vr_buf_free(&expected);
        r = NULL;
    }
    free(head);
    return r;
}

/* A NUL-terminated text, NULL as NULL. */
static int bind_str(sqlite3_stmt *st, const char *name, const char *text, vr_error *err)
{
    return text ? vr_db_bind_text(st, name, text, strlen(text), err)
                : vr_db_bind_null(st, name, err);
}

static int insert_source(vr_import_ctx *c, const char *path, const vr_reader *r, const char *hex,
                         vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(c->db, "schemas/import.sql", "insert_source", err);
    if (!st)
        return -1;
    if (bind_str(st, ":path", vr_input_path(c->in), err) < 0 ||
        bind_str(st, ":format", r->name, err) < 0 ||
        bind_str(st, ":compression", vr_compression_name(vr_input_compression(c->in)), err) < 0 ||
        bind_str(st, ":content_hash", hex, err) < 0 || vr_db_step_done(c->db, st, err) < 0)
        return -1;
    c->source_id = sqlite3_last_insert_rowid(vr_db_handle(c->db));
    return 0;
}

/* Runs block `name` of import.sql bound with :source, the source imported. */
static int run_for_source(vr_import_ctx *c, const char *name, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(c->db, "schemas/import.sql", name, err);
    if (!st || vr_db_bind_int(st, ":source", c->source_id, err) < 0)
        return -1;
    return vr_db_step_done(c->db, st, err);
}

/* Completes the source row. Its place on one clock (set_source_clock, the
 * clock rule) and the devices it wrote (record_source_devices) are worked
 * out here from what the reader stored, so that no reader applies a clock
 * or decides what analysis rebuilds. */
/* The source's place on one clock, by what its reader says its times are
 * (import.sql, set_source_clock). */
static int set_clock(vr_import_ctx *c, vr_error *err)
{
    static const char *const kinds[] = {"profiler", "wall_utc", "wall_local", "none"};
    sqlite3_stmt *st = vr_db_stmt(c->db, "schemas/import.sql", "set_source_clock", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", c->source_id, err) < 0 ||
        vr_db_bind_text(st, ":clock", kinds[c->clock], strlen(kinds[c->clock]), err) < 0 ||
        vr_db_bind_int(st, ":tz_offset", c->tz_offset_ns, err) < 0 ||
        vr_db_bind_text(st, ":tz_name", c->tz_name, strlen(c->tz_name), err) < 0)
        return -1;
    return vr_db_step_done(c->db, st, err);
}

static int set_content_digest(vr_import_ctx *c, const char *content, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(c->db, "schemas/import.sql", "set_source_digest", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", c->source_id, err) < 0 ||
        vr_db_bind_text(st, ":digest", content, strlen(content), err) < 0)
        return -1;
    return vr_db_step_done(c->db, st, err);
}

/* What finishing a source writes of its own rows; finish_source goes on
 * with what weighs it against the other sources (a staged file does that
 * in the run's database: staged_finish). */
static int finish_own(vr_import_ctx *c, const char *hex, const char *data_hex,
                      const char *content, vr_error *err)
{
    const vr_json_faults *t = &c->json_faults;
    if (vr_reader_tally(c, "invalid_utf8", t->invalid_utf8, err) < 0 ||
        vr_reader_tally(c, "control_char", t->control_chars, err) < 0 ||
        vr_reader_tally(c, "int_overflow", t->int_overflow, err) < 0 ||
        vr_reader_tally(c, "inexact_number", t->inexact_number, err) < 0 ||
        vr_reader_tally(c, "repaired_quote", t->repaired_quotes, err) < 0 ||
        vr_reader_tally(c, "base_time_missing", t->base_time_missing, err) < 0)
        return -1;
    sqlite3_stmt *st = vr_db_stmt(c->db, "schemas/import.sql", "finish_source", err);
    if (!st)
        return -1;
    int have_events = c->start_ns <= c->end_ns;
    if (vr_db_bind_int(st, ":source", c->source_id, err) < 0 ||
        bind_str(st, ":content_hash", hex, err) < 0 ||
        vr_db_bind_int(st, ":raw_bytes", (int64_t)vr_input_raw_offset(c->in), err) < 0 ||
        vr_db_bind_int(st, ":bytes", (int64_t)vr_input_offset(c->in), err) < 0 ||
        vr_db_bind_int(st, ":events", (int64_t)c->events, err) < 0 ||
        vr_db_bind_int(st, ":truncated", c->truncated, err) < 0 ||
        vr_db_bind_opt_int(st, ":truncated_at", c->truncated, (int64_t)c->truncated_at, err) <
            0 ||
        vr_db_bind_int(st, ":base_time_ns", c->base_time_ns, err) < 0 ||
        vr_db_bind_opt_int(st, ":start_ns", have_events, c->start_ns, err) < 0 ||
        vr_db_bind_opt_int(st, ":end_ns", have_events, c->end_ns, err) < 0 ||
        vr_db_bind_opt_int(st, ":rank", c->rank >= 0, c->rank, err) < 0 ||
        vr_db_bind_opt_int(st, ":world_size", c->world_size >= 0, c->world_size, err) < 0 ||
        bind_str(st, ":data_hash", data_hex, err) < 0 || vr_db_step_done(c->db, st, err) < 0 ||
        set_content_digest(c, content, err) < 0 || set_clock(c, err) < 0)
        return -1;
    return run_for_source(c, "record_source_devices", err);
}

/* The source against the others (device identity); the analysis stale. */
static int finish_shared(vr_db *db, int64_t source_id, vr_error *err)
{
    if (vr_identity_join(db, source_id, err) < 0)
        return -1;
    sqlite3_stmt *stale = vr_db_stmt(db, "schemas/import.sql", "mark_analysis_stale", err);
    return stale ? vr_db_step_done(db, stale, err) : -1;
}

static int finish_source(vr_import_ctx *c, const char *hex, const char *data_hex,
                         const char *content, vr_error *err)
{
    if (finish_own(c, hex, data_hex, content, err) < 0)
        return -1;
    return finish_shared(c->db, c->source_id, err);
}

/* The BLAKE2b-256 of a file's decompressed content, read whole apart from
 * the import (the input being imported is not disturbed). */
static int content_digest(const char *path, char out[65], vr_error *err)
{
    vr_input *in = vr_input_open(path, err);
    if (!in)
        return -1;
    char *chunk = vr_xmalloc(SNIFF_BYTES);
    ptrdiff_t n;
    while ((n = vr_input_read(in, chunk, SNIFF_BYTES, err)) > 0)
        ;
    free(chunk);
    if (n == 0)
        vr_input_content_digest(in, out);
    vr_input_close(in);
    return n == 0 ? 0 : -1;
}
/* The file's content is source `id`'s: 1, said in res. */
static int already_imported(vr_import_result *res, int64_t id)
{
    res->status = VR_ALREADY_IMPORTED;
    res->source_id = id;
    return 1;
}


/* Regular files are hashed first, so a repeat costs one fast read, and a
 * second one (the BLAKE2b, read apart) only when the XXH64 matches. */
/* The earlier source of the file at `path` whose raw bytes' XXH64 is
 * `hex`: 1 (res says which), 0 (none), or -1. */
static int repeat_of(vr_db *db, const char *path, const char *hex, vr_import_result *res,
                     vr_error *err)
{
    char content[65];
    int64_t id = find_source(db, "find_source_by_hash", hex, NULL, err);
    if (id == -1)
        return 0;
    /* A file that cannot be read whole here is imported, which says why. */
    vr_error ignored = VR_ERROR_INIT;
    if (id >= 0 && content_digest(path, content, &ignored) < 0)
        return 0;
    if (id >= 0)
        id = find_source(db, "find_source_by_hash", hex, content, err);
    if (id < -1)
        return -1;
    if (id >= 0)
        return already_imported(res, id);
    return 0;
}

static int check_repeat(vr_db *db, vr_input *in, vr_import_result *res, vr_error *err)
{
    uint64_t digest;
    int rc = vr_input_prehash(in, &digest, err);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    char hex[17];
    vr_hash_hex(digest, hex);
    return repeat_of(db, vr_input_path(in), hex, res, err);
}

static int run_reader(vr_import_ctx *c, const vr_reader *r, const char *path,
                      vr_import_result *res, vr_error *err)
{
    char hex[17], data_hex[17], content[65];
    if (insert_source(c, path, r, "pending", err) < 0 || vr_reader_run(r, c, err) < 0)
        return -1;
    vr_hash_hex(vr_input_digest(c->in), hex);
    vr_hash_hex(vr_input_data_digest(c->in), data_hex);
    vr_input_content_digest(c->in, content);
    /* Known only now: stdin's raw bytes, and any input's decompressed ones
     * (the same trace imported before as .gz, .zst or plain). */
    int64_t earlier = find_source(c->db, "find_source_by_hash", hex, content, err);
    if (earlier == -1)
        earlier = find_source(c->db, "find_source_by_data_hash", data_hex, content, err);
    if (earlier < -1)
        return -1;
    if (earlier >= 0)
        return already_imported(res, earlier);
    if (finish_source(c, hex, data_hex, content, err) < 0)
        return -1;
    res->status = VR_IMPORTED;
    res->source_id = c->source_id;
    res->events = c->events;
    res->truncated = c->truncated;
    return 0;
}

/* After the commit: one warning for each kind of data the reader had to
 * skip, so stderr says what the report's notes say. */
static int warn_dropped(vr_db *db, int64_t source_id, const char *path, const vr_warner *warn,
                        vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/import.sql", "select_tallies", err);
    if (!st || vr_db_bind_int(st, ":source", source_id, err) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *kind = (const char *)sqlite3_column_text(st, 0);
        const vr_tolerated_kind *k = kind ? vr_tolerated_find(kind) : NULL;
        if (!k || k->effect != VR_TOLERATED_DROPPED || !strcmp(kind, "malformed_event"))
            continue; /* malformed events are said by the reader, with the offset */
        char sentence[160];
        vr_tolerated_sentence(kind, sqlite3_column_int64(st, 1), sentence, sizeof sentence);
        vr_warn(warn, "%s: %s", path, sentence);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading tallies");
}

/* What a truncated input's import kept, said once. */
static void warn_truncated(const vr_warner *warn, const char *path, const vr_staged *s)
{
    vr_warn(warn,
            "%s: truncated at byte %llu (%s): imported the %llu complete "
            "records before it%s",
            path, (unsigned long long)s->truncated_at,
            s->truncated_where ? s->truncated_where : "", (unsigned long long)s->events,
            s->base_time_missing ? "; baseTimeNanoseconds was cut off too, so "
                                   "times are relative to the start of profiling"
                                 : "");
}

/* What the reader found that the warnings say. */
static void keep_tail(vr_staged *s, const vr_import_ctx *c)
{
    s->events = c->events;
    s->truncated = c->truncated;
    s->truncated_at = c->truncated_at;
    s->truncated_where = c->truncated_where;
    s->base_time_missing = c->json_faults.base_time_missing != 0;
}

/* A reader's context for one file: nothing read yet (no time span, rank
 * or world size), the clock of naive stamps from opts (NULL: UTC). */
static vr_import_ctx new_ctx(vr_db *db, vr_input *in, const vr_warner *warn,
                             vr_progress *progress, vr_sniff_level level,
                             const vr_import_opts *opts)
{
    return (vr_import_ctx){.db = db,
                           .in = in,
                           .warn = warn,
                           .progress = progress,
                           .sniffed = level,
                           .start_ns = INT64_MAX,
                           .end_ns = INT64_MIN,
                           .rank = -1,
                           .world_size = -1,
                           .tz_offset_ns = opts ? opts->tz_offset_ns : 0,
                           .tz_name = opts && opts->tz_name ? opts->tz_name : "UTC"};
}


int vr_import_file(vr_db *db, const char *path, const vr_import_opts *opts, vr_import_result *res,
                   vr_error *err)
{
    memset(res, 0, sizeof *res);
    vr_input *in = vr_input_open(path, err);
    if (!in)
        return -1;
    /* Sniffed first: a folder's 10 GB checkpoint is refused after 64 KiB,
     * not hashed whole. */
    vr_sniff_level level = VR_SNIFF_NO;
    const vr_reader *r = pick_reader(in, &level, &res->looks_like, err);
    int rc = r ? check_repeat(db, in, res, err) : -1;
    if (rc != 0) {
        vr_input_close(in);
        return rc > 0 ? 0 : -1;
    }
    res->format = r->name;
    vr_progress progress;
    vr_import_ctx c = new_ctx(db, in, opts ? opts->warn : NULL, &progress, level, opts);
    vr_progress_start(&progress, opts && opts->progress, vr_input_path(in),
                      vr_input_raw_size(in));
    rc = vr_db_begin(db, err);
    if (rc == 0)
        rc = run_reader(&c, r, path, res, err);
    vr_progress_end(&progress);
    if (rc == 0)
        rc = vr_db_commit(db, err);
    else
        vr_db_rollback(db);
    if (rc == 0 && res->status == VR_IMPORTED)
        rc = warn_dropped(db, c.source_id, vr_input_path(in), c.warn, err);
    if (rc == 0 && c.truncated) {
        vr_staged tail;
        keep_tail(&tail, &c);
        warn_truncated(c.warn, vr_input_path(in), &tail);
    }
    vr_input_close(in);
    return rc < 0 ? -1 : 0;
}

/*-*** --jobs: a file staged on a worker (staging.h) ***/

/* Only profiler traces are staged: their rows are the file's own but for
 * names and devices (db/stage.c). A snapshot's frames and stacks are
 * shared by content, and the other readers' files are small. */
static int stageable(const vr_reader *r, vr_input *in)
{
    return r && strcmp(r->name, "kineto") == 0 && vr_input_raw_size(in) >= 0;
}

static void keep_warning(void *ud, const char *line)
{
    vr_staged *s = ud;
    vr_buf_puts(&s->warnings, line);
    vr_buf_putc(&s->warnings, '\0');
}

/* The reader into the staging database, the source finished but for
 * what weighs it against other sources; 0 or -1. */
static int stage_rows(vr_import_ctx *c, const vr_reader *r, const char *path, vr_staged *s,
                      vr_error *err)
{
    if (vr_db_stage_configure(c->db, err) < 0 || vr_db_begin(c->db, err) < 0)
        return -1;
    int rc =
        insert_source(c, path, r, "pending", err) < 0 || vr_reader_run(r, c, err) < 0 ? -1 : 0;
    if (rc == 0) {
        vr_hash_hex(vr_input_digest(c->in), s->hex);
        vr_hash_hex(vr_input_data_digest(c->in), s->data_hex);
        vr_input_content_digest(c->in, s->content);
        rc = finish_own(c, s->hex, s->data_hex, s->content, err);
    }
    if (rc == 0)
        return vr_db_commit(c->db, err);
    vr_db_rollback(c->db);
    return -1;
}

void vr_import_stage_file(const char *path, const char *stage_path, const vr_import_opts *opts,
                          vr_staged *s)
{
    s->staged = 0;
    vr_error err = VR_ERROR_INIT;
    vr_input *in = vr_input_open(path, &err);
    if (!in)
        return;
    vr_sniff_level level = VR_SNIFF_NO;
    const char *what;
    const vr_reader *r = pick_reader(in, &level, &what, &err);
    /* hashed first, as vr_import_file() does, for the run's thread to
     * look for a repeat without reading the file again */
    uint64_t pre;
    vr_db *stage = stageable(r, in) && vr_input_prehash(in, &pre, &err) == 0
                       ? vr_db_open(stage_path, &err)
                       : NULL;
    if (stage) {
        vr_hash_hex(pre, s->pre_hex);
        vr_warner keep = {keep_warning, s};
        vr_progress quiet;
        vr_import_ctx c = new_ctx(stage, in, &keep, &quiet, level, opts);
        vr_progress_start(&quiet, 0, path, vr_input_raw_size(in));
        s->staged = stage_rows(&c, r, path, s, &err) == 0;
        vr_progress_end(&quiet);
        keep_tail(s, &c);
        s->format = r->name;
        vr_db_close(stage);
    }
    vr_input_close(in);
}

/* The file's warnings as the reader said them, in order. */
static void say_kept(const vr_staged *s, const vr_warner *warn)
{
    for (size_t at = 0; at < s->warnings.len; at += strlen(s->warnings.data + at) + 1)
        vr_warn(warn, "%s", s->warnings.data + at);
}

/* In the file's transaction: the same content found after reading
 * (compressed otherwise), else the staged rows copied and weighed. */
static int staged_rows(vr_db *db, const vr_staged *s, vr_import_result *res, vr_error *err)
{
    int64_t earlier = find_source(db, "find_source_by_hash", s->hex, s->content, err);
    if (earlier == -1)
        earlier = find_source(db, "find_source_by_data_hash", s->data_hex, s->content, err);
    if (earlier < -1)
        return -1;
    if (earlier >= 0)
        return already_imported(res, earlier);
    int64_t id;
    if (vr_db_stage_copy(db, &id, err) < 0 || finish_shared(db, id, err) < 0)
        return -1;
    res->status = VR_IMPORTED;
    res->source_id = id;
    res->events = s->events;
    res->truncated = s->truncated;
    return 0;
}

int vr_import_staged(vr_db *db, const char *path, const char *stage_path, const vr_staged *s,
                     const vr_import_opts *opts, vr_import_result *res, vr_error *err)
{
    memset(res, 0, sizeof *res);
    res->format = s->format;
    const vr_warner *warn = opts->warn;
    /* content imported already, found as vr_import_file() finds it
     * before reading */
    int rc = repeat_of(db, path, s->pre_hex, res, err);
    if (rc != 0)
        return rc > 0 ? 0 : -1;
    if (vr_db_stage_attach(db, stage_path, err) < 0)
        return -1;
    rc = vr_db_begin(db, err);
    if (rc == 0)
        rc = staged_rows(db, s, res, err);
    if (rc == 0)
        rc = vr_db_commit(db, err);
    else
        vr_db_rollback(db);
    vr_db_stage_detach(db);
    if (rc >= 0)
        say_kept(s, warn);
    if (rc == 0)
        rc = warn_dropped(db, res->source_id, path, warn, err);
    if (rc == 0 && s->truncated)
        warn_truncated(warn, path, s);
    return rc < 0 ? -1 : 0;
}
