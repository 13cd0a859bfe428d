/*-*** live_at_peak.h: what was live at a device's peak, and where it was made ***/
/*
 * By module and by line (docs/breakdown.md): the allocations live at the peak
 * grouped by category, then by module path and user frame (when the peak's
 * source records Python frames or allocation stacks: the locate pass), or
 * by category and operator (when it does not). Each level keeps its
 * largest groups and sums the rest into a "more" object, so the document
 * stays small whatever the trace. Keys: docs/json.md, devices[].
 */
#ifndef VR_LIVE_AT_PEAK_H
#define VR_LIVE_AT_PEAK_H

#include <cjson/cJSON.h>

#include "db/db.h"
#include "util/error.h"

/* Adds live_at_peak_by, locations_recorded, live_at_peak_groups,
 * live_at_peak_groups_more and the grouped totals to `dev` (the device's
 * database id and the memory event of its peak, -1 when none). */
int vr_live_at_peak_add(vr_db *db, cJSON *dev, long long device, long long peak_event,
                        vr_error *err);

#endif
