/* vramreport: the command line. Everything it does goes through the
 * library's stages (import -> analyze -> render); this file only parses
 * arguments, prints messages and writes the output file. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "analyze/analyze.h"
#include "cli/capture.h"
#include "db/db.h"
#include "cli/estimate.h"
#include "import/import.h"
#include "render/report.h"
#include "render/results/verdict.h"
#include "util/buf.h"
#include "util/tz.h"
#include "util/timing.h"

/* Exit statuses (documented in --help and the man page). */
enum { EXIT_DATA = 1, EXIT_USAGE = 2, EXIT_PARTIAL = 3 };

typedef struct {
    const char *output;
    const char *db_path;
    const char *format;
    const char *templates;
    const char *tz;
    const char *category_rules;
    int64_t tz_offset_ns;
    int quiet;
    int progress;
    int follow_links; /* --follow-links: links out of a folder too */
    int summary; /* --summary: the short Markdown (verdict, breakdown, advice) */
    const char *fail_on; /* --fail-on: kinds, comma-separated, or "any" */
} cli_opts;

static const char usage_text[] =
    "Usage: vramreport [OPTIONS] INPUT... [-o REPORT]\n"
    "       vramreport import INPUT... --db RUN.db\n"
    "       vramreport report --db RUN.db [-o REPORT]\n"
    "       vramreport estimate --params N [OPTIONS]   (see estimate --help)\n"
    "       vramreport capture-help\n"
    "\n"
    "Explains a GPU job's memory after the fact: imports what the job left\n"
    "behind (PyTorch profiler traces, recorded with profile_memory=True) into\n"
    "SQLite, finds the peaks and what was live at them, and writes a report.\n"
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
    "                        UTC (the default) or an offset such as +02:00\n"
    "      --follow-links    in a folder, also follow symbolic links that lead out of\n"
    "                        it (by default they are skipped and listed)\n"
    "      --category-rules FILE\n"
    "                        decide what each allocation was (parameter, gradient,\n"
    "                        activation, ...) by the rules in FILE instead of the\n"
    "                        built-in ones (format: docs/categories.md)\n"
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
    "  vramreport report --db run.db --category-rules my.rules -o report.md\n"
    "      the same run, its memory categorised by my.rules (analysed again)\n"
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

static void warn_line(void *ud, const char *line)
{
    (void)ud;
    fprintf(stderr, "vramreport: warning: %s\n", line);
}

static void notice_line(void *ud, const char *line)
{
    (void)ud;
    fprintf(stderr, "vramreport: %s\n", line);
}

/* VRAMREPORT_DB_TIMEOUT: how many seconds to wait for another process
 * holding the database (default VR_DB_WAIT_MS_DEFAULT). -1 when it is
 * not a whole number of seconds (0 or more). */
static int64_t db_wait_ms(void)
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

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "vramreport: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'vramreport --help'.\n");
    return EXIT_USAGE;
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

/* 0, or -1 for an unknown --format, -2 for an output whose name does not
 * say its format. Standard output gets Markdown. */
static int parse_format(const cli_opts *o, vr_format *fmt)
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

static int write_stream(FILE *f, const char *name, const vr_buf *b, vr_error *err)
{
    if (fwrite(b->data, 1, b->len, f) != b->len || fflush(f) != 0)
        return vr_fail(err, "%s: write failed: %s", name, strerror(errno));
    return 0;
}

/* The temporary report file while it is being written, so that a signal
 * can remove it: the one writable global, as a handler has no argument. */
static char tmp_output[4096];

