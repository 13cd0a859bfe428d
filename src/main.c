/* vramreport: the command line. argv[1] names a subcommand of the table
 * below, or none (the run: INPUT... -o REPORT); each is a file of cli/
 * (cli.h), and everything they do goes through the library's stages. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "util/alloc.h"

/* The first entry runs when argv[1] names no other; --help lists the
 * synopses in this order. */
static const vr_cli_command commands[] = {
    {NULL, vr_cli_run, "[OPTIONS] INPUT... [-o REPORT]"},
    {"import", vr_cli_import, "import INPUT... --db RUN.db"},
    {"report", vr_cli_report, "report --db RUN.db [-o REPORT]"},
    {"diff", vr_cli_diff, "diff BEFORE AFTER [-o DIFF] [--fail-on-growth PCT] [--summary]"},
    {"merge", vr_cli_merge, "merge DB... --db JOB.db   (per-rank databases into one job's)"},
    {"estimate", vr_cli_estimate, "estimate --params N [OPTIONS]   (see estimate --help)"},
    {"capture-help", vr_cli_capture_help, "capture-help"},
    {NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    /* cJSON allocates by our policy (util/alloc.h): out of memory exits,
     * so no cJSON result needs a check for it. */
    cJSON_InitHooks(&(cJSON_Hooks){vr_xmalloc, free});
    for (size_t i = 1; argc > 1 && commands[i].run; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1, commands);
    return commands[0].run(argc, argv, commands);
}
