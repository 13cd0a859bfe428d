/* Reader for CUDA caching-allocator snapshots
 * (torch.cuda.memory._dump_snapshot): a pickled dict of `segments` (the
 * state the allocator ends in: each segment and its blocks) and
 * `device_traces` (per device, the recorded history: alloc, free, segment
 * and oom entries), each with the stack that made it; older files are a
 * bare list of segments, or blocks with a `history` in place of frames
 * (docs/formats/allocator-snapshot.md).
 *
 * The pickle is decoded by our own data-only decoder (src/parse/pickle.c):
 * nothing in the file is ever run. The segments and each device's trace
 * entries are streamed, one element at a time, so memory stays flat
 * whatever the file's size. Frames and stacks are stored once however
 * often they recur; a frames list the pickle shares between a block and a
 * trace entry comes back as a reference to the stack already stored.
 *
 * The alloc and free entries become memory events whose totals end
 * exactly at the state the segments show (anchor_totals): what was live
 * before the first recorded entry (the history is a ring buffer) is
 * counted, as memory_viz counts it, as pre-existing. Such an entry is
 * stored once, as its memory event; the others go to trace_entry_other,
 * and the view trace_entry shows both (migration 16).
 *
 * The rows of trace entries, memory events and new stacks are written by
 * a writer thread (src/batch/batch.h) while this one decodes: the two take
 * about as long on a large snapshot, so the import stage takes about half
 * its CPU time. Whatever else touches the connection while the writer
 * runs goes between vr_batch_writer_enter() and _leave(): devices, segments
 * and blocks, frames the caches do not know, oom rows, the root's small
 * members. New stacks need no query: every stack stored is in the stack
 * map (known_stacks), so one it lacks is new and is numbered here.
 *
 * The model (segments, blocks, trace entries, frames and stacks, the end
 * state) is shared with the JSON form's front end (snapshot_json.c)
 * through snapshot.h: both hand it vr_pk_value trees. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/pickle.h"
#include "util/hash.h"
#include "util/idmap.h"
#include "util/sat.h"
#include "util/timing.h"
#include "batch/batch.h"
#include "import/reader.h"
#include "import/readers/snapshot/snapshot.h"

static const char snapshot_sql[] = "schemas/snapshot.sql";

/* The batches' columns, by their names in snapshot.sql: insert_other_entry,
 * insert_snapshot_event, insert_stack_frame, insert_numbered_stack. */
enum {
    OE_ID,
    OE_SOURCE,
    OE_DEVICE,
    OE_SEQ,
    OE_ACTION,
    OE_ADDRESS,
    OE_BYTES,
    OE_STREAM,
    OE_TS,
    OE_FREE,
    OE_STACK,
    OE_NCOLS
};
static const char *const other_entry_cols[OE_NCOLS] = {
    ":id",    ":source", ":device", ":seq",         ":action", ":address",
    ":bytes", ":stream", ":ts",     ":device_free", ":stack"};
enum {
    EV_ID,
    EV_SOURCE,
    EV_DEVICE,
    EV_TS,
    EV_BYTES,
    EV_ADDRESS,
    EV_ALLOCATED,
    EV_RESERVED,
    EV_STACK,
    EV_SEQ,
    EV_STREAM,
    EV_NCOLS
};
static const char *const event_cols[EV_NCOLS] = {":id",    ":source",  ":device",    ":ts",
                                                 ":bytes", ":address", ":allocated", ":reserved",
                                                 ":stack", ":seq",     ":stream"};
enum { SF_STACK, SF_POSITION, SF_FRAME, SF_NCOLS };
static const char *const stack_frame_cols[SF_NCOLS] = {":stack", ":position", ":frame"};
enum { NS_ID, NS_DIGEST, NS_DEPTH, NS_USER_FRAME, NS_NCOLS };
static const char *const numbered_stack_cols[NS_NCOLS] = {":id", ":digest", ":depth",
                                                          ":user_frame"};

/* A device as the file numbers it, and its running sums since the first
 * recorded entry (anchored at the end). */
typedef struct {
    int64_t idx, id;
    int64_t alloc_run, res_run;
    int64_t seq;
    int64_t first_ts, last_ts;
} snap_device;

/* Slots of the table of a trace entry's keys (entry_field). */
#define KEY_SLOTS 32

/* Devices a hostile file may name; the rest are counted, not kept. */
#define MAX_SNAPSHOT_DEVICES 1024

typedef struct vr_snapshot {
    vr_import_ctx *ctx;
    vr_error *err;
    snap_device *devices;
    size_t ndevices, devices_cap;
    vr_idmap frames;      /* digest of (file, line, function) -> frame id */
    vr_idmap stacks;      /* digest of the frame ids -> stack id */
    vr_idmap frame_kinds; /* frame id -> its FRAME_* (user_frames, done in C) */
    vr_batch *entries_out, *events_out;
    int64_t next_id;            /* the next trace entry's or memory event's id */
    int64_t last_id[2];         /* the last id each of entries_out, events_out took */
    vr_batch *stack_frames_out; /* a new stack's frames: 20 rows a stack */
    vr_batch *stacks_out;       /* new stacks, numbered here (next_stack_id) */
    int64_t next_stack_id;      /* the next new stack's id; 0: asked of the database */
    vr_batch_writer *writer;    /* writes the three batches while the file is decoded */
    int64_t *stack_ids;         /* scratch: one stack's frame ids */
    size_t stack_cap;
    uint64_t segments, blocks, entries, malformed, dropped_devices;
    uint64_t handed;          /* elements handed over by the decoder */
    vr_snap_keys keys;        /* unknown keys, counted and named */
    uint64_t host_records[2]; /* host_segments, host_traces: counted, not read */
    uint64_t actions[10];
    int64_t first_open_stage;           /* stages waiting for the source's times (snapshot.h) */
    unsigned char key_slots[KEY_SLOTS]; /* a trace entry's key -> its field (entry_field) */
    int key_slots_ready;
    int shape;             /* SHAPE_*: what the pickle showed it is */
    vr_pickle *pk;         /* the decoder (the pickle form), for the byte of a record */
    uint64_t at;           /* the byte of the record being read (vr_snapshot_at) */
    uint64_t malformed_at; /* the first malformed record's byte, and what it was */
    const char *malformed_what;
    vr_snap_bounds bounds; /* allocs and frees no segment holds (snapshot_bounds.c) */
} snapshot;

/* The actions of trace entries, counted per source (source_events). */
#define ACTION(name)          \
    {                         \
        name, sizeof name - 1 \
    }
static const struct {
    const char *name;
    size_t len;
} actions[] = {ACTION("alloc"),         ACTION("free_requested"), ACTION("free_completed"),
               ACTION("segment_alloc"), ACTION("segment_free"),   ACTION("segment_map"),
               ACTION("segment_unmap"), ACTION("snapshot"),       ACTION("oom")};
#define OTHER_ACTION 9

/* Entries the frame and stack caches hold at most (then SQLite is asked). */
#define MAX_CACHED (1u << 20)

/*-*** sniffing ***/

/* pickle.dump: PROTO opcode (0x80) and a protocol number 2 to 5. The
 * allocator's snapshot is a dict whose first key is "segments" (or a bare
 * list of segments for old tools). */
static vr_sniff_level sniff(const char *head, size_t len)
{
    if (len < 2 || (unsigned char)head[0] != 0x80 || head[1] < 2 || head[1] > 5)
        return VR_SNIFF_NO;
    return memmem(head, len, "segments", 8) || memmem(head, len, "total_size", 10)
               ? VR_SNIFF_SIGNATURE
               : VR_SNIFF_SHAPE;
}

/*-*** malformed records ***/

/* A record that cannot be what it says (no size, a negative one, a block
 * outside its segment, ...): counted, kept out of every figure, and said
 * once on stderr with the first one's byte and what it was. */
static void malformed_at(snapshot *s, uint64_t at, const char *what)
{
    if (s->malformed++ == 0 || at < s->malformed_at) {
        s->malformed_at = at;
        s->malformed_what = what;
    }
}

static void malformed(snapshot *s, const char *what)
{
    malformed_at(s, s->at, what);
}

/* The warning, as the other readers give it (the import's own warnings
 * leave malformed records to the reader, which knows where they are). */
static void warn_malformed(const snapshot *s)
{
    if (s->malformed)
        vr_warn(s->ctx->warn, "%s: %llu malformed record(s) skipped, the first at byte %llu (%s)",
                vr_input_path(s->ctx->in), (unsigned long long)s->malformed,
                (unsigned long long)s->malformed_at, s->malformed_what);
}

/*-*** devices ***/

