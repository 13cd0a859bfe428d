/* vramreport: the command line. Everything it does goes through the
 * library's stages (import -> analyze -> render); this file only parses
 * arguments, prints messages and writes the output file. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "analyze/analyze.h"
#include "db/db.h"
#include "import/import.h"
#include "render/report.h"
#include "util/buf.h"
#include "util/timing.h"

enum { EXIT_DATA = 1, EXIT_USAGE = 2 };

typedef struct {
    const char *output;
    const char *db_path;
    const char *format;
    const char *templates;
    int quiet;
    int progress;
} cli_opts;

static const char usage_text[] =
    "Usage: vramreport [OPTIONS] FILE... [-o REPORT]\n"
    "       vramreport import FILE... --db RUN.db\n"
    "       vramreport report --db RUN.db [-o REPORT]\n"
    "\n"
    "Explains a GPU job's memory after the fact: imports what the job left\n"
    "behind (PyTorch profiler traces, recorded with profile_memory=True) into\n"
    "SQLite, finds the peaks and what was live at them, and writes a report.\n"
    "Inputs may be plain, gzip or zstd; the format is recognised by content.\n"
    "FILE may be - for standard input.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE     write the report to FILE (default: standard output);\n"
    "                        .html gives HTML, .json JSON, anything else Markdown\n"
    "  -f, --format FMT      md, html or json (overrides the extension)\n"
    "      --db FILE         keep the database in FILE (default: a temporary one)\n"
    "      --templates DIR   use DIR/*.mustache instead of the built-in templates\n"
    "  -q, --quiet           no progress line and no notices (warnings still show)\n"
    "  -h, --help            show this help\n"
    "  -V, --version         show the version\n"
    "\n"
    "Examples:\n"
    "  vramreport worker0.pt.trace.json.gz -o report.html\n"
    "      one self-contained HTML page for the ticket\n"
    "  vramreport trace.json.zst -o report.md\n"
    "      the same as Markdown\n"
    "  vramreport import rank0.json.gz rank1.json.gz --db run.db\n"
    "  vramreport report --db run.db --format json -o -\n"
    "      import once, then render as often as needed\n"
    "  zcat trace.json.gz | vramreport - -o report.html\n"
    "\n"
    "Exit status: 0 on success (also when an input was truncated: the report\n"
    "says so), 1 when an input or the database could not be used, 2 on a\n"
    "usage error (also when -o names an input or the database).\n";

static void warn_line(void *ud, const char *line)
{
    (void)ud;
    fprintf(stderr, "vramreport: warning: %s\n", line);
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "vramreport: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'vramreport --help'.\n");
    return EXIT_USAGE;
}

static int parse_format(const cli_opts *o, vr_format *fmt)
{
    const char *f = o->format;
    if (!f && o->output && strcmp(o->output, "-") != 0) {
        const char *dot = strrchr(o->output, '.');
        f = dot ? dot + 1 : "md";
        if (strcmp(f, "htm") != 0 && strcmp(f, "html") != 0 && strcmp(f, "json") != 0)
            f = "md";
    }
    if (!f || strcmp(f, "md") == 0 || strcmp(f, "markdown") == 0)
        *fmt = VR_FORMAT_MARKDOWN;
    else if (strcmp(f, "html") == 0 || strcmp(f, "htm") == 0)
        *fmt = VR_FORMAT_HTML;
    else if (strcmp(f, "json") == 0)
        *fmt = VR_FORMAT_JSON;
    else
        return -1;
    return 0;
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

/* Writes to a temporary file beside the target, then renames: a reader of
 * OUT never sees half a report, and a failed or interrupted write leaves
 * no file behind. Only regular files are replaced that way; anything else
 * (/dev/null, a pipe) is written in place. */
static int write_output(const char *path, const vr_buf *b, vr_error *err)
{
    if (!path || strcmp(path, "-") == 0)
        return write_stream(stdout, "standard output", b, err);
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        FILE *f = fopen(path, "wb");
        if (!f)
            return vr_fail(err, "%s: cannot write: %s", path, strerror(errno));
        int rc = write_stream(f, path, b, err);
        return fclose(f) != 0 && rc == 0 ? vr_fail(err, "%s: write failed", path) : rc;
    }
    vr_buf tmp = VR_BUF_INIT;
    int fd = create_tmp(path, &tmp, err);
    int rc = fd < 0 ? -1 : write_fd(fd, path, b, err);
    if (fd >= 0 && close(fd) != 0 && rc == 0)
        rc = vr_fail(err, "%s: write failed: %s", path, strerror(errno));
    if (rc == 0 && rename(tmp.data, path) != 0)
        rc = vr_fail(err, "%s: cannot rename into place: %s", path, strerror(errno));
    if (rc < 0 && fd >= 0)
        unlink(tmp.data);
    tmp_output[0] = '\0';
    vr_buf_free(&tmp);
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

/* The imports are committed though their analysis failed: say how to
 * finish it (the database knows it is not analysed). */
