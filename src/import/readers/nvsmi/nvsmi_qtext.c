/* Reader of `nvidia-smi -q` text logs (registry name "nvsmi_query") and
 * the line-at-a-time parser behind it (nvsmi_qtext.h), which a reader of
 * multi-section captures also feeds. Sections are told by indentation;
 * which values are read is one table (fields[]) of enclosing section and
 * key. Real layout: docs/formats/nvidia-smi-q.md. */
#include "import/readers/nvsmi/nvsmi_qtext.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import/readers/nvsmi/nvsmi_query.h"

/* The sections that matter; every other header or key is S_OTHER. */
typedef enum {
    S_ROOT,
    S_GPU,
    S_PCI,
    S_FB,
    S_UTIL,
    S_PROCESSES,
    S_PROCESS, /* "Process ID : 11327" and its indented fields */
    S_MIG_DEVICES,
    S_MIG_DEVICE,
    S_OTHER
} q_section;

static const struct {
    const char *name;
    q_section sec;
} sections[] = {
    {"PCI", S_PCI},
    {"FB Memory Usage", S_FB},
    {"Utilization", S_UTIL},
    {"Processes", S_PROCESSES},
    {"Process ID", S_PROCESS},
    {"MIG Devices", S_MIG_DEVICES},
    {"MIG Device", S_MIG_DEVICE},
};

/* Sections count only where nvidia-smi puts them (a bit per enclosing
 * section allowed): an "FB Memory Usage" under a header this parser does
 * not know is not the GPU's. */
#define IN(s) (1u << (s))
static const unsigned section_parents[S_OTHER] = {
    [S_GPU] = IN(S_ROOT),
    [S_PCI] = IN(S_GPU),
    [S_FB] = IN(S_GPU) | IN(S_MIG_DEVICE) | IN(S_MIG_DEVICES),
    [S_UTIL] = IN(S_GPU),
    [S_PROCESSES] = IN(S_GPU),
    [S_PROCESS] = IN(S_PROCESSES),
    [S_MIG_DEVICES] = IN(S_GPU),
    [S_MIG_DEVICE] = IN(S_MIG_DEVICES),
};

/* What is read: the key, and the section it must be directly in. */
static const struct {
    q_section in;
    const char *key;
    vr_nvsmi_field field;
} fields[] = {
    {S_ROOT, "Timestamp", VR_NVSMI_TIMESTAMP},
    {S_ROOT, "Attached GPUs", VR_NVSMI_ATTACHED},
    {S_GPU, "Product Name", VR_NVSMI_NAME},
    {S_GPU, "GPU UUID", VR_NVSMI_UUID},
    {S_PCI, "Bus Id", VR_NVSMI_BUS_ID},
    {S_FB, "Total", VR_NVSMI_FB_TOTAL},
    {S_FB, "Reserved", VR_NVSMI_FB_RESERVED},
    {S_FB, "Used", VR_NVSMI_FB_USED},
    {S_FB, "Free", VR_NVSMI_FB_FREE},
    {S_UTIL, "GPU", VR_NVSMI_UTIL_GPU},
    {S_UTIL, "Memory", VR_NVSMI_UTIL_MEMORY},
    {S_MIG_DEVICE, "GPU Instance ID", VR_NVSMI_GI},
    {S_MIG_DEVICE, "Compute Instance ID", VR_NVSMI_CI},
    {S_MIG_DEVICE, "UUID", VR_NVSMI_UUID},
    {S_MIG_DEVICES, "GPU Instance ID", VR_NVSMI_GI},
    {S_MIG_DEVICES, "Compute Instance ID", VR_NVSMI_CI},
    {S_PROCESSES, "GPU instance ID", VR_NVSMI_GI},
    {S_PROCESSES, "Compute instance ID", VR_NVSMI_CI},
    {S_PROCESSES, "Process ID", VR_NVSMI_PID},
    {S_PROCESS, "Type", VR_NVSMI_PROC_TYPE},
    {S_PROCESS, "Name", VR_NVSMI_PROC_NAME},
    {S_PROCESS, "Used GPU Memory", VR_NVSMI_PROC_USED},
};

#define Q_MAX_DEPTH 16 /* real output nests 5 deep */

struct vr_nvsmi_qtext {
    vr_monitor *m;
    vr_nvsmi g;
    struct {
        size_t indent;
        q_section sec;
    } stack[Q_MAX_DEPTH];
    size_t depth;
    uint64_t first_malformed; /* its line number, 0: none yet */
};