static snap_device *device_for(snapshot *s, int64_t idx)
{
    for (size_t i = 0; i < s->ndevices; i++)
        if (s->devices[i].idx == idx)
            return &s->devices[i];
    if (s->ndevices == MAX_SNAPSHOT_DEVICES) {
        s->dropped_devices++;
        return NULL;
    }
    vr_batch_writer_enter(s->writer);
    int64_t id = vr_reader_device(s->ctx, s->ctx->rank, "cuda", idx, s->err);
    vr_batch_writer_leave(s->writer);
    if (id < 0)
        return NULL;
    vr_xgrow(&s->devices, &s->devices_cap, s->ndevices + 1, sizeof *s->devices, 4);
    s->devices[s->ndevices] = (snap_device){idx, id, 0, 0, 0, 0, 0};
    return &s->devices[s->ndevices++];
}

/*-*** frames and stacks ***/

static uint64_t frame_hash(int64_t file, int64_t line, int64_t function)
{
    int64_t key[3] = {file, line, function};
    return vr_hash_once(key, sizeof key, 0xf4a3e);
}

/* A frame's file as the user_frames statement (schemas/snapshot.sql)
 * judges it: a user's frame is in a .py file outside torch's folders.
 * Judged here, when a stack is stored, so that the statement only has the
 * stacks left that this could not settle. The LIKEs are ASCII
 * case-insensitive; a name with a byte they might read otherwise (NUL,
 * not ASCII) is left to SQLite. */
enum { FRAME_USER = 1, FRAME_OTHER, FRAME_UNSURE };

static int ascii_ieq(const char *s, const char *lit, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
        if (c != lit[i])
            return 0;
    }
    return 1;
}

static int ascii_icontains(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    for (size_t i = 0; i + n <= len; i++)
        if (ascii_ieq(s + i, lit, n))
            return 1;
    return 0;
}

static int frame_kind(const vr_pk_value *file)
{
    if (!file || file->kind != VR_PK_STR)
        return FRAME_OTHER; /* stored as "??" */
    const char *s = file->s;
    size_t len = file->len;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '\0' || (unsigned char)s[i] >= 0x80)
            return FRAME_UNSURE;
    int user = len >= 3 && ascii_ieq(s + len - 3, ".py", 3) &&
               !ascii_icontains(s, len, "/torch/") && !ascii_icontains(s, len, "\\torch\\") &&
               !(len >= 6 && ascii_ieq(s, "torch/", 6)) &&
               !(len >= 7 && ascii_ieq(s, "<frozen", 7));
    return user ? FRAME_USER : FRAME_OTHER;
}

static int64_t frame_in_db(snapshot *s, int64_t file, int64_t line, int64_t function)
{
    vr_db *db = s->ctx->db;
    sqlite3_stmt *ins = vr_db_stmt(db, snapshot_sql, "insert_frame", s->err);
    sqlite3_stmt *sel = vr_db_stmt(db, snapshot_sql, "select_frame", s->err);
    if (!ins || !sel)
        return -1;
    sqlite3_stmt *both[2] = {ins, sel};
    for (int i = 0; i < 2; i++)
        if (vr_db_bind_int(both[i], ":file", file, s->err) < 0 ||
            vr_db_bind_int(both[i], ":line", line, s->err) < 0 ||
            vr_db_bind_int(both[i], ":function", function, s->err) < 0)
            return -1;
    if (vr_db_step_done(db, ins, s->err) < 0)
        return -1;
    int64_t id = sqlite3_step(sel) == SQLITE_ROW ? sqlite3_column_int64(sel, 0) : -1;
    sqlite3_reset(sel);
    if (id < 0)
        vr_db_fail(db, s->err, "storing a frame");
    return id;
}

static const vr_pk_value *frame_text(const vr_pk_value *v)
{
    static const vr_pk_value unknown = {VR_PK_STR, 0, 0, "??", 2, NULL};
    return v && v->kind == VR_PK_STR ? v : &unknown;
}

/* A frame the caches hold (its names and the frame itself), without the
 * database: 0 when they do not. */
static int64_t cached_frame(snapshot *s, const vr_pk_value *file, int64_t line,
                            const vr_pk_value *function)
{
    int64_t f = vr_db_intern_cached(s->ctx->db, file->s, file->len);
    int64_t fn = f ? vr_db_intern_cached(s->ctx->db, function->s, function->len) : 0;
    return fn ? vr_idmap_get(&s->frames, frame_hash(f, line, fn)) : 0;
}

static int64_t stored_frame(snapshot *s, const vr_pk_value *file, int64_t line,
                            const vr_pk_value *function)
{
    int64_t f = vr_db_intern(s->ctx->db, file->s, file->len, s->err);
    int64_t fn = vr_db_intern(s->ctx->db, function->s, function->len, s->err);
    if (f < 0 || fn < 0)
        return -1;
    uint64_t hash = frame_hash(f, line, fn);
    int64_t id = vr_idmap_get(&s->frames, hash);
    if (!id) {
        id = frame_in_db(s, f, line, fn);
        vr_idmap_put(&s->frames, hash, id > 0 ? id : 0);
    }
    return id;
}

/* The id of a frame dict {filename, line, name}; -1 on a database error.
 * A frame dict the pickle does not share comes again and again: when the
 * caches know it, the connection is not taken from the writer. */
static int64_t frame_id(snapshot *s, const vr_pk_value *f)
{
    vr_snap_keys_check(&s->keys, VR_SNAP_FRAME, f);
    int64_t line = 0;
    vr_pk_int(vr_pk_get(f, "line"), &line);
    const vr_pk_value *file = frame_text(vr_pk_get(f, "filename"));
    const vr_pk_value *function = frame_text(vr_pk_get(f, "name"));
    int64_t id = cached_frame(s, file, line, function);
    if (!id) {
        vr_batch_writer_enter(s->writer);
        id = stored_frame(s, file, line, function);
        vr_batch_writer_leave(s->writer);
    }
    if (id < 0)
        return -1;
    if (id > 0 && !vr_idmap_get(&s->frame_kinds, (uint64_t)id))
        vr_idmap_put(&s->frame_kinds, (uint64_t)id, frame_kind(vr_pk_get(f, "filename")));
    return id;
}

/* The frame ids of a frames list into s->stack_ids; a frame dict the pickle
 * shares comes back as a reference tagged with its id. Returns the count,
 * or -1. */
static ptrdiff_t frame_ids(snapshot *s, const vr_pk_value *frames)
{
    vr_xgrow(&s->stack_ids, &s->stack_cap, frames->len + 1, sizeof *s->stack_ids, 64);
    size_t n = 0, i = 0;
    /* references to frames stored (every frame dict the pickle shares): the
     * common case, in a loop of their own */
    for (; i < frames->len && frames->items[i]->kind == VR_PK_REF && frames->items[i]->i > 0; i++)
        s->stack_ids[n++] = frames->items[i]->i;
    for (; i < frames->len; i++) {
        const vr_pk_value *f = frames->items[i];
        int64_t id = f->kind == VR_PK_REF ? f->i : f->kind == VR_PK_DICT ? frame_id(s, f) : 0;
        if (id < 0 && f->kind != VR_PK_REF)
            return -1;
        if (id <= 0)
            continue; /* not a frame, or a reference to one not kept */
        if (f->kind == VR_PK_DICT)
            vr_pk_set_tag(f, id);
        s->stack_ids[n++] = id;
    }
    return (ptrdiff_t)n;
}

/* The stack's first user frame (FRAME_USER), or 0 when none is, or when
 * a frame before it could not be judged: user_frames settles those. */
static int64_t user_frame(const snapshot *s, size_t depth)
{
    for (size_t i = 0; i < depth; i++) {
        int64_t kind = vr_idmap_get(&s->frame_kinds, (uint64_t)s->stack_ids[i]);
        if (kind == FRAME_USER)
            return s->stack_ids[i];
        if (kind != FRAME_OTHER)
            return 0;
    }
    return 0;
}

/* A new stack's frames, from s->stack_ids. */
static int stack_frames(snapshot *s, int64_t id, size_t depth)
{
    vr_batch *b = s->stack_frames_out;
    for (size_t i = 0; i < depth; i++) {
        vr_batch_int(b, SF_STACK, id);
        vr_batch_int(b, SF_POSITION, (int64_t)i);
        vr_batch_int(b, SF_FRAME, s->stack_ids[i]);
        if (vr_batch_row(b, s->err) < 0)
            return -1;
    }
    return 0;
}

/* A stack the map does not hold, when it cannot tell new ones (too many
 * to hold): looked up by digest, inserted if new. The stacks numbered
 * before are written first, so the lookup sees them. */
