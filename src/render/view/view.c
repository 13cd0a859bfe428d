#include "render/view/view.h"

#include "render/view/how_we_know.h"
#include "render/view/kinds.h"
#include "render/view/once.h"
#include "render/view/paths.h"
#include "render/view/stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/category.h"
#include "db/tolerated.h"
#include "util/buf.h"
#include "util/sat.h"
#include "util/units.h"
#include "util/utf8.h"
#include "render/results/oom_groups.h"
#include "render/results/doc.h"
#include "render/results/results.h"
#include "render/results/verdict.h"
#include "render/view/commands.h"
#include "render/view/mustache.h"

static int ends_with(const char *s, const char *suffix, size_t *stem)
{
    size_t n = strlen(s), k = strlen(suffix);
    if (n <= k || strcmp(s + n - k, suffix) != 0)
        return 0;
    *stem = n - k;
    return 1;
}

static int is_count_key(const char *k)
{
    static const char *const keys[] = {
        "events",           "memory_events",      "calls", "alloc_count", "self_alloc_count",
        "incl_alloc_count", "live_at_peak_count", "copy_ops", "host_copy_ops", "readings",
        "tokens_or_blocks", "server_memory_more", NULL};
    for (int i = 0; keys[i]; i++)
        if (strcmp(k, keys[i]) == 0)
            return 1;
    return 0;
}

static void add_text(cJSON *obj, const char *key, size_t stem, const char *suffix,
                     const char *text)
{
    char name[128];
    snprintf(name, sizeof name, "%.*s%s", (int)stem, key, suffix);
    if (!cJSON_GetObjectItemCaseSensitive(obj, name))
        cJSON_AddStringToObject(obj, name, text);
}

/* A missing figure gets null texts: Mustache would otherwise look the
 * name up in the enclosing object and show, in a step's row, the device's
 * figure. */
static void add_null_texts(cJSON *obj, const char *k)
{
    static const struct {
        const char *suffix, *text;
    } rules[] = {{"_ts_ns", "_t"},
                 {"_bytes", "_h"},
                 {"_share", "_pct"},
                 {"_ns", "_d"},
                 {"_bytes_per_s", "_rate"}};
    char name[128];
    size_t stem;
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
        if (!ends_with(k, rules[i].suffix, &stem))
            continue;
        snprintf(name, sizeof name, "%.*s%s", (int)stem, k, rules[i].text);
        if (!cJSON_GetObjectItemCaseSensitive(obj, name))
            cJSON_AddNullToObject(obj, name);
        return;
    }
}

/* A rate in decimal units, as bandwidths are marketed: "3.35 TB/s",
 * "936 GB/s", "446 kB/s". */
static void rate_text(long long v, char *out, size_t n)
{
    static const char *const units[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s"};
    double x = (double)v;
    size_t u = 0;
    while (x >= 999.5 && u + 1 < sizeof units / sizeof *units) {
        x /= 1000.0;
        u++;
    }
    snprintf(out, n,
             x >= 99.5 || u == 0 ? "%.0f %s"
             : x >= 9.995        ? "%.1f %s"
                                 : "%.2f %s",
             x, units[u]);
}

/* A time's text, and beside it the wall-clock time its sibling `utc` key
 * (ISO 8601, "2025-09-07T13:54:17.123Z") gives, when the source has a
 * clock: "951.99 ms (2025-09-07 13:54:17 UTC)". */
static void time_text(const cJSON *obj, const char *utc_key, long long rel, char *out, size_t n)
{
    vr_units_time(rel, out, n);
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(obj, utc_key);
    if (!cJSON_IsString(u) || strlen(u->valuestring) < 19)
        return;
    size_t used = strlen(out);
    snprintf(out + used, n - used, " (%.10s %.8s UTC)", u->valuestring, u->valuestring + 11);
}

/* A device whose source has no clock (a snapshot without time_us) has
 * entry numbers for times: "entry 3,697 of 6,832", durations "15 entries". */
static void entry_text(long long v, long long entries, char *out, size_t n)
{
    char a[28], b[28];
    vr_units_count(vr_sat_add(v, 1), a, sizeof a);
    vr_units_count(entries, b, sizeof b);
    /* The snapshot's opening level (what was live before its history
     * begins) is dated before entry 0, its closing one after the last. */
    if (v < 0)
        snprintf(out, n, "the start, before entry 1 of %s", b);
    else if (v >= entries)
        snprintf(out, n, "the end, after entry %s of %s", b, b);
    else
        snprintf(out, n, "entry %s of %s", a, b);
}

static void entries_text(long long v, char *out, size_t n)
{
    char a[32];
    vr_units_count(v, a, sizeof a);
    snprintf(out, n, "%s %s", a, v == 1 ? "entry" : "entries");
}

static void decorate_member(cJSON *obj, const cJSON *item, long long t0, long long entries)
{
    const char *k = item->string;
    char text[96], name[128];
    size_t stem;
    long long v;
    if (cJSON_IsArray(item)) {
        snprintf(name, sizeof name, "has_%s", k);
        cJSON_AddBoolToObject(obj, name, cJSON_GetArraySize(item) > 0);
        return;
    }
    if (ends_with(k, "_share", &stem) && cJSON_IsNumber(item)) {
        /* a share that rounds to nothing but holds bytes: never "0.0%" */
        if (item->valuedouble > 0 && item->valuedouble * 100.0 < 0.05)
            snprintf(text, sizeof text, "<0.1%%");
        else
            snprintf(text, sizeof text, "%.1f%%", item->valuedouble * 100.0);
        add_text(obj, k, stem, "_pct", text);
        return;
    }
    if (cJSON_IsNull(item)) {
        add_null_texts(obj, k);
        return;
    }
    if (!vr_results_int(item, &v))
        return;
    if (ends_with(k, "_bytes_per_s", &stem)) {
        rate_text(v, text, sizeof text);
        add_text(obj, k, stem, "_rate", text);
    } else if (strcmp(k, "bytes") == 0) {
        vr_units_bytes(v, text, sizeof text);
        add_text(obj, k, strlen(k), "_h", text);
    } else if (ends_with(k, "_bytes", &stem)) {
        vr_units_bytes(v, text, sizeof text);
        add_text(obj, k, stem, "_h", text);
        snprintf(name, sizeof name, "%.*s_nonzero", (int)stem, k);
        if (v != 0 && !cJSON_GetObjectItemCaseSensitive(obj, name))
            cJSON_AddBoolToObject(obj, name, 1);
    } else if (entries > 0 && strcmp(k, "ts_ns") == 0) {
        entry_text(v, entries, text, sizeof text);
        add_text(obj, "t", 1, "", text);
    } else if (entries > 0 && ends_with(k, "_ts_ns", &stem)) {
        entry_text(v, entries, text, sizeof text);
        add_text(obj, k, stem, "_t", text);
    } else if (entries > 0 && ends_with(k, "_ns", &stem)) {
        entries_text(v, text, sizeof text);
        add_text(obj, k, stem, "_d", text);
    } else if (strcmp(k, "history_entries") == 0) {
        entries_text(v, text, sizeof text);
        add_text(obj, k, strlen(k), "_n", text);
    } else if (strcmp(k, "ts_ns") == 0) {
        time_text(obj, "utc", vr_sat_sub(v, t0), text, sizeof text);
        add_text(obj, "t", 1, "", text);
    } else if (ends_with(k, "_ts_ns", &stem)) {
        snprintf(name, sizeof name, "%.*s_utc", (int)stem, k);
        time_text(obj, name, vr_sat_sub(v, t0), text, sizeof text);
        add_text(obj, k, stem, "_t", text);
    } else if (ends_with(k, "_ns", &stem)) {
        vr_units_duration(v, text, sizeof text);
        add_text(obj, k, stem, "_d", text);
    } else if (is_count_key(k)) {
        vr_units_count(v, text, sizeof text);
        add_text(obj, k, strlen(k), "_n", text);
    }
}

static void decorate(cJSON *node, long long t0, long long entries)
{
    if (cJSON_IsArray(node)) {
        cJSON *el;
        cJSON_ArrayForEach(el, node) decorate(el, t0, entries);
        return;
    }
    if (!cJSON_IsObject(node))
        return;
    long long h;
    if (vr_results_int(cJSON_GetObjectItemCaseSensitive(node, "history_entries"), &h) && h > 0)
        entries = h;
    /* Members are added at the end of the list while walking it: stop at
     * the member that was last before decoration began. */
    cJSON *last = node->child ? node->child->prev : NULL;
    for (cJSON *m = node->child; m; m = m->next) {
        decorate(m, t0, entries);
        decorate_member(node, m, t0, entries);
        if (m == last)
            break;
    }
}

static int is_unplaced(const cJSON *source)
{
    const cJSON *clock = cJSON_GetObjectItemCaseSensitive(source, "clock");
    return cJSON_IsString(clock) && strcmp(clock->valuestring, "unplaced") == 0;
}

/* The start the report's times count from: the earliest source on the
 * common clock. A source with no absolute time (unplaced) counts only when
 * no source has one, else its relative times would make every placed time
 * read as decades. */
static long long earliest_start(const cJSON *doc)
{
    long long t0 = 0, v;
    int have = 0, placed_only = 0;
    const cJSON *s, *sources = cJSON_GetObjectItemCaseSensitive(doc, "sources");
    cJSON_ArrayForEach(s, sources) placed_only |= !is_unplaced(s);
    cJSON_ArrayForEach(s, sources)
    {
        if (placed_only && is_unplaced(s))
            continue;
        if (vr_results_int(cJSON_GetObjectItemCaseSensitive(s, "start_ts_ns"), &v) &&
            (!have || v < t0)) {
            t0 = v;
            have = 1;
        }
    }
    return t0;
}

/*-*** what a source lost ***/

/* How a tolerated kind is noted: dropped data first, then repairs. */
static vr_tolerated_effect effect_of(const char *kind)
{
    const vr_tolerated_kind *k = vr_tolerated_find(kind);
    return k ? k->effect : VR_TOLERATED_QUIET;
}

/* Appends to `notes` a sentence for each tolerated kind of `effect`; true
 * when any was added. */
static int add_notes(cJSON *notes, const cJSON *tolerated, vr_tolerated_effect effect)
{
    int added = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, tolerated)
    {
        long long n;
        if (effect_of(t->string) != effect || !vr_results_int(t, &n) || n <= 0)
            continue;
        char sentence[200];
        vr_tolerated_sentence(t->string, n, sentence, sizeof sentence);
        cJSON *note = cJSON_CreateObject();
        cJSON_AddStringToObject(note, "text", sentence);
        cJSON_AddBoolToObject(note, "last", 0);
        cJSON_AddItemToArray(notes, note);
        added = 1;
    }
    return added;
}

