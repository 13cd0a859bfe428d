/*-*** oom_groups.c: out-of-memory findings of one shape, told once (oom_groups.h) ***/
#include "render/results/oom_groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/units.h"
#include "render/results/doc.h"

static const char report_sql[] = "schemas/report.sql";

/* The smallest and largest of a figure over a group's errors. */
typedef struct {
    int known;
    long long min, max;
} range;

/* What makes a shape. */
typedef struct {
    long long device_id; /* -1: no device */
    long long rank;      /* -1: none said */
    char kind[32];       /* the finding's kind (our own names, all shorter) */
    int bucket;          /* floor(log2(request)); -1: the request is not stated */
} shape;

typedef struct {
    shape key;
    int other;      /* the group of the shapes past VR_OOM_GROUPS_MAX */
    char *device;   /* its label, NULL: none */
    char *source;   /* the first error's source and line */
    long long line; /* -1: none */
    long long errors;
    long long first[VR_OOM_GROUP_FULL]; /* the ids of its first findings */
    range requested, free, reserved, ts;
} group;

struct vr_oom_groups {
    group g[VR_OOM_GROUPS_MAX + 1];
    int n;
    int other; /* index of the group of other shapes; -1: none yet */
};

/* oom_shapes' columns. */
enum {
    C_FINDING,
    C_DEVICE_ID,
    C_DEVICE,
    C_RANK,
    C_KIND,
    C_REQUESTED,
    C_FREE,
    C_RESERVED,
    C_TS,
    C_SOURCE,
    C_LINE
};

static int bucket_of(long long bytes)
{
    int b = 0;
    while (bytes > 1) {
        bytes >>= 1;
        b++;
    }
    return b;
}

static long long int_or(sqlite3_stmt *st, int col, long long dflt)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? dflt : sqlite3_column_int64(st, col);
}

static void read_shape(sqlite3_stmt *st, shape *s)
{
    memset(s, 0, sizeof *s);
    s->device_id = int_or(st, C_DEVICE_ID, -1);
    s->rank = int_or(st, C_RANK, -1);
    const unsigned char *kind = sqlite3_column_text(st, C_KIND);
    snprintf(s->kind, sizeof s->kind, "%s", kind ? (const char *)kind : "");
    long long req = int_or(st, C_REQUESTED, -1);
    s->bucket = req > 0 ? bucket_of(req) : -1;
}

static int same_shape(const shape *a, const shape *b)
{
    return a->device_id == b->device_id && a->rank == b->rank && a->bucket == b->bucket &&
           strcmp(a->kind, b->kind) == 0;
}

/* Text from the database as the document holds it (cut, valid UTF-8). */
static char *text_column(sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return NULL;
    vr_buf b = VR_BUF_INIT;
    vr_results_text(&b, (const char *)sqlite3_column_text(st, col),
                    (size_t)sqlite3_column_bytes(st, col));
    return vr_buf_detach(&b);
}

/* The group of shape `s`: an existing one, a new one while there is room,
 * else the group of other shapes. */
static group *group_of(vr_oom_groups *g, const shape *s, sqlite3_stmt *st)
{
    for (int i = 0; i < g->n; i++)
        if (!g->g[i].other && same_shape(&g->g[i].key, s))
            return &g->g[i];
    if (g->other >= 0) /* the shapes are all kept: the group of the others */
        return &g->g[g->other];
    group *grp = &g->g[g->n];
    grp->key = *s;
    if (g->n == VR_OOM_GROUPS_MAX) {
        g->other = g->n;
        grp->other = 1;
    }
    g->n++;
    grp->device = grp->other ? NULL : text_column(st, C_DEVICE);
    grp->source = text_column(st, C_SOURCE);
    grp->line = int_or(st, C_LINE, -1);
    return grp;
}

static void widen(range *r, sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return;
    long long v = sqlite3_column_int64(st, col);
    if (!r->known || v < r->min)
        r->min = v;
    if (!r->known || v > r->max)
        r->max = v;
    r->known = 1;
}

