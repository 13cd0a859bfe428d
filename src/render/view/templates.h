/*-*** templates.h: template sources, embedded or from --templates DIR ***/
/*
 * A template named "report.md" is the file templates/report.md.mustache:
 * first DIR/report.md.mustache when a directory was given, else the copy
 * compiled into the binary. Partials ({{> name}}) resolve the same way.
 *
 * Ownership: vr_templates is caller-owned (init/free); returned sources
 * stay valid until vr_templates_free().
 */
#ifndef VR_TEMPLATES_H
#define VR_TEMPLATES_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "util/error.h"
#include "render/view/mustache.h"

typedef struct vr_loaded_template vr_loaded_template;

typedef struct {
    const char *dir; /* may be NULL */
    vr_loaded_template *loaded;
} vr_templates;

void vr_templates_init(vr_templates *t, const char *dir);
void vr_templates_free(vr_templates *t);
const char *vr_templates_get(vr_templates *t, const char *name, size_t *len);

/* Shape of vr_mustache_partial_fn, with userdata = vr_templates. */
const char *vr_templates_partial(void *templates, const char *name, size_t *len);

/* Renders template `name` over `data`, its partials resolved as above and
 * every value passed through `escape`. Returns a malloc'ed string (*len
 * set), or NULL with `err` naming the template (and the line, for a
 * syntax error). */
char *vr_templates_render(vr_templates *t, const char *name, const cJSON *data,
                          vr_mustache_escape_fn escape, size_t *len, vr_error *err);

#endif
