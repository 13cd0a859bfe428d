/* Reader for PyTorch profiler (Kineto) Chrome-trace JSON, every era:
 * 2021 traces (memory events with only Device Type/Id and Bytes, cat
 * "Operator"/"Kernel"), 2022+ (Addr, Total Allocated/Reserved), 2024+
 * (fractional ts relative to baseTimeNanoseconds, which may come after the
 * events), ROCm (Device Type 6), and the bare-array Chrome format.
 *
 * json_scan finds each event; each event is read alone with the json_pull
 * reader, so memory stays flat whatever the trace size.
 *
 * The four batches of rows (memory events, ops, python ops, GPU ops) are
 * written by a writer thread (src/batch/batch.h) while this one scans and
 * decodes: on two cores the slower of the two sets the pace, not their sum.
 * Whatever else touches the connection while it runs (a new name, a
 * device, a step, an out-of-memory event, metadata, staged weights) goes
 * between enter() and leave(); names the cache knows, nearly all of them,
 * take nothing from the writer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "util/sat.h"
#include "util/timing.h"
#include "parse/json_scan.h"
#include "parse/json_pull.h"
#include "batch/batch.h"
#include "import/reader.h"
#include "import/readers/kineto_weights.h"
#include "scan/statcheck.h"

/* The batches' columns, by their names in import.sql: insert_mem_event,
 * insert_op (the first OP_NCOLS of op_cols) and insert_python_op (all of
 * them), insert_gpu_op. */
enum {
    ME_SOURCE,
    ME_DEVICE,
    ME_TS,
    ME_BYTES,
    ME_ADDR,
    ME_ALLOCATED,
    ME_RESERVED,
    ME_PID,
    ME_TID,
    ME_NCOLS
};
static const char *const mem_event_cols[ME_NCOLS] = {
    ":source",          ":device",         ":ts",  ":bytes", ":addr",
    ":total_allocated", ":total_reserved", ":pid", ":tid"};
enum {
    OP_SOURCE,
    OP_CAT,
    OP_NAME,
    OP_PID,
    OP_TID,
    OP_TS,
    OP_DUR,
    OP_EXTERNAL,
    OP_NCOLS,
    OP_CALL_FROM = OP_NCOLS,
    PY_NCOLS
};
static const char *const op_cols[PY_NCOLS] = {":source", ":cat", ":name",     ":pid",      ":tid",
                                              ":ts",     ":dur", ":external", ":call_from"};
enum {
    GO_SOURCE,
    GO_CAT,
    GO_NAME,
    GO_DEVICE_IDX,
    GO_STREAM,
    GO_TS,
    GO_DUR,
    GO_CORRELATION,
    GO_EXTERNAL,
    GO_BYTES,
    GO_NCOLS
};
static const char *const gpu_op_cols[GO_NCOLS] = {":source",   ":cat",  ":name", ":device_idx",
                                                  ":stream",   ":ts",   ":dur",  ":correlation",
                                                  ":external", ":bytes"};

/* Record kinds, counted per source (source_events). */
enum {
    K_MEMORY,
    K_OOM,
    K_CPU_MEMORY,
    K_OTHER_MEMORY,
    K_CPU_OP,
    K_USER_ANNOTATION,
    K_PYTHON_FUNCTION,
    K_KERNEL,
    K_MEMCPY,
    K_MEMSET,
    K_RUNTIME,
    K_FLOW,
    K_METADATA,
    K_OTHER,
    K_COUNT
};
static const char *const kind_names[K_COUNT] = {"memory",          "out_of_memory",
                                                "cpu_memory",      "other_device_memory",
                                                "cpu_op",          "user_annotation",
                                                "python_function", "kernel",
                                                "gpu_memcpy",      "gpu_memset",
                                                "runtime",         "flow",
                                                "metadata",        "other"};

typedef struct {
    const char *platform;
    int64_t idx;
    int64_t id;
    int no_totals; /* has memory events without totals */
} device_slot;

typedef struct {
    int64_t id;
    char *model;
    int64_t capacity;
} device_props;

/* An op's weight operands, staged in memory (STAGED_WEIGHTS at most) and
 * written to the stage table a run at a time: one hand-over of the
 * connection a run, not one an op. */
typedef struct {
    int64_t name_id, pid, tid, ts, dur;
    int pid_known, tid_known;
    vr_kw_result r;
} staged_weight;
#define STAGED_WEIGHTS 256

typedef struct {
    vr_import_ctx *ctx;
    vr_error *err;
    int failed;
    vr_batch *mem, *ops, *gpu, *py_ops;
    vr_batch_writer *writer; /* NULL: this thread writes the batches */
    staged_weight *staged;   /* STAGED_WEIGHTS of them, made at the first */
    size_t nstaged;
    sqlite3_stmt *ins_step, *ins_oom, *ins_meta;
    sqlite3_stmt *ins_weight; /* made at the first op with weights (stage_weights) */
    uint64_t weight_unknown_dtype, weight_unreadable, weight_saturated;
    /* Every device the trace names is kept, however many: found through
     * an open-addressing index (slot number + 1; 0 is empty), so a
     * hostile trace naming millions costs memory in proportion, not a
     * quadratic search. */
    device_slot *devices;
    size_t ndevices, devices_cap;
    uint32_t *device_index;
    size_t index_cap;
    device_props *props;
    size_t nprops, props_cap;
    uint64_t kinds[K_COUNT];
    uint64_t unknown_keys, malformed, no_totals;
    int have_base_time;
    int64_t first_malformed;
    uint64_t event_at;          /* the byte of the event being read */
    vr_stat_bad impossible;     /* memory events with impossible figures */
    vr_stat_bad oom_impossible; /* out-of-memory events' impossible totals */
    vr_buf text;                /* scratch for decoded strings */
} kineto;

typedef struct {
    int64_t device_type, device_id, addr, bytes, total_alloc, total_res;
    int has_type, has_id, has_addr, has_bytes, has_alloc, has_res;
    int64_t external_id, correlation, device, stream, gpu_bytes;
    int has_external, has_correlation, has_device, has_stream, has_gpu_bytes;
    vr_json_str call_from; /* python_function: the caller's "file:line" */
    int has_call_from;
    vr_kw_shapes shapes; /* cpu_op: record_shapes' lists, raw */
} args;

