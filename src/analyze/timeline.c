/* The timeline sweep: every device's memory events, source by source, in
 * time order, once. Each (device, source) is measured on its own: on the
 * way the sweep pairs allocations with their frees (a map of the addresses
 * live now), finds the peaks, measures each profiler step, and notes how
 * much of the peak is explained by allocations seen in the file. Which of
 * a device's sources make its figures is decided afterwards, in SQL
 * (analyze.sql: choose_sources, summarise_devices). Memory is bounded by
 * the number of allocations live at one time (and the few events read
 * out of their place: MAX_DISPLACED). The events come through a function
 * SQLite calls on each row it reads, in table order when only a few are
 * out of place (see "reading the events"); allocation rows go out in
 * batches (src/batch/batch.h); their index by alloc event
 * (allocation_by_alloc_event) is built once they are all written, and only
 * where it is read. */
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/sat.h"
#include "db/category.h"
#include "batch/batch.h"
#include "analyze/analyze.h"
#include "analyze/categorize.h"

static const char sql[] = "schemas/analyze.sql";

typedef struct {
    int64_t source_id, number, ts, end;
} step_range;

typedef struct {
    int64_t source_id, number;
    int64_t peak_alloc, peak_res, start_alloc, end_alloc, alloc_count, alloc_bytes;
    int has_res;
} step_stats;

/* An allocation not yet freed, keyed by address (open addressing). */
typedef struct {
    int64_t addr, bytes, ts, event_id, op_id;
    int used, op_known;
    int64_t stack;
    int has_stack, stated;
} live_slot;

typedef struct {
    int64_t id, device, source, ts, bytes, addr, total_alloc, total_res, op_id;
    int has_addr, has_alloc, has_res, has_op;
    int key_ints; /* device, source and ts were integers */
    int64_t stack;
    int has_stack, stated;
} mem_row;

/* One source's figures on one device. */
typedef struct {
    int64_t device_id, source_id, events, start, end;
    int64_t peak_alloc, peak_alloc_ts, peak_alloc_id, peak_alloc_op, peak_step;
    int64_t peak_res, peak_res_ts, unknown_at_peak;
    int has_peak, has_res, peak_op_known, peak_step_known;
    int64_t live_known; /* bytes of tracked allocations live now */
} group_stats;

/* How vr_timeline_event() takes an event: into the sweep (the read is in
 * its order); merged with the displaced rows (the read is in table
 * order), as the index placed them or, guessed from the table's last
 * rows, by comparing keys and checking that the others do come in order;
 * or kept among the displaced rows (reading them by id). */
enum { READ_IN_ORDER, READ_MERGING, READ_GUESSED, READ_CAPTURE };

/* A row out of place in table order, and the row in place it goes just
 * before (INT64_MAX: after all of them). */
typedef struct {
    mem_row row;
    int64_t before;
} held_row;

/* The rows out of place in table order (find_displaced()). */
struct displaced {
    int64_t *ids, *befores; /* ids as found, then sorted; the row each goes before */
    size_t nids, ids_cap, befores_cap, next_id;
    held_row *rows; /* the same rows, in the sweep's order */
    size_t nrows, rows_cap, next_row;
    int64_t min_id, last_kept; /* the smallest id so far, the last row in place */
    int too_many;
    mem_row top;            /* READ_GUESSED: the last row in place (its key) */
    int seen, out_of_order; /* READ_GUESSED: a row in place before; the guess failed */
};

typedef struct {
    vr_db *db;
    vr_error *err;
    int read;                         /* READ_* */
    int64_t only_device, only_source; /* the one (device, source), if so */
    int failed;                       /* err holds what vr_timeline_event() met */
    struct displaced out_of_place;
    vr_batch *rows; /* insert_allocations: the rows made, into allocation */
    vr_categorizer *cat;
    step_range *steps;
    size_t nsteps;
    step_stats *stats; /* steps of the current (device, source) */
    size_t nstats, scap;
    live_slot *live;
    size_t live_cap, live_len;
    group_stats grp; /* the (device, source) being swept */
} sweep;

/*-*** steps ***/

