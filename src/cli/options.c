/* The command line of the run, `import` and `report` (options.h): getopt
 * into vr_cli_opts, then every check that costs nothing, so a mistake is
 * said before an import of gigabytes, not after. */
#include "cli/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "analyze/analyze.h"
#include "db/db.h"
#include "estimate/estimate.h"
#include "util/tz.h"

/* --help after the "Usage:" lines (the subcommands' synopses, cli.h). */
static const char usage_text[] =
    "\n"
    "Explains a GPU job's memory after the fact: imports what the job left\n"
    "behind (PyTorch profiler traces, allocator snapshots, memory_stats() and\n"
    "memory_summary() dumps, job logs with out-of-memory errors, nvidia-smi\n"
    "and gpustat logs) into SQLite, finds the peaks, what was live at them\n"
    "and why a job ran out of memory, and writes a report.\n"
    "An INPUT is a file, a folder (every file in it, recursively) or - for\n"
    "standard input. Files may be plain, gzip or zstd; each is recognised by\n"
    "its content, never its name. Files in a folder that are not a format\n"
    "vramreport reads, and vramreport's own reports, are skipped and listed.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE     write the report to FILE (default: standard output);\n"
    "                        FILE.md, .html or .json says the format\n"
    "  -f, --format FMT      md, html or json (for any other output name)\n"
    "      --summary         write a short Markdown instead (the verdict, the\n"
    "                        breakdown at the peak, the top advice) that fits one\n"
    "                        ticket comment: at most 4,000 characters\n"
    "      --db FILE         keep the database in FILE (default: a temporary one)\n"
    "      --templates DIR   use DIR/*.mustache instead of the built-in templates\n"
    "      --tz ZONE         the zone of log and nvidia-smi times that name none:\n"
    "                        UTC (the default) or an offset such as +02:00; used\n"
    "                        at import (report --db keeps the imported times)\n"
    "      --follow-links    in a folder, also follow symbolic links that lead out of\n"
    "                        it (by default they are skipped and listed)\n"
    "      --jobs N          import N files at once (default: one per two processors);\n"
    "                        the database and report are those of one at a time\n"
    "      --category-rules FILE\n"
    "                        decide what each allocation was (parameter, gradient,\n"
    "                        activation, ...) by the rules in FILE instead of the\n"
    "                        built-in ones (format: docs/categories.md)\n"
    "      --capacity SIZE|GPU\n"
    "                        the GPU's memory where no input states it: a size\n"
    "                        (80GiB) or a GPU of vramreport estimate --list-gpus\n"
    "                        (A100-80GB), to judge the peak against\n"
    "      --fail-on KINDS   exit with status 3 when a finding of one of KINDS\n"
    "                        (comma-separated, e.g. fragmentation,leak) or of any\n"
    "                        kind (any) exists: a gate for CI\n"
    "  -q, --quiet           no progress line and no notices (warnings still show)\n"
    "  -h, --help            show this help\n"
    "  -V, --version         show the version\n"
    "\n"
    "Examples:\n"
    "  vramreport run_dir/ -o report.html\n"
    "      a failed job's whole folder in, one self-contained HTML page out\n"
    "  vramreport worker0.pt.trace.json.gz -o report.md\n"
    "      one trace, as Markdown\n"
    "  vramreport train.log snapshot.pickle --summary -o comment.md\n"
    "      a short verdict to paste into a ticket\n"
    "  vramreport import rank0.json.gz rank1.json.gz --db run.db\n"
    "  vramreport report --db run.db --format json -o -\n"
    "      import once, then render as often as needed\n"
    "  zcat trace.json.gz | vramreport - -o report.html\n"
    "  vramreport merge rank*.db --db job.db\n"
    "  vramreport report --db job.db -o job.html\n"
    "      a job's ranks, each imported on its own (docs/scale.md), in one report\n"
    "      (vramreport merge --help)\n"
    "  vramreport diff before/ after/ -o diff.html --fail-on-growth 5\n"
    "      did the fix work: two runs compared, exit 3 when a peak grew over 5 %\n"
    "      (vramreport diff --help)\n"
    "  vramreport report --db run.db --category-rules my.rules -o report.md\n"
    "      the same run, its memory categorised by my.rules (analysed again)\n"
    "  vramreport snapshot.pickle --capacity A100-80GB -o report.md\n"
    "      a snapshot states no capacity: judge its peak against an 80 GB A100\n"
    "  vramreport capture-help\n"
    "      what to add to a training script so that its next OOM leaves\n"
    "      everything vramreport reads (a Python file installed with vramreport)\n"
    "\n"
    "Exit status: 0 on success (also when an input was truncated, or a file in\n"
    "a folder was skipped: the report says so); 1 when no input could be used,\n"
    "or the database could not; 2 on a usage error (also when -o names an\n"
    "input or the database); 3 when the report was written but some input\n"
    "failed (each failure is said on stderr and listed in the report), or a\n"
    "finding of a kind --fail-on names exists.\n";

