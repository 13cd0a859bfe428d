/*
 * gen_log.c - writes a synthetic training-job log for the job-log benchmark.
 *
 *   gen_log [--size-mb N] [--ooms K] [--seed S] [--every L] [--vary] [--rate R] > train.log
 *
 * Python-logging lines (a stamp, a level, a step's loss, throughput and,
 * one line in 50, the memory PyTorch has allocated: the lines a real log
 * is made of, which match none of the scanner's markers but some of its
 * needles), with K out-of-memory errors (each a traceback of user and
 * torch frames ending in the current wording, printed by two ranks)
 * spread evenly through at least N MiB. --every L: instead, an error (of
 * each rank) after every L lines, until all K are written (a job that
 * fails the same way step after step: the log's size follows K).
 * --vary: the j-th error of a rank asks for 22 + j % 7 MiB with 11 + j % 5
 * MiB free (one shape per rank, whose figures range), instead of 22 MiB
 * with 11.06 MiB free each time. --rate R: R steps a second (default 4;
 * 1000 with --every 1 puts 2,000 errors in each second: two such logs
 * of one job are thousands of twin candidates for each error). Prints
 * to stderr the ground truth:
 *   gen: bytes=<written> lines=<lines> ooms=<errors written> requested=<bytes of the first>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long rng_state = 88172645463325252ULL;

static unsigned long long rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static const char *const traceback[] = {
    "[rank%d]: Traceback (most recent call last):",
    "[rank%d]:   File \"/home/me/train.py\", line 120, in <module>",
    "[rank%d]:     main()",
    "[rank%d]:   File \"/home/me/train.py\", line 88, in train_step",
    "[rank%d]:     loss = model(batch).sum()",
    "[rank%d]:   File \"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py\", "
    "line 1518, in _wrapped_call_impl",
    "[rank%d]:     return self._call_impl(*args, **kwargs)",
    "[rank%d]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %d.00 MiB. GPU 0 "
    "has a total capacity of 23.65 GiB of which %s MiB is free. Including non-PyTorch "
    "memory, this process has 23.60 GiB memory in use. Of the allocated memory 22.90 GiB is "
    "allocated by PyTorch, and 194.87 MiB is reserved by PyTorch but unallocated. If reserved "
    "but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
    "to avoid fragmentation.  See documentation for Memory Management  "
    "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
};

#define NTRACE (sizeof traceback / sizeof *traceback)

/* One rank's traceback, the j-th error of the log. */
static unsigned long long put_traceback(int rank, long j, int vary)
{
    unsigned long long bytes = 0;
    char free_mb[16];
    snprintf(free_mb, sizeof free_mb, vary ? "%ld.00" : "11.06", 11 + j % 5);
    for (size_t k = 0; k < NTRACE; k++) {
        if (k + 1 < NTRACE)
            bytes += (unsigned long long)printf(traceback[k], rank);
        else
            bytes += (unsigned long long)printf(traceback[k], rank, vary ? (int)(22 + j % 7) : 22,
                                                free_mb);
        bytes += (unsigned long long)printf("\n");
    }
    return bytes;
}

int main(int argc, char **argv)
{
    double size_mb = 1024;
    long ooms = 5, every_lines = 0, rate = 4;
    int vary = 0;
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--vary")) {
            vary = 1;
            i--;
        } else if (i + 1 >= argc) {
            fprintf(stderr, "gen_log: %s wants a value\n", argv[i]);
            return 2;
        } else if (!strcmp(argv[i], "--every"))
            every_lines = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--rate"))
            rate = atol(argv[i + 1]) > 0 ? atol(argv[i + 1]) : 4;
        else if (!strcmp(argv[i], "--size-mb"))
            size_mb = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--ooms"))
            ooms = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            rng_state += strtoull(argv[i + 1], NULL, 10) * 2654435761ULL;
        else {
            fprintf(stderr, "gen_log: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    unsigned long long target = (unsigned long long)(size_mb * 1048576.0), bytes = 0, lines = 0;
    if (every_lines > 0)
        target = ~0ULL; /* the errors, not the size, end the log */
    unsigned long long every = ooms > 0 ? target / (unsigned long long)ooms : 0, next = every / 2;
    long written = 0;
    static char buf[1 << 16];
    setvbuf(stdout, buf, _IOFBF, sizeof buf);
    for (unsigned long long step = 0; bytes < target && !(every_lines > 0 && written >= ooms);
         step++) {
        unsigned long long t = step / (unsigned long long)rate;
        /* the default's milliseconds are the step's last digits, as ever */
        unsigned long long ms =
            rate == 4 ? step % 1000
                      : step % (unsigned long long)rate * 1000 / (unsigned long long)rate;
        int n;
        if (step % 50 == 49)
            n = printf("2024-03-12 %02llu:%02llu:%02llu,%03llu - INFO - rank 0 step %llu: memory "
                       "allocated %llu.%02llu GiB, max reserved %llu.%02llu GiB\n",
                       (t / 3600) % 24, (t / 60) % 60, t % 60, ms, step, 10 + rng() % 10,
                       rng() % 100, 20 + rng() % 3, rng() % 100);
        else
            n = printf("2024-03-12 %02llu:%02llu:%02llu,%03llu - INFO - rank 0 step %llu loss "
                       "%llu.%04llu lr 3.0e-04 tokens/s %llu grad_norm 0.%03llu\n",
                       (t / 3600) % 24, (t / 60) % 60, t % 60, ms, step, 1 + rng() % 3,
                       rng() % 10000, 40000 + rng() % 20000, rng() % 1000);
        bytes += (unsigned long long)n;
        lines++;
        int due = every_lines > 0
                      ? (long)(step % (unsigned long long)every_lines) == every_lines - 1
                      : every && bytes >= next;
        if (due && written < ooms) {
            for (int rank = 0; rank < 2; rank++) {
                bytes += put_traceback(rank, written / 2, vary);
                lines += NTRACE;
            }
            written += 2;
            next += every;
        }
    }
    fflush(stdout);
    fprintf(stderr, "gen: bytes=%llu lines=%llu ooms=%ld requested=%d\n", bytes, lines, written,
            22 * 1048576);
    return 0;
}
