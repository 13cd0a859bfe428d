/*-*** stage.h: a file's staging database copied into the run's ***/
/*
 * `--jobs N` (import/staging.c) imports files on workers, each into a
 * staging database of its own; the run's connection then copies each in
 * input order, inside that file's import transaction, so that every row
 * and every id comes out as a sequential import of the same files gives
 * them: the file's own rows shifted past the run's ids (db/merge.c's
 * spaces), names shared by their text, devices by (rank, scope,
 * platform, index) with what the file said of them filled in.
 */
#ifndef VR_DB_STAGE_H
#define VR_DB_STAGE_H

#include <stdint.h>

#include "db/db.h"
#include "util/error.h"

/* ATTACH and DETACH happen outside a transaction. */
int vr_db_stage_attach(vr_db *db, const char *path, vr_error *err);
void vr_db_stage_detach(vr_db *db);

/* Copies the attached staging database's rows (one source, not analysed)
 * into `db`, in its open transaction; *source_id: the source's id here. */
int vr_db_stage_copy(vr_db *db, int64_t *source_id, vr_error *err);

/* The pragmas of a staging database: nothing in it outlives the run. */
int vr_db_stage_configure(vr_db *stage, vr_error *err);

#endif
