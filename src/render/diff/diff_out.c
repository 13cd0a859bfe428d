/* The diff's outputs (diff.h): the document as JSON; for Markdown and
 * HTML a view of it, each figure as text ("1.50 GiB", "+512 MiB"), through
 * the templates diff.md (or diff_summary.md); the page diff.html around
 * cmark-gfm's HTML of that Markdown, with each pair's figures (both
 * timelines on one chart, a bar per side of the breakdown) put in where
 * their placeholder paragraphs are (cmark's safe mode drops raw SVG; the
 * nonce keeps input text from matching one). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/category.h"
#include "render/diff/diff.h"
#include "render/view/commands.h"
#include "render/out/md_html.h"
#include "render/results/doc.h"
#include "render/svg/category_svg.h"
#include "render/svg/chart_svg.h"
#include "render/view/templates.h"
#include "util/alloc.h"
#include "util/sat.h"
#include "util/units.h"

/*-*** the view's texts ***/

/* "1.50 GiB" ("+1.50 GiB" signed), "unknown" for null. */
static void size_text(const cJSON *item, int sign, char *out, size_t n)
{
    long long v;
    if (!vr_results_int(item, &v)) {
        snprintf(out, n, "%s", "unknown");
        return;
    }
    char size[48];
    long long mag = v == LLONG_MIN ? LLONG_MAX : v < 0 ? -v : v;
    vr_units_bytes((int64_t)mag, size, sizeof size);
    snprintf(out, n, "%s%s", v < 0 ? "-" : v > 0 && sign ? "+" : "", size);
}

static void add_size(cJSON *obj, const char *key, const cJSON *item, int sign)
{
    char text[64];
    size_text(item, sign, text, sizeof text);
    cJSON_AddStringToObject(obj, key, text);
}

static const cJSON *member(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* {before, after, delta} as texts, and the change in percent. */
static cJSON *triple_view(const char *label, const cJSON *t)
{
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "label", label);
    add_size(row, "before", member(t, "before"), 0);
    add_size(row, "after", member(t, "after"), 0);
    add_size(row, "delta", member(t, "delta"), 1);
    long long b, a;
    char pct[32] = "";
    /* "new" only for what was nothing before; a negative before (a
     * headroom the run overran) has no percentage */
    if (vr_results_member_int(t, "before", &b) && vr_results_member_int(t, "after", &a) &&
        b > 0 && a != b)
        snprintf(pct, sizeof pct, "%+.1f %%", ((double)a - (double)b) * 100.0 / (double)b);
    else if (vr_results_member_int(t, "before", &b) && vr_results_member_int(t, "after", &a) &&
             b == 0 && a > 0)
        snprintf(pct, sizeof pct, "%s", "new");
    cJSON_AddItemToObject(row, "pct", pct[0] ? cJSON_CreateString(pct) : cJSON_CreateNull());
    return row;
}

static const char *str(const cJSON *obj, const char *key, const char *none)
{
    const cJSON *s = member(obj, key);
    return cJSON_IsString(s) ? s->valuestring : none;
}

static void add_rank_text(cJSON *out, const cJSON *obj)
{
    long long r;
    char text[32] = "";
    if (vr_results_member_int(obj, "rank", &r))
        snprintf(text, sizeof text, "rank %lld", r);
    cJSON_AddItemToObject(out, "rank_text",
                          text[0] ? cJSON_CreateString(text) : cJSON_CreateNull());
}

static cJSON *side_view(const cJSON *side)
{
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "given", str(side, "given", ""));
    cJSON *list = cJSON_AddArrayToObject(v, "sources");
    const cJSON *s;
    cJSON_ArrayForEach(s, member(side, "sources"))
        cJSON_AddItemToArray(list, cJSON_CreateString(s->valuestring));
    cJSON_AddBoolToObject(v, "partial", cJSON_IsTrue(member(side, "partial")));
    /* A side given as its one file is named by the heading already: its
     * list of files would say it again. */
    const cJSON *first = cJSON_GetArrayItem(member(side, "sources"), 0);
    int just_given = cJSON_GetArraySize(member(side, "sources")) == 1 && cJSON_IsString(first) &&
                     strcmp(first->valuestring, str(side, "given", "")) == 0;
    cJSON_AddBoolToObject(v, "list_files", !just_given);
    /* the report's banner says the state in capitals: "OK", "UNKNOWN" */
    char state[32];
    snprintf(state, sizeof state, "%s", str(side, "verdict", "unknown"));
    for (char *c = state; *c; c++)
        *c = (char)toupper((unsigned char)*c);
    cJSON_AddStringToObject(v, "verdict", state);
    return v;
}

