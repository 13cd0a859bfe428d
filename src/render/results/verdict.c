/*-*** verdict.c: the verdict at the top of the report (verdict.h) ***/
#include "render/results/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/sat.h"
#include "util/units.h"
#include "util/utf8.h"
#include "render/results/doc.h"

/*-*** reading the document ***/

static const cJSON *member(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static const char *text_of(const cJSON *obj, const char *key)
{
    const cJSON *item = member(obj, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* A figure: a plain integer, or a finding's evidence {value, source}. */
static int figure_of(const cJSON *obj, const char *key, long long *v)
{
    const cJSON *item = member(obj, key);
    if (cJSON_IsObject(item))
        item = member(item, "value");
    return vr_results_int(item, v);
}

static void size_text(const cJSON *obj, const char *key, char *out, size_t n)
{
    long long v = 0;
    figure_of(obj, key, &v);
    vr_units_bytes(v, out, n);
}

static void add_int(cJSON *obj, const char *key, long long v)
{
    char num[32]; /* raw: exact beyond 2^53 */
    snprintf(num, sizeof num, "%lld", v);
    cJSON_AddItemToObject(obj, key, cJSON_CreateRaw(num));
}

static void add_opt_int(cJSON *obj, const char *key, int known, long long v)
{
    if (known)
        add_int(obj, key, v);
    else
        cJSON_AddNullToObject(obj, key);
}

/*-*** the state and the device that matters ***/

static const struct {
    const char *state, *label, *css;
} states[] = {
    {"failed", "FAILED", "vr-failed"},
    {"at-risk", "AT RISK", "vr-at-risk"},
    {"ok", "OK", "vr-ok"},
    {"unknown", "UNKNOWN", "vr-unknown"},
};
#define STATE_UNKNOWN 3

static int state_index(const cJSON *verdict)
{
    const char *s = text_of(verdict, "state");
    for (size_t i = 0; s && i < sizeof states / sizeof *states; i++)
        if (strcmp(s, states[i].state) == 0)
            return (int)i;
    return STATE_UNKNOWN;
}

const char *vr_verdict_label(const cJSON *verdict)
{
    return states[state_index(verdict)].label;
}

const char *vr_verdict_css(const cJSON *verdict)
{
    return states[state_index(verdict)].css;
}

/* A device's peak: reserved, or allocated when larger or alone. */
static int device_peak(const cJSON *dev, long long *peak)
{
    long long a, r;
    int has_a = figure_of(dev, "peak_allocated_bytes", &a);
    int has_r = figure_of(dev, "peak_reserved_bytes", &r);
    if (!has_a && !has_r)
        return 0;
    *peak = has_r && (!has_a || r > a) ? r : a;
    return 1;
}

/* The share of its capacity a device peaked at, in thousandths; -1 when
 * unknown. */
static long long peak_permille(const cJSON *dev)
{
    long long peak, cap;
    if (!device_peak(dev, &peak) || !figure_of(dev, "capacity_bytes", &cap) || cap <= 0)
        return -1;
    return (long long)((double)peak * 1000.0 / (double)cap);
}

/* The finding's device (its label, and its rank when it says one). */
static const cJSON *device_of_finding(const cJSON *doc, const cJSON *finding)
{
    const char *label = text_of(finding, "device");
    long long rank, drank, row, did;
    int has_rank = figure_of(finding, "rank", &rank);
    const cJSON *dev;
    /* By its row when it names one: two devices may share a label (a
     * snapshot's cuda:0 and another job's log's), and a device that is
     * not listed (a log's, without a timeline) is none of the listed. */
    if (figure_of(finding, "device_db_id", &row)) {
        cJSON_ArrayForEach(dev, member(doc, "devices"))
        {
            if (figure_of(dev, "db_id", &did) && did == row)
                return dev;
        }
        return NULL;
    }
    cJSON_ArrayForEach(dev, member(doc, "devices"))
    {
        const char *id = text_of(dev, "id");
        if (!label || !id || strcmp(id, label) != 0)
            continue;
        if (!has_rank || !figure_of(dev, "rank", &drank) || drank == rank)
            return dev;
    }
    return NULL;
}

/* Without a finding that names one: the device nearest its capacity (or,
 * with no capacity known, the highest peak). */
static const cJSON *fullest_device(const cJSON *doc)
{
    const cJSON *best = NULL, *dev;
    long long best_share = -2, best_peak = -1, peak;
    cJSON_ArrayForEach(dev, member(doc, "devices"))
    {
        long long share = peak_permille(dev);
        if (!device_peak(dev, &peak))
            continue;
        if (share > best_share || (share == best_share && peak > best_peak)) {
            best = dev;
            best_share = share;
            best_peak = peak;
        }
    }
    return best;
}

/*-*** the verdict object (JSON) ***/

typedef struct {
    int has_peak, has_cap, has_req, has_free, has_outside, has_cap_min;
    long long peak, cap, req, free, outside, cap_min;
    const char *outside_source;
    const char *cap_from; /* the capacity's source: "device", "log", "--capacity", ... */
} numbers;

/* The peak against the capacity: the device's own peak, at least what was
 * reserved (or allocated) when it failed; the capacity the OOM's message
 * states (a memory fraction's "allowed" is what counted), else the
 * device's. */
static void peak_numbers(const cJSON *dev, const cJSON *ev, numbers *n)
{
    static const char *const at_oom[] = {"peak_reserved_bytes", "reserved_bytes",
                                         "allocated_bytes"};
    long long v;
    n->has_peak = dev && device_peak(dev, &n->peak);
    for (size_t i = 0; ev && i < sizeof at_oom / sizeof *at_oom; i++)
        if (figure_of(ev, at_oom[i], &v) && (!n->has_peak || v > n->peak)) {
            n->peak = v;
            n->has_peak = 1;
        }
    n->has_cap = ev && figure_of(ev, "capacity_bytes", &n->cap) && n->cap > 0;
    if (n->has_cap)
        n->cap_from = text_of(member(ev, "capacity_bytes"), "source");
    if (!n->has_cap) {
        n->has_cap = dev && figure_of(dev, "capacity_bytes", &n->cap) && n->cap > 0;
        n->cap_from = n->has_cap ? text_of(dev, "capacity_from") : NULL;
    }
}

/* Memory outside PyTorch's allocator: the diagnosis's capacity - free -
 * reserved at the OOM, else nvidia-smi's most used minus the peak
 * reserved (the CUDA context, other libraries, other processes). */
static void outside_numbers(const cJSON *dev, const cJSON *ev, numbers *n)
{
    long long used, reserved;
    /* Negative (free above capacity - reserved: an inconsistent OOM) says
     * nothing about memory outside PyTorch. */
    if (ev && figure_of(ev, "outside_allocator_bytes", &n->outside) && n->outside >= 0) {
        long long reserved_at_oom;
        n->has_outside = 1;
        /* Without a reserved figure (cudaMallocAsync's message), the
         * diagnosis subtracted what was allocated. */
        n->outside_source = figure_of(ev, "reserved_bytes", &reserved_at_oom)
                                ? "capacity - free - reserved at the OOM"
                                : "capacity - free - allocated at the OOM";
    } else if (ev && figure_of(ev, "this_process_bytes", &used) &&
               figure_of(ev, "reserved_bytes", &reserved) && used > reserved) {
        /* MPS's "other allocations", or CUDA's "this process has X in use"
         * beside its reserved: the process's own memory beyond the cache. */
        n->has_outside = 1;
        n->outside = used - reserved;
        n->outside_source = "this process's use in the message - reserved at the OOM";
    } else if (dev && figure_of(dev, "smi_max_used_bytes", &used) &&
               figure_of(dev, "peak_reserved_bytes", &reserved) && used > reserved) {
        n->has_outside = 1;
        n->outside = used - reserved;
        n->outside_source = "nvidia-smi's most used - peak reserved";
    }
}

/* Every error (oom_events lists the first; oom_event_count counts all). */
static long long oom_count(const cJSON *doc)
{
    long long n;
    return figure_of(doc, "oom_event_count", &n) ? n
                                                 : cJSON_GetArraySize(member(doc, "oom_events"));
}

/* Every finding: those listed and those a group's first tells. */
static long long finding_count(const cJSON *doc)
{
    long long n = 0, more;
    const cJSON *f;
    cJSON_ArrayForEach(f, member(doc, "findings")) n +=
        1 + (figure_of(member(f, "more_like_it"), "more", &more) ? more : 0);
    return n;
}

/* "51.3 GiB allocated, 56.9 GiB reserved": two peaks of obj, both when
 * known (reserved alone says nothing of the tensors, allocated alone
 * nothing of the cache). */
static void two_peaks(const cJSON *obj, const char *alloc_key, const char *res_key, char *out,
                      size_t n)
{
    long long a, r;
    char as[32], rs[32];
    int has_a = figure_of(obj, alloc_key, &a);
    int has_r = figure_of(obj, res_key, &r);
    vr_units_bytes(has_a ? a : 0, as, sizeof as);
    vr_units_bytes(has_r ? r : 0, rs, sizeof rs);
    if (has_a && has_r)
        snprintf(out, n, "%s allocated, %s reserved", as, rs);
    else if (has_a)
        snprintf(out, n, "%s allocated", as);
    else
        snprintf(out, n, "%s reserved", has_r ? rs : "0 B");
}

/*-*** the grounds a green OK needs ***/

/* OK is a judgement: some device's peak held against a capacity that an
 * input (or --capacity) states, every device with a peak judged, and
 * inputs that do not contradict themselves. Without them the state is
 * unknown and the cause says what is missing. */
typedef enum {
    GROUNDS_OK,
    GROUNDS_NO_PEAK,
    GROUNDS_NO_CAPACITY,
    GROUNDS_DUMP_NO_CAPACITY,
    GROUNDS_SUSPECT
} grounds;

/* An allocator dump's peak (allocator_stats[]): reserved, else allocated. */
static int dump_peak(const cJSON *row, long long *peak)
{
    return figure_of(row, "reserved_bytes_peak", peak) ||
           figure_of(row, "allocated_bytes_peak", peak);
}

/* "4.27 GiB allocated, 4.29 GiB reserved" of a dump's peaks. */
static void dump_words(const cJSON *row, char *out, size_t n)
{
    two_peaks(row, "allocated_bytes_peak", "reserved_bytes_peak", out, n);
}

static const char *dump_name(const cJSON *row)
{
    const char *f = text_of(row, "format");
    return f && strcmp(f, "memory_summary") == 0 ? "memory_summary()" : "memory_stats()";
}

/* The dump with the highest peak, for an OK drawn from dumps alone. */
static const cJSON *highest_dump(const cJSON *doc)
{
    const cJSON *row, *best = NULL;
    long long peak, best_peak = -1;
    cJSON_ArrayForEach(row, member(doc, "allocator_stats"))
    {
        if (dump_peak(row, &peak) && peak > best_peak) {
            best = row;
            best_peak = peak;
        }
    }
    return best;
}

/* A suspect-input finding about the figures a verdict rests on (memory:
 * not a copy's speed, which says nothing of capacity). */
static const cJSON *suspect_of_memory(const cJSON *doc)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, member(doc, "findings"))
    {
        const char *k = text_of(f, "kind");
        const char *what = text_of(member(member(f, "evidence"), "contradiction"), "value");
        if (k && strcmp(k, "suspect-input") == 0 &&
            !(what && strcmp(what, "copy-above-peak") == 0))
            return f;
    }
    return NULL;
}

static grounds judge_grounds(const cJSON *doc, const cJSON **about)
{
    const cJSON *dev;
    long long peak, cap;
    int peaks = 0;
    *about = suspect_of_memory(doc);
    if (*about)
        return GROUNDS_SUSPECT;
    cJSON_ArrayForEach(dev, member(doc, "devices"))
    {
        if (!device_peak(dev, &peak))
            continue;
        peaks++;
        if (!figure_of(dev, "capacity_bytes", &cap) || cap <= 0) {
            *about = dev;
            return GROUNDS_NO_CAPACITY;
        }
    }
    /* An allocator dump's peaks name no device: only --capacity judges them. */
    int given = figure_of(member(doc, "capacity_given"), "bytes", &cap);
    cJSON_ArrayForEach(dev, member(doc, "allocator_stats"))
    {
        if (!dump_peak(dev, &peak))
            continue;
        peaks++;
        if (!given) {
            *about = dev;
            return GROUNDS_DUMP_NO_CAPACITY;
        }
    }
    return peaks ? GROUNDS_OK : GROUNDS_NO_PEAK;
}

static const char *state_of(const cJSON *doc, const cJSON *primary)
{
    const char *severity = text_of(primary, "severity");
    const cJSON *about;
    if (oom_count(doc) > 0 || (severity && strcmp(severity, "critical") == 0))
        return "failed";
    if (primary)
        return "at-risk";
    return judge_grounds(doc, &about) == GROUNDS_OK ? "ok" : "unknown";
}

/* A device's (or the verdict's) peaks in words. */
static void peak_words(const cJSON *dev, char *out, size_t n)
{
    two_peaks(dev, "peak_allocated_bytes", "peak_reserved_bytes", out, n);
}

static const char *device_name(const cJSON *dev)
{
    return text_of(dev, "id") ? text_of(dev, "id") : "the device";
}

#define RECORD_HINT_NO_LOG                                                    \
    "a memory snapshot (torch.cuda.memory._dump_snapshot), "                \
    "torch.cuda.memory_stats() or a profiler trace with profile_memory=True"

/* Whether the job's log is among the inputs: then what to add is the
 * others (asking for the log again would read as if it had not been read). */
static int has_log(const cJSON *doc)
{
    const cJSON *s;
    cJSON_ArrayForEach(s, member(doc, "sources"))
    {
        const char *format = text_of(s, "format");
        if (format && strcmp(format, "job_log") == 0)
            return 1;
    }
    return 0;
}

static const char *record_hint(const cJSON *doc)
{
    return has_log(doc) ? "add " RECORD_HINT_NO_LOG : "add the job's log, " RECORD_HINT_NO_LOG;
}

/* Two rows of one log and rank (a row without a rank goes with any). */
static int same_run(const cJSON *a, const cJSON *b)
{
    long long ra, rb;
    const char *sa = text_of(a, "source_path"), *sb = text_of(b, "source_path");
    return sa && sb && strcmp(sa, sb) == 0 &&
           (!figure_of(a, "rank", &ra) || !figure_of(b, "rank", &rb) || ra == rb);
}

static long long line_of(const cJSON *row)
{
    long long l = 0;
    figure_of(row, "line", &l);
    return l;
}

/* The row of `figure` that goes with the KV cache's line `kv`: its
 * tokens on that line or the next few (vLLM prints them after), its
 * weights the last printed before it; NULL when none. */
static const cJSON *beside_kv(const cJSON *doc, const cJSON *kv, const char *figure, int after)
{
    const cJSON *row, *found = NULL;
    long long at = line_of(kv);
    cJSON_ArrayForEach(row, member(doc, "server_memory"))
    {
        const char *f = text_of(row, "figure");
        long long l = line_of(row);
        if (!f || strcmp(f, figure) != 0 || !same_run(row, kv))
            continue;
        if (after && l >= at && l <= at + 3)
            return row;
        if (!after && l <= at)
            found = row;
    }
    return found;
}

/* An inference server's log alone: what it gave its KV cache (the last
 * it printed: the latest start's), and beside it the cache's tokens and
 * the weights; 0 when it printed no cache. */
static int server_cause(const cJSON *doc, char *out, size_t n)
{
    const cJSON *row, *kv = NULL;
    cJSON_ArrayForEach(row, member(doc, "server_memory"))
    {
        const char *f = text_of(row, "figure");
        if (f && strcmp(f, "kv_cache") == 0)
            kv = row;
    }
    const char *server = kv ? text_of(kv, "server") : NULL;
    if (!server)
        return 0;
    const cJSON *tokens = beside_kv(doc, kv, "kv_tokens", 1);
    const cJSON *weights = beside_kv(doc, kv, "weights", 0);
    char cache[32], tok[80] = "", w[64] = "";
    size_text(kv, "bytes", cache, sizeof cache);
    long long t;
    if (tokens && figure_of(tokens, "tokens_or_blocks", &t)) {
        char c[28];
        vr_units_count(t, c, sizeof c);
        snprintf(tok, sizeof tok, " (%s tokens)", c);
    }
    if (weights) {
        char b[32];
        size_text(weights, "bytes", b, sizeof b);
        snprintf(w, sizeof w, " beside %s of weights", b);
    }
    snprintf(out, n,
             "No out-of-memory error in the log; %s gave its KV cache %s%s%s, and no input "
             "records the memory over time: %s",
             server, cache, tok, w, record_hint(doc));
    return 1;
}

/* Monitoring readings alone: the fullest GPU's readings, and why they
 * cannot be a verdict (samples seconds apart miss a peak that lasts
 * milliseconds; "used" mixes every process). */
static void readings_cause(const cJSON *doc, char *out, size_t n)
{
    const cJSON *g, *best = NULL;
    double best_share = -1;
    cJSON_ArrayForEach(g, member(doc, "gpus"))
    {
        long long used, total;
        if (!figure_of(g, "smi_max_used_bytes", &used) ||
            !figure_of(g, "memory_total_bytes", &total) || total <= 0)
            continue;
        double share = (double)used / (double)total;
        if (share > best_share) {
            best_share = share;
            best = g;
        }
    }
    if (!best) {
        if (server_cause(doc, out, n))
            return;
        snprintf(out, n, "No out-of-memory error%s, and no peak to judge: %s",
                 has_log(doc) ? " in the log" : "", record_hint(doc));
        return;
    }
    long long samples = 0;
    figure_of(best, "smi_samples", &samples);
    char used[32], total[32];
    size_text(best, "smi_max_used_bytes", used, sizeof used);
    size_text(best, "memory_total_bytes", total, sizeof total);
    snprintf(out, n,
             "Only monitoring readings: the fullest GPU used at most %s of %s (%.0f%%) in %lld "
             "reading%s, nothing near full; readings seconds apart miss a job's peak, and no "
             "input records the job's own memory: %s",
             used, total, best_share * 100.0, samples, samples == 1 ? "" : "s", record_hint(doc));
}

static void unknown_cause(const cJSON *doc, char *out, size_t n)
{
    const cJSON *about;
    char peak[96];
    switch (judge_grounds(doc, &about)) {
    case GROUNDS_SUSPECT:
        snprintf(out, n, "The inputs contradict each other (%s): no verdict is drawn from them",
                 text_of(about, "title") ? text_of(about, "title") : "see Findings");
        return;
    case GROUNDS_NO_CAPACITY:
        peak_words(about, peak, sizeof peak);
        snprintf(out, n,
                 "%s peaked at %s with no out-of-memory error, but no input states its "
                 "capacity: give it with --capacity (80GiB, or a GPU from vramreport estimate "
                 "--list-gpus) to judge the peak",
                 device_name(about), peak);
        return;
    case GROUNDS_DUMP_NO_CAPACITY:
        dump_words(about, peak, sizeof peak);
        snprintf(out, n,
                 "%s shows peaks of %s and no out-of-memory error, but names no device "
                 "and no input states its capacity: give it with --capacity (80GiB, or a GPU "
                 "from vramreport estimate --list-gpus) to judge the peak",
                 dump_name(about), peak);
        return;
    case GROUNDS_NO_PEAK:
    case GROUNDS_OK:
        readings_cause(doc, out, n);
        return;
    }
}

static void add_cause(cJSON *v, const cJSON *doc, const cJSON *primary, const cJSON *dev,
                      const numbers *n)
{
    const char *title = text_of(primary, "title");
    const cJSON *about;
    char cause[640], peak[96], cap[32];
    long long ooms = oom_count(doc);
    if (title) {
        cJSON_AddStringToObject(v, "cause", title);
        return;
    }
    vr_units_bytes(n->cap, cap, sizeof cap);
    if (ooms > 0)
        snprintf(cause, sizeof cause, "%lld out-of-memory error%s, none explained", ooms,
                 ooms == 1 ? "" : "s");
    else if (judge_grounds(doc, &about) == GROUNDS_OK && dev && n->has_peak && n->has_cap) {
        peak_words(dev, peak, sizeof peak);
        snprintf(cause, sizeof cause,
                 "%s peaked at %s of %s: no out-of-memory error, nothing near the capacity",
                 device_name(dev), peak, cap);
    } else if (judge_grounds(doc, &about) == GROUNDS_OK && highest_dump(doc)) {
        const cJSON *dump = highest_dump(doc);
        dump_words(dump, peak, sizeof peak);
        size_text(member(doc, "capacity_given"), "bytes", cap, sizeof cap);
        snprintf(cause, sizeof cause,
                 "%s peaked at %s of %s (given with --capacity): no out-of-memory error, "
                 "nothing near the capacity",
                 dump_name(dump), peak, cap);
    } else
        unknown_cause(doc, cause, sizeof cause);
    cJSON_AddStringToObject(v, "cause", cause);
}

/* The finding the verdict is about: the first (findings come by severity)
 * when it is critical or a warning; an informational one (suspect input)
 * states no risk. */
static const cJSON *primary_finding(const cJSON *doc)
{
    const cJSON *first = cJSON_GetArrayItem(member(doc, "findings"), 0);
    const char *severity = text_of(first, "severity");
    return severity && (strcmp(severity, "critical") == 0 || strcmp(severity, "warning") == 0)
               ? first
               : NULL;
}

void vr_verdict_add(cJSON *doc)
{
    const cJSON *primary = primary_finding(doc);
    const cJSON *dev = primary ? device_of_finding(doc, primary) : fullest_device(doc);
    const cJSON *ev = primary ? member(primary, "evidence") : NULL;
    numbers n = {0};
    peak_numbers(dev, ev, &n);
    n.has_cap_min = !n.has_cap && ev && figure_of(ev, "capacity_at_least_bytes", &n.cap_min);
    n.has_req = ev && figure_of(ev, "requested_bytes", &n.req);
    n.has_free = ev && figure_of(ev, "device_free_bytes", &n.free);
    outside_numbers(dev, ev, &n);

    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "state", state_of(doc, primary));
    add_cause(v, doc, primary, dev, &n);
    const char *kind = text_of(primary, "kind"), *conf = text_of(primary, "confidence");
    const char *label = dev ? text_of(dev, "id") : text_of(primary, "device");
    kind ? cJSON_AddStringToObject(v, "kind", kind) : cJSON_AddNullToObject(v, "kind");
    conf ? cJSON_AddStringToObject(v, "confidence", conf)
         : cJSON_AddNullToObject(v, "confidence");
    label ? cJSON_AddStringToObject(v, "device", label) : cJSON_AddNullToObject(v, "device");
    add_opt_int(v, "peak_bytes", n.has_peak, n.peak);
    long long pa, pr;
    int has_pa = dev && figure_of(dev, "peak_allocated_bytes", &pa);
    int has_pr = dev && figure_of(dev, "peak_reserved_bytes", &pr);
    add_opt_int(v, "peak_allocated_bytes", has_pa, has_pa ? pa : 0);
    add_opt_int(v, "peak_reserved_bytes", has_pr, has_pr ? pr : 0);
    add_opt_int(v, "capacity_bytes", n.has_cap, n.cap);
    n.cap_from ? cJSON_AddStringToObject(v, "capacity_from", n.cap_from)
               : cJSON_AddNullToObject(v, "capacity_from");
    add_opt_int(v, "capacity_at_least_bytes", n.has_cap_min, n.cap_min);
    if (n.has_peak && n.has_cap)
        cJSON_AddNumberToObject(v, "peak_share",
                                (double)(long long)((double)n.peak * 10000.0 / (double)n.cap) /
                                    10000.0);
    else
        cJSON_AddNullToObject(v, "peak_share");
    add_opt_int(v, "requested_bytes", n.has_req, n.req);
    add_opt_int(v, "free_bytes", n.has_free, n.free);
    add_opt_int(v, "outside_pytorch_bytes", n.has_outside, n.outside);
    n.outside_source ? cJSON_AddStringToObject(v, "outside_pytorch_from", n.outside_source)
                     : cJSON_AddNullToObject(v, "outside_pytorch_from");
    /* What was in use at the OOM, PyTorch's and outside it: only when the
     * peak is what PyTorch reserved at that OOM, else the two are of
     * different moments (a snapshot's peak beside a log's error). */
    long long at_oom;
    int whole = n.has_outside && n.has_peak && ev && figure_of(ev, "reserved_bytes", &at_oom) &&
                at_oom == n.peak;
    add_opt_int(v, "in_use_at_oom_bytes", whole, whole ? vr_sat_add(n.peak, n.outside) : 0);
    add_int(v, "oom_count", oom_count(doc));
    add_int(v, "finding_count", finding_count(doc));
    cJSON_AddItemToObject(doc, "verdict", v);
}

