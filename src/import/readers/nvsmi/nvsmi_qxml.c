/* Reader of `nvidia-smi -q -x` XML logs (registry name "nvsmi_xml"),
 * streaming: the input is fed in chunks to parse/xml.h (expat, its limits,
 * entities refused, one document per reading of `-l N`), and only the
 * values read are kept. This file is the mapping: which elements are read
 * is one table (fields[]) of parent and element; <fb_memory_usage> is read
 * by where it is (a GPU's, or a MIG device's own), and everything else
 * nvidia-smi writes is ignored, so DTD versions 10 to 13 (and later
 * additions) read alike. A syntax error fails the import with expat's
 * line, column and byte; input that ends inside a document is a truncated
 * file: the GPUs complete before the cut are kept. Real layout:
 * docs/formats/nvidia-smi-q.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/monitor.h"
#include "import/readers/nvsmi/nvsmi_query.h"
#include "import/reader.h"
#include "parse/xml.h"

/* The elements that matter; every other one is E_OTHER. */
typedef enum {
    E_OTHER,
    E_LOG,
    E_TIMESTAMP,
    E_ATTACHED,
    E_GPU,
    E_PRODUCT_NAME,
    E_UUID,
    E_PCI,
    E_PCI_BUS_ID,
    E_FB,
    E_TOTAL,
    E_RESERVED,
    E_USED,
    E_FREE,
    E_UTILIZATION,
    E_GPU_UTIL,
    E_MEMORY_UTIL,
    E_MIG_DEVICES,
    E_MIG_DEVICE,
    E_GI,
    E_CI,
    E_PROCESSES,
    E_PROCESS_INFO,
    E_PID,
    E_TYPE,
    E_PROCESS_NAME,
    E_USED_MEMORY
} x_element;

static const char *const element_names[] = {
    [E_LOG] = "nvidia_smi_log",
    [E_TIMESTAMP] = "timestamp",
    [E_ATTACHED] = "attached_gpus",
    [E_GPU] = "gpu",
    [E_PRODUCT_NAME] = "product_name",
    [E_UUID] = "uuid",
    [E_PCI] = "pci",
    [E_PCI_BUS_ID] = "pci_bus_id",
    [E_FB] = "fb_memory_usage",
    [E_TOTAL] = "total",
    [E_RESERVED] = "reserved",
    [E_USED] = "used",
    [E_FREE] = "free",
    [E_UTILIZATION] = "utilization",
    [E_GPU_UTIL] = "gpu_util",
    [E_MEMORY_UTIL] = "memory_util",
    [E_MIG_DEVICES] = "mig_devices",
    [E_MIG_DEVICE] = "mig_device",
    [E_GI] = "gpu_instance_id",
    [E_CI] = "compute_instance_id",
    [E_PROCESSES] = "processes",
    [E_PROCESS_INFO] = "process_info",
    [E_PID] = "pid",
    [E_TYPE] = "type",
    [E_PROCESS_NAME] = "process_name",
    [E_USED_MEMORY] = "used_memory",
};

/* Sections count only where nvidia-smi puts them: an <fb_memory_usage>
 * inside an element this reader does not know (a later driver's) is not
 * the GPU's. An element elsewhere is read as unknown (E_OTHER). */
static const struct {
    x_element element, in, or_in;
} containers[] = {
    {E_GPU, E_LOG, E_LOG},         {E_PCI, E_GPU, E_GPU},
    {E_FB, E_GPU, E_MIG_DEVICE},   {E_UTILIZATION, E_GPU, E_GPU},
    {E_MIG_DEVICES, E_GPU, E_GPU}, {E_MIG_DEVICE, E_MIG_DEVICES, E_MIG_DEVICES},
    {E_PROCESSES, E_GPU, E_GPU},   {E_PROCESS_INFO, E_PROCESSES, E_PROCESSES},
};