/* The Inputs table says "complete" only when the file was read whole and
 * nothing in it was skipped. Adds "notes" (data lost first, then repairs;
 * "last" ends the list, Mustache has no separators), "data_skipped" and
 * "complete". */
static void describe_losses(cJSON *source)
{
    const cJSON *tolerated = cJSON_GetObjectItemCaseSensitive(source, "tolerated");
    int cut = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(source, "truncated"));
    cJSON *notes = cJSON_CreateArray();
    int skipped = add_notes(notes, tolerated, VR_TOLERATED_DROPPED);
    add_notes(notes, tolerated, VR_TOLERATED_REPAIRED);
    cJSON *last = notes->child ? notes->child->prev : NULL;
    if (last)
        cJSON_ReplaceItemInObjectCaseSensitive(last, "last", cJSON_CreateTrue());
    cJSON_AddItemToObject(source, "notes", notes);
    cJSON_AddBoolToObject(source, "data_skipped", skipped);
    cJSON_AddBoolToObject(source, "complete", !skipped && !cut);
}

/*-*** the ranks compared ***/

/* "1.37" beside the imbalance (null when it is), and "first_tied" when
 * the next rank peaked at the same instant as the first. */
static void describe_ranks(cJSON *summary)
{
    if (!summary)
        return;
    const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(summary, "imbalance");
    char text[32];
    if (cJSON_IsNumber(ratio)) {
        snprintf(text, sizeof text, "%.2f", ratio->valuedouble);
        cJSON_AddStringToObject(summary, "imbalance_x", text);
    } else {
        cJSON_AddNullToObject(summary, "imbalance_x");
    }
    long long lead;
    int tied =
        vr_results_int(cJSON_GetObjectItemCaseSensitive(summary, "first_lead_ns"), &lead) &&
        lead == 0;
    cJSON_AddBoolToObject(summary, "first_tied", tied);
    /* The spread (the lowest rank, how many are off the median) says
     * something from three ranks on: of two, the median is their mean and
     * both are as far from it. */
    long long count;
    cJSON_AddBoolToObject(summary, "spread",
                          vr_results_int(cJSON_GetObjectItemCaseSensitive(summary, "count"),
                                         &count) &&
                              count >= 3);
}

/*-*** the allocator's own figures ***/

/* The columns of a row that are figures (not its dump, device or count). */
static int is_allocator_figure(const char *key)
{
    return strcmp(key, "dump") != 0 && strcmp(key, "device") != 0 && strcmp(key, "figures") != 0;
}

/* Each figure of an allocator_stats[] row in words: "<key>_h" for sizes
 * ("1.23 GiB"), "<key>_n" for counts ("1,234"); a dash when the dump
 * lacks it (null). */
static void describe_allocator_figures(cJSON *row)
{
    char text[64], name[128];
    long long v;
    cJSON *last = row->child ? row->child->prev : NULL;
    for (cJSON *m = row->child; m; m = m->next) {
        int known = vr_results_int(m, &v);
        if (is_allocator_figure(m->string) && (known || cJSON_IsNull(m))) {
            int is_size = strstr(m->string, "_bytes_") != NULL;
            if (!known)
                snprintf(text, sizeof text, "\xe2\x80\x93");
            else if (is_size)
                vr_units_bytes(v, text, sizeof text);
            else
                vr_units_count(v, text, sizeof text);
            snprintf(name, sizeof name, "%s%s", m->string, is_size ? "_h" : "_n");
            cJSON_AddStringToObject(row, name, text);
        }
        if (m == last)
            break;
    }
}

/* The device and dump as shown ("cuda:0", "1"), and "alloc_retried" for
 * the note on cudaMalloc retries. */
