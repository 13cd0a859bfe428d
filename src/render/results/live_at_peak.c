/* What was live at a device's peak, grouped: category, then module path,
 * then the user's line (report.sql: live_at_peak_by_line), or category
 * then operator (live_at_peak_by_operator) when the peak's source records
 * no Python frame. The query yields one row per leaf group with its
 * parents' totals, ordered as the tree is read; the tree is built in that
 * one pass, keeping the largest groups of each level and summing the rest
 * into "<level>_more" ({"groups", "bytes", "count"}, null when none).
 * Every text goes through vr_results_text like the rest of the document.
 */
#include "render/results/live_at_peak.h"

#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "util/sat.h"
#include "render/results/doc.h"
#include "render/results/peak_live.h"

static const char report_sql[] = "schemas/report.sql";

/* Groups kept per level; the rest are summed into "more". */
static const struct {
    long long categories, modules, lines, operators;
} kept = {10, 5, 5, 5};

typedef struct {
    long long groups, bytes, count;
} more;

typedef struct {
    cJSON *categories;       /* the list being built */
    cJSON *cat, *mod;        /* the open nodes; NULL: that group is summed */
    vr_buf cat_key, mod_key; /* their names, to see where a group ends */
    int have_cat, mod_is_null;
    long long ncat, nchild, nline;
    more cats_more, children_more, lines_more;
    long long bytes, count; /* of every category */
} tree;

/*-*** values ***/

static cJSON *int_value(long long v)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", v);
    return cJSON_CreateRaw(num);
}

static cJSON *text_value(sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return cJSON_CreateNull();
    vr_buf b = VR_BUF_INIT;
    vr_results_text(&b, (const char *)sqlite3_column_text(st, col),
                    (size_t)sqlite3_column_bytes(st, col));
    cJSON *item = cJSON_CreateString(b.data ? b.data : "");
    vr_buf_free(&b);
    return item;
}

/* A group's node: {key: its name, "bytes", "count"}. */
static cJSON *group_node(sqlite3_stmt *st, const char *key, int name_col, int bytes_col)
{
    cJSON *node = cJSON_CreateObject();
    cJSON_AddItemToObject(node, key, text_value(st, name_col));
    cJSON_AddItemToObject(node, "bytes", int_value(sqlite3_column_int64(st, bytes_col)));
    cJSON_AddItemToObject(node, "count", int_value(sqlite3_column_int64(st, bytes_col + 1)));
    return node;
}

static void count_more(more *m, sqlite3_stmt *st, int bytes_col)
{
    m->groups++;
    m->bytes = vr_sat_add(m->bytes, sqlite3_column_int64(st, bytes_col));
    m->count = vr_sat_add(m->count, sqlite3_column_int64(st, bytes_col + 1));
}

/* The summed rest as {"groups", "bytes", "count"}, or null; starts a new
 * sum. */
static cJSON *more_value(more *m)
{
    if (!m->groups)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "groups", int_value(m->groups));
    cJSON_AddItemToObject(o, "bytes", int_value(m->bytes));
    cJSON_AddItemToObject(o, "count", int_value(m->count));
    *m = (more){0, 0, 0};
    return o;
}

/* Adds key: the summed rest (obj NULL: a group that was itself summed). */
static void add_more(cJSON *obj, const char *key, more *m)
{
    cJSON *v = more_value(m);
    if (obj)
        cJSON_AddItemToObject(obj, key, v);
    else
        cJSON_Delete(v);
}

/* Whether column col differs from the kept key (NULL is its own value);
 * keeps col as the new key. */
static int starts_group(sqlite3_stmt *st, int col, vr_buf *key, int *is_null, int first)
{
    const char *text = (const char *)sqlite3_column_text(st, col);
    size_t len = (size_t)sqlite3_column_bytes(st, col);
    int null = text == NULL;
    int same = !first && null == *is_null &&
               (null || (len == key->len && (len == 0 || memcmp(key->data, text, len) == 0)));
    if (same)
        return 0;
    vr_buf_clear(key);
    if (!null)
        vr_buf_append(key, text, len);
    *is_null = null;
    return 1;
}

