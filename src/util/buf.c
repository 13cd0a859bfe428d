#include "util/buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The policy of util/alloc.h: one line, then _Exit (no core dump, no
 * atexit handlers or stdio flushing racing the other threads). */
static void die_oom(size_t n)
{
    fprintf(stderr, "vramreport: out of memory (%zu bytes)\n", n);
    _Exit(1);
}

void *vr_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die_oom(n);
    return p;
}

void *vr_xcalloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        die_oom(SIZE_MAX);
    int none = !count || !size; /* one byte, as vr_xmalloc(0) */
    void *p = calloc(none ? 1 : count, none ? 1 : size);
    if (!p)
        die_oom(count * size);
    return p;
}

void *vr_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        die_oom(n);
    return q;
}

void vr_xgrow(void *p, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return;
    size_t n = *cap ? *cap : first ? first : 1;
    while (n < need)
        n = n > SIZE_MAX / 2 ? need : n * 2;
    if (size && n > SIZE_MAX / size)
        die_oom(SIZE_MAX);
    void **arr = p;
    *arr = vr_xrealloc(*arr, n * size);
    *cap = n;
}

char *vr_xstrndup(const char *s, size_t n)
{
    if (n == SIZE_MAX)
        die_oom(SIZE_MAX);
    char *p = vr_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *vr_xstrdup(const char *s)
{
    return vr_xstrndup(s, strlen(s));
}

void vr_buf_reserve(vr_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - 1 - b->len)
        die_oom(SIZE_MAX);
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    b->data = vr_xrealloc(b->data, cap);
    b->cap = cap;
}

void vr_buf_append(vr_buf *b, const void *bytes, size_t n)
{
    vr_buf_reserve(b, n);
    if (n)
        memcpy(b->data + b->len, bytes, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void vr_buf_append_cb(void *out, const char *bytes, size_t n)
{
    vr_buf_append(out, bytes, n);
}

void vr_buf_puts(vr_buf *b, const char *s)
{
    vr_buf_append(b, s, strlen(s));
}

void vr_buf_putc(vr_buf *b, char c)
{
    vr_buf_append(b, &c, 1);
}

void vr_buf_vprintf(vr_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)n < sizeof small) {
        vr_buf_append(b, small, (size_t)n);
    } else {
        vr_buf_reserve(b, (size_t)n);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
}

void vr_buf_printf(vr_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vr_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void vr_buf_clear(vr_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

char *vr_buf_detach(vr_buf *b)
{
    char *p = b->data;
    if (!p)
        p = vr_xstrdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

void vr_buf_free(vr_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