static void print_usage(const vr_cli_command *all)
{
    for (size_t i = 0; all[i].run; i++)
        printf("%s vramreport %s\n", i ? "      " : "Usage:", all[i].synopsis);
    fputs(usage_text, stdout);
}

/* VRAMREPORT_DB_TIMEOUT: how many seconds to wait for another process
 * holding the database. */
int64_t vr_cli_db_wait_ms(void)
{
    const char *v = getenv("VRAMREPORT_DB_TIMEOUT");
    if (!v || !*v)
        return VR_DB_WAIT_MS_DEFAULT;
    char *end;
    errno = 0;
    long long secs = strtoll(v, &end, 10);
    if (errno || *end || end == v || secs < 0 || secs > INT32_MAX / 1000)
        return -1;
    return (int64_t)secs * 1000;
}

int vr_cli_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "vramreport: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'vramreport --help'.\n");
    return VR_EXIT_USAGE;
}

/* Format names, as --format takes them and as the output's extension
 * says them. Any other extension says nothing: writing Markdown into
 * "report.pdf" would help nobody. */
static const struct {
    const char *name;
    vr_format format;
} format_names[] = {
    {"md", VR_FORMAT_MARKDOWN}, {"markdown", VR_FORMAT_MARKDOWN}, {"html", VR_FORMAT_HTML},
    {"htm", VR_FORMAT_HTML},    {"json", VR_FORMAT_JSON},
};

static int format_named(const char *name, vr_format *fmt)
{
    for (size_t i = 0; i < sizeof format_names / sizeof *format_names; i++)
        if (strcasecmp(name, format_names[i].name) == 0) {
            *fmt = format_names[i].format;
            return 1;
        }
    return 0;
}

int vr_cli_format(const vr_cli_opts *o, vr_format *fmt)
{
    if (o->format)
        return format_named(o->format, fmt) ? 0 : -1;
    *fmt = VR_FORMAT_MARKDOWN;
    if (!o->output || strcmp(o->output, "-") == 0)
        return 0;
    const char *slash = strrchr(o->output, '/');
    const char *dot = strrchr(slash ? slash + 1 : o->output, '.');
    return dot && format_named(dot + 1, fmt) ? 0 : -2;
}

/* The report must not replace what it is made from: an input or the
 * database, however named (same device and inode). */