static int load_steps(sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "select_steps", s->err);
    if (!st)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_xgrow(&s->steps, &cap, s->nsteps + 1, sizeof *s->steps, 64);
        step_range *r = &s->steps[s->nsteps++];
        r->source_id = sqlite3_column_int64(st, 0);
        r->number = sqlite3_column_int64(st, 1);
        r->ts = sqlite3_column_int64(st, 2);
        r->end = vr_sat_add(r->ts, sqlite3_column_int64(st, 3));
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(s->db, s->err, "reading steps");
}

/* The step of (source, ts), or NULL. Steps are sorted by (source, ts);
 * binary search for the last one starting at or before ts. */
static const step_range *step_at(const sweep *s, int64_t source, int64_t ts)
{
    size_t lo = 0, hi = s->nsteps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const step_range *r = &s->steps[mid];
        if (r->source_id < source || (r->source_id == source && r->ts <= ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const step_range *r = &s->steps[lo - 1];
    return r->source_id == source && ts < r->end ? r : NULL;
}

static step_stats *stats_for(sweep *s, const step_range *r)
{
    for (size_t i = s->nstats; i-- > 0;)
        if (s->stats[i].number == r->number && s->stats[i].source_id == r->source_id)
            return &s->stats[i];
    vr_xgrow(&s->stats, &s->scap, s->nstats + 1, sizeof *s->stats, 64);
    step_stats *st = &s->stats[s->nstats++];
    memset(st, 0, sizeof *st);
    st->source_id = r->source_id;
    st->number = r->number;
    st->peak_alloc = INT64_MIN;
    return st;
}

static void count_step(sweep *s, const mem_row *m, const step_range *r)
{
    step_stats *st = stats_for(s, r);
    if (m->has_alloc) {
        if (st->peak_alloc == INT64_MIN)
            st->start_alloc = vr_sat_sub(m->total_alloc, m->bytes);
        if (m->total_alloc > st->peak_alloc)
            st->peak_alloc = m->total_alloc;
        st->end_alloc = m->total_alloc;
    }
    if (m->has_res && (!st->has_res || m->total_res > st->peak_res)) {
        st->peak_res = m->total_res;
        st->has_res = 1;
    }
    if (m->bytes > 0) {
        st->alloc_count++;
        st->alloc_bytes = vr_sat_add(st->alloc_bytes, m->bytes);
    }
}

/*-*** live allocations ***/

static uint64_t addr_hash(int64_t addr)
{
    uint64_t x = (uint64_t)addr;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static void live_grow(sweep *s)
{
    size_t cap = s->live_cap ? s->live_cap * 2 : 4096;
    live_slot *slots = vr_xcalloc(cap, sizeof *slots);
    for (size_t i = 0; i < s->live_cap; i++) {
        if (!s->live[i].used)
            continue;
        size_t j = addr_hash(s->live[i].addr) & (cap - 1);
        while (slots[j].used)
            j = (j + 1) & (cap - 1);
        slots[j] = s->live[i];
    }
    free(s->live);
    s->live = slots;
    s->live_cap = cap;
}

static live_slot *live_find(sweep *s, int64_t addr)
{
    if (!s->live_cap)
        return NULL;
    for (size_t j = addr_hash(addr) & (s->live_cap - 1); s->live[j].used;
         j = (j + 1) & (s->live_cap - 1))
        if (s->live[j].addr == addr)
            return &s->live[j];
    return NULL;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void live_remove(sweep *s, live_slot *slot)
{
    size_t mask = s->live_cap - 1, i = (size_t)(slot - s->live);
    s->live[i].used = 0;
    for (size_t j = (i + 1) & mask; s->live[j].used; j = (j + 1) & mask) {
        size_t home = addr_hash(s->live[j].addr) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            s->live[i] = s->live[j];
            s->live[j].used = 0;
            i = j;
        }
    }
    s->live_len--;
}

/*-*** writing the allocation rows ***/

/* Rows a statement writes: the table is the pass's alone, so more than a
 * batch's default (a statement's own cost, some 10,000 instructions,
 * spread over 256 rows: 39 a row, against 156 for 64). */
#define ROWS_AT_ONCE 256

/* Columns of insert_allocations, by their names there (device and source
 * shared: bound once a statement, src/batch/batch.h). */
enum {
    A_DEVICE,
    A_SOURCE,
    A_ADDR,
    A_BYTES,
    A_ALLOC_TS,
    A_FREE_TS,
    A_ALLOC_EVENT,
    A_FREE_EVENT,
    A_OP,
    A_CATEGORY,
    A_ALLOC_PHASE,
    A_FREE_PHASE,
    A_RULE,
    A_FRAME,
    A_NCOLS
};
static const char *const allocation_cols[A_NCOLS] = {
    ":device",      ":source",      ":addr",       ":bytes", ":alloc_ts",
    ":free_ts",     ":alloc_event", ":free_event", ":op",    ":category",
    ":alloc_phase", ":free_phase",  ":rule",       ":frame"};

/* The allocation's row, its category decided now. */
static int write_allocation(sweep *s, const live_slot *a, const mem_row *freed)
{
    vr_batch *b = s->rows;
    vr_batch_int(b, A_DEVICE, s->grp.device_id);
    vr_batch_int(b, A_SOURCE, s->grp.source_id);
    vr_batch_int(b, A_ADDR, a->addr);
    vr_batch_int(b, A_BYTES, a->bytes);
    vr_batch_int(b, A_ALLOC_TS, a->ts);
    vr_batch_opt_int(b, A_FREE_TS, freed != NULL, freed ? freed->ts : 0);
    vr_batch_int(b, A_ALLOC_EVENT, a->event_id);
    vr_batch_opt_int(b, A_FREE_EVENT, freed != NULL, freed ? freed->id : 0);
    vr_batch_opt_int(b, A_OP, a->op_known, a->op_id);
    vr_categorize_in in = {s->grp.source_id,
                           a->ts,
                           freed != NULL,
                           freed ? freed->ts : 0,
                           a->op_known,
                           freed && freed->has_op,
                           a->has_stack,
                           a->op_id,
                           freed ? freed->op_id : 0,
                           a->stack,
                           a->stated};
    vr_categorize_out out;
    if (vr_categorizer_decide(s->cat, &in, &out, s->err) < 0)
        return -1;
    vr_batch_static_text(b, A_CATEGORY, out.category);
    vr_batch_static_text(b, A_ALLOC_PHASE, out.alloc_phase);
    vr_batch_static_text(b, A_FREE_PHASE, out.free_phase);
    vr_batch_static_text(b, A_RULE, out.rule);
    vr_batch_opt_int(b, A_FRAME, out.frame != 0, out.frame);
    return vr_batch_row(b, s->err);
}

/* An allocation opens a slot; a free closes the slot at its address and
 * writes the pair. A second allocation at a live address means the free
 * was not recorded: the first is closed at the second. */
static int track(sweep *s, const mem_row *m)
{
    live_slot *slot = live_find(s, m->addr);
    if (m->bytes < 0) {
        if (!slot)
            return 0; /* allocated before the trace began */
        s->grp.live_known = vr_sat_sub(s->grp.live_known, slot->bytes);
        int rc = write_allocation(s, slot, m);
        live_remove(s, slot);
        return rc;
    }
    if (slot) { /* its free was not recorded, but it ended by now */
        s->grp.live_known = vr_sat_sub(s->grp.live_known, slot->bytes);
        if (write_allocation(s, slot, m) < 0)
            return -1;
        live_remove(s, slot);
    }
    if ((s->live_len + 1) * 2 > s->live_cap)
        live_grow(s);
    size_t j = addr_hash(m->addr) & (s->live_cap - 1);
    while (s->live[j].used)
        j = (j + 1) & (s->live_cap - 1);
    s->live[j] = (live_slot){m->addr, m->bytes,  m->ts,    m->id,        m->op_id,
                             1,       m->has_op, m->stack, m->has_stack, m->stated};
    s->live_len++;
    s->grp.live_known = vr_sat_add(s->grp.live_known, m->bytes);
    return 0;
}

/*-*** one source on one device ***/

static void observe(sweep *s, const mem_row *m)
{
    group_stats *d = &s->grp;
    if (d->events++ == 0)
        d->start = m->ts;
    d->end = m->ts;
    if (m->has_alloc && (!d->has_peak || m->total_alloc > d->peak_alloc)) {
        d->has_peak = 1;
        d->peak_alloc = m->total_alloc;
        d->peak_alloc_ts = m->ts;
        d->peak_alloc_id = m->id;
        d->peak_alloc_op = m->op_id;
        d->peak_op_known = m->has_op;
        d->unknown_at_peak = vr_sat_sub(m->total_alloc, d->live_known);
        const step_range *r = step_at(s, m->source, m->ts);
        d->peak_step_known = r != NULL;
        d->peak_step = r ? r->number : 0;
    }
    if (m->has_res && (!d->has_res || m->total_res > d->peak_res)) {
        d->has_res = 1;
        d->peak_res = m->total_res;
        d->peak_res_ts = m->ts;
    }
}

static int write_steps(sweep *s)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "insert_step_summary", s->err);
    if (!st)
        return -1;
    for (size_t i = 0; i < s->nstats; i++) {
        const step_stats *x = &s->stats[i];
        int has_alloc = x->peak_alloc != INT64_MIN;
        if (vr_db_bind_int(st, ":device", s->grp.device_id, s->err) < 0 ||
            vr_db_bind_int(st, ":source", x->source_id, s->err) < 0 ||
            vr_db_bind_int(st, ":step", x->number, s->err) < 0 ||
            vr_db_bind_opt_int(st, ":peak_alloc", has_alloc, x->peak_alloc, s->err) < 0 ||
            vr_db_bind_opt_int(st, ":peak_res", x->has_res, x->peak_res, s->err) < 0 ||
            vr_db_bind_opt_int(st, ":start_alloc", has_alloc, x->start_alloc, s->err) < 0 ||
            vr_db_bind_opt_int(st, ":end_alloc", has_alloc, x->end_alloc, s->err) < 0 ||
            vr_db_bind_int(st, ":alloc_count", x->alloc_count, s->err) < 0 ||
            vr_db_bind_int(st, ":alloc_bytes", x->alloc_bytes, s->err) < 0)
            return -1;
        if (vr_db_step_done(s->db, st, s->err) < 0)
            return -1;
    }
    return 0;
}

static int write_group(sweep *s)
{
    const group_stats *d = &s->grp;
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "insert_device_source_summary", s->err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":device", d->device_id, s->err) < 0 ||
        vr_db_bind_int(st, ":source", d->source_id, s->err) < 0 ||
        vr_db_bind_int(st, ":events", d->events, s->err) < 0 ||
        vr_db_bind_int(st, ":start", d->start, s->err) < 0 ||
        vr_db_bind_int(st, ":end", d->end, s->err) < 0 ||
        vr_db_bind_opt_int(st, ":peak_alloc", d->has_peak, d->peak_alloc, s->err) < 0 ||
        vr_db_bind_opt_int(st, ":peak_alloc_ts", d->has_peak, d->peak_alloc_ts, s->err) < 0 ||
        vr_db_bind_opt_int(st, ":peak_alloc_event", d->has_peak, d->peak_alloc_id, s->err) < 0 ||
        vr_db_bind_opt_int(st, ":peak_alloc_op", d->has_peak && d->peak_op_known,
                           d->peak_alloc_op, s->err) < 0 ||
        vr_db_bind_opt_int(st, ":peak_step", d->has_peak && d->peak_step_known, d->peak_step,
                           s->err) < 0 ||
        vr_db_bind_opt_int(st, ":peak_res", d->has_res, d->peak_res, s->err) < 0 ||
        vr_db_bind_opt_int(st, ":peak_res_ts", d->has_res, d->peak_res_ts, s->err) < 0 ||
        vr_db_bind_opt_int(st, ":unknown_at_peak", d->has_peak, d->unknown_at_peak, s->err) < 0)
        return -1;
    return vr_db_step_done(s->db, st, s->err);
}