/*-*** what the templates show ***/

/* The numbers that matter, as {label, text} rows (our own words and
 * sizes: no input text). */
static cJSON *number_rows(const cJSON *v)
{
    cJSON *rows = cJSON_CreateArray();
    char a[32], b[32], text[260];
    long long x;
    if (figure_of(v, "peak_bytes", &x)) {
        size_text(v, "peak_bytes", a, sizeof a);
        size_text(v, "capacity_bytes", b, sizeof b);
        const cJSON *share = member(v, "peak_share");
        /* The device's peaks in words stand for the peak when it is theirs
         * ("3.59 GiB allocated, 3.95 GiB reserved of 80.0 GiB"); an OOM's
         * larger figure comes first, the device's peaks after it. */
        long long pa = -1, pr = -1, peak = 0;
        figure_of(v, "peak_bytes", &peak);
        int has_a = figure_of(v, "peak_allocated_bytes", &pa);
        int has_r = figure_of(v, "peak_reserved_bytes", &pr);
        char lead[112], tail[112] = "";
        if ((has_r && pr == peak) || (!has_r && has_a && pa == peak))
            peak_words(v, lead, sizeof lead);
        else {
            snprintf(lead, sizeof lead, "%s", a);
            if (has_a || has_r) {
                char words[80];
                peak_words(v, words, sizeof words);
                snprintf(tail, sizeof tail, "; the device's peak: %s", words);
            }
        }
        const char *from = text_of(v, "capacity_from");
        int given = from && strcmp(from, "--capacity") == 0;
        long long sum, cap;
        if (cJSON_IsNumber(share) && !tail[0] && figure_of(v, "in_use_at_oom_bytes", &sum) &&
            sum > peak && figure_of(v, "capacity_bytes", &cap) && cap > 0) {
            /* The peak is PyTorch's; what counted against the limit is
             * the whole use at the OOM (MPS: 9.57 GiB of 27.2 GiB, yet
             * 26.9 GiB with the process's other allocations). */
            char whole[32];
            vr_units_bytes(sum, whole, sizeof whole);
            snprintf(tail, sizeof tail, "; %s (%.1f%%) with the memory outside PyTorch", whole,
                     (double)sum * 100.0 / (double)cap);
        }
        if (cJSON_IsNumber(share) && share->valuedouble > 1.0 && !given)
            /* More than the GPU holds: the capacity is of another GPU or
             * run (a suspect-input finding says so); no share of it. */
            snprintf(text, sizeof text,
                     "%s; above the %s capacity the inputs give, so they are not of one GPU%s",
                     lead, b, tail);
        else if (cJSON_IsNumber(share))
            snprintf(text, sizeof text, "%s of %s%s (%.1f%%)%s", lead, b,
                     given ? " given with --capacity" : "", share->valuedouble * 100.0, tail);
        else if (figure_of(v, "capacity_at_least_bytes", &x)) {
            char least[32];
            size_text(v, "capacity_at_least_bytes", least, sizeof least);
            snprintf(text, sizeof text, "%s of at least %s (free plus reserved at the OOM)%s",
                     lead, least, tail);
        } else
            snprintf(text, sizeof text, "%s (capacity not known)%s", lead, tail);
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "label", "Peak");
        cJSON_AddStringToObject(row, "text", text);
        cJSON_AddItemToArray(rows, row);
    }
    if (figure_of(v, "requested_bytes", &x)) {
        size_text(v, "requested_bytes", a, sizeof a);
        long long asked = x, free_b;
        if (figure_of(v, "free_bytes", &free_b)) {
            /* never "19.8 GiB asked, 19.8 GiB free" for two sizes apart */
            vr_units_bytes_apart(asked, free_b, a, b, sizeof a);
            snprintf(text, sizeof text, "%s asked, %s free", a, b);
        }
        else
            snprintf(text, sizeof text, "%s asked (free memory not known)", a);
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "label", "Failed request");
        cJSON_AddStringToObject(row, "text", text);
        cJSON_AddItemToArray(rows, row);
    }
    if (figure_of(v, "outside_pytorch_bytes", &x)) {
        size_text(v, "outside_pytorch_bytes", a, sizeof a);
        snprintf(text, sizeof text, "%s (%s)", a, text_of(v, "outside_pytorch_from"));
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "label", "Outside PyTorch");
        cJSON_AddStringToObject(row, "text", text);
        cJSON_AddItemToArray(rows, row);
    }
    return rows;
}

