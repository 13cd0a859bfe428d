#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/buf.h"

int vr_walk_is_folder(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int skip_dots(const struct dirent *d)
{
    return strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0;
}

static int walk_folder(const char *path, int depth, vr_walk_fn fn, void *ud, vr_error *err);

/* Why an entry is not an input, or NULL when it is a file to read. */
static const char *entry_kind(const char *path, int depth, int *is_folder)
{
    struct stat lst, st;
    *is_folder = 0;
    if (lstat(path, &lst) != 0)
        return "cannot be examined";
    if (stat(path, &st) != 0)
        return "a broken symbolic link";
    if (S_ISDIR(st.st_mode)) {
        if (S_ISLNK(lst.st_mode))
            return "a symbolic link to a folder (not followed)";
        if (depth >= VR_WALK_MAX_DEPTH)
            return "a folder nested too deep";
        *is_folder = 1;
        return NULL;
    }
    return S_ISREG(st.st_mode) ? NULL : "not a regular file";
}

static int visit(const char *path, int depth, vr_walk_fn fn, void *ud, vr_error *err)
{
    int is_folder;
    const char *why = entry_kind(path, depth, &is_folder);
    if (is_folder)
        return walk_folder(path, depth + 1, fn, ud, err);
    return fn(ud, path, why);
}

/* The top folder unreadable fails the walk; one inside it is skipped. */
static int walk_folder(const char *path, int depth, vr_walk_fn fn, void *ud, vr_error *err)
{
    struct dirent **names;
    int n = scandir(path, &names, skip_dots, alphasort);
    if (n < 0 && depth > 0)
        return fn(ud, path, "a folder that cannot be read");
    if (n < 0)
        return vr_fail_code(err, VR_ERR_IO, "%s: cannot read the folder: %s", path,
                            strerror(errno));
    int rc = 0;
    size_t base = strlen(path);
    int slash = base > 0 && path[base - 1] == '/';
    vr_buf child = VR_BUF_INIT;
    for (int i = 0; i < n; i++) {
        if (rc == 0) {
            vr_buf_clear(&child);
            vr_buf_printf(&child, "%s%s%s", path, slash ? "" : "/", names[i]->d_name);
            rc = visit(child.data, depth, fn, ud, err);
        }
        free(names[i]);
    }
    free(names);
    vr_buf_free(&child);
    return rc;
}

int vr_walk(const char *path, vr_walk_fn fn, void *ud, vr_error *err)
{
    return walk_folder(path, 0, fn, ud, err);
}