static int64_t stack_in_db(snapshot *s, uint64_t key, size_t depth)
{
    if (vr_batch_flush(s->stacks_out, s->err) < 0)
        return -1;
    vr_batch_writer_enter(s->writer);
    vr_db *db = s->ctx->db;
    char digest[17];
    vr_hash_hex(key, digest);
    sqlite3_stmt *sel = vr_db_stmt(db, snapshot_sql, "select_stack", s->err);
    sqlite3_stmt *ins = vr_db_stmt(db, snapshot_sql, "insert_stack", s->err);
    int64_t id = -1;
    if (sel && ins && vr_db_bind_text(sel, ":digest", digest, 16, s->err) == 0) {
        id = sqlite3_step(sel) == SQLITE_ROW ? sqlite3_column_int64(sel, 0) : 0;
        sqlite3_reset(sel);
    }
    if (id == 0) {
        int64_t user = user_frame(s, depth); /* else set once the import ends (user_frames) */
        id = vr_db_bind_text(ins, ":digest", digest, 16, s->err) < 0 ||
                     vr_db_bind_int(ins, ":depth", (int64_t)depth, s->err) < 0 ||
                     vr_db_bind_opt_int(ins, ":user_frame", user > 0, user, s->err) < 0 ||
                     vr_db_step_done(db, ins, s->err) < 0
                 ? -1
                 : sqlite3_last_insert_rowid(vr_db_handle(db));
        if (id > 0 && stack_frames(s, id, depth) < 0)
            id = -1;
    }
    vr_batch_writer_leave(s->writer);
    return id;
}

/* A stack the map does not hold while it holds every stack stored (the
 * usual case): new, numbered here and written with the rows, so the
 * decoding never waits for the database. */
static int64_t numbered_stack(snapshot *s, uint64_t key, size_t depth)
{
    int64_t id = s->next_stack_id++;
    vr_batch *b = s->stacks_out;
    int64_t user = user_frame(s, depth); /* else set once the import ends (user_frames) */
    vr_batch_int(b, NS_ID, id);
    vr_batch_int(b, NS_DIGEST, (int64_t)key);
    vr_batch_int(b, NS_DEPTH, (int64_t)depth);
    vr_batch_opt_int(b, NS_USER_FRAME, user > 0, user);
    return vr_batch_row(b, s->err) < 0 || stack_frames(s, id, depth) < 0 ? -1 : id;
}

static int64_t new_stack(snapshot *s, uint64_t key, size_t depth)
{
    if (s->next_stack_id > 0 && s->stacks.len < MAX_CACHED)
        return numbered_stack(s, key, depth);
    s->next_stack_id = 0; /* the map is full: from here on, ask */
    return stack_in_db(s, key, depth);
}

/* A frames list still held that stack_of already tagged with its stack
 * (a free entry sharing its alloc's list in the same APPENDS): its id,
 * without hashing its frames again. Its frame dicts, if any, are counted
 * by the keys check as frame_ids would count them again. */
static int64_t shared_stack(snapshot *s, const vr_pk_value *frames, int64_t tag)
{
    for (size_t i = 0; i < frames->len; i++)
        if (frames->items[i]->kind == VR_PK_DICT)
            vr_snap_keys_check(&s->keys, VR_SNAP_FRAME, frames->items[i]);
    return tag;
}

/* The stack id of a `frames` value: 0 when there is none, -1 on a
 * database error. The list is tagged, so the pickle's later references to
 * it cost nothing. */
static int64_t stack_of(snapshot *s, const vr_pk_value *frames)
{
    if (!frames)
        return 0;
    if (frames->kind == VR_PK_REF)
        return frames->i > 0 ? frames->i : 0;
    if (frames->kind != VR_PK_LIST || frames->len == 0)
        return 0;
    int64_t tag = vr_pk_tag(frames);
    if (tag > 0)
        return shared_stack(s, frames, tag);
    ptrdiff_t n = frame_ids(s, frames);
    if (n <= 0)
        return n;
    uint64_t key = vr_hash_once(s->stack_ids, (size_t)n * sizeof *s->stack_ids, 0x57ac);
    int64_t id = vr_idmap_get(&s->stacks, key);
    if (!id) {
        id = new_stack(s, key, (size_t)n);
        vr_idmap_put(&s->stacks, key, id > 0 ? id : 0);
    }
    if (id > 0)
        vr_pk_set_tag(frames, id);
    return id;
}

/*-*** segments and blocks ***/

static int bind_opt(sqlite3_stmt *st, const char *name, const vr_pk_value *v, vr_error *err)
{
    int64_t x = 0;
    int has = vr_pk_int(v, &x);
    return vr_db_bind_opt_int(st, name, has, x, err);
}

static int bind_str(sqlite3_stmt *st, const char *name, const vr_pk_value *v, vr_error *err)
{
    if (v && v->kind == VR_PK_STR)
        return vr_db_bind_text(st, name, v->s, v->len, err);
    return vr_db_bind_null(st, name, err);
}

/* segment_pool_id is a pair of ints: stored as "a,b". */
static int bind_pool(sqlite3_stmt *st, const vr_pk_value *pool, vr_error *err)
{
    int64_t a, b;
    /* a tuple in a pickle, a list in JSON */
    if (pool && (pool->kind == VR_PK_TUPLE || pool->kind == VR_PK_LIST) && pool->len == 2 &&
        vr_pk_int(pool->items[0], &a) && vr_pk_int(pool->items[1], &b)) {
        char text[48];
        snprintf(text, sizeof text, "%lld,%lld", (long long)a, (long long)b);
        return vr_db_bind_text(st, ":pool", text, strlen(text), err);
    }
    return vr_db_bind_null(st, ":pool", err);
}

/* Old snapshots keep a block's frames and real size in history[0]. */
static const vr_pk_value *block_history(const vr_pk_value *block)
{
    const vr_pk_value *h = vr_pk_get(block, "history");
    return h && h->kind == VR_PK_LIST && h->len > 0 && h->items[0]->kind == VR_PK_DICT
               ? h->items[0]
               : NULL;
}

static const char *block_state(const vr_pk_value *v)
{
    static const char *const states[] = {"active_allocated", "active_pending_free", "inactive"};
    for (size_t i = 0; i < sizeof states / sizeof *states; i++)
        if (vr_pk_str_eq(v, states[i]))
            return states[i];
    /* the docstring's name for active_pending_free */
    return vr_pk_str_eq(v, "active_awaiting_free") ? states[1] : NULL;
}

/* A segment's extent, for its blocks: [start, end) when known. */
typedef struct {
    int64_t start, end;
    int known;
} extent;

/* A block's figures that cannot be: a negative size or address, or an
 * extent outside its segment's (an 80 GiB block in a 1 MiB segment). */
static const char *impossible_block(const extent *seg, int64_t addr, int64_t size)
{
    if (size < 0 || addr < 0)
        return "a block with a negative size or address";
    if (seg->known && (addr < seg->start || vr_sat_add(addr, size) > seg->end))
        return "a block that does not fit in its segment";
    return NULL;
}

static int on_block(snapshot *s, int64_t segment_id, const extent *seg, const vr_pk_value *b,
                    int64_t *address)
{
    int64_t size;
    const char *state = block_state(vr_pk_get(b, "state"));
    if (b->kind != VR_PK_DICT || !vr_pk_int(vr_pk_get(b, "size"), &size) || !state) {
        malformed(s, "a block without a size or a state");
        return 0;
    }
    int64_t addr = *address;
    vr_pk_int(vr_pk_get(b, "address"), &addr);
    const char *bad = impossible_block(seg, addr, size);
    if (bad) {
        malformed(s, bad);
        return 0;
    }
    const vr_pk_value *hist = block_history(b);
    vr_snap_keys_check(&s->keys, VR_SNAP_BLOCK, b);
    vr_snap_keys_check(&s->keys, VR_SNAP_HISTORY, hist);
    const vr_pk_value *frames = vr_pk_get(b, "frames");
    int64_t stack = stack_of(s, frames ? frames : vr_pk_get(hist, "frames"));
    sqlite3_stmt *st = vr_db_stmt(s->ctx->db, snapshot_sql, "insert_block", s->err);
    if (stack < 0 || !st)
        return -1;
    *address = vr_sat_add(addr, size);
    const vr_pk_value *requested = vr_pk_get(b, "requested_size");
    if (vr_db_bind_int(st, ":segment", segment_id, s->err) < 0 ||
        vr_db_bind_int(st, ":address", addr, s->err) < 0 ||
        vr_db_bind_int(st, ":bytes", size, s->err) < 0 ||
        bind_opt(st, ":requested", requested ? requested : vr_pk_get(hist, "real_size"), s->err) <
            0 ||
        vr_db_bind_text(st, ":state", state, strlen(state), s->err) < 0 ||
        vr_db_bind_opt_int(st, ":stack", stack > 0, stack, s->err) < 0)
        return -1;
    s->blocks++;
    return vr_db_step_done(s->ctx->db, st, s->err);
}