/* The three figures of a finding's evidence that prove its kind, in the
 * order a reader checks them; any other figures it has fill the rest. */
static const struct {
    const char *kind;
    const char *keys[4];
} proofs[] = {
    {"capacity", {"requested_bytes", "device_free_bytes", "allocated_bytes", "capacity_bytes"}},
    {"fragmentation",
     {"requested_bytes", "cache_free_bytes", "largest_free_block_bytes", "device_free_bytes"}},
    {"other-process",
     {"requested_bytes", "other_processes_bytes", "device_free_bytes",
      "outside_allocator_bytes"}},
    {"oversized-request", {"requested_bytes", "capacity_bytes", "device_free_bytes", NULL}},
    {"inconsistent",
     {"requested_bytes", "device_free_bytes", "allocated_bytes", "capacity_bytes"}},
    {"leak",
     {"leak_per_step_bytes", "first_end_allocated_bytes", "last_end_allocated_bytes",
      "allocated_bytes"}},
    {"near-capacity",
     {"peak_reserved_bytes", "peak_allocated_bytes", "nvidia_smi_used_bytes", "capacity_bytes"}},
    {"device-imbalance",
     {"highest_device_peak_bytes", "lowest_device_peak_bytes", "site_highest_bytes",
      "site_lowest_bytes"}},
    {"rank-imbalance", {"highest_peak_bytes", "lowest_peak_bytes", NULL, NULL}},
};

