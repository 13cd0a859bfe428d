#include "render/results/results.h"

#include "db/category.h"
#include "util/sat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "render/results/doc.h"
#include "render/results/peak_live.h"
#include "render/results/explained.h"
#include "render/results/model_estimate.h"
#include "render/results/many.h"
#include "render/results/oom_groups.h"
#include "render/results/ranks.h"
#include "render/results/verdict.h"
#include "render/results/live_at_peak.h"
#include "render/results/peak_by_module.h"

static const char report_sql[] = "schemas/report.sql";

/*-*** the parts ***/
/*
 * The document is built by parts run in the order of a table (doc_parts
 * at the end of this file; device_parts for each device shown in full).
 * Each states the parts it needs before it, because it reads what they
 * built: vr_results_parts_check() holds the tables to that, so an order
 * is a fact of the table, not of a chain of calls.
 */

/* What the parts read and build. */
typedef struct {
    vr_db *db;
    vr_results_opts opts;
    cJSON *doc;
    vr_ranks ranks;        /* read before the devices, placed after them */
    vr_oom_groups *groups; /* the errors by shape (oom_groups.h) */
    cJSON *dev;            /* a device part's device, */
    long long id, peak;    /* its database id and its peak's event (-1: none) */
} build;

#define PART(p) (1u << (p))

typedef struct {
    unsigned part; /* PART() of its own id */
    const char *name;
    unsigned needs; /* PART()s of the parts that must run before it */
    int (*run)(build *b, vr_error *err);
} part;

