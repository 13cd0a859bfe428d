/* The stages' first half, shared by the run, `import`, `report` and
 * `diff` (stages.h): inputs imported into a database and analysed, or a
 * kept database's analysis finished; what happened said on stderr. */
#include "cli/stages.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "db/merge.h"
#include "import/import.h"
#include "util/buf.h"
#include "util/timing.h"

/* --jobs by default: one file per two processors. A trace's import
 * already runs on two threads (its reader and SQLite's writer), and a
 * staged file's rows are written twice; on two processors four 50 MiB
 * ranks took 1.27 s at --jobs 1 and 1.40 s at --jobs 2
 * (docs/performance.md, "Several files at once"). */
static unsigned default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN) / 2;
    return n > 1 ? (unsigned)(n < 256 ? n : 256) : 1;
}

static void warn_line(void *ud, const char *line)
{
    (void)ud;
    fprintf(stderr, "vramreport: warning: %s\n", line);
}

/* The imports are committed though their analysis failed: say how to
 * finish it (the database knows it is not analysed). */
static void keep_imports_hint(vr_error *err, const char *db_path)
{
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err->msg);
    vr_fail(err, "%s (the imports are kept; 'vramreport report --db %s' finishes the analysis)",
            why, db_path);
}

/* What happened to each input, on stderr: failures always, the rest as
 * notices (not with --quiet). */
static void say_input(void *ud, const char *path, vr_input_outcome outcome, const char *detail)
{
    const vr_cli_opts *o = ud;
    if (outcome == VR_INPUT_FAILED)
        fprintf(stderr, "vramreport: %s\n", detail);
    else if (o->quiet)
        return;
    else if (outcome == VR_INPUT_SKIPPED)
        fprintf(stderr, "vramreport: %s: skipped: %s\n", path, detail);
    else if (outcome == VR_INPUT_ALREADY)
        fprintf(stderr,
                "vramreport: %s: already imported (same content as source %s); "
                "skipped\n",
                path, detail);
}

/* Nothing could be used: say why in one line, unless each failure said
 * it already (err->msg stays empty then). */
static int nothing_read(const vr_inputs_counts *t, vr_error *err)
{
    if (t->failed)
        return vr_fail(err, "%s", "");
    vr_buf expected = VR_BUF_INIT;
    vr_import_expected(&expected);
    vr_fail(err, "none of the %u input(s) is a format vramreport reads (expected %s)", t->skipped,
            expected.data);
    vr_buf_free(&expected);
    return -1;
}

/* Imports every input, then analyses what was imported. -1 when nothing
 * can be reported (or the database failed); *partial when some input
 * failed but others can be. */
int vr_cli_import_analyze(vr_db *db, char **paths, int n, const vr_cli_opts *o, int record_issues,
                          int *partial, vr_error *err)
{
    int merged;
    if (vr_db_is_merged(db, &merged, err) < 0)
        return -1;
    if (merged)
        return vr_fail(err,
                       "%s: is a job database made by merge (its memory events are thinned); "
                       "import into a rank's database and merge again",
                       vr_db_path(db));
    double t = vr_now();
    vr_warner warner = {warn_line, NULL};
    vr_import_opts io = {&warner,
                         o->progress,
                         record_issues,
                         o->tz_offset_ns,
                         o->tz ? o->tz : "UTC",
                         o->follow_links,
                         o->jobs ? o->jobs : default_jobs()};
    vr_inputs_counts counts;
    int rc = vr_import_inputs(db, paths, n, &io, say_input, (void *)o, &counts, err);
    vr_timing("import", t);
    if (rc < 0)
        return -1;
    if (counts.imported + counts.already == 0)
        return nothing_read(&counts, err);
    *partial = counts.failed > 0;
    t = vr_now();
    if (o->progress)
        fputs("vramreport: analysing...", stderr);
    vr_analyze_opts ao = {o->category_rules, o->capacity_bytes, o->capacity_said};
    rc = vr_analyze_with(db, &ao, err);
    if (o->progress)
        fputs("\r                        \r", stderr);
    if (rc < 0 && o->db_path)
        keep_imports_hint(err, o->db_path);
    vr_timing("analyze", t);
    return rc;
}

/* `report` on a database whose last analysis did not complete (killed,
 * disk full): finish it now rather than draw a report from stale tables. */
int vr_cli_finish_analysis(vr_db *db, const vr_cli_opts *o, vr_error *err)
{
    int current, merged;
    if (vr_db_is_merged(db, &merged, err) < 0)
        return -1;
    if (merged && (o->category_rules || o->capacity_bytes > 0))
        return vr_fail(err,
                       "%s: is a job database made by merge: its analysis is its ranks'; give "
                       "--category-rules or --capacity to each rank's report and merge again",
                       vr_db_path(db));
    if (merged)
        return 0; /* never analysed again over its thinned events */
    vr_analyze_opts ao = {o->category_rules, o->capacity_bytes, o->capacity_said};
    if (vr_analyze_is_current_with(db, &ao, &current, err) < 0)
        return -1;
    if (current)
        return 0;
    if (!o->quiet)
        fprintf(stderr,
                "vramreport: %s: the analysis is not current (interrupted, made "
                "with other category rules or --capacity, or the database is from an older "
                "vramreport); analysing now\n",
                vr_db_path(db));
    if (vr_analyze_with(db, &ao, err) == 0)
        return 0;
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err->msg);
    return vr_fail(err,
                   "%s: the analysis is incomplete and could not be finished (%s); "
                   "import the traces again into a new --db",
                   vr_db_path(db), why);
}