static const struct {
    const char *key, *label;
} figure_labels[] = {
    {"requested_bytes", "requested"},
    {"allocated_bytes", "allocated"},
    {"reserved_bytes", "reserved"},
    {"device_free_bytes", "free on the device"},
    {"capacity_bytes", "capacity"},
    {"cache_free_bytes", "free in the cache"},
    {"largest_free_block_bytes", "largest free block"},
    {"this_process_bytes", "this process"},
    {"other_processes_bytes", "other processes"},
    {"outside_allocator_bytes", "outside the allocator"},
    {"nvidia_smi_used_bytes", "used on the GPU (monitoring)"},
    {"leak_per_step_bytes", "growth per step"},
    {"first_end_allocated_bytes", "allocated after the first growing step"},
    {"last_end_allocated_bytes", "allocated after the last"},
    {"peak_reserved_bytes", "peak reserved"},
    {"peak_allocated_bytes", "peak allocated"},
    {"highest_peak_bytes", "highest rank's peak"},
    {"lowest_peak_bytes", "lowest rank's peak"},
    {"highest_device_peak_bytes", "most loaded device's peak"},
    {"lowest_device_peak_bytes", "least loaded device's peak"},
    {"site_highest_bytes", "the site on the most loaded device"},
    {"site_lowest_bytes", "on the least loaded"},
    {"capacity_at_least_bytes", "capacity at least"},
};

