#include "analyze.h"

#include "../util/timing.h"

static const char analyze_sql[] = "schemas/analyze.sql";

/* The analysis is this list, run in order in one transaction. Each pass
 * owns the derived tables it writes: its `clear` block empties them just
 * before it runs, so no pass depends on what an earlier analysis left, and
 * a table has one writer. A pass is a block of analyze.sql or a C sweep. */
typedef struct {
    const char *name;                     /* for VRAMREPORT_TIMING */
    const char *clear;                    /* block emptying what it owns, or NULL */
    const char *block;                    /* its SQL, or NULL for run */
    int (*run)(vr_db *db, vr_error *err); /* its C sweep, or NULL */
    const char *owns;                     /* what it writes (documentation) */
} vr_analyze_pass;

static const vr_analyze_pass passes[] = {
    {"indexes", NULL, "create_indexes", NULL, "the indexes the sweeps read by"},
    {"rebuild_totals", NULL, "rebuild_totals", NULL,
     "mem_event.total_allocated of sources without allocator totals"},
    {"attribute", "clear_attribution", NULL, vr_analyze_attribute,
     "op_memory, op_calls, mem_event.op_id"},
    {"timeline", "clear_timeline", NULL, vr_analyze_timeline,
     "allocation, step_summary, device_source_summary"},
    {"choose_sources", "clear_choice", "choose_sources", NULL, "device_axis"},
    {"summarise_devices", "clear_device_summary", "summarise_devices", NULL, "device_summary"},
    {"snapshot_state", "clear_snapshot_state", "snapshot_state", NULL, "snapshot_summary"},
    {"snapshot_replay", "clear_snapshot_replay", NULL, vr_analyze_snapshot_replay,
     "oom_fragmentation, oom_event.largest_free_block_bytes of snapshots"},
    {"snapshot_sites", NULL, "snapshot_sites", NULL, "alloc_site (cleared by snapshot_state)"},
    {"match_gpus", "clear_gpu_match", "match_gpus", NULL, "gpu.device_id, gpu.match_rule"},
    {"diagnose", "clear_findings", NULL, vr_analyze_diagnose,
     "finding (one per OOM; near-capacity, leak, rank-imbalance)"},
    /* Last: the flag commits with the tables it vouches for. */
    {"mark_analysis_complete", NULL, "mark_analysis_complete", NULL, "analysis_state"},
};

static int run_pass(vr_db *db, const vr_analyze_pass *p, vr_error *err)
{
    double t = vr_now();
    int rc = p->clear ? vr_db_exec_named(db, analyze_sql, p->clear, err) : 0;
    if (rc == 0)
        rc = p->run ? p->run(db, err) : vr_db_exec_named(db, analyze_sql, p->block, err);
    vr_timing(p->name, t);
    return rc;
}

int vr_analyze(vr_db *db, vr_error *err)
{
    if (vr_db_begin(db, err) < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof passes / sizeof passes[0]; i++)
        rc = run_pass(db, &passes[i], err);
    double t = vr_now();
    if (rc == 0) {
        rc = vr_db_commit(db, err);
        vr_timing("analyze commit", t);
        return rc;
    }
    vr_db_rollback(db);
    return -1;
}

int vr_analyze_is_current(vr_db *db, int *current, vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, analyze_sql, "analysis_complete", err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    *current = rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(db, err, "reading the analysis state");
    return 0;
}