/* The GPUs' names for the pair's heading: "name_before" (and
 * "name_after" when the other side's GPU is another model). */
static void names_view(cJSON *v, const cJSON *pair)
{
    const char *b = str(member(pair, "before_device"), "name", NULL);
    const char *a = str(member(pair, "after_device"), "name", NULL);
    if (!b && !a)
        return;
    cJSON_AddStringToObject(v, "name_before", b ? b : "unknown GPU");
    if (!b || !a || strcmp(a, b) != 0)
        cJSON_AddStringToObject(v, "name_after", a ? a : "unknown GPU");
}

static cJSON *refs_view(const cJSON *refs)
{
    cJSON *out = cJSON_CreateArray();
    const cJSON *r;
    cJSON_ArrayForEach(r, refs)
    {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "id", str(r, "id", "?"));
        add_rank_text(x, r);
        cJSON_AddItemToArray(out, x);
    }
    return out;
}

static void add_list(cJSON *v, const char *has, const char *key, cJSON *list)
{
    cJSON_AddBoolToObject(v, has, cJSON_GetArraySize(list) > 0);
    cJSON_AddItemToObject(v, key, list);
}

static cJSON *breakdown_view(const cJSON *bd)
{
    cJSON *out = cJSON_CreateArray();
    const cJSON *c;
    cJSON_ArrayForEach(c, bd) cJSON_AddItemToArray(out, triple_view(c->string, c));
    return out;
}

/* A site's (or the rest's) bytes before and after, and the change. */
static void add_site_sizes(cJSON *row, const cJSON *s)
{
    add_size(row, "before", member(s, "before_bytes"), 0);
    add_size(row, "after", member(s, "after_bytes"), 0);
    add_size(row, "delta", member(s, "delta_bytes"), 1);
}

static cJSON *sites_view(const cJSON *sites)
{
    cJSON *out = cJSON_CreateArray();
    const cJSON *s;
    cJSON_ArrayForEach(s, sites)
    {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "site", str(s, "site", ""));
        add_site_sizes(row, s);
        cJSON_AddStringToObject(row, "change", str(s, "change", ""));
        cJSON_AddItemToArray(out, row);
    }
    return out;
}

/* The sites past the listed ones, summed: null when none. */
static cJSON *sites_more_view(const cJSON *more)
{
    long long n;
    if (!vr_results_member_int(more, "count", &n) || n <= 0)
        return cJSON_CreateNull();
    cJSON *row = cJSON_CreateObject();
    char label[64];
    snprintf(label, sizeof label, "%lld other site%s", n, n == 1 ? "" : "s");
    cJSON_AddStringToObject(row, "label", label);
    add_site_sizes(row, more);
    return row;
}

/* How much of a side's peak its sites hold. */
static long long sites_total(const cJSON *p, const char *side)
{
    long long total = 0, v;
    char key[32];
    snprintf(key, sizeof key, "%s_bytes", side);
    const cJSON *s;
    cJSON_ArrayForEach(s, member(p, "sites")) if (vr_results_member_int(s, key, &v)) total += v;
    return vr_results_member_int(member(p, "sites_more"), key, &v) ? total + v : total;
}

/* What the sites cover of each peak, said under their table. */
static cJSON *sites_note(const cJSON *p)
{
    char sb[48], sa[48], pb[48], pa[48], text[400];
    long long tb = sites_total(p, "before"), ta = sites_total(p, "after"), vb, va;
    cJSON *b = vr_diff_int(tb), *a = vr_diff_int(ta);
    size_text(b, 0, sb, sizeof sb);
    size_text(a, 0, sa, sizeof sa);
    cJSON_Delete(b);
    cJSON_Delete(a);
    const cJSON *peak = member(p, "peak_allocated_bytes");
    size_text(member(peak, "before"), 0, pb, sizeof pb);
    size_text(member(peak, "after"), 0, pa, sizeof pa);
    int all = vr_results_member_int(peak, "before", &vb) &&
              vr_results_member_int(peak, "after", &va) && tb >= vb && ta >= va;
    const char *by = str(p, "sites_by", "");
    const char *rest = all                        ? ""
                       : strcmp(by, "frame") == 0 ? "; the rest was allocated before the "
                                                    "snapshot's history began, or has no "
                                                    "recorded stack"
                                                  : "; the rest was allocated before the trace "
                                                    "began, or by events without an address";
    snprintf(
        text, sizeof text, "The sites hold %s of the %s peak before and %s of the %s after%s%s.",
        sb, pb, sa, pa,
        strcmp(by, "module") == 0 ? " (each allocation in its innermost module only)" : "", rest);
    return cJSON_CreateString(text);
}