/* Ends a (device, source): its unfreed allocations, its figures, its
 * steps. Allocations are never paired across sources: what one file left
 * live is unknown to the next. */
static int finish_group(sweep *s)
{
    if (s->grp.events == 0)
        return 0;
    for (size_t i = 0; i < s->live_cap; i++)
        if (s->live[i].used && write_allocation(s, &s->live[i], NULL) < 0)
            return -1;
    if (vr_batch_flush(s->rows, s->err) < 0)
        return -1;
    if (s->live)
        memset(s->live, 0, s->live_cap * sizeof *s->live);
    s->live_len = 0;
    if (write_group(s) < 0 || write_steps(s) < 0)
        return -1;
    s->nstats = 0;
    return 0;
}

static int on_row(sweep *s, const mem_row *m)
{
    if (s->grp.events == 0 || m->device != s->grp.device_id || m->source != s->grp.source_id) {
        if (finish_group(s) < 0)
            return -1;
        memset(&s->grp, 0, sizeof s->grp);
        s->grp.device_id = m->device;
        s->grp.source_id = m->source;
    }
    if (m->has_addr && track(s, m) < 0)
        return -1;
    observe(s, m);
    const step_range *r = step_at(s, m->source, m->ts);
    if (r)
        count_step(s, m, r);
    return 0;
}