static int run_parts(const part *parts, size_t n, build *b, vr_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (parts[i].run(b, err) < 0)
            return -1;
    return 0;
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

static int add_sources(vr_db *db, cJSON *doc, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "sources", err);
    cJSON *sources = st ? vr_results_rows(db, st, err) : NULL;
    if (!sources)
        return -1;
    cJSON *s;
    cJSON_ArrayForEach(s, sources)
    {
        long long id = vr_results_int_or(s, "id", 0);
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
    cJSON *arr = vr_results_rows(db, st, err);
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
static const char *const fragmentation_keys[] = {"free_in_segments_bytes", "internal_waste_bytes",
                                                 "inactive_split_bytes", "pending_free_bytes"};

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
    cJSON *list = vr_results_rows(db, st, err);
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
    cJSON *list = vr_results_rows(db, st, err);
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
        cJSON_AddItemToObject(
            frag, fragmentation_keys[i],
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

/* A site's example stack's frames kept: enough for a Python stack whole
 * (the HTML's full stack is these). */
#define SITE_STACK_FRAMES 64

/* A site's stack (report.sql: site_stack_frames) as "stack", and the C++
 * frames left out of it as "stack_skipped". */
static int add_site_stack(vr_db *db, cJSON *site, long long stack, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "site_stack_frames", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":stack", stack, err) < 0 ||
        vr_db_bind_int(st, ":limit", SITE_STACK_FRAMES, err) < 0)
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
 * none), at most SITE_STACK_FRAMES; "stack_skipped": the C++ frames left out;
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
    cJSON *sites = vr_results_rows(db, st, err);
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

/*-*** where the memory went (docs/breakdown.md) ***/

/* "peak_breakdown": the peak's bytes by category, every category in
 * category.h's order, kv_cache too (null without a peak), and "categories_stated": whether
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
    cJSON *list = vr_results_rows(db, st, err);
    if (!list)
        return -1;
    long long n = vr_results_int_or(cJSON_GetArrayItem(list, 0), "n", 0);
    cJSON *e;
    cJSON_ArrayForEach(e, list) cJSON_DeleteItemFromObjectCaseSensitive(e, "n");
    cJSON_AddItemToObject(dev, "out_of_memory", list);
    char num[32];
    snprintf(num, sizeof num, "%lld", n);
    cJSON_AddItemToObject(dev, "out_of_memory_count", cJSON_CreateRaw(num));
    return 0;
}

/*-*** a device's parts ***/

static int dev_peak(build *b, vr_error *err)
{
    b->peak = peak_event(b->db, b->id, err);
    return b->peak < -1 ? -1 : 0;
}

static int dev_top_allocations(build *b, vr_error *err)
{
    if (vr_results_peak_live(b->db, b->id, b->peak, err) < 0)
        return -1;
    const named_int top[3] = {{":peak_event", b->peak},
                              {":base_time_ns", vr_results_int_or(b->dev, "base_time_ns", 0)},
                              {":limit", b->opts.top_allocations}};
    return add_device_rows(b->db, b->dev, "top_allocations", "top_allocations", b->id, top, 3,
                           err);
}

static int dev_steps(build *b, vr_error *err)
{
    return add_device_rows(b->db, b->dev, "steps", "steps", b->id, NULL, 0, err);
}

static int dev_phase_peaks(build *b, vr_error *err)
{
    return add_device_rows(b->db, b->dev, "phase_peaks", "phase_peaks", b->id, NULL, 0, err);
}

static int dev_operators(build *b, vr_error *err)
{
    const named_int ops[1] = {{":limit", b->opts.operators}};
    return add_device_rows(b->db, b->dev, "operators", "operators", b->id, ops, 1, err);
}

static int dev_ooms(build *b, vr_error *err)
{
    return add_device_ooms(b->db, b->dev, b->id, err);
}

static int dev_sources(build *b, vr_error *err)
{
    return add_device_rows(b->db, b->dev, "sources", "device_sources", b->id, NULL, 0, err);
}

static int dev_same_device(build *b, vr_error *err)
{
    return add_same_device(b->db, b->dev, b->id, err);
}

static int dev_stacks(build *b, vr_error *err)
{
    return add_stacks(b->db, b->dev, err);
}

static int dev_snapshot(build *b, vr_error *err)
{
    return add_snapshot_state(b->db, b->dev, b->id, err);
}

static int dev_top_sites(build *b, vr_error *err)
{
    return add_top_sites(b->db, b->dev, b->id, b->opts.top_allocations, err);
}

static int dev_smi(build *b, vr_error *err)
{
    return add_smi(b->db, b->dev, b->id, err);
}

static int dev_live_at_peak(build *b, vr_error *err)
{
    return vr_live_at_peak_add(b->db, b->dev, b->id, b->peak, err);
}

static int dev_peak_by_module(build *b, vr_error *err)
{
    return vr_peak_by_module_add(b->db, b->dev, b->id, b->peak, err);
}

static int dev_peak_stage(build *b, vr_error *err)
{
    return add_peak_stage(b->db, b->dev, b->id, err);
}

static int dev_peak_breakdown(build *b, vr_error *err)
{
    return add_peak_breakdown(b->db, b->dev, b->id, err);
}

static int dev_explained(build *b, vr_error *err)
{
    return vr_explained_add(b->db, b->dev, b->id, err);
}

static int dev_estimate(build *b, vr_error *err)
{
    (void)err;
    vr_model_estimate_add(b->dev);
    return 0;
}

enum {
    D_PEAK,
    D_TOP_ALLOCATIONS,
    D_STEPS,
    D_PHASE_PEAKS,
    D_OPERATORS,
    D_OOMS,
    D_SOURCES,
    D_SAME_DEVICE,
    D_STACKS,
    D_SNAPSHOT,
    D_TOP_SITES,
    D_SMI,
    D_LIVE_AT_PEAK,
    D_PEAK_BY_MODULE,
    D_PEAK_STAGE,
    D_PEAK_BREAKDOWN,
    D_EXPLAINED,
    D_ESTIMATE
};

/* A device's keys, in the document's order. */
static const part device_parts[] = {
    {PART(D_PEAK), "peak_event", 0, dev_peak},
    {PART(D_TOP_ALLOCATIONS), "top_allocations", PART(D_PEAK), dev_top_allocations},
    {PART(D_STEPS), "steps", 0, dev_steps},
    {PART(D_PHASE_PEAKS), "phase_peaks", 0, dev_phase_peaks},
    {PART(D_OPERATORS), "operators", 0, dev_operators},
    {PART(D_OOMS), "out_of_memory", 0, dev_ooms},
    {PART(D_SOURCES), "sources", 0, dev_sources},
    {PART(D_SAME_DEVICE), "same_device", 0, dev_same_device},
    /* the top allocations' stacks */
    {PART(D_STACKS), "stacks", PART(D_TOP_ALLOCATIONS), dev_stacks},
    {PART(D_SNAPSHOT), "snapshot_state", 0, dev_snapshot},
    {PART(D_TOP_SITES), "top_sites", 0, dev_top_sites},
    {PART(D_SMI), "smi", 0, dev_smi},
    {PART(D_LIVE_AT_PEAK), "live_at_peak", PART(D_PEAK), dev_live_at_peak},
    {PART(D_PEAK_BY_MODULE), "peak_by_module", PART(D_PEAK), dev_peak_by_module},
    {PART(D_PEAK_STAGE), "peak_stage", 0, dev_peak_stage},
    {PART(D_PEAK_BREAKDOWN), "peak_breakdown", 0, dev_peak_breakdown},
    /* how its parts are known */
    {PART(D_EXPLAINED), "explained", PART(D_PEAK_BREAKDOWN), dev_explained},
    /* the model's estimate beside the peak's measured categories */
    {PART(D_ESTIMATE), "estimate", PART(D_PEAK_BREAKDOWN), dev_estimate},
};

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
    int id_col = vr_results_column(st, "db_id"),
        near_col = vr_results_column(st, "near_capacity"),
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
            cJSON_AddItemToArray(more, vr_results_row(st));
        vr_many_offer(&ms, &r, vr_many_wants(&ms, &r) ? vr_results_row(st) : NULL);
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
static int add_devices(build *b, vr_error *err)
{
    vr_db *db = b->db;
    const vr_results_opts *o = &b->opts;
    const vr_ranks *ranks = &b->ranks;
    cJSON *doc = b->doc;
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
        b->dev = dev;
        b->id = vr_results_int_or(dev, "db_id", -1);
        if (run_parts(device_parts, sizeof device_parts / sizeof *device_parts, b, err) < 0)
            return -1;
    }
    return 0;
}

