/*
 * gen_snapshot.c - a synthetic CUDA caching-allocator snapshot, as
 * torch.cuda.memory._dump_snapshot() writes it, for benchmarking the
 * snapshot import (tests/bench/snapshot.sh).
 *
 *   gen_snapshot [--seed N] [--size-mb N] [--entries N] [--min-entries N] > snap.pickle
 *
 * Writes to stdout a protocol-4 pickle laid out byte for byte as CPython's
 * pickle.dump lays out the dict torch builds (docs/formats/
 * allocator-snapshot.md): {segments, device_traces, allocator_settings,
 * external_annotations}. FRAME opcodes every 64 KiB, MEMOIZE after every
 * string, dict, list and tuple, BINGET/LONG_BINGET for every object met
 * again, EMPTY_DICT + MARK + SETITEMS (SETITEM for one item), EMPTY_LIST +
 * MARK + APPENDS in batches of 1000 (APPEND for a batch of one), the
 * smallest of BININT1/BININT2/BININT/LONG1 for ints.
 *
 * What torch shares is shared: the key and action strings, the frame
 * dicts (one per distinct frame), file names, the empty frames list of
 * blocks with no context; a block's frames list is its alloc entry's, a
 * segment's its segment_alloc entry's, a free's either the alloc's or its
 * own (context "all"), free_completed the free_requested's.
 *
 * The history: one device, allocations of a few size classes in segments of
 * 8 slots, frees (a few left pending: free_requested without
 * free_completed), segment_alloc when a class has no free slot,
 * segment_free for some emptied segments, an oom every 400,000 entries.
 * Stacks of 8 to 30 frames come from 20,000 call sites over 3,000 distinct
 * frames (C++ frames first, then torch's, then the user's). The segments
 * list is the state the history ends in.
 *
 * Entries: --entries N exactly, else as many as make --size-mb MiB (default
 * 512) to 3% more, and at least --min-entries (default 1,000,000). The
 * same seeded history is run several times: once to estimate the entry
 * count, then (each time the file is counted or written) once for the end
 * state, which the segments list, first in the file, shows, and once
 * written; a count off the size is corrected before the file is written.
 *
 * The ground truth goes to stderr as one line:
 *   gen: bytes=B entries=N alloc=.. free_requested=.. free_completed=..
 *        segment_alloc=.. segment_free=.. oom=.. segments=S blocks=K
 *        reserved=R allocated=A peak_allocated=P frames=F stacks=T
 * (allocated counts active_allocated and active_pending_free blocks).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*-*** randomness ***/

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state += 0x9e3779b97f4a7c15ull;
    return mix64(rng_state);
}
static uint64_t below(uint64_t n)
{
    return rnd() % n;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "gen_snapshot: out of memory\n");
        exit(1);
    }
    return p;
}

static void *xrealloc(void *p, size_t size)
{
    p = realloc(p, size);
    if (!p) {
        fprintf(stderr, "gen_snapshot: out of memory\n");
        exit(1);
    }
    return p;
}

/*-*** the pickler: what CPython's pickle.dump writes at protocol 4 ***/

#define FRAME_TARGET 65536
#define BATCH 1000
#define NO_MEMO UINT32_MAX

typedef struct {
    FILE *out; /* NULL: count only */
    unsigned char *frame;
    size_t flen, fcap;
    uint64_t total;
    uint32_t memo; /* the next memo index */
} pickler;

static void emit(pickler *w, const void *data, size_t n)
{
    if (w->flen + n > w->fcap) {
        w->fcap = (w->flen + n) * 2;
        w->frame = xrealloc(w->frame, w->fcap);
    }
    memcpy(w->frame + w->flen, data, n);
    w->flen += n;
}

static void emit1(pickler *w, unsigned char op)
{
    emit(w, &op, 1);
}

static void emit_le(pickler *w, uint64_t v, int n)
{
    unsigned char b[8];
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    emit(w, b, (size_t)n);
}

static void put_out(pickler *w, const void *data, size_t n)
{
    w->total += n;
    if (w->out && fwrite(data, 1, n, w->out) != n) {
        perror("gen_snapshot: write");
        exit(1);
    }
}

/* _Framer.commit_frame: at the start of every save(), a frame of 64 KiB or
 * more is written out behind its FRAME opcode (force: the last one). */
