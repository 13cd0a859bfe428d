/* The memory chart's series from a device's memory events (report.sql's
 * timeline), read in table order when that is time order but for a few
 * rows (chart_timeline.c). */
#ifndef VR_CHART_TIMELINE_H
#define VR_CHART_TIMELINE_H

#include <stdint.h>

#include "db/db.h"
#include "render/svg/chart_svg.h"
#include "util/error.h"

/* Adds the device's timeline to the chart's series 0 (allocated) and 1
 * (reserved), each time plus `shift` ns, in time order (ties by id). */
int vr_chart_fill_timeline(vr_db *db, vr_chart *c, int64_t device, int64_t shift, vr_error *err);

#endif