static void describe_allocator_row(cJSON *row)
{
    char text[64];
    long long v;
    describe_allocator_figures(row);
    if (vr_results_int(cJSON_GetObjectItemCaseSensitive(row, "device"), &v))
        snprintf(text, sizeof text, "cuda:%lld", v);
    else
        snprintf(text, sizeof text, "not said");
    cJSON_AddStringToObject(row, "device_label", text);
    v = 0;
    vr_results_int(cJSON_GetObjectItemCaseSensitive(row, "dump"), &v);
    snprintf(text, sizeof text, "%lld", v + 1);
    cJSON_AddStringToObject(row, "dump_label", text);
    cJSON_AddBoolToObject(
        row, "alloc_retried",
        vr_results_int(cJSON_GetObjectItemCaseSensitive(row, "num_alloc_retries"), &v) && v > 0);
}

/*-*** out-of-memory errors ***/

/* Errors the report details, each with its excerpt (the JSON's
 * oom_events lists VR_RESULTS_OOM_LISTED; oom_groups tells all). */
#define OOM_SHOWN VR_RESULTS_OOM_EXCERPTS

/* The excerpt as a fenced code block: "  41 | text", the error's own
 * lines marked '>'. The fence is longer than any run of backticks in the
 * text, and controls are shown as escapes, so no line can end the block. */
static void excerpt_block(cJSON *event)
{
    const cJSON *lines = cJSON_GetObjectItemCaseSensitive(event, "excerpt");
    vr_buf body = VR_BUF_INIT, out = VR_BUF_INIT;
    size_t longest = 0;
    const cJSON *l;
    cJSON_ArrayForEach(l, lines)
    {
        const cJSON *text = cJSON_GetObjectItemCaseSensitive(l, "text");
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(l, "role");
        long long number = 0;
        vr_results_int(cJSON_GetObjectItemCaseSensitive(l, "line"), &number);
        int own = cJSON_IsString(role) && strcmp(role->valuestring, "oom") == 0;
        vr_buf_printf(&body, "%c%6lld | ", own ? '>' : ' ', number);
        const char *t = cJSON_IsString(text) ? text->valuestring : "";
        size_t len = strlen(t), run = 0;
        for (size_t i = 0; i < len;) {
            char vis[VR_UTF8_VISIBLE_SIZE];
            size_t n = vr_utf8_visible(t + i, len - i, vis);
            run = t[i] == '`' ? run + 1 : 0;
            if (run > longest)
                longest = run;
            if (*vis)
                vr_buf_puts(&body, vis);
            else
                vr_buf_append(&body, t + i, n);
            i += n ? n : 1;
        }
        vr_buf_putc(&body, '\n');
    }
    size_t fence = longest >= 3 ? longest + 1 : 3;
    for (size_t k = 0; k < fence; k++)
        vr_buf_putc(&out, '`');
    vr_buf_printf(&out, "\n%s", body.data ? body.data : "");
    for (size_t k = 0; k < fence; k++)
        vr_buf_putc(&out, '`');
    vr_buf_putc(&out, '\n');
    cJSON_AddStringToObject(event, "oom_excerpt_md", body.len ? out.data : "");
    vr_buf_free(&body);
    vr_buf_free(&out);
}

/* "path line N" of one telling of an error. */
static void put_where(vr_buf *b, const cJSON *row)
{
    const cJSON *source = cJSON_GetObjectItemCaseSensitive(row, "source");
    long long v;
    vr_buf_puts(b, cJSON_IsString(source) ? source->valuestring : "");
    if (vr_results_int(cJSON_GetObjectItemCaseSensitive(row, "line"), &v))
        vr_buf_printf(b, " line %lld", v);
}

/* Where an error was told: each source that told it (its twins'
 * too: one OOM, told twice, is one row), joined by " and ". */
static void describe_where(cJSON *event)
{
    vr_buf b = VR_BUF_INIT;
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(event, "told_by");
    const cJSON *row;
    if (cJSON_GetArraySize(by) > 0) {
        cJSON_ArrayForEach(row, by)
        {
            if (b.len)
                vr_buf_puts(&b, " and ");
            put_where(&b, row);
        }
    } else {
        put_where(&b, event);
    }
    cJSON_AddStringToObject(event, "oom_where", b.len ? b.data : "");
    vr_buf_free(&b);
}

static void describe_oom(cJSON *event, int n)
{
    char text[600];
    long long v;
    describe_where(event);
    cJSON_AddNumberToObject(event, "oom_n", n);
    cJSON_AddBoolToObject(event, "oom_hidden", n > OOM_SHOWN);
    if (vr_results_int(cJSON_GetObjectItemCaseSensitive(event, "rank"), &v)) {
        snprintf(text, sizeof text, "rank %lld", v);
        cJSON_AddStringToObject(event, "oom_rank", text);
    } else {
        cJSON_AddNullToObject(event, "oom_rank");
    }
    if (!cJSON_GetObjectItemCaseSensitive(event, "t"))
        cJSON_AddNullToObject(event, "t");
    cJSON *p;
    cJSON *procs = cJSON_GetObjectItemCaseSensitive(event, "processes");
    cJSON_ArrayForEach(p, procs)
    {
        const cJSON *pid = cJSON_GetObjectItemCaseSensitive(p, "pid");
        if (vr_results_int(pid, &v))
            snprintf(text, sizeof text, "process %lld", v);
        else
            snprintf(text, sizeof text, "this process");
        cJSON_AddStringToObject(p, "oom_who", text);
        cJSON_AddBoolToObject(p, "oom_last", p->next == NULL);
    }
    excerpt_block(event);
}

/* The Out-of-memory errors section's texts: where each error is, its
 * rank, its excerpt as a code block; the first OOM_SHOWN are detailed. */
static void describe_oom_events(cJSON *doc)
{
    cJSON *events = cJSON_GetObjectItemCaseSensitive(doc, "oom_events");
    int n = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, events) describe_oom(e, ++n);
    long long total = n;
    vr_results_int(cJSON_GetObjectItemCaseSensitive(doc, "oom_event_count"), &total);
    char text[96], count[32];
    vr_units_count(total, count, sizeof count);
    snprintf(text, sizeof text, "%s out-of-memory error%s found in the inputs.", count,
             total == 1 ? " was" : "s were");
    cJSON_AddStringToObject(doc, "oom_summary", text);
    cJSON_AddBoolToObject(doc, "oom_more", total > OOM_SHOWN);
    cJSON_AddNumberToObject(doc, "oom_shown", OOM_SHOWN);
    cJSON_AddNumberToObject(doc, "oom_listed", n);
    cJSON_AddStringToObject(doc, "oom_total", count);
    int folded = vr_oom_groups_describe_list(cJSON_GetObjectItemCaseSensitive(doc, "oom_groups"));
    cJSON_AddBoolToObject(doc, "oom_grouped", folded || total > OOM_SHOWN);
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "findings"))
        vr_oom_groups_describe(cJSON_GetObjectItemCaseSensitive(e, "more_like_it"));
}

/*-*** where the memory went ***/

/* "peak_categories": the peak_breakdown object as rows {category, bytes,
 * share of the peak} for the table (bytes_h and share_pct follow from the
 * rules above), and "breakdown_all_unknown" when no byte has a category.
 * A category listed only with bytes (kv_cache: category.h) has no row at
 * 0 B; the JSON keeps its key. */
