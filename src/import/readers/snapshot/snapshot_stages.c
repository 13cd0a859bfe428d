/* The stages of an allocator snapshot: newer PyTorch records the user's
 * record_function ranges into the snapshot as external_annotations, one
 * entry per edge ({"name", "stage": "START" or "END", "device",
 * "time_us"}, torch/csrc/cuda/memory_snapshot.cpp). Each START/END pair
 * becomes one op row (cat 'user_annotation', the source's, no pid or tid)
 * so the report can say in which stage a device's peak fell. Owned by the
 * snapshot model (snapshot.h); the list is read as one value, so the open
 * STARTs it keeps are bounded by the list itself. */
#include <stdlib.h>
#include <string.h>

#include "util/sat.h"
#include "import/readers/snapshot/snapshot.h"

/* A START waiting for its END. */
typedef struct {
    int64_t device, ts;
    const char *name;
    size_t len;
} open_stage;

typedef struct {
    vr_import_ctx *ctx;
    vr_error *err;
    int64_t *first_open;
    open_stage *open;
    size_t nopen, cap;
} pairing;

/* dur_ns -1: runs to the source's last time; -2: from its first, ts_ns
 * being the END (schemas/snapshot.sql close_stages). */
enum { RUNS_TO_END = -1, RUNS_FROM_START = -2 };

static void note_time(vr_import_ctx *c, int64_t t)
{
    if (t < c->start_ns)
        c->start_ns = t;
    if (t > c->end_ns)
        c->end_ns = t;
}

static int insert_stage(pairing *p, const char *name, size_t len, int64_t ts, int64_t dur)
{
    vr_db *db = p->ctx->db;
    int64_t name_id = vr_db_intern(db, name, len, p->err);
    sqlite3_stmt *st = vr_db_stmt(db, "schemas/import.sql", "insert_op", p->err);
    if (name_id < 0 || !st)
        return -1;
    static const char cat[] = "user_annotation";
    if (vr_db_bind_int(st, ":source", p->ctx->source_id, p->err) < 0 ||
        vr_db_bind_text(st, ":cat", cat, sizeof cat - 1, p->err) < 0 ||
        vr_db_bind_int(st, ":name", name_id, p->err) < 0 ||
        vr_db_bind_null(st, ":pid", p->err) < 0 || vr_db_bind_null(st, ":tid", p->err) < 0 ||
        vr_db_bind_int(st, ":ts", ts, p->err) < 0 ||
        vr_db_bind_int(st, ":dur", dur, p->err) < 0 ||
        vr_db_bind_null(st, ":external", p->err) < 0 || vr_db_step_done(db, st, p->err) < 0)
        return -1;
    if (dur < 0 && !*p->first_open)
        *p->first_open = sqlite3_last_insert_rowid(vr_db_handle(db));
    return 0;
}

/* An END closes the latest open START of its device and name. */
static int close_stage(pairing *p, int64_t device, const vr_pk_value *name, int64_t ts)
{
    for (size_t i = p->nopen; i-- > 0;) {
        open_stage *o = &p->open[i];
        if (o->device != device || o->len != name->len || memcmp(o->name, name->s, o->len) != 0)
            continue;
        int rc = insert_stage(p, o->name, o->len, o->ts, ts > o->ts ? vr_sat_sub(ts, o->ts) : 0);
        memmove(o, o + 1, (p->nopen - i - 1) * sizeof *o);
        p->nopen--;
        return rc;
    }
    return insert_stage(p, name->s, name->len, ts, RUNS_FROM_START);
}

/* One annotation; 1 when it is not one (counted as malformed). */
static int on_annotation(pairing *p, const vr_pk_value *a)
{
    const vr_pk_value *name = vr_pk_get(a, "name"), *stage = vr_pk_get(a, "stage");
    int64_t device = 0, time_us;
    if (!name || name->kind != VR_PK_STR || !vr_pk_int(vr_pk_get(a, "time_us"), &time_us) ||
        !(vr_pk_str_eq(stage, "START") || vr_pk_str_eq(stage, "END")))
        return 1;
    vr_pk_int(vr_pk_get(a, "device"), &device);
    int64_t ts = vr_sat_mul(time_us, 1000);
    note_time(p->ctx, ts);
    if (vr_pk_str_eq(stage, "END"))
        return close_stage(p, device, name, ts);
    vr_xgrow(&p->open, &p->cap, p->nopen + 1, sizeof *p->open, 16);
    p->open[p->nopen++] = (open_stage){device, ts, name->s, name->len};
    return 0;
}

int vr_snapshot_stages(vr_import_ctx *ctx, const vr_pk_value *annotations, uint64_t *malformed,
                       int64_t *first_open, vr_error *err)
{
    pairing p = {ctx, err, first_open, NULL, 0, 0};
    int rc = 0;
    if (!annotations || annotations->kind != VR_PK_LIST) {
        *malformed += annotations && annotations->kind != VR_PK_NONE;
        return 0;
    }
    for (size_t i = 0; rc >= 0 && i < annotations->len; i++) {
        rc = on_annotation(&p, annotations->items[i]);
        *malformed += rc == 1;
    }
    for (size_t i = 0; rc >= 0 && i < p.nopen; i++)
        rc = insert_stage(&p, p.open[i].name, p.open[i].len, p.open[i].ts, RUNS_TO_END);
    free(p.open);
    return rc < 0 ? -1 : 0;
}

int vr_snapshot_stages_close(vr_import_ctx *ctx, int64_t first_open, vr_error *err)
{
    if (!first_open)
        return 0;
    sqlite3_stmt *st = vr_db_stmt(ctx->db, "schemas/snapshot.sql", "close_stages", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":first", first_open, err) < 0 ||
        vr_db_bind_int(st, ":source", ctx->source_id, err) < 0 ||
        vr_db_bind_int(st, ":start", ctx->start_ns, err) < 0 ||
        vr_db_bind_int(st, ":end", ctx->end_ns, err) < 0)
        return -1;
    return vr_db_step_done(ctx->db, st, err);
}
