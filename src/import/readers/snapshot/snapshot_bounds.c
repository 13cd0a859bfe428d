/* Frees of addresses never allocated (snapshot.h).
 *
 * The rule. A block lives inside a segment, and a snapshot's trace is the
 * newest part of the allocator's history, up to the snapshot: a ring
 * buffer that drops its oldest entries, with no gap (PyTorch clears it
 * when recording stops). A free_requested or free_completed entry with no
 * alloc of its address before it in the trace is normal: the block was
 * allocated before the trace began (the ring wrapped, or recording began
 * late). But that block was then inside a segment, and that segment is
 * one the end state still lists, or one released after the free, which
 * the trace then names later (segment_free, segment_unmap), or one the
 * trace made (segment_alloc, segment_map). A free with no alloc before it
 * whose address lies in none of these cannot be: it is malformed. Allocs
 * are not judged (a file may list only the segments still held, and an
 * alloc's own free is then not judged either).
 *
 * Nothing is judged on a device none of whose segments is known, nor in a
 * file with a segment or a segment entry without an address, nor past the
 * bounds below.
 *
 * A free is judged as it comes against the segments named so far (the end
 * state comes first in PyTorch's files); one outside them is a suspect
 * until the end, when the segments named after it are known too. Its rows
 * are written meanwhile: those of the suspects still outside are deleted
 * at the end, and the running sums of the device's later memory events
 * and OOMs put back as if they had never been. */
#include <stdlib.h>
#include <string.h>

#include "util/sat.h"
#include "import/readers/snapshot/snapshot.h"

static const char snapshot_sql[] = "schemas/snapshot.sql";

/* Segments, allocs outside them and suspects held at most (4, 4 and 8
 * MiB); past any, nothing is judged. Real snapshots hold a few thousand
 * segments and none of the others. */
#define MAX_RANGES ((size_t)1 << 16)
#define MAX_SUSPECTS ((size_t)1 << 17)

void vr_snap_bounds_init(vr_snap_bounds *b)
{
    memset(b, 0, sizeof *b);
    vr_ordmap_init(&b->ranges);
    vr_ordmap_init(&b->allocs);
}

void vr_snap_bounds_free(vr_snap_bounds *b)
{
    vr_ordmap_free(&b->ranges);
    vr_ordmap_free(&b->allocs);
    free(b->sus);
    free(b->ooms);
    memset(b, 0, sizeof *b);
}

void vr_snap_bounds_off(vr_snap_bounds *b)
{
    b->off = 1;
}

void vr_snap_bounds_segment(vr_snap_bounds *b, int64_t device, int64_t start, int64_t size)
{
    if (b->off || size <= 0)
        return;
    vr_okey k = vr_okey3(device, start, 0);
    int64_t v[VR_ORDMAP_VALUES] = {vr_sat_add(start, size)};
    const vr_oentry *e = vr_ordmap_get(&b->ranges, k);
    if (e && e->v[0] >= v[0])
        return;
    if (!e && vr_ordmap_count(&b->ranges) >= MAX_RANGES) {
        b->off = 1;
        return;
    }
    vr_ordmap_put(&b->ranges, k, v);
}

/* The segment starting last at or below address: a fast test, exact
 * unless segments overlap (settle() then looks at every one). */
int vr_snap_bounds_holds(const vr_snap_bounds *b, int64_t device, int64_t address)
{
    if (b->off)
        return 1;
    const vr_oentry *e = vr_ordmap_floor(&b->ranges, vr_okey3(device, address, 0), 0);
    return e && e->key.k[0] == device && address < e->v[0];
}

void vr_snap_bounds_alloc(vr_snap_bounds *b, int64_t device, int64_t address)
{
    if (b->off || vr_snap_bounds_holds(b, device, address))
        return;
    if (vr_ordmap_count(&b->allocs) >= MAX_RANGES) {
        b->off = 1;
        return;
    }
    int64_t v[VR_ORDMAP_VALUES] = {0};
    vr_ordmap_put(&b->allocs, vr_okey3(device, address, 0), v);
}

