/*-*** explained.h: how the report knows what the peak's memory was ***/
/*
 * The device's "explained": one object per inference the analysis made
 * of memory no live allocation explains (table peak_explained, with its
 * peak_evidence; docs/breakdown.md, "How we know"), in the analysis's
 * order: {"category", "bytes", "rule", "confidence", "evidence": [{"name",
 * "value", "source"}]}; an empty list when it made none. And
 * "unknown_at_peak": what stays unknown, by why, {"before_record_bytes",
 * "unplaced_bytes", "undecided_bytes"} (null without a peak).
 *
 * Ownership: the device object is changed in place.
 */
#ifndef VR_RESULTS_EXPLAINED_H
#define VR_RESULTS_EXPLAINED_H

#include <cjson/cJSON.h>

#include "db/db.h"
#include "util/error.h"

int vr_explained_add(vr_db *db, cJSON *dev, long long id, vr_error *err);

#endif