static void remove_tmp_and_die(int sig)
{
    if (tmp_output[0])
        unlink(tmp_output);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void watch_signals(void)
{
    static const int deadly[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof deadly / sizeof *deadly; i++)
        signal(deadly[i], remove_tmp_and_die);
    /* Past `ulimit -f`, writes fail with EFBIG instead of killing us, so a
     * partial file is removed and the error said. */
    signal(SIGXFSZ, SIG_IGN);
}

/* A new file beside `path` that nobody else can have planted: mkstemp
 * creates it (O_EXCL, no symlink followed). Mode as fopen would give. */
static int create_tmp(const char *path, vr_buf *tmp, vr_error *err)
{
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path) + 1 : 0;
    vr_buf_printf(tmp, "%.*s.%s.XXXXXX", dirlen, path, slash ? slash + 1 : path);
    int fd = mkstemp(tmp->data);
    if (fd < 0)
        return vr_fail(err, "%s: cannot write beside it: %s", path, strerror(errno));
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp->data);
        return vr_fail(err, "%s: cannot set permissions: %s", path, strerror(e));
    }
    snprintf(tmp_output, sizeof tmp_output, "%s", tmp->data);
    return fd;
}

static int write_fd(int fd, const char *path, const vr_buf *b, vr_error *err)
{
    size_t done = 0;
    while (done < b->len) {
        ssize_t n = write(fd, b->data + done, b->len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return vr_fail(err, "%s: write failed: %s", path, strerror(errno));
        done += (size_t)n;
    }
    return 0;
}

/* Where the report goes: standard output; a file written in place when
 * it is not a regular file (/dev/null, a pipe); else a temporary file
 * beside the target, renamed into place at the end: a reader of OUT never
 * sees half a report, and a failed or interrupted write leaves no file
 * behind. Opened at the first write (a JSON report is written as it is
 * made, report.h): a report that fails before it touches nothing. */
typedef struct {
    const char *path; /* NULL or "-": standard output */
    int opened;
    FILE *stream; /* standard output, or a file written in place */
    int fd;       /* the temporary file, or -1 */
    vr_buf tmp;   /* its name */
    size_t written;
} report_output;

static int output_open(report_output *o, vr_error *err)
{
    o->opened = 1;
    if (!o->path || strcmp(o->path, "-") == 0) {
        o->stream = stdout;
        return 0;
    }
    struct stat st;
    if (stat(o->path, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->stream = fopen(o->path, "wb");
        return o->stream ? 0 : vr_fail(err, "%s: cannot write: %s", o->path, strerror(errno));
    }
    o->fd = create_tmp(o->path, &o->tmp, err);
    return o->fd < 0 ? -1 : 0;
}

static int output_write(report_output *o, const vr_buf *b, vr_error *err)
{
    if (!o->opened && output_open(o, err) < 0)
        return -1;
    int rc = o->stream ? write_stream(o->stream, o->stream == stdout ? "standard output" : o->path,
                                      b, err)
             : o->fd >= 0 ? write_fd(o->fd, o->path, b, err)
                          : -1; /* its opening failed and said why */
    if (rc == 0)
        o->written += b->len;
    return rc;
}

/* The report's output handed over while it is made. */
static int flush_output(void *ctx, vr_buf *b, vr_error *err)
{
    int rc = output_write(ctx, b, err);
    vr_buf_clear(b);
    return rc;
}

/* Closes what was opened: `rc` is the report's so far; the temporary
 * file is renamed into place only when it is 0, else removed. */
static int output_close(report_output *o, int rc, vr_error *err)
{
    if (o->stream && o->stream != stdout && fclose(o->stream) != 0 && rc == 0)
        rc = vr_fail(err, "%s: write failed", o->path);
    if (o->fd >= 0) {
        if (close(o->fd) != 0 && rc == 0)
            rc = vr_fail(err, "%s: write failed: %s", o->path, strerror(errno));
        if (rc == 0 && rename(o->tmp.data, o->path) != 0)
            rc = vr_fail(err, "%s: cannot rename into place: %s", o->path, strerror(errno));
        if (rc < 0)
            unlink(o->tmp.data);
        tmp_output[0] = '\0';
    }
    vr_buf_free(&o->tmp);
    return rc;
}

/* The report must not replace what it is made from: an input or the
 * database, however named (same device and inode). */
static int same_file(const struct stat *a, const char *path)
{
    struct stat b;
    return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

static int check_output_target(const cli_opts *o, char **files, int n)
{
    struct stat out;
    if (!o->output || strcmp(o->output, "-") == 0 || stat(o->output, &out) != 0 ||
        !S_ISREG(out.st_mode))
        return 0;
    if (o->db_path && same_file(&out, o->db_path))
        return usage_error("the output '%s' is the database (--db); choose another "
                           "output file",
                           o->output);
    for (int i = 0; i < n; i++)
        if (strcmp(files[i], "-") != 0 && same_file(&out, files[i]))
            return usage_error("the output '%s' is one of the inputs; choose another "
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
        return usage_error("the output '%s' is a folder; name a file in it", output);
    const char *slash = strrchr(output, '/');
    char folder[4096];
    if (slash == output) /* "/report.md" */
        snprintf(folder, sizeof folder, "/");
    else
        snprintf(folder, sizeof folder, "%.*s", slash ? (int)(slash - output) : 1,
                 slash ? output : ".");
    if (stat(folder, &st) != 0 || !S_ISDIR(st.st_mode))
        return usage_error("the output's folder '%s' does not exist", folder);
    if (access(folder, W_OK) != 0)
        return usage_error("cannot write in the output's folder '%s'", folder);
    return 0;
}

/* Everything the command line asks that can be checked before any work. */
static int check_up_front(const cli_opts *o, int sub_import, int sub_report, char **files,
                          int n)
{
    int rc;
    if (sub_report && access(o->db_path, F_OK) != 0) {
        fprintf(stderr, "vramreport: %s: no such database (make one with 'vramreport import "
                        "FILE... --db %s')\n",
                o->db_path, o->db_path);
        return EXIT_DATA;
    }
    if (sub_import)
        return 0;
    if ((rc = check_output_folder(o->output)) != 0)
        return rc;
    vr_format fmt;
    if (parse_format(o, &fmt) == -2)
        return usage_error("the name '%s' does not say the report's format: end it in .md, "
                           ".html or .json, or give --format",
                           o->output);
    return check_output_target(o, files, n);
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
    const cli_opts *o = ud;
    if (outcome == VR_INPUT_FAILED)
        fprintf(stderr, "vramreport: %s\n", detail);
    else if (o->quiet)
        return;
    else if (outcome == VR_INPUT_SKIPPED)
        fprintf(stderr, "vramreport: %s: skipped: %s\n", path, detail);
    else if (outcome == VR_INPUT_ALREADY)
        fprintf(stderr, "vramreport: %s: already imported (same content as source %s); "
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
    vr_fail(err, "none of the %u input(s) is a format vramreport reads (expected %s)",
            t->skipped, expected.data);
    vr_buf_free(&expected);
    return -1;
}

/* Imports every input, then analyses what was imported. -1 when nothing
 * can be reported (or the database failed); *partial when some input
 * failed but others can be. */
static int import_all(vr_db *db, char **paths, int n, const cli_opts *o, int record_issues,
                      int *partial, vr_error *err)
{
    double t = vr_now();
    vr_warner warner = {warn_line, NULL};
    vr_import_opts io = {&warner, o->progress, record_issues, o->tz_offset_ns,
                         o->tz ? o->tz : "UTC", o->follow_links};
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
    vr_analyze_opts ao = {o->category_rules};
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
static int finish_analysis(vr_db *db, const cli_opts *o, vr_error *err)
{
    int current;
    vr_analyze_opts ao = {o->category_rules};
    if (vr_analyze_is_current_with(db, &ao, &current, err) < 0)
        return -1;
    if (current)
        return 0;
    if (!o->quiet)
        fprintf(stderr, "vramreport: %s: the analysis is not current (interrupted, made "
                        "with other category rules, or the database is from an older "
                        "vramreport); analysing now\n",
                vr_db_path(db));
    if (vr_analyze_with(db, &ao, err) == 0)
        return 0;
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err->msg);
    return vr_fail(err, "%s: the analysis is incomplete and could not be finished (%s); "
                        "import the traces again into a new --db",
                   vr_db_path(db), why);
}

/* On a terminal (issue 12): where the report went, its size and the
 * verdict, in one line. */
static void say_written(const cli_opts *o, const vr_report_outcome *r, size_t size)
{
    if (!o->progress)
        return;
    const char *path = !o->output || strcmp(o->output, "-") == 0 ? "standard output" : o->output;
    char line[1024];
    vr_verdict_line(r->label, r->cause, path, (int64_t)size, line, sizeof line);
    fprintf(stderr, "vramreport: %s\n", line);
}

static int render_to(vr_db *db, const cli_opts *o, vr_error *err)
{
    vr_format fmt;
    parse_format(o, &fmt);
    vr_report_outcome outcome;
    report_output dest = {o->output, 0, NULL, -1, VR_BUF_INIT, 0};
    vr_report_opts ro = {fmt, o->templates, o->summary, &outcome, flush_output, &dest};
    vr_buf out = VR_BUF_INIT;
    double t = vr_now();
    int rc = vr_report_render(db, &ro, &out, err);
    vr_timing("render", t);
    if (rc == 0)
        rc = output_write(&dest, &out, err);
    rc = output_close(&dest, rc, err);
    if (rc == 0)
        say_written(o, &outcome, dest.written);
    vr_buf_free(&out);
    return rc;
}

/* A rules file is read before any import: its mistakes cost nothing. */
static int check_rules(const cli_opts *o)
{
    vr_error err = VR_ERROR_INIT;
    vr_analyze_opts ao = {o->category_rules};
    if (!o->category_rules || vr_analyze_check_opts(&ao, &err) == 0)
        return 0;
    fprintf(stderr, "vramreport: %s\n", err.msg);
    return EXIT_USAGE;
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

static int check_fail_on(const char *list)
{
    if (strcmp(list, "any") == 0)
        return 0;
    for (const char *s = list;; s++) {
        size_t n = strcspn(s, ",");
        if (!is_finding_kind(s, n)) {
            fprintf(stderr, "vramreport: --fail-on '%s': unknown finding kind '%.*s'; the kinds:",
                    list, (int)n, s);
            for (size_t i = 0; vr_analyze_finding_kinds[i]; i++)
                fprintf(stderr, " %s", vr_analyze_finding_kinds[i]);
            fprintf(stderr, ", or any\nTry 'vramreport --help'.\n");
            return EXIT_USAGE;
        }
        s += n;
        if (!*s)
            return 0;
    }
}

/* With --fail-on: 1 when a finding of those kinds exists. */
static int gate_findings(vr_db *db, const cli_opts *o, int *hit, vr_error *err)
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

static int parse_args(int argc, char **argv, cli_opts *o)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"format", required_argument, NULL, 'f'},
        {"db", required_argument, NULL, 'd'},     {"templates", required_argument, NULL, 't'},
        {"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},      {"tz", required_argument, NULL, 'z'},
        {"category-rules", required_argument, NULL, 'r'},
        {"fail-on", required_argument, NULL, 'F'}, {"summary", no_argument, NULL, 'S'},
        {"follow-links", no_argument, NULL, 'L'}, {NULL, 0, NULL, 0}};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:f:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': o->output = optarg; break;
        case 'f': o->format = optarg; break;
        case 'd': o->db_path = optarg; break;
        case 't': o->templates = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'z': o->tz = optarg; break;
        case 'r': o->category_rules = optarg; break;
        case 'F': o->fail_on = optarg; break;
        case 'S': o->summary = 1; break;
        case 'L': o->follow_links = 1; break;
        case 'h': fputs(usage_text, stdout); exit(0);
        case 'V': printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION); exit(0);
        default:
            return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    vr_format fmt;
    if (parse_format(o, &fmt) == -1)
        return usage_error("unknown format '%s' (use md, html or json)", o->format);
    if (o->summary && parse_format(o, &fmt) == 0 && fmt != VR_FORMAT_MARKDOWN)
        return usage_error("--summary writes Markdown: name the output FILE.md or give "
                           "--format md (not '%s')",
                           o->output && !o->format ? o->output : o->format);
    if (o->fail_on && check_fail_on(o->fail_on) != 0)
        return EXIT_USAGE;
    if (o->tz && vr_tz_parse(o->tz, &o->tz_offset_ns) < 0)
        return usage_error("--tz '%s': give UTC or an offset such as +02:00 or -0530 (named "
                           "zones change offset with the date)",
                           o->tz);
    return check_rules(o);
}

/* Subcommands that stand apart from the import -> analyze -> render path
 * (they take their own options): one entry each, run with argv from the
 * subcommand's name on. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} standalone_commands[] = {
    {"estimate", vr_estimate_cli},
    {"capture-help", vr_capture_help_run},
    {NULL, NULL}, /* keeps the table non-empty; new subcommands go above */
};

static int run_standalone(const char *cmd, int argc, char **argv, int *rc)
{
    for (size_t i = 0; cmd && standalone_commands[i].name; i++)
        if (strcmp(cmd, standalone_commands[i].name) == 0) {
            *rc = standalone_commands[i].run(argc - 1, argv + 1);
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    cli_opts o = {0};
    const char *cmd = argc > 1 ? argv[1] : NULL;
    int standalone_rc;
    if (run_standalone(cmd, argc, argv, &standalone_rc))
        return standalone_rc;
    int sub_import = cmd && strcmp(cmd, "import") == 0;
    int sub_report = cmd && strcmp(cmd, "report") == 0;
    if (sub_import || sub_report) {
        argv[1] = argv[0];
        argv++, argc--;
    }
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    o.progress = !o.quiet && isatty(STDERR_FILENO);
    int nfiles = argc - optind;
    if (sub_report && nfiles > 0)
        return usage_error("report takes no input files (got '%s'); use import first",
                           argv[optind]);
    if (sub_import && o.summary)
        return usage_error("%s", "--summary shapes a report: give it to report or to a run");
    if (sub_import && o.fail_on)
        return usage_error("%s", "--fail-on judges a report: give it to report or to a run");
    if ((sub_import || sub_report) && !o.db_path)
        return usage_error("%s needs --db FILE", sub_import ? "import" : "report");
    if (!sub_report && nfiles == 0)
        return usage_error("%s", "no input files (see the examples in --help)");

    char **files = argv + optind;
    if ((rc = check_up_front(&o, sub_import, sub_report, files, nfiles)) != 0)
        return rc;
    int64_t wait_ms = db_wait_ms();
    if (wait_ms < 0)
        return usage_error("VRAMREPORT_DB_TIMEOUT '%s': give whole seconds (0 or more)",
                           getenv("VRAMREPORT_DB_TIMEOUT"));
    watch_signals();
    vr_error err = VR_ERROR_INIT;
    /* The note that another process holds the database: on a terminal,
     * as the other notices. */
    vr_warner waiting = {notice_line, NULL};
    vr_db_open_opts dbo = {sub_report, wait_ms, o.progress ? &waiting : NULL};
    vr_db *db = vr_db_open_with(o.db_path, &dbo, &err);
    if (!db) {
        fprintf(stderr, "vramreport: %s\n", err.msg);
        return EXIT_DATA;
    }
    /* Again, now that a new --db exists: `--db x.db -o x.db`. A --db this
     * run created is removed again when nothing was imported into it. */
    if (!sub_import && (rc = check_output_target(&o, files, nfiles)) != 0) {
        vr_db_close_unless_empty(db);
        return rc;
    }
    int partial = 0;
    int failed = sub_report ? finish_analysis(db, &o, &err) < 0
                            : import_all(db, files, nfiles, &o, !sub_import, &partial, &err) < 0;
    if (!failed && !sub_import)
        failed = render_to(db, &o, &err) < 0;
    int gated = 0;
    if (!failed && !sub_import)
        failed = gate_findings(db, &o, &gated, &err) < 0;
    vr_db_close_unless_empty(db);
    if (failed) {
        if (err.msg[0])
            fprintf(stderr, "vramreport: %s\n", err.msg);
        return EXIT_DATA;
    }
    return partial || gated ? EXIT_PARTIAL : 0;
}
