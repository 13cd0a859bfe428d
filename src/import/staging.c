/* The pool of --jobs workers (staging.h): each takes the next file not
 * yet taken, at most `jobs` files ahead of the run's thread, and stages
 * it; the run's thread waits for each file in input order. */
#include "import/staging.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/doomed.h"
#include "util/progress.h"
#include "util/timing.h"

typedef struct {
    vr_staged staged;
    int done; /* the worker finished with it */
} stage_item;

struct vr_stage_pool {
    char *const *paths;
    size_t n;
    unsigned jobs;
    const vr_import_opts *opts;
    char dir[4096]; /* the staging folder, removed at the end */
    pthread_mutex_t lock;
    pthread_cond_t more; /* the run's thread moved on, or the pool stops */
    pthread_cond_t done; /* a worker finished a file */
    size_t next;         /* the next file a worker takes */
    size_t taken;        /* files the run's thread has taken */
    int stop;
    stage_item *items;
    pthread_t *threads;
    unsigned started;
    double cpu;    /* the workers' CPU seconds, for VRAMREPORT_TIMING */
    size_t staged; /* files the workers staged */
};

static void stage_path(const vr_stage_pool *p, size_t i, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%zu.db", p->dir, i);
}

/* Removes file i's staging database, and what SQLite may leave beside it. */
static void unstage(const vr_stage_pool *p, size_t i)
{
    char path[4200], side[4300];
    stage_path(p, i, path, sizeof path);
    unlink(path);
    snprintf(side, sizeof side, "%s-journal", path);
    unlink(side);
}

/* The next file for a worker, or n when the pool stops. Under the lock. */
static size_t next_file(vr_stage_pool *p)
{
    for (;;) {
        while (p->next < p->n && !p->paths[p->next]) {
            p->items[p->next].done = 1;
            p->next++;
        }
        if (p->stop || p->next >= p->n)
            return p->n;
        if (p->next < p->taken + p->jobs)
            return p->next++;
        pthread_cond_wait(&p->more, &p->lock);
    }
}

static void *worker(void *ud)
{
    vr_stage_pool *p = ud;
    pthread_mutex_lock(&p->lock);
    size_t i;
    while ((i = next_file(p)) < p->n) {
        pthread_mutex_unlock(&p->lock);
        char path[4200];
        stage_path(p, i, path, sizeof path);
        vr_import_stage_file(p->paths[i], path, p->opts, &p->items[i].staged);
        pthread_mutex_lock(&p->lock);
        p->items[i].done = 1;
        p->staged += p->items[i].staged.staged;
        pthread_cond_broadcast(&p->done);
    }
    p->cpu += vr_thread_cpu();
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

vr_stage_pool *vr_stage_pool_start(char *const *paths, size_t n, const vr_import_opts *opts)
{
    vr_stage_pool *p = vr_xcalloc(1, sizeof *p);
    const char *tmp = getenv("TMPDIR");
    snprintf(p->dir, sizeof p->dir, "%s/vramreport-jobs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(p->dir)) {
        free(p);
        return NULL;
    }
    /* removed by the signal handler too (util/doomed.h) */
    vr_doomed_set(p->dir, n);
    p->paths = paths;
    p->n = n;
    p->jobs = opts->jobs;
    p->opts = opts;
    p->items = vr_xcalloc(n ? n : 1, sizeof *p->items);
    p->threads = vr_xcalloc(p->jobs, sizeof *p->threads);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->more, NULL);
    pthread_cond_init(&p->done, NULL);
    for (unsigned j = 0; j < p->jobs; j++)
        if (pthread_create(&p->threads[j], NULL, worker, p) == 0)
            p->started++;
    if (p->started == 0) {
        vr_stage_pool_end(p);
        return NULL;
    }
    return p;
}

int vr_stage_pool_import(vr_stage_pool *p, size_t i, vr_db *db, vr_import_result *res,
                         vr_error *err)
{
    pthread_mutex_lock(&p->lock);
    /* the one progress line: the run's thread draws it, never a worker */
    vr_progress waiting;
    vr_progress_start(&waiting, p->opts->progress && !p->items[i].done, p->paths[i], -1);
    char what[64];
    snprintf(what, sizeof what, "reading, %u file(s) at once", p->started);
    vr_progress_note(&waiting, what);
    while (!p->items[i].done)
        pthread_cond_wait(&p->done, &p->lock);
    vr_progress_end(&waiting);
    p->taken = i + 1;
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->lock);
    vr_staged *s = &p->items[i].staged;
    int rc;
    if (s->staged) {
        char path[4200];
        stage_path(p, i, path, sizeof path);
        rc = vr_import_staged(db, p->paths[i], path, s, p->opts, res, err);
    } else {
        rc = vr_import_file(db, p->paths[i], p->opts, res, err);
    }
    unstage(p, i);
    vr_buf_free(&s->warnings);
    return rc;
}

void vr_stage_pool_end(vr_stage_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->lock);
    for (unsigned j = 0; j < p->started; j++)
        pthread_join(p->threads[j], NULL);
    if (p->staged) {
        char what[96];
        snprintf(what, sizeof what, "import: %zu file(s) staged on %u workers, their cpu",
                 p->staged, p->started);
        vr_timing_figure(what, p->cpu);
    }
    for (size_t i = 0; i < p->n; i++) {
        if (p->paths[i])
            unstage(p, i);
        vr_buf_free(&p->items[i].staged.warnings);
    }
    rmdir(p->dir);
    vr_doomed_clear();
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->more);
    pthread_cond_destroy(&p->done);
    free(p->items);
    free(p->threads);
    free(p);
}
