/*-*** nvsmi_qtext.h: the `nvidia-smi -q` text parser, a line at a time ***/
/*
 * `nvidia-smi -q` (alone, or repeated by -l) prints, for each reading, an
 * "==============NVSMI LOG==============" banner, a Timestamp, and a
 * section per GPU ("GPU 00000000:18:00.0") whose nesting is its
 * indentation. The parser keeps the chain of enclosing sections, so "Used"
 * is read as the framebuffer's only under "FB Memory Usage" (BAR1 and
 * Conf Compute have a Used too). Rows go through monitor.h (nvsmi_query.h).
 *
 * Line at a time so that a reader of several sections (a capture holding
 * -q output among others) can feed it the -q lines it finds:
 *   q = vr_nvsmi_qtext_init(&monitor);
 *   for each line: vr_nvsmi_qtext_line(q, line, len, number, cut, err);
 *   vr_nvsmi_qtext_finish(q, err);   (the last GPU; counts and warns)
 *   vr_nvsmi_qtext_free(q);
 * A Timestamp read sets monitor->ctx->clock to VR_CLOCK_WALL_LOCAL (the
 * caller sets VR_CLOCK_NONE first if nothing else gives times).
 *
 * Malformed lines (a figure that is not one, a process without a pid, a
 * cut line) are skipped and counted: finish() tallies them as
 * "malformed_event" and warns once with the first line's number.
 */
#ifndef VR_NVSMI_QTEXT_H
#define VR_NVSMI_QTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "import/monitor.h"

typedef struct vr_nvsmi_qtext vr_nvsmi_qtext;

/* Never NULL (allocation failure exits, util/alloc.h). */
vr_nvsmi_qtext *vr_nvsmi_qtext_init(vr_monitor *m);

/* One line without its end; `number` is for messages, `cut` set when the
 * line was longer than the caller keeps. -1 on a database error. */
int vr_nvsmi_qtext_line(vr_nvsmi_qtext *q, const char *line, size_t len, uint64_t number, int cut,
                        vr_error *err);

/* Ends the last GPU, tallies and warns what was skipped. */
int vr_nvsmi_qtext_finish(vr_nvsmi_qtext *q, vr_error *err);

void vr_nvsmi_qtext_free(vr_nvsmi_qtext *q);

#endif
