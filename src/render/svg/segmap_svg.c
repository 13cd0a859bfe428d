/*-*** segmap_svg.c: an allocator snapshot's segments as inline SVG ***/
/*
 * Two halves, as in chart_svg.c:
 *
 *  - Aggregation, as segments and blocks stream in. A kept row turns its
 *    blocks into pieces: a block at least a minimum width wide is a piece of
 *    its own; narrower ones are summed, per state, into an open bin that
 *    becomes a piece once it is that wide (or when a wide block follows).
 *    Every piece but the one before a wide block is at least the minimum
 *    width, so a row has at most ~2 * BAR_W / VR_SEGMAP_MIN_PIECE pieces;
 *    a hard cap keeps that true even when blocks overrun their segment.
 *    Segments past the kept rows only add to the last row's sums.
 *
 *  - Rendering: string building into a vr_buf. Coordinates are printed in
 *    tenths with integer arithmetic (never %f: a locale cannot break the
 *    SVG). Per row, one path per state holds all of that state's rects.
 */
#include "render/svg/segmap_svg.h"
#include "render/svg/legend_html.h"
#include "render/svg/svg_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/units.h"
#include "util/utf8.h"

/* Geometry in viewBox units, the same width and text as chart_svg.c. */
#define VIEW_W 560
#define PAD 12
#define FONT 12
#define FONT_TITLE 15
#define CHAR_W 6.7  /* rough average glyph width at FONT */
#define LABEL_W 156 /* the size and pool column */
#define BAR_X (PAD + LABEL_W + 6)
#define BAR_W (VIEW_W - PAD - BAR_X)
#define ROW_H 22 /* room for a narrow phone's 18-unit text */
#define SUMMARY_LINE 22
#define BAR_H_LARGE 14
#define BAR_H_SMALL 7
#define REST_H 38 /* the last row: a line of text over a bar */
#define TITLE_MAX_CP 64
#define TYPE_MAX_CP 8
#define POOL_MAX_CP 24
#define MAX_PIECES (2 * BAR_W / VR_SEGMAP_MIN_PIECE + 4)

/* Okabe-Ito colours, as the memory chart's (in use is its "allocated");
 * free space is pale so a mostly free segment looks empty. */
static const struct {
    const char *name, *label, *colour;
} states[VR_SEGMAP_NSTATES] = {
    {"allocated", "in use", "#d55e00"},
    {"pending", "freed, waiting on a stream", "#cc79a7"},
    {"free", "free (cached)", "#cfe6f5"},
    {"other", "other / in no block", "#aaaaaa"},
};
#define COLOUR_TEXT "#333"
#define COLOUR_MUTED "#666"
#define COLOUR_OUTLINE "#8a8a8a"

vr_segmap_state vr_segmap_state_of(const char *state)
{
    static const struct {
        const char *text;
        vr_segmap_state state;
    } names[] = {
        {"active_allocated", VR_SEGMAP_ALLOCATED},
        {"active_pending_free", VR_SEGMAP_PENDING},
        {"active_awaiting_free", VR_SEGMAP_PENDING},
        {"inactive", VR_SEGMAP_FREE},
    };
    for (size_t i = 0; state && i < sizeof names / sizeof *names; i++)
        if (strcmp(state, names[i].text) == 0)
            return names[i].state;
    return VR_SEGMAP_OTHER;
}

/*** aggregation ***/

typedef struct {
    int64_t bytes[VR_SEGMAP_NSTATES];
} piece;

/* One segment's sums: exact whatever is merged for drawing. */
typedef struct {
    int64_t total;
    int64_t sums[VR_SEGMAP_NSTATES]; /* blocks' bytes per state */
    int64_t blocks;
} tally;

typedef struct {
    tally t;
    char *type, *pool;
    int expandable;
    int64_t min_bytes; /* narrower blocks are merged */
    piece *pieces;
    size_t npieces, cap;
    piece bin; /* tiny blocks not yet a piece */
    int64_t bin_bytes;
} row;

struct vr_segmap {
    char *title;
    row rows[VR_SEGMAP_MAX_ROWS];
    size_t nrows;
    int64_t segments; /* every segment added */
    tally all;        /* every segment, summed */
    tally rest;       /* those past the rows, summed (blocks: gaps) */
    int64_t rest_segments;
    tally cur; /* the segment being added, when in the rest */
    int in_rest;
};

