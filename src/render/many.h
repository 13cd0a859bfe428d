/*-*** many.h: what a report shows of many devices, ranks or prints ***/
/*
 * A job of thousands of devices must not give thousands of sections,
 * charts and table rows, nor read each device's details: a report shows
 * at most VR_MANY_IN_FULL of a list in full (the ones that matter: those
 * with an error or a finding, the most loaded, the least loaded) and
 * says in one line how many more there are and the range of their peaks.
 *
 * vr_many_split() moves the rows of `list` that keep[] does not mark into
 * a new array (returned, in their order; NULL when keep[] marks all), the
 * rows kept staying in theirs. vr_many_summary() is the line's figures:
 * {"count", "in_full", "more", "more_n" (the count as text), "figure",
 * "more_low_bytes", "more_high_bytes"} over `more`'s `figure` (min, max;
 * null when none has it). vr_many_choose() marks in keep[] at most `max`
 * of n rows: first those `flagged`, then the highest `weight`, and always
 * the lowest (ties: the earlier row). Keys: docs/json.md.
 *
 * Ownership: the returned arrays and objects are the caller's.
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
cJSON *vr_many_split(cJSON *list, const unsigned char *keep);
cJSON *vr_many_summary(size_t shown, const cJSON *more, const char *figure);

#endif