static void commit(pickler *w, int force)
{
    if (w->flen < FRAME_TARGET && !(force && w->flen > 0))
        return;
    if (w->flen >= 4) {
        unsigned char head[9] = {0x95};
        for (int i = 0; i < 8; i++)
            head[1 + i] = (unsigned char)((uint64_t)w->flen >> (8 * i));
        put_out(w, head, sizeof head);
    }
    put_out(w, w->frame, w->flen);
    w->flen = 0;
}

static uint32_t memoize(pickler *w)
{
    emit1(w, 0x94); /* MEMOIZE */
    return w->memo++;
}

static void save_get(pickler *w, uint32_t idx)
{
    commit(w, 0);
    if (idx < 256) {
        emit1(w, 'h');
        emit1(w, (unsigned char)idx);
    } else {
        emit1(w, 'j');
        emit_le(w, idx, 4);
    }
}

/* save_long */
static void save_int(pickler *w, int64_t x)
{
    commit(w, 0);
    if (x >= 0 && x <= 0xff) {
        emit1(w, 'K');
        emit1(w, (unsigned char)x);
    } else if (x >= 0 && x <= 0xffff) {
        emit1(w, 'M');
        emit_le(w, (uint64_t)x, 2);
    } else if (x >= INT32_MIN && x <= INT32_MAX) {
        emit1(w, 'J');
        emit_le(w, (uint64_t)x, 4);
    } else { /* encode_long: the fewest two's-complement bytes */
        int n = 8;
        while (n > 1) {
            unsigned char top = (unsigned char)((uint64_t)x >> (8 * (n - 1)));
            unsigned char next = (unsigned char)((uint64_t)x >> (8 * (n - 2)));
            if ((top == 0 && !(next & 0x80)) || (top == 0xff && (next & 0x80)))
                n--;
            else
                break;
        }
        emit1(w, 0x8a);
        emit1(w, (unsigned char)n);
        emit_le(w, (uint64_t)x, n);
    }
}

static void save_bool(pickler *w, int b)
{
    commit(w, 0);
    emit1(w, b ? 0x88 : 0x89);
}

static void save_float(pickler *w, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    commit(w, 0);
    emit1(w, 'G');
    for (int i = 7; i >= 0; i--)
        emit1(w, (unsigned char)(bits >> (8 * i)));
}

/* A str object: *memo is where pickle's memo has it (NO_MEMO: not yet).
 * memo NULL: a string object of its own, never met again. */
static void save_str(pickler *w, const char *s, uint32_t *memo)
{
    if (memo && *memo != NO_MEMO) {
        save_get(w, *memo);
        return;
    }
    commit(w, 0);
    size_t n = strlen(s);
    if (n < 256) {
        emit1(w, 0x8c);
        emit1(w, (unsigned char)n);
    } else {
        emit1(w, 'X');
        emit_le(w, n, 4);
    }
    emit(w, s, n);
    uint32_t idx = memoize(w);
    if (memo)
        *memo = idx;
}

/* A dict or list: EMPTY_DICT/EMPTY_LIST, MEMOIZE, then its items in
 * batches of 1000 (batch_begin before each item, batch_end after the
 * last). */
typedef struct {
    size_t n, i;
    int dict;
} batch;

static uint32_t open_cont(pickler *w, batch *b, int dict, size_t n)
{
    commit(w, 0);
    emit1(w, dict ? '}' : ']');
    b->n = n;
    b->i = 0;
    b->dict = dict;
    return memoize(w);
}

static size_t batch_len(const batch *b)
{
    size_t start = b->i / BATCH * BATCH;
    return b->n - start < BATCH ? b->n - start : BATCH;
}

static void item_begin(pickler *w, batch *b)
{
    if (b->i % BATCH == 0 && batch_len(b) > 1)
        emit1(w, '(');
}

static void item_end(pickler *w, batch *b)
{
    b->i++;
    if (b->i % BATCH == 0 || b->i == b->n) {
        size_t len = b->i % BATCH ? b->i % BATCH : BATCH;
        if (len > 1)
            emit1(w, b->dict ? 'u' : 'e');
        else
            emit1(w, b->dict ? 's' : 'a');
    }
}

/* A dict of n (2 to 1000) items: EMPTY_DICT, MEMOIZE, MARK, the n keys and
 * values, SETITEMS. */
static uint32_t dict_open(pickler *w)
{
    commit(w, 0);
    emit1(w, '}');
    uint32_t idx = memoize(w);
    emit1(w, '(');
    return idx;
}

static void dict_close(pickler *w)
{
    emit1(w, 'u');
}