/*-*** the tree ***/

static void close_module(tree *t)
{
    add_more(t->mod, "lines_more", &t->lines_more);
    t->mod = NULL;
}

static void close_category(tree *t, int by_line)
{
    close_module(t);
    more none = {0, 0, 0};
    add_more(t->cat, "modules_more", by_line ? &t->children_more : &none);
    add_more(t->cat, "operators_more", by_line ? &none : &t->children_more);
    t->cat = NULL;
}

/* A row of a new category opens its node (columns 0-2: name, bytes,
 * count) with empty lists of modules and operators, or sums it when past
 * the kept. */
static void open_category(tree *t, sqlite3_stmt *st, int by_line)
{
    int null = 0;
    if (!starts_group(st, 0, &t->cat_key, &null, !t->have_cat))
        return;
    if (t->have_cat)
        close_category(t, by_line);
    t->have_cat = 1;
    t->nchild = 0;
    t->bytes = vr_sat_add(t->bytes, sqlite3_column_int64(st, 1));
    t->count = vr_sat_add(t->count, sqlite3_column_int64(st, 2));
    if (++t->ncat > kept.categories) {
        count_more(&t->cats_more, st, 1);
        return;
    }
    /* Both lists, one empty: a key missing from a node would make a
     * template find the device's own list of that name. */
    t->cat = group_node(st, "category", 0, 1);
    cJSON_AddItemToObject(t->cat, "modules", cJSON_CreateArray());
    cJSON_AddItemToObject(t->cat, "operators", cJSON_CreateArray());
    cJSON_AddItemToArray(t->categories, t->cat);
    t->nchild = 0;
    t->mod_is_null = -1; /* no module yet: the next row starts one */
}

/* "file:line in function" of columns 6-8 (as report.sql's stack_frames
 * writes a frame), cut like any text; null without a frame. */
static cJSON *where_value(sqlite3_stmt *st)
{
    if (sqlite3_column_type(st, 6) == SQLITE_NULL)
        return cJSON_CreateNull();
    vr_buf raw = VR_BUF_INIT, b = VR_BUF_INIT;
    vr_buf_printf(&raw, "%s:%lld in %s", (const char *)sqlite3_column_text(st, 6),
                  (long long)sqlite3_column_int64(st, 7),
                  sqlite3_column_text(st, 8) ? (const char *)sqlite3_column_text(st, 8) : "");
    vr_results_text(&b, raw.data, raw.len);
    cJSON *item = cJSON_CreateString(b.data ? b.data : "");
    vr_buf_free(&raw);
    vr_buf_free(&b);
    return item;
}

/* by line: category (0-2), module (3-5), file, line, function (6-8),
 * bytes, count (9-10). */
static void add_line(tree *t, sqlite3_stmt *st)
{
    if (!t->mod)
        return;
    if (++t->nline > kept.lines) {
        count_more(&t->lines_more, st, 9);
        return;
    }
    cJSON *line = cJSON_CreateObject();
    cJSON_AddItemToObject(line, "where", where_value(st));
    cJSON_AddItemToObject(line, "file", text_value(st, 6));
    cJSON_AddItemToObject(line, "line",
                          sqlite3_column_type(st, 7) == SQLITE_NULL
                              ? cJSON_CreateNull()
                              : int_value(sqlite3_column_int64(st, 7)));
    cJSON_AddItemToObject(line, "function", text_value(st, 8));
    cJSON_AddItemToObject(line, "bytes", int_value(sqlite3_column_int64(st, 9)));
    cJSON_AddItemToObject(line, "count", int_value(sqlite3_column_int64(st, 10)));
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(t->mod, "lines"), line);
}