static void describe_breakdown(cJSON *dev)
{
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(dev, "peak_breakdown");
    if (!cJSON_IsObject(obj))
        return;
    long long peak = 0, known = 0, v;
    char empty[512] = "";
    vr_results_int(cJSON_GetObjectItemCaseSensitive(dev, "peak_allocated_bytes"), &peak);
    cJSON *rows = cJSON_CreateArray();
    for (int i = 0; i < VR_CATEGORY_COUNT; i++) {
        if (!vr_results_int(cJSON_GetObjectItemCaseSensitive(obj, vr_category_names[i]), &v))
            v = 0;
        if (i != VR_CATEGORY_UNKNOWN)
            known += v;
        if (v == 0) {
            /* no row at 0 B: named on one line under the table */
            size_t len = strlen(empty);
            snprintf(empty + len, sizeof empty - len, "%s%s", len ? ", " : "",
                     vr_category_names[i]);
            continue;
        }
        cJSON *row = cJSON_CreateObject();
        char num[32];
        snprintf(num, sizeof num, "%lld", v);
        cJSON_AddStringToObject(row, "category", vr_category_names[i]);
        cJSON_AddItemToObject(row, "bytes", cJSON_CreateRaw(num));
        cJSON_AddNumberToObject(row, "peak_share", peak > 0 ? (double)v / (double)peak : 0);
        cJSON_AddItemToArray(rows, row);
    }
    cJSON_AddItemToObject(dev, "peak_categories", rows);
    if (empty[0])
        cJSON_AddStringToObject(dev, "nothing_in", empty);
    else
        cJSON_AddNullToObject(dev, "nothing_in");
    cJSON_AddBoolToObject(dev, "breakdown_all_unknown", known == 0);
}

/* "of_which": a by-module row's categories, largest first ("activation
 * 1.10 GiB, temporary 80.0 MiB"), and `extra` (a text and its bytes)
 * among them when it has bytes. */
static void of_which(cJSON *row, const cJSON *cats, const char *extra, long long extra_bytes)
{
    long long v[VR_CATEGORY_COUNT + 1];
    int used[VR_CATEGORY_COUNT + 1] = {0};
    for (int i = 0; i < VR_CATEGORY_COUNT; i++)
        if (!vr_results_int(cJSON_GetObjectItemCaseSensitive(cats, vr_category_names[i]), &v[i]))
            v[i] = 0;
    v[VR_CATEGORY_COUNT] = extra ? extra_bytes : 0;
    vr_buf b = VR_BUF_INIT;
    for (;;) {
        int best = -1;
        for (int i = 0; i <= VR_CATEGORY_COUNT; i++)
            if (!used[i] && v[i] > 0 && (best < 0 || v[i] > v[best]))
                best = i;
        if (best < 0)
            break;
        used[best] = 1;
        char size[32];
        vr_units_bytes(v[best], size, sizeof size);
        vr_buf_printf(&b, "%s%s %s", b.len ? ", " : "",
                      best < VR_CATEGORY_COUNT ? vr_category_names[best] : extra, size);
    }
    cJSON_AddStringToObject(row, "of_which", b.data ? b.data : "");
    vr_buf_free(&b);
}

/* "module_shown": the path as the table shows it, the profiler's
 * "A_0.B_1" as "A_0 › B_1", as a snapshot's frames are: a line can break
 * between modules (a phone's width holds no 100-character path). */
static void module_shown(cJSON *row, int dotted)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(row, "module");
    if (!cJSON_IsString(m))
        return;
    vr_buf b = VR_BUF_INIT;
    for (const char *c = m->valuestring; *c; c++)
        if (dotted && *c == '.')
            vr_buf_puts(&b, " \xe2\x80\xba ");
        else
            vr_buf_putc(&b, *c);
    cJSON_AddStringToObject(row, "module_shown", b.data ? b.data : "");
    vr_buf_free(&b);
}

/* The by-module table's texts: each row's "of_which", the last row
 * "peak_by_module_rest" (in no module, with what no allocation recorded),
 * and how the modules are named (peak_by_module_from_profiler,
 * peak_by_module_from_frames). */
static void describe_peak_by_module(cJSON *dev)
{
    const char *by = NULL;
    const cJSON *named = cJSON_GetObjectItemCaseSensitive(dev, "peak_by_module_named_by");
    if (cJSON_IsString(named))
        by = named->valuestring;
    int dotted = by && strcmp(by, "with_modules") == 0;
    cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(dev, "peak_by_module"))
    {
        of_which(row, cJSON_GetObjectItemCaseSensitive(row, "categories"), NULL, 0);
        module_shown(row, dotted);
    }
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(dev, "peak_by_module_outside");
    long long bytes = 0, unrecorded = 0;
    vr_results_int(cJSON_GetObjectItemCaseSensitive(out, "bytes"), &bytes);
    vr_results_int(cJSON_GetObjectItemCaseSensitive(dev, "peak_by_module_unrecorded_bytes"),
                   &unrecorded);
    if (cJSON_IsObject(out) && vr_sat_add(bytes, unrecorded) > 0) {
        cJSON *rest = cJSON_CreateObject();
        char num[32];
        snprintf(num, sizeof num, "%lld", (long long)vr_sat_add(bytes, unrecorded));
        cJSON_AddItemToObject(rest, "bytes", cJSON_CreateRaw(num));
        int told = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(dev, "explained")) > 0;
        of_which(rest, cJSON_GetObjectItemCaseSensitive(out, "categories"),
                 told ? "allocated before the record began (what it was: How we know, above)"
                      : "allocated before the record began",
                 unrecorded);
        cJSON_AddItemToObject(dev, "peak_by_module_rest", rest);
    }
    cJSON_AddBoolToObject(dev, "peak_by_module_from_profiler",
                          by && strcmp(by, "with_modules") == 0);
    cJSON_AddBoolToObject(dev, "peak_by_module_from_frames",
                          by && strcmp(by, "forward_frames") == 0);
}

/* The phase peaks as one row per step, for the report's table (the JSON
 * keeps a row per step and phase): {step_label, forward_h, backward_h,
 * optimizer_h, other_h}, "" where the step had no such phase. */
static const char *const phase_columns[] = {"forward", "backward", "optimizer", "other"};

static cJSON *phase_step_row(const cJSON *step)
{
    cJSON *row = cJSON_CreateObject();
    long long n;
    char label[32];
    if (vr_results_int(step, &n))
        snprintf(label, sizeof label, "%lld", n);
    else
        snprintf(label, sizeof label, "outside steps");
    cJSON_AddStringToObject(row, "step_label", label);
    for (size_t i = 0; i < sizeof phase_columns / sizeof *phase_columns; i++) {
        char key[32];
        snprintf(key, sizeof key, "%s_h", phase_columns[i]);
        cJSON_AddStringToObject(row, key, "");
    }
    return row;
}

