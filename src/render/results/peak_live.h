/* The allocations live at a device's peak, found once for the report's
 * parts that read them (peak_live.c). */
#ifndef VR_PEAK_LIVE_H
#define VR_PEAK_LIVE_H

#include "db/db.h"
#include "util/error.h"

/* Makes temp.peak_live hold the ids of the device's allocations live at
 * its peak event (in the peak's source), unless it does already: the
 * queries of report.sql that read them join it. -1 with err set when the
 * database fails. */
int vr_results_peak_live(vr_db *db, long long device, long long peak_event, vr_error *err);

/* Forgets every device's (a report is built from what the database holds
 * now: vr_results_build starts so). */
int vr_results_peak_live_reset(vr_db *db, vr_error *err);

#endif
