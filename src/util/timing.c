#include "util/timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

double vr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The process's CPU time so far: on a machine shared with others, wall
 * time stretches with the load, CPU time much less. */
static double cpu_of(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double vr_thread_cpu(void)
{
    return cpu_of(CLOCK_THREAD_CPUTIME_ID);
}

/* The process's peak resident size so far: which stage grows it. */
static long peak_rss_mib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss / 1024 : -1;
}

static int timing_on(void)
{
    const char *env = getenv("VRAMREPORT_TIMING");
    return env && *env && *env != '0';
}

void vr_timing(const char *stage, double since)
{
    if (timing_on())
        fprintf(stderr, "vramreport: timing: %s %.3f s (cpu %.3f s so far), peak RSS %ld MiB\n",
                stage, vr_now() - since, cpu_of(CLOCK_PROCESS_CPUTIME_ID), peak_rss_mib());
}

void vr_timing_figure(const char *what, double seconds)
{
    if (timing_on())
        fprintf(stderr, "vramreport: timing: %s %.3f s\n", what, seconds);
}