static void pivot_phase_peaks(cJSON *device)
{
    cJSON *rows = cJSON_CreateArray(), *row = NULL, *p;
    const cJSON *last_step = NULL;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(device, "phase_peaks"))
    {
        const cJSON *step = cJSON_GetObjectItemCaseSensitive(p, "step");
        if (!row || !cJSON_Compare(step, last_step, 1))
            cJSON_AddItemToArray(rows, row = phase_step_row(step));
        last_step = step;
        const cJSON *phase = cJSON_GetObjectItemCaseSensitive(p, "phase");
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(p, "peak_allocated_h");
        char key[32];
        if (!cJSON_IsString(phase) || !cJSON_IsString(h) || strlen(phase->valuestring) > 16)
            continue;
        snprintf(key, sizeof key, "%s_h", phase->valuestring);
        if (cJSON_GetObjectItemCaseSensitive(row, key))
            cJSON_ReplaceItemInObjectCaseSensitive(row, key, cJSON_CreateString(h->valuestring));
    }
    cJSON_AddItemToObject(device, "phase_steps", rows);
}

/*-*** profiler tables (docs/formats/profiler-table.md) ***/

#define TOP_OPS 10

/* What a table's ops are ranked by: the first of these it has. The total
 * (the op and its children) before self: the ops that allocate most in
 * all come first; the table shows the self column beside it. */
static const struct {
    const char *key, *label;
} op_rankings[] = {{"cuda_mem_bytes", "total CUDA memory"},
                   {"self_cuda_mem_bytes", "self CUDA memory"},
                   {"cpu_mem_bytes", "total CPU memory"},
                   {"self_cpu_mem_bytes", "self CPU memory"}};

typedef struct {
    long long v;
    size_t order;
    cJSON *op;
} ranked_op;

static int by_memory(const void *a, const void *b)
{
    const ranked_op *x = a, *y = b;
    if (x->v != y->v)
        return x->v > y->v ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The first ranking with a figure other than 0 (old PyTorch printed the
 * CUDA columns, all zeros, for a CPU run), else the first with a figure;
 * -1 when none. */
static int ranking_of(const cJSON *ops)
{
    int present = -1;
    for (size_t r = 0; r < sizeof op_rankings / sizeof *op_rankings; r++) {
        const cJSON *op;
        long long v;
        cJSON_ArrayForEach(op, ops)
        {
            if (!vr_results_int(cJSON_GetObjectItemCaseSensitive(op, op_rankings[r].key), &v))
                continue;
            if (v != 0)
                return (int)r;
            if (present < 0)
                present = (int)r;
        }
    }
    return present;
}

/* "top_ops": the table's TOP_OPS ops with the most memory (copies, in
 * that order), "top_by": what they are ranked by. */
static void describe_profiler_table(cJSON *t)
{
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(t, "ops");
    int r = ranking_of(ops);
    size_t n = (size_t)cJSON_GetArraySize(ops), k = 0;
    cJSON_AddBoolToObject(t, "has_top_ops", r >= 0 && n > 0);
    int source = 0; /* a Source Location column to show (group_by_stack_n) */
    const cJSON *o;
    cJSON_ArrayForEach(o, ops) source |=
        cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "source_location"));
    cJSON_AddBoolToObject(t, "has_source", source);
    if (r < 0 || n == 0)
        return;
    ranked_op *rank = vr_xcalloc(n, sizeof *rank);
    cJSON *op;
    cJSON_ArrayForEach(op, ops)
    {
        if (!vr_results_int(cJSON_GetObjectItemCaseSensitive(op, op_rankings[r].key), &rank[k].v))
            continue;
        rank[k].order = k;
        rank[k++].op = op;
    }
    qsort(rank, k, sizeof *rank, by_memory);
    cJSON *top = cJSON_CreateArray();
    for (size_t i = 0; i < k && i < TOP_OPS; i++)
        cJSON_AddItemToArray(top, cJSON_Duplicate(rank[i].op, 1));
    free(rank);
    cJSON_AddItemToObject(t, "top_ops", top);
    cJSON_AddStringToObject(t, "top_by", op_rankings[r].label);
}

/*-*** advice ***/

/* One advice item for the templates: its place ("n"), the verdict on the
 * failed request as words ("fit_text", "fit_known") and the setting as a
 * fenced code block ("setting_block": Markdown leaves its text alone). */
static void describe_advice_item(cJSON *a, int n)
{
    const cJSON *fit = cJSON_GetObjectItemCaseSensitive(a, "would_fit");
    const cJSON *setting = cJSON_GetObjectItemCaseSensitive(a, "setting");
    const char *text = cJSON_IsString(setting) ? setting->valuestring : "";
    cJSON_AddNumberToObject(a, "n", n);
    cJSON_AddBoolToObject(a, "fit_known", cJSON_IsBool(fit));
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(a, "kind");
    cJSON_AddStringToObject(a, "fit_text",
                            !cJSON_IsBool(fit) && vr_view_kind_is_oom(cJSON_IsString(kind)
                                                                          ? kind->valuestring
                                                                          : NULL)
                                ? "its size not known"
                            : !cJSON_IsBool(fit) ? "no failed request"
                            : cJSON_IsTrue(fit) ? "the request would have fit"
                                                : "not enough alone to fit the request");
    size_t fence = vr_longest_backticks(text) + 1;
    vr_buf ticks = VR_BUF_INIT, b = VR_BUF_INIT;
    for (size_t i = 0; i < (fence < 3 ? 3 : fence); i++)
        vr_buf_putc(&ticks, '`');
    vr_buf_printf(&b, "%s\n%s\n%s", ticks.data, text, ticks.data);
    cJSON_AddStringToObject(a, "setting_block", b.data);
    /* A one-line setting as a code span ("setting_code"), to copy as is. */
    char *code = vr_code_span(text);
    cJSON_AddStringToObject(a, "setting_code", code);
    free(code);
    /* The same block inside a finding's list item: indented under it. */
    vr_buf in = VR_BUF_INIT;
    for (const char *p = b.data; *p; p++) {
        if (p == b.data || p[-1] == '\n')
            vr_buf_puts(&in, "    ");
        vr_buf_putc(&in, *p);
    }
    cJSON_AddStringToObject(a, "setting_block_indented", in.data);
    vr_buf_free(&in);
    vr_buf_free(&ticks);
    vr_buf_free(&b);
}

static void describe_advice(cJSON *list)
{
    int n = 0;
    cJSON *a;
    cJSON_ArrayForEach(a, list) describe_advice_item(a, ++n);
}

/*-*** the inputs' names ***/

/* A file's name as the inputs table shows it: its path when that is
 * short, else its last path component, or the fewest trailing components
 * that tell it from every other input (rank0/trace.json, rank1/trace.json;
 * run1/rank0/trace.json, run2/rank0/trace.json), cut in the middle past
 * NAME_MAX_CP characters, so the table's Notes stay on screen. The full
 * path stays in "path" (the HTML puts it in a title=, the Markdown in a
 * last column). */
#define NAME_MAX_CP 40
#define NAME_HEAD_CP 24

static const char *tail_components(const char *path, int n)
{
    const char *end = path + strlen(path);
    while (end > path && (end[-1] == '/' || end[-1] == '\\'))
        end--; /* "logs/" names the folder "logs" */
    for (const char *p = end; p > path; p--)
        if ((p[-1] == '/' || p[-1] == '\\') && --n == 0)
            return p < end ? p : path;
    return path;
}

static size_t cp_offset(const char *s, size_t len, size_t ncp)
{
    size_t at = 0;
    uint32_t c;
    for (size_t i = 0; i < ncp && at < len; i++) {
        size_t n = vr_utf8_decode(s + at, len - at, &c);
        at += n ? n : 1;
    }
    return at;
}

