/*-*** peak_by_module.h: which part of the model held the memory at the peak ***/
/*
 * What was live at a device's peak (as live_at_peak.h groups it: the
 * peak's source, its allocations and its blocks in use since before the
 * record) by module, rolled up: a module's figures include its
 * submodules', and the modules are shown at the depth where they tell
 * the parts apart (docs/breakdown.md, "By module"): the largest ten, the
 * rest summed, and what was in no module. Keys: docs/json.md, devices[].
 */
#ifndef VR_PEAK_BY_MODULE_H
#define VR_PEAK_BY_MODULE_H

#include <cjson/cJSON.h>

#include "db/db.h"
#include "util/error.h"

/* Adds peak_by_module, peak_by_module_more, peak_by_module_outside,
 * peak_by_module_unrecorded_bytes and peak_by_module_named_by to `dev`
 * (the device's database id and the memory event of its peak, -1 when
 * none; dev's peak_allocated_bytes is read). */
int vr_peak_by_module_add(vr_db *db, cJSON *dev, long long device, long long peak_event,
                          vr_error *err);

#endif
