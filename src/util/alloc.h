/*-*** alloc.h: the one out-of-memory policy ***/
/*
 * Our allocations go through these vr_x* functions, which print one line
 * ("vramreport: out of memory (N bytes)") and exit on failure: a report
 * tool that cannot get the memory it asks for has no useful way to go on,
 * and a caller that tried would have to test every string it builds. The
 * exit is _Exit(1), not abort(): users want no core dump for a machine out
 * of memory, a worker thread may be the one that fails (exit() would run
 * atexit handlers and flush stdio under the other threads' feet), and half
 * a buffered report is never flushed. No test relies on SIGABRT. A request
 * whose size overflows size_t is out of memory too; its N is SIZE_MAX.
 *
 * A library's allocation failure is an error value passed up with its
 * code: SQLite's SQLITE_NOMEM (its message, through vr_db_fail), zstd's
 * and zlib's decoders that cannot start, expat's parser that cannot be
 * made. Nothing degrades silently: no table left out, no cache that keeps
 * filling after it could not grow.
 *
 * cJSON allocates through vr_xmalloc and free: main() installs them with
 * cJSON_InitHooks before anything else, so a cJSON_Create* or cJSON_Add*
 * that returns NULL was given a NULL argument, never out of memory, and its
 * result needs no check for memory.
 *
 * The only bare malloc/calloc/realloc in src/ are these functions' own
 * (util/buf.c). The allocations that are the libraries' own:
 *   - SQLite's virtual tables (batch/batch.c) take sqlite3_malloc, as SQLite
 *     frees what it is given with sqlite3_free; NULL is SQLITE_NOMEM.
 *   - cmark-gfm (Markdown to HTML, render/out/html.c) is given these
 *     functions (cmark_parser_new_with_mem); only its syntax extensions'
 *     registration, once, uses its default allocator, which prints its own
 *     line and aborts when calloc or realloc fails.
 *   - libc's realpath(path, NULL) and scandir (input/walk.c): a failure,
 *     ENOMEM among them, is what they say: a folder that cannot be read, a
 *     link that cannot be resolved.
 * Memory these hand back is released with free (or sqlite3_free).
 */
#ifndef VR_ALLOC_H
#define VR_ALLOC_H

#include <stddef.h>

/* malloc/calloc/realloc/strdup that exit on failure (see above); a size 0
 * asks for 1 byte, so the result is never NULL. vr_xcalloc refuses a count
 * × size that overflows. */
void *vr_xmalloc(size_t n);
void *vr_xcalloc(size_t count, size_t size);
void *vr_xrealloc(void *p, size_t n);
char *vr_xstrdup(const char *s);
char *vr_xstrndup(const char *s, size_t n);

/* Grows the array *p of *cap elements of `size` bytes so index `need` - 1
 * fits (doubling, at least `first`); new elements are not initialised. A
 * capacity whose bytes overflow size_t is out of memory. */
void vr_xgrow(void *p, size_t *cap, size_t need, size_t size, size_t first);

#endif