#define PROOF_FIGURES 3
#define NLABELS (sizeof figure_labels / sizeof *figure_labels)

typedef struct {
    vr_buf text;
    const char *keys[PROOF_FIGURES];
    int shown;
} proof_builder;

/* Whether v is an OOM's "allowed" (a memory fraction's limit, which the
 * diagnosis takes as the capacity): then it is no capacity of the GPU. */
static int is_allowed(const cJSON *doc, long long v)
{
    const cJSON *e;
    long long allowed;
    cJSON_ArrayForEach(e, member(doc, "oom_events"))
    {
        if (figure_of(e, "allowed_bytes", &allowed) && allowed == v)
            return 1;
    }
    return 0;
}

/* The size of `key` in the proof: apart from the figure it is compared
 * with (the request against the memory free) when both round alike. */
static void proof_size(const cJSON *ev, const char *key, long long v, char *out, size_t n)
{
    static const char *const pairs[][2] = {{"requested_bytes", "device_free_bytes"},
                                           {"device_free_bytes", "requested_bytes"},
                                           {"cache_free_bytes", "requested_bytes"}};
    long long other;
    char spare[32];
    vr_units_bytes(v, out, n);
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (strcmp(key, pairs[i][0]) == 0 && figure_of(ev, pairs[i][1], &other)) {
            vr_units_bytes_apart(v, other, out, spare, n < sizeof spare ? n : sizeof spare);
            return;
        }
}

