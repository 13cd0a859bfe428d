#include "render/results/results.h"

#include "db/category.h"
#include "util/sat.h"
#include "util/units.h"
#include "util/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "render/results/model_estimate.h"
#include "render/results/many.h"
#include "render/results/oom_groups.h"
#include "render/results/ranks.h"
#include "render/results/verdict.h"
#include "render/results/live_at_peak.h"

static const char report_sql[] = "schemas/report.sql";

/*-*** text ***/

/* Appends s with each byte that is not well-formed UTF-8 as the text
 * "\xFF" (the byte stays identifiable, e.g. in a file name, where U+FFFD
 * would hide it), and NUL as "\u0000". */
static void put_valid(vr_buf *out, const char *s, size_t len)
{
    size_t run = 0, i = 0;
    uint32_t cp;
    while (i < len) {
        size_t n = s[i] ? vr_utf8_decode(s + i, len - i, &cp) : 0;
        if (n) {
            i += n;
            continue;
        }
        char vis[VR_UTF8_VISIBLE_SIZE];
        vr_utf8_visible(s + i, len - i, vis);
        if (i > run)
            vr_buf_append(out, s + run, i - run);
        vr_buf_puts(out, vis);
        run = ++i;
    }
    if (len > run)
        vr_buf_append(out, s + run, len - run);
}

/* A character is its lead byte and the continuation bytes after it (at
 * most 3), so stepping works on broken UTF-8 too. */
static size_t char_after(const unsigned char *u, size_t len, size_t i)
{
    size_t start = i++;
    while (i < len && i - start < 4 && (u[i] & 0xc0) == 0x80)
        i++;
    return i;
}

static size_t char_before(const unsigned char *u, size_t i)
{
    size_t end = i--;
    while (i > 0 && end - i < 4 && (u[i] & 0xc0) == 0x80)
        i--;
    return i;
}

/* Text longer than `max` bytes as its first `head` and last `tail` characters. */
static void cut_text(vr_buf *out, const char *s, size_t len, size_t max, int head_chars,
                     int tail_chars)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t head = 0, tail = len;
    if (len > max) {
        for (int k = 0; k < head_chars && head < len; k++)
            head = char_after(u, len, head);
        for (int k = 0; k < tail_chars && tail > head; k++)
            tail = char_before(u, tail);
    }
    /* Short text, or wide characters that head and tail cover anyway. */
    if (len <= max || tail <= head) {
        put_valid(out, s, len);
        return;
    }
    char cut[32];
    vr_units_count((int64_t)(tail - head), cut, sizeof cut);
    put_valid(out, s, head);
    vr_buf_printf(out, " \xe2\x80\xa6 (%s bytes cut) \xe2\x80\xa6 ", cut);
    put_valid(out, s + tail, len - tail);
}

void vr_results_text(vr_buf *out, const char *s, size_t len)
{
    cut_text(out, s, len, VR_RESULTS_TEXT_MAX, VR_RESULTS_TEXT_HEAD, VR_RESULTS_TEXT_TAIL);
}

/* A log's lines and messages are what the reader came for: kept longer. */
#define LOG_TEXT_MAX 2048
#define LOG_TEXT_HEAD 1600
#define LOG_TEXT_TAIL 300

/* Columns of our own prose (a finding's title and detail, an advice's
 * setting) and JSON (its secondary kinds, evidence and figures), which
 * cite names already cut by the analysis that wrote them: kept whole. */
static int is_prose_key(const char *key)
{
    static const char *const keys[] = {"title",   "detail",  "secondary",
                                       "evidence", "setting", "figures"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(key, keys[i]) == 0)
            return 1;
    return 0;
}

static cJSON *text_value(sqlite3_stmt *st, int col, int long_text)
{
    vr_buf b = VR_BUF_INIT;
    const char *text = (const char *)sqlite3_column_text(st, col);
    size_t len = (size_t)sqlite3_column_bytes(st, col);
    if (is_prose_key(sqlite3_column_name(st, col)))
        put_valid(&b, text, len);
    else if (long_text)
        cut_text(&b, text, len, LOG_TEXT_MAX, LOG_TEXT_HEAD, LOG_TEXT_TAIL);
    else
        vr_results_text(&b, text, len);
    cJSON *item = cJSON_CreateString(b.data ? b.data : "");
    vr_buf_free(&b);
    return item;
}

/*-*** rows ***/

/* Columns the SQL yields as 0/1 that the document states as booleans. */
static int is_boolean_key(const char *key)
{
    return strcmp(key, "truncated") == 0 || strcmp(key, "totals_rebuilt") == 0 ||
           strcmp(key, "chosen") == 0 || strcmp(key, "would_fit") == 0;
}

static int is_integer_key(const char *key)
{
    size_t n = strlen(key);
    return (n >= 3 && strcmp(key + n - 3, "_ns") == 0) ||
           (n >= 5 && strcmp(key + n - 5, "bytes") == 0);
}

static cJSON *column_value(sqlite3_stmt *st, int col, int long_text)
{
    char num[32];
    switch (sqlite3_column_type(st, col)) {
    case SQLITE_INTEGER:
        if (is_boolean_key(sqlite3_column_name(st, col)))
            return cJSON_CreateBool(sqlite3_column_int64(st, col) != 0);
        snprintf(num, sizeof num, "%lld", (long long)sqlite3_column_int64(st, col));
        return cJSON_CreateRaw(num);
    case SQLITE_FLOAT:
        /* SQLite turns an integer sum that overflows into a float; sizes
         * and times stay integers (clamped). */
        if (is_integer_key(sqlite3_column_name(st, col))) {
            snprintf(num, sizeof num, "%lld",
                     (long long)vr_sat_from_double(sqlite3_column_double(st, col)));
            return cJSON_CreateRaw(num);
        }
        return cJSON_CreateNumber(sqlite3_column_double(st, col));
    case SQLITE_TEXT:
        return text_value(st, col, long_text);
    default:
        return cJSON_CreateNull();
    }
}

