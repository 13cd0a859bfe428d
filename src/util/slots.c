/*-*** slots.c: 32-bit slots by index, cold pages in a temporary file ***/
#include "util/slots.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"

#define PAGE_BYTES (VR_SLOTS_PAGE * sizeof(uint32_t))
#define PAGE_MASK (VR_SLOTS_PAGE - 1)
/* Page numbers past this would overflow the file offset (a 32-bit off_t
 * holds 2 GiB of pages) or the table. */
#define MAX_PAGES (sizeof(off_t) >= 8 ? (uint64_t)1 << 40 : ((uint64_t)1 << 31) / PAGE_BYTES)

void vr_slots_init(vr_slots *s, size_t max_resident, vr_slots_charge_fn charge, void *ctx)
{
    memset(s, 0, sizeof *s);
    s->max_resident = max_resident < 2 ? 2 : max_resident;
    s->fd = -1;
    s->charge = charge;
    s->ctx = ctx;
}

/* Asks for `bytes` more; a refusal is remembered. */
static int charge(vr_slots *s, size_t bytes)
{
    if (!s->charge || s->charge(s->ctx, (ptrdiff_t)bytes) == 0)
        return 0;
    if (s->status == VR_SLOTS_OK)
        s->status = VR_SLOTS_NO_MEMORY;
    return -1;
}

static void uncharge(vr_slots *s, size_t bytes)
{
    if (s->charge && bytes)
        s->charge(s->ctx, -(ptrdiff_t)bytes);
}

static int file_failed(vr_slots *s)
{
    if (s->status == VR_SLOTS_OK) {
        s->status = VR_SLOTS_FILE;
        s->sys_errno = errno ? errno : EIO;
    }
    return -1;
}

/* The temporary file, made when the first page goes out and unlinked at
 * once: nothing is left behind, whatever ends the process. */
static int open_file(vr_slots *s)
{
    if (s->fd >= 0)
        return 0;
    const char *dir = getenv("TMPDIR");
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/vramreport-memo-XXXXXX", dir && *dir ? dir : "/tmp");
    if (n < 0 || (size_t)n >= sizeof path) {
        errno = ENAMETOOLONG;
        return file_failed(s);
    }
    int fd = mkstemp(path);
    if (fd < 0)
        return file_failed(s);
    unlink(path);
    s->fd = fd;
    return 0;
}

/* Page n's bytes to or from the file, whole (a short count goes on). */
static int transfer(vr_slots *s, size_t n, uint32_t *page, int out)
{
    char *b = (char *)page;
    size_t left = PAGE_BYTES;
    off_t off = (off_t)n * (off_t)PAGE_BYTES;
    while (left > 0) {
        ssize_t k = out ? pwrite(s->fd, b, left, off) : pread(s->fd, b, left, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = EIO; /* our own file ends early: it was changed under us */
            return file_failed(s);
        }
        b += k;
        left -= (size_t)k;
        off += k;
    }
    return 0;
}

/* Room in the queue for one more page in memory: it grows with them (a
 * large max_resident costs nothing until used), to max_resident. Until
 * it is full, head is 0 and pages are in queue[0 .. nresident). */
static int queue_room(vr_slots *s)
{
    if (s->nresident < s->queue_cap)
        return 0;
    size_t cap = s->queue_cap ? s->queue_cap * 2 : 16;
    cap = cap < s->max_resident ? cap : s->max_resident;
    if (charge(s, (cap - s->queue_cap) * sizeof *s->queue) < 0)
        return -1;
    s->queue = vr_xrealloc(s->queue, cap * sizeof *s->queue);
    s->queue_cap = cap;
    return 0;
}

/* Memory for one more page in memory: new while fewer than max_resident
 * are, else the oldest's, written out first. */
static uint32_t *take_page_memory(vr_slots *s)
{
    if (s->nresident < s->max_resident) {
        if (queue_room(s) < 0)
            return NULL;
        if (charge(s, PAGE_BYTES) < 0)
            return NULL;
        return vr_xmalloc(PAGE_BYTES);
    }
    size_t old = s->queue[s->head];
    if (open_file(s) < 0 || transfer(s, old, s->page[old], 1) < 0)
        return NULL;
    s->writes++;
    uint32_t *mem = s->page[old];
    s->page[old] = NULL;
    s->state[old] = VR_SLOTS_OUT;
    s->head = (s->head + 1) % s->max_resident;
    s->nresident--;
    return mem;
}

/* Brings page n into memory: read back from the file, or made (zeros). */
static uint32_t *page_in(vr_slots *s, size_t n)
{
    uint32_t *mem = take_page_memory(s);
    if (!mem)
        return NULL;
    if (s->state[n] == VR_SLOTS_OUT) {
        if (transfer(s, n, mem, 0) < 0) {
            free(mem);
            uncharge(s, PAGE_BYTES);
            return NULL;
        }
        s->loads++;
    } else {
        memset(mem, 0, PAGE_BYTES);
        s->made++;
    }
    s->state[n] = VR_SLOTS_IN;
    s->page[n] = mem;
    s->queue[(s->head + s->nresident) % s->max_resident] = n;
    s->nresident++;
    return mem;
}

/* Knows page numbers up to npages - 1 (the new ones never made). */
static int grow_table(vr_slots *s, uint64_t npages)
{
    if (npages <= s->npages)
        return 0;
    if (npages > MAX_PAGES || npages > SIZE_MAX / (sizeof *s->page + 1) / 2) {
        if (s->status == VR_SLOTS_OK)
            s->status = VR_SLOTS_NO_MEMORY;
        return -1;
    }
    if (npages > s->table_cap) {
        size_t cap = s->table_cap ? s->table_cap : 64;
        while (cap < npages)
            cap *= 2;
        if (charge(s, (cap - s->table_cap) * (sizeof *s->page + 1)) < 0)
            return -1;
        s->page = vr_xrealloc(s->page, cap * sizeof *s->page);
        s->state = vr_xrealloc(s->state, cap);
        memset(s->page + s->table_cap, 0, (cap - s->table_cap) * sizeof *s->page);
        memset(s->state + s->table_cap, 0, cap - s->table_cap);
        s->table_cap = cap;
    }
    s->npages = (size_t)npages;
    return 0;
}

uint32_t vr_slots_get_slow(vr_slots *s, uint64_t idx)
{
    uint64_t n = idx >> VR_SLOTS_PAGE_BITS;
    if (n >= s->npages || s->state[n] != VR_SLOTS_OUT)
        return 0; /* never made (a page in memory took the fast path) */
    uint32_t *page = page_in(s, (size_t)n);
    return page ? page[idx & PAGE_MASK] : 0;
}

int vr_slots_set_slow(vr_slots *s, uint64_t idx, uint32_t value)
{
    uint64_t n = idx >> VR_SLOTS_PAGE_BITS;
    if (grow_table(s, n + 1) < 0)
        return -1;
    uint32_t *page = s->page[n] ? s->page[n] : page_in(s, (size_t)n);
    if (!page)
        return -1;
    page[idx & PAGE_MASK] = value;
    return 0;
}

void vr_slots_free(vr_slots *s)
{
    for (size_t n = 0; n < s->npages; n++)
        if (s->page[n]) {
            free(s->page[n]);
            uncharge(s, PAGE_BYTES);
        }
    uncharge(s, s->table_cap * (sizeof *s->page + 1) + s->queue_cap * sizeof *s->queue);
    free(s->page);
    free(s->state);
    free(s->queue);
    if (s->fd >= 0)
        close(s->fd);
    vr_slots_init(s, s->max_resident, s->charge, s->ctx);
}