/*-*** reading the events ***/

/* The events come to the sweep through vr_timeline_event(), which SQLite
 * calls on each row of the read as it goes (the block's WHERE): no row
 * is handed back, so neither sqlite3_step() nor a column call is paid per
 * event, and the arguments are read straight from SQLite's registers.
 * Its arguments, as analyze.sql passes them: */
enum {
    EV_ID,
    EV_DEVICE,
    EV_SOURCE,
    EV_TS,
    EV_BYTES,
    EV_ADDR,
    EV_ALLOC,
    EV_RES,
    EV_OP,
    EV_STACK,
    EV_CATEGORY,
    EV_COUNT
};
/* vr_timeline_group_event(), when every event is of one device and
 * source (every allocator snapshot): the same less those two columns, two
 * column reads an event fewer. */
enum { GV_ID, GV_TS, GV_BYTES, GV_COUNT = EV_COUNT - 2 };

/* At most this many events out of place for a read in table order (each
 * is read by id and held in memory until its turn); more: the index. */
#define MAX_DISPLACED 16384

static int64_t opt_arg(sqlite3_value *v, int *has)
{
    *has = sqlite3_value_type(v) != SQLITE_NULL;
    return sqlite3_value_int64(v);
}

/* The columns from bytes on, the same in both functions (v: bytes). */
static void read_rest(sqlite3_value **v, mem_row *m)
{
    enum { BYTES, ADDR, ALLOC, RES, OP, STACK, CATEGORY };
    m->bytes = sqlite3_value_int64(v[BYTES]);
    m->addr = opt_arg(v[ADDR], &m->has_addr);
    m->total_alloc = opt_arg(v[ALLOC], &m->has_alloc);
    m->total_res = opt_arg(v[RES], &m->has_res);
    m->op_id = opt_arg(v[OP], &m->has_op);
    m->stack = opt_arg(v[STACK], &m->has_stack);
    m->stated = sqlite3_value_type(v[CATEGORY]) == SQLITE_NULL
                    ? -1
                    : vr_category_index((const char *)sqlite3_value_text(v[CATEGORY]));
}