/* Steps and phases: "step 6", "step 6 forward". */
static cJSON *rows_view(const cJSON *rows)
{
    cJSON *out = cJSON_CreateArray();
    const cJSON *r;
    cJSON_ArrayForEach(r, rows)
    {
        long long step;
        char label[96];
        const char *phase = str(r, "phase", NULL);
        if (vr_results_member_int(r, "step", &step))
            snprintf(label, sizeof label, "step %lld%s%s", step, phase ? " " : "",
                     phase ? phase : "");
        else
            snprintf(label, sizeof label, "%s", phase ? phase : "(no step)");
        cJSON *row = triple_view(label, r);
        for (int i = 0; i < 2; i++) /* a side without that step or phase */
            if (!vr_results_int(member(r, i ? "after" : "before"), &step)) {
                cJSON_ReplaceItemInObject(row, i ? "after" : "before",
                                          cJSON_CreateString("none"));
                cJSON_ReplaceItemInObject(row, "delta", cJSON_CreateString(""));
            }
        cJSON_AddItemToArray(out, row);
    }
    return out;
}

static cJSON *advice_view(const cJSON *list)
{
    cJSON *out = cJSON_CreateArray();
    const cJSON *a;
    cJSON_ArrayForEach(a, list)
    {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "id", str(a, "id", ""));
        cJSON_AddStringToObject(row, "title", str(a, "title", ""));
        add_size(row, "estimated", member(a, "estimated_saving_bytes"), 0);
        add_size(row, "measured", member(a, "measured_saving_bytes"), 0);
        const cJSON *ap = member(a, "applied");
        cJSON_AddStringToObject(row, "applied",
                                cJSON_IsTrue(ap)    ? "its figures dropped"
                                : cJSON_IsFalse(ap) ? "not seen"
                                                    : "not measured");
        cJSON_AddItemToArray(out, row);
    }
    return out;
}

/* "a, b" of a list of strings; null when empty. */
static cJSON *joined_text(const cJSON *list)
{
    vr_buf b = VR_BUF_INIT;
    const cJSON *x;
    cJSON_ArrayForEach(x, list) if (cJSON_IsString(x))
    {
        if (b.len)
            vr_buf_puts(&b, ", ");
        vr_buf_puts(&b, x->valuestring);
    }
    cJSON *out = b.len ? cJSON_CreateString(b.data) : cJSON_CreateNull();
    vr_buf_free(&b);
    return out;
}

static void findings_view(cJSON *v, const cJSON *f)
{
    int any = cJSON_GetArraySize(member(f, "before")) + cJSON_GetArraySize(member(f, "after"));
    cJSON_AddBoolToObject(v, "has_findings", any > 0);
    cJSON_AddItemToObject(v, "gone_text", joined_text(member(f, "gone")));
    cJSON_AddItemToObject(v, "new_text", joined_text(member(f, "new")));
    add_list(v, "has_findings_before", "findings_before",
             cJSON_Duplicate(member(f, "before"), 1));
    add_list(v, "has_findings_after", "findings_after", cJSON_Duplicate(member(f, "after"), 1));
    add_list(v, "has_gone", "gone", cJSON_Duplicate(member(f, "gone"), 1));
    add_list(v, "has_new", "new", cJSON_Duplicate(member(f, "new"), 1));
}

/* "folder_before_code" / "folder_after_code": each side's folder as a
 * code span, "same_folder" when both are one. */
static void folders_view(cJSON *v, const cJSON *folders)
{
    const char *b = str(folders, "before", NULL), *a = str(folders, "after", NULL);
    cJSON_AddBoolToObject(v, "same_folder", b && a && strcmp(b, a) == 0);
    const char *const sides[][2] = {{"folder_before_code", b}, {"folder_after_code", a}};
    for (size_t i = 0; i < 2; i++) {
        if (!sides[i][1])
            continue;
        char *code = vr_code_span(sides[i][1]);
        cJSON_AddStringToObject(v, sides[i][0], code);
        free(code);
    }
}

