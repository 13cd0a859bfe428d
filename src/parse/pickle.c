/* A stack machine like CPython's Unpickler (Modules/_pickle.c), restricted
 * to the opcodes that plain data needs (pickle.h lists them). Three things
 * differ from CPython, all for hostile or huge files:
 *
 * - Input comes in chunks. An opcode and its fixed argument (at most 8
 *   bytes) that straddle two chunks wait in a 9-byte carry buffer; the bytes
 *   of a string are gathered as they arrive, so a file that only claims a
 *   length costs nothing beyond what it holds.
 * - Every byte the decoder holds (nodes, strings, item arrays, the stack,
 *   the marks, the memo) is counted in `held` and refused past max_bytes
 *   before it is allocated. A value's nesting depth and its size counted
 *   with every shared reference expanded are kept in the node and checked
 *   as items go into a container, so no walk is ever needed, and freeing
 *   recurses at most max_depth levels.
 * - A container may only be filled while it is inside nothing (pickle.dump
 *   fills each container before it puts it anywhere). That makes reference
 *   cycles impossible (refcounts then always free everything) and keeps the
 *   depth and size figures exact.
 *
 * Streaming. The elements of a streamed list are handed to on_element as
 * they are appended, then released in "strip" mode: a container whose last
 * holder is the memo is taken out of the memo (leaving its tag, or "gone")
 * and freed, and its items are released the same way. So an element never
 * stays alive through the memo, whatever it shares with later ones. */
#include "parse/pickle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/slots.h"

/*-*** limits ***/

#define MIB ((uint64_t)1 << 20)
#define DEFAULT_DEPTH 256
#define DEFAULT_ITEMS ((size_t)1 << 26)
#define DEFAULT_MEMO ((size_t)1 << 30)
#define DEFAULT_MEMO_IN_MEMORY ((size_t)8 << 20)
/* Memo pages made, at most: one slot (4 bytes) for every byte read, and
 * this many more (pickle.dump's memo takes two bytes a slot at the very
 * least: EMPTY_DICT MEMOIZE). A file whose BINPUTs spread over more (one
 * far slot each) is refused: its memo would fill the disk. */
#define MEMO_SLACK_PAGES 1024
#define DEFAULT_BYTES ((size_t)256 << 20)
#define DEFAULT_NODES ((uint64_t)1 << 28)
/* Ceilings on what a caller may ask for. A node's depth is 16 bits and
 * freeing recurses once per level; a refcount is 32 bits, and each
 * reference costs a counted 8-byte pointer, so 16 GiB of them cannot
 * overflow it; memo slot numbers are 32 bits, UINT32_MAX meaning none. */
#define CEIL_DEPTH 4096
#define CEIL_BYTES ((uint64_t)16 << 30)
#define CEIL_MEMO ((size_t)UINT32_MAX)

/*-*** nodes ***/

#define SMALL_INTS 256
#define POOL_CLASSES 6 /* item arrays of 4 to 128 */
#define POOL_MAX 4096  /* arrays kept per class */

enum {
    F_SEALED = 1,   /* inside a container: never filled again */
    F_TAGGED = 2,   /* vr_pk_set_tag was called */
    F_IMMORTAL = 4, /* None, True, False: the decoder's own, never freed */
    F_HASHABLE = 8, /* may be a dict key */
    F_OWNDATA = 16  /* s is a buffer of its own (a gathered string) */
};

#define NO_SLOT UINT32_MAX

typedef struct {
    vr_pk_value v;      /* first: a vr_pk_value pointer is the node */
    uint32_t refs;      /* stack slots, container items, memo slots, the root */
    uint32_t memo_refs; /* of which memo slots */
    uint16_t flags;
    uint16_t height; /* a container: 1 + its deepest item's; else 0 */
    uint32_t slot;   /* a container: the first memo slot holding it */
} pk_node;

/* Rare extras of a container: memo slots beyond the first (a file that
 * memoizes one container twice) and, for a streamed list, its place and
 * the elements handed over so far. */
typedef struct {
    uint32_t *slots;
    size_t nslots, slots_cap;
    int streamed;
    vr_pk_step *steps;
    size_t depth, count, path_bytes;
} pk_more;

typedef struct {
    pk_node n;
    size_t cap;      /* item pointers allocated */
    uint64_t weight; /* nodes, counting a shared one at each place it is */
    int64_t tag;
    pk_more *more;
} pk_cont;

/* The memo: a 32-bit slot per index in pages (src/util/slots.h), of
 * which at most max_memo_in_memory bytes are in memory and the rest in a
 * temporary file (4 bytes a slot: a 540 MB snapshot sets some 8 million,
 * files of other shapes up to 60,000 a MiB). A slot is 0 never set, SLOT_GONE a
 * container freed untagged, SLOT_BLANK + 2 * kind an EMPTY container freed
 * untagged (a later BINGET gets a new empty one: torch shares one empty
 * frames list between every block with no stack), odd a freed container's
 * tag below 2^31 (tag << 1 | 1), and from SLOT_NODES on, even, a handle:
 * SLOT_NODES + 2 * i for p->handles[i], the node the slot holds (a REF
 * node for a larger tag). */
#define SLOT_EMPTY 0u
#define SLOT_GONE 2u
#define SLOT_BLANK 4u
#define SLOT_NODES 64u
#define MAX_SMALL_TAG INT32_MAX
/* REF nodes kept for the memo slots met most (a tagged frame dict is met
 * again in most trace entries): direct-mapped by slot number. */
#define REF_CACHE 16384

/* A LONG1/LONG4 payload as it arrives: its low 8 bytes and whether the
 * rest only extends their sign (then the value still fits 64 bits). */
typedef struct {
    unsigned char low[8];
    uint64_t n;
    int extends;
    unsigned char last;
} pk_long;

enum { P_NONE, P_STR, P_BYTES, P_BYTEARRAY, P_LONG };
enum { ST_START, ST_RUN, ST_DONE, ST_FAILED };

struct vr_pickle {
    vr_pk_limits lim;
    vr_pk_handlers h;
    size_t stream_depth; /* vr_pickle_stream_depth(); 0: ask about every list */
    int state, protocol;
    int watch_root;   /* on_root not called yet: opcodes go one at a time */
    vr_error *err;    /* the caller's, during a feed */
    vr_error failure; /* kept for calls after a failure */
    uint64_t fed, trailing, op_off;
    unsigned char op;
    /* the chunk being read (during a feed) */
    const unsigned char *chunk, *cur, *end;
    unsigned char carry[9];
    size_t carry_len;
    /* a payload whose bytes go on into the next chunks */
    int g_kind;
    uint64_t g_need, g_have;
    unsigned char *g_buf;
    size_t g_cap;
    pk_long g_long;
    /* the machine */
    pk_node **stack;
    size_t sp, stack_cap;
    size_t *marks;
    size_t nmarks, marks_cap;
    vr_slots memo;
    size_t memo_count;
    uintptr_t *handles; /* a node, or (next free handle << 1 | 1) */
    size_t handles_cap, nhandles;
    size_t free_handle; /* SIZE_MAX: none */
    pk_node *ref_cache[REF_CACHE];
    vr_pk_step *steps;
    size_t steps_cap;
    size_t held, peak;
    /* freed nodes kept for reuse, still counted in held: a streamed file
     * makes and frees as many nodes per element as it reads. An array of
     * pointers, not a list through the nodes: taking one then reads no
     * cold node (a list's next pointer was a cache miss per node). */
    pk_node **spare[2];
    size_t nspare[2];
    pk_node none, yes, no;
    pk_node small_ints[SMALL_INTS]; /* 0 to 255, as BININT1 gives them */
    /* item arrays of freed containers, by capacity (4 << k), for reuse;
     * not counted in held */
    vr_pk_value ***pool[POOL_CLASSES];
    size_t npool[POOL_CLASSES];
};

typedef struct {
    const char *name;
    unsigned char arg; /* bytes of fixed argument after the opcode */
    unsigned char kind;
    int (*run)(vr_pickle *p, const unsigned char *arg);
} pk_op;

enum { OP_UNKNOWN, OP_READ, OP_IMPORTS, OP_CALLS, OP_OTHER };

static const pk_op *op_row(unsigned char byte);

/*-*** errors and accounting ***/