static cJSON *row_object(sqlite3_stmt *st, int long_text)
{
    cJSON *obj = cJSON_CreateObject();
    for (int c = 0; c < sqlite3_column_count(st); c++)
        cJSON_AddItemToObject(obj, sqlite3_column_name(st, c), column_value(st, c, long_text));
    return obj;
}

/* Runs a bound statement; each row becomes an object in a new array.
 * long_text: its text is a log's, kept longer. */
static cJSON *rows_of(vr_db *db, sqlite3_stmt *st, int long_text, vr_error *err)
{
    cJSON *arr = cJSON_CreateArray();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        cJSON_AddItemToArray(arr, row_object(st, long_text));
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        vr_db_fail(db, err, "reading results");
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}

static cJSON *rows(vr_db *db, sqlite3_stmt *st, vr_error *err)
{
    return rows_of(db, st, 0, err);
}

cJSON *vr_results_rows(vr_db *db, sqlite3_stmt *st, vr_error *err)
{
    return rows(db, st, err);
}

cJSON *vr_results_row(sqlite3_stmt *st)
{
    return row_object(st, 0);
}

int vr_results_column(sqlite3_stmt *st, const char *name)
{
    for (int c = 0; c < sqlite3_column_count(st); c++)
        if (strcmp(sqlite3_column_name(st, c), name) == 0)
            return c;
    return -1;
}

/* What vr_results_int reads of the value column_value() makes. */
int vr_results_column_int(sqlite3_stmt *st, int col, long long *out)
{
    if (col < 0)
        return 0;
    switch (sqlite3_column_type(st, col)) {
    case SQLITE_INTEGER:
        if (is_boolean_key(sqlite3_column_name(st, col)))
            return 0;
        *out = (long long)sqlite3_column_int64(st, col);
        return 1;
    case SQLITE_FLOAT:
        *out = (long long)vr_sat_from_double(sqlite3_column_double(st, col));
        return 1;
    default:
        return 0;
    }
}

cJSON *vr_results_rows_kept(vr_db *db, sqlite3_stmt *st, const unsigned char *keep, size_t n,
                            vr_error *err)
{
    cJSON *arr = cJSON_CreateArray();
    int rc;
    for (size_t i = 0; (rc = sqlite3_step(st)) == SQLITE_ROW; i++)
        if (i < n && keep[i])
            cJSON_AddItemToArray(arr, row_object(st, 0));
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        vr_db_fail(db, err, "reading results");
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}

/* Two-column (kind, count) rows as one object {kind: count}. */
static cJSON *counts(vr_db *db, const char *block, long long source_id, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, block, err);
    if (!st || vr_db_bind_int(st, ":source", source_id, err) < 0)
        return NULL;
    cJSON *obj = cJSON_CreateObject();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char num[32];
        vr_buf kind = VR_BUF_INIT; /* text from the database, as any */
        vr_results_text(&kind, (const char *)sqlite3_column_text(st, 0),
                        (size_t)sqlite3_column_bytes(st, 0));
        snprintf(num, sizeof num, "%lld", (long long)sqlite3_column_int64(st, 1));
        cJSON_AddItemToObject(obj, kind.data ? kind.data : "", cJSON_CreateRaw(num));
        vr_buf_free(&kind);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        vr_db_fail(db, err, "reading source counts");
        cJSON_Delete(obj);
        return NULL;
    }
    return obj;
}

int vr_results_int(const cJSON *item, long long *out)
{
    if (cJSON_IsRaw(item) && item->valuestring) {
        char *end;
        *out = strtoll(item->valuestring, &end, 10);
        return *end == '\0';
    }
    if (cJSON_IsNumber(item)) {
        *out = vr_sat_from_double(item->valuedouble);
        return 1;
    }
    return 0;
}

static long long get_int(const cJSON *obj, const char *key, long long dflt)
{
    long long v;
    return vr_results_int(cJSON_GetObjectItemCaseSensitive(obj, key), &v) ? v : dflt;
}

static int add_sources(vr_db *db, cJSON *doc, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "sources", err);
    cJSON *sources = st ? rows(db, st, err) : NULL;
    if (!sources)
        return -1;
    cJSON *s;
    cJSON_ArrayForEach(s, sources)
    {
        long long id = get_int(s, "id", 0);
        cJSON *tolerated = counts(db, "source_tallies", id, err);
        cJSON *records = counts(db, "source_records", id, err);
        if (!tolerated || !records) {
            cJSON_Delete(tolerated);
            cJSON_Delete(records);
            cJSON_Delete(sources);
            return -1;
        }
        cJSON_AddItemToObject(s, "tolerated", tolerated);
        cJSON_AddItemToObject(s, "records", records);
    }
    cJSON_AddItemToObject(doc, "sources", sources);
    return 0;
}

/* A parameter of a block and its value. */
typedef struct {
    const char *name;
    long long value;
} named_int;

/* Adds rows of `block` (bound with :device, then the `extra` parameters) as `key`. */
static int add_device_rows(vr_db *db, cJSON *dev, const char *key, const char *block,
                           long long id, const named_int *extra, int nextra, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, block, err);
    if (!st || vr_db_bind_int(st, ":device", id, err) < 0)
        return -1;
    for (int i = 0; i < nextra; i++)
        if (vr_db_bind_int(st, extra[i].name, extra[i].value, err) < 0)
            return -1;
    cJSON *arr = rows(db, st, err);
    if (!arr)
        return -1;
    cJSON_AddItemToObject(dev, key, arr);
    return 0;
}