/*-*** shared strings ***/

enum {
    K_SEGMENTS,
    K_DEVICE_TRACES,
    K_SETTINGS,
    K_ANNOTATIONS,
    K_DEVICE,
    K_ADDRESS,
    K_TOTAL_SIZE,
    K_ALLOCATED_SIZE,
    K_ACTIVE_SIZE,
    K_REQUESTED_SIZE,
    K_STREAM,
    K_SEGMENT_TYPE,
    K_POOL,
    K_EXPANDABLE,
    K_FRAMES,
    K_BLOCKS,
    K_SIZE,
    K_STATE,
    K_ACTION,
    K_ADDR,
    K_TIME_US,
    K_DEVICE_FREE,
    K_FILENAME,
    K_LINE,
    K_NAME,
    S_LARGE,
    S_SMALL,
    S_ACTIVE_ALLOCATED,
    S_ACTIVE_PENDING_FREE,
    S_INACTIVE,
    A_ALLOC,
    A_FREE_REQUESTED,
    A_FREE_COMPLETED,
    A_SEGMENT_ALLOC,
    A_SEGMENT_FREE,
    A_OOM,
    NSTR
};
static const char *const strings[NSTR] = {"segments",
                                          "device_traces",
                                          "allocator_settings",
                                          "external_annotations",
                                          "device",
                                          "address",
                                          "total_size",
                                          "allocated_size",
                                          "active_size",
                                          "requested_size",
                                          "stream",
                                          "segment_type",
                                          "segment_pool_id",
                                          "is_expandable",
                                          "frames",
                                          "blocks",
                                          "size",
                                          "state",
                                          "action",
                                          "addr",
                                          "time_us",
                                          "device_free",
                                          "filename",
                                          "line",
                                          "name",
                                          "large",
                                          "small",
                                          "active_allocated",
                                          "active_pending_free",
                                          "inactive",
                                          "alloc",
                                          "free_requested",
                                          "free_completed",
                                          "segment_alloc",
                                          "segment_free",
                                          "oom"};
static uint32_t str_memo[NSTR];

static void save_shared(pickler *w, int id)
{
    save_str(w, strings[id], &str_memo[id]);
}

/*-*** frames and stacks ***/

#define NFRAMES 3000
#define CPP_FRAMES 300
#define TORCH_FRAMES 1200 /* then the user's */
#define TORCH_FILES 200
#define USER_FILES 50
#define NSITES 20000
#define MIN_DEPTH 8
#define MAX_DEPTH 30

static uint32_t frame_memo[NFRAMES];
static uint32_t file_memo[TORCH_FILES + USER_FILES + 1];
static unsigned char frame_used[NFRAMES];
static uint64_t site_digest[NSITES]; /* 0: not used yet */
static uint64_t seed;

static int site_stack(uint32_t site, int *frames)
{
    uint64_t h = mix64(seed ^ ((uint64_t)site << 20));
    int depth = MIN_DEPTH + (int)(h % (MAX_DEPTH - MIN_DEPTH + 1));
    int cpp = 2 + (int)((h >> 8) % 3), user = depth / 3;
    for (int i = 0; i < depth; i++) {
        uint64_t r = mix64(h + (uint64_t)i);
        if (i < cpp)
            frames[i] = (int)(r % CPP_FRAMES);
        else if (i < depth - user)
            frames[i] = CPP_FRAMES + (int)(r % TORCH_FRAMES);
        else
            frames[i] =
                CPP_FRAMES + TORCH_FRAMES + (int)(r % (NFRAMES - CPP_FRAMES - TORCH_FRAMES));
    }
    return depth;
}

static void save_frame(pickler *w, int f)
{
    if (frame_memo[f] != NO_MEMO) {
        save_get(w, frame_memo[f]);
        return;
    }
    char file[128], name[96];
    int fileno;
    if (f < CPP_FRAMES) {
        fileno = TORCH_FILES + USER_FILES;
        snprintf(file, sizeof file, "??");
        snprintf(name, sizeof name,
                 "c10::cuda::CUDACachingAllocator::Native::fn_%d(unsigned long)", f);
    } else if (f < CPP_FRAMES + TORCH_FRAMES) {
        fileno = (int)(mix64((uint64_t)f) % TORCH_FILES);
        snprintf(file, sizeof file,
                 "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module_%d.py", fileno);
        snprintf(name, sizeof name, "_call_impl_%d", (int)(mix64((uint64_t)f + 1) % 400));
    } else {
        fileno = TORCH_FILES + (int)(mix64((uint64_t)f) % USER_FILES);
        snprintf(file, sizeof file, "/workspace/project/train/model_%d.py", fileno - TORCH_FILES);
        snprintf(name, sizeof name, "forward_%d", (int)(mix64((uint64_t)f + 1) % 300));
    }
    frame_memo[f] = dict_open(w);
    save_shared(w, K_NAME);
    save_str(w, name, NULL);
    save_shared(w, K_FILENAME);
    save_str(w, file, &file_memo[fileno]);
    save_shared(w, K_LINE);
    save_int(w, f < CPP_FRAMES ? 0 : 1 + f);
    dict_close(w);
}