/* What is read: the element, and the element it must be directly in. */
static const struct {
    x_element in, element;
    vr_nvsmi_field field;
} fields[] = {
    {E_LOG, E_TIMESTAMP, VR_NVSMI_TIMESTAMP},
    {E_LOG, E_ATTACHED, VR_NVSMI_ATTACHED},
    {E_GPU, E_PRODUCT_NAME, VR_NVSMI_NAME},
    {E_GPU, E_UUID, VR_NVSMI_UUID},
    {E_PCI, E_PCI_BUS_ID, VR_NVSMI_BUS_ID},
    {E_FB, E_TOTAL, VR_NVSMI_FB_TOTAL},
    {E_FB, E_RESERVED, VR_NVSMI_FB_RESERVED},
    {E_FB, E_USED, VR_NVSMI_FB_USED},
    {E_FB, E_FREE, VR_NVSMI_FB_FREE},
    {E_UTILIZATION, E_GPU_UTIL, VR_NVSMI_UTIL_GPU},
    {E_UTILIZATION, E_MEMORY_UTIL, VR_NVSMI_UTIL_MEMORY},
    {E_MIG_DEVICE, E_GI, VR_NVSMI_GI},
    {E_MIG_DEVICE, E_CI, VR_NVSMI_CI},
    {E_MIG_DEVICE, E_UUID, VR_NVSMI_UUID},
    {E_PROCESS_INFO, E_GI, VR_NVSMI_GI},
    {E_PROCESS_INFO, E_CI, VR_NVSMI_CI},
    {E_PROCESS_INFO, E_PID, VR_NVSMI_PID},
    {E_PROCESS_INFO, E_TYPE, VR_NVSMI_PROC_TYPE},
    {E_PROCESS_INFO, E_PROCESS_NAME, VR_NVSMI_PROC_NAME},
    {E_PROCESS_INFO, E_USED_MEMORY, VR_NVSMI_PROC_USED},
};

#define X_MAX_DEPTH 64   /* real files nest 7 deep */
#define X_MAX_VALUE 4096 /* a value longer than this is cut */
#define X_CHUNK ((size_t)1 << 20)

typedef struct {
    vr_import_ctx *ctx;
    vr_error *err;
    vr_monitor m;
    vr_nvsmi g;
    vr_xml *p;
    size_t depth; /* open elements */
    uint8_t stack[X_MAX_DEPTH];
    /* the value being gathered */
    int field; /* a vr_nvsmi_field, -1: none */
    size_t field_depth;
    vr_buf text;
    uint64_t documents;
    uint64_t first_malformed_line; /* 0: none */
} nvxml;

static x_element element_id(const char *name)
{
    for (size_t i = 1; i < sizeof element_names / sizeof *element_names; i++)
        if (strcmp(name, element_names[i]) == 0)
            return (x_element)i;
    return E_OTHER;
}

static x_element parent(const nvxml *x)
{
    return x->depth >= 1 && x->depth <= X_MAX_DEPTH ? (x_element)x->stack[x->depth - 1] : E_OTHER;
}

/* The element as a section: E_OTHER where nvidia-smi never puts it. */
static x_element in_place(x_element e, x_element in)
{
    for (size_t i = 0; i < sizeof containers / sizeof *containers; i++)
        if (containers[i].element == e)
            return in == containers[i].in || in == containers[i].or_in ? e : E_OTHER;
    return e;
}

static int field_of(x_element in, x_element e)
{
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        if (fields[i].in == in && fields[i].element == e)
            return (int)fields[i].field;
    return -1;
}

/* The line of the first value or record skipped, for the warning. */
static void note_malformed(nvxml *x, uint64_t before)
{
    if (x->g.malformed > before && !x->first_malformed_line)
        x->first_malformed_line = vr_xml_line(x->p);
}

/* A database error (in err) stops the parse. */
static void stop(nvxml *x, int rc)
{
    if (rc < 0)
        vr_xml_stop(x->p);
}

/*-*** handlers ***/

static const char *attribute(const char **atts, const char *name)
{
    for (size_t i = 0; atts[i]; i += 2)
        if (strcmp(atts[i], name) == 0)
            return atts[i + 1];
    return NULL;
}

static int open_element(nvxml *x, x_element e, const char **atts)
{
    vr_nvsmi *g = &x->g;
    switch (e) {
    case E_LOG:
        x->documents++;
        return vr_nvsmi_reading(g, x->err);
    case E_GPU: {
        if (vr_nvsmi_gpu_begin(g, x->err) < 0)
            return -1;
        const char *id = attribute(atts, "id");
        if (id)
            vr_nvsmi_set(g, VR_NVSMI_BUS_ID, id, strlen(id));
        return 0;
    }
    case E_MIG_DEVICE:
        vr_nvsmi_mig_begin(g);
        return 0;
    case E_PROCESS_INFO:
        return vr_nvsmi_process_begin(g, x->err);
    default:
        return 0;
    }
}

static void on_start(void *ud, const char *name, const char **atts)
{
    nvxml *x = ud;
    x_element e = in_place(element_id(name), parent(x));
    if (e == E_LOG && x->depth > 0)
        e = E_OTHER; /* only the root is a reading */
    x->field = field_of(parent(x), e);
    x->field_depth = x->depth + 1;
    vr_buf_clear(&x->text);
    if (x->depth < X_MAX_DEPTH)
        x->stack[x->depth] = (uint8_t)e;
    x->depth++;
    uint64_t before = x->g.malformed;
    stop(x, open_element(x, e, atts));
    note_malformed(x, before);
}

