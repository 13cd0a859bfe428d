#include "render/out/json_out.h"

#include <stdlib.h>
#include <string.h>

#include "render/results/ranks.h"
#include "render/results/doc.h"
#include "util/utf8.h"

static const char report_sql[] = "schemas/report.sql";

typedef int (*put_fn)(void *ctx, const char *text, size_t len, vr_error *err);

typedef struct {
    put_fn put;
    void *ctx;
    vr_error *err;
} writer;

static int put(writer *w, const char *text, size_t len)
{
    return w->put(w->ctx, text, len, w->err);
}

static int out_of_memory(writer *w)
{
    return vr_fail(w->err, "out of memory writing JSON");
}

/*-*** cJSON's own printing, a piece at a time ***/

/* cJSON_Print of {"key": item}: "{\n\t\"key\":\t" VALUE "\n}", VALUE
 * indented as a member of the document; NULL when out of memory. The
 * object refers to `item`, which stays the caller's. */
static char *print_member(const char *key, const cJSON *item)
{
    cJSON *wrap = cJSON_CreateObject();
    char *text = NULL;
    if (wrap && cJSON_AddItemReferenceToObject(wrap, key, (cJSON *)item))
        text = cJSON_Print(wrap);
    cJSON_Delete(wrap);
    return text;
}

/* A member of the document as cJSON prints it there: "\t\"key\":\t"
 * VALUE, with `drop` bytes of its end left out. */
static int put_member(writer *w, const char *key, const cJSON *item, size_t drop)
{
    static const char head[] = "{\n", tail[] = "\n}";
    char *text = print_member(key, item);
    if (!text)
        return out_of_memory(w);
    size_t len = strlen(text), skip = sizeof head - 1, end = sizeof tail - 1 + drop;
    int rc = len >= skip + end ? put(w, text + skip, len - skip - end) : out_of_memory(w);
    free(text);
    return rc;
}

/* One row of a list in the document, as cJSON prints an element there:
 * {"k": [row]} printed, less its "{\n\t\"k\":\t[" and "]\n}". Frees the
 * row. */
static int put_element(writer *w, cJSON *row)
{
    static const char head[] = "{\n\t\"k\":\t[", tail[] = "]\n}";
    cJSON *wrap = cJSON_CreateObject(), *list = cJSON_CreateArray();
    char *text = NULL;
    if (wrap && list && cJSON_AddItemToArray(list, row)) {
        row = NULL;
        if (cJSON_AddItemToObject(wrap, "k", list)) {
            list = NULL;
            text = cJSON_Print(wrap);
        }
    }
    cJSON_Delete(row);
    cJSON_Delete(list);
    cJSON_Delete(wrap);
    if (!text)
        return out_of_memory(w);
    size_t len = strlen(text), skip = sizeof head - 1, end = sizeof tail - 1;
    int rc = len >= skip + end ? put(w, text + skip, len - skip - end) : out_of_memory(w);
    free(text);
    return rc;
}

/*-*** the lists written as they are read ***/

/* A row the document holds already: one of `shown` equal to it on
 * every `keys` member (absent in both counts as equal). */
static int is_shown(const cJSON *row, const cJSON *shown, const char *const *keys)
{
    const cJSON *s;
    cJSON_ArrayForEach(s, shown)
    {
        int same = 1;
        for (size_t k = 0; same && keys[k]; k++) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(row, keys[k]);
            const cJSON *b = cJSON_GetObjectItemCaseSensitive(s, keys[k]);
            same = (!a && !b) || (a && b && cJSON_Compare(a, b, 1));
        }
        if (same)
            return 1;
    }
    return 0;
}

static sqlite3_stmt *devices_stmt(vr_db *db, vr_error *err)
{
    return vr_db_stmt(db, report_sql, "devices", err);
}

static sqlite3_stmt *prints_stmt(vr_db *db, vr_error *err)
{
    return vr_db_stmt(db, report_sql, "memory_prints", err);
}

static const char *const device_key[] = {"db_id", NULL};
static const char *const print_key[] = {"source_id", "device_db_id", "rank",
                                        "framework", "figure",       NULL};

typedef struct {
    const char *key;                                 /* the document's list */
    sqlite3_stmt *(*stmt)(vr_db *db, vr_error *err); /* its rows, all of them */
    const char *shown;                               /* rows left out: those of this list */
    const char *const *same;                         /* ...equal on these members */
} streamed;