static const char *sites_by_text(const char *by)
{
    if (strcmp(by, "frame") == 0)
        return "the first frame of the user's code";
    return strcmp(by, "operator") == 0 ? "operator" : "module";
}

/* The time of a timeline's last point. */
static int64_t last_time(const cJSON *points)
{
    long long t = 0;
    const cJSON *last = cJSON_GetArrayItem(points, cJSON_GetArraySize(points) - 1);
    return last && vr_results_int(cJSON_GetArrayItem(last, 0), &t) ? (int64_t)t : 0;
}

/* Where each side's time 0 goes on the chart: *origin the aligned step's
 * start (0 without one), each side shifted by the rest. Returns the
 * aligned step's number, -1 for none. */
static long long alignment(const cJSON *tl, int64_t *origin, int64_t *sb, int64_t *sa)
{
    const cJSON *on = member(tl, "aligned_on");
    long long step, b, a;
    *origin = *sb = *sa = 0;
    if (!vr_results_member_int(on, "step", &step) ||
        !vr_results_member_int(on, "before_ns", &b) || !vr_results_member_int(on, "after_ns", &a))
        return -1;
    *origin = b > a ? b : a;
    *sb = vr_sat_sub(*origin, b);
    *sa = vr_sat_sub(*origin, a);
    return step;
}

/* Where each side's record ends on the chart, when they differ: a line
 * holds its last value to the chart's end. */
static void add_ends(vr_buf *out, const cJSON *tl)
{
    long long nb, na;
    if (vr_results_member_int(member(tl, "before"), "history_entries", &nb) ||
        vr_results_member_int(member(tl, "after"), "history_entries", &na))
        return;
    int64_t origin, sb, sa;
    if (alignment(tl, &origin, &sb, &sa) < 0)
        origin = sb = sa = 0;
    int64_t eb =
        vr_sat_sub(vr_sat_add(last_time(member(member(tl, "before"), "points")), sb), origin);
    int64_t ea =
        vr_sat_sub(vr_sat_add(last_time(member(member(tl, "after"), "points")), sa), origin);
    if (eb == ea)
        return;
    char tb[48], ta[48], line[200];
    vr_units_duration(eb < 0 ? -eb : eb, tb, sizeof tb);
    vr_units_duration(ea < 0 ? -ea : ea, ta, sizeof ta);
    snprintf(line, sizeof line,
             " Before's record ends at about %s%s, after's at about %s%s; a line holds its "
             "last value past its record's end.",
             eb < 0 ? "-" : "", tb, ea < 0 ? "-" : "", ta);
    vr_buf_puts(out, line);
}

/* What the chart's time 0 is, said under it. */
static cJSON *chart_note(const cJSON *p)
{
    const cJSON *tl = member(p, "timeline");
    long long step, n;
    char text[200];
    if (vr_results_member_int(member(tl, "before"), "history_entries", &n) ||
        vr_results_member_int(member(tl, "after"), "history_entries", &n))
        snprintf(text, sizeof text, "%s",
                 "Each side from its first memory event: a snapshot without times counts its "
                 "history's entries.");
    else if (vr_results_member_int(member(tl, "aligned_on"), "step", &step))
        snprintf(text, sizeof text,
                 "Time 0 is the start of profiler step %lld on both sides: the runs are aligned "
                 "on the first step they both mark.",
                 step);
    else
        snprintf(text, sizeof text, "%s",
                 "Each side from its first memory event: no profiler step is marked on both "
                 "sides to align them on.");
    vr_buf b = VR_BUF_INIT;
    vr_buf_puts(&b, text);
    add_ends(&b, tl);
    cJSON *out = cJSON_CreateString(b.data);
    vr_buf_free(&b);
    return out;
}