vr_nvsmi_qtext *vr_nvsmi_qtext_init(vr_monitor *m)
{
    vr_nvsmi_qtext *q = vr_xmalloc(sizeof *q);
    memset(q, 0, sizeof *q);
    q->m = m;
    vr_nvsmi_init(&q->g, m);
    return q;
}

void vr_nvsmi_qtext_free(vr_nvsmi_qtext *q)
{
    if (!q)
        return;
    vr_nvsmi_free(&q->g);
    free(q);
}

/*-*** one line ***/

typedef struct {
    size_t indent;
    const char *key, *value; /* value NULL: a header */
    size_t key_len, value_len;
} q_line;

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* "    Key      : value" or "    Header". The separator is the first ':'
 * after a space: a bus id ("GPU 00000000:18:00.0") or a Windows path in a
 * value keeps its colons. */
static void split_line(const char *s, size_t len, q_line *l)
{
    size_t i = 0;
    while (i < len && is_space(s[i]))
        i++;
    l->indent = i;
    l->key = s + i;
    l->value = NULL;
    l->value_len = 0;
    size_t colon = i;
    while (colon < len && !(s[colon] == ':' && colon > i && is_space(s[colon - 1])))
        colon++;
    size_t key_end = colon;
    while (key_end > i && is_space(s[key_end - 1]))
        key_end--;
    l->key_len = key_end - i;
    if (colon < len) {
        l->value = s + colon + 1;
        l->value_len = len - colon - 1;
    }
}

static int key_is(const q_line *l, const char *key)
{
    return l->key_len == strlen(key) && strncasecmp(l->key, key, l->key_len) == 0;
}

static q_section section_of(const q_line *l)
{
    if (l->indent == 0 && l->key_len > 4 && memcmp(l->key, "GPU ", 4) == 0 && !l->value)
        return S_GPU;
    for (size_t i = 0; i < sizeof sections / sizeof *sections; i++)
        if (key_is(l, sections[i].name))
            return sections[i].sec;
    /* "MIG Device 0" if a driver numbers them */
    if (l->key_len > 11 && strncasecmp(l->key, "MIG Device ", 11) == 0)
        return S_MIG_DEVICE;
    return S_OTHER;
}

static q_section in_place(q_section sec, q_section in)
{
    return sec == S_OTHER || (section_parents[sec] & IN(in)) ? sec : S_OTHER;
}

static q_section parent(const vr_nvsmi_qtext *q)
{
    return q->depth ? q->stack[q->depth - 1].sec : S_ROOT;
}

/* Leaving a section ends what it held. */
static int leave(vr_nvsmi_qtext *q, q_section sec, vr_error *err)
{
    switch (sec) {
    case S_GPU:
        return vr_nvsmi_gpu_end(&q->g, err);
    case S_MIG_DEVICE:
    case S_MIG_DEVICES:
        vr_nvsmi_mig_end(&q->g);
        return 0;
    case S_PROCESSES:
        return vr_nvsmi_process_end(&q->g, err);
    default:
        return 0;
    }
}

static int pop_to(vr_nvsmi_qtext *q, size_t indent, vr_error *err)
{
    while (q->depth && q->stack[q->depth - 1].indent >= indent)
        if (leave(q, q->stack[--q->depth].sec, err) < 0)
            return -1;
    return 0;
}

/* Entering a section starts what it holds. A process starts at its first
 * field ("GPU instance ID", or "Process ID" in older drivers). */
static int enter(vr_nvsmi_qtext *q, const q_line *l, q_section sec, q_section in, vr_error *err)
{
    vr_nvsmi *g = &q->g;
    if (sec == S_GPU) {
        if (vr_nvsmi_gpu_begin(g, err) < 0)
            return -1;
        vr_nvsmi_set(g, VR_NVSMI_BUS_ID, l->key + 4, l->key_len - 4);
    } else if (sec == S_MIG_DEVICE || (in == S_MIG_DEVICES && key_is(l, "Index"))) {
        vr_nvsmi_mig_begin(g);
    } else if (in == S_PROCESSES &&
               (key_is(l, "GPU instance ID") ||
                (key_is(l, "Process ID") && (!g->in_proc || g->pid != VR_MONITOR_NONE)))) {
        return vr_nvsmi_process_begin(g, err);
    }
    return 0;
}

