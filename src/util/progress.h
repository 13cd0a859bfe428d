/*-*** progress.h: a progress line on stderr for long work ***/
/*
 * Shown only when enabled (stderr is a terminal and not --quiet); redrawn
 * at most a few times a second, so calling it per chunk is cheap.
 * Ownership: caller-owned struct; `label` must outlive it.
 */
#ifndef VR_PROGRESS_H
#define VR_PROGRESS_H

#include <stdint.h>

typedef struct {
    int enabled;
    const char *label;
    int64_t total; /* bytes expected, -1 if unknown */
    double last_draw;
    int drawn;
} vr_progress;

void vr_progress_start(vr_progress *p, int enabled, const char *label, int64_t total);
/* done: bytes so far; events: records so far. */
void vr_progress_update(vr_progress *p, uint64_t done, uint64_t events);
/* Draws "label: what" now (work whose amount is not counted). */
void vr_progress_note(vr_progress *p, const char *what);
/* Clears the line. */
void vr_progress_end(vr_progress *p);

#endif