static void read_args(sqlite3_value **v, mem_row *m)
{
    m->key_ints = sqlite3_value_type(v[EV_DEVICE]) == SQLITE_INTEGER &&
                  sqlite3_value_type(v[EV_SOURCE]) == SQLITE_INTEGER &&
                  sqlite3_value_type(v[EV_TS]) == SQLITE_INTEGER;
    m->id = sqlite3_value_int64(v[EV_ID]);
    m->device = sqlite3_value_int64(v[EV_DEVICE]);
    m->source = sqlite3_value_int64(v[EV_SOURCE]);
    m->ts = sqlite3_value_int64(v[EV_TS]);
    read_rest(v + EV_BYTES, m);
}

/* Whether a comes before b in the sweep's order (device, source, ts, id;
 * C's order of the keys, SQLite's when they are integers). */
static int row_before(const mem_row *a, const mem_row *b)
{
    if (a->device != b->device)
        return a->device < b->device;
    if (a->source != b->source)
        return a->source < b->source;
    if (a->ts != b->ts)
        return a->ts < b->ts;
    return a->id < b->id;
}

static int compare_rows(const void *a, const void *b)
{
    const held_row *x = a, *y = b;
    return row_before(&x->row, &y->row) ? -1 : row_before(&y->row, &x->row) ? 1 : 0;
}

/* A row of the read in table order: a displaced row itself is skipped
 * (it was read by id); the displaced rows due just before this one go
 * first. The rows not displaced come in the sweep's order, so the two
 * sequences merge into that order. With displaced rows guessed, each row
 * not displaced is checked to come after the one before it; 1: it does
 * not (nothing is taken). */