static long long peak_event(vr_db *db, long long device, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "peak_event", err);
    if (!st || vr_db_bind_int(st, ":device", device, err) < 0)
        return -2;
    long long id = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL
                       ? sqlite3_column_int64(st, 0)
                       : -1;
    sqlite3_reset(st);
    return id;
}

/*-*** what an allocator snapshot adds to a device ***/

/* The columns of the snapshot's end state; the three that say how free
 * memory is cut up go into "fragmentation". */
static const char *const fragmentation_keys[] = {
    "free_in_segments_bytes", "internal_waste_bytes", "inactive_split_bytes",
    "pending_free_bytes"};

/* The one row of report.sql's `block` for the device, or NULL in *row
 * when it has none. Returns -1 on a database error. */
static int device_row(vr_db *db, const char *block, long long id, cJSON **row, vr_error *err)
{
    *row = NULL;
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, block, err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", id, err) < 0)
        return -1;
    cJSON *list = rows(db, st, err);
    if (!list)
        return -1;
    *row = cJSON_DetachItemFromArray(list, 0);
    cJSON_Delete(list);
    return 0;
}

/* The rows of report.sql's `block`, its named parameter `param` bound to
 * `value`, as the list `key` of `obj`. */
static int add_rows_by(vr_db *db, cJSON *obj, const char *key, const char *block,
                       const char *param, long long value, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, block, err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, param, value, err) < 0)
        return -1;
    cJSON *list = rows(db, st, err);
    if (!list)
        return -1;
    cJSON_AddItemToObject(obj, key, list);
    return 0;
}

/* Moves every member of `row` into `dev`, and frees the row. */
static void merge_row(cJSON *dev, cJSON *row)
{
    cJSON *item;
    while (row && (item = row->child)) {
        cJSON_DetachItemViaPointer(row, item);
        cJSON_AddItemToObject(dev, item->string, item);
    }
    cJSON_Delete(row);
}

static int add_snapshot_state(vr_db *db, cJSON *dev, long long id, vr_error *err)
{
    cJSON *row;
    if (device_row(db, "device_snapshot", id, &row, err) < 0)
        return -1;
    if (!row)
        return 0;
    cJSON *frag = cJSON_CreateObject();
    for (size_t i = 0; i < sizeof fragmentation_keys / sizeof *fragmentation_keys; i++)
        cJSON_AddItemToObject(frag, fragmentation_keys[i],
                              cJSON_DetachItemFromObjectCaseSensitive(row, fragmentation_keys[i]));
    merge_row(dev, row);
    cJSON_AddItemToObject(dev, "fragmentation", frag);
    return 0;
}

/* What nvidia-smi saw of the device (the GPUs matched to it by the
 * analysis, match_gpus): its readings, the most it saw used, and the
 * processes on it. */
static int add_smi(vr_db *db, cJSON *dev, long long id, vr_error *err)
{
    cJSON *row;
    if (device_row(db, "device_smi", id, &row, err) < 0)
        return -1;
    merge_row(dev, row);
    return add_rows_by(db, dev, "smi_processes", "device_smi_processes", ":device", id, err);
}

/* A stack as text lines, innermost first, at most `limit`. */
static cJSON *stack_lines(vr_db *db, long long stack, long long limit, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "stack_frames", err);
    if (!st)
        return NULL;
    if (vr_db_bind_int(st, ":stack", stack, err) < 0 ||
        vr_db_bind_int(st, ":limit", limit, err) < 0)
        return NULL;
    cJSON *lines = cJSON_CreateArray();
    vr_buf b = VR_BUF_INIT;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_buf_clear(&b);
        vr_results_text(&b, (const char *)sqlite3_column_text(st, 0),
                        (size_t)sqlite3_column_bytes(st, 0));
        cJSON_AddItemToArray(lines, cJSON_CreateString(b.data ? b.data : ""));
    }
    vr_buf_free(&b);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        cJSON_Delete(lines);
        vr_db_fail(db, err, "reading a stack");
        return NULL;
    }
    return lines;
}

/* Top allocations whose stack is known gain "stack" (their stack_id
 * column is the database's, not the document's). */
static int add_stacks(vr_db *db, cJSON *dev, vr_error *err)
{
    cJSON *a;
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(dev, "top_allocations"))
    {
        cJSON *id = cJSON_DetachItemFromObjectCaseSensitive(a, "stack_id");
        long long stack;
        int known = vr_results_int(id, &stack);
        cJSON_Delete(id);
        if (!known)
            continue;
        cJSON *lines = stack_lines(db, stack, 16, err);
        if (!lines)
            return -1;
        cJSON_AddItemToObject(a, "stack", lines);
    }
    return 0;
}

/* A site's stack (report.sql: site_stack_frames) as "stack", and the C++
 * frames left out of it as "stack_skipped". */
static int add_site_stack(vr_db *db, cJSON *site, long long stack, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "site_stack_frames", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":stack", stack, err) < 0 ||
        vr_db_bind_int(st, ":limit", 16, err) < 0)
        return -1;
    cJSON *lines = cJSON_CreateArray();
    long long skipped = 0;
    vr_buf b = VR_BUF_INIT;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_buf_clear(&b);
        vr_results_text(&b, (const char *)sqlite3_column_text(st, 0),
                        (size_t)sqlite3_column_bytes(st, 0));
        cJSON_AddItemToArray(lines, cJSON_CreateString(b.data ? b.data : ""));
        skipped = sqlite3_column_int64(st, 1);
    }
    vr_buf_free(&b);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        cJSON_Delete(lines);
        return vr_db_fail(db, err, "reading a stack");
    }
    char num[32];
    snprintf(num, sizeof num, "%lld", skipped);
    cJSON_AddItemToObject(site, "stack", lines);
    cJSON_AddItemToObject(site, "stack_skipped", cJSON_CreateRaw(num));
    return 0;
}

