/* One nvidia-smi -q reading gathered into rows (see nvsmi_query.h): the model the
 * -q text and -q -x XML readers share. */
#include "import/readers/nvsmi/nvsmi_query.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest text kept of each kind: more is cut (a name is for display). */
enum { ID_MAX = 128, NAME_MAX_LEN = 1024, TYPE_MAX = 16 };

static void trim(const char **s, size_t *len)
{
    while (*len && isspace((unsigned char)**s))
        (*s)++, (*len)--;
    while (*len && isspace((unsigned char)(*s)[*len - 1]))
        (*len)--;
}

static void keep_text(vr_buf *b, const char *s, size_t len, size_t max)
{
    trim(&s, &len);
    vr_buf_clear(b);
    vr_buf_append(b, s, len < max ? len : max);
}

static vr_monitor_text text_of(const vr_buf *b)
{
    vr_monitor_text t = {b->len ? b->data : NULL, b->len};
    return t;
}

static void clear_gpu(vr_nvsmi *g)
{
    vr_buf_clear(&g->uuid);
    vr_buf_clear(&g->bus_id);
    vr_buf_clear(&g->name);
    vr_monitor_sample_clear(&g->s);
    g->gpu_id = g->sample_id = g->idx = VR_MONITOR_NONE;
    for (size_t i = 0; i < g->n_mig; i++)
        vr_buf_clear(&g->mig[i].uuid);
    g->n_mig = 0;
    g->in_gpu = g->written = g->in_mig = g->in_proc = 0;
}

void vr_nvsmi_init(vr_nvsmi *g, vr_monitor *m)
{
    memset(g, 0, sizeof *g);
    g->m = m;
    g->ts_ns = g->attached = VR_MONITOR_NONE;
    clear_gpu(g);
}

void vr_nvsmi_free(vr_nvsmi *g)
{
    vr_buf_free(&g->uuid);
    vr_buf_free(&g->bus_id);
    vr_buf_free(&g->name);
    vr_buf_free(&g->proc_type);
    vr_buf_free(&g->proc_name);
    for (size_t i = 0; i < VR_NVSMI_MAX_MIG; i++)
        vr_buf_free(&g->mig[i].uuid);
    free(g->rows);
}

/*-*** the reading's rows, for their index ***/

static void copy_id(char *dst, uint8_t *dst_len, size_t cap, vr_monitor_text t)
{
    size_t n = t.len < cap ? t.len : cap;
    if (n)
        memcpy(dst, t.s, n);
    *dst_len = (uint8_t)n;
}

static void remember_row(vr_nvsmi *g, const vr_monitor_gpu *row)
{
    if (g->n_rows == VR_NVSMI_MAX_ROWS) {
        g->too_many_rows = 1;
        return;
    }
    vr_xgrow(&g->rows, &g->cap_rows, g->n_rows + 1, sizeof *g->rows, 8);
    vr_nvsmi_row *r = &g->rows[g->n_rows++];
    copy_id(r->uuid, &r->uuid_len, sizeof r->uuid, row->uuid);
    copy_id(r->bus_id, &r->bus_id_len, sizeof r->bus_id, row->bus_id);
    copy_id(r->mig, &r->mig_len, sizeof r->mig, row->mig);
    r->idx = g->idx;
}

static int index_rows(vr_nvsmi *g, vr_error *err)
{
    for (size_t i = 0; i < g->n_rows; i++) {
        vr_nvsmi_row *r = &g->rows[i];
        vr_monitor_gpu row;
        vr_monitor_gpu_clear(&row);
        row.uuid = (vr_monitor_text){r->uuid, r->uuid_len};
        row.bus_id = (vr_monitor_text){r->bus_id, r->bus_id_len};
        row.mig = (vr_monitor_text){r->mig, r->mig_len};
        row.idx = r->idx;
        if (vr_monitor_gpu_id(g->m, &row, err) < 0)
            return -1;
    }
    return 0;
}

