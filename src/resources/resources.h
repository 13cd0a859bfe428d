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

/* Looks a resource up by name; NULL if unknown. */
const char *vr_resource_get(const char *name, size_t *len);

#endif
