#include "util/doomed.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#define DIR_MAX 4096

static char doomed_dir[DIR_MAX];
static size_t doomed_n;
static volatile sig_atomic_t doomed_armed;

void vr_doomed_set(const char *dir, size_t n)
{
    doomed_armed = 0;
    size_t len = strlen(dir);
    if (len + 32 >= DIR_MAX)
        return;
    memcpy(doomed_dir, dir, len + 1);
    doomed_n = n;
    doomed_armed = 1;
}

void vr_doomed_clear(void)
{
    doomed_armed = 0;
}

/* "DIR/N.db" plus `suffix` into out, by hand: snprintf is not
 * async-signal-safe. */
static void file_name(char *out, size_t i, const char *suffix)
{
    size_t len = strlen(doomed_dir), k = 0;
    memcpy(out, doomed_dir, len);
    out[len++] = '/';
    char digits[24];
    do {
        digits[k++] = (char)('0' + i % 10);
        i /= 10;
    } while (i > 0);
    while (k > 0)
        out[len++] = digits[--k];
    memcpy(out + len, ".db", 3);
    len += 3;
    size_t sl = strlen(suffix);
    memcpy(out + len, suffix, sl + 1);
}

void vr_doomed_sweep(void)
{
    if (!doomed_armed)
        return;
    char path[DIR_MAX + 64];
    for (size_t i = 0; i < doomed_n; i++) {
        file_name(path, i, "");
        unlink(path);
        file_name(path, i, "-journal");
        unlink(path);
    }
    rmdir(doomed_dir);
}