static int64_t add_sat(int64_t a, int64_t b)
{
    return b > 0 && a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* Bytes of a segment in no block (or in blocks of no known state). */
static int64_t other_bytes(const tally *t)
{
    int64_t known = 0;
    for (int s = 0; s < VR_SEGMAP_NSTATES; s++)
        known = add_sat(known, t->sums[s]);
    int64_t gap = t->total > known ? t->total - known : 0;
    return add_sat(gap, t->sums[VR_SEGMAP_OTHER]);
}

vr_segmap *vr_segmap_new(const char *title)
{
    vr_segmap *m = vr_xmalloc(sizeof *m);
    memset(m, 0, sizeof *m);
    m->title = vr_xstrdup(title ? title : "");
    return m;
}

void vr_segmap_free(vr_segmap *map)
{
    if (!map)
        return;
    for (size_t i = 0; i < map->nrows; i++) {
        free(map->rows[i].type);
        free(map->rows[i].pool);
        free(map->rows[i].pieces);
    }
    free(map->title);
    free(map);
}

/* The segment last in the rest is closed: its bytes in no block join the
 * rest's "other" (kept apart from its blocks' sums until then). */
static void close_rest_segment(vr_segmap *m)
{
    if (!m->in_rest)
        return;
    int64_t gap = other_bytes(&m->cur) - m->cur.sums[VR_SEGMAP_OTHER];
    m->rest.sums[VR_SEGMAP_OTHER] = add_sat(m->rest.sums[VR_SEGMAP_OTHER], gap);
    memset(&m->cur, 0, sizeof m->cur);
}

static void open_row(vr_segmap *m, const vr_segmap_segment *seg, int64_t total)
{
    row *r = &m->rows[m->nrows++];
    memset(r, 0, sizeof *r);
    r->t.total = total;
    r->type = seg->segment_type ? vr_xstrdup(seg->segment_type) : NULL;
    r->pool = seg->pool ? vr_xstrdup(seg->pool) : NULL;
    r->expandable = seg->expandable != 0;
    r->min_bytes = (int64_t)((double)total * VR_SEGMAP_MIN_PIECE / BAR_W);
    if (r->min_bytes < 1)
        r->min_bytes = 1;
}

void vr_segmap_add_segment(vr_segmap *map, const vr_segmap_segment *seg)
{
    if (!map || !seg)
        return;
    int64_t total = seg->total_bytes > 0 ? seg->total_bytes : 0;
    close_rest_segment(map);
    map->segments++;
    map->all.total = add_sat(map->all.total, total);
    if (map->nrows < VR_SEGMAP_MAX_ROWS) {
        open_row(map, seg, total);
        return;
    }
    map->in_rest = 1;
    map->rest_segments++;
    map->rest.total = add_sat(map->rest.total, total);
    map->cur.total = total;
}

static void push_piece(row *r, const piece *p)
{
    if (r->npieces == r->cap)
        vr_xgrow(&r->pieces, &r->cap, r->npieces + 1, sizeof *r->pieces, 16);
    r->pieces[r->npieces++] = *p;
}

static void flush_bin(row *r)
{
    if (!r->bin_bytes)
        return;
    push_piece(r, &r->bin);
    memset(&r->bin, 0, sizeof r->bin);
    r->bin_bytes = 0;
}

/* Past the cap every block joins the open bin, which then ends the row. */
static void row_block(row *r, int64_t bytes, vr_segmap_state state)
{
    int room = r->npieces + 2 <= MAX_PIECES;
    if (room && bytes >= r->min_bytes) {
        flush_bin(r);
        piece p = {{0}};
        p.bytes[state] = bytes;
        push_piece(r, &p);
        return;
    }
    r->bin.bytes[state] = add_sat(r->bin.bytes[state], bytes);
    r->bin_bytes = add_sat(r->bin_bytes, bytes);
    if (room && r->bin_bytes >= r->min_bytes)
        flush_bin(r);
}

static void tally_block(tally *t, int64_t bytes, vr_segmap_state state)
{
    t->sums[state] = add_sat(t->sums[state], bytes);
    t->blocks++;
}

void vr_segmap_add_block(vr_segmap *map, int64_t bytes, vr_segmap_state state)
{
    if (!map || !map->segments)
        return;
    if ((unsigned)state >= VR_SEGMAP_NSTATES)
        state = VR_SEGMAP_OTHER;
    bytes = bytes > 0 ? bytes : 0;
    tally_block(&map->all, bytes, state);
    if (map->in_rest) {
        tally_block(&map->cur, bytes, state);
        tally_block(&map->rest, bytes, state);
        return;
    }
    row *r = &map->rows[map->nrows - 1];
    tally_block(&r->t, bytes, state);
    row_block(r, bytes, state);
}

size_t vr_segmap_rows(const vr_segmap *map)
{
    return map ? map->nrows : 0;
}

size_t vr_segmap_pieces(const vr_segmap *map, size_t i)
{
    if (!map || i >= map->nrows)
        return 0;
    return map->rows[i].npieces + (map->rows[i].bin_bytes ? 1 : 0);
}

int64_t vr_segmap_rest_segments(const vr_segmap *map)
{
    return map ? map->rest_segments : 0;
}

/* The rest's sums with the segment still open closed in a copy. */
static tally rest_tally(const vr_segmap *m)
{
    tally t = m->rest;
    if (m->in_rest) {
        int64_t gap = other_bytes(&m->cur) - m->cur.sums[VR_SEGMAP_OTHER];
        t.sums[VR_SEGMAP_OTHER] = add_sat(t.sums[VR_SEGMAP_OTHER], gap);
    }
    return t;
}

int64_t vr_segmap_rest_bytes(const vr_segmap *map, vr_segmap_state state)
{
    if (!map)
        return 0;
    tally t = rest_tally(map);
    return (unsigned)state < VR_SEGMAP_NSTATES ? t.sums[state] : t.total;
}

/*** string building ***/

static void put_tenths(vr_buf *b, double v)
{
    long long t = llround(v * 10);
    if (t < 0) {
        vr_buf_putc(b, '-');
        t = -t;
    }
    if (t % 10)
        vr_buf_printf(b, "%lld.%lld", t / 10, t % 10);
    else
        vr_buf_printf(b, "%lld", t / 10);
}

static void put_bytes(vr_buf *b, int64_t v)
{
    char text[32];
    vr_units_bytes(v, text, sizeof text);
    vr_buf_puts(b, text);
}

/*** drawing ***/

static int is_small(const row *r)
{
    return r->type && strcmp(r->type, "small") == 0;
}

static int default_pool(const char *pool)
{
    return !pool || !*pool || strcmp(pool, "0,0") == 0;
}

static void put_sums(vr_buf *b, const tally *t)
{
    vr_buf_printf(b, "data-bytes=\"%lld\"", (long long)t->total);
    for (int s = 0; s < VR_SEGMAP_NSTATES; s++)
        vr_buf_printf(b, " data-%s=\"%lld\"", states[s].name,
                      (long long)(s == VR_SEGMAP_OTHER ? other_bytes(t) : t->sums[s]));
}

/* "in use 30.3 MiB, waiting 0 B, free 482 MiB" */
static void put_state_text(vr_buf *b, const tally *t)
{
    vr_buf_puts(b, "in use ");
    put_bytes(b, t->sums[VR_SEGMAP_ALLOCATED]);
    vr_buf_puts(b, ", waiting on a stream ");
    put_bytes(b, t->sums[VR_SEGMAP_PENDING]);
    vr_buf_puts(b, ", free ");
    put_bytes(b, t->sums[VR_SEGMAP_FREE]);
    int64_t other = other_bytes(t);
    if (other) {
        vr_buf_puts(b, ", other ");
        put_bytes(b, other);
    }
}

/* Rects of one state across a bar: each piece's states side by side, in
 * state order, a hairline gap at the piece's end so splits show. */
static void draw_state_path(vr_buf *b, const piece *pieces, size_t n, int64_t scale, int state,
                            double y, double h)
{
    int64_t done = 0;
    int open = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t at = done, piece_bytes = 0;
        for (int s = 0; s < VR_SEGMAP_NSTATES; s++)
            piece_bytes = add_sat(piece_bytes, pieces[i].bytes[s]);
        double end = BAR_X + (double)add_sat(done, piece_bytes) / (double)scale * BAR_W;
        for (int s = 0; s < state; s++)
            at = add_sat(at, pieces[i].bytes[s]);
        done = add_sat(done, piece_bytes);
        if (!pieces[i].bytes[state])
            continue;
        double x0 = BAR_X + (double)at / (double)scale * BAR_W;
        double x1 = BAR_X + (double)add_sat(at, pieces[i].bytes[state]) / (double)scale * BAR_W;
        if (x1 >= end && end - x0 > 2)
            x1 = end - 0.6;
        if (!open)
            vr_buf_printf(b, "<path class=\"vr-seg-%s\" fill=\"%s\" d=\"", states[state].name,
                          states[state].colour);
        open = 1;
        vr_buf_puts(b, "M");
        put_tenths(b, x0);
        vr_buf_puts(b, " ");
        put_tenths(b, y);
        vr_buf_puts(b, "h");
        put_tenths(b, x1 - x0 > 0.1 ? x1 - x0 : 0.1);
        vr_buf_puts(b, "v");
        put_tenths(b, h);
        vr_buf_puts(b, "H");
        put_tenths(b, x0);
        vr_buf_puts(b, "z");
    }
    if (open)
        vr_buf_puts(b, "\"/>\n");
}