static void add_row(vr_oom_groups *g, sqlite3_stmt *st)
{
    shape s;
    read_shape(st, &s);
    group *grp = group_of(g, &s, st);
    if (grp->errors < VR_OOM_GROUP_FULL)
        grp->first[grp->errors] = sqlite3_column_int64(st, C_FINDING);
    grp->errors++;
    widen(&grp->requested, st, C_REQUESTED);
    widen(&grp->free, st, C_FREE);
    widen(&grp->reserved, st, C_RESERVED);
    widen(&grp->ts, st, C_TS);
}

vr_oom_groups *vr_oom_groups_read(vr_db *db, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "oom_shapes", err);
    if (!st)
        return NULL;
    vr_oom_groups *g = vr_xmalloc(sizeof *g);
    memset(g, 0, sizeof *g);
    g->other = -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        add_row(g, st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        vr_db_fail(db, err, "reading the out-of-memory findings");
        vr_oom_groups_free(g);
        return NULL;
    }
    return g;
}

void vr_oom_groups_free(vr_oom_groups *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n; i++) {
        free(g->g[i].device);
        free(g->g[i].source);
    }
    free(g);
}

vr_oom_place vr_oom_groups_place(const vr_oom_groups *g, long long finding_id, int *group_index)
{
    for (int i = 0; i < g->n; i++) {
        const group *grp = &g->g[i];
        long long listed = grp->errors < VR_OOM_GROUP_FULL ? grp->errors : VR_OOM_GROUP_FULL;
        for (long long k = 0; k < listed; k++) {
            if (grp->first[k] != finding_id)
                continue;
            if (grp->errors <= VR_OOM_GROUP_FULL)
                return VR_OOM_LISTED;
            *group_index = i;
            return k == 0 ? VR_OOM_FIRST : VR_OOM_FOLDED;
        }
    }
    return VR_OOM_FOLDED; /* past a group's first findings */
}

/*-*** the document's objects ***/

static void add_int(cJSON *obj, const char *key, long long v)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", v);
    cJSON_AddItemToObject(obj, key, cJSON_CreateRaw(num));
}

static void add_range(cJSON *obj, const char *min_key, const char *max_key, const range *r)
{
    if (r->known) {
        add_int(obj, min_key, r->min);
        add_int(obj, max_key, r->max);
    } else {
        cJSON_AddNullToObject(obj, min_key);
        cJSON_AddNullToObject(obj, max_key);
    }
}

static void add_figures(cJSON *obj, const group *grp)
{
    add_int(obj, "errors", grp->errors);
    cJSON_AddBoolToObject(obj, "other_shapes", grp->other);
    add_range(obj, "requested_min_bytes", "requested_max_bytes", &grp->requested);
    add_range(obj, "free_min_bytes", "free_max_bytes", &grp->free);
    add_range(obj, "reserved_min_bytes", "reserved_max_bytes", &grp->reserved);
    add_range(obj, "first_ts_ns", "last_ts_ns", &grp->ts);
}

cJSON *vr_oom_groups_like_it(const vr_oom_groups *g, int group_index)
{
    const group *grp = &g->g[group_index];
    cJSON *obj = cJSON_CreateObject();
    add_int(obj, "more", grp->errors - 1);
    add_figures(obj, grp);
    return obj;
}

static void add_opt_text(cJSON *obj, const char *key, const char *text)
{
    text ? cJSON_AddStringToObject(obj, key, text) : cJSON_AddNullToObject(obj, key);
}

cJSON *vr_oom_groups_list(const vr_oom_groups *g)
{
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; i < g->n; i++) {
        const group *grp = &g->g[i];
        cJSON *obj = cJSON_CreateObject();
        add_opt_text(obj, "device", grp->device);
        if (grp->other || grp->key.rank < 0)
            cJSON_AddNullToObject(obj, "rank");
        else
            add_int(obj, "rank", grp->key.rank);
        add_opt_text(obj, "kind", grp->other ? NULL : grp->key.kind);
        add_figures(obj, grp);
        add_opt_text(obj, "source", grp->source);
        if (grp->line >= 0)
            add_int(obj, "line", grp->line);
        else
            cJSON_AddNullToObject(obj, "line");
        cJSON_AddItemToArray(list, obj);
    }
    return list;
}

/*-*** the sentence ***/