static void read_value(vr_nvsmi_qtext *q, const q_line *l, q_section in)
{
    if (!l->value)
        return;
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        if (fields[i].in == in && key_is(l, fields[i].key)) {
            vr_nvsmi_set(&q->g, fields[i].field, l->value, l->value_len);
            return;
        }
}

static int is_banner(const char *s, size_t len)
{
    return len > 12 && s[0] == '=' && memmem(s, len, "NVSMI LOG", 9) != NULL;
}

static int take_line(vr_nvsmi_qtext *q, const char *s, size_t len, int cut, vr_error *err)
{
    if (cut) {
        q->g.malformed++;
        return 0;
    }
    if (is_banner(s, len))
        return pop_to(q, 0, err) < 0 ? -1 : vr_nvsmi_reading(&q->g, err);
    q_line l;
    split_line(s, len, &l);
    if (l.key_len == 0 && !l.value)
        return 0; /* blank lines separate nothing */
    if (pop_to(q, l.indent, err) < 0)
        return -1;
    q_section in = parent(q), sec = in_place(section_of(&l), in);
    if (enter(q, &l, sec, in, err) < 0)
        return -1;
    read_value(q, &l, in);
    if (q->depth < Q_MAX_DEPTH) {
        q->stack[q->depth].indent = l.indent;
        q->stack[q->depth++].sec = sec;
    }
    return 0;
}

int vr_nvsmi_qtext_line(vr_nvsmi_qtext *q, const char *line, size_t len, uint64_t number, int cut,
                        vr_error *err)
{
    uint64_t before = q->g.malformed;
    if (take_line(q, line, len, cut, err) < 0)
        return -1;
    if (q->g.malformed > before && !q->first_malformed)
        q->first_malformed = number;
    return 0;
}

int vr_nvsmi_qtext_finish(vr_nvsmi_qtext *q, vr_error *err)
{
    if (pop_to(q, 0, err) < 0 || vr_nvsmi_reading_end(&q->g, err) < 0)
        return -1;
    vr_import_ctx *c = q->m->ctx;
    uint64_t skipped = q->g.malformed;
    if (vr_reader_tally(c, "malformed_event", skipped, err) < 0)
        return -1;
    if (skipped)
        vr_warn(c->warn,
                "%s: %llu malformed value(s) of nvidia-smi -q skipped, the first "
                "at line %llu",
                vr_input_path(c->in), (unsigned long long)skipped,
                (unsigned long long)q->first_malformed);
    return 0;
}

/*-*** the reader ***/

#define Q_MAX_LINE 65536

/* nvidia-smi -q starts with its banner (after a blank line). A banner
 * further in is -q output inside something else (a capture of several
 * commands, a job log): only the shape of one, so that a reader of that
 * container, sure of its own signature, wins. */
static vr_sniff_level sniff_nvsmi_query(const char *head, size_t len)
{
    const char *banner = memmem(head, len, "==NVSMI LOG==", 13);
    if (!banner)
        return VR_SNIFF_NO;
    const char *p = head;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    while (p < banner && (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t' || *p == '='))
        p++;
    return p == banner ? VR_SNIFF_SIGNATURE : VR_SNIFF_SHAPE;
}

typedef struct {
    vr_monitor mon;
    vr_nvsmi_qtext *q;
} query_file;

static void query_init(void *state, vr_import_ctx *ctx)
{
    query_file *f = state;
    vr_monitor_init(&f->mon, ctx);
    ctx->clock = VR_CLOCK_NONE; /* until a Timestamp is read */
    f->q = vr_nvsmi_qtext_init(&f->mon);
}

static int query_line(void *state, const char *line, size_t len, uint64_t number, int cut,
                      vr_error *err)
{
    query_file *f = state;
    return vr_nvsmi_qtext_line(f->q, line, len, number, cut, err);
}

static int query_finish(void *state, vr_error *err)
{
    query_file *f = state;
    return vr_nvsmi_qtext_finish(f->q, err);
}

static void query_free(void *state)
{
    query_file *f = state;
    vr_nvsmi_qtext_free(f->q);
    vr_monitor_free(&f->mon);
}

static const vr_line_reader query_lines = {sizeof(query_file), Q_MAX_LINE,   query_init,
                                           query_line,         query_finish, query_free};

const vr_reader vr_reader_nvsmi_query = {"nvsmi_query", "an nvidia-smi -q log", sniff_nvsmi_query,
                                         NULL, &query_lines};
