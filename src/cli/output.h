/*-*** output.h: the report file, written whole or not at all ***/
/*
 * Where the report goes: standard output; a file written in place when
 * it is not a regular file (/dev/null, a pipe); else a temporary file
 * beside the target, renamed into place at the end: a reader of OUT never
 * sees half a report, and a failed or interrupted write leaves no file
 * behind. Opened at the first write (a JSON report is written as it is
 * made, report.h): a report that fails before it touches nothing.
 *
 * Ownership: the vr_cli_output is the caller's; `path` points into argv.
 * The temporary file's name is a writable global (a signal handler
 * has no argument): vr_cli_watch_signals makes INT, TERM, HUP and PIPE
 * remove it, and the --jobs staging folder (util/doomed.h), before the
 * process dies.
 */
#ifndef VR_CLI_OUTPUT_H
#define VR_CLI_OUTPUT_H

#include <stdio.h>

#include "util/buf.h"
#include "util/error.h"

typedef struct {
    const char *path; /* NULL or "-": standard output */
    int opened;
    FILE *stream; /* standard output, or a file written in place */
    int fd;       /* the temporary file, or -1 */
    vr_buf tmp;   /* its name */
    size_t written;
} vr_cli_output;

#define VR_CLI_OUTPUT_INIT(path)            \
    {                                       \
        (path), 0, NULL, -1, VR_BUF_INIT, 0 \
    }

void vr_cli_watch_signals(void);

/* Appends b to the output, opening it at the first write. */
int vr_cli_output_write(vr_cli_output *o, const vr_buf *b, vr_error *err);

/* vr_report_opts' flush (report.h): writes b, then empties it. */
int vr_cli_output_flush(void *ctx, vr_buf *b, vr_error *err);

/* Closes what was opened: `rc` is the report's so far; the temporary
 * file is renamed into place only when it is 0, else removed. */
int vr_cli_output_close(vr_cli_output *o, int rc, vr_error *err);

#endif
