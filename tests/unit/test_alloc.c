/* test_alloc.c: the one out-of-memory policy (util/alloc.h). Each failing
 * allocation runs in a child process: it must print exactly one line,
 * "vramreport: out of memory (N bytes)", and exit with status 1 (no
 * signal, no core dump). */
#include <stdint.h>

#include "harness.h"
#include "util/alloc.h"

/* A real malloc failure (a size no address space holds) must come back as
 * NULL under AddressSanitizer too, as it does from libc, so the policy's
 * own message is what the test sees. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

typedef struct {
    void (*fn)(void);
    const char *what;
    const char *line; /* stderr, all of it */
} dies;

static void calloc_overflow(void)
{
    vr_xcalloc(SIZE_MAX / 2 + 1, 2);
}

static void calloc_overflow_max(void)
{
    vr_xcalloc(SIZE_MAX, SIZE_MAX);
}

static void malloc_too_big(void)
{
    vr_xmalloc((size_t)1 << 62);
}

static void calloc_too_big(void)
{
    vr_xcalloc((size_t)1 << 60, 4);
}

static void realloc_too_big(void)
{
    void *p = vr_xmalloc(16);
    vr_xrealloc(p, (size_t)1 << 62);
}

static void grow_overflow(void)
{
    uint64_t *arr = NULL;
    size_t cap = 0;
    vr_xgrow(&arr, &cap, SIZE_MAX / 4, sizeof *arr, 16);
}

static void strndup_overflow(void)
{
    vr_xstrndup("", SIZE_MAX);
}

#define SIZE_MAX_LINE "vramreport: out of memory (18446744073709551615 bytes)\n"

static const dies cases[] = {
    {calloc_overflow, "vr_xcalloc(SIZE_MAX / 2 + 1, 2): count x size overflows", SIZE_MAX_LINE},
    {calloc_overflow_max, "vr_xcalloc(SIZE_MAX, SIZE_MAX) overflows", SIZE_MAX_LINE},
    {malloc_too_big, "vr_xmalloc(2^62): malloc fails",
     "vramreport: out of memory (4611686018427387904 bytes)\n"},
    {calloc_too_big, "vr_xcalloc(2^60, 4): calloc fails",
     "vramreport: out of memory (4611686018427387904 bytes)\n"},
    {realloc_too_big, "vr_xrealloc(p, 2^62): realloc fails",
     "vramreport: out of memory (4611686018427387904 bytes)\n"},
    {grow_overflow, "vr_xgrow to SIZE_MAX / 4 elements of 8 bytes overflows", SIZE_MAX_LINE},
    {strndup_overflow, "vr_xstrndup(s, SIZE_MAX): the terminator overflows", SIZE_MAX_LINE},
};

/* Drops AddressSanitizer's own lines ("==PID==WARNING: AddressSanitizer
 * failed to allocate ..."): what is left is what vramreport said. */
static void drop_sanitizer_lines(char *said)
{
    char *out = said;
    for (char *line = said; *line;) {
        char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) + 1 : strlen(line);
        if (strncmp(line, "==", 2) != 0) {
            memmove(out, line, n);
            out += n;
        }
        line += n;
    }
    *out = '\0';
}

/* Runs fn in a child with stderr into a pipe: its status and what it said. */
static int run_child(void (*fn)(void), char *said, size_t size)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], STDERR_FILENO);
        fn();
        _exit(42); /* it came back: the policy did not hold */
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t got;
    while (n + 1 < size && (got = read(fds[0], said + n, size - 1 - n)) > 0)
        n += (size_t)got;
    said[n] = '\0';
    drop_sanitizer_lines(said);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    return status;
}

static void out_of_memory_exits(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char said[512];
        int status = run_child(cases[i].fn, said, sizeof said);
        OK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s: exit status 1 (got %s %d)",
           cases[i].what, WIFSIGNALED(status) ? "signal" : "status",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        STR_EQ(said, cases[i].line, "%s: the one line", cases[i].what);
    }
}

static void what_fits_is_given(void)
{
    unsigned char *z = vr_xcalloc(1000, 3);
    int zero = 1;
    for (size_t i = 0; i < 3000; i++)
        zero &= z[i] == 0;
    OK(zero, "vr_xcalloc(1000, 3): 3000 bytes, all zero");
    free(z);
    void *none = vr_xcalloc(0, SIZE_MAX);
    OK(none != NULL, "vr_xcalloc(0, SIZE_MAX): nothing asked, not NULL, no overflow");
    free(none);
    none = vr_xcalloc(SIZE_MAX, 0);
    OK(none != NULL, "vr_xcalloc(SIZE_MAX, 0): the same");
    free(none);
    uint32_t *arr = NULL;
    size_t cap = 0;
    vr_xgrow(&arr, &cap, 100, sizeof *arr, 16);
    OK(arr != NULL && cap == 128, "vr_xgrow to 100 from 16: 128 (got %zu)", cap);
    free(arr);
    /* first 0 doubled 0 for ever: an empty array then starts at 1 */
    arr = NULL;
    cap = 0;
    vr_xgrow(&arr, &cap, 5, sizeof *arr, 0);
    OK(arr != NULL && cap == 8, "vr_xgrow to 5 from first 0: 8 (got %zu)", cap);
    free(arr);
    char *s = vr_xstrndup("abcdef", 3);
    STR_EQ(s, "abc", "vr_xstrndup takes n bytes");
    free(s);
}

int main(void)
{
    RUN(out_of_memory_exits);
    RUN(what_fits_is_given);
    return harness_summary();
}
