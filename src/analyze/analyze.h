/*-*** analyze.h: the analysis passes ***/
/*
 * vr_analyze() runs the passes of analyze.c's table passes[], in order,
 * in one transaction. A pass reads the imported tables and what the
 * passes before it wrote, and rewrites only the tables its row names as
 * its own (`owns`), clearing them first, so the analysis can run again
 * after more imports. Every pass keeps sources apart; a device's figures
 * come from the sources chosen for it (docs/schema.md). The same
 * transaction marks the analysis complete (analysis_state). A new pass is
 * a C sweep declared here (or a block of schemas/analyze.sql) and a row
 * of passes[] where its inputs are ready.
 */
#ifndef VR_ANALYZE_H
#define VR_ANALYZE_H

#include <stdint.h>

#include "db/db.h"
#include "util/error.h"

/* What the caller may change about the analysis. */
typedef struct {
    const char *category_rules; /* a rules file, or NULL: the built-in */
    /* --capacity: the capacity of devices no input states (0: none), and
     * how the user said it ("80GiB", "A100-80GB"): table capacity_given. */
    int64_t capacity_bytes;
    const char *capacity_said;
} vr_analyze_opts;

/* vr_analyze_with(db, NULL, err): the built-in rules. A rules file that
 * cannot be read or parsed fails before anything is written, with
 * "FILE:LINE: expected ...". */
int vr_analyze(vr_db *db, vr_error *err);
/* Checks the options (reads and parses the rules file) without a database. */
int vr_analyze_check_opts(const vr_analyze_opts *opts, vr_error *err);
int vr_analyze_with(vr_db *db, const vr_analyze_opts *opts, vr_error *err);

/* Sets *current to 1 when the derived tables match the imported sources
 * (the last analysis committed after the last import), else 0: an
 * analysis that failed or was killed leaves 0, and a report must not be
 * drawn from the stale tables. Also 0 when the analysis used other
 * category rules than opts names (NULL: the built-in ones). */
int vr_analyze_is_current_with(vr_db *db, const vr_analyze_opts *opts, int *current,
                               vr_error *err);

/* The op attribution pass (attribute.c): innermost enclosing cpu_op of
 * each memory event on its thread (source, pid, tid), and per-op
 * self/inclusive figures per source. */
int vr_analyze_attribute(vr_db *db, vr_error *err);

/* The timeline pass (timeline.c): each device's events, source by source,
 * in time order: allocations paired with frees, peaks, per-step figures,
 * per (device, source). Runs after attribution, whose op ids it copies. */
int vr_analyze_timeline(vr_db *db, vr_error *err);

/* The locate pass (locate.c): each allocation's innermost user frame
 * (frame row) and nn.Module path, from the Python frames of its thread
 * (with_stack=True traces) or its snapshot stack. Runs after timeline. */
int vr_analyze_locate(vr_db *db, vr_error *err);

/* The forward_weights pass (weights.c): the weight bytes one forward
 * reads, per source recorded with record_shapes (op_weight), each
 * weight counted once by module instance, or in one window of the trace
 * for ops outside modules. Runs after phases. */
int vr_analyze_forward_weights(vr_db *db, vr_error *err);

/* The snapshot replay pass (snapshot_replay.c): each snapshot's layout
 * at its oom entries, rebuilt by walking the trace back from the end
 * state: oom_fragmentation, oom_event.largest_free_block_bytes. */
int vr_analyze_snapshot_replay(vr_db *db, vr_error *err);

/* The breakdown pass (breakdown.c): each device's allocated memory by
 * PyTorch's memory-profiler categories and kv_cache, at its peak
 * (peak_category, nine rows summing to the peak) and over time (category_sample). Runs after
 * summarise_devices and the categorize pass. */
int vr_analyze_breakdown(vr_db *db, vr_error *err);

/* The stack_modules pass (stack_modules.c): the module path of the
 * stacks a report groups (a snapshot's forward frames, outer to inner):
 * stack_module. Runs after summarise_devices and breakdown (peak_live,
 * block_before). */
int vr_analyze_stack_modules(vr_db *db, vr_error *err);
/* The phases pass (phases.c): each source's phases (forward, backward,
 * optimizer, zero_grad) from its ops, per step: table phase. */
int vr_analyze_phases(vr_db *db, vr_error *err);

/* The phase_peaks pass (phases.c): the allocated peak of each phase of
 * each step on each device's chosen sources: table phase_peak. */
int vr_analyze_phase_peaks(vr_db *db, vr_error *err);

/* The categorize pass (categorize.c): each allocation's phases and
 * category by the first rule that holds (rules.h), the rules read from
 * the temporary table vr_analyze_with() fills. */
int vr_analyze_categorize(vr_db *db, vr_error *err);

/* The trace_kv_cache pass (kv_modules.c): a generate() loop's keys and
 * values in a trace recorded with_modules, which the phase and lifetime
 * rules call temporary, made kv_cache (rule trace-kv-cache). */
int vr_analyze_trace_kv_cache(vr_db *db, vr_error *err);

/* Bandwidth or capacity (docs/bandwidth.md): each GPU's verdict from its
 * nvidia-smi/gpustat readings and OOMs, its memory type and peak
 * bandwidth, a trace's copy throughput. Owns bandwidth_or_capacity. */
int vr_analyze_bandwidth(vr_db *db, vr_error *err);

/* The diagnosis pass (diagnose.c), after every other: one finding per
 * OOM event (its primary cause, secondary causes, confidence, evidence)
 * and findings for peaks without one. Owns finding. */
int vr_analyze_diagnose(vr_db *db, vr_error *err);

/* Peaks apart by more than this share (per mille) of the largest are out
 * of balance: ranks (rank-imbalance) and the devices of one process
 * (device-imbalance), docs/diagnosis.md. */
#define VR_IMBALANCE_PERMILLE 200

/* Part of the diagnosis (device_imbalance.c): a `device-imbalance`
 * finding for each process whose devices' peaks are out of balance. */
int vr_analyze_device_imbalance(vr_db *db, vr_error *err);

/* A job merged from per-rank databases (`merge`, db/merge.h): the
 * rank-imbalance finding, which spans ranks, made again over all of the
 * job's (each rank's own, copied, saw only that rank). Owns only that
 * kind of finding; the caller's transaction. */
int vr_analyze_rank_imbalance(vr_db *db, vr_error *err);

/* The advise pass (advise.c), after diagnose: each finding's remedies
 * from the catalogue schemas/remedies.sql whose trigger holds, with the
 * bytes each would save from this job's figures, ranked by saving, and
 * whether the saving would have made the failed request fit. Owns advice. */
int vr_analyze_advise(vr_db *db, vr_error *err);

/* The finding kinds, NULL-terminated. */
extern const char *const vr_analyze_finding_kinds[];

/* *count: the findings whose kind is in `kinds`, a comma-separated list
 * ("any": all of them). */
int vr_analyze_count_findings(vr_db *db, const char *kinds, int64_t *count, vr_error *err);

#endif
