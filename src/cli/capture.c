/* `vramreport capture-help`: where the capture kit is installed
 * (vramreport_capture.py in the configured pkgdatadir, VR_PKGDATADIR from
 * Makefile.am) and what a training script adds to record what vramreport
 * reads. `--path` prints the file's path alone, for scripts. The
 * environment's VRAMREPORT_DATADIR replaces pkgdatadir (a relocated
 * install; the tests). Prints only; owns nothing. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef VR_PKGDATADIR
#error "VR_PKGDATADIR (the installed data folder) must be defined by the build"
#endif

#define KIT_FILE "vramreport_capture.py"

static const char usage[] =
    "Usage: vramreport capture-help [--path]\n"
    "Says where the capture kit (" KIT_FILE ") is and how a training script\n"
    "uses it; --path prints the file's path alone. VRAMREPORT_DATADIR in the\n"
    "environment names the folder it is in when vramreport was moved.\n";

/* The how-to; each %s is the kit's folder. */
static const char how_to[] =
    "\n"
    "Add to the training script (torch >= 1.13; newer torch records more):\n"
    "\n"
    "    import sys; sys.path.insert(0, \"%s\")\n"
    "    import vramreport_capture\n"
    "    vramreport_capture.enable()   # allocator history on; a dump on every CUDA OOM\n"
    "    kw = vramreport_capture.profiler_kwargs(trace_dir=\"vramreport-capture/profiler\")\n"
    "    with torch.profiler.profile(**kw) as prof:   # optional: categories and stacks\n"
    "        train()\n"
    "\n"
    "On a CUDA out-of-memory error it writes vramreport-capture/<time>-<rank>-oom/:\n"
    "the allocator's snapshot with its history, memory_stats(), memory_summary()\n"
    "and nvidia-smi's view of the GPUs. vramreport_capture.dump(\"why\") writes one\n"
    "at any moment. Nothing it does can stop the training: what this torch lacks\n"
    "is skipped with a warning. Then:\n"
    "\n"
    "    vramreport vramreport-capture/ -o report.html\n"
    "\n"
    "Recording the history costs about 1 us per allocation, and host memory for\n"
    "the last max_entries (100000 by default); see docs/capture.md.\n";

static int print_help(const char *dir)
{
    printf("The capture kit, one Python file without dependencies:\n  %s/" KIT_FILE "\n", dir);
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/" KIT_FILE, dir);
    if (n < 0 || (size_t)n >= sizeof path || access(path, R_OK) != 0)
        printf("(not there: vramreport is not installed yet ('make install'); the file\n"
               "is share/vramreport/" KIT_FILE " in vramreport's sources)\n");
    printf(how_to, dir);
    return fflush(stdout) == 0 ? 0 : 1;
}

int vr_cli_capture_help(int argc, char **argv, const vr_cli_command *all)
{
    (void)all;
    const char *dir = getenv("VRAMREPORT_DATADIR");
    if (!dir || !dir[0])
        dir = VR_PKGDATADIR;
    if (argc == 2 && strcmp(argv[1], "--path") == 0)
        return printf("%s/" KIT_FILE "\n", dir) < 0 || fflush(stdout) != 0;
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "vramreport: capture-help: unexpected '%s'\n%s", argv[1], usage);
        return 2;
    }
    return print_help(dir);
}
