/*-*** buf.h: a growable byte buffer ***/
/*
 * vr_buf owns its storage: vr_buf_free() releases it, vr_buf_detach() hands
 * it to the caller (who then free()s it). Data is always NUL-terminated
 * after a successful append, so it can be used as a C string when it holds
 * no NUL bytes. Allocation failure exits, as util/alloc.h says (the vr_x*
 * functions are declared there; this header includes it).
 */
#ifndef VR_BUF_H
#define VR_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "util/alloc.h"

typedef struct {
    char *data;
    size_t len;
    size_t cap;
} vr_buf;

#define VR_BUF_INIT \
    {               \
        NULL, 0, 0  \
    }

void vr_buf_reserve(vr_buf *b, size_t extra);
void vr_buf_append(vr_buf *b, const void *bytes, size_t n);
void vr_buf_puts(vr_buf *b, const char *s);
void vr_buf_putc(vr_buf *b, char c);
void vr_buf_printf(vr_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vr_buf_vprintf(vr_buf *b, const char *fmt, va_list ap);
void vr_buf_clear(vr_buf *b);
char *vr_buf_detach(vr_buf *b);
void vr_buf_free(vr_buf *b);

/* Callback shape used by escapers: appends to the vr_buf behind `out`. */
void vr_buf_append_cb(void *out, const char *bytes, size_t n);

#endif
