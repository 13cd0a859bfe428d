/*-*** lines.c: text cut into lines, each bounded (lines.h) ***/
#include "parse/lines.h"

#include <string.h>

void vr_lines_init(vr_lines *ls, char *buf, size_t size)
{
    memset(ls, 0, sizeof *ls);
    ls->buf = buf;
    ls->max = size > 1 ? size - 1 : 0;
}

/* Adds bytes to the line being gathered, up to max: a CR that ends up
 * past max makes the line cut, as any byte would. */
static void gather(vr_lines *ls, const char *p, size_t n)
{
    size_t room = ls->max - ls->len;
    if (n > room) {
        ls->cut = 1;
        n = room;
    }
    memcpy(ls->buf + ls->len, p, n);
    ls->len += n;
}

/* Passes the line gathered (its CR, before the LF, dropped unless the
 * line was cut) and starts the next at the current offset. */
static void emit(vr_lines *ls, vr_line *line)
{
    size_t len = ls->len;
    if (!ls->cut && len > 0 && ls->buf[len - 1] == '\r')
        len--;
    ls->buf[len] = '\0';
    *line = (vr_line){ls->buf, len, ++ls->number, ls->start, ls->cut};
    ls->len = 0;
    ls->cut = 0;
    ls->start = ls->offset;
}

int vr_lines_next(vr_lines *ls, const char **p, size_t *n, vr_line *line)
{
    if (*n == 0)
        return 0;
    const char *nl = memchr(*p, '\n', *n);
    size_t take = nl ? (size_t)(nl - *p) : *n;
    gather(ls, *p, take);
    size_t used = nl ? take + 1 : take;
    *p += used;
    *n -= used;
    ls->offset += used;
    if (!nl)
        return 0;
    emit(ls, line);
    return 1;
}

int vr_lines_end(vr_lines *ls, vr_line *line)
{
    if (ls->len == 0 && !ls->cut)
        return 0;
    emit(ls, line);
    return 1;
}
