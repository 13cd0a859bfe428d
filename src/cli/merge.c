/* `vramreport merge DB... --db JOB.db`: per-rank databases (each made
 * by `import`, anywhere) into one job database that `report --db` reads
 * (docs/scale.md). Each rank database is checked and its analysis
 * finished first (as `report --db` does), before anything is written;
 * then each is copied in (db/merge.h) into a new file beside JOB.db,
 * renamed to JOB.db only when every rank is in: a failure leaves no
 * JOB.db, and an existing one is never touched. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/stages.h"
#include "db/db.h"
#include "db/merge.h"

static const char merge_usage[] =
    "Usage: vramreport merge DB... --db JOB.db [-q]\n"
    "\n"
    "Builds one job database from per-rank databases, each made by\n"
    "'vramreport import rankN.* --db rankN.db' (a Slurm job array, a\n"
    "Kubernetes indexed Job, GNU parallel: docs/scale.md). Of each rank it\n"
    "keeps its sources, devices and whole analysis, and of its memory events\n"
    "only what a report reads (the peaks, what was live at them, a few\n"
    "hundred points of the timeline), so the job grows with ranks, not bytes.\n"
    "'vramreport report --db JOB.db' then gives one report of the job, each\n"
    "rank's figures its own report's.\n"
    "\n"
    "Options:\n"
    "      --db JOB.db         the job database to make (it must not exist)\n"
    "  -q, --quiet             no notices\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: 0; 1 when a database cannot be merged (nothing is written);\n"
    "2 on a usage error.\n";

typedef struct {
    const char *db_path;
    int quiet;
} merge_opts;

static int parse(int argc, char **argv, merge_opts *m)
{
    static const struct option longs[] = {{"db", required_argument, NULL, 'd'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "qh", longs, NULL)) != -1) {
        if (c == 'd')
            m->db_path = optarg;
        else if (c == 'q')
            m->quiet = 1;
        else if (c == 'h') {
            fputs(merge_usage, stdout);
            exit(0);
        } else
            return vr_cli_usage_error("merge: unknown option '%s'", argv[optind - 1]);
    }
    if (!m->db_path)
        return vr_cli_usage_error("%s", "merge needs --db JOB.db (the job database to make)");
    if (optind >= argc)
        return vr_cli_usage_error("%s", "merge needs the rank databases (DB...)");
    return 0;
}

/* Each rank database readable, ours, of this schema (an older one is
 * upgraded), holding a source, its analysis current: before the job is
 * made. */
static int check_ranks(char **paths, int n, const merge_opts *m)
{
    vr_cli_opts o = {0};
    o.quiet = m->quiet;
    for (int i = 0; i < n; i++) {
        if (strcmp(paths[i], m->db_path) == 0) {
            fprintf(stderr, "vramreport: %s: is the job database --db names; give another\n",
                    paths[i]);
            return VR_EXIT_DATA;
        }
        vr_error err = VR_ERROR_INIT;
        vr_db_open_opts dbo = {1, vr_cli_db_wait_ms(), NULL};
        vr_db *db = vr_db_open_with(paths[i], &dbo, &err);
        int rc = db ? vr_cli_finish_analysis(db, &o, &err) : -1;
        if (db)
            vr_db_close(db);
        if (rc < 0) {
            fprintf(stderr, "vramreport: %s\n", err.msg);
            return VR_EXIT_DATA;
        }
    }
    return 0;
}

static void remove_db(const char *path)
{
    static const char *const tails[] = {"", "-journal", "-wal", "-shm"};
    char name[4096];
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        snprintf(name, sizeof name, "%s%s", path, tails[i]);
        unlink(name);
    }
}

/* Every rank into the new file at `tmp`. */
static int merge_into(const char *tmp, char **paths, int n, const merge_opts *m,
                      vr_merge_counts *all, vr_error *err)
{
    vr_db *job = vr_db_open(tmp, err);
    if (!job)
        return -1;
    /* A new file, renamed into place only when whole (and synced then):
     * no rank's commit needs to wait for the disk. */
    sqlite3_exec(vr_db_handle(job),
                 "PRAGMA cache_size = -8192; PRAGMA synchronous = OFF; "
                 "PRAGMA journal_mode = MEMORY",
                 NULL, NULL, NULL);
    int progress = !m->quiet && isatty(STDERR_FILENO);
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        vr_merge_counts c;
        if (progress)
            fprintf(stderr, "\rvramreport: merging %d of %d...", i + 1, n);
        rc = vr_db_merge_rank(job, paths[i], &c, err);
        all->sources += c.sources, all->mem_events += c.mem_events,
            all->kept_events += c.kept_events;
    }
    if (progress)
        fputs("\r                                        \r", stderr);
    if (rc == 0 && (rc = vr_db_begin(job, err)) == 0) {
        rc = vr_analyze_rank_imbalance(job, err);
        rc = rc == 0 ? vr_db_commit(job, err) : (vr_db_rollback(job), -1);
    }
    vr_db_close(job);
    return rc;
}

/* The new file, on disk, named JOB.db, unless one appeared meanwhile. */
static int put_in_place(const char *tmp, const char *path)
{
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        fprintf(stderr, "vramreport: %s: cannot be written (%s)\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    if (link(tmp, path) == 0) {
        unlink(tmp);
        return 0;
    }
    fprintf(stderr, "vramreport: %s: cannot be made (%s)\n", path, strerror(errno));
    return -1;
}

int vr_cli_merge(int argc, char **argv, const vr_cli_command *all)
{
    (void)all;
    merge_opts m = {0};
    int rc = parse(argc, argv, &m);
    if (rc)
        return rc;
    struct stat st;
    if (stat(m.db_path, &st) == 0) {
        fprintf(stderr,
                "vramreport: %s: exists; merge makes a new job database (remove it or give "
                "another --db)\n",
                m.db_path);
        return VR_EXIT_DATA;
    }
    char **paths = argv + optind;
    int n = argc - optind;
    if ((rc = check_ranks(paths, n, &m)) != 0)
        return rc;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.merging-%ld", m.db_path, (long)getpid());
    vr_error err = VR_ERROR_INIT;
    vr_merge_counts total = {0};
    if (merge_into(tmp, paths, n, &m, &total, &err) < 0) {
        remove_db(tmp);
        fprintf(stderr, "vramreport: %s\n", err.msg);
        return VR_EXIT_DATA;
    }
    if (put_in_place(tmp, m.db_path) < 0) {
        remove_db(tmp);
        return VR_EXIT_DATA;
    }
    if (!m.quiet)
        fprintf(stderr,
                "vramreport: merged %d database(s), %lld source(s), into %s: %lld of %lld "
                "memory events kept\n",
                n, (long long)total.sources, m.db_path, (long long)total.kept_events,
                (long long)total.mem_events);
    return 0;
}
