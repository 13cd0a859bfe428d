#include "render/view/templates.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resources/resources.h"
#include "util/buf.h"

struct vr_loaded_template {
    char *name;
    char *data;
    size_t len;
    vr_loaded_template *next;
};

void vr_templates_init(vr_templates *t, const char *dir)
{
    t->dir = dir;
    t->loaded = NULL;
}

void vr_templates_free(vr_templates *t)
{
    while (t->loaded) {
        vr_loaded_template *next = t->loaded->next;
        free(t->loaded->name);
        free(t->loaded->data);
        free(t->loaded);
        t->loaded = next;
    }
}

static int safe_name(const char *name)
{
    return name[0] && !strchr(name, '/') && !strchr(name, '\\') && strcmp(name, "..") != 0;
}

static const char *from_dir(vr_templates *t, const char *name, size_t *len)
{
    for (vr_loaded_template *l = t->loaded; l; l = l->next)
        if (strcmp(l->name, name) == 0)
            return *len = l->len, l->data;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.mustache", t->dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    vr_buf b = VR_BUF_INIT;
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        vr_buf_append(&b, chunk, n);
    fclose(f);
    vr_loaded_template *l = vr_xmalloc(sizeof *l);
    l->name = vr_xstrdup(name);
    l->len = b.len;
    l->data = vr_buf_detach(&b);
    l->next = t->loaded;
    t->loaded = l;
    *len = l->len;
    return l->data;
}

const char *vr_templates_get(vr_templates *t, const char *name, size_t *len)
{
    size_t dummy;
    if (!len)
        len = &dummy;
    if (!safe_name(name))
        return NULL;
    if (t->dir) {
        const char *d = from_dir(t, name, len);
        if (d)
            return d;
    }
    char res[256];
    snprintf(res, sizeof res, "templates/%s.mustache", name);
    return vr_resource_get(res, len);
}

const char *vr_templates_partial(void *templates, const char *name, size_t *len)
{
    return vr_templates_get(templates, name, len);
}

char *vr_templates_render(vr_templates *t, const char *name, const cJSON *data,
                          vr_mustache_escape_fn escape, size_t *len, vr_error *err)
{
    size_t tlen;
    const char *src = vr_templates_get(t, name, &tlen);
    if (!src) {
        vr_fail(err, "template %s.mustache not found", name);
        return NULL;
    }
    vr_mustache_opts o = {escape, vr_templates_partial, t};
    char msg[256] = "";
    char *out = vr_mustache_render(src, tlen, data, &o, len, msg, sizeof msg);
    if (!out)
        vr_fail(err, "template %s.mustache: %s", name, msg);
    return out;
}