__attribute__((format(printf, 3, 4))) static int fail(vr_pickle *p, vr_error_code code,
                                                      const char *fmt, ...)
{
    char what[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    vr_fail_code(&p->failure, code, "byte %llu: %s", (unsigned long long)p->op_off, what);
    p->state = ST_FAILED;
    return -1;
}

#define BAD(p, ...) fail((p), VR_ERR_MALFORMED, __VA_ARGS__)

static const char *op_name(const vr_pickle *p)
{
    return op_row(p->op)->name;
}

/* A callback said stop: its message stands as it is. */
static int callback_failed(vr_pickle *p)
{
    if (p->err->code == VR_ERR_NONE && !p->err->msg[0])
        vr_fail_code(p->err, VR_ERR_FAILED, "byte %llu: stopped by the reader",
                     (unsigned long long)p->op_off);
    p->failure = *p->err;
    p->state = ST_FAILED;
    return -1;
}

static void limit_text(uint64_t n, char *out, size_t len)
{
    if (n % MIB == 0)
        snprintf(out, len, "%llu MiB", (unsigned long long)(n / MIB));
    else
        snprintf(out, len, "%llu bytes", (unsigned long long)n);
}

static int over_limit(vr_pickle *p)
{
    char lim[32];
    limit_text(p->lim.max_bytes, lim, sizeof lim);
    return BAD(p, "more than %s held at once (the decoder's memory limit)", lim);
}

static void spare_clear(vr_pickle *p);

/* charge() past the limit: spare nodes are let go first. */
static int charge_slow(vr_pickle *p, size_t n)
{
    if (p->nspare[0] || p->nspare[1])
        spare_clear(p);
    if (n > p->lim.max_bytes - p->held)
        return over_limit(p);
    p->held += n;
    if (p->held > p->peak)
        p->peak = p->held;
    return 0;
}

/* Counts n more bytes held, or fails before anything is allocated. */
static inline int charge(vr_pickle *p, size_t n)
{
    if (n > p->lim.max_bytes - p->held)
        return charge_slow(p, n);
    p->held += n;
    if (p->held > p->peak)
        p->peak = p->held;
    return 0;
}

static void uncharge(vr_pickle *p, size_t n)
{
    p->held -= n;
}

/* The memo's pages and tables are counted like the rest (vr_slots). */
static int memo_charge(void *ctx, ptrdiff_t bytes)
{
    vr_pickle *p = ctx;
    if (bytes >= 0)
        return charge(p, (size_t)bytes);
    uncharge(p, (size_t)-bytes);
    return 0;
}

/* Grows *arr (of *cap elements of `size` bytes) to hold `need`, counted;
 * the new elements are zero. */
static int grow(vr_pickle *p, void *arr, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return 0;
    if (need > p->lim.max_bytes / size)
        return over_limit(p);
    size_t ncap = *cap ? *cap : first;
    while (ncap < need)
        ncap = ncap > p->lim.max_bytes / size / 2 ? need : ncap * 2;
    if (charge(p, (ncap - *cap) * size) < 0)
        return -1;
    void **a = arr;
    *a = vr_xrealloc(*a, ncap * size);
    /* zeroed: a memo slot never set must read as empty */
    memset((char *)*a + *cap * size, 0, (ncap - *cap) * size);
    *cap = ncap;
    return 0;
}

/*-*** values ***/

static int is_cont(vr_pk_kind k)
{
    return k == VR_PK_LIST || k == VR_PK_TUPLE || k == VR_PK_DICT;
}

static pk_cont *as_cont(const pk_node *n)
{
    return (pk_cont *)(uintptr_t)n;
}

/* The node a public value is (its first member). */
static pk_node *node_of(const vr_pk_value *v)
{
    return (pk_node *)(uintptr_t)v;
}

static const char *kind_name(vr_pk_kind k)
{
    static const char *const names[] = {"None",  "bool", "int",   "int",  "float",    "str",
                                        "bytes", "list", "tuple", "dict", "reference"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "value";
}

static size_t node_bytes(const pk_node *n)
{
    if (is_cont(n->v.kind))
        return sizeof(pk_cont) + as_cont(n)->cap * sizeof(vr_pk_value *);
    if (n->v.kind == VR_PK_STR || n->v.kind == VR_PK_BYTES)
        return sizeof(pk_node) + n->v.len + 1;
    return sizeof(pk_node);
}

#define SPARE_MAX 65536

/* A node of sizeof(pk_node) (cont 0) or sizeof(pk_cont) (cont 1), counted. */
static void *node_mem(vr_pickle *p, int cont)
{
    if (p->nspare[cont])
        return p->spare[cont][--p->nspare[cont]];
    if (charge(p, cont ? sizeof(pk_cont) : sizeof(pk_node)) < 0)
        return NULL;
    return vr_xmalloc(cont ? sizeof(pk_cont) : sizeof(pk_node));
}

/* node_free() when the spare array is full or not made yet. (Not
 * inlined: where release() is inlined, GCC cannot tell that the decoder's
 * own immortal nodes never reach free().) */
__attribute__((noinline)) static void node_free_slow(vr_pickle *p, pk_node *n, int cont)
{
    if (p->nspare[cont] < SPARE_MAX) {
        if (!p->spare[cont]) /* not counted: a bounded overhead, as the item pool's */
            p->spare[cont] = vr_xmalloc(SPARE_MAX * sizeof *p->spare[cont]);
        p->spare[cont][p->nspare[cont]++] = n;
        return;
    }
    uncharge(p, cont ? sizeof(pk_cont) : sizeof(pk_node));
    free(n);
}

/* Keeps a freed plain node for reuse (the common case, inline), or frees
 * it. */
static inline void node_free(vr_pickle *p, pk_node *n, int cont)
{
    if (p->spare[cont] && p->nspare[cont] < SPARE_MAX) {
        p->spare[cont][p->nspare[cont]++] = n;
        return;
    }
    node_free_slow(p, n, cont);
}

static void spare_clear(vr_pickle *p)
{
    for (int cont = 0; cont < 2; cont++) {
        while (p->nspare[cont]) {
            uncharge(p, cont ? sizeof(pk_cont) : sizeof(pk_node));
            free(p->spare[cont][--p->nspare[cont]]);
        }
    }
}

/* A scalar node that is only its pk_node (a number, a reference): inline,
 * two or three of them per trace entry. */
static inline pk_node *new_plain(vr_pickle *p, vr_pk_kind kind)
{
    pk_node *n = node_mem(p, 0);
    if (!n)
        return NULL;
    memset(n, 0, sizeof *n);
    n->v.kind = kind;
    n->refs = 1;
    n->flags = F_HASHABLE;
    n->slot = NO_SLOT;
    return n;
}

/* A scalar node with `extra` bytes after it (a string's). */
static pk_node *new_scalar(vr_pickle *p, vr_pk_kind kind, size_t extra)
{
    pk_node *n;
    if (extra == 0) {
        n = node_mem(p, 0);
    } else {
        n = charge(p, sizeof(pk_node) + extra) < 0 ? NULL : vr_xmalloc(sizeof *n + extra);
    }
    if (!n)
        return NULL;
    memset(n, 0, sizeof *n);
    n->v.kind = kind;
    n->refs = 1;
    n->flags = F_HASHABLE;
    n->slot = NO_SLOT;
    return n;
}

static pk_cont *new_cont(vr_pickle *p, vr_pk_kind kind)
{
    pk_cont *c = node_mem(p, 1);
    if (!c)
        return NULL;
    *c = (pk_cont){.n = {.v = {.kind = kind},
                         .refs = 1,
                         .flags = kind == VR_PK_TUPLE ? F_HASHABLE : 0,
                         .height = 1,
                         .slot = NO_SLOT},
                   .weight = 1,
                   .tag = -1};
    return c;
}

static size_t used(const pk_node *n)
{
    return n->v.kind == VR_PK_DICT ? 2 * n->v.len : n->v.len;
}

static void release_any(vr_pickle *p, pk_node *n, int strip);
static void node_free(vr_pickle *p, pk_node *n, int cont);

/* A node that is only its pk_node (a number, a reference). */
static int is_plain(vr_pk_kind k)
{
    return k == VR_PK_INT || k == VR_PK_FLOAT || k == VR_PK_REF || k == VR_PK_TOO_LARGE;
}

/* The common cases inline: a value still held elsewhere that is not a
 * container (a memo's string, a cached reference), and a number's last
 * reference. (The decoder's immortal nodes keep refs at 0: retain() and
 * memo_put() never count them, so the refs tests leave them to
 * release_any, which ignores them.) */
static inline void release(vr_pickle *p, pk_node *n, int strip)
{
    if (n && !is_cont(n->v.kind)) {
        if (n->refs > 1) {
            n->refs--;
            return;
        }
        if (n->refs == 1 && is_plain(n->v.kind)) {
            node_free(p, n, 0);
            return;
        }
    }
    release_any(p, n, strip);
}

static void free_more(vr_pickle *p, pk_cont *c)
{
    pk_more *m = c->more;
    if (!m)
        return;
    uncharge(p, sizeof *m + m->slots_cap * sizeof *m->slots + m->path_bytes);
    free(m->slots);
    free(m->steps);
    free(m);
    c->more = NULL;
}

static void items_free(vr_pickle *p, vr_pk_value **items, size_t cap);

static void free_node(vr_pickle *p, pk_node *n, int strip)
{
    size_t bytes = node_bytes(n);
    if (is_cont(n->v.kind)) {
        for (size_t i = 0, k = used(n); i < k; i++)
            release(p, node_of(n->v.items[i]), strip);
        items_free(p, n->v.items, as_cont(n)->cap);
        free_more(p, as_cont(n));
        uncharge(p, bytes - sizeof(pk_cont));
        node_free(p, n, 1);
        return;
    }
    if (n->flags & F_OWNDATA)
        free((void *)(uintptr_t)n->v.s);
    if (bytes == sizeof(pk_node) && !(n->flags & F_OWNDATA)) {
        node_free(p, n, 0);
        return;
    }
    uncharge(p, bytes);
    free(n);
}

static int slot_is_node(uint32_t s)
{
    return s >= SLOT_NODES && !(s & 1u);
}

static pk_node *slot_node(const vr_pickle *p, uint32_t s)
{
    return (pk_node *)p->handles[(s - SLOT_NODES) >> 1];
}

/* A handle never used before, for new_handle. */
static int fresh_handle(vr_pickle *p, size_t *h)
{
    if (p->nhandles >= (UINT32_MAX - SLOT_NODES) / 2)
        return BAD(p, "more values held in the memo than the decoder counts");
    if (grow(p, &p->handles, &p->handles_cap, p->nhandles + 1, sizeof *p->handles, 256) < 0)
        return -1;
    *h = p->nhandles++;
    return 0;
}

/* A handle for n (the memo's reference is the caller's), or -1: a freed
 * one (the common case once elements are let go) inline. */
static inline int new_handle(vr_pickle *p, pk_node *n, uint32_t *slot)
{
    size_t h = p->free_handle;
    if (h != SIZE_MAX)
        p->free_handle = p->handles[h] == 1u ? SIZE_MAX : (size_t)(p->handles[h] >> 1);
    else if (fresh_handle(p, &h) < 0)
        return -1;
    p->handles[h] = (uintptr_t)n;
    *slot = SLOT_NODES + 2u * (uint32_t)h;
    return 0;
}

static void free_handle(vr_pickle *p, uint32_t s)
{
    size_t h = (s - SLOT_NODES) >> 1;
    p->handles[h] = p->free_handle == SIZE_MAX ? 1u : (uintptr_t)p->free_handle << 1 | 1u;
    p->free_handle = h;
}

/* What a container freed untagged leaves in its memo slots. */
static uint32_t freed_slot(const pk_cont *c)
{
    return c->n.v.len == 0 ? SLOT_BLANK + 2u * (uint32_t)c->n.v.kind : SLOT_GONE;
}

static pk_node *new_scalar(vr_pickle *p, vr_pk_kind kind, size_t extra);

/* What a freed container leaves in one memo slot: its tag (a REF node
 * held by the memo for a large one), or gone. */
static uint32_t mark_for(vr_pickle *p, const pk_cont *c)
{
    if (!(c->n.flags & F_TAGGED))
        return freed_slot(c);
    if (c->tag <= MAX_SMALL_TAG)
        return (uint32_t)c->tag << 1 | 1u;
    pk_node *ref = new_plain(p, VR_PK_REF);
    uint32_t s;
    if (!ref)
        return SLOT_GONE; /* over the memory limit: met again, it is an error */
    ref->v.i = c->tag;
    ref->memo_refs = 1;
    if (new_handle(p, ref, &s) < 0) {
        release(p, ref, 0);
        return SLOT_GONE;
    }
    return s;
}

/* Replaces a container's memo slots by its tag (or "gone"), dropping the
 * memo's references: a later BINGET gets a VR_PK_REF, or an error. */
static void unmemo(vr_pickle *p, pk_cont *c)
{
    pk_more *m = c->more;
    size_t extra = m ? m->nslots : 0;
    for (size_t i = 0; i <= extra; i++) {
        uint32_t s = i == 0 ? c->n.slot : m->slots[i - 1];
        if (s == NO_SLOT)
            continue;
        uint32_t *slot = vr_slots_poke(&p->memo, s);
        if (!slot) { /* read back (if that fails, the memo keeps c) */
            vr_slots_get(&p->memo, s);
            slot = vr_slots_poke(&p->memo, s);
        }
        if (!slot || !slot_is_node(*slot) || slot_node(p, *slot) != &c->n)
            continue;
        free_handle(p, *slot);
        *slot = mark_for(p, c);
        c->n.memo_refs--;
        c->n.refs--;
    }
}

/* A tuple of scalars (and of such tuples): a value, like a string, that
 * the memo keeps when an element holding it is let go. pickle.dump
 * memoizes a tuple once and writes BINGET for every later reference:
 * 10,000 segments that share one segment_pool_id tuple refer to the first
 * segment's. A list or a dict may be changed and may hold anything, so it
 * is not kept (the caller tags the ones it wants back). */
static int kept_by_value(const pk_node *n)
{
    return n->v.kind == VR_PK_TUPLE && (n->flags & F_HASHABLE);
}

/* Drops one reference. In strip mode (an element handed over) a container
 * only the memo still holds is taken out of it and freed too, unless it
 * is kept by value. */
static void release_any(vr_pickle *p, pk_node *n, int strip)
{
    if (!n || (n->flags & F_IMMORTAL))
        return;
    n->refs--;
    if (strip && n->refs && n->refs == n->memo_refs && is_cont(n->v.kind) && !kept_by_value(n))
        unmemo(p, as_cont(n));
    if (n->refs == 0)
        free_node(p, n, strip);
}

static pk_node *retain(pk_node *n)
{
    if (!(n->flags & F_IMMORTAL))
        n->refs++;
    return n;
}

static uint64_t weight_of(const pk_node *n)
{
    return is_cont(n->v.kind) ? as_cont(n)->weight : 1;
}

/*-*** the stack ***/

static size_t group_start(const vr_pickle *p)
{
    return p->nmarks ? p->marks[p->nmarks - 1] : 0;
}

static size_t group_len(const vr_pickle *p)
{
    return p->sp - group_start(p);
}

/* Pushes a reference the caller hands over (released if there is no room). */
static int push_grown(vr_pickle *p, pk_node *n)
{
    if (!n)
        return -1;
    if (grow(p, &p->stack, &p->stack_cap, p->sp + 1, sizeof *p->stack, 64) < 0) {
        release(p, n, 0);
        return -1;
    }
    p->stack[p->sp++] = n;
    return 0;
}

/* Every opcode that makes a value pushes it: the common case (room on the
 * stack) inline. */
static inline int push(vr_pickle *p, pk_node *n)
{
    if (n && p->sp < p->stack_cap) {
        p->stack[p->sp++] = n;
        return 0;
    }
    return push_grown(p, n);
}

static int too_few(vr_pickle *p, size_t n)
{
    size_t have = group_len(p);
    return BAD(p, "%s needs %zu value%s on the stack%s, found %zu", op_name(p), n,
               n == 1 ? "" : "s", p->nmarks ? " after the last MARK" : "", have);
}

static inline int need(vr_pickle *p, size_t n)
{
    return group_len(p) >= n ? 0 : too_few(p, n);
}

static int need_mark(vr_pickle *p)
{
    return p->nmarks ? 0 : BAD(p, "%s without a MARK before it", op_name(p));
}

/* The container below the top MARK (APPENDS, SETITEMS), or NULL. */
static pk_node *below_mark(const vr_pickle *p)
{
    size_t start = p->marks[p->nmarks - 1];
    size_t floor = p->nmarks > 1 ? p->marks[p->nmarks - 2] : 0;
    return start > floor ? p->stack[start - 1] : NULL;
}

/* Releases the items above the top MARK and pops it. */
static void drop_group(vr_pickle *p)
{
    size_t start = group_start(p);
    while (p->sp > start)
        release(p, p->stack[--p->sp], 0);
    if (p->nmarks)
        p->nmarks--;
}

/*-*** containers ***/

/* Checks that `target` may be filled by this opcode with `n` more items. */
static int fillable(vr_pickle *p, const pk_node *target, vr_pk_kind want, size_t n)
{
    if (!target || target->v.kind != want)
        return BAD(p, "%s into %s %s: only a %s takes %s", op_name(p), target ? "a" : "nothing",
                   target ? kind_name(target->v.kind) : "", kind_name(want),
                   want == VR_PK_LIST ? "elements" : "items");
    if (target->flags & F_SEALED)
        return BAD(p,
                   "%s into a %s already inside another value (a reference cycle, or "
                   "not what pickle.dump writes): refused",
                   op_name(p), kind_name(want));
    const pk_cont *c = as_cont(target);
    if (c->more && c->more->streamed)
        return 0;
    if (n > p->lim.max_items || target->v.len > p->lim.max_items - n)
        return BAD(p, "%s would put more than %zu items in one %s (the decoder's limit)",
                   op_name(p), p->lim.max_items, kind_name(want));
    return 0;
}

/* The pool class of an item array of cap pointers, or -1. */
static int pool_class(size_t cap)
{
    if (cap < 4 || cap > ((size_t)4 << (POOL_CLASSES - 1)) || (cap & (cap - 1)))
        return -1;
    return __builtin_ctzll((unsigned long long)cap) - 2;
}

static int room(vr_pickle *p, pk_cont *c, size_t n)
{
    size_t need = used(&c->n) + n;
    if (c->cap == 0 && need > 0) { /* a first array: a pooled one if there is one */
        /* the class of the smallest array of 4 << k pointers that holds need */
        int k = need <= 4 ? 0 : 62 - __builtin_clzll((unsigned long long)(need - 1));
        if (k < POOL_CLASSES && p->npool[k]) {
            size_t cap = (size_t)4 << k;
            if (charge(p, cap * sizeof(vr_pk_value *)) < 0)
                return -1;
            c->n.v.items = p->pool[k][--p->npool[k]];
            c->cap = cap;
            return 0;
        }
    }
    return grow(p, &c->n.v.items, &c->cap, need, sizeof(vr_pk_value *), 4);
}

/* Keeps a freed item array for reuse, or frees it. */
static void items_free(vr_pickle *p, vr_pk_value **items, size_t cap)
{
    int k = pool_class(cap);
    if (k < 0 || p->npool[k] == POOL_MAX) {
        free(items);
        return;
    }
    if (!p->pool[k])
        p->pool[k] = vr_xmalloc(POOL_MAX * sizeof *p->pool[k]);
    p->pool[k][p->npool[k]++] = items;
}

static void pool_clear(vr_pickle *p)
{
    for (int k = 0; k < POOL_CLASSES; k++) {
        while (p->npool[k])
            free(p->pool[k][--p->npool[k]]);
        free(p->pool[k]);
        p->pool[k] = NULL;
    }
}

/* Whether `child` can go into c: not c itself, within the depth and size
 * limits. *height and *weight carry c's figures with the child added. */
static int fits_any(vr_pickle *p, const pk_cont *c, const pk_node *child, uint16_t *height,
                    uint64_t *weight)
{
    if (child == &c->n)
        return BAD(p, "%s puts a %s inside itself (a reference cycle): refused", op_name(p),
                   kind_name(c->n.v.kind));
    if (child->height + 1 > *height) {
        if ((size_t)child->height + 1 > p->lim.max_depth)
            return BAD(p, "values nested more than %zu deep (the decoder's limit)",
                       p->lim.max_depth);
        *height = (uint16_t)(child->height + 1);
    }
    uint64_t w = *weight + weight_of(child);
    if (w < *weight || w > p->lim.max_nodes)
        return BAD(p,
                   "a value that expands to more than %llu nodes once its shared parts are "
                   "counted at each place they appear (a memo bomb?): refused",
                   (unsigned long long)p->lim.max_nodes);
    *weight = w;
    return 0;
}

/* Most children are not containers (keys, numbers, references to frames):
 * inline, they only add 1 to the weight (a container's height is at least
 * 1, and max_depth at least 1, so a scalar's height 0 changes nothing). */
static inline int fits(vr_pickle *p, const pk_cont *c, const pk_node *child, uint16_t *height,
                       uint64_t *weight)
{
    if (is_cont(child->v.kind) || *weight >= p->lim.max_nodes)
        return fits_any(p, c, child, height, weight);
    (*weight)++;
    return 0;
}

/* Puts `child` at items[at] of c (room reserved, fits() checked), taking
 * its reference; the caller counts it in len. */
static void put(pk_cont *c, size_t at, pk_node *child)
{
    child->flags |= F_SEALED;
    c->n.v.items[at] = &child->v;
    if (c->n.v.kind == VR_PK_TUPLE && !(child->flags & F_HASHABLE))
        c->n.flags &= (uint16_t)~F_HASHABLE;
}

/* Moves stack[i] into c. */
static int adopt(vr_pickle *p, pk_cont *c, size_t i)
{
    uint16_t h = c->n.height;
    uint64_t w = c->weight;
    if (fits(p, c, p->stack[i], &h, &w) < 0)
        return -1;
    put(c, c->n.v.len++, p->stack[i]);
    c->n.height = h;
    c->weight = w;
    p->stack[i] = NULL;
    return 0;
}

/* Moves the key at stack[i] and its value at stack[i + 1] into dict d. */
static int adopt_pair(vr_pickle *p, pk_cont *d, size_t i)
{
    pk_node *k = p->stack[i], *v = p->stack[i + 1];
    if (!(k->flags & F_HASHABLE))
        return BAD(p, "%s with a %s as a key (not hashable)", op_name(p), kind_name(k->v.kind));
    uint16_t h = d->n.height;
    uint64_t w = d->weight;
    if (fits(p, d, k, &h, &w) < 0 || fits(p, d, v, &h, &w) < 0)
        return -1;
    put(d, 2 * d->n.v.len, k);
    put(d, 2 * d->n.v.len + 1, v);
    d->n.v.len++;
    d->n.height = h;
    d->weight = w;
    p->stack[i] = p->stack[i + 1] = NULL;
    return 0;
}

static int pending_failure(vr_pickle *p);

/* Hands the element at stack[i] to on_element, then lets it go. */
static int hand_over(vr_pickle *p, pk_cont *list, size_t i)
{
    pk_node *elem = p->stack[i];
    if (elem == &list->n)
        return BAD(p, "%s puts a list inside itself (a reference cycle): refused", op_name(p));
    p->stack[i] = NULL;
    elem->flags |= F_SEALED;
    pk_more *m = list->more;
    vr_pk_path path = {m->steps, m->depth};
    int rc = p->h.on_element ? p->h.on_element(p->h.ud, &path, m->count, &elem->v, p->err) : 0;
    m->count++;
    release(p, elem, 1);
    return rc < 0 ? callback_failed(p) : pending_failure(p);
}

/* Clears the stack slots [from, to) whose values were moved into a
 * container (on an error, so that they are not released twice). */
static void moved(vr_pickle *p, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        p->stack[i] = NULL;
}

/* Moves stack[from .. to) into list c, or hands them over if it streams. */
static int fill_list(vr_pickle *p, pk_cont *c, size_t from, size_t to)
{
    if (c->more && c->more->streamed) {
        for (size_t i = from; i < to; i++)
            if (hand_over(p, c, i) < 0)
                return -1;
        return 0;
    }
    if (room(p, c, to - from) < 0)
        return -1;
    /* a list of scalars (a frames list of references): what adopt() does
     * for them, inline, on copies of the counts (the stores to items
     * cannot then be taken to change them). F_SEALED only matters to a
     * container, so a scalar's node is not written. The stack slots are
     * left as they are: the caller pops them (moved() on an error). */
    int plain_list = c->n.v.kind == VR_PK_LIST;
    vr_pk_value **items = c->n.v.items;
    size_t len = c->n.v.len;
    uint64_t weight = c->weight, max_nodes = p->lim.max_nodes;
    for (size_t i = from; i < to; i++) {
        pk_node *child = p->stack[i];
        if (plain_list && !is_cont(child->v.kind) && weight < max_nodes) {
            items[len++] = &child->v;
            weight++;
            continue;
        }
        c->n.v.len = len;
        c->weight = weight;
        if (adopt(p, c, i) < 0) {
            moved(p, from, i);
            return -1;
        }
        len = c->n.v.len;
        weight = c->weight;
    }
    c->n.v.len = len;
    c->weight = weight;
    return 0;
}

static int fill_dict(vr_pickle *p, pk_cont *d, size_t from, size_t to)
{
    if ((to - from) % 2)
        return BAD(p, "%s with an odd number of items (%zu): a key without its value", op_name(p),
                   to - from);
    if (room(p, d, to - from) < 0)
        return -1;
    /* a string key and a scalar value (most of a trace entry): what
     * adopt_pair() does for them, inline, as fill_list does */
    vr_pk_value **items = d->n.v.items;
    size_t len = d->n.v.len;
    uint64_t weight = d->weight, max_nodes = p->lim.max_nodes;
    for (size_t i = from; i < to; i += 2) {
        pk_node *k = p->stack[i], *v = p->stack[i + 1];
        if ((k->flags & F_HASHABLE) && !is_cont(k->v.kind) && !is_cont(v->v.kind) &&
            weight + 1 < max_nodes) {
            items[2 * len] = &k->v;
            items[2 * len + 1] = &v->v;
            len++;
            weight += 2;
            continue;
        }
        d->n.v.len = len;
        d->weight = weight;
        if (adopt_pair(p, d, i) < 0) {
            moved(p, from, i);
            return -1;
        }
        len = d->n.v.len;
        weight = d->weight;
    }
    d->n.v.len = len;
    d->weight = weight;
    return 0;
}

/*-*** the place of a list (for streaming) ***/

/* Appends one step (innermost first); -1 when the path is too deep. */
static int add_step(vr_pickle *p, size_t *n, const pk_node *key, size_t index)
{
    if (*n >= p->lim.max_depth)
        return -1;
    vr_pk_step *s = &p->steps[(*n)++];
    int str = key && key->v.kind == VR_PK_STR;
    *s =
        (vr_pk_step){str ? key->v.s : NULL, str ? key->v.len : 0, key && !str ? SIZE_MAX : index};
    return 0;
}

static size_t count_of(const pk_node *list)
{
    const pk_more *m = as_cont(list)->more;
    return m && m->streamed ? m->count : list->v.len;
}

static int is_kind(const pk_node *n, vr_pk_kind k)
{
    return n && n->v.kind == k;
}

/* Without a MARK between them: a value after a list is its next element
 * (APPEND), a value after a dict and a key is that key's (SETITEM). `lo`
 * is where the values of the current MARK group begin. 1 when it fits. */
static int neighbour(vr_pickle *p, size_t *pos, size_t *n, size_t lo, const pk_node **into)
{
    size_t at = *pos;
    if (at >= lo + 1 && is_kind(p->stack[at - 1], VR_PK_LIST)) {
        *pos = at - 1;
        *into = p->stack[at - 1];
        return add_step(p, n, NULL, count_of(p->stack[at - 1])) < 0 ? -1 : 1;
    }
    if (at >= lo + 2 && is_kind(p->stack[at - 2], VR_PK_DICT)) {
        *pos = at - 2;
        *into = p->stack[at - 2];
        return add_step(p, n, p->stack[at - 1], 0) < 0 ? -1 : 1;
    }
    return 0;
}

/* One step outwards from the value at stack position *pos, inside the
 * MARK group k - 1 (*k: the marks still to look at). 1: a step was taken,
 * into *into: the list or dict stepped into, or NULL where the container
 * is still to come (a MARK's: nothing on the stack is it, and the slot at
 * the MARK's place may be an item of the group, or free); 0: *pos is the
 * root, -1: the place cannot be read from the stack. */
static int step_out(vr_pickle *p, size_t *pos, size_t *k, size_t *n, const pk_node **into)
{
    *into = NULL;
    while (*k > 0 && p->marks[*k - 1] > *pos)
        (*k)--;
    if (*k == 0)
        return *pos == 0 ? 0 : neighbour(p, pos, n, 0, into) > 0 ? 1 : -1;
    size_t start = p->marks[*k - 1], off = *pos - start;
    const pk_node *owner =
        start > 0 && (*k == 1 || p->marks[*k - 2] < start) ? p->stack[start - 1] : NULL;
    if (is_kind(owner, VR_PK_DICT) && off % 2 == 0)
        return neighbour(p, pos, n, start, into) > 0 ? 1 : -1;
    int rc;
    if (is_kind(owner, VR_PK_LIST))
        rc = add_step(p, n, NULL, count_of(owner) + off);
    else if (is_kind(owner, VR_PK_DICT))
        rc = add_step(p, n, p->stack[*pos - 1], 0);
    else /* a MARK for a TUPLE, LIST or DICT to come, at the MARK's place */
        rc = add_step(p, n, NULL, off);
    /* a list or dict is where its MARK's items go; else the MARK's own
     * place is where the container to come will be */
    int stepped_in = is_kind(owner, VR_PK_LIST) || is_kind(owner, VR_PK_DICT);
    *pos = stepped_in ? start - 1 : start;
    *into = stepped_in ? owner : NULL;
    (*k)--;
    return rc < 0 ? -1 : 1;
}

/* The depth of a streamed list's place (kept when it was asked: the
 * stack below it cannot change while it is there), or 0. */
static size_t streamed_depth(const pk_node *n)
{
    const pk_more *m = is_kind(n, VR_PK_LIST) ? as_cont(n)->more : NULL;
    return m && m->streamed ? m->depth : 0;
}

/* The place of a new value at stack position `pos`, outermost first in
 * p->steps; its depth. An unreadable place is one step {NULL, SIZE_MAX}.
 * With a stream_depth, 1 (no place) for a place deeper than that or
 * unreadable, as soon as that is known. */
static int place_of(vr_pickle *p, size_t pos, size_t *depth)
{
    if (grow(p, &p->steps, &p->steps_cap, p->lim.max_depth, sizeof *p->steps, 1) < 0)
        return -1;
    size_t n = 0, k = p->nmarks, most = p->stream_depth;
    const pk_node *into;
    int rc;
    while ((rc = step_out(p, &pos, &k, &n, &into)) > 0)
        if (most && (n > most || n + streamed_depth(into) > most))
            return 1;
    if (rc < 0 && most)
        return 1;
    if (rc < 0) {
        p->steps[0] = (vr_pk_step){NULL, 0, SIZE_MAX};
        n = 1;
    }
    for (size_t i = 0; i < n / 2; i++) {
        vr_pk_step t = p->steps[i];
        p->steps[i] = p->steps[n - 1 - i];
        p->steps[n - 1 - i] = t;
    }
    *depth = n;
    return 0;
}

/* Keeps a copy of the path (keys included) in the streamed list. */
static int keep_path(vr_pickle *p, pk_cont *c, size_t depth)
{
    size_t keys = 0;
    for (size_t i = 0; i < depth; i++)
        keys += p->steps[i].key_len;
    size_t bytes = depth * sizeof(vr_pk_step) + keys;
    if (charge(p, sizeof(pk_more) + bytes) < 0)
        return -1;
    pk_more *m = vr_xmalloc(sizeof *m);
    memset(m, 0, sizeof *m);
    m->steps = vr_xmalloc(bytes ? bytes : 1);
    char *text = (char *)(m->steps + depth);
    for (size_t i = 0; i < depth; i++) {
        m->steps[i] = p->steps[i];
        if (p->steps[i].key) {
            memcpy(text, p->steps[i].key, p->steps[i].key_len);
            m->steps[i].key = text;
            text += p->steps[i].key_len;
        }
    }
    m->depth = depth;
    m->path_bytes = bytes;
    m->streamed = 1;
    c->more = m;
    return 0;
}

/* Asks the caller whether the new list c, at stack position pos, streams. */
static int ask_stream(vr_pickle *p, pk_cont *c, size_t pos)
{
    size_t depth;
    if (!p->h.stream)
        return 0;
    int rc = place_of(p, pos, &depth);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    vr_pk_path path = {p->steps, depth};
    if (p->h.stream(p->h.ud, &path) <= 0)
        return 0;
    return keep_path(p, c, depth);
}

/*-*** the memo ***/

static int keep_slot(vr_pickle *p, pk_cont *c, uint32_t slot)
{
    if (c->n.slot == NO_SLOT) {
        c->n.slot = slot;
        return 0;
    }
    if (!c->more) {
        if (charge(p, sizeof(pk_more)) < 0)
            return -1;
        c->more = vr_xmalloc(sizeof *c->more);
        memset(c->more, 0, sizeof *c->more);
    }
    pk_more *m = c->more;
    if (grow(p, &m->slots, &m->slots_cap, m->nslots + 1, sizeof *m->slots, 2) < 0)
        return -1;
    m->slots[m->nslots++] = slot;
    return 0;
}

/* The memo's reference to the node of a slot's value s, dropped (the
 * slot itself is the caller's to change). */
static void drop_held(vr_pickle *p, uint32_t s)
{
    pk_node *o = slot_node(p, s);
    free_handle(p, s);
    if (!(o->flags & F_IMMORTAL))
        o->memo_refs--;
    release(p, o, 0);
}

/* The memo's failure (memory, its temporary file) as the decoder's error. */
static int memo_failed(vr_pickle *p)
{
    if (vr_slots_failed(&p->memo) == VR_SLOTS_FILE)
        return fail(p, VR_ERR_IO,
                    "cannot keep the memo in a temporary file (%s; the folder is $TMPDIR, "
                    "else /tmp: point TMPDIR at one with room)",
                    strerror(p->memo.sys_errno));
    return p->state == ST_FAILED ? -1 : over_limit(p); /* charge() refused: said already */
}

/* A failure met where it could not be returned (releasing a handed-over
 * element reads memo pages back and may make REF nodes), now returned;
 * 0 when there is none. */
static int pending_failure(vr_pickle *p)
{
    if (p->state == ST_FAILED)
        return -1;
    return vr_slots_failed(&p->memo) ? memo_failed(p) : 0;
}

/* Sets memo slot idx to s; a new page (one more than the file could
 * need, past the first MEMO_SLACK_PAGES) is refused. */
static int memo_set(vr_pickle *p, uint64_t idx, uint32_t s)
{
    size_t made = p->memo.made;
    if (vr_slots_set(&p->memo, idx, s) < 0)
        return memo_failed(p);
    if (p->memo.made > made && p->memo.made > MEMO_SLACK_PAGES &&
        (uint64_t)(p->memo.made - MEMO_SLACK_PAGES) * VR_SLOTS_PAGE > p->op_off) {
        vr_slots_set(&p->memo, idx, SLOT_EMPTY); /* in memory, just made: cannot fail */
        return BAD(p,
                   "%s to memo slot %llu: the memo spreads over more pages than a file "
                   "this long could fill",
                   op_name(p), (unsigned long long)idx);
    }
    return 0;
}

static int memo_put(vr_pickle *p, uint64_t idx)
{
    if (need(p, 1) < 0)
        return -1;
    if (idx >= p->lim.max_memo)
        return BAD(p, "%s to memo slot %llu, beyond the decoder's limit of %zu", op_name(p),
                   (unsigned long long)idx, p->lim.max_memo);
    uint32_t old = vr_slots_get(&p->memo, idx);
    if (vr_slots_failed(&p->memo))
        return memo_failed(p);
    pk_node *n = p->stack[p->sp - 1];
    if (slot_is_node(old) && slot_node(p, old) == n)
        return 0;
    if (slot_is_node(old)) {
        if (memo_set(p, idx, SLOT_EMPTY) < 0)
            return -1;
        drop_held(p, old);
    }
    uint32_t handle;
    if (new_handle(p, n, &handle) < 0)
        return -1;
    if (memo_set(p, idx, handle) < 0) {
        free_handle(p, handle);
        return -1;
    }
    if (old == SLOT_EMPTY)
        p->memo_count++;
    if (n->flags & F_IMMORTAL)
        return 0;
    n->refs++;
    n->memo_refs++;
    return is_cont(n->v.kind) ? keep_slot(p, as_cont(n), (uint32_t)idx) : 0;
}

/* The cached REF node of memo slot idx whose value is s (odd: a tag), or
 * NULL. */
static inline pk_node *ref_cached(const vr_pickle *p, uint64_t idx, uint32_t s)
{
    pk_node *n = p->ref_cache[idx % REF_CACHE];
    return n && n->slot == idx && n->v.i == (int64_t)(s >> 1) ? n : NULL;
}

/* A REF node for memo slot idx holding s (a tag): the cached one for
 * that slot, or a new one that the cache then keeps. */
static pk_node *ref_node(vr_pickle *p, uint64_t idx, uint32_t s)
{
    pk_node *cached = ref_cached(p, idx, s);
    if (cached)
        return retain(cached);
    pk_node *ref = new_plain(p, VR_PK_REF);
    if (!ref)
        return NULL;
    ref->v.i = (int64_t)(s >> 1);
    ref->slot = (uint32_t)idx;
    pk_node **cache = &p->ref_cache[idx % REF_CACHE];
    release(p, *cache, 0);
    *cache = retain(ref);
    return ref;
}

static int memo_get_any(vr_pickle *p, uint64_t idx)
{
    uint32_t s = vr_slots_get(&p->memo, idx);
    if (vr_slots_failed(&p->memo))
        return memo_failed(p);
    if (s == SLOT_EMPTY)
        return BAD(p, "%s of memo slot %llu, which was never set", op_name(p),
                   (unsigned long long)idx);
    if (s == SLOT_GONE)
        return BAD(p,
                   "%s refers to a value no longer held (memo slot %llu: a container inside "
                   "an element already handed over)",
                   op_name(p), (unsigned long long)idx);
    if (slot_is_node(s))
        return push(p, retain(slot_node(p, s)));
    if (s & 1u)
        return push(p, ref_node(p, idx, s));
    return push(p, (pk_node *)new_cont(p, (vr_pk_kind)((s - SLOT_BLANK) / 2))); /* blank */
}

/* BINGET of a value the memo holds (a key, a shared string) or of a
 * tagged container whose REF node is cached (a frame): inline. */
static inline int memo_get(vr_pickle *p, uint64_t idx)
{
    const uint32_t *slot = vr_slots_peek(&p->memo, idx);
    uint32_t s = slot ? *slot : SLOT_EMPTY;
    if (slot_is_node(s))
        return push(p, retain(slot_node(p, s)));
    pk_node *cached = (s & 1u) ? ref_cached(p, idx, s) : NULL;
    if (cached)
        return push(p, retain(cached));
    return memo_get_any(p, idx);
}

/* The fast half of memo_get, for run_whole: 1 when the slot's value (a
 * node the memo holds, or the cached REF of a tagged slot) was pushed
 * onto a stack with room; 0 when memo_get must do it (nothing done). */
static inline int get_held(vr_pickle *p, uint64_t idx)
{
    const uint32_t *slot = vr_slots_peek(&p->memo, idx);
    uint32_t s = slot ? *slot : SLOT_EMPTY;
    if (p->sp >= p->stack_cap)
        return 0;
    if (slot_is_node(s)) {
        p->stack[p->sp++] = retain(slot_node(p, s));
        return 1;
    }
    pk_node *n = (s & 1u) ? ref_cached(p, idx, s) : NULL;
    if (!n)
        return 0;
    n->refs++; /* a REF node: never immortal, no need to read its flags */
    p->stack[p->sp++] = n;
    return 1;
}

static void memo_clear(vr_pickle *p)
{
    for (size_t i = 0; i < REF_CACHE; i++) {
        release(p, p->ref_cache[i], 0);
        p->ref_cache[i] = NULL;
    }
    /* Every node the memo holds has a handle: no page needs reading back.
     * Releasing one frees no memo slot (only strip mode does that). */
    for (size_t h = 0; h < p->nhandles; h++)
        if (!(p->handles[h] & 1u))
            drop_held(p, SLOT_NODES + 2u * (uint32_t)h);
    vr_slots_free(&p->memo);
    uncharge(p, p->handles_cap * sizeof *p->handles);
    free(p->handles);
    p->handles = NULL;
    p->memo_count = p->handles_cap = p->nhandles = 0;
    p->free_handle = SIZE_MAX;
}

/*-*** reading bytes ***/

static uint32_t le16(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8;
}

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* n bytes (1 to 8), little-endian: unrolled (LONG1 gives two of most
 * trace entries' values, a byte loop cost 40 instructions each). */
static uint64_t le(const unsigned char *b, int n)
{
    uint64_t v = 0;
    switch (n) {
    case 8:
        v |= (uint64_t)b[7] << 56;
        /* fall through */
    case 7:
        v |= (uint64_t)b[6] << 48;
        /* fall through */
    case 6:
        v |= (uint64_t)b[5] << 40;
        /* fall through */
    case 5:
        v |= (uint64_t)b[4] << 32;
        /* fall through */
    case 4:
        v |= (uint64_t)b[3] << 24;
        /* fall through */
    case 3:
        v |= (uint64_t)b[2] << 16;
        /* fall through */
    case 2:
        v |= (uint64_t)b[1] << 8;
        /* fall through */
    case 1:
        v |= b[0];
        break;
    default:
        break;
    }
    return v;
}

/* Two's complement of the low n bytes (1 to 8) of u as int64, without
 * relying on how out-of-range conversions behave. */
static int64_t signed_bits(uint64_t u, int n)
{
    if (n < 8)
        u &= ~(~(uint64_t)0 << (8 * n));
    if (!(u >> (8 * n - 1) & 1))
        return (int64_t)u;
    if (n < 8)
        u |= ~(uint64_t)0 << (8 * n);
    return -(int64_t)(~u) - 1;
}

static int64_t signed_le(const unsigned char *b, int n)
{
    return signed_bits(le(b, n), n);
}

/* 8 bytes, little-endian (one load where the compiler sees the pattern). */
static inline uint64_t le64(const unsigned char *b)
{
    return (uint64_t)b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16 | (uint64_t)b[3] << 24 |
           (uint64_t)b[4] << 32 | (uint64_t)b[5] << 40 | (uint64_t)b[6] << 48 |
           (uint64_t)b[7] << 56;
}

static uint64_t pos_of(const vr_pickle *p, const unsigned char *at)
{
    return p->fed + (uint64_t)(at - p->chunk);
}

/*-*** payloads: strings, bytes, long integers ***/

static void long_add(pk_long *l, const unsigned char *b, size_t k)
{
    for (size_t i = 0; i < k; i++, l->n++) {
        if (l->n < 8)
            l->low[l->n] = b[i];
        else if (b[i] != ((l->low[7] & 0x80) ? 0xff : 0x00))
            l->extends = 0;
        l->last = b[i];
    }
}

static pk_node *long_value(vr_pickle *p, const pk_long *l)
{
    int fits64 = l->n <= 8 || l->extends;
    pk_node *n = new_scalar(p, fits64 ? VR_PK_INT : VR_PK_TOO_LARGE, 0);
    if (!n)
        return NULL;
    if (!fits64)
        n->v.i = (l->last & 0x80) ? -1 : 1; /* the sign */
    else if (l->n)
        n->v.i = signed_le(l->low, l->n < 8 ? (int)l->n : 8);
    return n;
}

static pk_node *string_value(vr_pickle *p, int kind, const unsigned char *data, size_t len)
{
    pk_node *n = new_scalar(p, kind == P_STR ? VR_PK_STR : VR_PK_BYTES, len + 1);
    if (!n)
        return NULL;
    char *s = (char *)(n + 1);
    if (len)
        memcpy(s, data, len);
    s[len] = '\0';
    n->v.s = s;
    n->v.len = len;
    if (kind == P_BYTEARRAY)
        n->flags &= (uint16_t)~F_HASHABLE;
    return n;
}

/* A string gathered over several chunks keeps its buffer. */
static pk_node *gathered_value(vr_pickle *p, int kind)
{
    size_t len = (size_t)p->g_need;
    pk_node *n = new_scalar(p, kind == P_STR ? VR_PK_STR : VR_PK_BYTES, 0);
    if (!n)
        return NULL;
    unsigned char *buf = vr_xrealloc(p->g_buf, len + 1);
    buf[len] = '\0';
    /* the node now holds len + 1 bytes in place of the buffer's g_cap */
    p->held += len + 1;
    uncharge(p, p->g_cap);
    p->g_buf = NULL;
    p->g_cap = 0;
    n->v.s = (const char *)buf;
    n->v.len = len;
    n->flags |= F_OWNDATA;
    if (kind == P_BYTEARRAY)
        n->flags &= (uint16_t)~F_HASHABLE;
    return n;
}

static int gather_bytes(vr_pickle *p, const unsigned char *b, size_t k)
{
    if (p->g_kind == P_LONG) {
        long_add(&p->g_long, b, k);
        return 0;
    }
    size_t have = (size_t)p->g_have;
    if (have + k + 1 > p->g_cap) {
        /* grow by doubling, never past the declared length */
        size_t want = p->g_cap ? p->g_cap * 2 : 4096;
        if (want < have + k + 1)
            want = have + k + 1;
        if (want > p->g_need + 1)
            want = (size_t)p->g_need + 1;
        if (charge(p, want - p->g_cap) < 0)
            return -1;
        p->g_buf = vr_xrealloc(p->g_buf, want);
        p->g_cap = want;
    }
    memcpy(p->g_buf + have, b, k);
    return 0;
}

static int payload_done(vr_pickle *p)
{
    int kind = p->g_kind;
    p->g_kind = P_NONE;
    return push(p, kind == P_LONG ? long_value(p, &p->g_long) : gathered_value(p, kind));
}

/* Takes what the chunk has of the payload; finishes it when complete. */
static int gather(vr_pickle *p)
{
    uint64_t left = p->g_need - p->g_have;
    size_t avail = (size_t)(p->end - p->cur);
    size_t k = left < avail ? (size_t)left : avail;
    if (gather_bytes(p, p->cur, k) < 0)
        return -1;
    p->cur += k;
    p->g_have += k;
    return p->g_have == p->g_need ? payload_done(p) : 0;
}

/* A length-prefixed payload of `len` bytes: refused before anything is
 * allocated when it is beyond the limits, read in place when the chunk
 * holds it all, gathered otherwise. */
static int begin_payload(vr_pickle *p, int kind, uint64_t len)
{
    if (len > p->lim.max_bytes) {
        char lim[32];
        limit_text(p->lim.max_bytes, lim, sizeof lim);
        return BAD(p, "%s declares %llu bytes, more than the decoder's limit of %s", op_name(p),
                   (unsigned long long)len, lim);
    }
    if (kind != P_LONG && len + sizeof(pk_node) + 1 > p->lim.max_bytes - p->held)
        return over_limit(p);
    if ((uint64_t)(p->end - p->cur) >= len) {
        const unsigned char *at = p->cur;
        p->cur += len;
        if (kind != P_LONG)
            return push(p, string_value(p, kind, at, (size_t)len));
        pk_long l = {{0}, 0, 1, 0};
        long_add(&l, at, (size_t)len);
        return push(p, long_value(p, &l));
    }
    p->g_kind = kind;
    p->g_need = len;
    p->g_have = 0;
    p->g_long = (pk_long){{0}, 0, 1, 0};
    return gather(p);
}

/*-*** opcodes ***/

static int op_proto(vr_pickle *p, const unsigned char *a)
{
    if (a[0] < 2 || a[0] > 5)
        return fail(p, VR_ERR_NOT_SUPPORTED,
                    "pickle protocol %u is not read (vramreport reads protocols 2 to 5)", a[0]);
    if (!p->protocol)
        p->protocol = a[0];
    return 0;
}

/* FRAME announces how many bytes follow; nothing depends on it. */
static int op_frame(vr_pickle *p, const unsigned char *a)
{
    (void)p;
    (void)a;
    return 0;
}

/* Frees everything the machine holds (after STOP, or at the end). */
static void clear_machine(vr_pickle *p)
{
    while (p->nmarks || p->sp)
        drop_group(p);
    memo_clear(p);
    spare_clear(p);
    for (int cont = 0; cont < 2; cont++) {
        free(p->spare[cont]);
        p->spare[cont] = NULL;
    }
    pool_clear(p);
    uncharge(p, p->stack_cap * sizeof *p->stack + p->marks_cap * sizeof *p->marks +
                    p->steps_cap * sizeof *p->steps + p->g_cap);
    free(p->stack);
    free(p->marks);
    free(p->steps);
    free(p->g_buf);
    p->stack = NULL;
    p->marks = NULL;
    p->steps = NULL;
    p->g_buf = NULL;
    p->stack_cap = p->marks_cap = p->steps_cap = p->g_cap = 0;
}

static int op_stop(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    if (pending_failure(p) < 0 || need(p, 1) < 0)
        return -1;
    pk_node *root = p->stack[--p->sp];
    p->state = ST_DONE;
    int rc = 0;
    if (p->h.on_done && p->h.on_done(p->h.ud, &root->v, p->err) < 0)
        rc = callback_failed(p);
    release(p, root, 0);
    clear_machine(p);
    if (p->state == ST_DONE) /* what follows STOP is counted, not read */
        p->trailing += (uint64_t)(p->end - p->cur);
    p->cur = p->end;
    return rc;
}

static int op_mark(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    if (p->nmarks >= p->lim.max_depth)
        return BAD(p, "more than %zu MARKs open at once (nesting beyond the decoder's limit)",
                   p->lim.max_depth);
    if (p->nmarks < p->marks_cap) { /* the common case: no call */
        p->marks[p->nmarks++] = p->sp;
        return 0;
    }
    if (grow(p, &p->marks, &p->marks_cap, p->nmarks + 1, sizeof *p->marks, 16) < 0)
        return -1;
    p->marks[p->nmarks++] = p->sp;
    return 0;
}

/* POP on an empty group pops its MARK, as CPython does. */
static int op_pop(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    if (group_len(p) == 0 && p->nmarks) {
        p->nmarks--;
        return 0;
    }
    if (need(p, 1) < 0)
        return -1;
    release(p, p->stack[--p->sp], 0);
    return 0;
}

static int op_pop_mark(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    if (need_mark(p) < 0)
        return -1;
    drop_group(p);
    return 0;
}

static int op_dup(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    return need(p, 1) < 0 ? -1 : push(p, retain(p->stack[p->sp - 1]));
}

static int op_none(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    return push(p, &p->none);
}

static int op_true(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    return push(p, &p->yes);
}

static int op_false(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    return push(p, &p->no);
}

static int push_int(vr_pickle *p, int64_t v)
{
    if (v >= 0 && v < SMALL_INTS)
        return push(p, &p->small_ints[v]); /* shared, like CPython's small ints */
    pk_node *n = new_plain(p, VR_PK_INT);
    if (n)
        n->v.i = v;
    return push(p, n);
}

static int op_binint(vr_pickle *p, const unsigned char *a)
{
    int64_t v = le32(a);
    return push_int(p, v >= 0x80000000 ? v - 0x100000000 : v); /* two's complement */
}

static int op_binint1(vr_pickle *p, const unsigned char *a)
{
    return push_int(p, a[0]);
}

static int op_binint2(vr_pickle *p, const unsigned char *a)
{
    return push_int(p, le16(a));
}

/* BINFLOAT is big-endian, unlike everything else in a pickle. */
static int op_binfloat(vr_pickle *p, const unsigned char *a)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u = u << 8 | a[i];
    pk_node *n = new_plain(p, VR_PK_FLOAT);
    if (n)
        memcpy(&n->v.f, &u, sizeof u);
    return push(p, n);
}

/* LONG1 of at most 8 bytes whole in the chunk (an address, a time): read
 * in place, as begin_payload and long_value would. */
static int op_long1(vr_pickle *p, const unsigned char *a)
{
    size_t len = a[0];
    if (len == 0 || len > 8 || len > p->lim.max_bytes || (size_t)(p->end - p->cur) < len)
        return begin_payload(p, P_LONG, len);
    pk_node *n = new_plain(p, VR_PK_INT);
    if (n) /* 8 bytes read at once where the chunk has them, the rest masked */
        n->v.i = p->end - p->cur >= 8 ? signed_bits(le64(p->cur), (int)len)
                                      : signed_le(p->cur, (int)len);
    p->cur += len;
    return push(p, n);
}

static int op_long4(vr_pickle *p, const unsigned char *a)
{
    int64_t n = signed_le(a, 4);
    if (n < 0)
        return BAD(p, "LONG4 with a negative byte count (%lld)", (long long)n);
    return begin_payload(p, P_LONG, (uint64_t)n);
}

static int op_str1(vr_pickle *p, const unsigned char *a)
{
    return begin_payload(p, P_STR, a[0]);
}

static int op_str4(vr_pickle *p, const unsigned char *a)
{
    return begin_payload(p, P_STR, le32(a));
}

static int op_str8(vr_pickle *p, const unsigned char *a)
{
    return begin_payload(p, P_STR, le(a, 8));
}

static int op_bytes1(vr_pickle *p, const unsigned char *a)
{
    return begin_payload(p, P_BYTES, a[0]);
}

static int op_bytes4(vr_pickle *p, const unsigned char *a)
{
    return begin_payload(p, P_BYTES, le32(a));
}

static int op_bytes8(vr_pickle *p, const unsigned char *a)
{
    return begin_payload(p, P_BYTES, le(a, 8));
}

static int op_bytearray8(vr_pickle *p, const unsigned char *a)
{
    return begin_payload(p, P_BYTEARRAY, le(a, 8));
}

static int op_empty_dict(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    return push(p, (pk_node *)new_cont(p, VR_PK_DICT));
}

static int op_empty_tuple(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    return push(p, (pk_node *)new_cont(p, VR_PK_TUPLE));
}

static int op_empty_list(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    pk_cont *c = new_cont(p, VR_PK_LIST);
    if (!c)
        return -1;
    if (ask_stream(p, c, p->sp) < 0) {
        release(p, &c->n, 0);
        return -1;
    }
    return push(p, &c->n);
}

/* DICT, LIST, TUPLE: a new container of the values after the top MARK. */
static int from_mark(vr_pickle *p, vr_pk_kind kind)
{
    if (need_mark(p) < 0)
        return -1;
    pk_cont *c = new_cont(p, kind);
    if (!c)
        return -1;
    size_t start = p->marks[--p->nmarks], end = p->sp;
    p->sp = start; /* the values stay in place above sp until moved */
    int rc = kind == VR_PK_LIST ? ask_stream(p, c, start) : 0;
    if (rc == 0)
        rc = kind == VR_PK_DICT ? fill_dict(p, c, start, end) : fill_list(p, c, start, end);
    if (rc < 0) {
        for (size_t i = start; i < end; i++)
            release(p, p->stack[i], 0);
        release(p, &c->n, 0);
        return -1;
    }
    return push(p, &c->n);
}

static int op_dict(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    return from_mark(p, VR_PK_DICT);
}

static int op_list(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    return from_mark(p, VR_PK_LIST);
}

static int op_tuple(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    return from_mark(p, VR_PK_TUPLE);
}

/* TUPLE1, TUPLE2, TUPLE3: the top n values. */
static int tuple_n(vr_pickle *p, size_t n)
{
    if (need(p, n) < 0)
        return -1;
    pk_cont *c = new_cont(p, VR_PK_TUPLE);
    if (!c || room(p, c, n) < 0) {
        if (c)
            release(p, &c->n, 0);
        return -1;
    }
    for (size_t i = p->sp - n; i < p->sp; i++) {
        if (adopt(p, c, i) < 0) {
            release(p, &c->n, 0);
            return -1;
        }
    }
    p->sp -= n;
    return push(p, &c->n);
}

static int op_tuple1(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    return tuple_n(p, 1);
}

static int op_tuple2(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    return tuple_n(p, 2);
}

static int op_tuple3(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    return tuple_n(p, 3);
}

static int op_append(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    if (need(p, 2) < 0)
        return -1;
    pk_node *list = p->stack[p->sp - 2];
    if (fillable(p, list, VR_PK_LIST, 1) < 0 || fill_list(p, as_cont(list), p->sp - 1, p->sp) < 0)
        return -1;
    p->sp--;
    return 0;
}

static int op_appends(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    if (need_mark(p) < 0)
        return -1;
    size_t start = group_start(p);
    pk_node *list = below_mark(p);
    if (fillable(p, list, VR_PK_LIST, p->sp - start) < 0 ||
        fill_list(p, as_cont(list), start, p->sp) < 0)
        return -1;
    p->sp = start;
    p->nmarks--;
    return 0;
}

static int op_setitem(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    if (need(p, 3) < 0)
        return -1;
    pk_node *dict = p->stack[p->sp - 3];
    if (fillable(p, dict, VR_PK_DICT, 1) < 0 || fill_dict(p, as_cont(dict), p->sp - 2, p->sp) < 0)
        return -1;
    p->sp -= 2;
    return 0;
}

static int op_setitems(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    if (need_mark(p) < 0)
        return -1;
    size_t start = group_start(p);
    pk_node *dict = below_mark(p);
    if (fillable(p, dict, VR_PK_DICT, (p->sp - start) / 2) < 0 ||
        fill_dict(p, as_cont(dict), start, p->sp) < 0)
        return -1;
    p->sp = start;
    p->nmarks--;
    return 0;
}

/* MEMOIZE puts the top value in slot len(memo), as CPython counts it. */
static int op_memoize(vr_pickle *p, const unsigned char *a)
{
    (void)a;
    return memo_put(p, p->memo_count);
}

static int op_binput(vr_pickle *p, const unsigned char *a)
{
    return memo_put(p, a[0]);
}

static int op_long_binput(vr_pickle *p, const unsigned char *a)
{
    return memo_put(p, le32(a));
}

static int op_binget(vr_pickle *p, const unsigned char *a)
{
    return memo_get(p, a[0]);
}

static int op_long_binget(vr_pickle *p, const unsigned char *a)
{
    return memo_get(p, le32(a));
}

/* One row per opcode CPython knows (pickletools.opcodes). The ones that
 * would import or call code, and the data ones pickle.dump does not write
 * for plain dicts (protocol 0 text forms, sets, out-of-band buffers), have
 * no handler: they stop the decoding by name. */
static const pk_op ops[256] = {
    [0x28] = {"MARK", 0, OP_READ, op_mark},
    [0x2e] = {"STOP", 0, OP_READ, op_stop},
    [0x30] = {"POP", 0, OP_READ, op_pop},
    [0x31] = {"POP_MARK", 0, OP_READ, op_pop_mark},
    [0x32] = {"DUP", 0, OP_READ, op_dup},
    [0x46] = {"FLOAT", 0, OP_OTHER, NULL},
    [0x49] = {"INT", 0, OP_OTHER, NULL},
    [0x4a] = {"BININT", 4, OP_READ, op_binint},
    [0x4b] = {"BININT1", 1, OP_READ, op_binint1},
    [0x4c] = {"LONG", 0, OP_OTHER, NULL},
    [0x4d] = {"BININT2", 2, OP_READ, op_binint2},
    [0x4e] = {"NONE", 0, OP_READ, op_none},
    [0x50] = {"PERSID", 0, OP_CALLS, NULL},
    [0x51] = {"BINPERSID", 0, OP_CALLS, NULL},
    [0x52] = {"REDUCE", 0, OP_CALLS, NULL},
    [0x53] = {"STRING", 0, OP_OTHER, NULL},
    [0x54] = {"BINSTRING", 0, OP_OTHER, NULL},
    [0x55] = {"SHORT_BINSTRING", 0, OP_OTHER, NULL},
    [0x56] = {"UNICODE", 0, OP_OTHER, NULL},
    [0x58] = {"BINUNICODE", 4, OP_READ, op_str4},
    [0x61] = {"APPEND", 0, OP_READ, op_append},
    [0x62] = {"BUILD", 0, OP_CALLS, NULL},
    [0x63] = {"GLOBAL", 0, OP_IMPORTS, NULL},
    [0x64] = {"DICT", 0, OP_READ, op_dict},
    [0x7d] = {"EMPTY_DICT", 0, OP_READ, op_empty_dict},
    [0x65] = {"APPENDS", 0, OP_READ, op_appends},
    [0x67] = {"GET", 0, OP_OTHER, NULL},
    [0x68] = {"BINGET", 1, OP_READ, op_binget},
    [0x69] = {"INST", 0, OP_IMPORTS, NULL},
    [0x6a] = {"LONG_BINGET", 4, OP_READ, op_long_binget},
    [0x6c] = {"LIST", 0, OP_READ, op_list},
    [0x5d] = {"EMPTY_LIST", 0, OP_READ, op_empty_list},
    [0x6f] = {"OBJ", 0, OP_CALLS, NULL},
    [0x70] = {"PUT", 0, OP_OTHER, NULL},
    [0x71] = {"BINPUT", 1, OP_READ, op_binput},
    [0x72] = {"LONG_BINPUT", 4, OP_READ, op_long_binput},
    [0x73] = {"SETITEM", 0, OP_READ, op_setitem},
    [0x74] = {"TUPLE", 0, OP_READ, op_tuple},
    [0x29] = {"EMPTY_TUPLE", 0, OP_READ, op_empty_tuple},
    [0x75] = {"SETITEMS", 0, OP_READ, op_setitems},
    [0x47] = {"BINFLOAT", 8, OP_READ, op_binfloat},
    [0x80] = {"PROTO", 1, OP_READ, op_proto},
    [0x81] = {"NEWOBJ", 0, OP_CALLS, NULL},
    [0x82] = {"EXT1", 0, OP_IMPORTS, NULL},
    [0x83] = {"EXT2", 0, OP_IMPORTS, NULL},
    [0x84] = {"EXT4", 0, OP_IMPORTS, NULL},
    [0x85] = {"TUPLE1", 0, OP_READ, op_tuple1},
    [0x86] = {"TUPLE2", 0, OP_READ, op_tuple2},
    [0x87] = {"TUPLE3", 0, OP_READ, op_tuple3},
    [0x88] = {"NEWTRUE", 0, OP_READ, op_true},
    [0x89] = {"NEWFALSE", 0, OP_READ, op_false},
    [0x8a] = {"LONG1", 1, OP_READ, op_long1},
    [0x8b] = {"LONG4", 4, OP_READ, op_long4},
    [0x42] = {"BINBYTES", 4, OP_READ, op_bytes4},
    [0x43] = {"SHORT_BINBYTES", 1, OP_READ, op_bytes1},
    [0x8c] = {"SHORT_BINUNICODE", 1, OP_READ, op_str1},
    [0x8d] = {"BINUNICODE8", 8, OP_READ, op_str8},
    [0x8e] = {"BINBYTES8", 8, OP_READ, op_bytes8},
    [0x8f] = {"EMPTY_SET", 0, OP_OTHER, NULL},
    [0x90] = {"ADDITEMS", 0, OP_OTHER, NULL},
    [0x91] = {"FROZENSET", 0, OP_OTHER, NULL},
    [0x92] = {"NEWOBJ_EX", 0, OP_CALLS, NULL},
    [0x93] = {"STACK_GLOBAL", 0, OP_IMPORTS, NULL},
    [0x94] = {"MEMOIZE", 0, OP_READ, op_memoize},
    [0x95] = {"FRAME", 8, OP_READ, op_frame},
    [0x96] = {"BYTEARRAY8", 8, OP_READ, op_bytearray8},
    [0x97] = {"NEXT_BUFFER", 0, OP_OTHER, NULL},
    [0x98] = {"READONLY_BUFFER", 0, OP_OTHER, NULL},
};

static const pk_op *op_row(unsigned char byte)
{
    return &ops[byte];
}

/*-*** the feed loop ***/

/* Refuses what this decoder never runs, by name and offset. */
static int check_opcode(vr_pickle *p, unsigned char byte)
{
    const pk_op *o = op_row(byte);
    if (p->state == ST_START) {
        if (byte != 0x80)
            return fail(p, VR_ERR_NOT_RECOGNISED,
                        "not a pickle: it begins with byte 0x%02x, not PROTO (0x80)", byte);
        p->state = ST_RUN;
    }
    switch (o->kind) {
    case OP_READ:
        return 0;
    case OP_IMPORTS:
    case OP_CALLS:
        return BAD(p,
                   "opcode %s (0x%02x) would %s code: refused (vramreport never runs what a "
                   "file holds)",
                   o->name, byte, o->kind == OP_IMPORTS ? "import" : "call");
    case OP_OTHER:
        return BAD(p,
                   "opcode %s (0x%02x) is not read (vramreport reads what pickle.dump writes "
                   "for dicts, lists, tuples, strings, bytes and numbers)",
                   o->name, byte);
    default:
        return BAD(p, "unknown pickle opcode 0x%02x", byte);
    }
}

/* The next opcode and its fixed argument, contiguous: in place in the
 * chunk, or from the carry buffer once complete. NULL: not complete yet
 * (or refused: p->state says). */
static const unsigned char *take(vr_pickle *p)
{
    if (p->carry_len == 0) {
        p->op_off = pos_of(p, p->cur);
        p->op = *p->cur;
        if (check_opcode(p, p->op) < 0)
            return NULL;
        size_t n = 1 + op_row(p->op)->arg;
        if ((size_t)(p->end - p->cur) >= n) {
            const unsigned char *ins = p->cur;
            p->cur += n;
            return ins;
        }
    }
    size_t n = 1 + op_row(p->op)->arg, avail = (size_t)(p->end - p->cur);
    size_t k = n - p->carry_len < avail ? n - p->carry_len : avail;
    memcpy(p->carry + p->carry_len, p->cur, k);
    p->carry_len += k;
    p->cur += k;
    if (p->carry_len < n)
        return NULL;
    p->carry_len = 0;
    return p->carry;
}

static int step(vr_pickle *p)
{
    const unsigned char *ins = take(p);
    if (!ins)
        return p->state == ST_FAILED ? -1 : 0;
    return op_row(ins[0])->run(p, ins + 1);
}

/* A plain node from the spare ones, for fast_op (which only runs when
 * there is one: then nothing can fail). */
static inline pk_node *spare_plain(vr_pickle *p, vr_pk_kind kind, int64_t i)
{
    pk_node *n = p->spare[0][--p->nspare[0]];
    *n = (pk_node){.v = {.kind = kind, .i = i}, .refs = 1, .flags = F_HASHABLE, .slot = NO_SLOT};
    return n;
}

/* An int as push_int makes it, for fast_op: 0 when it needs a new node
 * and no spare one is there. */
static inline int push_int_fast(vr_pickle *p, int64_t v)
{
    if (v >= 0 && v < SMALL_INTS)
        p->stack[p->sp++] = &p->small_ints[v];
    else if (p->nspare[0])
        p->stack[p->sp++] = spare_plain(p, VR_PK_INT, v);
    else
        return 0;
    return 1;
}

/* MEMOIZE as memo_put does it, for fast_op, in the common case: a value
 * above the MARK, a slot never set in a page already there, a freed
 * handle to reuse, a value not immortal and, for a container, its first
 * slot. 0 (nothing done) otherwise. */
static inline int memoize_fast(vr_pickle *p)
{
    uint64_t idx = p->memo_count;
    if (p->sp <= group_start(p) || idx >= p->lim.max_memo || p->free_handle == SIZE_MAX)
        return 0;
    uint32_t *slot = vr_slots_poke(&p->memo, idx);
    pk_node *n = p->stack[p->sp - 1];
    if (!slot || *slot != SLOT_EMPTY || (n->flags & F_IMMORTAL) ||
        (is_cont(n->v.kind) && n->slot != NO_SLOT))
        return 0;
    uint32_t handle = 0;
    new_handle(p, n, &handle); /* a freed one: cannot fail */
    p->memo_count++;
    *slot = handle;
    n->refs++;
    n->memo_refs++;
    if (is_cont(n->v.kind))
        n->slot = (uint32_t)idx;
    return 1;
}

/* The commonest opcodes of a snapshot without the call through the
 * opcode table, where nothing can fail and nothing needs allocating:
 * BINGET and LONG_BINGET of what the memo holds or a cached reference,
 * MARK, MEMOIZE, EMPTY_DICT, and the ints. The bytes taken, or 0: the
 * table's handler then runs the opcode, as it always did. */
static inline size_t fast_op(vr_pickle *p, const unsigned char *cur, const unsigned char *end)
{
    ptrdiff_t left = end - cur;
    if (*cur == 0x6a) /* LONG_BINGET: most of a snapshot's opcodes, tested first */
        return left >= 5 && get_held(p, le32(cur + 1)) ? 5 : 0;
    if (p->sp >= p->stack_cap)
        return 0;
    switch (*cur) {
    case 0x68: /* BINGET */
        return left >= 2 && get_held(p, cur[1]) ? 2 : 0;
    case 0x28: /* MARK */
        if (p->nmarks >= p->marks_cap || p->nmarks >= p->lim.max_depth)
            return 0;
        p->marks[p->nmarks++] = p->sp;
        return 1;
    case 0x94: /* MEMOIZE */
        return (size_t)memoize_fast(p);
    case 0x4b: /* BININT1 */
        return left >= 2 && push_int_fast(p, cur[1]) ? 2 : 0;
    case 0x4d: /* BININT2 */
        return left >= 3 && push_int_fast(p, le16(cur + 1)) ? 3 : 0;
    case 0x4a: { /* BININT */
        int64_t v = left >= 5 ? le32(cur + 1) : 0;
        return left >= 5 && push_int_fast(p, v >= 0x80000000 ? v - 0x100000000 : v) ? 5 : 0;
    }
    case 0x8a: { /* LONG1 of 1 to 8 bytes, with 8 bytes to read at once */
        size_t len = left >= 2 ? cur[1] : 0;
        if (len == 0 || len > 8 || len > p->lim.max_bytes || left < 10 || !p->nspare[0])
            return 0;
        p->stack[p->sp++] = spare_plain(p, VR_PK_INT, signed_bits(le64(cur + 2), (int)len));
        return 2 + len;
    }
    case 0x7d: /* EMPTY_DICT */
        if (!p->nspare[1])
            return 0;
        p->stack[p->sp++] = (pk_node *)new_cont(p, VR_PK_DICT);
        return 1;
    default:
        return 0;
    }
}

/* Opcodes that are read and whole in the chunk, run one after the other
 * while nothing is carried over and no payload goes on (the common case:
 * everything but the chunk's last opcode or two). Stops before an opcode
 * that is not, or after one that begins a payload, stops or fails. */
static int run_whole(vr_pickle *p)
{
    /* the chunk's end does not move during a feed (the stores through p
     * below would make the compiler read it again each time); an opcode's
     * offset is the chunk's offset plus its address, in wrapping unsigned
     * arithmetic */
    const unsigned char *cur = p->cur, *end = p->end;
    uint64_t off_base = p->fed - (uint64_t)(uintptr_t)p->chunk;
    while (cur < end) {
        size_t took = fast_op(p, cur, end);
        if (took) {
            cur += took;
            continue;
        }
        p->cur = cur;
        const pk_op *o = op_row(*cur);
        if (o->kind != OP_READ || (size_t)(end - cur) <= o->arg)
            break;
        p->op_off = off_base + (uint64_t)(uintptr_t)cur;
        p->op = *cur;
        p->cur = cur + 1 + o->arg;
        if (o->run(p, cur + 1) < 0)
            return -1;
        if (p->g_kind != P_NONE || p->state != ST_RUN)
            return 0;
        cur = p->cur;
    }
    p->cur = cur;
    return 0;
}

/* While on_root waits (watch_root), after each opcode: tells it the
 * root's shape once the stack shows it. The root is the first value; a
 * dict's first key is the value just above it, put there by SETITEM or
 * after the MARK of SETITEMS (more MARKs: a key still being built). */
static int watch_root(vr_pickle *p)
{
    if (p->state != ST_RUN) {
        p->watch_root = p->state == ST_START;
        return 0;
    }
    const pk_node *root = NULL, *key = NULL;
    if (p->nmarks && p->marks[0] == 0) {
        root = NULL; /* a MARK first: a tuple, or what pickle.dump does not write */
    } else if (p->sp == 0) {
        return 0;
    } else if (p->stack[0]->v.kind == VR_PK_DICT) {
        if (p->sp < 2 || p->nmarks > 1 || (p->nmarks == 1 && p->marks[0] != 1))
            return 0;
        root = p->stack[0];
        key = p->stack[1];
    } else {
        root = p->stack[0];
    }
    p->watch_root = 0;
    if (p->h.on_root(p->h.ud, root ? &root->v : NULL, key ? &key->v : NULL, p->err) < 0)
        return callback_failed(p);
    return 0;
}

/* The opcodes of a chunk: whole ones at once, anything else (a payload
 * going on, an opcode cut by the chunk's end, one refused, the first, the
 * few before the root's shape shows) through step() and gather(). */
static int run_chunk(vr_pickle *p)
{
    int rc = 0;
    while (rc == 0 && p->cur < p->end) {
        if (p->state == ST_DONE) {
            p->trailing += (uint64_t)(p->end - p->cur);
            break;
        }
        const unsigned char *was = p->cur;
        if (p->g_kind == P_NONE && p->carry_len == 0 && p->state == ST_RUN && !p->watch_root &&
            (rc = run_whole(p)) == 0 && p->cur != was)
            continue;
        if (rc == 0 && p->cur < p->end && p->state != ST_DONE)
            rc = p->g_kind != P_NONE ? gather(p) : step(p);
        if (rc == 0 && p->watch_root)
            rc = watch_root(p);
    }
    return rc;
}

int vr_pickle_feed(vr_pickle *p, const void *data, size_t len, vr_error *err)
{
    if (p->state == ST_FAILED) {
        *err = p->failure;
        return -1;
    }
    if (len == 0)
        return 0; /* (data may be NULL) */
    p->err = err;
    p->chunk = p->cur = data;
    p->end = p->cur + len;
    int rc = run_chunk(p);
    p->fed += len;
    p->err = NULL;
    p->chunk = p->cur = p->end = NULL;
    if (rc < 0) {
        *err = p->failure;
        return -1;
    }
    return 0;
}

int vr_pickle_finish(vr_pickle *p, vr_error *err)
{
    if (p->state == ST_FAILED) {
        *err = p->failure;
        return -1;
    }
    if (p->state == ST_DONE)
        return 0;
    if (!p->protocol)
        return vr_fail_code(err, VR_ERR_NOT_RECOGNISED,
                            p->fed ? "byte %llu: the input ends inside its PROTO opcode"
                                   : "byte %llu: empty input",
                            (unsigned long long)p->fed);
    return 1;
}

/*-*** lifetime ***/

static size_t or_default(size_t v, size_t def, size_t ceil)
{
    return v == 0 ? def : v > ceil ? ceil : v;
}

static void init_immortal(pk_node *n, vr_pk_kind kind, int64_t i)
{
    memset(n, 0, sizeof *n);
    n->v.kind = kind;
    n->v.i = i;
    n->flags = F_IMMORTAL | F_HASHABLE;
    n->slot = NO_SLOT;
}

vr_pickle *vr_pickle_new(const vr_pk_limits *limits, const vr_pk_handlers *h)
{
    vr_pickle *p = vr_xmalloc(sizeof *p);
    memset(p, 0, sizeof *p);
    vr_pk_limits l = limits ? *limits : (vr_pk_limits){0};
    uint64_t bytes_ceil = CEIL_BYTES < SIZE_MAX ? CEIL_BYTES : SIZE_MAX;
    p->lim.max_depth = or_default(l.max_depth, DEFAULT_DEPTH, CEIL_DEPTH);
    p->lim.max_items = or_default(l.max_items, DEFAULT_ITEMS, SIZE_MAX / 4);
    p->lim.max_memo = or_default(l.max_memo, DEFAULT_MEMO, CEIL_MEMO);
    p->lim.max_bytes = or_default(l.max_bytes, DEFAULT_BYTES, (size_t)bytes_ceil);
    p->lim.max_nodes = l.max_nodes ? l.max_nodes : DEFAULT_NODES;
    p->lim.max_memo_in_memory =
        l.max_memo_in_memory ? l.max_memo_in_memory : DEFAULT_MEMO_IN_MEMORY;
    if (h)
        p->h = *h;
    p->watch_root = p->h.on_root != NULL;
    p->free_handle = SIZE_MAX;
    vr_slots_init(&p->memo, p->lim.max_memo_in_memory / (VR_SLOTS_PAGE * sizeof(uint32_t)),
                  memo_charge, p);
    init_immortal(&p->none, VR_PK_NONE, 0);
    for (int i = 0; i < SMALL_INTS; i++)
        init_immortal(&p->small_ints[i], VR_PK_INT, i);
    init_immortal(&p->yes, VR_PK_BOOL, 1);
    init_immortal(&p->no, VR_PK_BOOL, 0);
    return p;
}

void vr_pickle_free(vr_pickle *p)
{
    if (!p)
        return;
    clear_machine(p);
    free(p);
}

void vr_pickle_stream_depth(vr_pickle *p, size_t depth)
{
    p->stream_depth = depth;
}

uint64_t vr_pickle_offset(const vr_pickle *p)
{
    return p->fed;
}

uint64_t vr_pickle_op_offset(const vr_pickle *p)
{
    return p->op_off;
}

uint64_t vr_pickle_trailing(const vr_pickle *p)
{
    return p->trailing;
}

int vr_pickle_protocol(const vr_pickle *p)
{
    return p->protocol;
}

size_t vr_pickle_held(const vr_pickle *p)
{
    return p->held;
}

size_t vr_pickle_peak(const vr_pickle *p)
{
    return p->peak;
}

/*-*** lookups ***/

/* The last match, as Python keeps the last value of a key set twice. */
const vr_pk_value *vr_pk_get(const vr_pk_value *dict, const char *key)
{
    if (!dict || dict->kind != VR_PK_DICT || !key)
        return NULL;
    size_t n = strlen(key);
    for (size_t i = dict->len; i-- > 0;) {
        const vr_pk_value *k = dict->items[2 * i];
        if (k->kind == VR_PK_STR && k->len == n && memcmp(k->s, key, n) == 0)
            return dict->items[2 * i + 1];
    }
    return NULL;
}

int vr_pk_int(const vr_pk_value *v, int64_t *out)
{
    if (!v || (v->kind != VR_PK_INT && v->kind != VR_PK_BOOL))
        return 0;
    *out = v->i;
    return 1;
}

int vr_pk_str_eq(const vr_pk_value *v, const char *lit)
{
    size_t n = lit ? strlen(lit) : 0;
    return v && lit && v->kind == VR_PK_STR && v->len == n && memcmp(v->s, lit, n) == 0;
}

void vr_pk_set_tag(const vr_pk_value *container, int64_t tag)
{
    if (!container || !is_cont(container->kind) || tag < 0)
        return;
    pk_cont *c = as_cont(node_of(container));
    c->tag = tag;
    c->n.flags |= F_TAGGED;
}

int64_t vr_pk_tag(const vr_pk_value *container)
{
    if (!container || !is_cont(container->kind))
        return -1;
    const pk_cont *c = as_cont(node_of(container));
    return (c->n.flags & F_TAGGED) ? c->tag : -1;
}

void vr_pk_path_text(const vr_pk_path *p, vr_buf *b)
{
    if (p->depth == 0)
        vr_buf_putc(b, '$');
    for (size_t i = 0; i < p->depth; i++) {
        if (i)
            vr_buf_putc(b, '.');
        if (p->steps[i].key)
            vr_buf_append(b, p->steps[i].key, p->steps[i].key_len);
        else if (p->steps[i].index == SIZE_MAX)
            vr_buf_putc(b, '?');
        else
            vr_buf_printf(b, "%zu", p->steps[i].index);
    }
}

size_t vr_pk_container_size(void)
{
    return sizeof(pk_cont);
}
