/*-*** timing.h: stage timings for benchmarks (VRAMREPORT_TIMING=1) ***/
#ifndef VR_TIMING_H
#define VR_TIMING_H

/* Monotonic seconds. */
double vr_now(void);
/* Prints "vramreport: timing: STAGE N s (cpu C s so far)" on stderr (C:
 * the process's CPU time since it started) when the environment variable
 * VRAMREPORT_TIMING is set and not "0"; otherwise nothing. */
void vr_timing(const char *stage, double since);

#endif
