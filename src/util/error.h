/*-*** error.h: errors as values ***/
/*
 * Functions that can fail return int (0 on success, -1 on failure) and fill
 * a caller-owned vr_error with one line a user can act on: which file, where
 * (byte offset or line), what was expected. Nothing is printed by the
 * library; the CLI prints the message.
 */
#ifndef VR_ERROR_H
#define VR_ERROR_H

#include <stdarg.h>

typedef struct {
    char msg[768];
} vr_error;

/* Sets err->msg (printf-style) and returns -1, so `return vr_fail(...)`. */
int vr_fail(vr_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Warnings go through a caller-supplied sink; NULL sink drops them. */
typedef void (*vr_warn_fn)(void *userdata, const char *line);

typedef struct {
    vr_warn_fn fn;
    void *userdata;
} vr_warner;

void vr_warn(const vr_warner *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