static int on_table_row(sweep *s, const mem_row *m)
{
    struct displaced *d = &s->out_of_place;
    if (d->next_id < d->nids && d->ids[d->next_id] == m->id) {
        d->next_id++;
        return 0;
    }
    if (s->read == READ_GUESSED) {
        if (!m->key_ints || (d->seen && row_before(m, &d->top)))
            return 1;
        d->top = (mem_row){.device = m->device, .source = m->source, .ts = m->ts, .id = m->id};
        d->seen = 1;
        while (d->next_row < d->nrows && row_before(&d->rows[d->next_row].row, m))
            if (on_row(s, &d->rows[d->next_row++].row) < 0)
                return -1;
        return on_row(s, m);
    }
    while (d->next_row < d->nrows && d->rows[d->next_row].before == m->id)
        if (on_row(s, &d->rows[d->next_row++].row) < 0)
            return -1;
    return on_row(s, m);
}

/* vr_timeline_event(the event's columns): hands the event to the sweep
 * (or, reading the displaced rows, keeps it); returns 0. */
static void take_event(sqlite3_context *ctx, sweep *s, const mem_row *m)
{
    int rc = 0;
    if (s->read == READ_CAPTURE) {
        struct displaced *d = &s->out_of_place;
        vr_xgrow(&d->rows, &d->rows_cap, d->nrows + 1, sizeof *d->rows, 64);
        d->rows[d->nrows++].row = *m;
    } else {
        rc = s->read == READ_IN_ORDER ? on_row(s, m) : on_table_row(s, m);
    }
    if (rc > 0) { /* ends the read; not an error */
        s->out_of_place.out_of_order = 1;
        sqlite3_result_error(ctx, "memory events out of order", -1);
        return;
    }
    if (rc < 0) {
        s->failed = 1;
        sqlite3_result_error(ctx, s->err->msg, -1);
        return;
    }
    sqlite3_result_int(ctx, 0);
}

static void sql_timeline_event(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    mem_row m;
    (void)argc;
    read_args(argv, &m);
    take_event(ctx, sqlite3_user_data(ctx), &m);
}

/* vr_timeline_group_event(): the device and source are the one group's. */
static void sql_timeline_group_event(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const sweep *s = sqlite3_user_data(ctx);
    mem_row m;
    (void)argc;
    m.id = sqlite3_value_int64(argv[GV_ID]);
    m.device = s->only_device;
    m.source = s->only_source;
    m.key_ints = sqlite3_value_type(argv[GV_TS]) == SQLITE_INTEGER;
    m.ts = sqlite3_value_int64(argv[GV_TS]);
    read_rest(argv + GV_BYTES, &m);
    take_event(ctx, sqlite3_user_data(ctx), &m);
}

/* vr_timeline_displaced(id), over the ids in the sweep's order backwards
 * (the index's order, so SQLite's own comparison of the keys): a row is
 * out of place in table order when one after it in the sweep's order has
 * a smaller id. Such a row is noted with the row it goes before, the last
 * one in place seen (INT64_MAX: the end). Returns 1 (ending the read)
 * once there are too many. */
static void sql_timeline_displaced(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    sweep *s = sqlite3_user_data(ctx);
    struct displaced *d = &s->out_of_place;
    int64_t id = sqlite3_value_int64(argv[0]);
    (void)argc;
    if (id < d->min_id) {
        d->min_id = d->last_kept = id;
    } else if (d->nids < MAX_DISPLACED) {
        vr_xgrow(&d->ids, &d->ids_cap, d->nids + 1, sizeof *d->ids, 64);
        vr_xgrow(&d->befores, &d->befores_cap, d->nids + 1, sizeof *d->befores, 64);
        d->ids[d->nids] = id;
        d->befores[d->nids++] = d->last_kept;
    } else {
        d->too_many = 1;
    }
    sqlite3_result_int(ctx, d->too_many);
}

static const vr_db_function timeline_functions[] = {
    {"vr_timeline_event", EV_COUNT, sql_timeline_event, NULL, NULL},
    {"vr_timeline_group_event", GV_COUNT, sql_timeline_group_event, NULL, NULL},
    {"vr_timeline_displaced", 1, sql_timeline_displaced, NULL, NULL},
};