static int insert_segment(snapshot *s, const snap_device *d, const vr_pk_value *seg,
                          int64_t total, int64_t stack)
{
    sqlite3_stmt *st = vr_db_stmt(s->ctx->db, snapshot_sql, "insert_segment", s->err);
    if (!st)
        return -1;
    int64_t expandable = 0;
    const vr_pk_value *exp = vr_pk_get(seg, "is_expandable");
    int has_expandable = vr_pk_int(exp, &expandable);
    if (vr_db_bind_int(st, ":source", s->ctx->source_id, s->err) < 0 ||
        vr_db_bind_int(st, ":device", d->id, s->err) < 0 ||
        bind_opt(st, ":address", vr_pk_get(seg, "address"), s->err) < 0 ||
        vr_db_bind_int(st, ":total", total, s->err) < 0 ||
        bind_opt(st, ":allocated", vr_pk_get(seg, "allocated_size"), s->err) < 0 ||
        bind_opt(st, ":active", vr_pk_get(seg, "active_size"), s->err) < 0 ||
        bind_opt(st, ":requested", vr_pk_get(seg, "requested_size"), s->err) < 0 ||
        bind_opt(st, ":stream", vr_pk_get(seg, "stream"), s->err) < 0 ||
        bind_str(st, ":type", vr_pk_get(seg, "segment_type"), s->err) < 0 ||
        bind_pool(st, vr_pk_get(seg, "segment_pool_id"), s->err) < 0 ||
        vr_db_bind_opt_int(st, ":expandable", has_expandable, expandable != 0, s->err) < 0 ||
        vr_db_bind_opt_int(st, ":stack", stack > 0, stack, s->err) < 0)
        return -1;
    return vr_db_step_done(s->ctx->db, st, s->err);
}

static int segment_rows(snapshot *s, const vr_pk_value *seg);

/* A segment and its blocks: few, so the connection is taken for the whole. */
static int on_segment(snapshot *s, const vr_pk_value *seg)
{
    vr_batch_writer_enter(s->writer);
    int rc = segment_rows(s, seg);
    vr_batch_writer_leave(s->writer);
    return rc;
}

static int segment_rows(snapshot *s, const vr_pk_value *seg)
{
    int64_t device = 0, total, address = 0;
    if (seg->kind != VR_PK_DICT || !vr_pk_int(vr_pk_get(seg, "total_size"), &total)) {
        malformed(s, "a segment without a total_size");
        return 0;
    }
    int has_address = vr_pk_int(vr_pk_get(seg, "address"), &address);
    if (total < 0 || address < 0) {
        malformed(s, "a segment with a negative size or address");
        return 0;
    }
    vr_snap_keys_check(&s->keys, VR_SNAP_SEGMENT, seg);
    vr_pk_int(vr_pk_get(seg, "device"), &device);
    extent ext = {address, vr_sat_add(address, total), has_address};
    if (has_address)
        vr_snap_bounds_segment(&s->bounds, device, address, total);
    else
        vr_snap_bounds_off(&s->bounds);
    snap_device *d = device_for(s, device);
    if (!d)
        return s->dropped_devices ? 0 : -1;
    int64_t stack = stack_of(s, vr_pk_get(seg, "frames"));
    if (stack < 0 || insert_segment(s, d, seg, total, stack) < 0)
        return -1;
    int64_t segment_id = sqlite3_last_insert_rowid(vr_db_handle(s->ctx->db));
    s->segments++;
    s->ctx->events++;
    const vr_pk_value *blocks = vr_pk_get(seg, "blocks");
    for (size_t i = 0; blocks && blocks->kind == VR_PK_LIST && i < blocks->len; i++)
        if (on_block(s, segment_id, &ext, blocks->items[i], &address) < 0)
            return -1;
    return 0;
}

/*-*** trace entries ***/

typedef struct {
    int64_t address, size, stream, time_us, device_free, ts, stack;
    int has_address, has_size, has_stream, has_time, has_free;
    int action; /* index in actions[] */
} entry;

/* Equal bytes, for the keys' and actions' lengths: memcmp of a constant
 * size compiles to a load or two and a compare (a call per key cost more
 * than that). */
static inline __attribute__((always_inline)) int same_bytes(const char *a, const char *b,
                                                            size_t n)
{
    switch (n) {
    case 3:
        return memcmp(a, b, 3) == 0;
    case 4:
        return memcmp(a, b, 4) == 0;
    case 5:
        return memcmp(a, b, 5) == 0;
    case 6:
        return memcmp(a, b, 6) == 0;
    case 7:
        return memcmp(a, b, 7) == 0;
    case 8:
        return memcmp(a, b, 8) == 0;
    case 11:
        return memcmp(a, b, 11) == 0;
    case 12:
        return memcmp(a, b, 12) == 0;
    case 13:
        return memcmp(a, b, 13) == 0;
    case 14:
        return memcmp(a, b, 14) == 0;
    default:
        return memcmp(a, b, n) == 0;
    }
}

/* Millions of entries: the first byte and the length rule out most names
 * before any compare. */
static int action_of(const vr_pk_value *v)
{
    if (!v || v->kind != VR_PK_STR || v->len == 0)
        return OTHER_ACTION;
    for (int i = 0; i < OTHER_ACTION; i++)
        if (actions[i].name[0] == v->s[0] && actions[i].len == v->len &&
            same_bytes(actions[i].name, v->s, v->len))
            return i;
    return OTHER_ACTION;
}

/* Running sums: alloc and free_completed move allocated, segment
 * entries move reserved (free_requested only asks: the memory is still in
 * use until free_completed). */
static void apply(snap_device *d, const entry *e, int64_t *alloc_delta)
{
    static const int alloc_sign[] = {1, 0, -1, 0, 0, 0, 0, 0, 0, 0};
    static const int res_sign[] = {0, 0, 0, 1, -1, 1, -1, 0, 0, 0};
    int64_t size = e->has_size ? e->size : 0;
    *alloc_delta = vr_sat_mul(alloc_sign[e->action], size);
    d->alloc_run = vr_sat_add(d->alloc_run, *alloc_delta);
    d->res_run = vr_sat_add(d->res_run, vr_sat_mul(res_sign[e->action], size));
}

/* Positions in actions[] (trace_action's codes, migration 16). */
enum { ACTION_ALLOC = 0, ACTION_FREE_COMPLETED = 2 };

/* An alloc or free_completed that its memory event states exactly (the
 * sign of bytes says which; a size above 0, no device_free) is stored only
 * as that event: two thirds of a snapshot's entries, one row each. */
static int is_event_entry(const entry *e)
{
    return (e->action == ACTION_ALLOC || e->action == ACTION_FREE_COMPLETED) && e->has_size &&
           e->size > 0 && !e->has_free;
}

/* The next id, for a row of batch `which` (0: entries_out, 1: events_out).
 * A row whose id follows its table's last one gets NULL, which SQLite
 * makes max(id) + 1, the same id: an explicit id costs SQLite a seek per
 * row (some 1,300 instructions) that its own append skips. */
static void batch_id(snapshot *s, int which, vr_batch *b, int col)
{
    if (s->next_id == s->last_id[which] + 1)
        vr_batch_null(b, col);
    else
        vr_batch_int(b, col, s->next_id);
    s->last_id[which] = s->next_id++;
}

/* Any other entry: columns as insert_other_entry lists them. Batched: a
 * snapshot holds millions of entries. */
static int insert_entry(snapshot *s, const snap_device *d, const entry *e)
{
    if (is_event_entry(e))
        return 0;
    vr_batch *b = s->entries_out;
    batch_id(s, 0, b, OE_ID);
    vr_batch_int(b, OE_SOURCE, s->ctx->source_id);
    vr_batch_int(b, OE_DEVICE, d->id);
    vr_batch_int(b, OE_SEQ, d->seq);
    vr_batch_int(b, OE_ACTION, e->action);
    vr_batch_opt_int(b, OE_ADDRESS, e->has_address, e->address);
    vr_batch_opt_int(b, OE_BYTES, e->has_size, e->size);
    vr_batch_opt_int(b, OE_STREAM, e->has_stream, e->stream);
    vr_batch_int(b, OE_TS, e->ts);
    vr_batch_opt_int(b, OE_FREE, e->has_free, e->device_free);
    vr_batch_opt_int(b, OE_STACK, e->stack > 0, e->stack);
    return vr_batch_row(b, s->err);
}

/* alloc and free_completed: a memory event (batched, columns as
 * insert_snapshot_event lists them), with the running sums that
 * anchor_totals makes the allocator's figures, and the entry's seq and
 * stream when it is the entry's only row. */
static int insert_event(snapshot *s, const snap_device *d, const entry *e, int64_t delta)
{
    if (delta == 0)
        return 0;
    int whole = is_event_entry(e);
    vr_batch *b = s->events_out;
    batch_id(s, 1, b, EV_ID);
    vr_batch_int(b, EV_SOURCE, s->ctx->source_id);
    vr_batch_int(b, EV_DEVICE, d->id);
    vr_batch_int(b, EV_TS, e->ts);
    vr_batch_int(b, EV_BYTES, delta);
    vr_batch_opt_int(b, EV_ADDRESS, e->has_address, e->address);
    vr_batch_int(b, EV_ALLOCATED, d->alloc_run);
    vr_batch_int(b, EV_RESERVED, d->res_run);
    vr_batch_opt_int(b, EV_STACK, e->stack > 0, e->stack);
    vr_batch_opt_int(b, EV_SEQ, whole, d->seq);
    vr_batch_opt_int(b, EV_STREAM, whole && e->has_stream, e->stream);
    return vr_batch_row(b, s->err);
}

