/*-*** stages.h: import -> analyze, shared by the run and `diff` ***/
/*
 * The first half of the library's stages on one database, as the run,
 * `import` and `report` do it (report.c) and each side of `diff` (diff.c):
 * the inputs imported and analysed, or a kept database's analysis
 * finished when it is not current. What happened to each input is said on
 * stderr (failures always, the rest unless o->quiet); errors come back in
 * `err` (an empty message: each failure was said already).
 */
#ifndef VR_CLI_STAGES_H
#define VR_CLI_STAGES_H

#include "cli/options.h"
#include "db/db.h"
#include "util/error.h"

/* Imports every input, then analyses what was imported. -1 when nothing
 * can be reported (or the database failed); *partial when some input
 * failed but others can be. record_issues: the unused inputs are kept
 * in the database (a report lists them). */
int vr_cli_import_analyze(vr_db *db, char **paths, int n, const vr_cli_opts *o, int record_issues,
                          int *partial, vr_error *err);

/* A kept database whose last analysis did not complete (killed, disk
 * full, other category rules): analysed again now. 0 or -1. */
int vr_cli_finish_analysis(vr_db *db, const vr_cli_opts *o, vr_error *err);

#endif