/* Each top site gains "stack": its example stack (a live allocation of
 * the site's), its Python frames innermost first (all frames when it has
 * none), at most 16; "stack_skipped": the C++ frames left out;
 * "stack_depth": the whole stack's. Sites with no known stack have none
 * of these keys. */
static int add_site_stacks(vr_db *db, cJSON *sites, vr_error *err)
{
    cJSON *site;
    cJSON_ArrayForEach(site, sites)
    {
        cJSON *id = cJSON_DetachItemFromObjectCaseSensitive(site, "stack_id");
        long long stack;
        int known = vr_results_int(id, &stack);
        cJSON_Delete(id);
        if (!known) {
            cJSON_DeleteItemFromObjectCaseSensitive(site, "stack_depth");
            continue;
        }
        if (add_site_stack(db, site, stack, err) < 0)
            return -1;
    }
    return 0;
}

static int add_top_sites(vr_db *db, cJSON *dev, long long id, long long limit, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "top_sites", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", id, err) < 0 ||
        vr_db_bind_int(st, ":limit", limit, err) < 0)
        return -1;
    cJSON *sites = rows(db, st, err);
    if (!sites)
        return -1;
    if (add_site_stacks(db, sites, err) < 0) {
        cJSON_Delete(sites);
        return -1;
    }
    cJSON_AddItemToObject(dev, "top_sites", sites);
    return 0;
}

/* The snapshots found to be this device's too (device_join), with why:
 * "same_device", absent when none was joined. */
static int add_same_device(vr_db *db, cJSON *dev, long long id, vr_error *err)
{
    if (add_device_rows(db, dev, "same_device", "device_joins", id, NULL, 0, err) < 0)
        return -1;
    if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(dev, "same_device")) == 0)
        cJSON_DeleteItemFromObjectCaseSensitive(dev, "same_device");
    return 0;
}

/* The user's stage a snapshot recorded around the peak, when one spans it
 * ("peak_stage", absent otherwise). */
static int add_peak_stage(vr_db *db, cJSON *dev, long long id, vr_error *err)
{
    cJSON *row;
    if (device_row(db, "peak_stage", id, &row, err) < 0)
        return -1;
    cJSON *stage = row ? cJSON_DetachItemFromObjectCaseSensitive(row, "stage") : NULL;
    if (stage && cJSON_IsString(stage))
        cJSON_AddItemToObject(dev, "peak_stage", stage);
    else
        cJSON_Delete(stage);
    cJSON_Delete(row);
    return 0;
}

/*-*** where the memory went (issue 10) ***/

/* "peak_breakdown": the peak's bytes by category, every category in
 * PyTorch's order (null without a peak), and "categories_stated": whether
 * a counted source states them (else the categorize pass's rules do). */
static int add_peak_breakdown(vr_db *db, cJSON *dev, long long id, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "peak_breakdown", err);
    sqlite3_stmt *stated = vr_db_stmt(db, report_sql, "categories_stated", err);
    if (!st || !stated || vr_db_bind_int(st, ":device", id, err) < 0 ||
        vr_db_bind_int(stated, ":device", id, err) < 0)
        return -1;
    int64_t bytes[VR_CATEGORY_COUNT] = {0};
    int rc, found = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int c = vr_category_index((const char *)sqlite3_column_text(st, 0));
        bytes[c] = vr_sat_add(bytes[c], sqlite3_column_int64(st, 1));
        found = 1;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return vr_db_fail(db, err, "reading the peak's categories");
    cJSON *obj = found ? cJSON_CreateObject() : cJSON_CreateNull();
    for (int i = 0; found && i < VR_CATEGORY_COUNT; i++) {
        char num[32]; /* raw: exact beyond 2^53 */
        snprintf(num, sizeof num, "%lld", (long long)bytes[i]);
        cJSON_AddItemToObject(obj, vr_category_names[i], cJSON_CreateRaw(num));
    }
    cJSON_AddItemToObject(dev, "peak_breakdown", obj);
    rc = sqlite3_step(stated);
    cJSON_AddBoolToObject(dev, "categories_stated",
                          rc == SQLITE_ROW && sqlite3_column_int(stated, 0) == 1);
    sqlite3_reset(stated);
    return rc == SQLITE_ROW ? 0 : vr_db_fail(db, err, "reading the categories' source");
}

/* out_of_memory[]: the device's errors, at most VR_RESULTS_DEVICE_OOMS
 * (every k-th past that, evenly over the run), and out_of_memory_count:
 * how many there are. */
static int add_device_ooms(vr_db *db, cJSON *dev, long long id, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "out_of_memory", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", id, err) < 0 ||
        vr_db_bind_int(st, ":limit", VR_RESULTS_DEVICE_OOMS, err) < 0)
        return -1;
    cJSON *list = rows(db, st, err);
    if (!list)
        return -1;
    long long n = get_int(cJSON_GetArrayItem(list, 0), "n", 0);
    cJSON *e;
    cJSON_ArrayForEach(e, list) cJSON_DeleteItemFromObjectCaseSensitive(e, "n");
    cJSON_AddItemToObject(dev, "out_of_memory", list);
    char num[32];
    snprintf(num, sizeof num, "%lld", n);
    cJSON_AddItemToObject(dev, "out_of_memory_count", cJSON_CreateRaw(num));
    return 0;
}

