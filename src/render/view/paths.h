/*-*** paths.h: the job's files named from the folder they share ***/
/*
 * A snapshot's frames carry absolute paths ("D:\Dev\assignment2-systems\
 * cs336-basics\cs336_basics\model.py:532 in silu"); repeated on every
 * line of a stack they push the part that matters, the file and line, off
 * the screen. vr_view_paths finds the folder the job's own files share
 * (the longest common folder of the frames outside installed packages,
 * the standard library, generated code and the frames memory_viz leaves
 * out) and, when it is long enough to be worth it, strips it from every
 * frame of the view that starts with it: the devices' top sites (frame,
 * stack), largest allocations (where, stack), and what was live at the
 * peak by line (where, file). Each device is stripped of its own folder;
 * when all devices that have one share it, the view gains "path_root"
 * (that folder, as the inputs wrote it) and "path_root_code" (it as a
 * Markdown code span), else each such device "device_path_root" and
 * "device_path_root_code"; absent where no folder is stripped. The JSON
 * (no view) keeps the paths whole.
 *
 * Runs before vr_view_stacks (stacks.h), which copies the stacks it
 * shortens. Ownership: decorates the view in place.
 */
#ifndef VR_VIEW_PATHS_H
#define VR_VIEW_PATHS_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* The length of the folder part both paths share, ending at a separator
 * ('/' or '\'), of a and b's first a_len and b_len bytes; 0 for none. */
size_t vr_paths_common_folder(const char *a, size_t a_len, const char *b, size_t b_len);

/* The folder a device's own frames share (a device of the results
 * document or of the view, before vr_view_paths strips it), by the rule
 * above: a new string, NULL when none is worth stripping. */
char *vr_paths_device_root(const cJSON *dev);

void vr_view_paths(cJSON *view);

#endif