static size_t cp_count(const char *s, size_t len)
{
    size_t n = 0, at = 0;
    uint32_t c;
    for (; at < len; n++) {
        size_t k = vr_utf8_decode(s + at, len - at, &c);
        at += k ? k : 1;
    }
    return n;
}

static void add_short_name(cJSON *source, const char *path, int components, int *shortened)
{
    /* A path that fits is the clearest name. */
    const char *tail =
        cp_count(path, strlen(path)) <= NAME_MAX_CP ? path : tail_components(path, components);
    size_t len = strlen(tail), ncp = cp_count(tail, len);
    vr_buf name = VR_BUF_INIT;
    if (ncp <= NAME_MAX_CP)
        vr_buf_append(&name, tail, len);
    else { /* the head and the tail (the extension says the format) */
        size_t head = cp_offset(tail, len, NAME_HEAD_CP);
        size_t from = cp_offset(tail, len, ncp - (NAME_MAX_CP - NAME_HEAD_CP - 1));
        vr_buf_append(&name, tail, head);
        vr_buf_puts(&name, "\xe2\x80\xa6");
        vr_buf_append(&name, tail + from, len - from);
    }
    cJSON_AddStringToObject(source, "name", name.data ? name.data : "");
    int differs = strcmp(name.data ? name.data : "", path) != 0;
    cJSON_AddBoolToObject(source, "name_shortened", differs);
    *shortened |= differs;
    vr_buf_free(&name);
}

/* The fewest trailing path components that tell path apart from every
 * other input's path (1 when its last component is its own): run1/rank0/
 * trace.json and run2/rank0/trace.json are named by three, rank0/trace.json
 * and rank1/trace.json by two. */
static int distinguishing_components(const cJSON *sources, const cJSON *me, const char *path)
{
    int n = 1;
    for (; n < 64; n++) {
        const char *mine = tail_components(path, n);
        int clash = 0;
        const cJSON *other;
        cJSON_ArrayForEach(other, sources)
        {
            const cJSON *p = cJSON_GetObjectItemCaseSensitive(other, "path");
            if (other != me && cJSON_IsString(p) && strcmp(p->valuestring, path) != 0 &&
                strcmp(tail_components(p->valuestring, n), mine) == 0)
                clash = 1;
        }
        if (!clash || mine == path)
            break;
    }
    return n;
}

/* A log or nvidia-smi file whose stamps name no zone was placed by --tz
 * (import.sql: clock "wall clock (--tz ZONE)"): "zone_read", ZONE, for the
 * inputs table to say what its times were taken as. */
static void add_zone_read(cJSON *source)
{
    static const char head[] = "wall clock (--tz ";
    const cJSON *clock = cJSON_GetObjectItemCaseSensitive(source, "clock");
    if (!cJSON_IsString(clock) || strncmp(clock->valuestring, head, sizeof head - 1) != 0)
        return;
    const char *zone = clock->valuestring + sizeof head - 1;
    size_t n = strlen(zone);
    if (n < 2 || zone[n - 1] != ')')
        return;
    char text[64];
    snprintf(text, sizeof text, "%.*s", (int)(n - 1), zone);
    cJSON_AddStringToObject(source, "zone_read", text);
}

static void name_sources(cJSON *doc)
{
    cJSON *sources = cJSON_GetObjectItemCaseSensitive(doc, "sources"), *s;
    int shortened = 0;
    cJSON_ArrayForEach(s, sources)
    {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(s, "path");
        const char *path = cJSON_IsString(p) ? p->valuestring : "";
        add_short_name(s, path, distinguishing_components(sources, s, path), &shortened);
        add_zone_read(s);
    }
    cJSON_AddBoolToObject(doc, "source_names_shortened", shortened);
}

/* A row's source ("source_path") by its short name: "source_name", the
 * inputs table's. */
static void name_row(const cJSON *sources, cJSON *row)
{
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(row, "source_path");
    const cJSON *src;
    if (cJSON_IsString(sp))
        cJSON_ArrayForEach(src, sources)
        {
            const cJSON *p = cJSON_GetObjectItemCaseSensitive(src, "path");
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(src, "name");
            if (cJSON_IsString(p) && cJSON_IsString(n) &&
                strcmp(p->valuestring, sp->valuestring) == 0) {
                cJSON_AddStringToObject(row, "source_name", n->valuestring);
                return;
            }
        }
}

/* The GPUs' and the bandwidth table's rows by their source's short name
 * ("source_name", as name_devices), the full path left to the inputs
 * table. */
static void name_gpus(cJSON *doc)
{
    static const char *const tables[] = {"gpus", "bandwidth_or_capacity", "server_memory"};
    cJSON *sources = cJSON_GetObjectItemCaseSensitive(doc, "sources"), *row;
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(doc, tables[i]))
            name_row(sources, row);
}

/* Each device's source by its short name ("source_name", the inputs
 * table's), and "id_repeated" where another device has the same id (and
 * rank): two "cuda:0" headings are then told apart by that name, not by a
 * full path that would fill the line. */
static void name_devices(cJSON *doc)
{
    cJSON *sources = cJSON_GetObjectItemCaseSensitive(doc, "sources");
    cJSON *devices = cJSON_GetObjectItemCaseSensitive(doc, "devices"), *dev;
    cJSON_ArrayForEach(dev, devices)
    {
        name_row(sources, dev);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(dev, "id");
        const cJSON *rank = cJSON_GetObjectItemCaseSensitive(dev, "rank");
        int repeated = 0;
        const cJSON *other;
        cJSON_ArrayForEach(other, devices)
        {
            const cJSON *oid = cJSON_GetObjectItemCaseSensitive(other, "id");
            const cJSON *orank = cJSON_GetObjectItemCaseSensitive(other, "rank");
            if (other != dev && cJSON_IsString(id) && cJSON_IsString(oid) &&
                strcmp(id->valuestring, oid->valuestring) == 0 &&
                cJSON_Compare(rank, orank, 1) == (rank != NULL || orank != NULL ? 1 : 0))
                repeated = 1;
        }
        cJSON_AddBoolToObject(dev, "id_repeated", repeated);
    }
}

/* Whether an allocator snapshot was read, and whether one had malformed
 * records: with no device, the report says that, not a profiler flag. */
static void describe_snapshots(cJSON *doc)
{
    int read = 0, bad = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(doc, "sources"))
    {
        const cJSON *format = cJSON_GetObjectItemCaseSensitive(s, "format");
        if (!cJSON_IsString(format) || strncmp(format->valuestring, "snapshot", 8) != 0)
            continue;
        read = 1;
        long long n;
        const cJSON *tolerated = cJSON_GetObjectItemCaseSensitive(s, "tolerated");
        bad |=
            vr_results_int(cJSON_GetObjectItemCaseSensitive(tolerated, "malformed_event"), &n) &&
            n > 0;
    }
    cJSON_AddBoolToObject(doc, "snapshot_read", read);
    cJSON_AddBoolToObject(doc, "snapshot_malformed", bad);
}

/* The charts of one report's devices read time in one unit: each device
 * gets the longest span of any device with times (x_span_ns, the view's
 * only; html_charts.c hands it to the chart). */