static int add_device_details(vr_db *db, cJSON *dev, const vr_results_opts *o, vr_error *err)
{
    long long id = get_int(dev, "db_id", -1);
    long long peak = peak_event(db, id, err);
    if (peak < -1)
        return -1;
    const named_int top[3] = {{":peak_event", peak},
                              {":base_time_ns", get_int(dev, "base_time_ns", 0)},
                              {":limit", o->top_allocations}};
    const named_int ops[1] = {{":limit", o->operators}};
    return add_device_rows(db, dev, "top_allocations", "top_allocations", id, top, 3, err) < 0 ||
                   add_device_rows(db, dev, "steps", "steps", id, NULL, 0, err) < 0 ||
                   add_device_rows(db, dev, "phase_peaks", "phase_peaks", id, NULL, 0, err) < 0 ||
                   add_device_rows(db, dev, "operators", "operators", id, ops, 1, err) < 0 ||
                   add_device_ooms(db, dev, id, err) < 0 ||
                   add_device_rows(db, dev, "sources", "device_sources", id, NULL, 0, err) < 0 ||
                   add_same_device(db, dev, id, err) < 0 ||
                   add_stacks(db, dev, err) < 0 || add_snapshot_state(db, dev, id, err) < 0 ||
                   add_top_sites(db, dev, id, o->top_allocations, err) < 0 ||
                   add_smi(db, dev, id, err) < 0 ||
                   vr_where_add(db, dev, id, peak, err) < 0 ||
                   add_peak_stage(db, dev, id, err) < 0 ||
                   add_peak_breakdown(db, dev, id, err) < 0
               ? -1
               : (vr_inferred_add(dev), 0);
}

/* The devices an error or a finding names (report.sql flagged_devices),
 * ascending. */
static int64_t *flagged_devices(vr_db *db, size_t *n, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "flagged_devices", err);
    if (!st)
        return NULL;
    int64_t *ids = vr_xmalloc(sizeof *ids);
    size_t cap = 1;
    int rc;
    *n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_xgrow(&ids, &cap, *n + 1, sizeof *ids, 8);
        ids[(*n)++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        free(ids);
        vr_db_fail(db, err, "reading the devices findings name");
        return NULL;
    }
    return ids;
}

static int has_id(const int64_t *ids, size_t n, int64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid] == id)
            return 1;
        ids[mid] < id ? (lo = mid + 1) : (hi = mid);
    }
    return 0;
}

static int has_long(const long long *ids, size_t n, long long id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

/* The devices read once (many.h: each device's record, flagged when an
 * error or a finding names it or it is near capacity, weighed by its
 * peak): the rows kept into *kept, the summary into *summary (NULL: all
 * kept); and the rows of `also` (the devices of the ranks shown) into
 * `more`, less those kept. */
static int read_devices(vr_db *db, sqlite3_stmt *st, const long long *also, size_t nalso,
                        cJSON **kept, cJSON **summary, cJSON *more, vr_error *err)
{
    size_t nflagged;
    int64_t *flagged = flagged_devices(db, &nflagged, err);
    if (!flagged)
        return -1;
    int id_col = vr_results_column(st, "db_id"), near_col = vr_results_column(st, "near_capacity"),
        peak_col = vr_results_column(st, "peak_allocated_bytes");
    vr_many_stream ms;
    vr_many_stream_init(&ms);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        long long id = -1, peak = 0;
        vr_results_column_int(st, id_col, &id);
        vr_many_rank r = {has_id(flagged, nflagged, id) ||
                              (near_col >= 0 && sqlite3_column_type(st, near_col) == SQLITE_TEXT),
                          vr_results_column_int(st, peak_col, &peak), 0};
        r.weight = r.has_weight ? peak : 0;
        if (nalso && has_long(also, nalso, id))
            cJSON_AddItemToArray(more, row_object(st, 0));
        vr_many_offer(&ms, &r, vr_many_wants(&ms, &r) ? row_object(st, 0) : NULL);
    }
    sqlite3_reset(st);
    free(flagged);
    *kept = vr_many_finish(&ms, "peak_allocated_bytes", summary);
    const cJSON *k;
    cJSON_ArrayForEach(k, *kept)
    {
        cJSON *m = more->child;
        while (m && !cJSON_Compare(cJSON_GetObjectItemCaseSensitive(m, "db_id"),
                                   cJSON_GetObjectItemCaseSensitive(k, "db_id"), 1))
            m = m->next;
        if (m)
            cJSON_Delete(cJSON_DetachItemViaPointer(more, m));
    }
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading results");
}

/* devices[]: the devices shown in full (many.h, chosen as the rows are
 * read), each with its details; with more than VR_MANY_IN_FULL,
 * devices_summary says how many others and their peaks' range, and
 * more_devices[] is left for the JSON writer (json_out.h), which gives
 * each other device's row; in a view, more_devices[] holds the rows of
 * the ranks' devices (`ranks`) not in devices[], which their charts
 * read. Only the devices in full are read further. */
static int add_devices(vr_db *db, cJSON *doc, const vr_results_opts *o, const vr_ranks *ranks,
                       vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "devices", err);
    if (!st)
        return -1;
    cJSON *devices = NULL, *summary = NULL, *more = cJSON_CreateArray();
    int rc = read_devices(db, st, o->view ? ranks->devices : NULL, o->view ? ranks->ndevices : 0,
                          &devices, &summary, more, err);
    cJSON_AddItemToObject(doc, "devices", devices);
    cJSON_AddItemToObject(doc, "devices_summary", summary ? summary : cJSON_CreateNull());
    cJSON_AddItemToObject(doc, "more_devices", more);
    if (rc < 0)
        return -1;
    cJSON *dev;
    cJSON_ArrayForEach(dev, devices)
    {
        if (add_device_details(db, dev, o, err) < 0)
            return -1;
    }
    return 0;
}

