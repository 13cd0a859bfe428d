/* `vramreport diff BEFORE AFTER`: each side a file, a folder or a kept
 * database (SQLite, told by its content) analysed as the run does
 * (stages.h) and its results document built (report.h); the two compared
 * (render/diff/diff.h) and written as Markdown, HTML or JSON, or as a few
 * lines for a ticket (--summary, on standard output); --fail-on-growth
 * PCT makes a growth of any pair's peak allocated past PCT % exit 3. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/stages.h"
#include "db/db.h"
#include "render/diff/diff.h"
#include "render/report.h"

static const char diff_usage[] =
    "Usage: vramreport diff BEFORE AFTER [-o DIFF.md|.html|.json] [OPTIONS]\n"
    "\n"
    "Compares two runs: each of BEFORE and AFTER is a file, a folder or a\n"
    "database kept with --db, analysed as a report is. Devices are paired by\n"
    "rank and index; for each pair the peaks, the breakdown at the peak, the\n"
    "allocation sites live at it, the steps, the out-of-memory errors and the\n"
    "findings before and after (docs/diff.md).\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE       write the diff to FILE (default: standard output);\n"
    "                          FILE.md, .html or .json says the format\n"
    "  -f, --format FMT        md, html or json (for any other output name)\n"
    "      --summary           a few Markdown lines for a ticket comment, on\n"
    "                          standard output (with -o, the diff goes there too)\n"
    "      --fail-on-growth PCT\n"
    "                          exit with status 3 when a paired device's peak\n"
    "                          allocated grew by more than PCT %: a CI gate\n"
    "      --capacity SIZE|GPU the GPU's memory where no input states it (both\n"
    "                          sides), as for a report: headroom and findings\n"
    "      --templates DIR     use DIR/*.mustache instead of the built-in templates\n"
    "  -q, --quiet             no notices (warnings still show)\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: 0; 1 when a side cannot be read; 2 on a usage error; 3 when\n"
    "--fail-on-growth's PCT was passed, or some input of a side could not be\n"
    "read (the diff is still written; stderr says which).\n";

typedef struct {
    const char *output, *format, *templates;
    int summary, quiet, gate;
    double pct;
    vr_cli_opts stages; /* what the stages take: --capacity, --quiet */
    char *sides[2];
} diff_opts;

enum { OPT_SUMMARY = 256, OPT_GROWTH, OPT_TEMPLATES, OPT_CAPACITY };

static int parse_pct(const char *s, double *pct)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0)
        return vr_cli_usage_error("--fail-on-growth '%s': give a percentage, 0 or more", s);
    *pct = v;
    return 0;
}

static int parse(int argc, char **argv, diff_opts *o)
{
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, 'f'},
        {"summary", no_argument, NULL, OPT_SUMMARY},
        {"fail-on-growth", required_argument, NULL, OPT_GROWTH},
        {"templates", required_argument, NULL, OPT_TEMPLATES},
        {"capacity", required_argument, NULL, OPT_CAPACITY},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, rc;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":o:f:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->output = optarg;
            break;
        case 'f':
            o->format = optarg;
            break;
        case 'q':
            o->quiet = o->stages.quiet = 1;
            break;
        case OPT_SUMMARY:
            o->summary = 1;
            break;
        case OPT_TEMPLATES:
            o->templates = optarg;
            break;
        case OPT_CAPACITY:
            if ((rc = vr_cli_parse_capacity(optarg, &o->stages)) != 0)
                return rc;
            break;
        case OPT_GROWTH:
            if ((rc = parse_pct(optarg, &o->pct)) != 0)
                return rc;
            o->gate = 1;
            break;
        case 'h':
            fputs(diff_usage, stdout);
            exit(0);
        case ':':
            return vr_cli_usage_error("diff: %s needs a value", argv[optind - 1]);
        default:
            return vr_cli_usage_error("diff: unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        return vr_cli_usage_error("%s", "diff takes two inputs, BEFORE and AFTER (each a file, "
                                        "a folder or a --db database)");
    o->sides[0] = argv[optind];
    o->sides[1] = argv[optind + 1];
    return 0;
}

/* The side's path exists, and the output is neither side. */
static int check_up_front(const diff_opts *o, vr_format *fmt)
{
    struct stat st;
    for (int i = 0; i < 2; i++)
        if (stat(o->sides[i], &st) != 0)
            return vr_cli_usage_error("diff: '%s': no such file or folder", o->sides[i]);
    vr_cli_opts co = {0};
    co.output = o->output;
    co.format = o->format;
    int rc = vr_cli_format(&co, fmt);
    if (rc == -1)
        return vr_cli_usage_error("unknown --format '%s' (md, html or json)", o->format);
    if (rc == -2)
        return vr_cli_usage_error("the output '%s' does not say its format: end it in .md, "
                                  ".html or .json, or give --format",
                                  o->output);
    return vr_cli_check_output_target(&co, (char **)o->sides, 2);
}

