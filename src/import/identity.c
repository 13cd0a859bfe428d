/* Device identity across files: joins a snapshot's own device to the device
 * of a trace of the same process (identity.h). The evidence is computed by
 * schemas/identity.sql; this file decides by the rules below and moves the
 * rows. Owns device_join and the device rows it deletes. */
#include "import/identity.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

static const char identity_sql[] = "schemas/identity.sql";

/* Two allocations are one when their times on one clock are this close:
 * both stamps are taken in the same call of the allocator, so they differ
 * by the two clocks' conversions (microseconds), far less than this. */
#define JOIN_TOLERANCE_NS 1000000
/* kLargeBuffer: the most a block may exceed the request it serves. */
#define JOIN_SIZE_SLACK (20 << 20)

/* How a rule decides. Each direction it compares must have at least
 * min_compared allocations and min_share_pct percent of them matched: a
 * couple of equal addresses prove nothing, a high share of many does. */
typedef struct {
    const char *name;  /* device_join.rule */
    const char *block; /* its evidence in identity.sql */
    int64_t min_compared;
    int64_t min_share_pct;
    int two_way; /* the block yields both directions */
    int timed;   /* it compares times (:tolerance) */
} join_rule;

static const join_rule join_rules[] = {
    {"history", "history_evidence", 16, 90, 1, 1},
    {"end_state", "end_state_evidence", 16, 90, 0, 0},
};

/* The row moves of a join, in order (identity.sql), and the parameters
 * each names: the snapshot's source, its device (from), the trace's (to). */
enum { JOIN_SOURCE = 1, JOIN_FROM = 2, JOIN_TO = 4 };
static const struct {
    const char *block;
    unsigned params;
} join_steps[] = {
    {"move_mem_events", JOIN_SOURCE | JOIN_FROM | JOIN_TO},
    {"move_oom_events", JOIN_SOURCE | JOIN_FROM | JOIN_TO},
    {"move_segments", JOIN_SOURCE | JOIN_FROM | JOIN_TO},
    {"move_trace_entries", JOIN_SOURCE | JOIN_FROM | JOIN_TO},
    {"move_source_devices", JOIN_SOURCE | JOIN_FROM | JOIN_TO},
    {"describe_joined_device", JOIN_FROM | JOIN_TO},
    {"delete_joined_device", JOIN_FROM},
};

typedef struct {
    int64_t snap_source, snap_device, trace_source, trace_device;
} join_pair;

typedef struct {
    const join_rule *rule; /* NULL: no rule had enough to go on */
    int passed;
    int64_t compared, matched, other_compared, other_matched;
} join_evidence;

static int enough(const join_rule *r, int64_t compared)
{
    return compared >= r->min_compared;
}

static int share_holds(const join_rule *r, int64_t compared, int64_t matched)
{
    return enough(r, compared) && matched * 100 >= compared * r->min_share_pct;
}

static int bind_pair(sqlite3_stmt *st, const join_rule *r, const join_pair *p, vr_error *err)
{
    return vr_db_bind_int(st, ":snap_source", p->snap_source, err) < 0 ||
                   vr_db_bind_int(st, ":snap_device", p->snap_device, err) < 0 ||
                   vr_db_bind_int(st, ":trace_source", p->trace_source, err) < 0 ||
                   vr_db_bind_int(st, ":trace_device", p->trace_device, err) < 0 ||
                   (r->timed && vr_db_bind_int(st, ":tolerance", JOIN_TOLERANCE_NS, err) < 0) ||
                   vr_db_bind_int(st, ":slack", JOIN_SIZE_SLACK, err) < 0
               ? -1
               : 0;
}

/* One rule's figures for a pair. 1: the rule had enough evidence to
 * decide (ev filled), 0: not, -1: error. */
static int weigh_rule(vr_db *db, const join_rule *r, const join_pair *p, join_evidence *ev,
                      vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, identity_sql, r->block, err);
    if (!st || bind_pair(st, r, p, err) < 0)
        return -1;
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_reset(st);
        return vr_db_fail(db, err, "weighing a snapshot's device");
    }
    int64_t v[4];
    for (int i = 0; i < 4; i++)
        v[i] = sqlite3_column_int64(st, i);
    sqlite3_reset(st);
    int comparable = r->two_way ? enough(r, v[0]) && enough(r, v[2]) : enough(r, v[0]) && v[2];
    if (!comparable)
        return 0;
    *ev = (join_evidence){r, 0, v[0], v[1], r->two_way ? v[2] : -1, r->two_way ? v[3] : -1};
    ev->passed = share_holds(r, v[0], v[1]) && (!r->two_way || share_holds(r, v[2], v[3]));
    return 1;
}