/* oom: the allocator's state when a request failed. */
static int oom_row(snapshot *s, const snap_device *d, const entry *e);

static int insert_oom(snapshot *s, const snap_device *d, const entry *e)
{
    vr_batch_writer_enter(s->writer);
    int rc = oom_row(s, d, e);
    vr_batch_writer_leave(s->writer);
    return rc;
}

static int oom_row(snapshot *s, const snap_device *d, const entry *e)
{
    sqlite3_stmt *st = vr_db_stmt(s->ctx->db, snapshot_sql, "insert_snapshot_oom", s->err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", s->ctx->source_id, s->err) < 0 ||
        vr_db_bind_int(st, ":device", d->id, s->err) < 0 ||
        vr_db_bind_int(st, ":ts", e->ts, s->err) < 0 ||
        vr_db_bind_opt_int(st, ":bytes", e->has_size, e->size, s->err) < 0 ||
        vr_db_bind_int(st, ":allocated", d->alloc_run, s->err) < 0 ||
        vr_db_bind_int(st, ":reserved", d->res_run, s->err) < 0 ||
        vr_db_bind_opt_int(st, ":device_free", e->has_free, e->device_free, s->err) < 0)
        return -1;
    if (vr_db_step_done(s->ctx->db, st, s->err) < 0)
        return -1;
    vr_snap_bounds_oom(&s->bounds, d->idx, sqlite3_last_insert_rowid(vr_db_handle(s->ctx->db)),
                       s->next_id);
    return 0;
}

/* The members of a trace entry that are read, in entry_fields' order. */
enum { F_ACTION, F_ADDR, F_SIZE, F_STREAM, F_TIME, F_FREE, F_FRAMES, N_ENTRY_FIELDS };

static const struct {
    const char *name;
    size_t len;
} entry_fields[N_ENTRY_FIELDS] = {{"action", 6}, {"addr", 4},    {"size", 4},
                                  {"stream", 6}, {"time_us", 7}, {"device_free", 11},
                                  {"frames", 6}};

/* A key's slot in key_slots: its length plus its first byte, mod
 * KEY_SLOTS (the seven names fall in seven slots). */
static unsigned key_slot(const char *s, size_t len)
{
    return (unsigned)(len + (unsigned char)s[0]) % KEY_SLOTS;
}

/* Which entry field may sit in each slot (N_ENTRY_FIELDS: none), from
 * entry_fields; 0 when two names share a slot (then every key is compared
 * with every name, as before this table). */
static int build_key_slots(unsigned char slots[KEY_SLOTS])
{
    memset(slots, N_ENTRY_FIELDS, KEY_SLOTS);
    for (int f = 0; f < N_ENTRY_FIELDS; f++) {
        unsigned k = key_slot(entry_fields[f].name, entry_fields[f].len);
        if (slots[k] != N_ENTRY_FIELDS)
            return 0;
        slots[k] = (unsigned char)f;
    }
    return 1;
}

/* The field a key names, or N_ENTRY_FIELDS: by its slot (slots: the
 * table) or, without one, by every name. */
static inline int entry_field(const unsigned char *slots, const vr_pk_value *k)
{
    if (k->kind != VR_PK_STR || k->len == 0)
        return N_ENTRY_FIELDS;
    if (slots) {
        int f = slots[key_slot(k->s, k->len)];
        return f < N_ENTRY_FIELDS && k->len == entry_fields[f].len &&
                       same_bytes(k->s, entry_fields[f].name, k->len)
                   ? f
                   : N_ENTRY_FIELDS;
    }
    for (int f = 0; f < N_ENTRY_FIELDS; f++)
        if (k->len == entry_fields[f].len && k->s[0] == entry_fields[f].name[0] &&
            same_bytes(k->s, entry_fields[f].name, k->len))
            return f;
    return N_ENTRY_FIELDS;
}

/* An entry's members in one walk over its dict (millions of entries: one
 * vr_pk_get per member walked it seven times). A key set twice keeps its
 * last value, as vr_pk_get does. Returns 1 when every key was one of
 * these (then none is unknown, and vr_snap_keys_check has nothing to
 * count). */
static int entry_members(const snapshot *s, const vr_pk_value *v,
                         const vr_pk_value *out[N_ENTRY_FIELDS])
{
    memset(out, 0, N_ENTRY_FIELDS * sizeof *out);
    int all_read = 1;
    const unsigned char *slots = s->key_slots_ready ? s->key_slots : NULL;
    for (size_t i = 0; i < v->len; i++) {
        int f = entry_field(slots, v->items[2 * i]);
        if (f < N_ENTRY_FIELDS)
            out[f] = v->items[2 * i + 1];
        else
            all_read = 0;
    }
    return all_read;
}

/* vr_pk_int, inlined: five calls an entry into another file were some
 * 3% of the decoding thread's time. */
static inline int entry_int(const vr_pk_value *v, int64_t *out)
{
    if (!v || (v->kind != VR_PK_INT && v->kind != VR_PK_BOOL))
        return 0;
    *out = v->i;
    return 1;
}

static void read_entry(const vr_pk_value *const m[N_ENTRY_FIELDS], int64_t seq, entry *e)
{
    memset(e, 0, sizeof *e);
    e->action = action_of(m[F_ACTION]);
    e->has_address = entry_int(m[F_ADDR], &e->address);
    e->has_size = entry_int(m[F_SIZE], &e->size);
    e->has_stream = entry_int(m[F_STREAM], &e->stream);
    e->has_time = entry_int(m[F_TIME], &e->time_us);
    e->has_free = entry_int(m[F_FREE], &e->device_free);
    /* Without time_us (older files) the entries keep their order. */
    e->ts = e->has_time ? vr_sat_mul(e->time_us, 1000) : seq;
}

static void note_time(vr_import_ctx *c, int64_t t)
{
    if (t < c->start_ns)
        c->start_ns = t;
    if (t > c->end_ns)
        c->end_ns = t;
}

/* Actions in actions[] a segment's address and size come with: 3 to 6. */
enum { ACTION_SEGMENT_ALLOC = 3, ACTION_SEGMENT_UNMAP = 6 };

/* A segment entry names a segment blocks may be in (snapshot_bounds.c). */
static void note_segment(snapshot *s, int64_t device, const entry *e)
{
    if (e->action < ACTION_SEGMENT_ALLOC || e->action > ACTION_SEGMENT_UNMAP)
        return;
    if (!e->has_address)
        vr_snap_bounds_off(&s->bounds);
    else if (e->has_size)
        vr_snap_bounds_segment(&s->bounds, device, e->address, e->size);
}

/* An alloc, or a free that may be one never allocated (its rows those
 * from first_row on). */
static void note_block(snapshot *s, const snap_device *d, const entry *e, int64_t delta,
                       int64_t first_row)
{
    if (e->action > ACTION_FREE_COMPLETED || !e->has_address)
        return;
    if (e->action == ACTION_ALLOC) {
        vr_snap_bounds_alloc(&s->bounds, d->idx, e->address);
        return;
    }
    vr_snap_suspect x = {d->idx,    d->id,      e->address, delta,
                         first_row, s->next_id, s->at,      e->action};
    vr_snap_bounds_free_entry(&s->bounds, &x);
}

/* A free never allocated that no segment holds, once all are known: out
 * of the counts and of the device's running sum (its rows are deleted). */
static void on_bad(void *ud, const vr_snap_suspect *x)
{
    snapshot *s = ud;
    malformed_at(s, x->at, "a free of an address never allocated, in no segment");
    s->actions[x->action]--;
    s->entries--;
    s->ctx->events--;
    for (size_t i = 0; i < s->ndevices; i++)
        if (s->devices[i].idx == x->device)
            s->devices[i].alloc_run = vr_sat_sub(s->devices[i].alloc_run, x->delta);
}

static int on_entry(snapshot *s, int64_t device, const vr_pk_value *v)
{
    const vr_pk_value *m[N_ENTRY_FIELDS];
    int all_read = 0;
    if (v->kind == VR_PK_DICT)
        all_read = entry_members(s, v, m);
    if (v->kind != VR_PK_DICT || !m[F_ACTION]) {
        malformed(s, "a trace entry without an action");
        return 0;
    }
    snap_device *d = device_for(s, device);
    if (!d)
        return s->dropped_devices ? 0 : -1;
    if (!all_read)
        vr_snap_keys_check(&s->keys, VR_SNAP_ENTRY, v);
    entry e;
    read_entry(m, d->seq, &e);
    if ((e.has_size && e.size < 0) || (e.has_address && e.address < 0)) {
        malformed(s, "a trace entry with a negative size or address");
        return 0;
    }
    e.stack = stack_of(s, m[F_FRAMES]);
    if (e.stack < 0)
        return -1;
    note_segment(s, device, &e);
    int64_t delta, first_row = s->next_id;
    apply(d, &e, &delta);
    s->actions[e.action]++;
    s->entries++;
    s->ctx->events++;
    note_time(s->ctx, e.ts);
    if (d->seq == 0)
        d->first_ts = e.ts;
    d->last_ts = e.ts;
    int rc = insert_entry(s, d, &e) < 0 || insert_event(s, d, &e, delta) < 0 ||
                     (e.action == 8 && insert_oom(s, d, &e) < 0)
                 ? -1
                 : 0;
    d->seq++;
    note_block(s, d, &e, delta, first_row);
    return rc;
}

