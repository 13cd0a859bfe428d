/*-*** rankdist_svg.h: the ranks' peaks side by side, one bar a rank ***/
/*
 * A job of many ranks is read by its spread, not rank by rank: one bar
 * per rank in rank order, its height the rank's peak allocated memory
 * (its highest device's), the median as a dashed line, and the ranks more
 * than VR_RANKDIST_OFF_PERMILLE from the median in another colour, the
 * highest of them named. A thousand ranks are a thousand thin bars: the
 * picture grows with the ranks by one short <rect> each.
 *
 * vr_rankdist_svg returns the SVG (malloc'ed; NULL for no ranks) and, in
 * *legend, its legend as an HTML list (legend_html.h). Ownership: both
 * the caller's to free; `ranks` is only read.
 */
#ifndef VR_RANKDIST_SVG_H
#define VR_RANKDIST_SVG_H

#include <stddef.h>
#include <stdint.h>

/* A rank this far from the median (in thousandths of it) or more is off:
 * rank-imbalance's own threshold is 20 % of the largest peak. */
#define VR_RANKDIST_OFF_PERMILLE 200

typedef struct {
    int64_t rank, peak; /* peak allocated bytes, >= 0 */
} vr_rank_peak;

/* Whether `peak` is off the median by the rule above. */
int vr_rankdist_off(int64_t peak, int64_t median);

char *vr_rankdist_svg(const vr_rank_peak *ranks, size_t n, int64_t median, char **legend);

#endif