static cJSON *pair_view(const cJSON *p)
{
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "before_id", str(p, "before_id", ""));
    cJSON_AddStringToObject(v, "after_id", str(p, "after_id", ""));
    cJSON_AddBoolToObject(v, "ids_differ",
                          strcmp(str(p, "before_id", ""), str(p, "after_id", "")) != 0);
    names_view(v, p);
    add_rank_text(v, p);
    cJSON *fig = cJSON_AddArrayToObject(v, "figures");
    cJSON_AddItemToArray(fig, triple_view("peak allocated", member(p, "peak_allocated_bytes")));
    cJSON_AddItemToArray(fig, triple_view("peak reserved", member(p, "peak_reserved_bytes")));
    cJSON_AddItemToArray(fig, triple_view("headroom", member(p, "headroom_bytes")));
    const cJSON *oom = member(p, "out_of_memory_count");
    cJSON_AddItemToObject(v, "oom_before", cJSON_Duplicate(member(oom, "before"), 1));
    cJSON_AddItemToObject(v, "oom_after", cJSON_Duplicate(member(oom, "after"), 1));
    cJSON_AddItemToObject(v, "alloc", triple_view("", member(p, "peak_allocated_bytes")));
    cJSON_AddItemToObject(v, "reserved", triple_view("", member(p, "peak_reserved_bytes")));
    add_list(v, "has_breakdown", "breakdown", breakdown_view(member(p, "peak_breakdown")));
    add_list(v, "has_sites", "sites", sites_view(member(p, "sites")));
    cJSON_AddItemToObject(v, "sites_more", sites_more_view(member(p, "sites_more")));
    cJSON_AddItemToObject(v, "chart_note", chart_note(p));
    cJSON_AddItemToObject(v, "sites_note", sites_note(p));
    cJSON_AddStringToObject(v, "sites_by", sites_by_text(str(p, "sites_by", "")));
    folders_view(v, member(p, "site_folders"));
    add_list(v, "has_steps", "steps", rows_view(member(p, "steps")));
    add_list(v, "has_phases", "phases", rows_view(member(p, "phases")));
    findings_view(v, member(p, "findings"));
    add_list(v, "has_advice", "advice", advice_view(member(p, "advice_checked")));
    return v;
}

/* Whether a pair has both devices in full (not "in_full": false). */
static int in_full(const cJSON *pair)
{
    return !cJSON_IsFalse(member(pair, "in_full"));
}

static cJSON *make_view(const cJSON *diff, int html)
{
    const cJSON *d = member(diff, "diff");
    cJSON *v = cJSON_CreateObject();
    cJSON_AddBoolToObject(v, "html", html);
    cJSON_AddItemToObject(v, "tool", cJSON_Duplicate(member(diff, "tool"), 1));
    cJSON_AddItemToObject(v, "before", side_view(member(d, "before")));
    cJSON_AddItemToObject(v, "after", side_view(member(d, "after")));
    cJSON_AddBoolToObject(v, "pairs_differ", cJSON_IsTrue(member(d, "pairs_differ")));
    cJSON *pairs = cJSON_AddArrayToObject(v, "devices");
    cJSON *peaks = cJSON_CreateArray();
    const cJSON *p;
    cJSON *rows = cJSON_AddArrayToObject(v, "pair_rows");
    cJSON_ArrayForEach(p, member(d, "devices"))
    {
        cJSON_AddItemToArray(in_full(p) ? pairs : peaks, pair_view(p));
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "before_id", str(p, "before_id", ""));
        cJSON_AddStringToObject(row, "after_id", str(p, "after_id", ""));
        add_rank_text(row, p);
        cJSON_AddItemToArray(rows, row);
    }
    add_list(v, "has_peaks_only", "peaks_only", peaks);
    cJSON_AddBoolToObject(v, "no_pairs", cJSON_GetArraySize(member(d, "devices")) == 0);
    add_list(v, "has_unpaired_before", "unpaired_before",
             refs_view(member(member(d, "unpaired"), "before")));
    add_list(v, "has_unpaired_after", "unpaired_after",
             refs_view(member(member(d, "unpaired"), "after")));
    const cJSON *oom = member(d, "oom_event_count");
    cJSON_AddItemToObject(v, "oom_before", cJSON_Duplicate(member(oom, "before"), 1));
    cJSON_AddItemToObject(v, "oom_after", cJSON_Duplicate(member(oom, "after"), 1));
    findings_view(v, member(d, "findings"));
    return v;
}

/*-*** HTML ***/

/* The bars of each pair (before, after), by placeholder. */
typedef struct {
    char **html;
    int n;
    unsigned nonce;
} bars;

static void token_of(char *out, size_t n, unsigned nonce, int i)
{
    snprintf(out, n, "vrdiffbar%08x%d", nonce, i);
}

