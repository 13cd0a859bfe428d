#include "input/walk.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/buf.h"

int vr_walk_is_folder(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

typedef struct {
    dev_t dev;
    ino_t ino;
} folder_id;

typedef struct {
    unsigned flags;
    vr_walk_fn fn;
    void *ud;
    vr_error *err;
    char *root;    /* the top folder, resolved (realpath) */
    vr_buf walked; /* folder_id of every folder walked: links that loop end */
} walk_ctx;

static const char out_of_folder[] =
    "a symbolic link out of the folder (not followed; --follow-links follows it)";

static int skip_dots(const struct dirent *d)
{
    return strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0;
}

static int walk_folder(walk_ctx *w, const char *path, int depth);

/* 1 when the link `path` resolves into the top folder. A link that cannot
 * be resolved counts as out of it. */
static int resolves_inside(const walk_ctx *w, const char *path)
{
    char *real = realpath(path, NULL);
    if (!real)
        return 0;
    size_t n = strlen(w->root);
    int inside = strncmp(real, w->root, n) == 0 &&
                 (real[n] == '\0' || real[n] == '/' || (n > 0 && w->root[n - 1] == '/'));
    free(real);
    return inside;
}

/* Records the folder as walked; 0 when it was already. */
static int first_walk(walk_ctx *w, const struct stat *st)
{
    const folder_id *ids = (const folder_id *)w->walked.data;
    size_t n = w->walked.len / sizeof *ids;
    for (size_t i = 0; i < n; i++)
        if (ids[i].dev == st->st_dev && ids[i].ino == st->st_ino)
            return 0;
    folder_id id = {st->st_dev, st->st_ino};
    vr_buf_append(&w->walked, &id, sizeof id);
    return 1;
}

/* Why a symbolic link is not followed, or NULL when it is. */
static const char *link_kind(const walk_ctx *w, const char *path, const struct stat *st)
{
    int inside = resolves_inside(w, path);
    if (S_ISDIR(st->st_mode) && (inside || !(w->flags & VR_WALK_FOLLOW_LINKS)))
        return inside ? "a symbolic link to a folder (not followed)" : out_of_folder;
    if (!inside && !(w->flags & VR_WALK_FOLLOW_LINKS))
        return out_of_folder;
    return NULL;
}

/* Why an entry is not an input, or NULL when it is a file to read. */
static const char *entry_kind(walk_ctx *w, const char *path, int depth, int *is_folder)
{
    struct stat lst, st;
    *is_folder = 0;
    if (lstat(path, &lst) != 0)
        return "cannot be examined";
    if (stat(path, &st) != 0)
        return "a broken symbolic link";
    const char *why = S_ISLNK(lst.st_mode) ? link_kind(w, path, &st) : NULL;
    if (why)
        return why;
    if (S_ISDIR(st.st_mode)) {
        if (depth >= VR_WALK_MAX_DEPTH)
            return "a folder nested too deep";
        if (!first_walk(w, &st))
            return "a folder walked already (symbolic links lead to it twice)";
        *is_folder = 1;
        return NULL;
    }
    return S_ISREG(st.st_mode) ? NULL : "not a regular file";
}

static int visit(walk_ctx *w, const char *path, int depth)
{
    int is_folder;
    const char *why = entry_kind(w, path, depth, &is_folder);
    if (is_folder)
        return walk_folder(w, path, depth + 1);
    return w->fn(w->ud, path, why);
}

/* The top folder unreadable fails the walk; one inside it is skipped. */
static int walk_folder(walk_ctx *w, const char *path, int depth)
{
    struct dirent **names;
    int n = scandir(path, &names, skip_dots, alphasort);
    if (n < 0 && depth > 0)
        return w->fn(w->ud, path, "a folder that cannot be read");
    if (n < 0)
        return vr_fail_code(w->err, VR_ERR_IO, "%s: cannot read the folder: %s", path,
                            strerror(errno));
    int rc = 0;
    size_t base = strlen(path);
    int slash = base > 0 && path[base - 1] == '/';
    vr_buf child = VR_BUF_INIT;
    for (int i = 0; i < n; i++) {
        if (rc == 0) {
            vr_buf_clear(&child);
            vr_buf_printf(&child, "%s%s%s", path, slash ? "" : "/", names[i]->d_name);
            rc = visit(w, child.data, depth);
        }
        free(names[i]);
    }
    free(names);
    vr_buf_free(&child);
    return rc;
}

int vr_walk(const char *path, unsigned flags, vr_walk_fn fn, void *ud, vr_error *err)
{
    walk_ctx w = {flags, fn, ud, err, realpath(path, NULL), VR_BUF_INIT};
    struct stat st;
    if (!w.root || stat(path, &st) != 0) {
        free(w.root);
        return vr_fail_code(err, VR_ERR_IO, "%s: cannot read the folder: %s", path,
                            strerror(errno));
    }
    first_walk(&w, &st);
    int rc = walk_folder(&w, path, 0);
    free(w.root);
    vr_buf_free(&w.walked);
    return rc;
}
