/*-*** device_imbalance.c: devices of one process out of balance (docs/diagnosis.md) ***/
/*
 * One process that drives several GPUs (DataParallel's replicas, pipeline
 * stages in one process, a snapshot of several devices) should load them
 * alike; when the scatter gives one device a far larger share, that one
 * runs out of memory while the others sit nearly empty, and the cure is
 * to even the split, not a larger GPU. The devices of one process are
 * those of one (rank, scope) in the device table: the same rank, or, for
 * a source that names no rank, the same source (device.scope). Their
 * peaks (allocated) are compared by the rank rule: apart by more than
 * VR_IMBALANCE_PERMILLE of the largest is a `device-imbalance` warning,
 * on the device with the largest peak, naming it and the one with the
 * smallest, and, where the allocations live at both peaks say where
 * they were made, the site whose bytes differ most between the two: the
 * stack's user frame (snapshots, alloc_site), else the module
 * (allocation.module: a trace recorded with_modules), else the operator.
 * Part of the diagnosis pass: it writes `finding` rows.
 */
#include "analyze/analyze.h"

#include "util/buf.h"
#include "util/units.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char sql[] = "schemas/analyze.sql";

/* The devices named one by one in the detail; more are counted. */
#define LISTED_DEVICES 8

typedef struct {
    int64_t id, rank, scope, peak, ts_ns;
    int has_ts;
    char label[64];
} device_peak;

/* The devices of one process read so far. */
typedef struct {
    device_peak high, low;
    int devices;
    vr_buf list; /* "cuda:0 78.0 GiB, cuda:1 20.0 GiB" */
} process_devices;

/* The site whose bytes differ most between the two devices. */
typedef struct {
    int found;
    const char *what; /* "allocated at %s", "of module %s", "operator %s allocated" */
    int64_t high_bytes, low_bytes;
    vr_buf name, json; /* json: the name as a JSON string */
} imbalance_site;

static const char *const site_kinds[] = {"", "the memory allocated at ", "the memory of module ",
                                         "the memory operator "};
static const char *const site_ends[] = {"", "", "", " allocated"};
static const char *const site_sources[] = {"", "snapshot", "trace", "trace"};

static int64_t permille(int64_t part, int64_t whole)
{
    return whole > 0 ? (int64_t)((double)part * 1000.0 / (double)whole) : 0;
}

static const char *size_of(int64_t bytes, char *out, size_t n)
{
    vr_units_bytes(bytes, out, n);
    return out;
}

static void read_device(sqlite3_stmt *st, device_peak *d)
{
    memset(d, 0, sizeof *d);
    d->id = sqlite3_column_int64(st, 0);
    const char *label = (const char *)sqlite3_column_text(st, 1);
    snprintf(d->label, sizeof d->label, "%s", label ? label : "");
    d->rank = sqlite3_column_int64(st, 2);
    d->scope = sqlite3_column_int64(st, 3);
    d->peak = sqlite3_column_int64(st, 4);
    d->has_ts = sqlite3_column_type(st, 5) != SQLITE_NULL;
    d->ts_ns = sqlite3_column_int64(st, 5);
}

static void add_device(process_devices *p, const device_peak *d)
{
    if (!p->devices || d->peak > p->high.peak)
        p->high = *d;
    if (!p->devices || d->peak < p->low.peak)
        p->low = *d;
    char size[32];
    if (p->devices < LISTED_DEVICES)
        vr_buf_printf(&p->list, "%s%s %s", p->devices ? ", " : "", d->label,
                      size_of(d->peak, size, sizeof size));
    p->devices++;
}

static int read_site(vr_db *db, const process_devices *p, imbalance_site *s, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "device_imbalance_site", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":high", p->high.id, err) < 0 ||
        vr_db_bind_int(st, ":low", p->low.id, err) < 0)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        int kind = sqlite3_column_int(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *json = (const char *)sqlite3_column_text(st, 2);
        if (kind >= 1 && kind <= 3 && name && json) {
            s->found = kind;
            s->what = site_kinds[kind];
            vr_buf_puts(&s->name, name);
            vr_buf_puts(&s->json, json);
            s->high_bytes = sqlite3_column_int64(st, 3);
            s->low_bytes = sqlite3_column_int64(st, 4);
        }
        rc = sqlite3_step(st);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0
                                                 : vr_db_fail(db, err, "reading imbalance sites");
}

static void write_detail(const process_devices *p, const imbalance_site *s, vr_buf *out)
{
    char hi[32], lo[32], gap[32];
    vr_buf_printf(out, "Of the %d devices of one process (peaks allocated: %s%s), ", p->devices,
                  p->list.data ? p->list.data : "", p->devices > LISTED_DEVICES ? ", ..." : "");
    vr_buf_printf(out,
                  "%s peaked at %s and %s at %s: %s apart, more than %d %% of the largest "
                  "peak. The devices do unequal work: DataParallel's scatter of an uneven "
                  "batch or its outputs gathered on one device, or pipeline stages of unequal "
                  "size.",
                  p->high.label, size_of(p->high.peak, hi, sizeof hi), p->low.label,
                  size_of(p->low.peak, lo, sizeof lo),
                  size_of(p->high.peak - p->low.peak, gap, sizeof gap),
                  VR_IMBALANCE_PERMILLE / 10);
    if (!s->found)
        return;
    vr_buf_printf(out, " Where they differ most: %s", s->what);
    vr_buf_append(out, s->name.data, s->name.len);
    vr_buf_printf(out, "%s, %s on %s and %s on %s.", site_ends[s->found],
                  size_of(s->high_bytes, hi, sizeof hi), p->high.label,
                  size_of(s->low_bytes, lo, sizeof lo), p->low.label);
}