/* The bar's frame: white behind, grey outline, dashed when expandable. */
static void draw_frame(vr_buf *b, double y, double h, int dashed)
{
    vr_buf_printf(b, "<rect x=\"%d\" y=\"", BAR_X);
    put_tenths(b, y);
    vr_buf_printf(b, "\" width=\"%d\" height=\"", BAR_W);
    put_tenths(b, h);
    vr_buf_printf(b, "\" fill=\"#fff\" stroke=\"%s\" stroke-width=\"%s\"%s/>\n", COLOUR_OUTLINE,
                  dashed ? "1.2" : "0.6", dashed ? " stroke-dasharray=\"3 2\"" : "");
}

static void draw_bar(vr_buf *b, const piece *pieces, size_t n, int64_t scale, double y, double h,
                     int dashed)
{
    draw_frame(b, y, h, dashed);
    if (scale <= 0)
        return;
    for (int s = 0; s < VR_SEGMAP_NSTATES; s++)
        draw_state_path(b, pieces, n, scale, s, y, h);
}

static void row_title(vr_buf *b, const row *r)
{
    vr_buf_puts(b, "<title>");
    put_bytes(b, r->t.total);
    vr_buf_puts(b, " segment, ");
    vr_svg_text(b, r->type ? r->type : "unknown", TYPE_MAX_CP);
    vr_buf_puts(b, " pool");
    if (r->expandable)
        vr_buf_puts(b, ", expandable");
    if (!default_pool(r->pool)) {
        vr_buf_puts(b, ", private pool ");
        vr_svg_text(b, r->pool, POOL_MAX_CP);
    }
    vr_buf_printf(b, ", %lld blocks: ", (long long)r->t.blocks);
    put_state_text(b, &r->t);
    vr_buf_puts(b, "</title>\n");
}

