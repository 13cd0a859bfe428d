/*-*** resources.h: SQL and templates compiled into the binary ***/
/*
 * Every file under schemas/ and templates/ is embedded at build time under
 * its path relative to the source tree ("schemas/schema.sql",
 * "templates/report.md.mustache"). The bytes are static and NUL-terminated.
 */
#ifndef VR_RESOURCES_H
#define VR_RESOURCES_H

#include <stddef.h>

typedef struct {
    const char *name;
    const char *data;
    size_t len;
} vr_resource;

extern const vr_resource vr_resources[]; /* ends with a {0} entry */

/* The schema's migrations, in order: vr_migrations[N - 1] names the
 * resource that takes a database from version N - 1 to N. Not written by
 * hand: vr_embed lists every file of schemas/migrations/ by its number
 * and refuses a gap or a number twice. */
extern const char *const vr_migrations[]; /* ends with NULL */
extern const int vr_migration_count;

/* Looks a resource up by name; NULL if unknown. */
const char *vr_resource_get(const char *name, size_t *len);

#endif