static void note_site(uint32_t site)
{
    if (site_digest[site])
        return;
    int frames[MAX_DEPTH];
    int depth = site_stack(site, frames);
    uint64_t h = 0x57ac;
    for (int i = 0; i < depth; i++) {
        h = mix64(h ^ (uint64_t)frames[i]);
        frame_used[frames[i]] = 1;
    }
    site_digest[site] = h | 1;
}

/* A new frames list (a traceback of its own); its memo index. */
static uint32_t save_frames(pickler *w, uint32_t site)
{
    int frames[MAX_DEPTH];
    int depth = site_stack(site, frames);
    note_site(site);
    batch b;
    uint32_t idx = open_cont(w, &b, 0, (size_t)depth);
    for (int i = 0; i < depth; i++) {
        item_begin(w, &b);
        save_frame(w, frames[i]);
        item_end(w, &b);
    }
    return idx;
}

/* A frames list: the one at *memo if already written, else a new one. */
static void save_frames_shared(pickler *w, uint32_t site, uint32_t *memo)
{
    if (*memo != NO_MEMO)
        save_get(w, *memo);
    else
        *memo = save_frames(w, site);
}

/*-*** the allocator ***/

#define SLOTS 8
#define NCLASSES 8
static const int64_t class_bytes[NCLASSES] = {512,     4096,    65536,    524288,
                                              2097152, 8388608, 20971520, 67108864};
static const int class_weight[NCLASSES] = {30, 25, 15, 10, 8, 6, 4, 2};

enum { FREE, LIVE, PENDING };

typedef struct {
    uint8_t state;
    uint32_t site, free_site; /* the alloc's and (own context) the free's */
    uint32_t list, free_list; /* memo of those frames lists */
    uint64_t serial;          /* the allocation's number */
} slot;

typedef struct {
    int64_t address, total;
    int cls, used, alive, listed;
    uint32_t site, list;
    slot slots[SLOTS];
} segment;

typedef struct {
    uint32_t seg, slot;
} ref;

typedef struct {
    pickler w;
    batch entries;
    segment *segs;
    size_t nsegs, segs_cap;
    ref *live;
    size_t nlive, live_cap;
    uint32_t *avail[NCLASSES]; /* per class: segments that had a free slot */
    size_t navail[NCLASSES], avail_cap[NCLASSES];
    ref pending[16];
    size_t npending;
    uint64_t serial, n_entries, limit;
    int64_t next_address, time_us, allocated, reserved, peak;
    uint64_t count[6];
    /* pass 2: the end state of pass 1 (which allocation each live slot
     * ends with, and the memo of the lists the segments list wrote) */
    const segment *final;
    size_t nfinal;
} history;

/* {action, addr|device_free, size, stream, time_us, frames}: the frames
 * list is the one at *list, or a new one from site. */
static void entry(history *h, int action, int64_t addr, int64_t size, uint32_t site,
                  uint32_t *list)
{
    pickler *w = &h->w;
    item_begin(w, &h->entries);
    dict_open(w);
    save_shared(w, K_ACTION);
    save_shared(w, action);
    const int keys[4] = {action == A_OOM ? K_DEVICE_FREE : K_ADDR, K_SIZE, K_STREAM, K_TIME_US};
    const int64_t fields[4] = {addr, size, 0, h->time_us};
    for (int i = 0; i < 4; i++) {
        save_shared(w, keys[i]);
        save_int(w, fields[i]);
    }
    save_shared(w, K_FRAMES);
    save_frames_shared(w, site, list);
    dict_close(w);
    item_end(w, &h->entries);
    h->count[action - A_ALLOC]++;
    h->n_entries++;
    h->time_us += 1 + (int64_t)below(40);
}

