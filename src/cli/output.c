/* The report file (output.h): standard output, a file written in place,
 * or a temporary file renamed into place once the report is whole. */
#include "cli/output.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/doomed.h"

static int write_stream(FILE *f, const char *name, const vr_buf *b, vr_error *err)
{
    if (fwrite(b->data, 1, b->len, f) != b->len || fflush(f) != 0)
        return vr_fail(err, "%s: write failed: %s", name, strerror(errno));
    return 0;
}

/* The temporary report file while it is being written, so that a signal
 * can remove it: the one writable global, as a handler has no argument. */
static char tmp_output[4096];

static void remove_tmp_and_die(int sig)
{
    if (tmp_output[0])
        unlink(tmp_output);
    vr_doomed_sweep(); /* --jobs' staging folder */
    signal(sig, SIG_DFL);
    raise(sig);
}

void vr_cli_watch_signals(void)
{
    static const int deadly[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof deadly / sizeof *deadly; i++)
        signal(deadly[i], remove_tmp_and_die);
    /* Past `ulimit -f`, writes fail with EFBIG instead of killing us, so a
     * partial file is removed and the error said. */
    signal(SIGXFSZ, SIG_IGN);
}

/* A new file beside `path` that nobody else can have planted: mkstemp
 * creates it (O_EXCL, no symlink followed). Mode as fopen would give. */
static int create_tmp(const char *path, vr_buf *tmp, vr_error *err)
{
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path) + 1 : 0;
    vr_buf_printf(tmp, "%.*s.%s.XXXXXX", dirlen, path, slash ? slash + 1 : path);
    int fd = mkstemp(tmp->data);
    if (fd < 0)
        return vr_fail(err, "%s: cannot write beside it: %s", path, strerror(errno));
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp->data);
        return vr_fail(err, "%s: cannot set permissions: %s", path, strerror(e));
    }
    snprintf(tmp_output, sizeof tmp_output, "%s", tmp->data);
    return fd;
}

static int write_fd(int fd, const char *path, const vr_buf *b, vr_error *err)
{
    size_t done = 0;
    while (done < b->len) {
        ssize_t n = write(fd, b->data + done, b->len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return vr_fail(err, "%s: write failed: %s", path, strerror(errno));
        done += (size_t)n;
    }
    return 0;
}

static int output_open(vr_cli_output *o, vr_error *err)
{
    o->opened = 1;
    if (!o->path || strcmp(o->path, "-") == 0) {
        o->stream = stdout;
        return 0;
    }
    struct stat st;
    if (stat(o->path, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->stream = fopen(o->path, "wb");
        return o->stream ? 0 : vr_fail(err, "%s: cannot write: %s", o->path, strerror(errno));
    }
    o->fd = create_tmp(o->path, &o->tmp, err);
    return o->fd < 0 ? -1 : 0;
}

int vr_cli_output_write(vr_cli_output *o, const vr_buf *b, vr_error *err)
{
    if (!o->opened && output_open(o, err) < 0)
        return -1;
    int rc = o->stream    ? write_stream(o->stream,
                                      o->stream == stdout ? "standard output" : o->path, b, err)
             : o->fd >= 0 ? write_fd(o->fd, o->path, b, err)
                          : -1; /* its opening failed and said why */
    if (rc == 0)
        o->written += b->len;
    return rc;
}

int vr_cli_output_flush(void *ctx, vr_buf *b, vr_error *err)
{
    int rc = vr_cli_output_write(ctx, b, err);
    vr_buf_clear(b);
    return rc;
}

int vr_cli_output_close(vr_cli_output *o, int rc, vr_error *err)
{
    if (o->stream && o->stream != stdout && fclose(o->stream) != 0 && rc == 0)
        rc = vr_fail(err, "%s: write failed", o->path);
    if (o->fd >= 0) {
        if (close(o->fd) != 0 && rc == 0)
            rc = vr_fail(err, "%s: write failed: %s", o->path, strerror(errno));
        if (rc == 0 && rename(o->tmp.data, o->path) != 0)
            rc = vr_fail(err, "%s: cannot rename into place: %s", o->path, strerror(errno));
        if (rc < 0)
            unlink(o->tmp.data);
        tmp_output[0] = '\0';
    }
    vr_buf_free(&o->tmp);
    return rc;
}