static int same_file(const struct stat *a, const char *path)
{
    struct stat b;
    return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

int vr_cli_check_output_target(const vr_cli_opts *o, char **files, int n)
{
    struct stat out;
    if (!o->output || strcmp(o->output, "-") == 0 || stat(o->output, &out) != 0 ||
        !S_ISREG(out.st_mode))
        return 0;
    if (o->db_path && same_file(&out, o->db_path))
        return vr_cli_usage_error("the output '%s' is the database (--db); choose another "
                                  "output file",
                                  o->output);
    for (int i = 0; i < n; i++)
        if (strcmp(files[i], "-") != 0 && same_file(&out, files[i]))
            return vr_cli_usage_error("the output '%s' is one of the inputs; choose another "
                                      "output file",
                                      o->output);
    return 0;
}

/* The output's folder must exist and take a new file: found out before
 * an import of gigabytes, not after. */
static int check_output_folder(const char *output)
{
    if (!output || strcmp(output, "-") == 0)
        return 0;
    struct stat st;
    if (stat(output, &st) == 0 && S_ISDIR(st.st_mode))
        return vr_cli_usage_error("the output '%s' is a folder; name a file in it", output);
    const char *slash = strrchr(output, '/');
    char folder[4096];
    if (slash == output) /* "/report.md" */
        snprintf(folder, sizeof folder, "/");
    else
        snprintf(folder, sizeof folder, "%.*s", slash ? (int)(slash - output) : 1,
                 slash ? output : ".");
    if (stat(folder, &st) != 0 || !S_ISDIR(st.st_mode))
        return vr_cli_usage_error("the output's folder '%s' does not exist", folder);
    if (access(folder, W_OK) != 0)
        return vr_cli_usage_error("cannot write in the output's folder '%s'", folder);
    return 0;
}

/* Everything the command line asks that can be checked before any work. */
int vr_cli_check_up_front(const vr_cli_opts *o, int sub_import, int sub_report, char **files,
                          int n)
{
    int rc;
    if (sub_report && access(o->db_path, F_OK) != 0) {
        fprintf(stderr,
                "vramreport: %s: no such database (make one with 'vramreport import "
                "FILE... --db %s')\n",
                o->db_path, o->db_path);
        return VR_EXIT_DATA;
    }
    if (sub_import)
        return 0;
    if ((rc = check_output_folder(o->output)) != 0)
        return rc;
    vr_format fmt;
    if (vr_cli_format(o, &fmt) == -2)
        return vr_cli_usage_error(
            "the name '%s' does not say the report's format: end it in .md, "
            ".html or .json, or give --format",
            o->output);
    return vr_cli_check_output_target(o, files, n);
}

/* A rules file is read before any import: its mistakes cost nothing. */
static int check_rules(const vr_cli_opts *o)
{
    vr_error err = VR_ERROR_INIT;
    vr_analyze_opts ao = {o->category_rules, 0, NULL};
    if (!o->category_rules || vr_analyze_check_opts(&ao, &err) == 0)
        return 0;
    fprintf(stderr, "vramreport: %s\n", err.msg);
    return VR_EXIT_USAGE;
}

/* The smallest and largest capacity --capacity takes: 1 MiB (less is no
 * GPU) and the estimate's bound on sizes. */
#define CAPACITY_MIN ((int64_t)1 << 20)
#define CAPACITY_MAX 1e15

/* --capacity: a size with its unit ("80GiB", "24 GB"), else a GPU of the
 * estimate's table ("A100-80GB", "4090": a bare number is a GPU's name,
 * as nobody states a GPU's memory in bytes). */
int vr_cli_parse_capacity(const char *s, vr_cli_opts *o)
{
    double v;
    size_t n = vr_estimate_decimal(s);
    if (n && s[n] && vr_estimate_read_size(s, &v)) {
        if (v < (double)CAPACITY_MIN || v > CAPACITY_MAX)
            return vr_cli_usage_error(
                "--capacity '%s': give a GPU's memory, from 1MiB to 1e15 bytes", s);
        o->capacity_bytes = (int64_t)(v + 0.5);
        o->capacity_said = s;
        return 0;
    }
    vr_error err = VR_ERROR_INIT;
    const vr_estimate_gpu *gpu = vr_estimate_gpu_find(s, &err);
    if (!gpu) {
        fprintf(stderr,
                "vramreport: --capacity '%s': give a size such as 80GiB or a GPU of "
                "vramreport estimate --list-gpus (%s)\nTry 'vramreport --help'.\n",
                s, err.msg);
        return VR_EXIT_USAGE;
    }
    o->capacity_bytes = gpu->capacity;
    o->capacity_said = gpu->name;
    return 0;
}

/* --fail-on's list: "any", or finding kinds separated by commas. */
static int is_finding_kind(const char *s, size_t n)
{
    for (size_t i = 0; vr_analyze_finding_kinds[i]; i++)
        if (strlen(vr_analyze_finding_kinds[i]) == n &&
            strncmp(vr_analyze_finding_kinds[i], s, n) == 0)
            return 1;
    return 0;
}

/* --jobs N: 1 to 256 (more threads than that only cost memory). */
static int parse_jobs(const char *s, unsigned *jobs)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > 256)
        return -1;
    *jobs = (unsigned)v;
    return 0;
}