/* "512 MiB large", "2.00 MiB small exp." */
static void row_label(vr_buf *b, const row *r, double y)
{
    vr_buf_printf(b, "<text x=\"%d\" y=\"", PAD + LABEL_W);
    put_tenths(b, y + ROW_H / 2.0 + 4);
    vr_buf_puts(b, "\" text-anchor=\"end\">");
    put_bytes(b, r->t.total);
    if (r->type) {
        vr_buf_puts(b, " ");
        vr_svg_text(b, r->type, TYPE_MAX_CP);
    }
    if (r->expandable)
        vr_buf_puts(b, " exp.");
    if (!default_pool(r->pool))
        vr_buf_puts(b, " \xe2\x80\xa0"); /* a dagger: private pool (title) */
    vr_buf_puts(b, "</text>\n");
}

static void draw_row(vr_buf *b, const row *r, double y)
{
    vr_buf_puts(b, "<g class=\"vr-segment\" ");
    put_sums(b, &r->t);
    vr_buf_puts(b, " data-pool=\"");
    vr_svg_text(b, r->type ? r->type : "", TYPE_MAX_CP);
    vr_buf_printf(b, "\" data-expandable=\"%d\">\n", r->expandable);
    row_title(b, r);
    row_label(b, r, y);
    double h = is_small(r) ? BAR_H_SMALL : BAR_H_LARGE;
    int64_t blocks = 0;
    for (int s = 0; s < VR_SEGMAP_NSTATES; s++)
        blocks = add_sat(blocks, r->t.sums[s]);
    int64_t scale = r->t.total > blocks ? r->t.total : blocks;
    /* The open bin is drawn as the last piece (rendering is const). */
    piece *all = vr_xmalloc((r->npieces + 1) * sizeof *all);
    if (r->npieces)
        memcpy(all, r->pieces, r->npieces * sizeof *all);
    size_t n = r->npieces;
    if (r->bin_bytes)
        all[n++] = r->bin;
    draw_bar(b, all, n, scale, y + (ROW_H - h) / 2, h, r->expandable);
    free(all);
    vr_buf_puts(b, "</g>\n");
}

