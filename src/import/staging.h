/*-*** staging.h: several files imported at once (--jobs N) ***/
/*
 * vr_import_inputs() with opts->jobs > 1 hands the files it meets to a
 * pool of `jobs` worker threads. A worker imports a profiler trace into a
 * staging database of its own (its own connection: connections are opened
 * without SQLite's mutex, one thread each), buffering the warnings it
 * would have said. The run's thread then takes the files in input order:
 * a staged file is checked for content imported already, copied into the
 * run's database (db/stage.h) and weighed against the devices there
 * (identity.c), in that file's one transaction, and its warnings are said
 * then; every other file (a snapshot, a log, standard input, a file the
 * worker could not import) is imported there and then as without --jobs.
 * So the database, stderr and the report are those of a sequential
 * import of the same inputs in the same order. Workers stay at most
 * `jobs` files ahead of the run's thread: memory and staging space are
 * bounded by the jobs, not the files.
 */
#ifndef VR_IMPORT_STAGING_H
#define VR_IMPORT_STAGING_H

#include <stddef.h>

#include "import/import.h"

typedef struct vr_stage_pool vr_stage_pool;

/* Starts the workers over paths[0..n) (NULL: not a file to offer them);
 * NULL when they cannot start (no staging folder): import in order. */
vr_stage_pool *vr_stage_pool_start(char *const *paths, size_t n, const vr_import_opts *opts);

/* paths[i] (given in order, each once) imported into db: waits for its
 * worker, then as vr_import_file(). */
int vr_stage_pool_import(vr_stage_pool *p, size_t i, vr_db *db, vr_import_result *res,
                         vr_error *err);

/* Stops the workers and removes what they staged. */
void vr_stage_pool_end(vr_stage_pool *p);

#endif
