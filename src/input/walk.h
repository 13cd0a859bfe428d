/*-*** walk.h: the files of a folder, as inputs ***/
/*
 * A failed job's folder goes in whole: vr_walk() calls back for every
 * entry under a folder, recursively, in name order (so runs are
 * reproducible), with each regular file as an input and anything else
 * (a fifo, a socket, a device, a folder past VR_WALK_MAX_DEPTH, a link
 * not followed) as skipped with the reason. Hidden entries are walked like
 * the others: a job may write ".nvsmi.log".
 *
 * Symbolic links: a link to a file in the folder is read. A link that
 * resolves out of the folder (`train.log -> ../elsewhere/host.log`) is
 * skipped unless VR_WALK_FOLLOW_LINKS is given: whatever it reaches would
 * land in the report, excerpts included. A link to a folder in the folder
 * is never followed (what it reaches is walked as itself); with
 * VR_WALK_FOLLOW_LINKS one to a folder out of it is, and each folder is
 * walked once, so links that loop end.
 *
 * Ownership: paths passed to the callback are valid during the call.
 */
#ifndef VR_WALK_H
#define VR_WALK_H

#include "util/error.h"

#define VR_WALK_MAX_DEPTH 32

/* vr_walk's flags. */
#define VR_WALK_FOLLOW_LINKS 1u /* follow links out of the folder too */

/* `skipped` is NULL for a file to read, else why the entry is not one.
 * Returns 0 to go on, -1 to stop the walk (vr_walk then returns -1). */
typedef int (*vr_walk_fn)(void *ud, const char *path, const char *skipped);

/* 1 when `path` names a folder (following symlinks), 0 otherwise. */
int vr_walk_is_folder(const char *path);

/* Walks the folder `path`. Fails (VR_ERR_IO) when the folder cannot be
 * read; an unreadable entry inside it is passed as skipped. */
int vr_walk(const char *path, unsigned flags, vr_walk_fn fn, void *ud, vr_error *err);

#endif