/* "9,976 more segments: 12.3 GiB, in use 1.20 GiB, ..." over one bar of
 * their states' totals. */
static void draw_rest(vr_buf *b, const vr_segmap *m, double y)
{
    tally t = rest_tally(m);
    char count[32];
    vr_units_count(m->rest_segments, count, sizeof count);
    vr_buf_printf(b, "<g class=\"vr-segment-rest\" data-segments=\"%lld\" ",
                  (long long)m->rest_segments);
    put_sums(b, &t);
    vr_buf_printf(b, ">\n<text x=\"%d\" y=\"", PAD);
    put_tenths(b, y + 13);
    vr_buf_printf(b, "\">%s more segment%s, ", count, m->rest_segments == 1 ? "" : "s");
    put_bytes(b, t.total);
    vr_buf_puts(b, ": ");
    put_state_text(b, &t);
    vr_buf_puts(b, "</text>\n");
    piece p = {{0}};
    for (int s = 0; s < VR_SEGMAP_NSTATES; s++)
        p.bytes[s] = s == VR_SEGMAP_OTHER ? other_bytes(&t) : t.sums[s];
    int64_t scale = 0;
    for (int s = 0; s < VR_SEGMAP_NSTATES; s++)
        scale = add_sat(scale, p.bytes[s]);
    draw_bar(b, &p, 1, scale, y + 19, BAR_H_LARGE, 0);
    vr_buf_puts(b, "</g>\n");
}

static const char *const shapes[] = {"thin bar: small pool", "dashed outline: expandable"};

/* The legend as an HTML list (legend_html.h): the states' swatches, then
 * the shapes in words. */
static char *legend_list(int with_other)
{
    static const char *const cls[VR_SEGMAP_NSTATES] = {"vr-state-0", "vr-state-1", "vr-state-2",
                                                       "vr-state-3"};
    vr_legend_item items[VR_SEGMAP_NSTATES + 2];
    size_t n = 0;
    for (int i = 0; i < VR_SEGMAP_NSTATES; i++)
        if (i != VR_SEGMAP_OTHER || with_other)
            items[n++] = (vr_legend_item){
                cls[i], states[i].label, VR_SWATCH_BOX, states[i].colour, COLOUR_OUTLINE, NULL,
                -1};
    for (int i = 0; i < 2; i++)
        items[n++] =
            (vr_legend_item){"vr-shape", shapes[i], VR_SWATCH_NONE, NULL, NULL, NULL, -1};
    vr_buf out = VR_BUF_INIT;
    vr_legend_html(&out, items, n, (size_t)-1);
    return vr_buf_detach(&out);
}

/* The legend flows and wraps like the chart's; "other" only when some
 * bytes are. Returns its last baseline. */
static double draw_legend(vr_buf *b, double y, int with_other)
{
    double x = PAD;
    vr_buf_printf(b, "<g class=\"vr-legend\" fill=\"%s\">\n", COLOUR_TEXT);
    for (int i = 0; i < VR_SEGMAP_NSTATES + 2; i++) {
        if (i == VR_SEGMAP_OTHER && !with_other)
            continue;
        const char *label =
            i < VR_SEGMAP_NSTATES ? states[i].label : shapes[i - VR_SEGMAP_NSTATES];
        double w = (i < VR_SEGMAP_NSTATES ? 18 : 0) + CHAR_W * (double)strlen(label);
        if (x > PAD && x + w > VIEW_W - PAD) {
            x = PAD;
            y += 18;
        }
        if (i < VR_SEGMAP_NSTATES) {
            vr_buf_puts(b, "<rect x=\"");
            put_tenths(b, x);
            vr_buf_puts(b, "\" y=\"");
            put_tenths(b, y - 10);
            vr_buf_printf(b,
                          "\" width=\"12\" height=\"12\" fill=\"%s\" stroke=\"%s\" "
                          "stroke-width=\"0.6\"/>",
                          states[i].colour, COLOUR_OUTLINE);
        }
        vr_buf_puts(b, "<text x=\"");
        put_tenths(b, x + (i < VR_SEGMAP_NSTATES ? 17 : 0));
        vr_buf_puts(b, "\" y=\"");
        put_tenths(b, y);
        vr_buf_printf(b, "\"%s>%s</text>\n",
                      i < VR_SEGMAP_NSTATES ? "" : " fill=\"" COLOUR_MUTED "\"", label);
        x += w + 14;
    }
    vr_buf_puts(b, "</g>\n");
    return y;
}

