/*-*** options.h: the command line of the run, `import` and `report` ***/
/*
 * Parses the options into vr_cli_opts (whose strings point into argv)
 * and checks, before any work, everything they ask that can be checked:
 * each mistake is one line on stderr and VR_EXIT_USAGE (cli.h).
 */
#ifndef VR_CLI_OPTIONS_H
#define VR_CLI_OPTIONS_H

#include <stdint.h>

#include "cli/cli.h"
#include "render/report.h"

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
    int follow_links;    /* --follow-links: links out of a folder too */
    unsigned jobs;       /* --jobs: files imported at once (0: one per core) */
    int summary;         /* --summary: the short Markdown (verdict, breakdown, advice) */
    const char *fail_on; /* --fail-on: kinds, comma-separated, or "any" */
    /* --capacity: devices' capacity where no input states it (0: none) */
    int64_t capacity_bytes;
    const char *capacity_said;
} vr_cli_opts;

/* Says "vramreport: <fmt with arg>" and the --help hint; VR_EXIT_USAGE. */
int vr_cli_usage_error(const char *fmt, const char *arg);

/* getopt_long over argv (optind is left at the first input); --help
 * prints the usage (the synopses of `all`) and exits 0, --version the
 * version. 0, or the exit status of a usage error (said). */
int vr_cli_parse(int argc, char **argv, const vr_cli_command *all, vr_cli_opts *o);

/* --capacity's value (a size such as 80GiB, or a GPU of the estimate's
 * table) into o->capacity_bytes and capacity_said; 0, or the exit status
 * of a usage error (said). `diff` takes it too. */
int vr_cli_parse_capacity(const char *s, vr_cli_opts *o);

/* 0, or -1 for an unknown --format, -2 for an output whose name does not
 * say its format. Standard output gets Markdown. */
int vr_cli_format(const vr_cli_opts *o, vr_format *fmt);

/* The output's folder, its name's format, and that it is neither the
 * database nor an input; `report`: that the database exists. 0 or the
 * exit status (said). */
int vr_cli_check_up_front(const vr_cli_opts *o, int sub_import, int sub_report, char **files,
                          int n);
/* That the output is neither the database nor an input (again once a
 * new --db exists). */
int vr_cli_check_output_target(const vr_cli_opts *o, char **files, int n);

/* VRAMREPORT_DB_TIMEOUT in ms (default VR_DB_WAIT_MS_DEFAULT); -1 when
 * it is not a whole number of seconds. */
int64_t vr_cli_db_wait_ms(void);

#endif