/* The rows of report.sql's block `key` as the document's list `key`. */
static int add_list(vr_db *db, cJSON *doc, const char *key, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, key, err);
    cJSON *list = st ? rows(db, st, err) : NULL;
    if (!list)
        return -1;
    cJSON_AddItemToObject(doc, key, list);
    return 0;
}

/*-*** findings ***/

/* A column of JSON the diagnosis wrote (secondary, evidence) as the
 * value itself; the JSON is our own, so a failed parse is a bug shown as
 * null rather than a crash. */
static void parse_member(cJSON *obj, const char *key)
{
    cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsString(item))
        return;
    cJSON *parsed = cJSON_Parse(item->valuestring);
    cJSON_ReplaceItemInObjectCaseSensitive(obj, key, parsed ? parsed : cJSON_CreateNull());
}

/* An advice list's rows with figures{} parsed. */
static void parse_advice(cJSON *list)
{
    cJSON *a;
    cJSON_ArrayForEach(a, list)
    {
        parse_member(a, "figures");
    }
}

/* Where a row of findings or advice (its finding_id and oom_id first)
 * goes: a finding of no OOM is listed; an OOM's as its group says. */
static vr_oom_place place_of(sqlite3_stmt *st, const vr_oom_groups *groups, int *group)
{
    if (sqlite3_column_type(st, 1) == SQLITE_NULL)
        return VR_OOM_LISTED;
    return vr_oom_groups_place(groups, sqlite3_column_int64(st, 0), group);
}

/* The one row of the bound statement `st`, as an object appended to
 * `list`. */
static cJSON *add_one_row(vr_db *db, cJSON *list, sqlite3_stmt *st, vr_error *err)
{
    cJSON *rows_found = rows(db, st, err);
    if (!rows_found)
        return NULL;
    cJSON *row = cJSON_DetachItemFromArray(rows_found, 0);
    cJSON_Delete(rows_found);
    if (!row) {
        vr_fail(err, "%s: a finding or advice went missing while the report was written",
                vr_db_path(db));
        return NULL;
    }
    cJSON_AddItemToArray(list, row);
    return row;
}

/* A listed finding with secondary[] and evidence{} parsed, its advice[]
 * (the advise pass's, best saving first) and, first of its group, its
 * more_like_it{}. */
static int add_finding(vr_db *db, cJSON *list, long long id, vr_oom_place place,
                       const vr_oom_groups *groups, int group, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "finding_row", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":finding", id, err) < 0)
        return -1;
    cJSON *f = add_one_row(db, list, st, err);
    if (!f)
        return -1;
    parse_member(f, "secondary");
    parse_member(f, "evidence");
    if (place == VR_OOM_FIRST)
        cJSON_AddItemToObject(f, "more_like_it", vr_oom_groups_like_it(groups, group));
    if (add_rows_by(db, f, "advice", "finding_advice", ":finding", id, err) < 0)
        return -1;
    parse_advice(cJSON_GetObjectItemCaseSensitive(f, "advice"));
    return 0;
}

/* findings[]: report.sql's findings in its order, but the OOM findings
 * their group's first tells (oom_groups.h). */
static int add_findings(vr_db *db, cJSON *doc, const vr_oom_groups *groups, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "findings", err);
    if (!st)
        return -1;
    cJSON *list = cJSON_AddArrayToObject(doc, "findings");
    int rc, group = -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_oom_place place = place_of(st, groups, &group);
        if (place != VR_OOM_FOLDED &&
            add_finding(db, list, sqlite3_column_int64(st, 0), place, groups, group, err) < 0) {
            sqlite3_reset(st);
            return -1;
        }
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading the findings");
}

static int add_advice_row(vr_db *db, cJSON *list, sqlite3_stmt *keys, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "advice_row", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":finding", sqlite3_column_int64(keys, 0), err) < 0 ||
        vr_db_bind_text(st, ":remedy", (const char *)sqlite3_column_text(keys, 2),
                        (size_t)sqlite3_column_bytes(keys, 2), err) < 0)
        return -1;
    return add_one_row(db, list, st, err) ? 0 : -1;
}

/* advice[]: the listed findings' advice ranked by saving across them. */
static int add_advice(vr_db *db, cJSON *doc, const vr_oom_groups *groups, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "advice", err);
    if (!st)
        return -1;
    cJSON *list = cJSON_AddArrayToObject(doc, "advice");
    int rc, group;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (place_of(st, groups, &group) != VR_OOM_FOLDED && add_advice_row(db, list, st, err) < 0) {
            sqlite3_reset(st);
            return -1;
        }
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return vr_db_fail(db, err, "reading the advice");
    parse_advice(list);
    return 0;
}

/* The allocator's own figures, per source and dump (memory_stats() and
 * memory_summary() inputs): report.sql's allocator_stats. */
static int add_allocator_stats(vr_db *db, cJSON *doc, vr_error *err)
{
    return add_list(db, doc, "allocator_stats", err);
}

/*-*** what nvidia-smi saw ***/

/* gpus[]: each GPU of a monitoring source with its processes
 * (smi_processes); the database's gpu id is read and dropped. */
static int add_gpus(vr_db *db, cJSON *doc, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "gpus", err);
    cJSON *gpus = st ? rows(db, st, err) : NULL;
    if (!gpus)
        return -1;
    cJSON_AddItemToObject(doc, "gpus", gpus);
    cJSON *g;
    cJSON_ArrayForEach(g, gpus)
    {
        long long id = get_int(g, "gpu_id", -1);
        cJSON_DeleteItemFromObjectCaseSensitive(g, "gpu_id");
        if (add_rows_by(db, g, "smi_processes", "gpu_processes", ":gpu", id, err) < 0)
            return -1;
    }
    return 0;
}

