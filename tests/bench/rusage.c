/*
 * rusage.c - run a command and report its wall time and peak RSS.
 *
 *   rusage CMD [ARGS...]
 *
 * Prints to stderr, after the command ends:
 *   wall_s=<seconds> maxrss_kb=<peak resident set of the child> exit=<status>
 *   cpu_s=<user + system seconds of the child>
 * (one line: a machine shared with others stretches wall_s, not cpu_s)
 * and exits with the child's exit status (128+N if it died of signal N,
 * 127 if it could not be executed).  ru_maxrss comes from
 * getrusage(RUSAGE_CHILDREN) and is in kilobytes on Linux.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs("usage: rusage CMD [ARGS...]\n", stderr);
        return 2;
    }
    fflush(NULL);
    double t0 = mono_now();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "rusage: fork: %s\n", strerror(errno));
        return 127;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        fprintf(stderr, "rusage: %s: %s\n", argv[1], strerror(errno));
        _exit(127);
    }
    int status = 0;
    pid_t w;
    do {
        w = waitpid(pid, &status, 0);
    } while (w < 0 && errno == EINTR);
    double t1 = mono_now();
    if (w < 0) {
        fprintf(stderr, "rusage: waitpid: %s\n", strerror(errno));
        return 127;
    }
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    getrusage(RUSAGE_CHILDREN, &ru);
    int code;
    if (WIFEXITED(status))
        code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        code = 128 + WTERMSIG(status);
    else
        code = 1;
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    fprintf(stderr, "wall_s=%.3f maxrss_kb=%ld exit=%d cpu_s=%.3f\n", t1 - t0, (long)ru.ru_maxrss,
            code, cpu);
    return code;
}
