/* The run (INPUT... -o REPORT), `import` and `report`: the library's
 * stages in order (import -> analyze, stages.h; then render) on one
 * database, what happened said on stderr, the report written through
 * output.h. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/stages.h"
#include "db/db.h"
#include "render/report.h"
#include "render/results/verdict.h"
#include "util/buf.h"
#include "util/timing.h"

static void notice_line(void *ud, const char *line)
{
    (void)ud;
    fprintf(stderr, "vramreport: %s\n", line);
}

/* On a terminal: where the report went, its size and the
 * verdict, in one line. */
static void say_written(const vr_cli_opts *o, const vr_report_outcome *r, size_t size)
{
    if (!o->progress)
        return;
    const char *path = !o->output || strcmp(o->output, "-") == 0 ? "standard output" : o->output;
    char line[1024];
    vr_verdict_line(r->label, r->cause, path, (int64_t)size, line, sizeof line);
    fprintf(stderr, "vramreport: %s\n", line);
}

static int render_to(vr_db *db, const vr_cli_opts *o, vr_error *err)
{
    vr_format fmt;
    vr_cli_format(o, &fmt);
    vr_report_outcome outcome;
    vr_cli_output dest = VR_CLI_OUTPUT_INIT(o->output);
    vr_report_opts ro = {fmt, o->templates, o->summary, &outcome, vr_cli_output_flush, &dest};
    vr_buf out = VR_BUF_INIT;
    double t = vr_now();
    int rc = vr_report_render(db, &ro, &out, err);
    vr_timing("render", t);
    if (rc == 0)
        rc = vr_cli_output_write(&dest, &out, err);
    rc = vr_cli_output_close(&dest, rc, err);
    if (rc == 0)
        say_written(o, &outcome, dest.written);
    vr_buf_free(&out);
    return rc;
}

/* With --fail-on: 1 when a finding of those kinds exists. */
static int gate_findings(vr_db *db, const vr_cli_opts *o, int *hit, vr_error *err)
{
    int64_t n = 0;
    *hit = 0;
    if (!o->fail_on)
        return 0;
    if (vr_analyze_count_findings(db, o->fail_on, &n, err) < 0)
        return -1;
    *hit = n > 0;
    return 0;
}

/* What each subcommand takes, beyond its options. */
static int check_inputs(const vr_cli_opts *o, int sub_import, int sub_report, int nfiles,
                        char **files)
{
    if (sub_report && nfiles > 0)
        return vr_cli_usage_error("report takes no input files (got '%s'); use import first",
                                  files[0]);
    if (sub_import && o->summary)
        return vr_cli_usage_error("%s",
                                  "--summary shapes a report: give it to report or to a run");
    if (sub_import && o->fail_on)
        return vr_cli_usage_error("%s",
                                  "--fail-on judges a report: give it to report or to a run");
    if (sub_report && o->tz)
        return vr_cli_usage_error("%s", "--tz places the stamps of files as they are imported: "
                                        "give it to import or to a run (report reads times "
                                        "already placed)");
    if ((sub_import || sub_report) && !o->db_path)
        return vr_cli_usage_error("%s needs --db FILE", sub_import ? "import" : "report");
    if (!sub_report && nfiles == 0)
        return vr_cli_usage_error("%s", "no input files (see the examples in --help)");
    return 0;
}

/* The stages on the database: import and analyse (or finish an
 * analysis), render, judge. */
static int run_stages(const vr_cli_opts *o, int sub_import, int sub_report, char **files,
                      int nfiles, int64_t wait_ms)
{
    int rc;
    vr_cli_watch_signals();
    vr_error err = VR_ERROR_INIT;
    /* The note that another process holds the database: on a terminal,
     * as the other notices. */
    vr_warner waiting = {notice_line, NULL};
    vr_db_open_opts dbo = {sub_report, wait_ms, o->progress ? &waiting : NULL};
    vr_db *db = vr_db_open_with(o->db_path, &dbo, &err);
    if (!db) {
        fprintf(stderr, "vramreport: %s\n", err.msg);
        return VR_EXIT_DATA;
    }
    /* Again, now that a new --db exists: `--db x.db -o x.db`. A --db this
     * run created is removed again when nothing was imported into it. */
    if (!sub_import && (rc = vr_cli_check_output_target(o, files, nfiles)) != 0) {
        vr_db_close_unless_empty(db);
        return rc;
    }
    int partial = 0;
    int failed = sub_report ? vr_cli_finish_analysis(db, o, &err) < 0
                            : vr_cli_import_analyze(db, files, nfiles, o, !sub_import, &partial, &err) < 0;
    if (!failed && !sub_import)
        failed = render_to(db, o, &err) < 0;
    int gated = 0;
    if (!failed && !sub_import)
        failed = gate_findings(db, o, &gated, &err) < 0;
    vr_db_close_unless_empty(db);
    if (failed) {
        if (err.msg[0])
            fprintf(stderr, "vramreport: %s\n", err.msg);
        return VR_EXIT_DATA;
    }
    return partial || gated ? VR_EXIT_PARTIAL : 0;
}

static int run_with(int argc, char **argv, const vr_cli_command *all, int sub_import,
                    int sub_report)
{
    vr_cli_opts o = {0};
    int rc = vr_cli_parse(argc, argv, all, &o);
    if (rc)
        return rc;
    o.progress = !o.quiet && isatty(STDERR_FILENO);
    int nfiles = argc - optind;
    char **files = argv + optind;
    if ((rc = check_inputs(&o, sub_import, sub_report, nfiles, files)) != 0 ||
        (rc = vr_cli_check_up_front(&o, sub_import, sub_report, files, nfiles)) != 0)
        return rc;
    int64_t wait_ms = vr_cli_db_wait_ms();
    if (wait_ms < 0)
        return vr_cli_usage_error("VRAMREPORT_DB_TIMEOUT '%s': give whole seconds (0 or more)",
                                  getenv("VRAMREPORT_DB_TIMEOUT"));
    return run_stages(&o, sub_import, sub_report, files, nfiles, wait_ms);
}

int vr_cli_run(int argc, char **argv, const vr_cli_command *all)
{
    return run_with(argc, argv, all, 0, 0);
}

int vr_cli_import(int argc, char **argv, const vr_cli_command *all)
{
    return run_with(argc, argv, all, 1, 0);
}

int vr_cli_report(int argc, char **argv, const vr_cli_command *all)
{
    return run_with(argc, argv, all, 0, 1);
}
