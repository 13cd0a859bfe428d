#include "timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double vr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void vr_timing(const char *stage, double since)
{
    const char *env = getenv("VRAMREPORT_TIMING");
    if (env && *env && *env != '0')
        fprintf(stderr, "vramreport: timing: %s %.3f s\n", stage, vr_now() - since);
}