/* The rows of report.sql's block `key` as the document's list `key`. */
static int add_list(vr_db *db, cJSON *doc, const char *key, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, key, err);
    cJSON *list = st ? vr_results_rows(db, st, err) : NULL;
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
    cJSON *rows_found = vr_results_rows(db, st, err);
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
        if (place_of(st, groups, &group) != VR_OOM_FOLDED &&
            add_advice_row(db, list, st, err) < 0) {
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
    cJSON *gpus = st ? vr_results_rows(db, st, err) : NULL;
    if (!gpus)
        return -1;
    cJSON_AddItemToObject(doc, "gpus", gpus);
    cJSON *g;
    cJSON_ArrayForEach(g, gpus)
    {
        long long id = vr_results_int_or(g, "gpu_id", -1);
        cJSON_DeleteItemFromObjectCaseSensitive(g, "gpu_id");
        if (add_rows_by(db, g, "smi_processes", "gpu_processes", ":gpu", id, err) < 0)
            return -1;
    }
    return 0;
}

/*-*** memory prints of job logs (docs/formats/memory-print.md) ***/

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
    int has_device =
        vr_results_int(cJSON_GetObjectItemCaseSensitive(row, "device_db_id"), &device);
    int has_rank = vr_results_int(cJSON_GetObjectItemCaseSensitive(row, "rank"), &rank);
    const char *framework = text_of(row, "framework"), *figure = text_of(row, "figure");
    if (vr_db_bind_int(st, ":source", source, err) < 0 ||
        vr_db_bind_opt_int(st, ":device", has_device, device, err) < 0 ||
        vr_db_bind_opt_int(st, ":rank", has_rank, rank, err) < 0 ||
        vr_db_bind_text(st, ":framework", framework, strlen(framework), err) < 0 ||
        vr_db_bind_text(st, ":figure", figure, strlen(figure), err) < 0)
        return -1;
    cJSON *list = vr_results_rows(db, st, err);
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
        vr_many_offer(&ms, &r, vr_many_wants(&ms, &r) ? vr_results_row(st) : NULL);
    }
    sqlite3_reset(st);
    cJSON *summary, *list = vr_many_finish(&ms, "max_allocated_bytes", &summary);
    cJSON_AddItemToObject(doc, "memory_prints", list);
    cJSON_AddItemToObject(doc, "memory_prints_summary", summary ? summary : cJSON_CreateNull());
    cJSON_AddArrayToObject(doc, "more_memory_prints");
    if (rc != SQLITE_DONE)
        return vr_db_fail(db, err, "reading results");
    cJSON *row;
    cJSON_ArrayForEach(row, list) if (add_print_points(db, row, err) < 0) return -1;
    return 0;
}

/*-*** profiler tables printed in job logs (docs/formats/profiler-table.md) ***/

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
        long long id = vr_results_int_or(t, "table_id", -1);
        cJSON_DeleteItemFromObjectCaseSensitive(t, "table_id");
        const cJSON *cols = cJSON_GetObjectItemCaseSensitive(t, "columns");
        cJSON_ReplaceItemInObjectCaseSensitive(
            t, "columns", split_columns(cJSON_IsString(cols) ? cols->valuestring : ""));
        if (add_rows_by(db, t, "ops", "profiler_table_ops", ":table", id, err) < 0)
            return -1;
    }
    return 0;
}

/*-*** out-of-memory errors from every source (docs/json.md, oom_events) ***/