/*-*** memory prints of job logs (issue 13) ***/

static const char *text_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* A memory_prints[] row's prints as points[] (its timeline). */
static int add_print_points(vr_db *db, cJSON *row, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "memory_print_points", err);
    if (!st)
        return -1;
    long long source = 0, device = 0, rank = 0;
    vr_results_int(cJSON_GetObjectItemCaseSensitive(row, "source_id"), &source);
    int has_device = vr_results_int(cJSON_GetObjectItemCaseSensitive(row, "device_db_id"), &device);
    int has_rank = vr_results_int(cJSON_GetObjectItemCaseSensitive(row, "rank"), &rank);
    const char *framework = text_of(row, "framework"), *figure = text_of(row, "figure");
    if (vr_db_bind_int(st, ":source", source, err) < 0 ||
        vr_db_bind_opt_int(st, ":device", has_device, device, err) < 0 ||
        vr_db_bind_opt_int(st, ":rank", has_rank, rank, err) < 0 ||
        vr_db_bind_text(st, ":framework", framework, strlen(framework), err) < 0 ||
        vr_db_bind_text(st, ":figure", figure, strlen(figure), err) < 0)
        return -1;
    cJSON *list = rows(db, st, err);
    if (!list)
        return -1;
    cJSON_AddItemToObject(row, "points", list);
    return 0;
}

/* memory_prints[]: report.sql's rows shown in full (many.h, chosen as
 * the rows are read: flagged when they grow per step, a leak's, weighed
 * by their highest allocated), each with its points[]; with more than
 * VR_MANY_IN_FULL rows, memory_prints_summary counts the others, whose
 * figures (no points) the JSON writer gives as more_memory_prints[]
 * (json_out.h); the document leaves that list empty. */
static int add_memory_prints(vr_db *db, cJSON *doc, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "memory_prints", err);
    if (!st)
        return -1;
    int growth_col = vr_results_column(st, "growth_per_step_bytes"),
        max_col = vr_results_column(st, "max_allocated_bytes");
    vr_many_stream ms;
    vr_many_stream_init(&ms);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        long long growth = 0, max = 0;
        vr_many_rank r = {vr_results_column_int(st, growth_col, &growth) && growth > 0,
                          vr_results_column_int(st, max_col, &max), 0};
        r.weight = max;
        vr_many_offer(&ms, &r, vr_many_wants(&ms, &r) ? row_object(st, 0) : NULL);
    }
    sqlite3_reset(st);
    cJSON *summary, *list = vr_many_finish(&ms, "max_allocated_bytes", &summary);
    cJSON_AddItemToObject(doc, "memory_prints", list);
    cJSON_AddItemToObject(doc, "memory_prints_summary", summary ? summary : cJSON_CreateNull());
    cJSON_AddArrayToObject(doc, "more_memory_prints");
    if (rc != SQLITE_DONE)
        return vr_db_fail(db, err, "reading results");
    cJSON *row;
    cJSON_ArrayForEach(row, list)
        if (add_print_points(db, row, err) < 0)
            return -1;
    return 0;
}

/*-*** profiler tables printed in job logs (issue 13) ***/

/* "a\tb" (the stored header names, already cut and made valid) as ["a", "b"]. */
static cJSON *split_columns(const char *joined)
{
    cJSON *list = cJSON_CreateArray();
    for (const char *p = joined; p;) {
        const char *tab = strchr(p, '\t');
        size_t n = tab ? (size_t)(tab - p) : strlen(p);
        char *name = vr_xmalloc(n + 1);
        memcpy(name, p, n);
        name[n] = '\0';
        cJSON_AddItemToArray(list, cJSON_CreateString(name));
        free(name);
        p = tab ? tab + 1 : NULL;
    }
    return list;
}

/* profiler_tables[]: {source, line, columns[], row_count, truncated,
 * ops[]}; the database's table id is read and dropped. */
static int add_profiler_tables(vr_db *db, cJSON *doc, vr_error *err)
{
    if (add_list(db, doc, "profiler_tables", err) < 0)
        return -1;
    cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(doc, "profiler_tables"))
    {
        long long id = get_int(t, "table_id", -1);
        cJSON_DeleteItemFromObjectCaseSensitive(t, "table_id");
        const cJSON *cols = cJSON_GetObjectItemCaseSensitive(t, "columns");
        cJSON_ReplaceItemInObjectCaseSensitive(
            t, "columns", split_columns(cJSON_IsString(cols) ? cols->valuestring : ""));
        if (add_rows_by(db, t, "ops", "profiler_table_ops", ":table", id, err) < 0)
            return -1;
    }
    return 0;
}

/*-*** out-of-memory errors from every source (issue 9) ***/

/* The processes an error lists: {"pid": N or "self", "used_bytes": N}. */
static cJSON *oom_processes(vr_db *db, long long oom, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "oom_processes", err);
    if (!st)
        return NULL;
    if (vr_db_bind_int(st, ":oom", oom, err) < 0)
        return NULL;
    cJSON *list = rows(db, st, err);
    cJSON *p;
    cJSON_ArrayForEach(p, list)
    {
        if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(p, "pid")))
            cJSON_ReplaceItemInObjectCaseSensitive(p, "pid", cJSON_CreateString("self"));
    }
    return list;
}