static void on_line_row(tree *t, sqlite3_stmt *st)
{
    int was_cat = t->ncat;
    open_category(t, st, 1);
    int first = t->ncat != was_cat;
    int null = t->mod_is_null;
    if (starts_group(st, 3, &t->mod_key, &null, first)) {
        close_module(t);
        t->nline = 0;
        if (t->cat && ++t->nchild <= kept.modules) {
            t->mod = group_node(st, "module", 3, 4);
            cJSON_AddItemToObject(t->mod, "lines", cJSON_CreateArray());
            cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(t->cat, "modules"), t->mod);
        } else if (t->cat) {
            count_more(&t->children_more, st, 4);
        }
    }
    t->mod_is_null = null;
    add_line(t, st);
}

/* by operator: category (0-2), operator, bytes, count (3-5). */
static void on_operator_row(tree *t, sqlite3_stmt *st)
{
    open_category(t, st, 0);
    if (!t->cat)
        return;
    if (++t->nchild > kept.operators) {
        count_more(&t->children_more, st, 4);
        return;
    }
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(t->cat, "operators"),
                         group_node(st, "operator", 3, 4));
}

static int build(vr_db *db, tree *t, const char *block, long long device, long long peak,
                 int by_line, vr_error *err)
{
    if (vr_results_peak_live(db, device, peak, err) < 0)
        return -1;
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, block, err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", device, err) < 0 ||
        vr_db_bind_int(st, ":peak_event", peak, err) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (by_line)
            on_line_row(t, st);
        else
            on_operator_row(t, st);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return vr_db_fail(db, err, "grouping what was live at the peak");
    close_category(t, by_line);
    return 0;
}

/* The first row's two integer columns of report.sql's `query`, bound to
 * the device and its peak event: 0 0 when it has no row. `what` names
 * the reading in an error. */
static int two_ints(vr_db *db, const char *query, long long device, long long peak,
                    long long out[2], const char *what, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, query, err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", device, err) < 0 ||
        vr_db_bind_int(st, ":peak_event", peak, err) < 0)
        return -1;
    int rc = sqlite3_step(st);
    out[0] = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    out[1] = rc == SQLITE_ROW ? sqlite3_column_int64(st, 1) : 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(db, err, what);
    return 0;
}

int vr_live_at_peak_add(vr_db *db, cJSON *dev, long long device, long long peak_event,
                        vr_error *err)
{
    /* the blocks in use since before the record that the groups count
     * (count, bytes); whether the peak's source records frames, and
     * whether any allocation of the device was placed */
    long long before[2] = {0, 0}, rec[2] = {0, 0};
    if (peak_event >= 0 &&
        (two_ints(db, "live_at_peak_before", device, peak_event, before,
                  "counting the blocks live since before the record", err) < 0 ||
         two_ints(db, "locations_recorded", device, peak_event, rec,
                  "reading whether frames were recorded", err) < 0))
        return -1;
    long long before_n = before[0], before_b = before[1];
    int frames = rec[0] != 0, placed = rec[1] != 0;
    tree t;
    memset(&t, 0, sizeof t);
    t.categories = cJSON_CreateArray();
    int rc = peak_event < 0
                 ? 0
                 : build(db, &t, placed ? "live_at_peak_by_line" : "live_at_peak_by_operator",
                         device, peak_event, placed, err);
    vr_buf_free(&t.cat_key);
    vr_buf_free(&t.mod_key);
    if (rc < 0) {
        cJSON_Delete(t.categories);
        return -1;
    }
    cJSON_AddStringToObject(dev, "live_at_peak_by", placed ? "module_and_line" : "operator");
    cJSON_AddBoolToObject(dev, "locations_recorded", frames);
    cJSON_AddBoolToObject(dev, "live_at_peak_placed", placed);
    cJSON_AddItemToObject(dev, "live_at_peak_groups", t.categories);
    cJSON_AddItemToObject(dev, "live_at_peak_groups_more", more_value(&t.cats_more));
    cJSON_AddItemToObject(dev, "live_at_peak_grouped_bytes", int_value(t.bytes));
    cJSON_AddItemToObject(dev, "live_at_peak_grouped_count", int_value(t.count));
    cJSON_AddItemToObject(dev, "live_at_peak_grouped_before_bytes", int_value(before_b));
    cJSON_AddItemToObject(dev, "live_at_peak_grouped_before_count", int_value(before_n));
    return 0;
}