static void on_text(void *ud, const char *s, size_t len)
{
    nvxml *x = ud;
    if (x->field < 0 || x->depth != x->field_depth || x->text.len >= X_MAX_VALUE)
        return;
    size_t room = X_MAX_VALUE - x->text.len;
    vr_buf_append(&x->text, s, len < room ? len : room);
}

static int close_element(nvxml *x, x_element e)
{
    vr_nvsmi *g = &x->g;
    switch (e) {
    case E_LOG:
        return vr_nvsmi_reading_end(g, x->err);
    case E_GPU:
        return vr_nvsmi_gpu_end(g, x->err);
    case E_MIG_DEVICE:
        vr_nvsmi_mig_end(g);
        return 0;
    case E_PROCESS_INFO:
        return vr_nvsmi_process_end(g, x->err);
    default:
        return 0;
    }
}

static void on_end(void *ud, const char *name)
{
    nvxml *x = ud;
    uint64_t before = x->g.malformed;
    if (x->field >= 0 && x->depth == x->field_depth)
        vr_nvsmi_set(&x->g, (vr_nvsmi_field)x->field, x->text.data ? x->text.data : "",
                     x->text.len);
    x->field = -1;
    (void)name; /* the stack says which it was, as read at its start */
    x_element e = x->depth <= X_MAX_DEPTH ? (x_element)x->stack[x->depth - 1] : E_OTHER;
    x->depth--;
    stop(x, close_element(x, e));
    note_malformed(x, before);
}

/*-*** documents ***/

/* The input ended inside a document: a cut file, whatever came before is
 * kept; the GPU it was reading is dropped unless already written. */
static void end_of_input(nvxml *x)
{
    if (!vr_xml_inside_document(x->p) && !vr_input_truncated(x->ctx->in))
        return;
    vr_import_ctx *c = x->ctx;
    c->truncated = 1;
    c->truncated_at = vr_input_offset(c->in);
    c->truncated_where =
        x->g.in_gpu ? "inside a GPU's section" : "inside an nvidia_smi_log document";
    vr_nvsmi_gpu_drop(&x->g);
}

static int read_documents(nvxml *x)
{
    char *chunk = vr_xmalloc(X_CHUNK);
    ptrdiff_t n;
    int rc = 0;
    while (rc == 0 && (n = vr_input_read(x->ctx->in, chunk, X_CHUNK, x->err)) > 0) {
        rc = vr_xml_feed(x->p, chunk, (size_t)n, x->err);
        vr_progress_update(x->ctx->progress, vr_input_raw_offset(x->ctx->in), x->ctx->events);
    }
    free(chunk);
    if (rc == 0 && n < 0)
        return -1;
    if (rc == 0)
        end_of_input(x);
    return rc;
}

/* What was skipped, counted and said once; a file with no document at
 * all is not a log. */
static int finish(nvxml *x)
{
    vr_import_ctx *ctx = x->ctx;
    uint64_t skipped = x->g.malformed;
    if (vr_reader_tally(ctx, "malformed_event", skipped, x->err) < 0)
        return -1;
    if (skipped)
        vr_warn(ctx->warn,
                "%s: %llu malformed value(s) of nvidia-smi -q -x skipped, the "
                "first at line %llu",
                vr_input_path(ctx->in), (unsigned long long)skipped,
                (unsigned long long)x->first_malformed_line);
    if (x->documents == 0 && !ctx->truncated)
        return vr_fail_code(x->err, VR_ERR_MALFORMED, "%s: no <nvidia_smi_log> document in it",
                            vr_input_path(ctx->in));
    return 0;
}

static int import_nvsmi_xml(vr_import_ctx *ctx, vr_error *err)
{
    nvxml x;
    memset(&x, 0, sizeof x);
    x.ctx = ctx;
    x.err = err;
    x.field = -1;
    ctx->clock = VR_CLOCK_NONE;
    vr_monitor_init(&x.m, ctx);
    vr_nvsmi_init(&x.g, &x.m);
    static const vr_xml_handlers handlers = {on_start, on_end, on_text, "nvidia-smi writes none"};
    x.p = vr_xml_new(vr_input_path(ctx->in), &handlers, &x);
    int rc = read_documents(&x);
    if (rc == 0)
        rc = finish(&x);
    vr_xml_free(x.p);
    vr_buf_free(&x.text);
    vr_nvsmi_free(&x.g);
    vr_monitor_free(&x.m);
    return rc;
}

static vr_sniff_level sniff_nvsmi_xml(const char *head, size_t len)
{
    return memmem(head, len, "<nvidia_smi_log", 15) ? VR_SNIFF_SIGNATURE : VR_SNIFF_NO;
}

const vr_reader vr_reader_nvsmi_xml = {"nvsmi_xml", "an nvidia-smi -q -x log (XML)",
                                       sniff_nvsmi_xml, import_nvsmi_xml, NULL};