static cJSON *oom_excerpt(vr_db *db, long long oom, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "oom_excerpt", err);
    if (!st)
        return NULL;
    if (vr_db_bind_int(st, ":oom", oom, err) < 0)
        return NULL;
    return rows_of(db, st, 1, err);
}

/* Bytes of text in an excerpt's lines. */
static size_t excerpt_bytes(const cJSON *excerpt)
{
    size_t n = 0;
    const cJSON *l;
    cJSON_ArrayForEach(l, excerpt)
    {
        const cJSON *text = cJSON_GetObjectItemCaseSensitive(l, "text");
        n += cJSON_IsString(text) ? strlen(text->valuestring) : 0;
    }
    return n;
}

/* An error's processes and, while the budget lasts, its excerpt ([]
 * past it). */
static int add_oom_details(vr_db *db, cJSON *e, long long oom, int n, size_t *excerpt_text,
                           vr_error *err)
{
    cJSON *procs = oom_processes(db, oom, err);
    if (!procs)
        return -1;
    cJSON_AddItemToObject(e, "processes", procs);
    cJSON *excerpt = n < VR_RESULTS_OOM_EXCERPTS && *excerpt_text < VR_RESULTS_OOM_EXCERPT_TEXT
                         ? oom_excerpt(db, oom, err)
                         : cJSON_CreateArray();
    if (!excerpt)
        return -1;
    *excerpt_text += excerpt_bytes(excerpt);
    cJSON_AddItemToObject(e, "excerpt", excerpt);
    return 0;
}

static int add_oom_count(vr_db *db, cJSON *doc, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "oom_event_count", err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    long long n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW)
        return vr_db_fail(db, err, "counting the out-of-memory errors");
    char num[32];
    snprintf(num, sizeof num, "%lld", n);
    cJSON_AddItemToObject(doc, "oom_event_count", cJSON_CreateRaw(num));
    return 0;
}

/* "oom_events": the first VR_RESULTS_OOM_LISTED errors with their
 * figures, their processes and, the first VR_RESULTS_OOM_EXCERPTS of them
 * from a log, the lines around them (text cut and made valid like all
 * text; at most about VR_RESULTS_OOM_EXCERPT_TEXT bytes in all);
 * "oom_event_count": all of them; "oom_groups": all of them by shape
 * (oom_groups.h). Bounded, whatever the number of errors. */
static int add_oom_events(vr_db *db, cJSON *doc, const vr_oom_groups *groups, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "oom_events", err);
    cJSON *list = st && vr_db_bind_int(st, ":limit", VR_RESULTS_OOM_LISTED, err) == 0
                      ? rows_of(db, st, 1, err)
                      : NULL;
    if (!list)
        return -1;
    cJSON_AddItemToObject(doc, "oom_events", list);
    if (add_oom_count(db, doc, err) < 0)
        return -1;
    cJSON_AddItemToObject(doc, "oom_groups", vr_oom_groups_list(groups));
    cJSON *e;
    int n = 0;
    size_t excerpt_text = 0;
    cJSON_ArrayForEach(e, list)
    {
        cJSON *id = cJSON_DetachItemFromObjectCaseSensitive(e, "oom_id");
        long long oom;
        int known = vr_results_int(id, &oom);
        cJSON_Delete(id);
        if (known && add_oom_details(db, e, oom, n++, &excerpt_text, err) < 0)
            return -1;
    }
    return 0;
}

/* Never a report from derived tables that do not match the sources (an
 * analysis that failed or was killed after an import). */
static int check_analysed(vr_db *db, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "analysis_complete", err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    int complete = rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(db, err, "reading the analysis state");
    if (!complete)
        return vr_fail(err, "%s: the analysis is not complete; 'vramreport report --db %s' "
                            "finishes it",
                       vr_db_path(db), vr_db_path(db));
    return 0;
}

cJSON *vr_results_build(vr_db *db, const vr_results_opts *opts, vr_error *err)
{
    if (check_analysed(db, err) < 0)
        return NULL;
    vr_results_opts o = {10, 20, 0};
    if (opts)
        o = *opts;
    vr_ranks ranks;
    cJSON *doc = cJSON_CreateObject();
    cJSON *tool = cJSON_AddObjectToObject(doc, "tool");
    cJSON_AddStringToObject(tool, "name", PACKAGE_NAME);
    cJSON_AddStringToObject(tool, "version", PACKAGE_VERSION);
    cJSON_AddNumberToObject(doc, "schema_version", VR_DB_SCHEMA_VERSION);
    if (vr_ranks_read(db, o.view, &ranks, err) < 0) {
        cJSON_Delete(doc);
        return NULL;
    }
    /* The ranks are read first (a view's rank charts need their devices'
     * rows), and placed after the devices. */
    int failed = add_sources(db, doc, err) < 0 || add_list(db, doc, "unused_inputs", err) < 0 ||
                 add_devices(db, doc, &o, &ranks, err) < 0;
    if (!failed)
        vr_ranks_attach(doc, &ranks);
    vr_ranks_free(&ranks);
    vr_oom_groups *groups = NULL;
    if (failed || add_gpus(db, doc, err) < 0 || !(groups = vr_oom_groups_read(db, err)) ||
        add_oom_events(db, doc, groups, err) < 0 || add_findings(db, doc, groups, err) < 0 ||
        add_advice(db, doc, groups, err) < 0 || add_allocator_stats(db, doc, err) < 0 ||
        add_profiler_tables(db, doc, err) < 0 || add_memory_prints(db, doc, err) < 0 ||
        add_list(db, doc, "bandwidth_or_capacity", err) < 0) {
        vr_oom_groups_free(groups);
        cJSON_Delete(doc);
        return NULL;
    }
    vr_oom_groups_free(groups);
    vr_verdict_add(doc);
    return doc;
}
