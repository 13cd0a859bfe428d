/*-*** analyze.h: the analysis passes ***/
/*
 * vr_analyze() runs the passes listed in analyze.c, in order, in one
 * transaction. Passes only read the imported tables and rewrite what they
 * own (allocation, step_summary, device_source_summary, device_summary,
 * op_memory, op_calls, mem_event.op_id, rebuilt totals), clearing their
 * tables first, so it can run again after more imports. Every pass keeps sources apart; a device's figures come from
 * the sources chosen for it (docs/schema.md). The same transaction marks
 * the analysis complete (analysis_state).
 */
#ifndef VR_ANALYZE_H
#define VR_ANALYZE_H

#include "../db/db.h"
#include "../util/error.h"

int vr_analyze(vr_db *db, vr_error *err);

/* Sets *current to 1 when the derived tables match the imported sources
 * (the last analysis committed after the last import), else 0: an
 * analysis that failed or was killed leaves 0, and a report must not be
 * drawn from the stale tables. */
int vr_analyze_is_current(vr_db *db, int *current, vr_error *err);

/* The op attribution pass (attribute.c): innermost enclosing cpu_op of
 * each memory event on its thread (source, pid, tid), and per-op
 * self/inclusive figures per source. */
int vr_analyze_attribute(vr_db *db, vr_error *err);

/* The timeline pass (timeline.c): each device's events, source by source,
 * in time order: allocations paired with frees, peaks, per-step figures,
 * per (device, source). Runs after attribution, whose op ids it copies. */
int vr_analyze_timeline(vr_db *db, vr_error *err);

/* The snapshot replay pass (snapshot_replay.c): each snapshot's layout
 * at its oom entries, rebuilt by walking the trace back from the end
 * state: oom_fragmentation, oom_event.largest_free_block_bytes. */
int vr_analyze_snapshot_replay(vr_db *db, vr_error *err);

/* The diagnosis pass (diagnose.c), after every other: one finding per
 * OOM event (its primary cause, secondary causes, confidence, evidence)
 * and findings for peaks without one. Owns finding. */
int vr_analyze_diagnose(vr_db *db, vr_error *err);

/* The finding kinds, NULL-terminated. */
extern const char *const vr_analyze_finding_kinds[];

/* *count: the findings whose kind is in `kinds`, a comma-separated list
 * ("any": all of them). */
int vr_analyze_count_findings(vr_db *db, const char *kinds, int64_t *count, vr_error *err);

#endif
