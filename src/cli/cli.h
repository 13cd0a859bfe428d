/*-*** cli.h: the subcommands, one table in main.c ***/
/*
 * main.c looks argv[1] up in its table of vr_cli_command (name, function,
 * synopsis) and runs that subcommand with argv from its name on; when
 * argv[1] names none, the first entry: the run (INPUT... -o REPORT).
 * --help's "Usage:" lines are the table's synopses, in its order. Each
 * subcommand is a file of cli/:
 *   report.c    the run, `import` and `report`: import -> analyze ->
 *               render through the library's stages (options.c parses
 *               their command line, output.c writes the report file)
 *   estimate.c  `estimate`: the memory estimator's options and tables
 *   capture.c   `capture-help`: where the capture kit is, how to use it
 *   diff.c      `diff`: two runs compared (render/diff/diff.h)
 *   merge.c     `merge`: per-rank databases into one job's (db/merge.h)
 *   stages.c    import -> analyze, shared by report.c and diff.c
 * A new subcommand is a file here and a line in main.c's table.
 *
 * Ownership: argv's strings are the caller's for the whole run. The CLI
 * is the one place that prints: each subcommand says its own messages
 * on stderr (the library hands them up as vr_error values and warning
 * lines) and returns the exit status.
 */
#ifndef VR_CLI_H
#define VR_CLI_H

/* Exit statuses (documented in --help and the man page). */
enum { VR_EXIT_DATA = 1, VR_EXIT_USAGE = 2, VR_EXIT_PARTIAL = 3 };

typedef struct vr_cli_command vr_cli_command;

struct vr_cli_command {
    const char *name; /* argv[1]; NULL for the first entry, the run */
    /* argv[0] is the name (the program's for the run); `all` is the
     * table, ended by an entry without a function. Returns the exit
     * status. */
    int (*run)(int argc, char **argv, const vr_cli_command *all);
    const char *synopsis; /* its "Usage:" line, after "vramreport " */
};

/* report.c */
int vr_cli_run(int argc, char **argv, const vr_cli_command *all);
int vr_cli_import(int argc, char **argv, const vr_cli_command *all);
int vr_cli_report(int argc, char **argv, const vr_cli_command *all);
/* estimate.c: prints to stdout, errors to stderr; 0, or 2 on a usage
 * error. */
int vr_cli_estimate(int argc, char **argv, const vr_cli_command *all);
/* capture.c */
int vr_cli_capture_help(int argc, char **argv, const vr_cli_command *all);
/* diff.c: 0, 1 when a side cannot be read, 2 on a usage error, 3 when
 * --fail-on-growth's percentage was passed or a side's input failed. */
int vr_cli_diff(int argc, char **argv, const vr_cli_command *all);
/* merge.c: per-rank databases into one job database (db/merge.h); 0, 1
 * when a database cannot be merged (nothing written), 2 on a usage
 * error. */
int vr_cli_merge(int argc, char **argv, const vr_cli_command *all);

#endif