static void add_proof_figure(proof_builder *p, const cJSON *doc, const cJSON *ev,
                             const char *key)
{
    long long v;
    if (!key || p->shown == PROOF_FIGURES || !figure_of(ev, key, &v))
        return;
    for (int k = 0; k < p->shown; k++)
        if (strcmp(p->keys[k], key) == 0)
            return;
    for (size_t i = 0; i < NLABELS; i++)
        if (strcmp(figure_labels[i].key, key) == 0) {
            char size[32];
            proof_size(ev, key, v, size, sizeof size);
            const char *label = strcmp(key, "capacity_bytes") == 0 && is_allowed(doc, v)
                                    ? "allowed"
                                    : figure_labels[i].label;
            vr_buf_printf(&p->text, "%s%s %s", p->shown ? "; " : "", label, size);
            p->keys[p->shown++] = key;
            return;
        }
}

/* "requested 74.0 MiB; free on the device 12.9 MiB; allocated 10.8 GiB" */
static char *proof_text(const cJSON *doc, const cJSON *finding)
{
    const cJSON *ev = member(finding, "evidence");
    const char *kind = text_of(finding, "kind");
    proof_builder p = {VR_BUF_INIT, {NULL}, 0};
    for (size_t i = 0; kind && i < sizeof proofs / sizeof *proofs; i++)
        for (int k = 0; strcmp(proofs[i].kind, kind) == 0 && k < 4; k++)
            add_proof_figure(&p, doc, ev, proofs[i].keys[k]);
    for (size_t i = 0; i < NLABELS; i++)
        add_proof_figure(&p, doc, ev, figure_labels[i].key);
    return vr_buf_detach(&p.text);
}

