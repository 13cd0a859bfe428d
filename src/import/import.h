/*-*** import.h: one input file into the database, all or nothing ***/
/*
 * vr_import_file() opens the file, recognises its format by content,
 * refuses content imported before (same XXH64 of the raw bytes), and runs
 * the reader inside one transaction: on any error the database is left as
 * it was. A truncated input is not an error: what was complete is kept,
 * source.truncated is set and one warning names the byte offset.
 */
#ifndef VR_IMPORT_H
#define VR_IMPORT_H

#include <stdint.h>

#include "../db/db.h"
#include "../util/error.h"

typedef struct {
    const vr_warner *warn;       /* warnings; may be NULL */
    int progress;                /* draw a progress line on stderr */
} vr_import_opts;

typedef enum {
    VR_IMPORTED,
    VR_ALREADY_IMPORTED
} vr_import_status;

typedef struct {
    vr_import_status status;
    int64_t source_id;           /* the new source, or the earlier one */
    const char *format;          /* reader name (static) */
    uint64_t events;
    int truncated;
} vr_import_result;

int vr_import_file(vr_db *db, const char *path, const vr_import_opts *opts,
                   vr_import_result *res, vr_error *err);

#endif