void vr_snap_bounds_free_entry(vr_snap_bounds *b, const vr_snap_suspect *x)
{
    /* an alloc of the address before it outside the segments known then
     * (one inside them keeps the address inside them now) */
    if (b->off || vr_snap_bounds_holds(b, x->device, x->address) ||
        vr_ordmap_get(&b->allocs, vr_okey3(x->device, x->address, 0)))
        return;
    if (b->nsus == MAX_SUSPECTS) {
        b->off = 1;
        return;
    }
    vr_xgrow(&b->sus, &b->sus_cap, b->nsus + 1, sizeof *b->sus, 64);
    b->sus[b->nsus++] = *x;
}

void vr_snap_bounds_oom(vr_snap_bounds *b, int64_t device, int64_t row, int64_t next_id)
{
    vr_xgrow(&b->ooms, &b->ooms_cap, b->nooms + 1, sizeof *b->ooms, 16);
    b->ooms[b->nooms][0] = device;
    b->ooms[b->nooms][1] = row;
    b->ooms[b->nooms++][2] = next_id;
}

/* Each segment's v[1]: the furthest end of its device's segments that
 * start at or below it (segments met at different times may overlap), so
 * that one floor look-up tells whether any holds an address: one pass,
 * not a walk over every lower segment for each suspect. */
static void reach_ends(vr_snap_bounds *b)
{
    int64_t device = 0, reach = 0;
    int started = 0;
    for (vr_oentry *e = vr_ordmap_ceil(&b->ranges, vr_okey3(INT64_MIN, INT64_MIN, 0), 0); e;
         e = vr_ordmap_ceil(&b->ranges, e->key, 1)) {
        if (!started || e->key.k[0] != device)
            started = 1, device = e->key.k[0], reach = e->v[0];
        else if (e->v[0] > reach)
            reach = e->v[0];
        e->v[1] = reach;
    }
}

/* Whether any segment of `device` holds address (after reach_ends). A
 * device none of whose segments is known is not judged. */
static int held_now(const vr_snap_bounds *b, int64_t device, int64_t address)
{
    const vr_oentry *first = vr_ordmap_ceil(&b->ranges, vr_okey3(device, INT64_MIN, 0), 0);
    if (!first || first->key.k[0] != device)
        return 1;
    const vr_oentry *e = vr_ordmap_floor(&b->ranges, vr_okey3(device, address, 0), 0);
    return e && e->key.k[0] == device && address < e->v[1];
}

static int delete_rows(vr_import_ctx *ctx, const vr_snap_suspect *x, vr_error *err)
{
    static const char *const blocks[] = {"delete_bad_entry", "delete_bad_event"};
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *st = vr_db_stmt(ctx->db, snapshot_sql, blocks[i], err);
        if (!st)
            return -1;
        if (vr_db_bind_int(st, ":first", x->first_row, err) < 0 ||
            vr_db_bind_int(st, ":end", x->end_row, err) < 0 ||
            vr_db_bind_int(st, ":source", ctx->source_id, err) < 0)
            return -1;
        if (vr_db_step_done(ctx->db, st, err) < 0)
            return -1;
    }
    return 0;
}

/* Running sums of the removed changes, per device (a file names at most
 * MAX_SNAPSHOT_DEVICES: a short list). */
typedef struct {
    int64_t (*sum)[2]; /* device, the sum */
    size_t n, cap;
} sums;

static int64_t *sum_of(sums *t, int64_t device)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->sum[i][0] == device)
            return &t->sum[i][1];
    vr_xgrow(&t->sum, &t->cap, t->n + 1, sizeof *t->sum, 8);
    t->sum[t->n][0] = device;
    t->sum[t->n][1] = 0;
    return &t->sum[t->n++][1];
}

/* Adds a removed change to its device's running sum. */
static void add_removed(sums *t, const vr_snap_suspect *x)
{
    int64_t *sum = sum_of(t, x->device);
    *sum = vr_sat_add(*sum, x->delta);
}