static cJSON *paragraphs(const cJSON *doc, int max, int *more)
{
    cJSON *list = cJSON_CreateArray();
    const cJSON *f;
    int n = 0;
    *more = 0;
    cJSON_ArrayForEach(f, member(doc, "findings"))
    {
        const char *severity = text_of(f, "severity");
        if (severity && strcmp(severity, "info") == 0)
            continue; /* no risk: under Findings, and in the cause when it voids an OK */
        if (n == max) {
            (*more)++;
            continue;
        }
        cJSON *p = cJSON_CreateObject();
        char *proof = proof_text(doc, f);
        cJSON_AddNumberToObject(p, "n", ++n);
        cJSON_AddStringToObject(p, "title", text_of(f, "title") ? text_of(f, "title") : "");
        proof &&*proof ? cJSON_AddStringToObject(p, "proof", proof)
                       : cJSON_AddNullToObject(p, "proof");
        const char *conf = text_of(f, "confidence");
        conf ? cJSON_AddStringToObject(p, "confidence", conf)
             : cJSON_AddNullToObject(p, "confidence");
        /* "1,998 more like it: ..." (oom_groups.h): the errors it tells */
        const char *like = text_of(member(f, "more_like_it"), "text");
        like ? cJSON_AddStringToObject(p, "like_it", like) : cJSON_AddNullToObject(p, "like_it");
        free(proof);
        cJSON_AddItemToArray(list, p);
    }
    return list;
}

/* The advice of the findings, in their order, at most `max`; each item's
 * members as the remedies pass wrote them (decorated: saving_h). */
static cJSON *top_advice(const cJSON *doc, int max, int *more)
{
    cJSON *list = cJSON_CreateArray();
    const cJSON *f, *a;
    int n = 0;
    *more = 0;
    cJSON_ArrayForEach(f, member(doc, "findings"))
    {
        cJSON_ArrayForEach(a, member(f, "advice"))
        {
            if (!cJSON_IsObject(a) || !text_of(a, "title"))
                continue;
            if (n == max) {
                (*more)++;
                continue;
            }
            cJSON *item = cJSON_Duplicate(a, 1);
            /* A setting of several lines (code) reads only as a block:
             * the Advice section has it; a one-line one fits here. */
            const char *setting = text_of(a, "setting");
            cJSON_AddBoolToObject(item, "setting_one_line", setting && !strchr(setting, '\n'));
            cJSON_AddItemToArray(list, item);
            n++;
        }
    }
    return list;
}

