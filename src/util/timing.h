/*-*** timing.h: stage timings for benchmarks (VRAMREPORT_TIMING=1) ***/
#ifndef VR_TIMING_H
#define VR_TIMING_H

/* Monotonic seconds. */
double vr_now(void);
/* Prints "vramreport: timing: STAGE N s (cpu C s so far)" on stderr (C:
 * the process's CPU time since it started) when the environment variable
 * VRAMREPORT_TIMING is set and not "0"; otherwise nothing. */
void vr_timing(const char *stage, double since);
/* CPU seconds of the calling thread so far. */
double vr_thread_cpu(void);
/* Prints "vramreport: timing: WHAT N s" on the same condition: a figure
 * measured apart (a thread's CPU time, time spent waiting). */
void vr_timing_figure(const char *what, double seconds);

#endif