static void breakdown_bytes(const cJSON *bd, const char *side, int64_t out[VR_CATEGORY_COUNT])
{
    memset(out, 0, VR_CATEGORY_COUNT * sizeof *out);
    const cJSON *c;
    cJSON_ArrayForEach(c, bd)
    {
        long long v;
        if (vr_results_member_int(c, side, &v))
            out[vr_category_index(c->string)] += v;
    }
}

static char *pair_bars(const cJSON *pair)
{
    const cJSON *bd = member(pair, "peak_breakdown");
    int64_t b[VR_CATEGORY_COUNT], a[VR_CATEGORY_COUNT];
    breakdown_bytes(bd, "before", b);
    breakdown_bytes(bd, "after", a);
    vr_devbar db = {{0}, -1, -1, 0}, da = {{0}, -1, -1, 0};
    memcpy(db.categories, b, sizeof db.categories);
    memcpy(da.categories, a, sizeof da.categories);
    char *lb = NULL, *la = NULL;
    char *sb = vr_devbar_svg_html("Before: the peak by category", &db, &lb);
    char *sa = vr_devbar_svg_html("After: the peak by category", &da, &la);
    /* each bar a figure, its legend the list under it, as the report's */
    vr_buf out = VR_BUF_INIT;
    const char *const parts[][2] = {{sb, lb}, {sa, la}};
    for (size_t i = 0; i < 2; i++) {
        vr_buf_puts(&out, "<figure class=\"chart\">");
        vr_buf_puts(&out, parts[i][0] ? parts[i][0] : "");
        vr_buf_puts(&out, parts[i][1] ? parts[i][1] : "");
        vr_buf_puts(&out, "</figure>");
    }
    free(sb);
    free(sa);
    free(lb);
    free(la);
    return vr_buf_detach(&out);
}

/* Both sides' allocated memory on one axis: aligned on the start of the
 * first step both mark (the timeline's "aligned_on": time 0 there), else
 * each from its first memory event; NULL when neither has a timeline, or
 * when one counts a snapshot's entries and the other time (no common
 * axis). */
static void add_points(vr_chart *c, int series, const cJSON *points, int64_t shift)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, points)
    {
        long long t, bytes;
        if (vr_results_int(cJSON_GetArrayItem(p, 0), &t) &&
            vr_results_int(cJSON_GetArrayItem(p, 1), &bytes))
            vr_chart_add_point(c, series, vr_sat_add((int64_t)t, shift), (int64_t)bytes);
    }
}

static char *pair_chart(const cJSON *pair)
{
    const cJSON *tl = member(pair, "timeline");
    const cJSON *b = member(tl, "before"), *a = member(tl, "after");
    const cJSON *bp = member(b, "points"), *ap = member(a, "points");
    long long nb = 0, na = 0, cb, ca;
    int eb = vr_results_member_int(b, "history_entries", &nb);
    int ea = vr_results_member_int(a, "history_entries", &na);
    if (eb != ea || cJSON_GetArraySize(bp) + cJSON_GetArraySize(ap) == 0)
        return NULL;
    int64_t origin, sb, sa;
    long long step = eb ? -1 : alignment(tl, &origin, &sb, &sa);
    if (step < 0)
        origin = sb = sa = 0;
    int64_t hb = vr_sat_add(last_time(bp), sb), ha = vr_sat_add(last_time(ap), sa);
    vr_chart *c = vr_chart_new("Allocated memory, before and after", 0, hb > ha ? hb : ha);
    add_points(c, vr_chart_add_series(c, "before", "before"), bp, sb);
    add_points(c, vr_chart_add_series(c, "after", "after"), ap, sa);
    if (step >= 0) {
        char label[48];
        snprintf(label, sizeof label, "step %lld", step);
        vr_chart_set_origin(c, origin);
        vr_chart_add_step(c, origin, label);
    }
    if (eb)
        vr_chart_set_entries(c, nb > na ? nb : na);
    const cJSON *cap = member(pair, "capacity_bytes");
    if (vr_results_member_int(cap, "before", &cb) && vr_results_member_int(cap, "after", &ca) &&
        cb == ca)
        vr_chart_set_capacity(c, (int64_t)cb, "capacity");
    vr_chart_set_html_legend(c, 1);
    char *svg = vr_chart_svg(c), *legend = vr_chart_legend_html(c);
    vr_chart_free(c);
    vr_buf out = VR_BUF_INIT;
    vr_buf_puts(&out, "<figure class=\"chart\">");
    vr_buf_puts(&out, svg);
    vr_buf_puts(&out, legend ? legend : "");
    vr_buf_puts(&out, "</figure>");
    free(svg);
    free(legend);
    return vr_buf_detach(&out);
}

