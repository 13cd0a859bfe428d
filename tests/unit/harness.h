/*-*** harness.h: a tiny TAP-like test harness (after cmark's api_test) ***/
/*
 * Each check prints "ok N - message" or "not ok N - message" and bumps a
 * global counter; harness_summary() prints "# P passed, F failed" and
 * returns the exit status (0 only when nothing failed).
 *
 *     OK(cond, "fmt", ...)       cond is true
 *     INT_EQ(a, b, "fmt", ...)   two integers (compared as long long)
 *     STR_EQ(a, b, "fmt", ...)   two C strings (NULL-safe)
 *
 * RUN(fn) runs one test function. By default it runs it in a child
 * process, so a crash or a sanitizer abort in one feature is reported as a
 * failure of that feature and the others still run; the child's counters
 * come back through a pipe. Set VR_TEST_NOFORK=1 to run everything in one
 * process (for a debugger).
 */
#ifndef VR_TEST_HARNESS_H
#define VR_TEST_HARNESS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int harness_passed, harness_failed;

__attribute__((format(printf, 4, 5))) static int harness_ok(int cond, const char *file, int line,
                                                            const char *fmt, ...)
{
    va_list ap;
    if (cond)
        harness_passed++;
    else
        harness_failed++;
    printf("%sok %d - ", cond ? "" : "not ", harness_passed + harness_failed);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    if (!cond)
        printf("#   at %s:%d\n", file, line);
    return cond;
}

#define OK(cond, ...) harness_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define INT_EQ(a, b, ...)                                                           \
    do {                                                                            \
        long long harness_a_ = (long long)(a), harness_b_ = (long long)(b);         \
        if (!harness_ok(harness_a_ == harness_b_, __FILE__, __LINE__, __VA_ARGS__)) \
            printf("#   got %lld, expected %lld\n", harness_a_, harness_b_);        \
    } while (0)

#define STR_EQ(a, b, ...)                                                                   \
    do {                                                                                    \
        const char *harness_a_ = (a), *harness_b_ = (b);                                    \
        int harness_eq_ = harness_a_ && harness_b_ ? strcmp(harness_a_, harness_b_) == 0    \
                                                   : harness_a_ == harness_b_;              \
        if (!harness_ok(harness_eq_, __FILE__, __LINE__, __VA_ARGS__))                      \
            printf("#   got \"%s\", expected \"%s\"\n", harness_a_ ? harness_a_ : "(null)", \
                   harness_b_ ? harness_b_ : "(null)");                                     \
    } while (0)

static void harness_run(void (*fn)(void), const char *name)
{
    printf("# %s\n", name);
    fflush(stdout);
    const char *nofork = getenv("VR_TEST_NOFORK");
    int fds[2];
    if ((nofork && *nofork && strcmp(nofork, "0") != 0) || pipe(fds) != 0) {
        fn();
        return;
    }
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        fn();
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        fn();
        fflush(stdout);
        int counts[2] = {harness_passed, harness_failed};
        if (write(fds[1], counts, sizeof counts) != (ssize_t)sizeof counts)
            _exit(99);
        close(fds[1]);
        exit(0); /* exit, not _exit: LeakSanitizer checks at exit */
    }
    close(fds[1]);
    int counts[2];
    ssize_t got = read(fds[0], counts, sizeof counts);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    if (got == (ssize_t)sizeof counts) {
        harness_passed = counts[0];
        harness_failed = counts[1];
    }
    if (got != (ssize_t)sizeof counts)
        harness_ok(0, __FILE__, __LINE__, "%s: ran to its end (it crashed: %s %d)", name,
                   WIFSIGNALED(status) ? "signal" : "exit status",
                   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        harness_ok(0, __FILE__, __LINE__,
                   "%s: exited cleanly (status %d: a leak or sanitizer report above)", name,
                   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

#define RUN(fn) harness_run(fn, #fn)

static int harness_summary(void)
{
    printf("1..%d\n", harness_passed + harness_failed);
    printf("# %d passed, %d failed\n", harness_passed, harness_failed);
    fflush(stdout);
    return harness_failed == 0 ? 0 : 1;
}

#endif