/*-*** the shape: a snapshot, or another pickle ***/

/* Every pickle sniffs as a snapshot's shape. What it holds is decided as
 * soon as its bytes show it (the decoder's on_root), before the rest is
 * read: a dict whose first key is one a snapshot's root holds, or a list
 * whose first element is a segment (a dict with total_size: what old
 * tools wrote). Anything else (a pickled args dict, a state_dict that
 * GLOBAL and REDUCE would build) is VR_ERR_NOT_RECOGNISED: never read
 * further, and a folder's run skips it as it skips a checkpoint. */
enum { SHAPE_UNKNOWN, SHAPE_SNAPSHOT, SHAPE_OTHER };

__attribute__((format(printf, 3, 4))) static int not_snapshot(snapshot *s, vr_error *err,
                                                              const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    s->shape = SHAPE_OTHER;
    return vr_fail_code(err, VR_ERR_NOT_RECOGNISED,
                        "a pickle, not an allocator snapshot (its top level is %s)", what);
}

/* A key for a message: printable ASCII, at most 40 bytes. */
static void key_text(const vr_pk_value *key, char *out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < key->len && i < 40 && k + 1 < n; i++)
        out[k++] = key->s[i] >= 0x20 && key->s[i] < 0x7f ? key->s[i] : '?';
    out[k] = '\0';
}

static int on_root(void *ud, const vr_pk_value *root, const vr_pk_value *key, vr_error *err)
{
    snapshot *s = ud;
    if (root && root->kind == VR_PK_LIST)
        return 0; /* a bare list: judged by its first element (on_element) */
    if (!root || root->kind != VR_PK_DICT)
        return not_snapshot(s, err, "not a dict of segments and device_traces");
    if (key->kind != VR_PK_STR)
        return not_snapshot(s, err, "a dict whose first key is not a string");
    if (vr_snap_keys_known(VR_SNAP_ROOT, key->s, key->len)) {
        s->shape = SHAPE_SNAPSHOT;
        return 0;
    }
    char text[48];
    key_text(key, text, sizeof text);
    return not_snapshot(s, err, "a dict whose first key is \"%s\", not segments or device_traces",
                        text);
}

/* The first element of a bare list: a segment, or not a snapshot. */
static int first_of_list(snapshot *s, const vr_pk_value *elem, vr_error *err)
{
    int64_t total;
    if (elem->kind == VR_PK_DICT && vr_pk_int(vr_pk_get(elem, "total_size"), &total)) {
        s->shape = SHAPE_SNAPSHOT;
        return 0;
    }
    return not_snapshot(s, err,
                        "a list whose first element is not a segment (a dict with "
                        "total_size)");
}

/* At STOP: a root that never showed a snapshot's shape (empty), or a
 * dict of a snapshot's keys but neither of the two that hold its data. */
static int root_is_snapshot(snapshot *s, const vr_pk_value *root, vr_error *err)
{
    if (s->shape == SHAPE_UNKNOWN)
        return not_snapshot(s, err, root->kind == VR_PK_LIST ? "an empty list" : "an empty dict");
    if (root->kind == VR_PK_DICT && !vr_pk_get(root, "segments") &&
        !vr_pk_get(root, "device_traces"))
        return not_snapshot(s, err, "a dict without segments or device_traces");
    return 0;
}

/*-*** the decoder's callbacks ***/

static int path_is_n(const vr_pk_path *p, size_t depth, const char *key, size_t len)
{
    return p->depth == depth && p->steps[0].key && p->steps[0].key_len == len &&
           memcmp(p->steps[0].key, key, len) == 0;
}

/* key: a literal (its length known at compile time, so memcmp inlines). */
#define path_is(p, depth, key) path_is_n((p), (depth), "" key, sizeof(key) - 1)

/* Pinned host memory (newer PyTorch): host_segments, and host_traces (one
 * list, or one per device). Not read: streamed past, its records counted,
 * so a large one is never held. 0 or 1, -1 for any other list. */
static int host_list(const vr_pk_path *p)
{
    return path_is(p, 1, "host_segments")                                 ? 0
           : path_is(p, 1, "host_traces") || path_is(p, 2, "host_traces") ? 1
                                                                          : -1;
}

/* Streamed: the segments (or a bare list of them), each device's trace
 * entries, and the host lists. Everything else is small and kept for
 * on_done. None is deeper than 2 (the decoder then does not ask about the
 * lists inside the trace entries), and a place the decoder cannot read
 * (one step, no key) is none of them. */
#define STREAM_DEPTH 2

static int want_stream(void *ud, const vr_pk_path *p)
{
    (void)ud;
    return p->depth == 0 || path_is(p, 1, "segments") || path_is(p, 2, "device_traces") ||
           host_list(p) >= 0;
}

static int on_element(void *ud, const vr_pk_path *list, size_t index, const vr_pk_value *elem,
                      vr_error *err)
{
    snapshot *s = ud;
    (void)index;
    if (s->shape == SHAPE_UNKNOWN && first_of_list(s, elem, err) < 0)
        return -1;
    s->at = vr_pickle_op_offset(s->pk);
    /* the line is drawn 4 times a second at most: asked every 64 elements
     * (each ask reads the clock) */
    if ((s->handed++ & 63) == 0)
        vr_progress_update(s->ctx->progress, vr_input_raw_offset(s->ctx->in), s->ctx->events);
    /* device_traces first: millions of entries, a few segments */
    if (path_is(list, 2, "device_traces"))
        return on_entry(s, (int64_t)list->steps[1].index, elem);
    int host = host_list(list);
    if (host >= 0) {
        vr_snapshot_host(s, host, elem->kind == VR_PK_DICT);
        return 0;
    }
    return on_segment(s, elem);
}

/* A setting's value as text: numbers, bools and strings as Python shows
 * them; anything else by its kind. */
static void setting_text(const vr_pk_value *v, char *out, size_t n)
{
    switch (v->kind) {
    case VR_PK_BOOL:
        snprintf(out, n, "%s", v->i ? "True" : "False");
        break;
    case VR_PK_INT:
        snprintf(out, n, "%lld", (long long)v->i);
        break;
    case VR_PK_FLOAT:
        snprintf(out, n, "%g", v->f);
        break;
    case VR_PK_STR:
        snprintf(out, n, "%.*s", (int)(v->len < n ? v->len : n - 1), v->s);
        break;
    case VR_PK_NONE:
        snprintf(out, n, "None");
        break;
    default:
        snprintf(out, n, "(%zu items)", v->len);
        break;
    }
}

static int store_settings(snapshot *s, const vr_pk_value *settings)
{
    sqlite3_stmt *st = vr_db_stmt(s->ctx->db, snapshot_sql, "insert_setting", s->err);
    if (!st)
        return -1;
    for (size_t i = 0; settings && settings->kind == VR_PK_DICT && i < settings->len; i++) {
        const vr_pk_value *k = settings->items[2 * i], *v = settings->items[2 * i + 1];
        if (k->kind != VR_PK_STR)
            continue;
        char text[256];
        setting_text(v, text, sizeof text);
        if (vr_db_bind_int(st, ":source", s->ctx->source_id, s->err) < 0 ||
            vr_db_bind_text(st, ":key", k->s, k->len, s->err) < 0 ||
            vr_db_bind_text(st, ":value", text, strlen(text), s->err) < 0)
            return -1;
        if (vr_db_step_done(s->ctx->db, st, s->err) < 0)
            return -1;
    }
    return 0;
}

static int key_is(const char *key, size_t len, const char *name)
{
    return len == strlen(name) && memcmp(key, name, len) == 0;
}

/* An old device_traces that is one flat list of entries: device 0's. (The
 * usual list of lists was streamed: its lists are empty here.) */
static int flat_entries(snapshot *s, const vr_pk_value *traces)
{
    for (size_t i = 0; traces && traces->kind == VR_PK_LIST && i < traces->len; i++)
        if (traces->items[i]->kind == VR_PK_DICT && on_entry(s, 0, traces->items[i]) < 0)
            return -1;
    return 0;
}

static int member_rows(snapshot *s, const char *key, size_t len, const vr_pk_value *v);

/* A member of the root that was not streamed. */
static int on_member(snapshot *s, const char *key, size_t len, const vr_pk_value *v)
{
    vr_batch_writer_enter(s->writer);
    int rc = member_rows(s, key, len, v);
    vr_batch_writer_leave(s->writer);
    return rc;
}