static void same_x_unit(cJSON *doc)
{
    long long span = 0, lo, hi;
    cJSON *dev, *devices = cJSON_GetObjectItemCaseSensitive(doc, "devices");
    cJSON_ArrayForEach(dev, devices)
    {
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(dev, "history_entries")))
            continue;
        if (vr_results_int(cJSON_GetObjectItemCaseSensitive(dev, "start_ts_ns"), &lo) &&
            vr_results_int(cJSON_GetObjectItemCaseSensitive(dev, "end_ts_ns"), &hi) &&
            vr_sat_sub(hi, lo) > span)
            span = vr_sat_sub(hi, lo);
    }
    if (span > 0)
        cJSON_ArrayForEach(dev, devices) cJSON_AddNumberToObject(dev, "x_span_ns", (double)span);
}

/*-*** the kinds of input: which sentences are true of them ***/

/* The kinds a format is of: flags the templates condition their
 * sentences on, so that a sentence about a trace's operators is never
 * said of a snapshot, a log or monitoring readings. */
enum { K_TRACE = 1, K_SNAPSHOT = 2, K_GPUSTAT = 4, K_NVSMI = 8, K_LOG = 16, K_STATS = 32 };

static int kind_of(const char *format)
{
    if (!format)
        return 0;
    if (strcmp(format, "kineto") == 0 || strcmp(format, "memory_timeline") == 0)
        return K_TRACE;
    if (strncmp(format, "snapshot", 8) == 0)
        return K_SNAPSHOT;
    if (strcmp(format, "gpustat") == 0)
        return K_GPUSTAT;
    if (strncmp(format, "nvsmi", 5) == 0)
        return K_NVSMI;
    if (strcmp(format, "job_log") == 0)
        return K_LOG;
    if (strcmp(format, "memory_stats") == 0 || strcmp(format, "memory_summary") == 0)
        return K_STATS;
    return 0;
}

static void add_kinds(cJSON *obj, int kinds)
{
    cJSON_AddBoolToObject(obj, "has_trace", (kinds & K_TRACE) != 0);
    cJSON_AddBoolToObject(obj, "has_snapshot", (kinds & K_SNAPSHOT) != 0);
    cJSON_AddBoolToObject(obj, "snapshot_only", kinds == K_SNAPSHOT);
    cJSON_AddBoolToObject(obj, "from_gpustat", (kinds & K_GPUSTAT) != 0);
    cJSON_AddBoolToObject(obj, "from_nvsmi", (kinds & K_NVSMI) != 0);
    cJSON_AddBoolToObject(obj, "from_log", (kinds & K_LOG) != 0);
    cJSON_AddBoolToObject(obj, "from_stats", (kinds & K_STATS) != 0);
}

static const char *format_of_source(const cJSON *doc, long long id)
{
    const cJSON *s;
    long long v;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(doc, "sources"))
    {
        if (vr_results_int(cJSON_GetObjectItemCaseSensitive(s, "id"), &v) && v == id) {
            const cJSON *f = cJSON_GetObjectItemCaseSensitive(s, "format");
            return cJSON_IsString(f) ? f->valuestring : NULL;
        }
    }
    return NULL;
}

/* has_times: the report prints a time somewhere (a device with a clock,
 * an out-of-memory error with a stamp), so the page says where times
 * count from; a log without stamps or a snapshot without a clock has
 * none to explain. */
static void add_has_times(cJSON *doc)
{
    int times = 0;
    long long v;
    const cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(doc, "devices"))
    {
        if (!vr_results_int(cJSON_GetObjectItemCaseSensitive(item, "history_entries"), &v) &&
            vr_results_int(cJSON_GetObjectItemCaseSensitive(item, "start_ts_ns"), &v))
            times = 1;
    }
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(doc, "oom_events"))
    {
        if (vr_results_int(cJSON_GetObjectItemCaseSensitive(item, "ts_ns"), &v))
            times = 1;
    }
    cJSON_AddBoolToObject(doc, "has_times", times);
}

/* The list of what was live at the peak (live_at_peak_groups) holds the
 * allocations of the record live then (the "Live at the peak" row) and a
 * snapshot's blocks in use since before its history; what was live
 * before the record (unattributed_at_peak_bytes) but is in no such block
 * is in neither. live_at_peak_list_split: the list's total is not simply
 * the row's (blocks from before), or not the peak (a rest not listed,
 * live_at_peak_unlisted_h). */
static void add_list_parts(cJSON *dev)
{
    long long before = 0, unattributed = 0, live;
    if (!vr_results_int(cJSON_GetObjectItemCaseSensitive(dev, "live_at_peak_count"), &live))
        return; /* no address: nothing is listed as live */
    vr_results_int(cJSON_GetObjectItemCaseSensitive(dev, "live_at_peak_grouped_before_bytes"),
                   &before);
    vr_results_int(cJSON_GetObjectItemCaseSensitive(dev, "unattributed_at_peak_bytes"),
                   &unattributed);
    long long rest = unattributed > before ? vr_sat_sub(unattributed, before) : 0;
    if (rest > 0) {
        char text[32];
        vr_units_bytes(rest, text, sizeof text);
        cJSON_AddStringToObject(dev, "live_at_peak_unlisted_h", text);
    }
    cJSON_AddBoolToObject(dev, "live_at_peak_list_split", before > 0 || rest > 0);
}

/* has_trace, has_snapshot, from_gpustat, ... for the report (every input)
 * and for each device (the sources of its memory events). */
static void describe_kinds(cJSON *doc)
{
    int all = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(doc, "sources"))
    {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(s, "format");
        all |= kind_of(cJSON_IsString(f) ? f->valuestring : NULL);
    }
    add_kinds(doc, all);
    cJSON *dev;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(doc, "devices"))
    {
        int mine = 0;
        long long id;
        cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(dev, "sources"))
        {
            if (vr_results_int(cJSON_GetObjectItemCaseSensitive(s, "source_id"), &id))
                mine |= kind_of(format_of_source(doc, id));
        }
        add_kinds(dev, mine);
        /* A snapshot whose whole peak was live before its history counts
         * no allocation of the history live at the peak: "0 B" beside the
         * hundreds of MiB the list below gives would contradict it; the
         * paragraph on what was live before the history says it. */
        long long live;
        int none =
            mine == K_SNAPSHOT &&
            vr_results_int(cJSON_GetObjectItemCaseSensitive(dev, "live_at_peak_count"), &live) &&
            live == 0;
        cJSON_AddBoolToObject(dev, "live_at_peak_row", !none);
        add_list_parts(dev);
    }
    add_has_times(doc);
}

/* An integer of obj, else dflt. */

/* Less to read: a memory print's lines read "line 2" when it is one
 * line (lines_text). */
static void describe_print_lines(cJSON *view)
{
    cJSON *mp;
    cJSON_ArrayForEach(mp, cJSON_GetObjectItemCaseSensitive(view, "memory_prints"))
    {
        int64_t first = vr_results_int_or(mp, "first_line", -1),
                last = vr_results_int_or(mp, "last_line", -1);
        char text[64];
        if (first == last)
            snprintf(text, sizeof text, "line %lld", (long long)first);
        else
            snprintf(text, sizeof text, "lines %lld-%lld", (long long)first, (long long)last);
        cJSON_AddStringToObject(mp, "lines_text", text);
    }
}