int vr_nvsmi_reading_end(vr_nvsmi *g, vr_error *err)
{
    if (vr_nvsmi_gpu_end(g, err) < 0)
        return -1;
    int complete = g->attached > 0 && g->gpus_listed == g->attached && !g->too_many_rows;
    int rc = complete ? index_rows(g, err) : 0;
    g->n_rows = 0;
    g->too_many_rows = 0;
    g->gpus_listed = 0;
    g->attached = VR_MONITOR_NONE;
    return rc;
}

/*-*** writing a GPU ***/

static int has_figure(const vr_monitor_sample *s)
{
    return s->used_bytes != VR_MONITOR_NONE || s->total_bytes != VR_MONITOR_NONE ||
           s->free_bytes != VR_MONITOR_NONE || s->reserved_bytes != VR_MONITOR_NONE ||
           s->util_gpu_pct != VR_MONITOR_NONE || s->util_memory_pct != VR_MONITOR_NONE;
}

/* The reading of a GPU or MIG device, when the file gave any figure: its
 * id in *id, else NONE (which is -1 too: hence the separate status). */
static int write_sample(vr_nvsmi *g, int64_t gpu_id, vr_monitor_sample *s, int64_t *id,
                        vr_error *err)
{
    *id = VR_MONITOR_NONE;
    if (!has_figure(s))
        return 0;
    s->ts_ns = g->ts_ns;
    *id = vr_monitor_add_sample(g->m, gpu_id, s, err);
    return *id < 0 ? -1 : 0;
}

/* A MIG device is a GPU row of its own beside its parent: the parent's
 * identity (or its own MIG- UUID) and "GI 1 / CI 0". */
static int write_mig(vr_nvsmi *g, vr_nvsmi_mig *d, vr_error *err)
{
    char label[64];
    snprintf(label, sizeof label, "GI %lld / CI %lld", (long long)d->gi, (long long)d->ci);
    vr_monitor_gpu row;
    vr_monitor_gpu_clear(&row);
    row.uuid = d->uuid.len ? text_of(&d->uuid) : text_of(&g->uuid);
    row.bus_id = text_of(&g->bus_id);
    row.name = text_of(&g->name);
    row.mig.s = label;
    row.mig.len = strlen(label);
    row.memory_total_bytes = d->s.total_bytes;
    d->gpu_id = vr_monitor_gpu_id(g->m, &row, err);
    if (d->gpu_id < 0)
        return -1;
    remember_row(g, &row);
    return write_sample(g, d->gpu_id, &d->s, &d->sample_id, err);
}

/* Writes the GPU being read, once. A GPU the file does not identify (no
 * UUID, no bus id) cannot be told apart from the others: skipped. */
static int write_gpu(vr_nvsmi *g, vr_error *err)
{
    if (!g->in_gpu || g->written)
        return 0;
    g->written = 1;
    if (!g->uuid.len && !g->bus_id.len) {
        g->malformed++;
        return 0;
    }
    vr_monitor_gpu row;
    vr_monitor_gpu_clear(&row);
    row.uuid = text_of(&g->uuid);
    row.bus_id = text_of(&g->bus_id);
    row.name = text_of(&g->name);
    row.memory_total_bytes = g->s.total_bytes;
    g->gpu_id = vr_monitor_gpu_id(g->m, &row, err);
    if (g->gpu_id < 0)
        return -1;
    remember_row(g, &row);
    if (write_sample(g, g->gpu_id, &g->s, &g->sample_id, err) < 0)
        return -1;
    for (size_t i = 0; i < g->n_mig; i++)
        if (g->mig[i].gi != VR_MONITOR_NONE && write_mig(g, &g->mig[i], err) < 0)
            return -1;
    return 0;
}

int vr_nvsmi_gpu_begin(vr_nvsmi *g, vr_error *err)
{
    if (vr_nvsmi_gpu_end(g, err) < 0)
        return -1;
    g->in_gpu = 1;
    g->idx = g->gpus_listed++;
    return 0;
}

