#include "util/progress.h"

#include <stdio.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void vr_progress_start(vr_progress *p, int enabled, const char *label, int64_t total)
{
    p->enabled = enabled;
    p->label = label;
    p->total = total;
    p->last_draw = now_s();
    p->drawn = 0;
}

void vr_progress_update(vr_progress *p, uint64_t done, uint64_t events)
{
    if (!p || !p->enabled)
        return;
    double t = now_s();
    if (t - p->last_draw < 0.25)
        return;
    p->last_draw = t;
    p->drawn = 1;
    double mib = (double)done / (1024.0 * 1024.0);
    if (p->total > 0)
        fprintf(stderr, "\r%s: %3.0f%% (%.0f MiB read, %llu events)  ", p->label,
                100.0 * (double)done / (double)p->total, mib, (unsigned long long)events);
    else
        fprintf(stderr, "\r%s: %.0f MiB read, %llu events  ", p->label, mib,
                (unsigned long long)events);
    fflush(stderr);
}

void vr_progress_note(vr_progress *p, const char *what)
{
    if (!p || !p->enabled)
        return;
    p->drawn = 1;
    fprintf(stderr, "\r%s: %s  ", p->label, what);
    fflush(stderr);
}

void vr_progress_end(vr_progress *p)
{
    if (p && p->enabled && p->drawn) {
        fprintf(stderr, "\r%*s\r", 78, "");
        fflush(stderr);
    }
    if (p)
        p->drawn = 0;
}
