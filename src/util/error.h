/*-*** error.h: errors as values ***/
/*
 * Functions that can fail return int (0 on success, -1 on failure) and fill
 * a caller-owned vr_error with one line a user can act on: which file, where
 * (byte offset or line), what was expected. The library prints nothing
 * (warnings go through a vr_warner, below); the CLI prints the message.
 * The one exception: our own allocations (vr_xmalloc and the others in
 * buf.h) print one line and exit when memory runs out.
 */
#ifndef VR_ERROR_H
#define VR_ERROR_H

#include <stdarg.h>

/* What kind of failure, so a caller can act on it without reading the
 * message: the CLI skips an input no reader accepts when it came from a
 * folder, reports a broken one and goes on, and stops on a database
 * error. */
typedef enum {
    VR_ERR_NONE = 0,
    VR_ERR_FAILED,         /* anything not classed below */
    VR_ERR_IO,             /* a file could not be opened, read or written */
    VR_ERR_NOT_RECOGNISED, /* no reader knows this content */
    VR_ERR_NOT_SUPPORTED,  /* recognised, but not read (yet) */
    VR_ERR_MALFORMED,      /* a reader's format, broken beyond use */
    VR_ERR_DATABASE,       /* SQLite failed: the run cannot go on */
    VR_ERR_USAGE           /* the command line asks for what cannot be */
} vr_error_code;

typedef struct {
    char msg[768];
    vr_error_code code;
} vr_error;

#define VR_ERROR_INIT    \
    {                    \
        {0}, VR_ERR_NONE \
    }

/* Sets err->msg (printf-style) and err->code = VR_ERR_FAILED and returns
 * -1, so `return vr_fail(...)`. */
int vr_fail(vr_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The same with a code. */
int vr_fail_code(vr_error *err, vr_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));


/* Warnings go through a caller-supplied sink; NULL sink drops them. */
typedef void (*vr_warn_fn)(void *userdata, const char *line);

typedef struct {
    vr_warn_fn fn;
    void *userdata;
} vr_warner;

void vr_warn(const vr_warner *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
