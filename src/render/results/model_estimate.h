/*-*** model_estimate.h: what the estimator predicts for the model a report infers ***/
/*
 * When a device's peak breakdown has `parameter` bytes (docs/estimate.md), the
 * model's size can be inferred from them, and the estimator's arithmetic
 * (src/estimate) put beside what was measured. vr_model_estimate_add() sets the
 * device's "estimate": {params, dtype, optimizer, assumption, parts[]},
 * each part {category, measured_bytes, estimated_bytes} for parameter,
 * gradient and optimizer_state; null without parameter bytes. The
 * assumption (fp32 weights, or the dtype a trace's shapes say they are
 * held in: the evidence weights_dtype of "explained"; AdamW when the peak
 * holds gradients or optimizer state, else inference) is stated in
 * "assumption". Runs after the device's "explained".
 *
 * Ownership: the device object is changed in place.
 */
#ifndef VR_MODEL_ESTIMATE_H
#define VR_MODEL_ESTIMATE_H

#include <cjson/cJSON.h>

void vr_model_estimate_add(cJSON *dev);

#endif