/* Takes `html` (NULL: none) as the next figure; v[key] its placeholder. */
static void add_figure(bars *f, char *html, cJSON *v, const char *key)
{
    if (!html)
        return;
    char token[48];
    token_of(token, sizeof token, f->nonce, f->n);
    f->html[f->n++] = html;
    cJSON_AddStringToObject(v, key, token);
}

static void make_bars(const cJSON *d, cJSON *view, bars *f)
{
    const cJSON *p;
    cJSON *v = member(view, "devices")->child;
    int n = cJSON_GetArraySize(member(d, "devices"));
    f->html = vr_xcalloc(2 * (size_t)n + 1, sizeof *f->html);
    cJSON_ArrayForEach(p, member(d, "devices")) if (in_full(p))
    {
        add_figure(f, pair_chart(p), v, "chart");
        add_figure(f, pair_bars(p), v, "bars");
        v = v->next;
    }
}

static void bars_free(bars *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->html[i]);
    free(f->html);
}

/* The length of the placeholder paragraph of bar i at `hit`, or 0. */
static size_t placeholder_at(const char *hit, const bars *f, int i)
{
    char token[48], para[64];
    token_of(token, sizeof token, f->nonce, i);
    snprintf(para, sizeof para, "<p>%s</p>", token);
    size_t n = strlen(para);
    return strncmp(hit, para, n) == 0 ? n : 0;
}

static void put_bars(vr_buf *out, const char *html, const bars *f)
{
    const char *p = html;
    for (const char *hit; (hit = strstr(p, "<p>vrdiffbar")) != NULL;) {
        vr_buf_append(out, p, (size_t)(hit - p));
        p = hit + 3;
        for (int i = 0; i < f->n; i++) {
            size_t n = placeholder_at(hit, f, i);
            if (n) {
                vr_buf_puts(out, f->html[i]);
                p = hit + n;
                break;
            }
        }
        if (p == hit + 3)
            vr_buf_append(out, hit, 3);
    }
    vr_buf_puts(out, p);
}

static int render_html(vr_templates *t, const cJSON *d, cJSON *view, vr_buf *out, vr_error *err)
{
    bars f = {NULL, 0, (unsigned)time(NULL) ^ ((unsigned)getpid() << 16)};
    make_bars(d, view, &f);
    size_t len;
    char *md = vr_templates_render(t, "diff.md", view, vr_report_escape_markdown, &len, err);
    int rc = -1;
    if (md) {
        char *html = vr_md_html(md, len);
        free(md);
        vr_buf body = VR_BUF_INIT;
        put_bars(&body, html, &f);
        free(html);
        cJSON_AddStringToObject(view, "body", body.data ? body.data : "");
        vr_buf_free(&body);
        char *page =
            vr_templates_render(t, "diff.html", view, vr_mustache_escape_html, &len, err);
        if (page) {
            vr_buf_append(out, page, len);
            free(page);
            rc = 0;
        }
    }
    bars_free(&f);
    return rc;
}

int vr_diff_render(const cJSON *diff, vr_format format, int summary, const char *template_dir,
                   vr_buf *out, vr_error *err)
{
    if (format == VR_FORMAT_JSON && !summary) {
        char *s = cJSON_Print(diff);
        vr_buf_puts(out, s);
        vr_buf_puts(out, "\n");
        free(s);
        return 0;
    }
    const cJSON *d = member(diff, "diff");
    int html = format == VR_FORMAT_HTML && !summary;
    cJSON *view = make_view(diff, html);
    vr_templates t;
    vr_templates_init(&t, template_dir);
    int rc = -1;
    if (html) {
        rc = render_html(&t, d, view, out, err);
    } else {
        size_t len;
        char *md = vr_templates_render(&t, summary ? "diff_summary.md" : "diff.md", view,
                                       vr_report_escape_markdown, &len, err);
        if (md) {
            vr_buf_append(out, md, len);
            free(md);
            rc = 0;
        }
    }
    vr_templates_free(&t);
    cJSON_Delete(view);
    return rc;
}