/* " requested 20.0 MiB to 24.0 MiB," (one figure when all are alike);
 * `label` NULL: a time, "at T," or "from T1 to T2,". */
static void put_range(vr_buf *b, const cJSON *obj, const char *label, const char *min_key,
                      const char *max_key)
{
    const char *lo = vr_results_string(obj, min_key), *hi = vr_results_string(obj, max_key);
    if (!lo || !hi)
        return;
    int same = strcmp(lo, hi) == 0;
    if (label)
        vr_buf_printf(b, " %s %s", label, lo);
    else
        vr_buf_printf(b, " %s %s", same ? "at" : "from", lo);
    if (!same)
        vr_buf_printf(b, " to %s", hi);
    vr_buf_putc(b, ',');
}

/* "20.0 MiB to 24.0 MiB", "22.0 MiB", or "-" when no error says. */
static void add_range_text(cJSON *obj, const char *key, const char *min_key, const char *max_key)
{
    const char *lo = vr_results_string(obj, min_key), *hi = vr_results_string(obj, max_key);
    vr_buf b = VR_BUF_INIT;
    if (!lo || !hi)
        vr_buf_puts(&b, "-");
    else if (strcmp(lo, hi) == 0)
        vr_buf_puts(&b, lo);
    else
        vr_buf_printf(&b, "%s to %s", lo, hi);
    cJSON_AddStringToObject(obj, key, b.data);
    vr_buf_free(&b);
}

static void describe_group(cJSON *grp)
{
    long long v;
    char text[600];
    add_range_text(grp, "requested_range", "requested_min_h", "requested_max_h");
    add_range_text(grp, "free_range", "free_min_h", "free_max_h");
    add_range_text(grp, "reserved_range", "reserved_min_h", "reserved_max_h");
    add_range_text(grp, "time_range", "first_t", "last_t");
    vr_results_int(cJSON_GetObjectItemCaseSensitive(grp, "errors"), &v);
    vr_units_count(v, text, sizeof text);
    cJSON_AddStringToObject(grp, "errors_n", text);
    if (vr_results_int(cJSON_GetObjectItemCaseSensitive(grp, "rank"), &v)) {
        snprintf(text, sizeof text, "rank %lld", v);
        cJSON_AddStringToObject(grp, "rank_text", text);
    } else {
        cJSON_AddNullToObject(grp, "rank_text");
    }
    const char *source = vr_results_string(grp, "source");
    if (vr_results_int(cJSON_GetObjectItemCaseSensitive(grp, "line"), &v))
        snprintf(text, sizeof text, "%s line %lld", source ? source : "", v);
    else
        snprintf(text, sizeof text, "%s", source ? source : "");
    cJSON_AddStringToObject(grp, "where", text);
}

int vr_oom_groups_describe_list(cJSON *groups)
{
    int folded = 0;
    long long errors;
    cJSON *grp;
    cJSON_ArrayForEach(grp, groups)
    {
        describe_group(grp);
        folded |= vr_results_int(cJSON_GetObjectItemCaseSensitive(grp, "errors"), &errors) &&
                  errors > VR_OOM_GROUP_FULL;
    }
    return folded;
}

void vr_oom_groups_describe(cJSON *like_it)
{
    long long more = 0;
    if (!cJSON_IsObject(like_it) ||
        !vr_results_int(cJSON_GetObjectItemCaseSensitive(like_it, "more"), &more))
        return;
    char n[32];
    vr_units_count(more, n, sizeof n);
    vr_buf b = VR_BUF_INIT;
    int other = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(like_it, "other_shapes"));
    vr_buf_printf(&b, other ? "%s more of other shapes:" : "%s more like it:", n);
    put_range(&b, like_it, "requested", "requested_min_h", "requested_max_h");
    put_range(&b, like_it, "free", "free_min_h", "free_max_h");
    put_range(&b, like_it, "reserved", "reserved_min_h", "reserved_max_h");
    put_range(&b, like_it, NULL, "first_t", "last_t");
    /* the last comma, or the colon when no figure followed it */
    b.data[--b.len] = '\0';
    cJSON_AddStringToObject(like_it, "text", b.data);
    vr_buf_free(&b);
}
