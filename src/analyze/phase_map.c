/* Steps and phases of every source, in memory, and the lookup of a
 * moment's step and phase (binary searches over sorted arrays). */
#include "analyze/phase_map.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/sat.h"
#include "analyze/rules.h"

static const char sql[] = "schemas/analyze.sql";

int vr_phase_kind(const char *name)
{
    for (int i = 0; name && i < VR_PHASE_COUNT; i++)
        if (strcmp(vr_phase_name(i), name) == 0)
            return i;
    return -1;
}

int vr_phase_map_load_steps(vr_db *db, vr_phase_map *m, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "select_steps", err);
    if (!st)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_xgrow(&m->steps, &cap, m->nsteps + 1, sizeof *m->steps, 64);
        vr_step_span *s = &m->steps[m->nsteps++];
        s->source = sqlite3_column_int64(st, 0);
        s->number = sqlite3_column_int64(st, 1);
        s->ts = sqlite3_column_int64(st, 2);
        s->end = vr_sat_add(s->ts, sqlite3_column_int64(st, 3));
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading steps");
}

int vr_phase_map_load_phases(vr_db *db, vr_phase_map *m, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, sql, "select_phases", err);
    if (!st)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vr_xgrow(&m->phases, &cap, m->nphases + 1, sizeof *m->phases, 64);
        vr_phase_span *p = &m->phases[m->nphases++];
        p->source = sqlite3_column_int64(st, 0);
        p->kind = vr_phase_kind((const char *)sqlite3_column_text(st, 1));
        p->start = sqlite3_column_int64(st, 2);
        p->end = sqlite3_column_int64(st, 3);
        p->step_idx = vr_phase_map_step(m, p->source, p->start);
        if (p->kind < 0)
            p->kind = VR_PHASE_OTHER;
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vr_db_fail(db, err, "reading phases");
}

void vr_phase_map_free(vr_phase_map *m)
{
    free(m->steps);
    free(m->phases);
    memset(m, 0, sizeof *m);
}

/* Index of the last step of `source` starting at or before ts, or -1. */
static long last_step_from(const vr_phase_map *m, int64_t source, int64_t ts)
{
    size_t lo = 0, hi = m->nsteps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const vr_step_span *s = &m->steps[mid];
        if (s->source < source || (s->source == source && s->ts <= ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && m->steps[lo - 1].source == source ? (long)lo - 1 : -1;
}

long vr_phase_map_step(const vr_phase_map *m, int64_t source, int64_t ts)
{
    long i = last_step_from(m, source, ts);
    return i >= 0 && ts < m->steps[i].end ? i : -1;
}

/* The last phase of `source` that began at or before ts, or -1. */
static long phase_from(const vr_phase_map *m, int64_t source, int64_t ts)
{
    size_t lo = 0, hi = m->nphases;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const vr_phase_span *p = &m->phases[mid];
        if (p->source < source || (p->source == source && p->start <= ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && m->phases[lo - 1].source == source ? (long)lo - 1 : -1;
}

static int inside(const vr_phase_span *p, int64_t ts)
{
    return ts < p->end || (ts == p->end && p->start == p->end);
}

/* Whether `source` has steps and ts comes before its first (the first
 * step of a source: the lower bound of its id). */
static int before_first_step(const vr_phase_map *m, int64_t source, int64_t ts)
{
    size_t lo = 0, hi = m->nsteps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->steps[mid].source < source)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nsteps && m->steps[lo].source == source && ts < m->steps[lo].ts;
}

int vr_phase_map_has_phases(const vr_phase_map *m, int64_t source)
{
    return phase_from(m, source, INT64_MAX) >= 0;
}

void vr_phase_map_at(const vr_phase_map *m, int64_t source, int64_t ts, vr_phase_at *at)
{
    at->step_idx = vr_phase_map_step(m, source, ts);
    at->stretch = phase_from(m, source, ts);
    at->phase_idx = at->stretch >= 0 && inside(&m->phases[at->stretch], ts) ? at->stretch : -1;
    if (at->phase_idx >= 0)
        at->phase = m->phases[at->phase_idx].kind;
    else
        at->phase = before_first_step(m, source, ts) ? VR_PHASE_BEFORE : VR_PHASE_OTHER;
}