static void write_data(const process_devices *p, const imbalance_site *s, vr_buf *out)
{
    vr_buf_printf(out,
                  "{\"highest_device_peak_bytes\": {\"value\": %lld, \"source\": \"timeline\"}, "
                  "\"lowest_device_peak_bytes\": {\"value\": %lld, \"source\": \"timeline\"}, "
                  "\"devices\": {\"value\": %d, \"source\": \"timeline\"}",
                  (long long)p->high.peak, (long long)p->low.peak, p->devices);
    if (s->found) {
        const char *src = site_sources[s->found];
        vr_buf_printf(out, ", \"site\": {\"value\": ");
        vr_buf_append(out, s->json.data, s->json.len);
        vr_buf_printf(out,
                      ", \"source\": \"%s\"}, "
                      "\"site_highest_bytes\": {\"value\": %lld, \"source\": \"%s\"}, "
                      "\"site_lowest_bytes\": {\"value\": %lld, \"source\": \"%s\"}",
                      src, (long long)s->high_bytes, src, (long long)s->low_bytes, src);
    }
    vr_buf_putc(out, '}');
}

static int bind_text0(sqlite3_stmt *st, const char *name, const char *text, vr_error *err)
{
    return vr_db_bind_text(st, name, text, strlen(text), err);
}

static int insert(vr_db *db, const process_devices *p, vr_buf *title, vr_buf *detail,
                  vr_buf *data, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "insert_finding", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", p->high.id, err) < 0 ||
        vr_db_bind_opt_int(st, ":ts", p->high.has_ts, p->high.ts_ns, err) < 0 ||
        vr_db_bind_null(st, ":oom", err) < 0 ||
        vr_db_bind_int(st, ":rank", p->high.rank, err) < 0 ||
        bind_text0(st, ":kind", "device-imbalance", err) < 0 ||
        bind_text0(st, ":severity", "warning", err) < 0 ||
        bind_text0(st, ":confidence", "high", err) < 0 ||
        vr_db_bind_text(st, ":title", title->data, title->len, err) < 0 ||
        vr_db_bind_text(st, ":detail", detail->data, detail->len, err) < 0 ||
        vr_db_bind_text(st, ":data", data->data, data->len, err) < 0 ||
        bind_text0(st, ":secondary", "[]", err) < 0)
        return -1;
    return vr_db_step_done(db, st, err);
}

/* The rule, once a process's devices are all read. */
static int judge(vr_db *db, const process_devices *p, vr_error *err)
{
    int64_t gap = p->high.peak - p->low.peak;
    if (p->devices < 2 || permille(gap, p->high.peak) <= VR_IMBALANCE_PERMILLE)
        return 0;
    imbalance_site site = {0, NULL, 0, 0, VR_BUF_INIT, VR_BUF_INIT};
    vr_buf title = VR_BUF_INIT, detail = VR_BUF_INIT, data = VR_BUF_INIT;
    int rc = read_site(db, p, &site, err);
    if (rc == 0) {
        vr_buf_printf(&title, "%s peaked %lld %% above %s, a device of the same process",
                      p->high.label, (long long)(permille(gap, p->low.peak) / 10), p->low.label);
        write_detail(p, &site, &detail);
        write_data(p, &site, &data);
        rc = insert(db, p, &title, &detail, &data, err);
    }
    vr_buf_free(&site.name);
    vr_buf_free(&site.json);
    vr_buf_free(&title);
    vr_buf_free(&detail);
    vr_buf_free(&data);
    return rc;
}

static int same_process(const device_peak *a, const device_peak *b)
{
    return a->rank == b->rank && a->scope == b->scope;
}

/* The devices with a peak, by process (device_imbalance_devices): each
 * process judged when its rows end. */
int vr_analyze_device_imbalance(vr_db *db, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "device_imbalance_devices", err);
    if (!st)
        return -1;
    process_devices p = {{0}, {0}, 0, VR_BUF_INIT};
    int rc, out = 0;
    while (out == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        device_peak d;
        read_device(st, &d);
        if (p.devices && !same_process(&p.high, &d)) {
            out = judge(db, &p, err);
            p.devices = 0;
            vr_buf_free(&p.list);
        }
        add_device(&p, &d);
    }
    if (out == 0 && rc != SQLITE_DONE)
        out = vr_db_fail(db, err, "reading device peaks");
    sqlite3_reset(st);
    if (out == 0 && p.devices)
        out = judge(db, &p, err);
    vr_buf_free(&p.list);
    return out;
}