/* The fields of one event that matter; spans point into the event. The
 * args are read in the same pass (the event's kind may only be known after
 * them: key order is not fixed), keeping just the numbers any kind needs. */
typedef struct {
    char ph;
    vr_json_str cat, name;
    args a;
    int has_cat, has_name, has_ts, has_dur;
    int64_t pid, tid, ts, dur;
    int pid_known, tid_known;
} event;


/*-*** sniffing ***/

/* A JSON object naming traceEvents, schemaVersion or deviceProperties is
 * a Kineto trace; any other object or a bare array of objects (Chrome's
 * other form) only has the shape of one. */
static vr_sniff_level sniff(const char *head, size_t len)
{
    size_t i = 0;
    if (len >= 3 && (unsigned char)head[0] == 0xEF)
        i = 3; /* UTF-8 byte order mark */
    while (i < len && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
        i++;
    if (i >= len)
        return VR_SNIFF_NO;
    const char *rest = head + i;
    size_t n = len - i;
    int has_events = memmem(rest, n, "\"traceEvents\"", 13) != NULL;
    int has_kineto = memmem(rest, n, "\"schemaVersion\"", 15) != NULL ||
                     memmem(rest, n, "\"deviceProperties\"", 18) != NULL;
    if (rest[0] == '{')
        return has_events || has_kineto ? VR_SNIFF_SIGNATURE : VR_SNIFF_SHAPE;
    if (rest[0] == '[') { /* Chrome's bare-array form: a list of events */
        size_t j = 1;
        while (j < n && (rest[j] == ' ' || rest[j] == '\n' || rest[j] == '\r' || rest[j] == '\t'))
            j++;
        return j < n && rest[j] == '{' ? VR_SNIFF_SHAPE : VR_SNIFF_NO;
    }
    return VR_SNIFF_NO;
}

/*-*** helpers ***/

static int span_is_plain(const vr_json_str *s)
{
    if (s->has_escapes)
        return 0;
    for (size_t i = 0; i < s->len; i++)
        if ((unsigned char)s->s[i] < 0x20 || (unsigned char)s->s[i] >= 0x80)
            return 0;
    return 1;
}

/* The connection, taken from the writer thread (a no-op without one). */
static void enter(kineto *k)
{
    vr_batch_writer_enter(k->writer);
}

static void leave(kineto *k)
{
    vr_batch_writer_leave(k->writer);
}

/* A name the cache knows costs no hand-over of the connection. */
static int64_t intern_text(kineto *k, const char *text, size_t len)
{
    int64_t id = vr_db_intern_cached(k->ctx->db, text, len);
    if (id > 0)
        return id;
    enter(k);
    id = vr_db_intern(k->ctx->db, text, len, k->err);
    leave(k);
    return id;
}

/* The id of a name span in the name table, decoded and UTF-8-clean. */
static int64_t intern_span(kineto *k, const vr_json_str *s)
{
    if (span_is_plain(s))
        return intern_text(k, s->s, s->len);
    vr_buf_clear(&k->text);
    vr_json_unescape(s, &k->text, &k->ctx->json_faults);
    return intern_text(k, k->text.data, k->text.len);
}

static void note_time(kineto *k, int64_t t)
{
    if (t < k->ctx->start_ns)
        k->ctx->start_ns = t;
    if (t > k->ctx->end_ns)
        k->ctx->end_ns = t;
}

static int fail_db(kineto *k)
{
    k->failed = 1;
    return -1;
}

/*-*** parsing one event ***/

/* pid/tid are numbers, numeric strings ("25738"), or labels ("Spans",
 * "stream 7"): a label's trailing number is kept, else it is unknown. */
static int read_id(vr_json *j, int64_t *out)
{
    if (vr_json_peek(j) != VR_JSON_STRING)
        return vr_json_int64(j, out);
    vr_json_str s;
    if (!vr_json_string(j, &s))
        return 0;
    size_t i = s.len;
    while (i > 0 && s.s[i - 1] >= '0' && s.s[i - 1] <= '9')
        i--;
    int overflow;
    if (i == s.len || (i > 0 && s.s[i - 1] != ' '))
        return 0;
    return vr_json_parse_int64(s.s + i, s.len - i, out, &overflow);
}

static int is_known_key(const vr_json_str *key)
{
    static const char *const known[] = {
        "s",       "id",      "bp",       "cname",         "tts", "tdur", "id2", "scope",
        "bind_id", "flow_in", "flow_out", "use_async_tts", "sf",  "esf",  NULL};
    for (int i = 0; known[i]; i++)
        if (vr_json_str_eq(key, known[i]))
            return 1;
    return 0;
}

static void parse_args(vr_json *j, args *a)
{
    vr_json_str key;
    if (!vr_json_enter_object(j))
        return;
    while (vr_json_next_member(j, &key)) {
        const char *s = key.s;
        size_t n = key.len;
#define ARG(lit, field, flag)                            \
    if (n == sizeof lit - 1 && memcmp(s, lit, n) == 0) { \
        a->flag = vr_json_int64(j, &a->field);           \
        continue;                                        \
    }
        ARG("Device Type", device_type, has_type)
        ARG("Device Id", device_id, has_id)
        ARG("Addr", addr, has_addr)
        ARG("Bytes", bytes, has_bytes)
        ARG("Total Allocated", total_alloc, has_alloc)
        ARG("Total Reserved", total_res, has_res)
        ARG("External id", external_id, has_external)
        ARG("external id", external_id, has_external)
        ARG("correlation", correlation, has_correlation)
        ARG("device", device, has_device)
        ARG("stream", stream, has_stream)
        ARG("bytes", gpu_bytes, has_gpu_bytes)
#undef ARG
        if (vr_json_str_eq(&key, "CallFrom") && vr_json_peek(j) == VR_JSON_STRING) {
            a->has_call_from = vr_json_string(j, &a->call_from);
            continue;
        }
        /* Kept raw: read only for the ops that take weights (store_weights). */
        if (VR_JSON_EQ(&key, "Input Dims")) {
            a->shapes.has_dims = vr_json_raw(j, &a->shapes.dims);
            continue;
        }
        if (VR_JSON_EQ(&key, "Input type")) {
            a->shapes.has_types = vr_json_raw(j, &a->shapes.types);
            continue;
        }
        if (VR_JSON_EQ(&key, "Input Strides")) {
            a->shapes.has_strides = vr_json_raw(j, &a->shapes.strides);
            continue;
        }
        vr_json_skip(j);
    }
}

/* Dispatch on the key's length and first byte: this runs for every member
 * of every event. */
static void read_member(kineto *k, vr_json *j, const vr_json_str *key, event *e)
{
    vr_json_str ph;
    switch (key->len) {
    case 2:
        if (VR_JSON_EQ(key, "ph")) {
            if (vr_json_string(j, &ph) && ph.len)
                e->ph = ph.s[0];
            return;
        }
        if (VR_JSON_EQ(key, "ts")) {
            e->has_ts = vr_json_us_to_ns(j, &e->ts);
            return;
        }
        break;
    case 3:
        if (VR_JSON_EQ(key, "cat")) {
            e->has_cat = vr_json_string(j, &e->cat);
            return;
        }
        if (VR_JSON_EQ(key, "dur")) {
            e->has_dur = vr_json_us_to_ns(j, &e->dur);
            return;
        }
        if (VR_JSON_EQ(key, "pid")) {
            e->pid_known = read_id(j, &e->pid);
            return;
        }
        if (VR_JSON_EQ(key, "tid")) {
            e->tid_known = read_id(j, &e->tid);
            return;
        }
        break;
    case 4:
        if (VR_JSON_EQ(key, "name")) {
            e->has_name = vr_json_string(j, &e->name);
            return;
        }
        if (VR_JSON_EQ(key, "args")) {
            parse_args(j, &e->a);
            return;
        }
        break;
    }
    if (!is_known_key(key))
        k->unknown_keys++;
    vr_json_skip(j);
}

static int parse_event(kineto *k, const char *bytes, size_t len, event *e)
{
    vr_json j;
    vr_json_str key;
    memset(e, 0, sizeof *e);
    vr_json_init(&j, bytes, len, &k->ctx->json_faults);
    if (!vr_json_enter_object(&j))
        return 0;
    while (vr_json_next_member(&j, &key))
        read_member(k, &j, &key, e);
    return !j.failed;
}


/*-*** devices ***/

/* c10::DeviceType numbers as the profiler writes them. */
static const struct {
    int64_t type;
    const char *name;
} platforms[] = {
    {1, "cuda"}, {6, "rocm"}, /* HIP: PyTorch still calls these cuda:N */
    {12, "xpu"}, {13, "mps"}, {15, "hpu"}, {19, "mtia"},
};
#define N_PLATFORMS (sizeof platforms / sizeof platforms[0])

static const char *platform_of(int64_t device_type)
{
    for (size_t i = 0; i < N_PLATFORMS; i++)
        if (platforms[i].type == device_type)
            return platforms[i].name;
    return NULL;
}

/* Platforms are the static strings of platform_of(), so pointers compare. */
static size_t device_hash(const char *platform, int64_t idx, size_t cap)
{
    uint64_t h = ((uint64_t)idx ^ (uint64_t)(uintptr_t)platform) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (cap - 1);
}

/* Where (platform, idx) is in the index, or the empty place it would go. */
static uint32_t *device_place(kineto *k, const char *platform, int64_t idx)
{
    size_t mask = k->index_cap - 1;
    for (size_t j = device_hash(platform, idx, k->index_cap);; j = (j + 1) & mask) {
        uint32_t *place = &k->device_index[j];
        const device_slot *d = *place ? &k->devices[*place - 1] : NULL;
        if (!d || (d->idx == idx && d->platform == platform))
            return place;
    }
}

/* Keeps the index at most half full. */
static void grow_device_index(kineto *k)
{
    if (k->ndevices * 2 < k->index_cap)
        return;
    free(k->device_index);
    k->index_cap = k->index_cap ? k->index_cap * 2 : 64;
    k->device_index = vr_xmalloc(k->index_cap * sizeof *k->device_index);
    memset(k->device_index, 0, k->index_cap * sizeof *k->device_index);
    for (size_t i = 0; i < k->ndevices; i++)
        *device_place(k, k->devices[i].platform, k->devices[i].idx) = (uint32_t)(i + 1);
}

/* NULL with k->failed set on a database error. */
static device_slot *device_for(kineto *k, const char *platform, int64_t idx)
{
    if (k->index_cap) {
        uint32_t *place = device_place(k, platform, idx);
        if (*place)
            return &k->devices[*place - 1];
    }
    if (k->ndevices >= UINT32_MAX - 1)
        return NULL;
    enter(k);
    int64_t id = vr_reader_device(k->ctx, k->ctx->rank, platform, idx, k->err);
    leave(k);
    if (id < 0) {
        fail_db(k);
        return NULL;
    }
    vr_xgrow(&k->devices, &k->devices_cap, k->ndevices + 1, sizeof *k->devices, 8);
    k->devices[k->ndevices++] = (device_slot){platform, idx, id, 0};
    grow_device_index(k);
    *device_place(k, platform, idx) = (uint32_t)k->ndevices;
    return &k->devices[k->ndevices - 1];
}

/* Old traces give no running totals: analysis rebuilds them for devices
 * marked here. */
static int mark_no_totals(kineto *k, device_slot *dev)
{
    enter(k);
    sqlite3_stmt *st =
        vr_db_stmt(k->ctx->db, "schemas/import.sql", "mark_device_totals_unknown", k->err);
    dev->no_totals = 1;
    int rc = !st || vr_db_bind_int(st, ":device", dev->id, k->err) < 0 ||
                     vr_db_step_done(k->ctx->db, st, k->err) < 0
                 ? fail_db(k)
                 : 0;
    leave(k);
    return rc;
}

/*-*** figures no allocator gives ***/

/* Total Allocated and Total Reserved are the allocator's
 * allocated_bytes.all.current and reserved_bytes.all.current (what
 * PyTorch hands the profiler), so statcheck.h's rules are theirs: below
 * 0 or over 1 PiB, allocated over reserved. A Reserved of 0 is not
 * checked against allocated: it is what the profiler writes for an
 * allocator that reserves nothing (every CPU event of real traces has
 * Total Allocated > 0 = Total Reserved). */
static const char *const total_names[] = {"Total Allocated", "Total Reserved"};
static const char *const total_stat_keys[] = {"allocated_bytes.all.current",
                                              "reserved_bytes.all.current"};

/* The first of the event's totals that cannot be (0 or 1), or -1. */
static int impossible_total(const args *a, const char **why)
{
    const int has[] = {a->has_alloc, a->has_res};
    const int64_t v[] = {a->total_alloc, a->total_res};
    for (int i = 0; i < 2; i++)
        if (has[i] && (*why = vr_stat_impossible(total_stat_keys[i], v[i])) != NULL)
            return i;
    return -1;
}

static int over_reserved(const args *a)
{
    return a->has_alloc && a->has_res && a->total_res != 0 &&
           vr_stat_over_reserved(a->total_alloc, a->total_res, 0);
}

static void note_over_reserved(vr_stat_bad *bad, const args *a, uint64_t at)
{
    char why[96];
    snprintf(why, sizeof why, "over Total Reserved, %lld", (long long)a->total_res);
    vr_stat_bad_note(bad, total_names[0], a->total_alloc, why, at);
}

/* A memory event with a figure that cannot be is counted as malformed
 * and not read at all: its other figures came from the same broken
 * record, and a peak or an allocation read from it would be false.
 * Bytes, the event's allocation (> 0) or free (< 0), is not over 1 PiB
 * either way: no allocation of that size succeeded. 1 when refused. */
static int refuse_impossible(kineto *k, const args *a)
{
    const char *why = NULL;
    int i = impossible_total(a, &why);
    if (i >= 0)
        vr_stat_bad_note(&k->impossible, total_names[i], i ? a->total_res : a->total_alloc, why,
                         k->event_at);
    else if ((why = vr_stat_impossible_change(a->bytes)) != NULL)
        vr_stat_bad_note(&k->impossible, "Bytes", a->bytes, why, k->event_at);
    else if (over_reserved(a))
        note_over_reserved(&k->impossible, a, k->event_at);
    else
        return 0;
    return 1;
}

/* An out-of-memory error happened whatever its figures say, and its
 * Bytes is a request, which may be anything: only its impossible totals
 * are left out (both of a contradicting pair: which one is wrong cannot
 * be told), tallied as unreadable_oom_figure. */
static void drop_impossible_oom_totals(kineto *k, args *a)
{
    const char *why = NULL;
    int i;
    while ((i = impossible_total(a, &why)) >= 0) {
        vr_stat_bad_note(&k->oom_impossible, total_names[i], i ? a->total_res : a->total_alloc,
                         why, k->event_at);
        *(i ? &a->has_res : &a->has_alloc) = 0;
    }
    if (over_reserved(a)) {
        note_over_reserved(&k->oom_impossible, a, k->event_at);
        k->oom_impossible.count++; /* Total Reserved, left out with it */
        a->has_alloc = a->has_res = 0;
    }
}

/* "t.json: byte 812: a memory event's Total Allocated -9223372036854775808
 * is impossible (below 0): the event is not read (2 such events, counted
 * as malformed)", and the like for out-of-memory events' figures. */
static void warn_impossible(const kineto *k)
{
    const vr_stat_bad *bad = &k->impossible, *oom = &k->oom_impossible;
    const char *path = vr_input_path(k->ctx->in);
    if (bad->count)
        vr_warn(k->ctx->warn,
                "%s: byte %llu: a memory event's %s %lld is impossible (%s): the event is not "
                "read (%llu such event%s, counted as malformed)",
                path, (unsigned long long)bad->where, bad->key, (long long)bad->value, bad->why,
                (unsigned long long)bad->count, bad->count == 1 ? "" : "s");
    if (oom->count)
        vr_warn(k->ctx->warn,
                "%s: byte %llu: an out-of-memory event's %s %lld is impossible (%s): not read "
                "(%llu such figure%s)",
                path, (unsigned long long)oom->where, oom->key, (long long)oom->value, oom->why,
                (unsigned long long)oom->count, oom->count == 1 ? "" : "s");
}

/*-*** storing events ***/

static int store_oom(kineto *k, const event *e, const args *read, const device_slot *dev)
{
    args figures = *read, *a = &figures;
    drop_impossible_oom_totals(k, a);
    sqlite3_stmt *st = k->ins_oom;
    vr_error *err = k->err;
    enter(k);
    int rc =
        vr_db_bind_int(st, ":source", k->ctx->source_id, err) < 0 ||
                vr_db_bind_int(st, ":device", dev->id, err) < 0 ||
                vr_db_bind_int(st, ":ts", e->ts, err) < 0 ||
                vr_db_bind_int(st, ":requested", a->bytes, err) < 0 ||
                vr_db_bind_opt_int(st, ":total_allocated", a->has_alloc, a->total_alloc, err) <
                    0 ||
                vr_db_bind_opt_int(st, ":total_reserved", a->has_res, a->total_res, err) < 0 ||
                vr_db_step_done(k->ctx->db, st, err) < 0
            ? fail_db(k)
            : 0;
    leave(k);
    return rc;
}

static int store_memory(kineto *k, const event *e, const args *a, int oom)
{
    const char *platform = a->has_type ? platform_of(a->device_type) : NULL;
    if (a->has_type && a->device_type == 0) {
        k->kinds[K_CPU_MEMORY]++;
        return 0;
    }
    if (!platform || !a->has_id || !a->has_bytes || !e->has_ts) {
        k->kinds[K_OTHER_MEMORY]++;
        return 0;
    }
    if (!oom && refuse_impossible(k, a))
        return 0;
    device_slot *dev = device_for(k, platform, a->device_id);
    if (!dev)
        return k->failed ? -1 : (k->kinds[K_OTHER_MEMORY]++, 0);
    k->kinds[oom ? K_OOM : K_MEMORY]++;
    note_time(k, e->ts);
    if (oom)
        return store_oom(k, e, a, dev);
    if (!a->has_alloc && !dev->no_totals && mark_no_totals(k, dev) < 0)
        return -1;
    k->no_totals += !a->has_alloc;
    vr_batch *b = k->mem;
    vr_batch_int(b, ME_SOURCE, k->ctx->source_id);
    vr_batch_int(b, ME_DEVICE, dev->id);
    vr_batch_int(b, ME_TS, e->ts);
    vr_batch_int(b, ME_BYTES, a->bytes);
    vr_batch_opt_int(b, ME_ADDR, a->has_addr, a->addr);
    vr_batch_opt_int(b, ME_ALLOCATED, a->has_alloc, a->total_alloc);
    vr_batch_opt_int(b, ME_RESERVED, a->has_res, a->total_res);
    vr_batch_opt_int(b, ME_PID, e->pid_known, e->pid);
    vr_batch_opt_int(b, ME_TID, e->tid_known, e->tid);
    return vr_batch_row(b, k->err) < 0 ? fail_db(k) : 0;
}

static int step_number(const vr_json_str *name, int64_t *n)
{
    static const char prefix[] = "ProfilerStep#";
    const size_t plen = sizeof prefix - 1;
    int overflow;
    return name->len > plen && memcmp(name->s, prefix, plen) == 0 &&
           vr_json_parse_int64(name->s + plen, name->len - plen, n, &overflow) && !overflow;
}

/* A python_function event's caller ("CallFrom", recent PyTorch): the
 * :call_from of insert_python_op. */
static int batch_call_from(kineto *k, vr_batch *b, const args *a)
{
    if (!a->has_call_from || a->call_from.len == 0) {
        vr_batch_null(b, OP_CALL_FROM);
        return 0;
    }
    int64_t id = intern_span(k, &a->call_from);
    if (id < 0)
        return fail_db(k);
    vr_batch_int(b, OP_CALL_FROM, id);
    return 0;
}

/* The stage table, made at the first op with weights. Under enter(). */
static int begin_weight_stage(kineto *k)
{
    if (k->ins_weight)
        return 0;
    if (vr_db_exec_named(k->ctx->db, "schemas/import.sql", "begin_op_weight_stage", k->err) < 0)
        return -1;
    k->ins_weight =
        vr_db_stmt(k->ctx->db, "schemas/import.sql", "insert_op_weight_stage", k->err);
    return k->ins_weight ? 0 : -1;
}

static int insert_staged(kineto *k, const staged_weight *w)
{
    sqlite3_stmt *st = k->ins_weight;
    vr_error *err = k->err;
    const vr_kw_result *r = &w->r;
    size_t shape_len = strlen(r->shape);
    return vr_db_bind_int(st, ":source", k->ctx->source_id, err) < 0 ||
                   vr_db_bind_int(st, ":name", w->name_id, err) < 0 ||
                   vr_db_bind_opt_int(st, ":pid", w->pid_known, w->pid, err) < 0 ||
                   vr_db_bind_opt_int(st, ":tid", w->tid_known, w->tid, err) < 0 ||
                   vr_db_bind_int(st, ":ts", w->ts, err) < 0 ||
                   vr_db_bind_int(st, ":dur", w->dur, err) < 0 ||
                   vr_db_bind_int(st, ":bytes", r->bytes, err) < 0 ||
                   vr_db_bind_int(st, ":tensors", r->tensors, err) < 0 ||
                   vr_db_bind_int(st, ":buffer_bytes", r->buffer_bytes, err) < 0 ||
                   vr_db_bind_int(st, ":uncounted", r->uncounted + r->unreadable, err) < 0 ||
                   vr_db_bind_opt_int(st, ":weight_bytes", r->weight_bytes >= 0, r->weight_bytes,
                                      err) < 0 ||
                   (shape_len ? vr_db_bind_text(st, ":shape", r->shape, shape_len, err)
                              : vr_db_bind_null(st, ":shape", err)) < 0 ||
                   vr_db_step_done(k->ctx->db, st, err) < 0
               ? -1
               : 0;
}

/* The staged weights to the stage table, in the order they came. */
static int write_staged(kineto *k)
{
    if (k->nstaged == 0)
        return 0;
    enter(k);
    int rc = begin_weight_stage(k);
    for (size_t i = 0; i < k->nstaged && rc == 0; i++)
        rc = insert_staged(k, &k->staged[i]);
    leave(k);
    k->nstaged = 0;
    return rc < 0 ? fail_db(k) : 0;
}

/* The weight operands of an op that reads weights (record_shapes), staged
 * with the op's key: its row id is known only once the op batches are
 * written (resolve_weights). */
static int store_weights(kineto *k, const event *e, int64_t name_id, int op)
{
    vr_kw_result r;
    if (!vr_kw_read(op, &e->a.shapes, &r, &k->ctx->json_faults))
        return 0;
    k->weight_unknown_dtype += (uint64_t)r.uncounted;
    k->weight_unreadable += (uint64_t)r.unreadable;
    k->weight_saturated += (uint64_t)r.saturated;
    if (!k->staged)
        k->staged = vr_xmalloc(STAGED_WEIGHTS * sizeof *k->staged);
    k->staged[k->nstaged++] =
        (staged_weight){name_id, e->pid, e->tid, e->ts, e->dur, e->pid_known, e->tid_known, r};
    return k->nstaged == STAGED_WEIGHTS ? write_staged(k) : 0;
}

static int store_op(kineto *k, const event *e, const char *cat, int kind)
{
    const args *a = &e->a;
    int64_t name_id = intern_span(k, &e->name);
    if (name_id < 0)
        return fail_db(k);
    k->kinds[kind]++;
    note_time(k, e->ts);
    note_time(k, vr_sat_add(e->ts, e->dur));
    vr_batch *b = kind == K_PYTHON_FUNCTION ? k->py_ops : k->ops;
    if (kind == K_PYTHON_FUNCTION && batch_call_from(k, b, a) < 0)
        return -1;
    vr_batch_int(b, OP_SOURCE, k->ctx->source_id);
    vr_batch_static_text(b, OP_CAT, cat);
    vr_batch_int(b, OP_NAME, name_id);
    vr_batch_opt_int(b, OP_PID, e->pid_known, e->pid);
    vr_batch_opt_int(b, OP_TID, e->tid_known, e->tid);
    vr_batch_int(b, OP_TS, e->ts);
    vr_batch_int(b, OP_DUR, e->dur);
    vr_batch_opt_int(b, OP_EXTERNAL, a->has_external, a->external_id);
    if (vr_batch_row(b, k->err) < 0)
        return fail_db(k);
    int op;
    if (kind == K_CPU_OP && a->shapes.has_dims && (op = vr_kw_op(&e->name)) >= 0 &&
        store_weights(k, e, name_id, op) < 0)
        return -1;
    int64_t number;
    if (kind != K_PYTHON_FUNCTION && step_number(&e->name, &number)) {
        sqlite3_stmt *st = k->ins_step;
        enter(k);
        int rc = vr_db_bind_int(st, ":source", k->ctx->source_id, k->err) < 0 ||
                 vr_db_bind_int(st, ":number", number, k->err) < 0 ||
                 vr_db_bind_int(st, ":ts", e->ts, k->err) < 0 ||
                 vr_db_bind_int(st, ":dur", e->dur, k->err) < 0 ||
                 vr_db_step_done(k->ctx->db, st, k->err) < 0;
        leave(k);
        if (rc)
            return fail_db(k);
    }
    return 0;
}

static int store_gpu_op(kineto *k, const event *e, const char *cat, int kind)
{
    const args *a = &e->a;
    int64_t name_id = intern_span(k, &e->name);
    if (name_id < 0)
        return fail_db(k);
    k->kinds[kind]++;
    vr_batch *b = k->gpu;
    vr_batch_int(b, GO_SOURCE, k->ctx->source_id);
    vr_batch_static_text(b, GO_CAT, cat);
    vr_batch_int(b, GO_NAME, name_id);
    vr_batch_opt_int(b, GO_DEVICE_IDX, a->has_device || e->pid_known,
                     a->has_device ? a->device : e->pid);
    vr_batch_opt_int(b, GO_STREAM, a->has_stream || e->tid_known,
                     a->has_stream ? a->stream : e->tid);
    vr_batch_int(b, GO_TS, e->ts);
    vr_batch_int(b, GO_DUR, e->dur);
    vr_batch_opt_int(b, GO_CORRELATION, a->has_correlation, a->correlation);
    vr_batch_opt_int(b, GO_EXTERNAL, a->has_external, a->external_id);
    vr_batch_opt_int(b, GO_BYTES, a->has_gpu_bytes, a->gpu_bytes);
    return vr_batch_row(b, k->err) < 0 ? fail_db(k) : 0;
}

/* Old (2021) category names map to today's. */
static int classify_complete(const vr_json_str *cat, const char **norm)
{
    static const struct {
        const char *cat, *norm;
        int kind;
    } map[] = {
        {"cpu_op", "cpu_op", K_CPU_OP},
        {"Operator", "cpu_op", K_CPU_OP},
        {"user_annotation", "user_annotation", K_USER_ANNOTATION},
        {"python_function", "python_function", K_PYTHON_FUNCTION},
        {"kernel", "kernel", K_KERNEL},
        {"Kernel", "kernel", K_KERNEL},
        {"gpu_memcpy", "gpu_memcpy", K_MEMCPY},
        {"Memcpy", "gpu_memcpy", K_MEMCPY},
        {"gpu_memset", "gpu_memset", K_MEMSET},
        {"Memset", "gpu_memset", K_MEMSET},
        {"cuda_runtime", "cuda_runtime", K_RUNTIME},
        {"cuda_driver", "cuda_driver", K_RUNTIME},
        {"Runtime", "cuda_runtime", K_RUNTIME},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (vr_json_str_eq(cat, map[i].cat)) {
            *norm = map[i].norm;
            return map[i].kind;
        }
    return K_OTHER;
}

static int store_event(kineto *k, const event *e)
{
    if (e->has_name &&
        (vr_json_str_eq(&e->name, "[memory]") || vr_json_str_eq(&e->name, "[OutOfMemory]"))) {
        return store_memory(k, e, &e->a, e->name.len == 13);
    }
    if (e->ph == 'X' && e->has_cat && e->has_name && e->has_ts) {
        const char *norm = NULL;
        int kind = classify_complete(&e->cat, &norm);
        switch (kind) {
        case K_CPU_OP:
        case K_USER_ANNOTATION:
        case K_PYTHON_FUNCTION:
            return store_op(k, e, norm, kind);
        case K_KERNEL:
        case K_MEMCPY:
        case K_MEMSET:
            return store_gpu_op(k, e, norm, kind);
        default:
            k->kinds[kind]++;
            return 0;
        }
    }
    if (e->ph == 's' || e->ph == 'f' || e->ph == 't')
        k->kinds[K_FLOW]++;
    else if (e->ph == 'M')
        k->kinds[K_METADATA]++;
    else
        k->kinds[K_OTHER]++;
    return 0;
}

static int on_element(void *ud, const char *bytes, size_t len, uint64_t offset)
{
    kineto *k = ud;
    event e;
    k->ctx->events++;
    k->event_at = offset;
    if (!parse_event(k, bytes, len, &e)) {
        if (k->malformed++ == 0)
            k->first_malformed = (int64_t)offset;
        return 0;
    }
    if (e.has_ts && !e.has_dur)
        e.dur = 0;
    if (e.dur < 0)
        e.dur = 0;
    return store_event(k, &e) < 0 ? -1 : 0;
}

/*-*** top-level members ***/

static void read_device_properties(kineto *k, const char *v, size_t n)
{
    cJSON *arr = cJSON_ParseWithLength(v, n);
    const cJSON *item;
    cJSON_ArrayForEach(item, arr)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(item, "id");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(item, "name");
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(item, "totalGlobalMem");
        if (!cJSON_IsNumber(id))
            continue;
        vr_xgrow(&k->props, &k->props_cap, k->nprops + 1, sizeof *k->props, 8);
        device_props *p = &k->props[k->nprops++];
        p->id = vr_sat_from_double(id->valuedouble);
        p->model = NULL;
        if (cJSON_IsString(name)) {
            vr_buf_clear(&k->text);
            vr_json_sanitize_utf8(name->valuestring, strlen(name->valuestring), &k->text,
                                  &k->ctx->json_faults);
            p->model = vr_xstrdup(k->text.data);
        }
        p->capacity = cJSON_IsNumber(mem) ? vr_sat_from_double(mem->valuedouble) : 0;
    }
    cJSON_Delete(arr);
}

static void read_distributed_info(kineto *k, const char *v, size_t n)
{
    cJSON *obj = cJSON_ParseWithLength(v, n);
    const cJSON *rank = cJSON_GetObjectItemCaseSensitive(obj, "rank");
    const cJSON *world = cJSON_GetObjectItemCaseSensitive(obj, "world_size");
    /* Devices already created keep rank -1: real traces write this key
     * before traceEvents, and a late one only loses the rank label. */
    if (cJSON_IsNumber(rank) && k->ndevices == 0)
        k->ctx->rank = vr_sat_from_double(rank->valuedouble);
    if (cJSON_IsNumber(world))
        k->ctx->world_size = vr_sat_from_double(world->valuedouble);
    cJSON_Delete(obj);
}

/* Short scalar members are kept as metadata (schemaVersion, traceName...). */
static int store_meta(kineto *k, const char *key, size_t keylen, const char *v, size_t n)
{
    vr_json j;
    vr_json_str s;
    vr_json_init(&j, v, n, &k->ctx->json_faults);
    vr_json_kind kind = vr_json_peek(&j);
    if (kind == VR_JSON_OBJECT || kind == VR_JSON_ARRAY || n > 1024)
        return 0;
    vr_buf_clear(&k->text);
    if (kind == VR_JSON_STRING && vr_json_string(&j, &s))
        vr_json_unescape(&s, &k->text, &k->ctx->json_faults);
    else
        vr_buf_append(&k->text, v, n);
    sqlite3_stmt *st = k->ins_meta;
    enter(k);
    int rc = vr_db_bind_int(st, ":source", k->ctx->source_id, k->err) < 0 ||
                     vr_db_bind_text(st, ":key", key, keylen, k->err) < 0 ||
                     vr_db_bind_text(st, ":value", k->text.data, k->text.len, k->err) < 0 ||
                     vr_db_step_done(k->ctx->db, st, k->err) < 0
                 ? fail_db(k)
                 : 0;
    leave(k);
    return rc;
}

static int key_is(const char *key, size_t n, const char *lit)
{
    return n == strlen(lit) && memcmp(key, lit, n) == 0;
}

static int on_member(void *ud, const char *key, size_t keylen, const char *v, size_t n,
                     uint64_t offset)
{
    kineto *k = ud;
    (void)offset;
    if (key_is(key, keylen, "deviceProperties")) {
        read_device_properties(k, v, n);
    } else if (key_is(key, keylen, "distributedInfo")) {
        read_distributed_info(k, v, n);
    } else if (key_is(key, keylen, "baseTimeNanoseconds")) {
        vr_json j;
        vr_json_init(&j, v, n, &k->ctx->json_faults);
        k->have_base_time = vr_json_int64(&j, &k->ctx->base_time_ns);
    }
    return store_meta(k, key, keylen, v, n) < 0 ? -1 : 0;
}

/* The staged weights join their ops, now written: the n-th staged op of
 * one key (source, thread, time, duration, name) is the n-th such op. */
static int resolve_weights(kineto *k)
{
    if (!k->ins_weight)
        return 0;
    sqlite3_stmt *st = vr_db_stmt(k->ctx->db, "schemas/import.sql", "resolve_op_weights", k->err);
    if (!st || vr_db_bind_int(st, ":source", k->ctx->source_id, k->err) < 0 ||
        vr_db_step_done(k->ctx->db, st, k->err) < 0)
        return -1;
    return vr_db_exec_named(k->ctx->db, "schemas/import.sql", "end_op_weight_stage", k->err);
}

/*-*** driver ***/

static int prepare(kineto *k)
{
    static const char f[] = "schemas/import.sql";
    vr_db *db = k->ctx->db;
    k->mem = vr_batch_new(db, f, "insert_mem_event", mem_event_cols, ME_NCOLS, k->err);
    k->ops = vr_batch_new(db, f, "insert_op", op_cols, OP_NCOLS, k->err);
    k->py_ops = vr_batch_new(db, f, "insert_python_op", op_cols, PY_NCOLS, k->err);
    k->gpu = vr_batch_new(db, f, "insert_gpu_op", gpu_op_cols, GO_NCOLS, k->err);
    k->ins_step = vr_db_stmt(db, f, "insert_step", k->err);
    k->ins_oom = vr_db_stmt(db, f, "insert_oom", k->err);
    k->ins_meta = vr_db_stmt(db, f, "insert_meta", k->err);
    return k->mem && k->ops && k->py_ops && k->gpu && k->ins_step && k->ins_oom && k->ins_meta
               ? 0
               : -1;
}

/* The batches' rows go to a writer thread from here; without one (none
 * could start) this thread writes them, as before. ops and py_ops fill one
 * table: their statements keep the rows they write without a writer, so
 * that every op keeps its id. */
static void start_writer(kineto *k)
{
    vr_error ignored = VR_ERROR_INIT;
    k->writer = vr_batch_writer_start(k->ctx->db, &ignored);
    vr_batch_writer_attach(k->writer, k->mem);
    vr_batch_writer_attach_rows(k->writer, k->ops, VR_BATCH_ROWS);
    vr_batch_writer_attach_rows(k->writer, k->py_ops, VR_BATCH_ROWS);
    vr_batch_writer_attach(k->writer, k->gpu);
}

/* Waits for the writer to write every batch handed over and ends it: what
 * follows reads the rows. */
static int stop_writer(kineto *k)
{
    int rc = vr_batch_writer_stop(k->writer, k->err);
    k->writer = NULL;
    return rc;
}

/* The rows not written yet, in the order the import without a writer wrote
 * them. The reader's CPU is printed first: with the writer's, it says which
 * of the two threads sets the import's pace. */
static int write_rest(kineto *k)
{
    vr_timing_figure("import: reader thread: cpu", vr_thread_cpu());
    double t = vr_now();
    int rc = stop_writer(k) < 0 || vr_batch_flush(k->mem, k->err) < 0 ||
                     vr_batch_flush(k->ops, k->err) < 0 ||
                     vr_batch_flush(k->py_ops, k->err) < 0 ||
                     vr_batch_flush(k->gpu, k->err) < 0 || write_staged(k) < 0
                 ? -1
                 : 0;
    vr_timing("import: the last rows written", t);
    return rc;
}

static int describe_devices(kineto *k)
{
    sqlite3_stmt *st = vr_db_stmt(k->ctx->db, "schemas/import.sql", "describe_device", k->err);
    if (!st)
        return -1;
    /* deviceProperties name an index, not a platform: it describes that
     * index on whichever platform the trace's events used. */
    for (size_t p = 0; p < k->nprops && k->index_cap; p++)
        for (size_t i = 0; i < N_PLATFORMS; i++) {
            uint32_t place = *device_place(k, platforms[i].name, k->props[p].id);
            if (!place)
                continue;
            const char *model = k->props[p].model;
            if (vr_db_bind_int(st, ":device", k->devices[place - 1].id, k->err) < 0 ||
                (model ? vr_db_bind_text(st, ":model", model, strlen(model), k->err)
                       : vr_db_bind_null(st, ":model", k->err)) < 0 ||
                vr_db_bind_opt_int(st, ":capacity", k->props[p].capacity > 0,
                                   k->props[p].capacity, k->err) < 0 ||
                vr_db_step_done(k->ctx->db, st, k->err) < 0)
                return -1;
        }
    return 0;
}

static int record_counts(kineto *k)
{
    sqlite3_stmt *st = vr_db_stmt(k->ctx->db, "schemas/import.sql", "insert_event_count", k->err);
    if (!st)
        return -1;
    for (int i = 0; i < K_COUNT; i++) {
        if (!k->kinds[i])
            continue;
        if (vr_db_bind_int(st, ":source", k->ctx->source_id, k->err) < 0 ||
            vr_db_bind_text(st, ":kind", kind_names[i], strlen(kind_names[i]), k->err) < 0 ||
            vr_db_bind_int(st, ":count", (int64_t)k->kinds[i], k->err) < 0 ||
            vr_db_step_done(k->ctx->db, st, k->err) < 0)
            return -1;
    }
    vr_import_ctx *c = k->ctx;
    if (vr_reader_tally(c, "unknown_key", k->unknown_keys, k->err) < 0 ||
        vr_reader_tally(c, "malformed_event", k->malformed + k->impossible.count, k->err) < 0 ||
        vr_reader_tally(c, "memory_event_without_totals", k->no_totals, k->err) < 0 ||
        vr_reader_tally(c, "unreadable_oom_figure", k->oom_impossible.count, k->err) < 0 ||
        vr_reader_tally(c, "weight_operand_unknown_dtype", k->weight_unknown_dtype, k->err) < 0 ||
        vr_reader_tally(c, "weight_operand_unreadable", k->weight_unreadable, k->err) < 0 ||
        vr_reader_tally(c, "weight_bytes_saturated", k->weight_saturated, k->err) < 0)
        return -1;
    if (k->malformed)
        vr_warn(c->warn, "%s: %llu malformed event(s) skipped, the first at byte %lld",
                vr_input_path(c->in), (unsigned long long)k->malformed,
                (long long)k->first_malformed);
    warn_impossible(k);
    return 0;
}

/* Since 2024 Kineto writes times relative to baseTimeNanoseconds, which
 * real files put after the events: a cut file loses it. Times before 1973
 * mean the base is missing; the report's relative times are still right,
 * but the JSON's epoch times are not: it is tallied, and the truncation
 * warning says so. */
#define EPOCH_1973_NS 100000000000000000LL
static void check_base_time(kineto *k)
{
    vr_import_ctx *c = k->ctx;
    if (k->have_base_time || c->start_ns > c->end_ns || c->start_ns >= EPOCH_1973_NS)
        return;
    c->json_faults.base_time_missing = 1;
}

static int check_end(kineto *k, vr_json_scan *scan)
{
    vr_import_ctx *c = k->ctx;
    const char *path = vr_input_path(c->in);
    uint64_t at = vr_input_offset(c->in);
    if (at == 0)
        return vr_fail_code(k->err, VR_ERR_NOT_RECOGNISED,
                            "%s: empty input (expected a PyTorch profiler trace)", path);
    /* JSON that only had a trace's shape was some other JSON after all; a
     * trace whose markers were seen but whose events were cut off is a
     * broken trace. */
    vr_error_code code = c->sniffed == VR_SNIFF_SIGNATURE && !vr_json_scan_complete(scan)
                             ? VR_ERR_MALFORMED
                             : VR_ERR_NOT_RECOGNISED;
    if (!vr_json_scan_stream_seen(scan))
        return vr_fail_code(k->err, code,
                            vr_json_scan_complete(scan)
                                ? "%s: no \"traceEvents\" list: not a PyTorch profiler trace"
                                : "%s: ends at byte %llu before the \"traceEvents\" list began",
                            path, (unsigned long long)at);
    /* The scanner's own counts of control characters and repaired quotes
     * are not added: the pull reader counts the same bytes again when it
     * reads each event. */
    return 0;
}

static int import(vr_import_ctx *ctx, vr_error *err)
{
    kineto k;
    memset(&k, 0, sizeof k);
    k.ctx = ctx;
    k.err = err;
    vr_json_scan scan;
    vr_json_scan_init(&scan, "traceEvents", on_member, on_element, &k);
    int rc = prepare(&k) < 0 || (start_writer(&k), vr_reader_scan_json(ctx, &scan, err) < 0) ||
                     check_end(&k, &scan) < 0 || write_rest(&k) < 0 || resolve_weights(&k) < 0 ||
                     (check_base_time(&k), 0) || describe_devices(&k) < 0 || record_counts(&k) < 0
                 ? -1
                 : 0;
    /* A failed import still waits for the writer before its batches go;
     * the caller rolls the transaction back. */
    vr_error ignored = VR_ERROR_INIT;
    vr_batch_writer_stop(k.writer, &ignored);
    free(k.staged);
    vr_batch_free(k.mem);
    vr_batch_free(k.ops);
    vr_batch_free(k.py_ops);
    vr_batch_free(k.gpu);
    vr_json_scan_free(&scan);
    for (size_t i = 0; i < k.nprops; i++)
        free(k.props[i].model);
    free(k.props);
    free(k.devices);
    free(k.device_index);
    vr_buf_free(&k.text);
    return rc;
}

const vr_reader vr_reader_kineto = {"kineto", "a PyTorch profiler (Kineto) trace", sniff, import,
                                    NULL};