static int member_rows(snapshot *s, const char *key, size_t len, const vr_pk_value *v)
{
    if (key_is(key, len, "allocator_settings"))
        return store_settings(s, v);
    if (key_is(key, len, "external_annotations")) {
        uint64_t before = s->malformed;
        int rc = vr_snapshot_stages(s->ctx, v, &s->malformed, &s->first_open_stage, s->err);
        if (!before && s->malformed) {
            s->malformed_at = s->at;
            s->malformed_what = "an external annotation without a name, a stage or a time";
        }
        return rc;
    }
    if (key_is(key, len, "device_traces"))
        return flat_entries(s, v);
    if (key_is(key, len, "host_segments") || key_is(key, len, "host_traces"))
        return 0; /* streamed (pickle) or counted by the front end (JSON) */
    if (!key_is(key, len, "segments"))
        vr_snap_keys_unknown(&s->keys, VR_SNAP_ROOT, key, len);
    return 0;
}

static int on_done(void *ud, const vr_pk_value *root, vr_error *err)
{
    snapshot *s = ud;
    if (root_is_snapshot(s, root, err) < 0)
        return -1;
    s->at = vr_pickle_op_offset(s->pk);
    if (root->kind != VR_PK_DICT)
        return 0; /* a bare list of segments: all streamed */
    for (size_t i = 0; i < root->len; i++) {
        const vr_pk_value *k = root->items[2 * i];
        if (k->kind != VR_PK_STR)
            vr_snap_keys_unknown(&s->keys, VR_SNAP_ROOT, NULL, 0);
        else if (on_member(s, k->s, k->len, root->items[2 * i + 1]) < 0)
            return -1;
    }
    return 0;
}

/*-*** the end state ***/

/* An event that only states the totals (no size, no address): one opens
 * a device's timeline at what was live before its first recorded entry,
 * one closes it at the end state. */
static int insert_level(snapshot *s, const snap_device *d, int64_t ts)
{
    sqlite3_stmt *st = vr_db_stmt(s->ctx->db, snapshot_sql, "insert_snapshot_event", s->err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":id", s->next_id++, s->err) < 0 ||
        vr_db_bind_int(st, ":source", s->ctx->source_id, s->err) < 0 ||
        vr_db_bind_int(st, ":device", d->id, s->err) < 0 ||
        vr_db_bind_int(st, ":ts", ts, s->err) < 0 ||
        vr_db_bind_int(st, ":bytes", 0, s->err) < 0 ||
        vr_db_bind_null(st, ":address", s->err) < 0 ||
        vr_db_bind_int(st, ":allocated", d->alloc_run, s->err) < 0 ||
        vr_db_bind_int(st, ":reserved", d->res_run, s->err) < 0 ||
        vr_db_bind_null(st, ":stack", s->err) < 0 || vr_db_bind_null(st, ":seq", s->err) < 0 ||
        vr_db_bind_null(st, ":stream", s->err) < 0)
        return -1;
    return vr_db_step_done(s->ctx->db, st, s->err);
}

/* Lifts each device's running sums so its timeline ends at the state the
 * segments show, and closes it with one event at that state (a device with
 * segments but no recorded history gets its figures from it). */
static int anchor_device(snapshot *s, const snap_device *d, int64_t reserved, int64_t allocated)
{
    vr_db *db = s->ctx->db;
    int64_t lift_alloc = vr_sat_sub(allocated, d->alloc_run);
    int64_t lift_res = vr_sat_sub(reserved, d->res_run);
    const char *blocks[] = {"anchor_totals", "anchor_ooms"};
    /* Nothing live before the history (recorded from the start): the
     * running sums are the allocator's figures already, and the UPDATE,
     * which rewrites every memory event of the device, is skipped. */
    int lifted = lift_alloc != 0 || lift_res != 0;
    for (int i = 0; lifted && i < 2; i++) {
        sqlite3_stmt *st = vr_db_stmt(db, snapshot_sql, blocks[i], s->err);
        if (!st)
            return -1;
        if (vr_db_bind_int(st, ":allocated", lift_alloc, s->err) < 0 ||
            vr_db_bind_int(st, ":reserved", lift_res, s->err) < 0 ||
            vr_db_bind_int(st, ":source", s->ctx->source_id, s->err) < 0 ||
            vr_db_bind_int(st, ":device", d->id, s->err) < 0)
            return -1;
        if (vr_db_step_done(db, st, s->err) < 0)
            return -1;
    }
    snap_device level = *d;
    if (d->seq > 0) { /* a history: it starts at the pre-existing level */
        level.alloc_run = lift_alloc;
        level.res_run = lift_res;
        int64_t before = vr_sat_sub(d->first_ts, 1);
        note_time(s->ctx, before);
        if (insert_level(s, &level, before) < 0)
            return -1;
    }
    level.alloc_run = allocated;
    level.res_run = reserved;
    note_time(s->ctx, d->last_ts);
    return insert_level(s, &level, d->last_ts);
}

static snap_device *device_by_id(snapshot *s, int64_t id)
{
    for (size_t i = 0; i < s->ndevices; i++)
        if (s->devices[i].id == id)
            return &s->devices[i];
    return NULL;
}

/* Every device the file named ends at its segments' state (none: 0). */
static int anchor_all(snapshot *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->ctx->db, snapshot_sql, "final_state", s->err);
    if (!st || vr_db_bind_int(st, ":source", s->ctx->source_id, s->err) < 0)
        return -1;
    int64_t *reserved = vr_xmalloc((s->ndevices + 1) * sizeof *reserved);
    int64_t *allocated = vr_xmalloc((s->ndevices + 1) * sizeof *allocated);
    memset(reserved, 0, (s->ndevices + 1) * sizeof *reserved);
    memset(allocated, 0, (s->ndevices + 1) * sizeof *allocated);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        snap_device *d = device_by_id(s, sqlite3_column_int64(st, 0));
        if (d) {
            reserved[d - s->devices] = sqlite3_column_int64(st, 1);
            allocated[d - s->devices] = sqlite3_column_int64(st, 2);
        }
    }
    sqlite3_reset(st);
    int failed = rc != SQLITE_DONE ? vr_db_fail(s->ctx->db, s->err, "reading the end state") : 0;
    for (size_t i = 0; !failed && i < s->ndevices; i++)
        failed = anchor_device(s, &s->devices[i], reserved[i], allocated[i]) < 0;
    free(reserved);
    free(allocated);
    return failed ? -1 : 0;
}

static int record_counts(snapshot *s)
{
    vr_import_ctx *c = s->ctx;
    sqlite3_stmt *st = vr_db_stmt(c->db, "schemas/import.sql", "insert_event_count", s->err);
    if (!st)
        return -1;
    const char *kinds[] = {"segment", "block", "host_segment", "host_trace_entry"};
    uint64_t counts[] = {s->segments, s->blocks, s->host_records[0], s->host_records[1]};
    for (int i = 0; i < 4 + OTHER_ACTION + 1; i++) {
        const char *kind = i < 4                  ? kinds[i]
                           : i - 4 < OTHER_ACTION ? actions[i - 4].name
                                                  : "other_action";
        uint64_t n = i < 4 ? counts[i] : s->actions[i - 4];
        if (!n)
            continue;
        if (vr_db_bind_int(st, ":source", c->source_id, s->err) < 0 ||
            vr_db_bind_text(st, ":kind", kind, strlen(kind), s->err) < 0 ||
            vr_db_bind_int(st, ":count", (int64_t)n, s->err) < 0 ||
            vr_db_step_done(c->db, st, s->err) < 0)
            return -1;
    }
    return vr_reader_tally(c, "malformed_event", s->malformed, s->err) < 0 ||
                   vr_snap_keys_record(&s->keys, c, s->err) < 0 ||
                   vr_reader_tally(c, "host_memory", s->host_records[0] + s->host_records[1],
                                   s->err) < 0 ||
                   vr_reader_tally(c, "device_limit", s->dropped_devices, s->err) < 0 ||
                   vr_db_exec_named(c->db, snapshot_sql, "user_frames", s->err) < 0
               ? -1
               : 0;
}

/*-*** driver ***/

#define CHUNK (1u << 20)

/* The decoder's "byte N: ..." gets the file's name. A pickle that is not
 * a snapshot (said by on_root and the rest), or one that fails before it
 * shows what it is (GLOBAL first: an object), is not recognised: skipped
 * in a folder, like a checkpoint. */
static int feed_failed(snapshot *s)
{
    char why[sizeof s->err->msg];
    snprintf(why, sizeof why, "%s", s->err->msg);
    const char *path = vr_input_path(s->ctx->in);
    if (s->err->code == VR_ERR_DATABASE)
        return -1;
    if (s->shape == SHAPE_OTHER)
        return vr_fail_code(s->err, VR_ERR_NOT_RECOGNISED, "%s: %s", path, why);
    if (s->shape == SHAPE_UNKNOWN && s->err->code == VR_ERR_MALFORMED)
        return vr_fail_code(s->err, VR_ERR_NOT_RECOGNISED,
                            "%s: a pickle, not an allocator snapshot (%s, before any of a "
                            "snapshot's keys)",
                            path, why);
    return vr_fail_code(s->err, VR_ERR_MALFORMED, "%s: %s", path, why);
}