static void keep_imports_hint(vr_error *err, const char *db_path)
{
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err->msg);
    vr_fail(err, "%s (the imports are kept; 'vramreport report --db %s' finishes the analysis)",
            why, db_path);
}

static int import_all(vr_db *db, char **files, int n, const cli_opts *o, vr_error *err)
{
    double t = vr_now();
    vr_warner warner = {warn_line, NULL};
    vr_import_opts io = {&warner, o->progress};
    int failed = 0, imported = 0;
    for (int i = 0; i < n; i++) {
        vr_import_result res;
        if (vr_import_file(db, files[i], &io, &res, err) < 0) {
            failed = 1;
            break;
        }
        imported += res.status == VR_IMPORTED;
        if (res.status == VR_ALREADY_IMPORTED && !o->quiet)
            fprintf(stderr, "vramreport: %s: already imported (same content as source %lld); "
                            "skipped\n",
                    files[i], (long long)res.source_id);
    }
    vr_timing("import", t);
    t = vr_now();
    if (o->progress)
        fputs("vramreport: analysing...", stderr);
    /* The files imported before a failure are committed: analyse them, so
     * a kept database never holds sources without their analysis. */
    vr_error analyze_err;
    int rc = failed && !imported ? -1 : vr_analyze(db, failed ? &analyze_err : err);
    if (o->progress)
        fputs("\r                        \r", stderr);
    if (rc < 0 && !failed && o->db_path)
        keep_imports_hint(err, o->db_path);
    if (failed)
        rc = -1;
    vr_timing("analyze", t);
    return rc;
}

/* `report` on a database whose last analysis did not complete (killed,
 * disk full): finish it now rather than draw a report from stale tables. */
static int finish_analysis(vr_db *db, const cli_opts *o, vr_error *err)
{
    int current;
    if (vr_analyze_is_current(db, &current, err) < 0)
        return -1;
    if (current)
        return 0;
    if (!o->quiet)
        fprintf(stderr, "vramreport: %s: the analysis is not current (interrupted, or "
                        "the database is from an older vramreport); analysing now\n",
                vr_db_path(db));
    if (vr_analyze(db, err) == 0)
        return 0;
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err->msg);
    return vr_fail(err, "%s: the analysis is incomplete and could not be finished (%s); "
                        "import the traces again into a new --db",
                   vr_db_path(db), why);
}

static int render_to(vr_db *db, const cli_opts *o, vr_error *err)
{
    vr_format fmt;
    parse_format(o, &fmt);
    vr_report_opts ro = {fmt, o->templates};
    vr_buf out = VR_BUF_INIT;
    double t = vr_now();
    int rc = vr_report_render(db, &ro, &out, err);
    vr_timing("render", t);
    if (rc == 0)
        rc = write_output(o->output, &out, err);
    vr_buf_free(&out);
    return rc;
}

static int parse_args(int argc, char **argv, cli_opts *o)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"format", required_argument, NULL, 'f'},
        {"db", required_argument, NULL, 'd'},     {"templates", required_argument, NULL, 't'},
        {"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0}};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:f:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': o->output = optarg; break;
        case 'f': o->format = optarg; break;
        case 'd': o->db_path = optarg; break;
        case 't': o->templates = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'h': fputs(usage_text, stdout); exit(0);
        case 'V': printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION); exit(0);
        default:
            return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    vr_format fmt;
    if (parse_format(o, &fmt) < 0)
        return usage_error("unknown format '%s' (use md, html or json)", o->format);
    return 0;
}

int main(int argc, char **argv)
{
    cli_opts o = {0};
    const char *cmd = argc > 1 ? argv[1] : NULL;
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
    if ((sub_import || sub_report) && !o.db_path)
        return usage_error("%s needs --db FILE", sub_import ? "import" : "report");
    if (!sub_report && nfiles == 0)
        return usage_error("%s", "no input files (see the examples in --help)");

    char **files = argv + optind;
    if (!sub_import && (rc = check_output_target(&o, files, nfiles)) != 0)
        return rc;
    watch_signals();
    vr_error err = {{0}};
    vr_db *db = vr_db_open(o.db_path, &err);
    if (!db) {
        fprintf(stderr, "vramreport: %s\n", err.msg);
        return EXIT_DATA;
    }
    /* Again, now that a new --db exists: `--db x.db -o x.db`. */
    if (!sub_import && (rc = check_output_target(&o, files, nfiles)) != 0) {
        vr_db_close(db);
        return rc;
    }
    int failed = sub_report ? finish_analysis(db, &o, &err) < 0
                            : import_all(db, files, nfiles, &o, &err) < 0;
    if (!failed && !sub_import)
        failed = render_to(db, &o, &err) < 0;
    vr_db_close(db);
    if (failed) {
        fprintf(stderr, "vramreport: %s\n", err.msg);
        return EXIT_DATA;
    }
    return 0;
}