static const streamed lists[] = {
    {"more_devices", devices_stmt, "devices", device_key},
    {"ranks", vr_ranks_stmt, NULL, NULL},
    {"more_memory_prints", prints_stmt, "memory_prints", print_key},
};

static const streamed *streamed_list(const cJSON *item)
{
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        if (cJSON_IsArray(item) && strcmp(item->string, lists[i].key) == 0)
            return &lists[i];
    return NULL;
}

/* "\t\"key\":\t[" row, row... "]" */
static int put_streamed(vr_db *db, writer *w, const cJSON *doc, const cJSON *item,
                        const streamed *l)
{
    sqlite3_stmt *st = l->stmt(db, w->err);
    if (!st)
        return -1;
    cJSON *empty = cJSON_CreateArray(); /* "[]", less its "]" */
    int opened = empty ? put_member(w, item->string, empty, 1) : out_of_memory(w);
    cJSON_Delete(empty);
    if (opened < 0)
        return -1;
    const cJSON *shown = l->shown ? cJSON_GetObjectItemCaseSensitive(doc, l->shown) : NULL;
    int rc, failed = 0;
    size_t n = 0;
    while (!failed && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        cJSON *row = vr_results_row(st);
        if (shown && is_shown(row, shown, l->same)) {
            cJSON_Delete(row);
            continue;
        }
        if (n++ && put(w, ", ", 2) < 0) {
            cJSON_Delete(row); /* put_element owns it only once called */
            failed = 1;
        } else {
            failed = put_element(w, row) < 0;
        }
    }
    sqlite3_reset(st);
    if (failed)
        return -1;
    if (rc != SQLITE_DONE)
        return vr_db_fail(db, w->err, "reading results");
    return put(w, "]", 1);
}

static int write_document(vr_db *db, const cJSON *doc, put_fn fn, void *ctx, vr_error *err)
{
    writer w = {fn, ctx, err};
    if (put(&w, "{\n", 2) < 0)
        return -1;
    const cJSON *item;
    cJSON_ArrayForEach(item, doc)
    {
        const streamed *l = streamed_list(item);
        if ((l ? put_streamed(db, &w, doc, item, l) : put_member(&w, item->string, item, 0)) < 0)
            return -1;
        if (item->next && put(&w, ",\n", 2) < 0)
            return -1;
    }
    return put(&w, "\n}", 2);
}

/*-*** the report ***/

/* cJSON writes C0 controls as \u00XX but DEL, C1 and bidi controls raw:
 * those become \uXXXX too, so no terminal or viewer acts on them. They can
 * only be inside strings, where the escape is the same character. (Bytes
 * that are not UTF-8, which the document never holds, would become
 * \ufffd.) */
static void put_json(vr_buf *out, const char *text, size_t len)
{
    size_t run = 0, i = 0;
    while (i < len) {
        uint32_t cp = 0;
        size_t n = vr_utf8_decode(text + i, len - i, &cp);
        if (n && (cp < 0x7f || !vr_utf8_is_control(cp))) {
            i += n;
            continue;
        }
        vr_buf_append(out, text + run, i - run);
        vr_buf_printf(out, "\\u%04x", n ? (unsigned)cp : 0xfffdu);
        i += n ? n : 1;
        run = i;
    }
    vr_buf_append(out, text + run, len - run);
}

/* Where the JSON writer's pieces go: escaped into `out`, which is
 * handed to the caller's flush (report.h) once it holds
 * flush_bytes, so a report of a row per device is not held. */
typedef struct {
    vr_buf *out;
    const vr_out_ctx *c;
} json_sink;

static int json_put(void *ctx, const char *text, size_t len, vr_error *err)
{
    json_sink *s = ctx;
    put_json(s->out, text, len);
    if (s->c->flush && s->out->len >= s->c->flush_bytes)
        return s->c->flush(s->c->flush_ctx, s->out, err);
    return 0;
}

int vr_out_json(const vr_out_ctx *c, cJSON *doc, vr_buf *out, vr_error *err)
{
    json_sink sink = {out, c};
    if (write_document(c->db, doc, json_put, &sink, err) < 0)
        return -1;
    vr_buf_putc(out, '\n');
    return 0;
}