void vr_verdict_view(cJSON *doc, int max_paragraphs, int max_advice)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "verdict");
    if (!cJSON_IsObject(v))
        return;
    int more;
    cJSON_AddStringToObject(v, "label", vr_verdict_label(v));
    cJSON_AddItemToObject(v, "numbers", number_rows(v));
    cJSON *list = paragraphs(doc, max_paragraphs, &more);
    cJSON_AddBoolToObject(v, "has_paragraphs", cJSON_GetArraySize(list) > 0);
    cJSON_AddItemToObject(v, "paragraphs", list);
    more ? cJSON_AddNumberToObject(v, "paragraphs_more", more)
         : cJSON_AddNullToObject(v, "paragraphs_more");
    list = top_advice(doc, max_advice, &more);
    cJSON_AddBoolToObject(v, "has_advice", cJSON_GetArraySize(list) > 0);
    cJSON_AddItemToObject(v, "advice", list);
    more ? cJSON_AddNumberToObject(v, "advice_more", more)
         : cJSON_AddNullToObject(v, "advice_more");
}

/*-*** the summary's breakdown ***/

/* "parameter 1.2 GiB (40%), activation 900 MiB (30%)": the categories
 * the peak held, in PyTorch's order. */
static char *parts_line(const cJSON *dev)
{
    vr_buf b = VR_BUF_INIT;
    const cJSON *row;
    cJSON_ArrayForEach(row, member(dev, "peak_categories"))
    {
        long long v;
        if (!figure_of(row, "bytes", &v) || v <= 0)
            continue;
        const cJSON *share = member(row, "peak_share");
        char size[32];
        vr_units_bytes(v, size, sizeof size);
        vr_buf_printf(&b, "%s%s %s (%.0f%%)", b.len ? ", " : "", text_of(row, "category"), size,
                      cJSON_IsNumber(share) ? share->valuedouble * 100.0 : 0.0);
    }
    return vr_buf_detach(&b);
}

void vr_verdict_summary_view(cJSON *doc, int max_devices)
{
    cJSON *list = cJSON_CreateArray();
    const cJSON *dev;
    int n = 0, more = 0;
    cJSON_ArrayForEach(dev, member(doc, "devices"))
    {
        long long peak;
        if (!figure_of(dev, "peak_allocated_bytes", &peak))
            continue;
        if (n == max_devices) {
            more++;
            continue;
        }
        char size[32];
        vr_units_bytes(peak, size, sizeof size);
        cJSON *row = cJSON_CreateObject();
        const char *id = text_of(dev, "id"), *path = text_of(dev, "source_path");
        const char *slash = path ? strrchr(path, '/') : NULL;
        cJSON_AddStringToObject(row, "id", id ? id : "device");
        path ? cJSON_AddStringToObject(row, "file", slash ? slash + 1 : path)
             : cJSON_AddNullToObject(row, "file");
        cJSON_AddStringToObject(row, "peak_h", size);
        char *parts = parts_line(dev);
        parts ? cJSON_AddStringToObject(row, "parts", parts)
              : cJSON_AddNullToObject(row, "parts");
        free(parts);
        cJSON_AddItemToArray(list, row);
        n++;
    }
    cJSON_AddBoolToObject(doc, "has_summary_devices", n > 0);
    cJSON_AddItemToObject(doc, "summary_devices", list);
    more ? cJSON_AddNumberToObject(doc, "summary_devices_more", more)
         : cJSON_AddNullToObject(doc, "summary_devices_more");
}

/*-*** the terminal's line ***/

/* The cause with controls and bidi characters as visible escapes, cut. */
static void put_visible(vr_buf *b, const char *s, size_t max)
{
    size_t len = strlen(s), i = 0, start = b->len;
    while (i < len && b->len - start < max) {
        char vis[VR_UTF8_VISIBLE_SIZE];
        size_t n = vr_utf8_visible(s + i, len - i, vis);
        if (*vis)
            vr_buf_puts(b, vis);
        else
            vr_buf_append(b, s + i, n);
        i += n;
    }
    if (i < len)
        vr_buf_puts(b, "\xe2\x80\xa6");
}

void vr_verdict_line(const char *label, const char *cause, const char *path, int64_t size,
                     char *out, size_t n)
{
    char h[32];
    vr_units_bytes(size, h, sizeof h);
    vr_buf b = VR_BUF_INIT;
    vr_buf_puts(&b, "wrote ");
    put_visible(&b, path, 200);
    vr_buf_printf(&b, " (%s): %s", h, label);
    if (cause && *cause) {
        vr_buf_puts(&b, ": ");
        put_visible(&b, cause, 160);
    }
    snprintf(out, n, "%s", b.data ? b.data : "");
    vr_buf_free(&b);
}

/*-*** the summary's bound ***/

void vr_verdict_fit(char *md, size_t *len, size_t max)
{
    static const char note[] =
        "\n_Cut to fit one comment: the full report (without `--summary`) has the rest._\n";
    if (*len <= max)
        return;
    size_t keep = max - (sizeof note - 1);
    while (keep > 0 && md[keep - 1] != '\n')
        keep--;
    memcpy(md + keep, note, sizeof note);
    *len = keep + sizeof note - 1;
}
