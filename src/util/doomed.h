/*-*** doomed.h: a folder of numbered files to remove if a signal kills us ***/
/*
 * `--jobs` stages each file into DIR/N.db (import/staging.c); a run killed
 * by INT, TERM or HUP (Ctrl-C, Slurm's time limit) would leave the folder
 * in $TMPDIR. The staging pool names it here while it exists, and the
 * signal handler that removes a half-written report (cli/output.c) calls
 * vr_doomed_sweep() before the process dies. SIGKILL cannot be caught:
 * its folder stays (docs/scale.md says where).
 *
 * Ownership: one folder at a time, copied into a static buffer - the one
 * writable state here, as a signal handler has no argument. Set and clear
 * from one thread; the sweep only reads it and calls unlink and rmdir,
 * which are async-signal-safe.
 */
#ifndef VR_DOOMED_H
#define VR_DOOMED_H

#include <stddef.h>

/* DIR holds files 0.db .. (n-1).db and their -journal files. A DIR too
 * long for the buffer is not named (nothing is removed). */
void vr_doomed_set(const char *dir, size_t n);
void vr_doomed_clear(void);
/* Removes the files and the folder; safe in a signal handler. */
void vr_doomed_sweep(void);

#endif