static int check_fail_on(const char *list)
{
    if (strcmp(list, "any") == 0)
        return 0;
    for (const char *s = list;; s++) {
        size_t n = strcspn(s, ",");
        if (!is_finding_kind(s, n)) {
            fprintf(stderr,
                    "vramreport: --fail-on '%s': unknown finding kind '%.*s'; the kinds:", list,
                    (int)n, s);
            for (size_t i = 0; vr_analyze_finding_kinds[i]; i++)
                fprintf(stderr, " %s", vr_analyze_finding_kinds[i]);
            fprintf(stderr, ", or any\nTry 'vramreport --help'.\n");
            return VR_EXIT_USAGE;
        }
        s += n;
        if (!*s)
            return 0;
    }
}

int vr_cli_parse(int argc, char **argv, const vr_cli_command *all, vr_cli_opts *o)
{
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"db", required_argument, NULL, 'd'},
                                             {"templates", required_argument, NULL, 't'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, 'V'},
                                             {"tz", required_argument, NULL, 'z'},
                                             {"category-rules", required_argument, NULL, 'r'},
                                             {"fail-on", required_argument, NULL, 'F'},
                                             {"capacity", required_argument, NULL, 'C'},
                                             {"summary", no_argument, NULL, 'S'},
                                             {"follow-links", no_argument, NULL, 'L'},
                                             {"jobs", required_argument, NULL, 'j'},
                                             {NULL, 0, NULL, 0}};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:f:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->output = optarg;
            break;
        case 'f':
            o->format = optarg;
            break;
        case 'd':
            o->db_path = optarg;
            break;
        case 't':
            o->templates = optarg;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'z':
            o->tz = optarg;
            break;
        case 'r':
            o->category_rules = optarg;
            break;
        case 'F':
            o->fail_on = optarg;
            break;
        case 'C':
            if (vr_cli_parse_capacity(optarg, o) != 0)
                return VR_EXIT_USAGE;
            break;
        case 'S':
            o->summary = 1;
            break;
        case 'L':
            o->follow_links = 1;
            break;
        case 'j':
            if (parse_jobs(optarg, &o->jobs) != 0)
                return vr_cli_usage_error("--jobs '%s': give a whole number from 1 to 256",
                                          optarg);
            break;
        case 'h':
            print_usage(all);
            exit(0);
        case 'V':
            printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
            exit(0);
        default:
            return vr_cli_usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    vr_format fmt;
    if (vr_cli_format(o, &fmt) == -1)
        return vr_cli_usage_error("unknown format '%s' (use md, html or json)", o->format);
    if (o->summary && vr_cli_format(o, &fmt) == 0 && fmt != VR_FORMAT_MARKDOWN)
        return vr_cli_usage_error("--summary writes Markdown: name the output FILE.md or give "
                                  "--format md (not '%s')",
                                  o->output && !o->format ? o->output : o->format);
    if (o->fail_on && check_fail_on(o->fail_on) != 0)
        return VR_EXIT_USAGE;
    if (o->tz && vr_tz_parse(o->tz, &o->tz_offset_ns) < 0)
        return vr_cli_usage_error(
            "--tz '%s': give UTC or an offset such as +02:00 or -0530 (named "
            "zones change offset with the date)",
            o->tz);
    return check_rules(o);
}