/* "96 segments, 3.95 GiB:" */
static void summary_head(vr_buf *b, const vr_segmap *m)
{
    char count[32];
    vr_units_count(m->segments, count, sizeof count);
    vr_buf_printf(b, "%s segment%s, ", count, m->segments == 1 ? "" : "s");
    put_bytes(b, m->all.total);
    vr_buf_puts(b, ":");
}

/* "96 segments, 3.95 GiB: in use 2.86 GiB, ..." */
static void summary_text(vr_buf *b, const vr_segmap *m)
{
    summary_head(b, m);
    vr_buf_puts(b, " ");
    put_state_text(b, &m->all);
}

/* The header's height is known only once the legend is laid out, and the
 * picture's only after it: the body is drawn first, then wrapped. */
static char *segmap_svg(const vr_segmap *map, char **legend)
{
    vr_buf body = VR_BUF_INIT, out = VR_BUF_INIT;
    double y = map && *map->title ? 22 : 4;
    if (map && *map->title) {
        vr_buf_printf(&body,
                      "<text class=\"vr-title\" x=\"%d\" y=\"18\" font-size=\"%d\" "
                      "font-weight=\"600\">",
                      PAD, FONT_TITLE);
        vr_svg_text(&body, map->title, TITLE_MAX_CP);
        vr_buf_puts(&body, "</text>\n");
    }
    /* The summary on two lines: a narrow phone's text would not hold one. */
    vr_buf_printf(&body, "<text class=\"vr-summary\" x=\"%d\" y=\"", PAD);
    put_tenths(&body, y + 20);
    vr_buf_printf(&body, "\" fill=\"%s\">", COLOUR_MUTED);
    if (map)
        summary_head(&body, map);
    vr_buf_printf(&body, "</text>\n<text class=\"vr-summary\" x=\"%d\" y=\"", PAD);
    put_tenths(&body, y + 20 + SUMMARY_LINE);
    vr_buf_printf(&body, "\" fill=\"%s\">", COLOUR_MUTED);
    if (map)
        put_state_text(&body, &map->all);
    vr_buf_puts(&body, "</text>\n");
    y += SUMMARY_LINE + 4;
    int with_other = map && other_bytes(&map->all) > 0;
    if (legend)
        *legend = legend_list(with_other);
    y = legend ? y + 28 : draw_legend(&body, y + 36, with_other) + 10;
    size_t nrows = map ? map->nrows : 0;
    for (size_t i = 0; i < nrows; i++, y += ROW_H)
        draw_row(&body, &map->rows[i], y);
    if (map && map->rest_segments) {
        draw_rest(&body, map, y + 4);
        y += REST_H + 4;
    }
    int height = (int)ceil(y + PAD);
    vr_buf_printf(&out,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" "
                  "width=\"100%%\" role=\"img\" class=\"vr-segmap\" "
                  "data-segments=\"%lld\" data-rows=\"%zu\" aria-label=\"",
                  VIEW_W, height, (long long)(map ? map->segments : 0), nrows);
    if (map) {
        vr_svg_text(&out, map->title, TITLE_MAX_CP);
        vr_buf_puts(&out, ": ");
        summary_text(&out, map);
    }
    vr_buf_printf(&out,
                  "\" font-family=\"system-ui, sans-serif\" font-size=\"%d\" "
                  "fill=\"%s\">\n<rect class=\"vr-bg\" width=\"%d\" height=\"%d\" "
                  "fill=\"#fff\"/>\n",
                  FONT, COLOUR_TEXT, VIEW_W, height);
    vr_buf_append(&out, body.data, body.len);
    vr_buf_puts(&out, "</svg>\n");
    vr_buf_free(&body);
    return vr_buf_detach(&out);
}

char *vr_segmap_svg(const vr_segmap *map)
{
    return segmap_svg(map, NULL);
}

char *vr_segmap_svg_html(const vr_segmap *map, char **legend)
{
    return segmap_svg(map, legend);
}