static const slot *final_slot(const history *h, ref r)
{
    return h->final && r.seg < h->nfinal ? &h->final[r.seg].slots[r.slot] : NULL;
}

/* Lists a segment as having a free slot (once). */
static void list_avail(history *h, uint32_t seg)
{
    segment *s = &h->segs[seg];
    if (s->listed)
        return;
    if (h->navail[s->cls] == h->avail_cap[s->cls]) {
        h->avail_cap[s->cls] = h->avail_cap[s->cls] ? 2 * h->avail_cap[s->cls] : 64;
        h->avail[s->cls] = xrealloc(h->avail[s->cls], h->avail_cap[s->cls] * sizeof(uint32_t));
    }
    h->avail[s->cls][h->navail[s->cls]++] = seg;
    s->listed = 1;
}

static uint32_t new_segment(history *h, int cls)
{
    if (h->nsegs == h->segs_cap) {
        h->segs_cap = h->segs_cap ? h->segs_cap * 2 : 256;
        h->segs = xrealloc(h->segs, h->segs_cap * sizeof *h->segs);
    }
    segment *s = &h->segs[h->nsegs];
    memset(s, 0, sizeof *s);
    s->cls = cls;
    s->total = class_bytes[cls] * SLOTS;
    s->address = h->next_address;
    s->alive = 1;
    s->site = (uint32_t)below(NSITES);
    s->list = NO_MEMO;
    if (h->final && h->nsegs < h->nfinal && h->final[h->nsegs].alive)
        s->list = h->final[h->nsegs].list; /* written in the segments list */
    h->next_address += (s->total + 0x1fffff) / 0x200000 * 0x200000;
    h->reserved += s->total;
    entry(h, A_SEGMENT_ALLOC, s->address, s->total, s->site, &s->list);
    list_avail(h, (uint32_t)h->nsegs);
    return (uint32_t)h->nsegs++;
}

static void do_oom(history *h);

static void do_alloc(history *h)
{
    int pick = (int)below(100), cls = 0;
    while (pick >= class_weight[cls])
        pick -= class_weight[cls++];
    /* the segment of the class that last had a free slot, else a new one */
    uint32_t seg = UINT32_MAX;
    while (h->navail[cls] && seg == UINT32_MAX) {
        segment *c = &h->segs[h->avail[cls][h->navail[cls] - 1]];
        if (c->alive && c->used < SLOTS)
            seg = h->avail[cls][h->navail[cls] - 1];
        else {
            c->listed = 0;
            h->navail[cls]--;
        }
    }
    if (seg == UINT32_MAX && h->n_entries + 1 >= h->limit) {
        do_oom(h); /* no room for two entries: the history ends on an oom */
        return;
    }
    if (seg == UINT32_MAX)
        seg = new_segment(h, cls);
    segment *s = &h->segs[seg];
    uint32_t k = 0;
    while (s->slots[k].state != FREE)
        k++;
    slot *sl = &s->slots[k];
    sl->state = LIVE;
    sl->serial = h->serial++;
    sl->site = (uint32_t)below(NSITES);
    sl->free_site = (uint32_t)below(4) ? UINT32_MAX : (uint32_t)below(NSITES);
    sl->list = sl->free_list = NO_MEMO;
    const slot *fin = final_slot(h, (ref){seg, k});
    if (fin && fin->state != FREE && fin->serial == sl->serial)
        sl->list = fin->list; /* the block in the segments list has it */
    s->used++;
    h->allocated += class_bytes[cls];
    if (h->allocated > h->peak)
        h->peak = h->allocated;
    if (h->nlive == h->live_cap) {
        h->live_cap = h->live_cap ? h->live_cap * 2 : 1024;
        h->live = xrealloc(h->live, h->live_cap * sizeof *h->live);
    }
    h->live[h->nlive++] = (ref){seg, k};
    entry(h, A_ALLOC, s->address + (int64_t)k * class_bytes[cls], class_bytes[cls], sl->site,
          &sl->list);
}

static int64_t slot_address(const history *h, ref r)
{
    const segment *s = &h->segs[r.seg];
    return s->address + (int64_t)r.slot * class_bytes[s->cls];
}

static uint32_t *free_list_of(slot *sl)
{
    return sl->free_site == UINT32_MAX ? &sl->list : &sl->free_list;
}

