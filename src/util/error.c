#include "util/error.h"

#include <stdio.h>

static void set_error(vr_error *err, vr_error_code code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void set_error(vr_error *err, vr_error_code code, const char *fmt, va_list ap)
{
    if (!err)
        return;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    err->code = code;
}

int vr_fail(vr_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(err, VR_ERR_FAILED, fmt, ap);
    va_end(ap);
    return -1;
}

int vr_fail_code(vr_error *err, vr_error_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(err, code, fmt, ap);
    va_end(ap);
    return -1;
}

void vr_warn(const vr_warner *w, const char *fmt, ...)
{
    if (!w || !w->fn)
        return;
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    w->fn(w->userdata, line);
}
