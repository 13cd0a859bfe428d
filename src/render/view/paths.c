/* The job's files named from the folder they share (paths.h). */
#include "render/view/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/view/commands.h"
#include "render/view/stacks.h"
#include "util/alloc.h"

/* A stripped folder saves at least this much on each frame: less (a
 * "/" or "/opt/") is not worth a sentence saying what was stripped. */
#define ROOT_MIN_LEN 8

/* Folders whose files are not the job's own: installed packages, the
 * standard library (its Windows and POSIX homes), generated code. */
static const char *const not_own[] = {
    "site-packages", "dist-packages", "torchinductor", "/lib/python", "\\Lib\\", "/usr/", NULL,
};

static int is_sep(char c)
{
    return c == '/' || c == '\\';
}

size_t vr_paths_common_folder(const char *a, size_t a_len, const char *b, size_t b_len)
{
    size_t i = 0, folder = 0;
    while (i < a_len && i < b_len && a[i] == b[i]) {
        if (is_sep(a[i]))
            folder = i + 1;
        i++;
    }
    return folder;
}

/* The file part of a frame ("path:line in function ..."): up to the last
 * ':' followed by a digit; 0 when it names no folder. */
static size_t file_len(const char *f)
{
    size_t n = 0, folder = 0;
    for (size_t i = 0; f[i]; i++) {
        if (f[i] == ':' && f[i + 1] >= '0' && f[i + 1] <= '9')
            n = i;
        if (n == 0 && is_sep(f[i]))
            folder = i + 1;
    }
    return n && folder ? folder : 0;
}

/* "/home/...", "D:\\...", "\\\\server\\...": a relative path (a trace's
 * "transformers/models/bert/modeling_bert.py") is named as the profiler
 * already shortened it. */
static int is_absolute(const char *f)
{
    return f[0] == '/' || (f[0] == '\\' && f[1] == '\\') ||
           (((f[0] >= 'A' && f[0] <= 'Z') || (f[0] >= 'a' && f[0] <= 'z')) && f[1] == ':' &&
            is_sep(f[2]));
}

static int is_own(const char *f)
{
    if (!is_absolute(f) || vr_stack_frame_filtered(f))
        return 0;
    for (int i = 0; not_own[i]; i++)
        if (strstr(f, not_own[i]))
            return 0;
    return 1;
}

/* The keys of the view that hold frames: a string, or (stack) an array
 * of them. */
static const char *const frame_keys[] = {"frame", "where", "file", "stack", NULL};

static int is_frame_key(const char *k)
{
    for (int i = 0; frame_keys[i]; i++)
        if (k && strcmp(k, frame_keys[i]) == 0)
            return 1;
    return 0;
}

typedef struct {
    const char *root; /* the first own folder seen, then the common part */
    size_t len;
    int seen;
} common;

static void take(common *c, const char *f)
{
    size_t n = file_len(f);
    if (!n || !is_own(f))
        return;
    if (!c->seen) {
        c->root = f;
        c->len = n;
        c->seen = 1;
        return;
    }
    c->len = vr_paths_common_folder(c->root, c->len, f, n);
}

/* Calls fn on every frame string under node's frame keys. */
static void each_frame(cJSON *node, int in_frames, void (*fn)(cJSON *, void *), void *ctx)
{
    cJSON *el;
    if (cJSON_IsString(node)) {
        if (in_frames)
            fn(node, ctx);
        return;
    }
    cJSON_ArrayForEach(el, node)
    {
        int frames = cJSON_IsArray(node) ? in_frames : is_frame_key(el->string);
        each_frame(el, frames, fn, ctx);
    }
}

static void take_fn(cJSON *s, void *ctx)
{
    take(ctx, s->valuestring);
}

typedef struct {
    const char *root;
    size_t len;
} strip;

static void strip_fn(cJSON *s, void *ctx)
{
    const strip *st = ctx;
    if (strncmp(s->valuestring, st->root, st->len) != 0)
        return;
    char *rest = vr_xstrdup(s->valuestring + st->len);
    cJSON_SetValuestring(s, rest);
    free(rest);
}

char *vr_paths_device_root(const cJSON *dev)
{
    common c = {NULL, 0, 0};
    /* each_frame only reads with take_fn */
    each_frame((cJSON *)dev, 0, take_fn, &c);
    return c.seen && c.len >= ROOT_MIN_LEN ? vr_xstrndup(c.root, c.len) : NULL;
}

static void add_root(cJSON *obj, const char *prefix, const char *root)
{
    char key[64];
    snprintf(key, sizeof key, "%spath_root", prefix);
    cJSON_AddStringToObject(obj, key, root);
    char *code = vr_code_span(root);
    snprintf(key, sizeof key, "%spath_root_code", prefix);
    cJSON_AddStringToObject(obj, key, code);
    free(code);
}

/* Each device's frames lose their own folder; when every device that has
 * one has the same, the report says it once ("path_root"), else each
 * device says its own ("device_path_root": a name of its own, as
 * Mustache would find the report's from inside a device). */
void vr_view_paths(cJSON *view)
{
    cJSON *devices = cJSON_GetObjectItemCaseSensitive(view, "devices"), *dev;
    int n = cJSON_GetArraySize(devices), same = 1, any = 0;
    char **roots = vr_xcalloc(n ? (size_t)n : 1, sizeof *roots);
    int i = 0;
    cJSON_ArrayForEach(dev, devices)
    {
        roots[i] = vr_paths_device_root(dev);
        if (roots[i]) {
            strip st = {roots[i], strlen(roots[i])};
            each_frame(dev, 0, strip_fn, &st);
            if (any && strcmp(roots[i], roots[any - 1]) != 0)
                same = 0;
            if (!any || same)
                any = i + 1;
        }
        i++;
    }
    i = 0;
    cJSON_ArrayForEach(dev, devices)
    {
        if (roots[i] && !same)
            add_root(dev, "device_", roots[i]);
        i++;
    }
    if (any && same)
        add_root(view, "", roots[any - 1]);
    for (i = 0; i < n; i++)
        free(roots[i]);
    free(roots);
}
