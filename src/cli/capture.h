/* `vramreport capture-help`: the capture kit's place and how to use it. */
#ifndef VR_CLI_CAPTURE_H
#define VR_CLI_CAPTURE_H

/* argv[0] is "capture-help"; returns the exit status. */
int vr_capture_help_run(int argc, char **argv);

#endif