static void complete(history *h, ref r)
{
    segment *s = &h->segs[r.seg];
    slot *sl = &s->slots[r.slot];
    int64_t bytes = class_bytes[s->cls];
    entry(h, A_FREE_COMPLETED, slot_address(h, r), bytes,
          sl->free_site == UINT32_MAX ? sl->site : sl->free_site, free_list_of(sl));
    sl->state = FREE;
    s->used--;
    h->allocated -= bytes;
    list_avail(h, r.seg);
    if (s->used == 0 && below(20) == 0 && h->n_entries < h->limit) {
        s->alive = 0;
        h->reserved -= s->total;
        entry(h, A_SEGMENT_FREE, s->address, s->total, s->site, &s->list);
    }
}

static void do_free(history *h)
{
    size_t i = (size_t)below(h->nlive);
    ref r = h->live[i];
    h->live[i] = h->live[--h->nlive];
    slot *sl = &h->segs[r.seg].slots[r.slot];
    entry(h, A_FREE_REQUESTED, slot_address(h, r), class_bytes[h->segs[r.seg].cls],
          sl->free_site == UINT32_MAX ? sl->site : sl->free_site, free_list_of(sl));
    if (below(10) == 0 && h->npending < sizeof h->pending / sizeof *h->pending) {
        sl->state = PENDING; /* the stream still uses it */
        h->pending[h->npending++] = r;
        return;
    }
    if (h->n_entries < h->limit)
        complete(h, r);
    else
        sl->state = PENDING;
}

static void do_oom(history *h)
{
    uint32_t list = NO_MEMO;
    entry(h, A_OOM, 1073741824 + (int64_t)below(1 << 20) * 512, class_bytes[NCLASSES - 1] * 4,
          (uint32_t)below(NSITES), &list);
}

#define TARGET_LIVE 3000
#define OOM_EVERY 400000

static void step(history *h)
{
    if (h->n_entries % OOM_EVERY == OOM_EVERY / 2) {
        do_oom(h);
        return;
    }
    if (h->npending && below(3) == 0) {
        ref r = h->pending[0];
        memmove(h->pending, h->pending + 1, --h->npending * sizeof *h->pending);
        complete(h, r);
        return;
    }
    int alloc_pct = h->nlive < TARGET_LIVE ? 60 : 40;
    if (h->nlive == 0 || (int)below(100) < alloc_pct)
        do_alloc(h);
    else
        do_free(h);
}

/*-*** the file ***/

static void save_block(pickler *w, int64_t address, int64_t size, int state, uint32_t site,
                       uint32_t *list, uint32_t *empty)
{
    dict_open(w);
    save_shared(w, K_ADDRESS);
    save_int(w, address);
    save_shared(w, K_SIZE);
    save_int(w, size);
    save_shared(w, K_REQUESTED_SIZE);
    save_int(w, state == S_INACTIVE ? 0 : size);
    save_shared(w, K_STATE);
    save_shared(w, state);
    save_shared(w, K_FRAMES);
    if (state == S_INACTIVE) {
        if (*empty == NO_MEMO) {
            batch e;
            *empty = open_cont(w, &e, 0, 0);
        } else {
            save_get(w, *empty);
        }
    } else {
        save_frames_shared(w, site, list);
    }
    dict_close(w);
}

static size_t segment_blocks(const segment *s)
{
    size_t n = 0;
    for (int k = 0; k < SLOTS; k++)
        n += s->slots[k].state != FREE || k == 0 || s->slots[k - 1].state != FREE;
    return n;
}

/* One segment of the end state; the memo of the lists it writes goes back
 * into s (pass 2 shares them with the history). */