/* The processes an error lists: {"pid": N or "self", "used_bytes": N}. */
static cJSON *oom_processes(vr_db *db, long long oom, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, report_sql, "oom_processes", err);
    if (!st)
        return NULL;
    if (vr_db_bind_int(st, ":oom", oom, err) < 0)
        return NULL;
    cJSON *list = vr_results_rows(db, st, err);
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
    return vr_results_log_rows(db, st, err);
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
    sqlite3_stmt *told = vr_db_stmt(db, report_sql, "oom_told_by", err);
    cJSON *by = told && vr_db_bind_int(told, ":oom", oom, err) == 0
                    ? vr_results_rows(db, told, err)
                    : NULL;
    if (!by)
        return -1;
    cJSON_AddItemToObject(e, "told_by", by);
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
                      ? vr_results_log_rows(db, st, err)
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
        return vr_fail(err,
                       "%s: the analysis is not complete; 'vramreport report --db %s' "
                       "finishes it",
                       vr_db_path(db), vr_db_path(db));
    return 0;
}

/*-*** the document's parts ***/

static int doc_tool(build *b, vr_error *err)
{
    (void)err;
    cJSON *tool = cJSON_AddObjectToObject(b->doc, "tool");
    cJSON_AddStringToObject(tool, "name", PACKAGE_NAME);
    cJSON_AddStringToObject(tool, "version", PACKAGE_VERSION);
    cJSON_AddNumberToObject(b->doc, "schema_version", VR_DB_SCHEMA_VERSION);
    return 0;
}

static int doc_read_ranks(build *b, vr_error *err)
{
    return vr_ranks_read(b->db, b->opts.view, &b->ranks, err);
}

static int doc_sources(build *b, vr_error *err)
{
    return add_sources(b->db, b->doc, err);
}

static int doc_unused_inputs(build *b, vr_error *err)
{
    return add_list(b->db, b->doc, "unused_inputs", err);
}

static int doc_ranks(build *b, vr_error *err)
{
    (void)err;
    vr_ranks_attach(b->doc, &b->ranks);
    return 0;
}

/* --capacity, when the analysis was given one: {bytes, said}, else null. */
static int doc_capacity_given(build *b, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(b->db, report_sql, "capacity_given", err);
    cJSON *rows = st ? vr_results_rows(b->db, st, err) : NULL;
    if (!rows)
        return -1;
    cJSON *first = cJSON_DetachItemFromArray(rows, 0);
    cJSON_Delete(rows);
    cJSON_AddItemToObject(b->doc, "capacity_given", first ? first : cJSON_CreateNull());
    return 0;
}

static int doc_gpus(build *b, vr_error *err)
{
    return add_gpus(b->db, b->doc, err);
}

static int doc_read_oom_groups(build *b, vr_error *err)
{
    b->groups = vr_oom_groups_read(b->db, err);
    return b->groups ? 0 : -1;
}

static int doc_oom_events(build *b, vr_error *err)
{
    return add_oom_events(b->db, b->doc, b->groups, err);
}

static int doc_findings(build *b, vr_error *err)
{
    return add_findings(b->db, b->doc, b->groups, err);
}

static int doc_advice(build *b, vr_error *err)
{
    return add_advice(b->db, b->doc, b->groups, err);
}

static int doc_allocator_stats(build *b, vr_error *err)
{
    return add_allocator_stats(b->db, b->doc, err);
}

static int doc_profiler_tables(build *b, vr_error *err)
{
    return add_profiler_tables(b->db, b->doc, err);
}

static int doc_memory_prints(build *b, vr_error *err)
{
    return add_memory_prints(b->db, b->doc, err);
}

/* server_memory[]: the inference server's memory lines, the first
 * SERVER_MEMORY_SHOWN of them (a server restarted in a loop prints the
 * same lines at each start); server_memory_more: how many more (null:
 * none). */