int vr_nvsmi_gpu_end(vr_nvsmi *g, vr_error *err)
{
    if (g->in_proc && vr_nvsmi_process_end(g, err) < 0)
        return -1;
    if (write_gpu(g, err) < 0)
        return -1;
    clear_gpu(g);
    return 0;
}

void vr_nvsmi_gpu_drop(vr_nvsmi *g)
{
    clear_gpu(g);
}

int vr_nvsmi_reading(vr_nvsmi *g, vr_error *err)
{
    int rc = vr_nvsmi_reading_end(g, err);
    g->ts_ns = VR_MONITOR_NONE;
    return rc;
}

void vr_nvsmi_mig_begin(vr_nvsmi *g)
{
    if (!g->in_gpu || g->written)
        return;
    if (g->n_mig == VR_NVSMI_MAX_MIG) {
        g->malformed++; /* a MIG device past the limit: skipped */
        g->in_mig = -1; /* its values go nowhere, not to the GPU */
        return;
    }
    vr_nvsmi_mig *d = &g->mig[g->n_mig++];
    d->gi = d->ci = d->gpu_id = d->sample_id = VR_MONITOR_NONE;
    vr_buf_clear(&d->uuid);
    vr_monitor_sample_clear(&d->s);
    g->in_mig = 1;
}

void vr_nvsmi_mig_end(vr_nvsmi *g)
{
    g->in_mig = 0;
}

/*-*** processes ***/

int vr_nvsmi_process_begin(vr_nvsmi *g, vr_error *err)
{
    if (g->in_proc && vr_nvsmi_process_end(g, err) < 0)
        return -1;
    if (!g->in_gpu)
        return 0;
    if (write_gpu(g, err) < 0)
        return -1;
    g->in_proc = 1;
    g->pid = g->proc_gi = g->proc_ci = g->proc_used = VR_MONITOR_NONE;
    g->proc_bad = 0;
    vr_buf_clear(&g->proc_type);
    vr_buf_clear(&g->proc_name);
    return 0;
}

/* A process in a MIG instance belongs to that instance's row. */
static const vr_nvsmi_mig *process_mig(const vr_nvsmi *g)
{
    for (size_t i = 0; i < g->n_mig; i++)
        if (g->proc_gi != VR_MONITOR_NONE && g->mig[i].gi == g->proc_gi &&
            g->mig[i].ci == g->proc_ci && g->mig[i].gpu_id > 0)
            return &g->mig[i];
    return NULL;
}

int vr_nvsmi_process_end(vr_nvsmi *g, vr_error *err)
{
    if (!g->in_proc)
        return 0;
    g->in_proc = 0;
    if (g->gpu_id <= 0)
        return 0; /* its GPU was skipped (counted there) */
    if (g->pid == VR_MONITOR_NONE || g->proc_bad) {
        g->malformed++;
        return 0;
    }
    const vr_nvsmi_mig *d = process_mig(g);
    vr_monitor_process p = {g->pid, text_of(&g->proc_name), text_of(&g->proc_type), g->proc_used};
    return vr_monitor_add_process(g->m, d ? d->gpu_id : g->gpu_id,
                                  d ? d->sample_id : g->sample_id, g->ts_ns, &p, err);
}

/*-*** values ***/

/* A figure: words ("N/A", "[Not Supported]", "Not available ...") are an
 * absent figure; what starts like a number and is not one is malformed. */
static int figure(int ok, const char *v, size_t len, int64_t parsed, int64_t *out)
{
    trim(&v, &len);
    if (ok) {
        *out = parsed;
        return 0;
    }
    *out = VR_MONITOR_NONE;
    return len && (isdigit((unsigned char)v[0]) || v[0] == '-' || v[0] == '+');
}

static int size_field(const char *v, size_t len, int64_t *out)
{
    int64_t bytes = 0;
    int ok = vr_monitor_size(v, len, INT64_C(1) << 20, &bytes);
    return figure(ok, v, len, bytes, out);
}

static int int_field(const char *v, size_t len, int64_t *out)
{
    int64_t n = 0;
    int ok = vr_monitor_int(v, len, &n);
    return figure(ok, v, len, n, out);
}