static void save_segment(pickler *w, segment *s, uint64_t *blocks, uint32_t *empty)
{
    int64_t cls = class_bytes[s->cls], allocated = 0, active = 0;
    for (int k = 0; k < SLOTS; k++) {
        allocated += s->slots[k].state == LIVE ? cls : 0;
        active += s->slots[k].state != FREE ? cls : 0;
    }
    dict_open(w);
    const int keys[7] = {K_DEVICE,      K_ADDRESS,        K_TOTAL_SIZE, K_ALLOCATED_SIZE,
                         K_ACTIVE_SIZE, K_REQUESTED_SIZE, K_STREAM};
    const int64_t vals[7] = {0, s->address, s->total, allocated, active, active, 0};
    for (int i = 0; i < 7; i++) {
        save_shared(w, keys[i]);
        save_int(w, vals[i]);
    }
    save_shared(w, K_SEGMENT_TYPE);
    save_shared(w, cls <= 1048576 ? S_SMALL : S_LARGE);
    save_shared(w, K_POOL);
    save_int(w, 0);
    save_int(w, 0);
    emit1(w, 0x86); /* TUPLE2 */
    memoize(w);
    save_shared(w, K_EXPANDABLE);
    save_bool(w, 0);
    save_shared(w, K_BLOCKS);
    batch bl;
    size_t nb = segment_blocks(s);
    open_cont(w, &bl, 0, nb);
    for (int k = 0; k < SLOTS;) {
        slot *sl = &s->slots[k];
        int run = 1;
        if (sl->state == FREE)
            while (k + run < SLOTS && s->slots[k + run].state == FREE)
                run++;
        int state = sl->state == LIVE      ? S_ACTIVE_ALLOCATED
                    : sl->state == PENDING ? S_ACTIVE_PENDING_FREE
                                           : S_INACTIVE;
        item_begin(w, &bl);
        save_block(w, s->address + k * cls, run * cls, state, sl->site, &sl->list, empty);
        item_end(w, &bl);
        k += run;
    }
    *blocks += nb;
    save_shared(w, K_FRAMES);
    save_frames_shared(w, s->site, &s->list);
    dict_close(w);
}

static void save_settings(pickler *w)
{
    static const char *const divisions[] = {"1", "2", "4", "8", "16", "32", "64", "128"};
    dict_open(w);
    save_str(w, "PYTORCH_CUDA_ALLOC_CONF", NULL);
    save_str(w, "expandable_segments:False", NULL);
    save_str(w, "max_split_size", NULL);
    save_int(w, INT64_MAX);
    save_str(w, "garbage_collection_threshold", NULL);
    save_float(w, 0.0);
    save_str(w, "expandable_segments", NULL);
    save_bool(w, 0);
    save_str(w, "pinned_num_register_threads", NULL);
    save_int(w, 1);
    save_str(w, "release_lock_on_cudamalloc", NULL);
    save_bool(w, 0);
    save_str(w, "pinned_use_cuda_host_register", NULL);
    save_bool(w, 0);
    save_str(w, "roundup_power2_divisions", NULL);
    dict_open(w);
    for (int i = 0; i < 8; i++) {
        save_str(w, divisions[i], NULL);
        save_int(w, 0);
    }
    dict_close(w);
    dict_close(w);
}

static void reset_memo(void)
{
    for (int i = 0; i < NSTR; i++)
        str_memo[i] = NO_MEMO;
    for (int i = 0; i < NFRAMES; i++)
        frame_memo[i] = NO_MEMO;
    for (size_t i = 0; i < sizeof file_memo / sizeof *file_memo; i++)
        file_memo[i] = NO_MEMO;
}

static void history_init(history *h, FILE *out, uint64_t limit)
{
    memset(h, 0, sizeof *h);
    h->w.out = out;
    h->limit = limit;
    h->next_address = 0x7f0000000000;
    h->time_us = 1732000000000000;
    rng_state = seed;
    reset_memo();
}

static void history_free(history *h)
{
    free(h->segs);
    free(h->live);
    free(h->w.frame);
    for (int k = 0; k < NCLASSES; k++)
        free(h->avail[k]);
}

/* The history, written as device_traces[0]: `limit` entries exactly. */
static void run_history(history *h)
{
    h->entries.n = h->limit; /* the batch layout needs the count */
    h->entries.i = 0;
    h->entries.dict = 0;
    while (h->n_entries < h->limit)
        step(h);
}

static void usage(void)
{
    fprintf(stderr, "usage: gen_snapshot [--seed N] [--size-mb N] [--entries N] "
                    "[--min-entries N] > snap.pickle\n");
    exit(2);
}

/* The snapshot with `entries` trace entries, written to out (NULL: only
 * counted); its size. Written, the ground truth goes to stderr. */
