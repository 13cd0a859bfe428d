/*-*** doc.c: what the results document's parts share (doc.h) ***/
#include "render/results/doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/sat.h"
#include "util/units.h"
#include "util/utf8.h"

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
    static const char *const keys[] = {"title",    "detail",  "secondary",
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
           strcmp(key, "chosen") == 0 || strcmp(key, "would_fit") == 0 ||
           strcmp(key, "best_copy_above_peak") == 0;
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

cJSON *vr_results_rows(vr_db *db, sqlite3_stmt *st, vr_error *err)
{
    return rows_of(db, st, 0, err);
}

cJSON *vr_results_log_rows(vr_db *db, sqlite3_stmt *st, vr_error *err)
{
    return rows_of(db, st, 1, err);
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

int vr_results_member_int(const cJSON *obj, const char *key, long long *out)
{
    return vr_results_int(cJSON_GetObjectItemCaseSensitive(obj, key), out);
}

long long vr_results_int_or(const cJSON *obj, const char *key, long long dflt)
{
    long long v;
    return vr_results_member_int(obj, key, &v) ? v : dflt;
}

const char *vr_results_string(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}
