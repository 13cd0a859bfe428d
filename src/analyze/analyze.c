#include "analyze/analyze.h"

#include <stdio.h>
#include <string.h>

#include "util/timing.h"
#include "analyze/rules.h"

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
    {"rebuild_totals", NULL, "rebuild_totals", NULL,
     "mem_event.total_allocated of sources without allocator totals"},
    {"attribute", "clear_attribution", NULL, vr_analyze_attribute,
     "op_memory, op_calls, mem_event.op_id"},
    /* Before timeline, which decides each allocation's category and
     * phases as it writes the row (categorize.h). */
    {"phases", "clear_phases", NULL, vr_analyze_phases, "phase"},
    {"timeline", "clear_timeline", NULL, vr_analyze_timeline,
     "allocation (with category, alloc_phase, free_phase, category_rule and a stack's "
     "frame_id, as categorize.h decides them), step_summary, device_source_summary"},
    {"locate", "clear_location", NULL, vr_analyze_locate,
     "allocation.module, and frame_id where no stack gave one: placed by Python frames "
     "(traces)"},
    /* After phases (the window of ops outside modules). */
    {"forward_weights", "clear_forward_weights", NULL, vr_analyze_forward_weights,
     "forward_weights: the weight bytes one forward reads (record_shapes traces)"},
    {"categorize", NULL, NULL, vr_analyze_categorize,
     "the category of any allocation still without one (none when timeline wrote them); "
     "analysis_state.category_rules"},
    /* After locate (allocation.module) and categorize (the rule that
     * decided each row). */
    {"trace_kv_cache", NULL, NULL, vr_analyze_trace_kv_cache,
     "allocation.category and category_rule of a trace's attention allocations that outlive "
     "their layer in a forward (trace-kv-cache: kv_modules.c)"},
    {"choose_sources", "clear_choice", "choose_sources", NULL, "device_axis"},
    {"phase_peaks", "clear_phase_peaks", NULL, vr_analyze_phase_peaks, "phase_peak"},
    {"summarise_devices", "clear_device_summary", "summarise_devices", NULL,
     "device_summary; temp.peak_live (the allocations live at each peak, read by "
     "snapshot_sites and advise)"},
    /* After categorize (allocation.category) and summarise_devices (the peak). */
    {"breakdown", "clear_breakdown", NULL, vr_analyze_breakdown,
     "peak_category, category_sample, block_before"},
    /* After breakdown (block_before) and summarise_devices (peak_live). */
    {"stack_modules", "clear_stack_modules", NULL, vr_analyze_stack_modules, "stack_module"},
    {"snapshot_state", "clear_snapshot_state", "snapshot_state", NULL, "snapshot_summary"},
    {"snapshot_replay", "clear_snapshot_replay", NULL, vr_analyze_snapshot_replay,
     "oom_fragmentation, oom_event.largest_free_block_bytes of snapshots"},
    {"snapshot_sites", NULL, "snapshot_sites", NULL, "alloc_site (cleared by snapshot_state)"},
    {"match_gpus", "clear_gpu_match", "match_gpus", NULL,
     "gpu.device_id, gpu.match_rule, gpu_unmatched (readings that cannot be the job's)"},
    /* After match_gpus: the GPUs a device's capacity may come from. */
    {"capacities", "clear_capacities", "capacities", NULL, "device_capacity"},
    /* After match_gpus (a GPU's device). */
    {"bound", "clear_bound", NULL, vr_analyze_bandwidth, "bandwidth_or_capacity"},
    {"diagnose", "clear_findings", NULL, vr_analyze_diagnose,
     "finding (one per OOM; near-capacity, leak, rank-imbalance, device-imbalance)"},
    /* After diagnose: each finding's remedies (schemas/remedies.sql). */
    {"advise", "clear_advice", NULL, vr_analyze_advise, "advice"},
    /* Last: the flag commits with the tables it vouches for. */
    {"mark_analysis_complete", NULL, "mark_analysis_complete", NULL,
     "analysis_state (and drops temp.peak_live)"},
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

/* The passes read the category rules from the database, as every other
 * input: the transaction's temporary table analysis_rules. */