#define SERVER_MEMORY_SHOWN 64
static int doc_server_memory(build *b, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(b->db, report_sql, "server_memory", err);
    if (!st || vr_db_bind_int(st, ":limit", SERVER_MEMORY_SHOWN, err) < 0)
        return -1;
    cJSON *list = vr_results_rows(b->db, st, err);
    if (!list)
        return -1;
    cJSON_AddItemToObject(b->doc, "server_memory", list);
    long long all = 0;
    st = vr_db_stmt(b->db, report_sql, "server_memory_count", err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        all = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    if (rc != SQLITE_ROW)
        return vr_db_fail(b->db, err, "counting the server's memory lines");
    char num[32];
    snprintf(num, sizeof num, "%lld", all - SERVER_MEMORY_SHOWN);
    cJSON_AddItemToObject(b->doc, "server_memory_more",
                          all > SERVER_MEMORY_SHOWN ? cJSON_CreateRaw(num) : cJSON_CreateNull());
    return 0;
}

static int doc_bandwidth(build *b, vr_error *err)
{
    return add_list(b->db, b->doc, "bandwidth_or_capacity", err);
}

static int doc_verdict(build *b, vr_error *err)
{
    (void)err;
    vr_verdict_add(b->doc);
    return 0;
}

enum {
    P_TOOL,
    P_READ_RANKS,
    P_SOURCES,
    P_UNUSED_INPUTS,
    P_DEVICES,
    P_RANKS,
    P_CAPACITY_GIVEN,
    P_GPUS,
    P_READ_OOM_GROUPS,
    P_OOM_EVENTS,
    P_FINDINGS,
    P_ADVICE,
    P_ALLOCATOR_STATS,
    P_PROFILER_TABLES,
    P_MEMORY_PRINTS,
    P_SERVER_MEMORY,
    P_BANDWIDTH,
    P_VERDICT
};

/* The document's keys, in its order. */
static const part doc_parts[] = {
    {PART(P_TOOL), "tool", 0, doc_tool},
    /* The ranks are read before the devices (a view's rank charts need
     * their devices' rows), and placed after them. */
    {PART(P_READ_RANKS), "read_ranks", 0, doc_read_ranks},
    {PART(P_SOURCES), "sources", 0, doc_sources},
    {PART(P_UNUSED_INPUTS), "unused_inputs", 0, doc_unused_inputs},
    {PART(P_DEVICES), "devices", PART(P_READ_RANKS), add_devices},
    {PART(P_RANKS), "ranks", PART(P_READ_RANKS), doc_ranks},
    {PART(P_CAPACITY_GIVEN), "capacity_given", 0, doc_capacity_given},
    {PART(P_GPUS), "gpus", 0, doc_gpus},
    {PART(P_READ_OOM_GROUPS), "read_oom_groups", 0, doc_read_oom_groups},
    {PART(P_OOM_EVENTS), "oom_events", PART(P_READ_OOM_GROUPS), doc_oom_events},
    {PART(P_FINDINGS), "findings", PART(P_READ_OOM_GROUPS), doc_findings},
    {PART(P_ADVICE), "advice", PART(P_READ_OOM_GROUPS), doc_advice},
    {PART(P_ALLOCATOR_STATS), "allocator_stats", 0, doc_allocator_stats},
    {PART(P_PROFILER_TABLES), "profiler_tables", 0, doc_profiler_tables},
    {PART(P_MEMORY_PRINTS), "memory_prints", 0, doc_memory_prints},
    {PART(P_SERVER_MEMORY), "server_memory", 0, doc_server_memory},
    {PART(P_BANDWIDTH), "bandwidth_or_capacity", 0, doc_bandwidth},
    /* from the document's own devices, errors and findings */
    {PART(P_VERDICT), "verdict", PART(P_DEVICES) | PART(P_OOM_EVENTS) | PART(P_FINDINGS),
     doc_verdict},
};

/* The first part of `parts` that needs one not before it. */
static int check_order(const char *table, const part *parts, size_t n, vr_error *err)
{
    unsigned before = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned missing = parts[i].needs & ~before;
        const char *name = "a part not in the table";
        for (size_t k = 0; missing && k < n; k++)
            if (missing & parts[k].part) {
                name = parts[k].name;
                break;
            }
        if (missing)
            return vr_fail(err,
                           "results: the %s part '%s' needs '%s', which does not run "
                           "before it",
                           table, parts[i].name, name);
        before |= parts[i].part;
    }
    return 0;
}

int vr_results_parts_check(vr_error *err)
{
    return check_order("document", doc_parts, sizeof doc_parts / sizeof *doc_parts, err) < 0 ||
                   check_order("device", device_parts, sizeof device_parts / sizeof *device_parts,
                               err) < 0
               ? -1
               : 0;
}

cJSON *vr_results_build(vr_db *db, const vr_results_opts *opts, vr_error *err)
{
    if (check_analysed(db, err) < 0 || vr_results_peak_live_reset(db, err) < 0)
        return NULL;
    build b;
    memset(&b, 0, sizeof b);
    b.db = db;
    b.opts = opts ? *opts : (vr_results_opts){10, 20, 0};
    b.doc = cJSON_CreateObject();
    int rc = run_parts(doc_parts, sizeof doc_parts / sizeof *doc_parts, &b, err);
    vr_ranks_free(&b.ranks);
    vr_oom_groups_free(b.groups);
    if (rc < 0) {
        cJSON_Delete(b.doc);
        return NULL;
    }
    return b.doc;
}
