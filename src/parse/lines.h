/*-*** lines.h: text cut into lines, each bounded ***/
/*
 * A format-neutral line splitter for readers of text (nvidia-smi's logs,
 * gpustat, memory_summary()) and their fuzz targets. Bytes come in pieces
 * of any size (a read of a file, a whole fuzz input); each line goes out
 * without its end: LF, or CRLF (the CR dropped). The last line may lack
 * one (vr_lines_end). A line longer than the buffer holds comes cut, its
 * first `size - 1` bytes with `cut` set, and the rest of it is skipped,
 * so memory is the caller's buffer whatever the input. Lines are numbered
 * from 1 and carry the byte offset of their first byte, for messages.
 *
 * Ownership: the buffer is the caller's, given to vr_lines_init and used
 * until the last line; a line's text lies in it (NUL-terminated) and is
 * valid until the next call.
 */
#ifndef VR_LINES_H
#define VR_LINES_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *text; /* NUL-terminated; valid until the next call */
    size_t len;       /* without its end */
    uint64_t number;  /* from 1 */
    uint64_t offset;  /* of its first byte, from the first byte fed */
    int cut;          /* longer than the buffer: its head, the rest skipped */
} vr_line;

typedef struct {
    char *buf;
    size_t max;      /* bytes of a line kept: the buffer's size - 1 */
    size_t len;      /* of the line gathered so far */
    int cut;         /* the line gathered went past max */
    uint64_t number; /* lines passed */
    uint64_t offset; /* bytes taken */
    uint64_t start;  /* the offset of the line gathered */
} vr_lines;

/* `buf` holds `size` bytes, at least 2: lines up to size - 1 bytes. */
void vr_lines_init(vr_lines *ls, char *buf, size_t size);

/* Takes the bytes *p (*n of them) up to the next LF, advancing *p and *n
 * past what it took: 1 with *line set when a line ended there, 0 when it
 * took them all and the line goes on in the next bytes. */
int vr_lines_next(vr_lines *ls, const char **p, size_t *n, vr_line *line);

/* At the end of the input: 1 with *line set when a last line came
 * without an LF (and was not empty), else 0. */
int vr_lines_end(vr_lines *ls, vr_line *line);

#endif