static uint64_t write_snapshot(FILE *out, uint64_t entries)
{
    history h;
    /* pass 2 needs the end state: the same history, not written */
    history_init(&h, NULL, entries);
    run_history(&h);
    history end = h;
    for (size_t i = 0; i < end.nsegs; i++) { /* memo indexes of that pass mean nothing */
        end.segs[i].list = NO_MEMO;
        for (int k = 0; k < SLOTS; k++)
            end.segs[i].slots[k].list = NO_MEMO;
    }
    /* the segments list, then the history again, written */
    memset(site_digest, 0, sizeof site_digest);
    memset(frame_used, 0, sizeof frame_used);
    history_init(&h, out, entries);
    pickler *w = &h.w;
    put_out(w, "\x80\x04", 2);
    batch root;
    open_cont(w, &root, 1, 4);
    item_begin(w, &root);
    save_shared(w, K_SEGMENTS);
    size_t nalive = 0;
    for (size_t i = 0; i < end.nsegs; i++)
        nalive += end.segs[i].alive;
    batch segs;
    open_cont(w, &segs, 0, nalive);
    uint64_t nblocks = 0;
    uint32_t empty = NO_MEMO;
    for (size_t i = 0; i < end.nsegs; i++) {
        if (!end.segs[i].alive)
            continue;
        item_begin(w, &segs);
        save_segment(w, &end.segs[i], &nblocks, &empty);
        item_end(w, &segs);
    }
    h.final = end.segs;
    h.nfinal = end.nsegs;
    save_shared(w, K_DEVICE_TRACES);
    batch devs;
    open_cont(w, &devs, 0, 1);
    item_begin(w, &devs);
    open_cont(w, &h.entries, 0, entries);
    run_history(&h);
    item_end(w, &devs);
    save_shared(w, K_SETTINGS);
    save_settings(w);
    save_shared(w, K_ANNOTATIONS);
    batch none;
    open_cont(w, &none, 0, 0);
    root.i = 3;
    item_end(w, &root);
    emit1(w, '.'); /* STOP */
    commit(w, 1);
    uint64_t total = w->total;
    history_free(&end);
    history_free(&h);
    if (!out)
        return total;
    if (fflush(out) != 0) {
        perror("gen_snapshot: write");
        exit(1);
    }
    uint64_t nframes = 0, nstacks = 0;
    for (int i = 0; i < NFRAMES; i++)
        nframes += frame_used[i];
    uint64_t *d = xcalloc(NSITES, sizeof *d);
    size_t nd = 0;
    for (int i = 0; i < NSITES; i++)
        if (site_digest[i])
            d[nd++] = site_digest[i];
    for (size_t i = 0; i < nd; i++) {
        size_t j = 0;
        while (j < i && d[j] != d[i])
            j++;
        nstacks += j == i;
    }
    free(d);
    fprintf(stderr,
            "gen: bytes=%" PRIu64 " entries=%" PRIu64 " alloc=%" PRIu64 " free_requested=%" PRIu64
            " free_completed=%" PRIu64 " segment_alloc=%" PRIu64 " segment_free=%" PRIu64
            " oom=%" PRIu64 " segments=%zu blocks=%" PRIu64 " reserved=%" PRId64
            " allocated=%" PRId64 " peak_allocated=%" PRId64 " frames=%" PRIu64 " stacks=%" PRIu64
            "\n",
            w->total, h.n_entries, h.count[0], h.count[1], h.count[2], h.count[3], h.count[4],
            h.count[5], nalive, nblocks, end.reserved, end.allocated, h.peak, nframes, nstacks);
    return w->total;
}

int main(int argc, char **argv)
{
    double size_mb = 512;
    uint64_t entries = 0, min_entries = 1000000;
    seed = 1;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--size-mb"))
            size_mb = strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--entries"))
            entries = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--min-entries"))
            min_entries = strtoull(argv[++i], NULL, 10);
        else
            usage();
    }
    seed = mix64(seed);
    if (!entries) {
        history h;
        /* pass 1: count bytes until the size is reached (a 1% margin: the
         * end state written first shares lists the history then skips) */
        history_init(&h, NULL, UINT64_MAX);
        uint64_t bytes = (uint64_t)(size_mb * 1048576.0 * 1.01);
        h.entries.n = SIZE_MAX;
        while (h.w.total + h.w.flen < bytes) {
            step(&h);
            if (h.w.flen >= FRAME_TARGET)
                commit(&h.w, 0);
        }
        entries = h.n_entries > min_entries ? h.n_entries : min_entries;
        history_free(&h);
        /* counted as written, corrected until within 3% above the size */
        for (int round = 0; round < 4; round++) {
            double want = size_mb * 1048576.0, got = (double)write_snapshot(NULL, entries);
            if ((got >= want && got <= want * 1.03) || entries == min_entries)
                break;
            uint64_t n = (uint64_t)((double)entries * want * 1.01 / got);
            entries = n > min_entries ? n : min_entries;
        }
    }
    write_snapshot(stdout, entries);
    return 0;
}
