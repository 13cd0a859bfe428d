/*-*** model_estimate.c: the estimate beside the measured breakdown (model_estimate.h) ***/
#include "render/results/model_estimate.h"

#include <stdio.h>
#include <string.h>

#include "estimate/estimate.h"
#include "render/results/doc.h"

/* PyTorch creates parameters in fp32 unless told otherwise; a model cast
 * to bf16 or fp16 has twice the parameters this reads. */
static const char assumed_dtype[] = "fp32";

/* The training optimizer assumed: the commonest (AdamW, two fp32 moments).
 * A peak with neither gradients nor optimizer state is inference. */
static const char training_optimizer[] = "adamw";
static const char inference_optimizer[] = "none";

static long long category_bytes(const cJSON *breakdown, const char *category)
{
    long long v;
    return vr_results_int(cJSON_GetObjectItemCaseSensitive(breakdown, category), &v) ? v : 0;
}

static void add_part(cJSON *parts, const char *category, long long measured, long long estimated)
{
    char num[32]; /* raw: exact beyond 2^53 */
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "category", category);
    snprintf(num, sizeof num, "%lld", measured);
    cJSON_AddItemToObject(row, "measured_bytes", cJSON_CreateRaw(num));
    snprintf(num, sizeof num, "%lld", estimated);
    cJSON_AddItemToObject(row, "estimated_bytes", cJSON_CreateRaw(num));
    cJSON_AddItemToArray(parts, row);
}

/* The dtype the file says the weights are held in: the evidence of the
 * inference weights-read-by-forward (a trace's shapes), or NULL. */
static const char *stated_dtype(const cJSON *dev)
{
    const cJSON *row, *e;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(dev, "explained"))
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(row, "evidence"))
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(e, "value");
        if (cJSON_IsString(name) && strcmp(name->valuestring, "weights_dtype") == 0 &&
            cJSON_IsString(value) && vr_estimate_dtype_find(value->valuestring))
            return value->valuestring;
    }
    return NULL;
}

static cJSON *estimate_object(const cJSON *dev, const cJSON *breakdown)
{
    long long param = category_bytes(breakdown, "parameter");
    long long grad = category_bytes(breakdown, "gradient");
    long long state = category_bytes(breakdown, "optimizer_state");
    const char *stated = stated_dtype(dev);
    const vr_estimate_dtype *dtype = vr_estimate_dtype_find(stated ? stated : assumed_dtype);
    int training = grad > 0 || state > 0;
    vr_estimate_input in;
    vr_estimate_input_init(&in);
    in.params = vr_estimate_params_from_bytes(param, dtype);
    if (in.params > VR_ESTIMATE_MAX_PARAMS)
        in.params = VR_ESTIMATE_MAX_PARAMS;
    in.dtype = dtype;
    in.optimizer =
        vr_estimate_optimizer_find(training ? training_optimizer : inference_optimizer);
    vr_estimate e;
    vr_error err = VR_ERROR_INIT;
    if (in.params <= 0 || !in.optimizer || vr_estimate_compute(&in, &e, &err) < 0)
        return cJSON_CreateNull();
    cJSON *obj = cJSON_CreateObject();
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)in.params);
    cJSON_AddItemToObject(obj, "params", cJSON_CreateRaw(num));
    cJSON_AddStringToObject(obj, "dtype", dtype->name);
    cJSON_AddStringToObject(obj, "optimizer", in.optimizer->name);
    char said[192];
    if (stated)
        snprintf(said, sizeof said, "%s weights (the trace's shapes say so)%s", dtype->name,
                 training ? " trained with AdamW (two fp32 moments)"
                          : ", inference: the peak holds no gradients and no optimizer state");
    cJSON_AddStringToObject(
        obj, "assumption",
        stated     ? said
        : training ? "fp32 weights (PyTorch's default) trained with AdamW (two fp32 moments); "
                     "a model held in bf16 or fp16 has twice the parameters"
                   : "fp32 weights (PyTorch's default), inference: the peak holds no gradients "
                     "and no optimizer state; a model held in bf16 or fp16 has twice the "
                     "parameters");
    cJSON *parts = cJSON_AddArrayToObject(obj, "parts");
    add_part(parts, "parameter", param, e.per_gpu.weights);
    add_part(parts, "gradient", grad, e.per_gpu.gradients);
    add_part(parts, "optimizer_state", state,
             e.per_gpu.optimizer_state + e.per_gpu.master_weights);
    return obj;
}

void vr_model_estimate_add(cJSON *dev)
{
    const cJSON *breakdown = cJSON_GetObjectItemCaseSensitive(dev, "peak_breakdown");
    cJSON *est = cJSON_IsObject(breakdown) && category_bytes(breakdown, "parameter") > 0
                     ? estimate_object(dev, breakdown)
                     : cJSON_CreateNull();
    cJSON_AddItemToObject(dev, "estimate", est);
}