static int feed_all(snapshot *s, vr_pickle *pk)
{
    vr_import_ctx *c = s->ctx;
    char *chunk = vr_xmalloc(CHUNK);
    ptrdiff_t n;
    int rc = 0;
    while (rc == 0 && (n = vr_input_read(c->in, chunk, CHUNK, s->err)) > 0)
        rc = vr_pickle_feed(pk, chunk, (size_t)n, s->err);
    free(chunk);
    if (rc == 0 && n < 0)
        return -1;
    if (rc < 0)
        return feed_failed(s);
    int end = vr_pickle_finish(pk, s->err);
    if (end < 0)
        return vr_fail_code(s->err, VR_ERR_NOT_RECOGNISED, "%s: not a pickle: %s",
                            vr_input_path(c->in), s->err->msg);
    if (end == 1 || vr_input_truncated(c->in)) {
        c->truncated = 1;
        c->truncated_at = vr_input_offset(c->in);
        c->truncated_where = "inside the pickle";
    }
    return vr_reader_tally(c, "trailing_pickle", vr_pickle_trailing(pk), s->err);
}

/* "%016llx" (vr_hash_hex) back to the digest; 0 when it is not that. */
static int parse_digest(const unsigned char *text, int len, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; text && len == 16 && i < 16; i++) {
        int c = text[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return 0;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return text && len == 16;
}

/* The stacks stored by earlier imports into this database go into the
 * stack map, so that a stack it does not hold is new and is numbered here
 * (max(id) + 1 on, as SQLite would number it). Too many to hold, or a
 * digest not ours: new stacks are asked of the database one by one. */
static int known_stacks(snapshot *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->ctx->db, snapshot_sql, "known_stacks", s->err);
    if (!st)
        return -1;
    int64_t max = 0;
    int all_held = 1, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        uint64_t key;
        if (!parse_digest(sqlite3_column_text(st, 1), sqlite3_column_bytes(st, 1), &key) ||
            s->stacks.len >= MAX_CACHED / 2)
            all_held = 0;
        else
            vr_idmap_put(&s->stacks, key, id);
        max = id > max ? id : max;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return vr_db_fail(s->ctx->db, s->err, "reading the stacks stored before");
    s->next_stack_id = all_held ? max + 1 : 0;
    return 0;
}

/* Entries and memory events share one sequence of ids from here (the
 * trace_entry view's id: a device's entries in their order). */
static int first_entry_id(snapshot *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->ctx->db, snapshot_sql, "first_entry_id", s->err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    s->next_id = sqlite3_column_int64(st, 0);
    s->last_id[0] = s->last_id[1] = -2; /* the first rows: ids given */
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : vr_db_fail(s->ctx->db, s->err, "numbering the trace entries");
}

/* The rows of millions of entries are written by a thread of their own
 * while the decoding goes on (src/batch/batch.h). Without a thread, this
 * one writes them, as fast as before. */
static void start_writer(snapshot *s)
{
    vr_error ignored = VR_ERROR_INIT;
    s->writer = vr_batch_writer_start(s->ctx->db, &ignored);
    vr_batch_writer_attach(s->writer, s->entries_out);
    vr_batch_writer_attach(s->writer, s->events_out);
    vr_batch_writer_attach(s->writer, s->stack_frames_out);
    vr_batch_writer_attach(s->writer, s->stacks_out);
}

/* Waits for the writer to write what it holds, and ends it: from here
 * on this thread writes (the end state reads the rows). */
static int stop_writer(snapshot *s)
{
    int rc = vr_batch_writer_stop(s->writer, s->err);
    s->writer = NULL;
    return rc;
}

static int begin(snapshot *s, vr_import_ctx *ctx, vr_error *err)
{
    memset(s, 0, sizeof *s);
    vr_snap_bounds_init(&s->bounds);
    s->key_slots_ready = build_key_slots(s->key_slots);
    s->ctx = ctx;
    s->err = err;
    vr_idmap_init(&s->frames, MAX_CACHED);
    vr_idmap_init(&s->stacks, MAX_CACHED);
    vr_idmap_init(&s->frame_kinds, MAX_CACHED);
    s->entries_out = vr_batch_new(ctx->db, snapshot_sql, "insert_other_entry", other_entry_cols,
                                  OE_NCOLS, err);
    s->events_out =
        vr_batch_new(ctx->db, snapshot_sql, "insert_snapshot_event", event_cols, EV_NCOLS, err);
    s->stack_frames_out = vr_batch_new(ctx->db, snapshot_sql, "insert_stack_frame",
                                       stack_frame_cols, SF_NCOLS, err);
    s->stacks_out = vr_batch_new(ctx->db, snapshot_sql, "insert_numbered_stack",
                                 numbered_stack_cols, NS_NCOLS, err);
    if (!s->entries_out || !s->events_out || !s->stack_frames_out || !s->stacks_out ||
        first_entry_id(s) < 0 || known_stacks(s) < 0)
        return -1;
    start_writer(s);
    return 0;
}

/* What the streamed parts leave to do: the end state, the stages, the counts. */
static int end(snapshot *s)
{
    double t = vr_now();
    int rc = stop_writer(s) < 0 || vr_batch_flush(s->entries_out, s->err) < 0 ||
                     vr_batch_flush(s->events_out, s->err) < 0 ||
                     vr_batch_flush(s->stack_frames_out, s->err) < 0 ||
                     vr_batch_flush(s->stacks_out, s->err) < 0
                 ? -1
                 : 0;
    vr_timing("import: the last rows written", t);
    t = vr_now();
    rc = rc < 0 || vr_snap_bounds_settle(&s->bounds, s->ctx, on_bad, s, s->err) < 0 ||
                 anchor_all(s) < 0 ||
                 vr_snapshot_stages_close(s->ctx, s->first_open_stage, s->err) < 0 ||
                 record_counts(s) < 0
             ? -1
             : 0;
    vr_timing("import: end state and counts", t);
    if (rc == 0)
        warn_malformed(s);
    return rc;
}

static void release(snapshot *s)
{
    vr_error ignored = VR_ERROR_INIT; /* on the way out of a failed import */
    vr_batch_writer_stop(s->writer, &ignored);
    vr_batch_free(s->entries_out);
    vr_batch_free(s->events_out);
    vr_batch_free(s->stack_frames_out);
    vr_batch_free(s->stacks_out);
    vr_idmap_free(&s->frames);
    vr_idmap_free(&s->stacks);
    vr_idmap_free(&s->frame_kinds);
    vr_snap_bounds_free(&s->bounds);
    free(s->devices);
    free(s->stack_ids);
}

static int import(vr_import_ctx *ctx, vr_error *err)
{
    snapshot s;
    int rc = begin(&s, ctx, err);
    vr_pk_handlers h = {want_stream, on_element, on_done, &s, on_root};
    vr_pickle *pk = vr_pickle_new(NULL, &h);
    s.pk = pk;
    vr_pickle_stream_depth(pk, STREAM_DEPTH);
    rc = rc < 0 || feed_all(&s, pk) < 0 || end(&s) < 0 ? -1 : 0;
    vr_pickle_free(pk);
    release(&s);
    return rc;
}

/*-*** the model, for the JSON form (snapshot.h) ***/

vr_snapshot *vr_snapshot_begin(vr_import_ctx *ctx, vr_error *err)
{
    snapshot *s = vr_xmalloc(sizeof *s);
    if (begin(s, ctx, err) < 0) {
        vr_snapshot_free(s);
        return NULL;
    }
    return s;
}

void vr_snapshot_at(vr_snapshot *s, uint64_t offset)
{
    s->at = offset;
}

int vr_snapshot_segment(vr_snapshot *s, const vr_pk_value *segment)
{
    return on_segment(s, segment);
}

int vr_snapshot_entry(vr_snapshot *s, int64_t device, const vr_pk_value *value)
{
    return on_entry(s, device, value);
}

int vr_snapshot_member(vr_snapshot *s, const char *key, size_t len, const vr_pk_value *value)
{
    return on_member(s, key, len, value);
}

void vr_snapshot_host(vr_snapshot *s, int traces, uint64_t records)
{
    s->host_records[traces != 0] += records;
}

int vr_snapshot_end(vr_snapshot *s)
{
    return end(s);
}

void vr_snapshot_free(vr_snapshot *s)
{
    if (!s)
        return;
    release(s);
    free(s);
}

const vr_reader vr_reader_snapshot_pickle = {
    "snapshot", "a CUDA caching-allocator snapshot (torch.cuda.memory._dump_snapshot pickle)",
    sniff, import, NULL};