/* s NULL: removes them, so nothing can call them with a finished sweep. */
static int register_functions(vr_db *db, sweep *s, vr_error *err)
{
    size_t n = sizeof timeline_functions / sizeof *timeline_functions;
    return vr_db_functions(db, timeline_functions, n, s, err);
}

/* Steps a read whose rows go through vr_timeline_event() to its end;
 * 1: a row out of order ended it (READ_GUESSED). */
static int run_read(sweep *s, sqlite3_stmt *st, int mode)
{
    s->read = mode;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        ;
    sqlite3_reset(st);
    if (rc == SQLITE_DONE)
        return 0;
    if (s->out_of_place.out_of_order)
        return 1;
    return s->failed ? -1 : vr_db_fail(s->db, s->err, "reading memory events");
}

/* Finds the rows out of place in table order; *ok 0: too many, read by
 * the index. */
static int find_displaced(sweep *s, int *ok)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "timeline_displaced_events", s->err);
    if (!st)
        return -1;
    s->out_of_place.min_id = s->out_of_place.last_kept = INT64_MAX;
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(s->db, s->err, "reading memory events");
    *ok = rc == SQLITE_DONE;
    return 0;
}

static int compare_ids(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The displaced rows, read by id, in the sweep's order, then their ids
 * sorted, to be skipped in the read in table order. Found by the index
 * (mode READ_MERGING), they come backwards, each with the row it goes
 * before; guessed, in table order, and are sorted by their keys. */
static int read_displaced(sweep *s, int mode)
{
    struct displaced *d = &s->out_of_place;
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "timeline_event_by_id", s->err);
    if (!st)
        return -1;
    for (size_t k = 0; k < d->nids; k++) {
        size_t i = mode == READ_MERGING ? d->nids - 1 - k : k, had = d->nrows;
        if (vr_db_bind_int(st, ":id", d->ids[i], s->err) < 0)
            return -1;
        if (run_read(s, st, READ_CAPTURE) < 0)
            return -1;
        if (d->nrows != had + 1)
            return vr_fail(s->err, "internal: memory event %lld vanished during the analysis",
                           (long long)d->ids[i]);
        d->rows[had].before = mode == READ_MERGING ? d->befores[i] : 0;
    }
    if (mode == READ_GUESSED && d->nrows)
        qsort(d->rows, d->nrows, sizeof *d->rows, compare_rows);
    if (d->nids)
        qsort(d->ids, d->nids, sizeof *d->ids, compare_ids);
    return 0;
}

/* The guess: the rows out of place are among the table's last
 * TAIL_ROWS (a snapshot's start marker is written after every other
 * event), those that come before a row ahead of them there. *ok 0: a
 * key that is not of integers. */
#define TAIL_ROWS 64
static int guess_displaced(sweep *s, int *ok)
{
    struct displaced *d = &s->out_of_place;
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "timeline_last_events", s->err);
    if (!st)
        return -1;
    if (vr_db_bind_int(st, ":rows", TAIL_ROWS, s->err) < 0)
        return -1;
    int rc, seen = 0;
    mem_row top = {0};
    *ok = 1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 1; i < 4; i++)
            *ok &= sqlite3_column_type(st, i) == SQLITE_INTEGER;
        mem_row m = {.id = sqlite3_column_int64(st, 0),
                     .device = sqlite3_column_int64(st, 1),
                     .source = sqlite3_column_int64(st, 2),
                     .ts = sqlite3_column_int64(st, 3)};
        if (seen && row_before(&m, &top)) {
            vr_xgrow(&d->ids, &d->ids_cap, d->nids + 1, sizeof *d->ids, 64);
            d->ids[d->nids++] = m.id;
        } else {
            top = m;
            seen = 1;
        }
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(s->db, s->err, "reading memory events");
}

/* After a failed guess: nothing written, nothing swept. */
static int restart(sweep *s)
{
    struct displaced *d = &s->out_of_place;
    free(d->ids);
    free(d->befores);
    free(d->rows);
    memset(d, 0, sizeof *d);
    memset(&s->grp, 0, sizeof s->grp);
    if (s->live)
        memset(s->live, 0, s->live_cap * sizeof *s->live);
    s->live_len = 0;
    s->nstats = 0;
    vr_batch_discard(s->rows);
    return vr_db_exec_named(s->db, sql, "clear_timeline", s->err);
}

/* Every row in table order, with the displaced ones (read by id) in
 * their places; 1: the guess failed. */