/* The first rule with enough evidence decides: shared history that does
 * not match is evidence against, not a reason to try the end state. */
static int weigh(vr_db *db, const join_pair *p, join_evidence *ev, vr_error *err)
{
    memset(ev, 0, sizeof *ev);
    for (size_t i = 0; i < sizeof join_rules / sizeof join_rules[0]; i++) {
        int rc = weigh_rule(db, &join_rules[i], p, ev, err);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
    }
    return 0;
}

static int record_join(vr_db *db, const join_pair *p, const join_evidence *ev, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, identity_sql, "insert_device_join", err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":source", p->snap_source, err) < 0 ||
        vr_db_bind_int(st, ":to", p->trace_device, err) < 0 ||
        vr_db_bind_int(st, ":with", p->trace_source, err) < 0 ||
        vr_db_bind_text(st, ":rule", ev->rule->name, strlen(ev->rule->name), err) < 0 ||
        vr_db_bind_int(st, ":compared", ev->compared, err) < 0 ||
        vr_db_bind_int(st, ":matched", ev->matched, err) < 0 ||
        vr_db_bind_opt_int(st, ":other_compared", ev->other_compared >= 0, ev->other_compared,
                           err) < 0 ||
        vr_db_bind_opt_int(st, ":other_matched", ev->other_matched >= 0, ev->other_matched, err) <
            0)
        return -1;
    return vr_db_step_done(db, st, err);
}

static int join(vr_db *db, const join_pair *p, const join_evidence *ev, vr_error *err)
{
    for (size_t i = 0; i < sizeof join_steps / sizeof join_steps[0]; i++) {
        sqlite3_stmt *st = vr_db_stmt(db, identity_sql, join_steps[i].block, err);
        unsigned named = join_steps[i].params;
        if (!st ||
            ((named & JOIN_SOURCE) && vr_db_bind_int(st, ":source", p->snap_source, err) < 0) ||
            ((named & JOIN_FROM) && vr_db_bind_int(st, ":from", p->snap_device, err) < 0) ||
            ((named & JOIN_TO) && vr_db_bind_int(st, ":to", p->trace_device, err) < 0))
            return -1;
        if (vr_db_step_done(db, st, err) < 0)
            return -1;
    }
    return record_join(db, p, ev, err);
}

/* The candidate pairs, read whole before any is joined (a join deletes
 * rows the candidates' query reads). Few: devices of one index. */
static join_pair *candidates(vr_db *db, int64_t source_id, size_t *n, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, identity_sql, "join_candidates", err);
    if (!st)
        return NULL;
    if (vr_db_bind_int(st, ":source", source_id, err) < 0)
        return NULL;
    join_pair *pairs = NULL;
    size_t cap = 0;
    int rc;
    *n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_xgrow(&pairs, &cap, *n + 1, sizeof *pairs, 4);
        pairs[(*n)++] = (join_pair){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                    sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3)};
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        free(pairs);
        vr_db_fail(db, err, "finding devices to join");
        return NULL;
    }
    return pairs ? pairs : vr_xmalloc(1);
}

/* The pairs of one snapshot device run from pairs[0] to *end. It joins
 * the one trace device that passes; when two pass (two processes alike
 * enough), it joins neither: never two processes summed as one. */
static int weigh_device(vr_db *db, const join_pair *pairs, size_t n, size_t *end, vr_error *err)
{
    size_t passing = 0, chosen = 0;
    join_evidence ev, chosen_ev = {0};
    for (*end = 0; *end < n && pairs[*end].snap_device == pairs[0].snap_device; (*end)++) {
        if (weigh(db, &pairs[*end], &ev, err) < 0)
            return -1;
        if (ev.rule && ev.passed) {
            passing++;
            chosen = *end;
            chosen_ev = ev;
        }
    }
    return passing == 1 ? join(db, &pairs[chosen], &chosen_ev, err) : 0;
}

int vr_identity_join(vr_db *db, int64_t source_id, vr_error *err)
{
    size_t n, used;
    join_pair *pairs = candidates(db, source_id, &n, err);
    if (!pairs)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i += used)
        rc = weigh_device(db, pairs + i, n - i, &used, err);
    free(pairs);
    return rc;
}
