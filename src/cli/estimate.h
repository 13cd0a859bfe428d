/*-*** estimate.h: `vramreport estimate`, the command line of the estimator ***/
#ifndef VR_CLI_ESTIMATE_H
#define VR_CLI_ESTIMATE_H

/* argv[0] is "estimate"; returns the exit status (0, or 2 on a usage
 * error). Prints to stdout, errors to stderr. */
int vr_estimate_cli(int argc, char **argv);

#endif