static int hand_rules(vr_db *db, const vr_rules *rules, vr_error *err)
{
    if (vr_db_exec_named(db, analyze_sql, "begin_analysis_rules", err) < 0)
        return -1;
    sqlite3_stmt *st = vr_db_stmt(db, analyze_sql, "insert_analysis_rules", err);
    if (!st)
        return -1;
    if (vr_db_bind_text(st, ":origin", rules->origin, strlen(rules->origin), err) < 0 ||
        vr_db_bind_text(st, ":text", rules->text, rules->len, err) < 0)
        return -1;
    return vr_db_step_done(db, st, err);
}

/* The capacity the user gave, as the rest of the job's figures: in the
 * database (capacity_given), so the passes and the report read one
 * device_capacity; the analysis of another --capacity is another one. */
static int hand_capacity(vr_db *db, const vr_analyze_opts *opts, vr_error *err)
{
    if (vr_db_exec_named(db, analyze_sql, "clear_capacity_given", err) < 0)
        return -1;
    if (!opts || opts->capacity_bytes <= 0)
        return 0;
    sqlite3_stmt *st = vr_db_stmt(db, analyze_sql, "insert_capacity_given", err);
    const char *said = opts->capacity_said ? opts->capacity_said : "";
    if (!st || vr_db_bind_int(st, ":bytes", opts->capacity_bytes, err) < 0 ||
        vr_db_bind_text(st, ":said", said, strlen(said), err) < 0)
        return -1;
    return vr_db_step_done(db, st, err);
}

static int run_passes(vr_db *db, const vr_rules *rules, const vr_analyze_opts *opts,
                      vr_error *err)
{
    if (vr_db_begin(db, err) < 0)
        return -1;
    int rc = hand_rules(db, rules, err);
    if (rc == 0)
        rc = hand_capacity(db, opts, err);
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

/* The rules are read before the transaction: a bad file changes nothing. */
int vr_analyze_with(vr_db *db, const vr_analyze_opts *opts, vr_error *err)
{
    vr_rules rules;
    if (vr_rules_load(&rules, opts ? opts->category_rules : NULL, err) < 0)
        return -1;
    int rc = run_passes(db, &rules, opts, err);
    vr_rules_free(&rules);
    return rc;
}

int vr_analyze_check_opts(const vr_analyze_opts *opts, vr_error *err)
{
    vr_rules rules;
    if (vr_rules_load(&rules, opts ? opts->category_rules : NULL, err) < 0)
        return -1;
    vr_rules_free(&rules);
    return 0;
}

int vr_analyze(vr_db *db, vr_error *err)
{
    return vr_analyze_with(db, NULL, err);
}

static int read_flag(vr_db *db, const char *block, int *complete, char *text, size_t cap,
                     vr_error *err)
{
    sqlite3_stmt *st = vr_db_stmt(db, analyze_sql, block, err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    if (complete)
        *complete = rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
    if (text) {
        const unsigned char *s = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
        snprintf(text, cap, "%s", s ? (const char *)s : "");
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vr_db_fail(db, err, "reading the analysis state");
    return 0;
}

/* Current: complete, and made with the rules asked for now (their digest
 * is recorded by the categorize pass). */
int vr_analyze_is_current_with(vr_db *db, const vr_analyze_opts *opts, int *current,
                               vr_error *err)
{
    char used[32];
    if (read_flag(db, "analysis_complete", current, NULL, 0, err) < 0)
        return -1;
    if (!*current)
        return 0;
    if (read_flag(db, "analysis_category_rules", NULL, used, sizeof used, err) < 0)
        return -1;
    vr_rules rules;
    if (vr_rules_load(&rules, opts ? opts->category_rules : NULL, err) < 0)
        return -1;
    *current = strcmp(used, rules.digest) == 0;
    vr_rules_free(&rules);
    if (!*current)
        return 0;
    /* and with the capacity given now (none: 0) */
    sqlite3_stmt *st = vr_db_stmt(db, analyze_sql, "analysis_capacity_given", err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    int64_t given = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW)
        return vr_db_fail(db, err, "reading the analysis state");
    *current = given == (opts && opts->capacity_bytes > 0 ? opts->capacity_bytes : 0);
    return 0;
}