/* A database vramreport kept (--db): SQLite's header, not the name. */
static int is_database(const char *path)
{
    static const char magic[16] = "SQLite format 3";
    char head[16];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, magic, sizeof magic) == 0;
}

/* One side analysed into its results document; NULL (said) on failure. */
static cJSON *load_side(char *path, const diff_opts *o, int *partial)
{
    vr_error err = VR_ERROR_INIT;
    vr_cli_opts co = o->stages;
    int kept = is_database(path);
    vr_db_open_opts dbo = {kept, vr_cli_db_wait_ms(), NULL};
    vr_db *db = vr_db_open_with(kept ? path : NULL, &dbo, &err);
    cJSON *doc = NULL;
    if (db) {
        int rc = kept ? vr_cli_finish_analysis(db, &co, &err)
                      : vr_cli_import_analyze(db, &path, 1, &co, 1, partial, &err);
        if (rc == 0)
            doc = vr_report_results(db, &err);
        if (doc && (vr_diff_add_timelines(db, doc, &err) < 0 ||
                    vr_diff_add_sites(db, doc, &err) < 0 ||
                    vr_diff_add_more_devices(db, doc, &err) < 0)) {
            cJSON_Delete(doc);
            doc = NULL;
        }
        vr_db_close(db);
    }
    if (!doc && err.msg[0])
        fprintf(stderr, "vramreport: diff: %s: %s\n", path, err.msg);
    return doc;
}

static int write_out(const diff_opts *o, const cJSON *diff, vr_format fmt, int summary)
{
    vr_error err = VR_ERROR_INIT;
    vr_buf out = VR_BUF_INIT;
    vr_cli_output dest = VR_CLI_OUTPUT_INIT(summary ? NULL : o->output);
    int rc = vr_diff_render(diff, fmt, summary, o->templates, &out, &err);
    if (rc == 0)
        rc = vr_cli_output_write(&dest, &out, &err);
    rc = vr_cli_output_close(&dest, rc, &err);
    vr_buf_free(&out);
    if (rc < 0)
        fprintf(stderr, "vramreport: diff: %s\n", err.msg);
    return rc;
}

static int finish(const diff_opts *o, const cJSON *diff, vr_format fmt, const int partial[2])
{
    if ((!o->summary || o->output) && write_out(o, diff, fmt, 0) < 0)
        return VR_EXIT_DATA;
    if (o->summary && write_out(o, diff, VR_FORMAT_MARKDOWN, 1) < 0)
        return VR_EXIT_DATA;
    int grew = o->gate ? vr_diff_grew_over(diff, o->pct) : 0;
    if (grew)
        fprintf(stderr,
                "vramreport: diff: %d device(s) grew by more than %g %% (--fail-on-growth)\n",
                grew, o->pct);
    for (int i = 0; i < 2; i++)
        if (partial[i])
            fprintf(stderr, "vramreport: diff: some inputs of %s could not be read\n",
                    i ? "AFTER" : "BEFORE");
    return grew || partial[0] || partial[1] ? VR_EXIT_PARTIAL : 0;
}

int vr_cli_diff(int argc, char **argv, const vr_cli_command *all)
{
    (void)all;
    diff_opts o = {0};
    vr_format fmt;
    int rc = parse(argc, argv, &o);
    if (rc || (rc = check_up_front(&o, &fmt)) != 0)
        return rc;
    if (vr_cli_db_wait_ms() < 0)
        return vr_cli_usage_error("VRAMREPORT_DB_TIMEOUT '%s': give whole seconds (0 or more)",
                                  getenv("VRAMREPORT_DB_TIMEOUT"));
    vr_cli_watch_signals();
    int partial[2] = {0, 0};
    cJSON *before = load_side(o.sides[0], &o, &partial[0]);
    cJSON *after = before ? load_side(o.sides[1], &o, &partial[1]) : NULL;
    if (!after) {
        cJSON_Delete(before);
        return VR_EXIT_DATA;
    }
    vr_diff_side sb = {o.sides[0], partial[0]}, sa = {o.sides[1], partial[1]};
    cJSON *diff = vr_diff_build(before, after, &sb, &sa);
    cJSON_Delete(before);
    cJSON_Delete(after);
    rc = finish(&o, diff, fmt, partial);
    cJSON_Delete(diff);
    return rc;
}