/* Each removed entry's running sum, by the id after its rows: the later
 * events take off the last one at or below theirs. */
static int table_bad(vr_import_ctx *ctx, const vr_snap_suspect *bad, size_t n, vr_error *err)
{
    if (vr_db_exec_named(ctx->db, snapshot_sql, "bad_table", err) < 0 ||
        vr_db_exec_named(ctx->db, snapshot_sql, "bad_table_clear", err) < 0)
        return -1;
    sqlite3_stmt *ins = vr_db_stmt(ctx->db, snapshot_sql, "insert_bad", err);
    if (!ins)
        return -1;
    sums t = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        add_removed(&t, &bad[i]);
        if (vr_db_bind_int(ins, ":device", bad[i].device_id, err) < 0 ||
            vr_db_bind_int(ins, ":id", bad[i].end_row, err) < 0 ||
            vr_db_bind_int(ins, ":cum", *sum_of(&t, bad[i].device), err) < 0)
            return -1;
        rc = vr_db_step_done(ctx->db, ins, err);
    }
    free(t.sum);
    return rc;
}

/* One OOM's figures without the removed changes before it. */
static int put_back_oom(vr_import_ctx *ctx, int64_t row, int64_t fix, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(ctx->db, snapshot_sql, "unapply_bad_oom", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":fix", fix, err) < 0 || vr_db_bind_int(st, ":id", row, err) < 0)
        return -1;
    return vr_db_step_done(ctx->db, st, err);
}

/* The OOMs' sums: both lists are in the file's order. */
static int put_back_ooms(const vr_snap_bounds *b, vr_import_ctx *ctx, const vr_snap_suspect *bad,
                         size_t n, vr_error *err)
{
    sums t = {0};
    int rc = 0;
    for (size_t i = 0, j = 0; rc == 0 && i < b->nooms; i++) {
        for (; j < n && bad[j].end_row <= b->ooms[i][2]; j++)
            add_removed(&t, &bad[j]);
        int64_t fix = *sum_of(&t, b->ooms[i][0]);
        if (fix)
            rc = put_back_oom(ctx, b->ooms[i][1], fix, err);
    }
    free(t.sum);
    return rc;
}

/* The later events' and OOMs' sums without the removed changes. */
static int put_back(const vr_snap_bounds *b, vr_import_ctx *ctx, const vr_snap_suspect *bad,
                    size_t n, vr_error *err)
{
    if (table_bad(ctx, bad, n, err) < 0)
        return -1;
    sqlite3_stmt *up = vr_db_stmt(ctx->db, snapshot_sql, "unapply_bad", err);
    if (!up)
        return -1;
    if (vr_db_bind_int(up, ":source", ctx->source_id, err) < 0 ||
        vr_db_bind_int(up, ":first", bad[0].end_row, err) < 0)
        return -1;
    if (vr_db_step_done(ctx->db, up, err) < 0 || put_back_ooms(b, ctx, bad, n, err) < 0)
        return -1;
    return vr_db_exec_named(ctx->db, snapshot_sql, "bad_table_clear", err);
}

int vr_snap_bounds_settle(vr_snap_bounds *b, vr_import_ctx *ctx,
                          void (*on_bad)(void *ud, const vr_snap_suspect *x), void *ud,
                          vr_error *err)
{
    if (b->off || b->nsus == 0)
        return 0;
    reach_ends(b);
    /* the bad ones, kept in order at the front of the array */
    size_t n = 0;
    for (size_t i = 0; i < b->nsus; i++)
        if (!held_now(b, b->sus[i].device, b->sus[i].address))
            b->sus[n++] = b->sus[i];
    for (size_t i = 0; i < n; i++) {
        on_bad(ud, &b->sus[i]);
        if (delete_rows(ctx, &b->sus[i], err) < 0)
            return -1;
    }
    return n ? put_back(b, ctx, b->sus, n, err) : 0;
}
