/*-*** many.h: what a report shows of many devices, ranks or prints ***/
/*
 * A job of thousands of devices must not give thousands of sections,
 * charts and table rows, nor read each device's details: a report shows
 * at most VR_MANY_IN_FULL of a list in full (the ones that matter: those
 * with an error or a finding, the most loaded, the least loaded) and
 * says in one line how many more there are and the range of their peaks.
 *
 * The rows are chosen from a small record each (vr_many_rank), never
 * from built rows: read as they come (vr_many_offer, below), a list of
 * 40,000 devices holds at most 17 built rows; a list whose flags are known
 * only at its end (ranks.c) holds the records (16 bytes a row), then
 * builds the rows kept.
 *
 * vr_many_choose() marks in keep[] at most `max` of n rows: first those
 * `flagged`, then the highest `weight`, and always the lowest (ties: the
 * earlier row). vr_many_summary() is the line's figures: {"count",
 * "in_full", "more", "more_n" (the count as text), "figure",
 * "more_low_bytes", "more_high_bytes"} over the weights of the rows keep[]
 * does not mark (min, max; null when none has one): the weight is
 * `figure`'s value. vr_many_all_kept(): keep[] marks every row (then
 * there is no summary). Keys: docs/json.md.
 *
 * Ownership: the returned objects and arrays are the caller's.
 */
#ifndef VR_MANY_H
#define VR_MANY_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define VR_MANY_IN_FULL 16

typedef struct {
    int flagged;    /* an error or a finding names it */
    int has_weight; /* weight is known */
    int64_t weight; /* its load: the higher, the more it matters */
} vr_many_rank;

void vr_many_choose(const vr_many_rank *rows, size_t n, size_t max, unsigned char *keep);
int vr_many_all_kept(const unsigned char *keep, size_t n);

/* The same choice made as the rows come, for a list read once: it holds
 * at most VR_MANY_IN_FULL + 1 rows (the best so far and the lowest) and
 * VR_MANY_IN_FULL + 1 weights at each end (for the summary), however
 * many rows there are. For each row, in order: vr_many_wants() says
 * whether it may be kept (then build its row), vr_many_offer() takes its
 * record and that row (NULL when not wanted; a row not kept is freed).
 * vr_many_finish() returns the rows kept, in their order (a new array),
 * and the summary as vr_many_summary's (NULL when every row is kept). */
#define VR_MANY_ENDS (VR_MANY_IN_FULL + 1)

typedef struct {
    vr_many_rank r;
    size_t i;
    cJSON *row;
} vr_many_held;

typedef struct {
    size_t n;                          /* rows offered */
    vr_many_held top[VR_MANY_IN_FULL]; /* the most important so far */
    size_t ntop;
    vr_many_held low; /* the lowest weight so far (the earlier of equals) */
    int has_low;
    struct {
        int64_t weight;
        size_t i;
    } ends[2][VR_MANY_ENDS]; /* the lowest weights, the highest */
    size_t nends[2];
} vr_many_stream;

void vr_many_stream_init(vr_many_stream *s);
int vr_many_wants(const vr_many_stream *s, const vr_many_rank *r);
void vr_many_offer(vr_many_stream *s, const vr_many_rank *r, cJSON *row);
cJSON *vr_many_finish(vr_many_stream *s, const char *figure, cJSON **summary);
cJSON *vr_many_summary(const vr_many_rank *rows, size_t n, const unsigned char *keep,
                       const char *figure);

#endif