/* nvidia-smi/gpustat: every GPU's processes in one table, shown when
 * some GPU lists one (has_gpu_processes). */
static void describe_gpu_processes(cJSON *view)
{
    int procs = 0;
    cJSON *gpu;
    cJSON_ArrayForEach(gpu, cJSON_GetObjectItemCaseSensitive(view, "gpus")) procs +=
        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(gpu, "smi_processes"));
    cJSON_AddBoolToObject(view, "has_gpu_processes", procs > 0);
}

/* "has_breakdown": a device has categories at its peak (the breakdown
 * section's condition); each device's estimate gains "params_n". */
static void describe_breakdowns(cJSON *view)
{
    int any = 0, explained[2] = {0, 0};
    cJSON *dev;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(view, "devices"))
    {
        int has =
            cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(dev, "peak_categories")) > 0;
        /* the categories' explanation: under the first table of its kind only */
        int stated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dev, "categories_stated"));
        cJSON_AddBoolToObject(dev, "explain_categories", has && !explained[stated]);
        explained[stated] |= has;
        any |= has;
        cJSON *est = cJSON_GetObjectItemCaseSensitive(dev, "estimate");
        if (cJSON_IsObject(est)) {
            char n[32];
            vr_units_count(vr_results_int_or(est, "params", 0), n, sizeof n);
            cJSON_AddStringToObject(est, "params_n", n);
        }
    }
    cJSON_AddBoolToObject(view, "has_breakdown", any);
}

/*-*** the passes ***/

/* Each pass dresses the whole view; a pass's comment says what it adds
 * when the function it runs is not enough of a name. */

static void pass_losses(cJSON *doc, const vr_view_opts *o)
{
    (void)o;
    cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(doc, "sources")) describe_losses(s);
}

static void pass_names(cJSON *doc, const vr_view_opts *o)
{
    (void)o;
    name_sources(doc);
    name_devices(doc);
    name_gpus(doc);
}

static void pass_kinds(cJSON *doc, const vr_view_opts *o)
{
    (void)o;
    describe_snapshots(doc);
    describe_kinds(doc);
}

static void pass_devices(cJSON *doc, const vr_view_opts *o)
{
    (void)o;
    cJSON *dev;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(doc, "devices"))
    {
        describe_breakdown(dev);
        vr_view_how_we_know(doc, dev);
        describe_peak_by_module(dev);
    }
}

/* The figures' texts (the suffix rules of view.h), times relative to the
 * earliest start ("t0_ns"), one x unit for the report's charts. */
static void pass_figures(cJSON *doc, const vr_view_opts *o)
{
    (void)o;
    long long t0 = earliest_start(doc);
    decorate(doc, t0, 0);
    same_x_unit(doc);
    char num[32];
    snprintf(num, sizeof num, "%lld", t0);
    cJSON_AddItemToObject(doc, "t0_ns", cJSON_CreateRaw(num));
    cJSON_AddBoolToObject(doc, "multiple_sources",
                          cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "sources")) >
                              1);
}

static void pass_tables(cJSON *doc, const vr_view_opts *o)
{
    (void)o;
    describe_ranks(cJSON_GetObjectItemCaseSensitive(doc, "ranks_summary"));
    cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(doc, "allocator_stats"))
        describe_allocator_row(row);
    describe_oom_events(doc);
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(doc, "profiler_tables"))
        describe_profiler_table(row);
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(doc, "devices"))
        pivot_phase_peaks(row);
    describe_print_lines(doc);
    describe_gpu_processes(doc);
}

static void pass_advice(cJSON *doc, const vr_view_opts *o)
{
    (void)o;
    describe_advice(cJSON_GetObjectItemCaseSensitive(doc, "advice"));
    cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(doc, "findings"))
        describe_advice(cJSON_GetObjectItemCaseSensitive(row, "advice"));
    vr_view_kinds(doc);
}

static void pass_once(cJSON *doc, const vr_view_opts *o)
{
    (void)o;
    vr_view_explain_once(doc);
    describe_breakdowns(doc);
}

static void pass_paths(cJSON *doc, const vr_view_opts *o)
{
    (void)o;
    vr_view_paths(doc);
}

static void pass_stacks(cJSON *doc, const vr_view_opts *o)
{
    (void)o;
    vr_view_stacks(doc);
}

static void pass_verdict(cJSON *doc, const vr_view_opts *o)
{
    vr_verdict_view(doc, o->paragraphs, o->advice);
    if (o->summary_devices > 0)
        vr_verdict_summary_view(doc, o->summary_devices);
}

/* The view's passes, in order: names before anything says them, the
 * figures' texts before the passes that read them, the paths stripped
 * before the stacks are shortened (paths.h), the verdict last (it reads
 * the dressed devices). */
static const struct {
    const char *name;
    void (*run)(cJSON *doc, const vr_view_opts *o);
} passes[] = {
    {"losses", pass_losses}, {"names", pass_names},   {"kinds", pass_kinds},
    {"devices", pass_devices}, {"figures", pass_figures}, {"tables", pass_tables},
    {"advice", pass_advice}, {"once", pass_once},     {"paths", pass_paths},
    {"stacks", pass_stacks}, {"verdict", pass_verdict},
};

void vr_view_make(cJSON *doc, const vr_view_opts *o)
{
    for (size_t i = 0; i < sizeof passes / sizeof *passes; i++)
        passes[i].run(doc, o);
}

/*-*** the verdict's HTML banner ***/

/* Escaped, with the commands it names (commands.h) as <code>. */
static void put_html(vr_buf *b, const char *s)
{
    if (!s)
        return;
    size_t len = strlen(s), run = 0;
    for (size_t i = 0; i < len; i++) {
        size_t code = vr_command_at(s, len, i);
        if (!code)
            continue;
        vr_mustache_escape_html(b, vr_buf_append_cb, s + run, i - run);
        vr_buf_puts(b, "<code>");
        vr_mustache_escape_html(b, vr_buf_append_cb, s + i, code);
        vr_buf_puts(b, "</code>");
        i += code - 1;
        run = i + 1;
    }
    vr_mustache_escape_html(b, vr_buf_append_cb, s + run, len - run);
}

char *vr_verdict_banner_html(const cJSON *doc)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "verdict");
    vr_buf b = VR_BUF_INIT;
    vr_buf_printf(&b,
                  "<div id=\"verdict\" class=\"vr-verdict %s\" role=\"status\">\n"
                  "<p class=\"vr-verdict-head\"><strong class=\"vr-verdict-state\">%s</strong> ",
                  vr_verdict_css(v), vr_verdict_label(v));
    put_html(&b, vr_results_string(v, "cause"));
    vr_buf_puts(&b, ".</p>\n");
    const cJSON *row;
    int any = 0;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(v, "numbers"))
    {
        vr_buf_puts(&b, any++ ? "\n<li>" : "<ul class=\"vr-verdict-numbers\">\n<li>");
        put_html(&b, vr_results_string(row, "label"));
        vr_buf_puts(&b, ": <strong>");
        put_html(&b, vr_results_string(row, "text"));
        vr_buf_puts(&b, "</strong></li>");
    }
    if (any)
        vr_buf_puts(&b, "\n</ul>\n");
    vr_buf_puts(&b, "</div>");
    return vr_buf_detach(&b);
}