static int set_stamp(vr_nvsmi *g, const char *v, size_t len)
{
    int64_t ns;
    if (!vr_monitor_stamp(v, len, &ns)) {
        g->ts_ns = VR_MONITOR_NONE;
        return 1;
    }
    g->ts_ns = ns;
    g->m->ctx->clock = VR_CLOCK_WALL_LOCAL;
    return 0;
}

/* The sample a memory or utilization figure goes to: the MIG device
 * being read, else the GPU. NULL once the GPU is written. */
static vr_monitor_sample *open_sample(vr_nvsmi *g)
{
    if (!g->in_gpu || g->written || g->in_mig < 0)
        return NULL;
    return g->in_mig && g->n_mig ? &g->mig[g->n_mig - 1].s : &g->s;
}

static int set_gpu_field(vr_nvsmi *g, vr_nvsmi_field f, const char *v, size_t len)
{
    vr_monitor_sample *s = open_sample(g);
    if (!s)
        return 0;
    vr_nvsmi_mig *d = g->in_mig > 0 && g->n_mig ? &g->mig[g->n_mig - 1] : NULL;
    switch (f) {
    case VR_NVSMI_NAME:
        keep_text(&g->name, v, len, NAME_MAX_LEN);
        return 0;
    case VR_NVSMI_UUID:
        keep_text(d ? &d->uuid : &g->uuid, v, len, ID_MAX);
        return 0;
    case VR_NVSMI_BUS_ID:
        keep_text(&g->bus_id, v, len, ID_MAX);
        return 0;
    case VR_NVSMI_FB_TOTAL:
        return size_field(v, len, &s->total_bytes);
    case VR_NVSMI_FB_RESERVED:
        return size_field(v, len, &s->reserved_bytes);
    case VR_NVSMI_FB_USED:
        return size_field(v, len, &s->used_bytes);
    case VR_NVSMI_FB_FREE:
        return size_field(v, len, &s->free_bytes);
    case VR_NVSMI_UTIL_GPU:
        return int_field(v, len, &s->util_gpu_pct);
    case VR_NVSMI_UTIL_MEMORY:
        return int_field(v, len, &s->util_memory_pct);
    case VR_NVSMI_GI:
        return d ? int_field(v, len, &d->gi) : 0;
    case VR_NVSMI_CI:
        return d ? int_field(v, len, &d->ci) : 0;
    default:
        return 0;
    }
}

static int set_process_field(vr_nvsmi *g, vr_nvsmi_field f, const char *v, size_t len)
{
    int bad = 0;
    switch (f) {
    case VR_NVSMI_GI: /* "N/A" outside MIG: nothing to count */
        int_field(v, len, &g->proc_gi);
        return 0;
    case VR_NVSMI_CI:
        int_field(v, len, &g->proc_ci);
        return 0;
    case VR_NVSMI_PID:
        bad = int_field(v, len, &g->pid);
        g->proc_bad |= bad;
        return 0; /* counted once, with its process */
    case VR_NVSMI_PROC_TYPE:
        keep_text(&g->proc_type, v, len, TYPE_MAX);
        return 0;
    case VR_NVSMI_PROC_NAME:
        keep_text(&g->proc_name, v, len, NAME_MAX_LEN);
        return 0;
    case VR_NVSMI_PROC_USED:
        return size_field(v, len, &g->proc_used);
    default:
        return 0;
    }
}

int vr_nvsmi_set(vr_nvsmi *g, vr_nvsmi_field f, const char *v, size_t len)
{
    int bad;
    if (f == VR_NVSMI_TIMESTAMP)
        bad = set_stamp(g, v, len);
    else if (f == VR_NVSMI_ATTACHED)
        bad = int_field(v, len, &g->attached);
    else if (g->in_proc)
        bad = set_process_field(g, f, v, len);
    else
        bad = set_gpu_field(g, f, v, len);
    g->malformed += (uint64_t)bad;
    return bad;
}