static int read_in_table_order(sweep *s, int one, int mode)
{
    sqlite3_stmt *st = vr_db_stmt(
        s->db, sql,
        one ? "timeline_group_events_in_table_order" : "timeline_events_in_table_order", s->err);
    if (!st || read_displaced(s, mode) < 0)
        return -1;
    int rc = run_read(s, st, mode);
    if (rc != 0)
        return rc;
    struct displaced *d = &s->out_of_place;
    while (d->next_row < d->nrows)
        if (on_row(s, &d->rows[d->next_row++].row) < 0)
            return -1;
    return 0;
}

/* Whether every event is of one (device, source), and which: the first
 * and the last of the index (*one 0 also when there is no event, or the
 * keys are not integers). */
static int one_group(sweep *s, int *one)
{
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "timeline_first_last_group", s->err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    *one = rc == SQLITE_ROW;
    for (int i = 0; *one && i < 4; i++)
        *one = sqlite3_column_type(st, i) == SQLITE_INTEGER;
    if (*one) {
        s->only_device = sqlite3_column_int64(st, 0);
        s->only_source = sqlite3_column_int64(st, 1);
        *one = s->only_device == sqlite3_column_int64(st, 2) &&
               s->only_source == sqlite3_column_int64(st, 3);
    }
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE
               ? 0
               : vr_db_fail(s->db, s->err, "reading memory events");
}

/* Every memory event in (device, source, time, id) order, once: in table
 * order merged with the displaced rows when they are few (guessed first,
 * then found by the index), else by the index (a seek into the table a
 * row). */
static int sweep_events(sweep *s)
{
    int one = 0, ok = 0;
    if (one_group(s, &one) < 0 || guess_displaced(s, &ok) < 0)
        return -1;
    if (ok) {
        int rc = read_in_table_order(s, one, READ_GUESSED);
        if (rc <= 0)
            return rc;
        if (restart(s) < 0)
            return -1;
    }
    if (find_displaced(s, &ok) < 0)
        return -1;
    if (ok)
        return read_in_table_order(s, one, READ_MERGING);
    sqlite3_stmt *st = vr_db_stmt(s->db, sql, "timeline_events_in_time_order", s->err);
    return st ? run_read(s, st, READ_IN_ORDER) : -1;
}

/* From the finished rows (one sort, not a scattered update a row), and
 * only when its reader, locate, can read by it (timeline_needs_index). */
static int build_index(vr_db *db, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "timeline_needs_index", err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    int needed = rc == SQLITE_ROW && sqlite3_column_int(st, 0);
    sqlite3_reset(st);
    if (rc != SQLITE_ROW)
        return vr_db_fail(db, err, "looking for threaded memory events");
    return needed ? vr_db_exec_named(db, sql, "timeline_indexes", err) : 0;
}

int vr_analyze_timeline(vr_db *db, vr_error *err)
{
    sweep s;
    memset(&s, 0, sizeof s);
    s.db = db;
    s.err = err;
    s.rows = vr_batch_new(db, sql, "insert_allocations", allocation_cols, A_NCOLS, err);
    int rc = s.rows ? 0 : -1;
    if (rc == 0)
        vr_batch_set_rows(s.rows, ROWS_AT_ONCE);
    if (rc == 0)
        rc = vr_categorizer_open(db, &s.cat, err);
    if (rc == 0)
        rc = load_steps(&s);
    if (rc == 0)
        rc = register_functions(db, &s, err);
    if (rc == 0)
        rc = sweep_events(&s);
    if (rc == 0)
        rc = finish_group(&s);
    if (rc == 0)
        rc = vr_batch_flush(s.rows, err);
    if (rc == 0)
        rc = build_index(db, err);
    /* Removed even after a registration that failed part way (the first
     * functions would point at this frame's sweep); fails only while a
     * statement runs, and then the pass fails. */
    vr_error ignored = VR_ERROR_INIT;
    if (register_functions(db, NULL, rc < 0 ? &ignored : err) < 0)
        rc = -1;
    vr_batch_free(s.rows);
    vr_categorizer_free(s.cat);
    free(s.out_of_place.ids);
    free(s.out_of_place.befores);
    free(s.out_of_place.rows);
    free(s.steps);
    free(s.stats);
    free(s.live);
    return rc;
}
