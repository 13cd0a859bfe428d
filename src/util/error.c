#include "error.h"

#include <stdio.h>

int vr_fail(vr_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
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
