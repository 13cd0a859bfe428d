/*-*** kineto_weights.h: the weight operands of a traced op, from its shapes ***/
/*
 * A trace recorded with record_shapes=True gives each cpu_op's operands
 * as three parallel lists: "Input Dims" ([[1, 141, 512], [512, 512],
 * [512]]), "Input type" (["c10::BFloat16", ...]; "" for an absent
 * optional tensor) and "Input Strides". The ops that read weights take
 * them at fixed places of their ATen schema (aten::linear's weight is
 * operand 1, its bias 2; aten::embedding's table 0): a table here names
 * them, and reading one op's lists gives the bytes of its weights.
 *
 * Only ops of the table are read (vr_kw_op), so a trace's other ops cost
 * nothing beyond finding their name missing from it.
 *
 * Ownership: nothing is allocated; the spans point into the event.
 */
#ifndef VR_KINETO_WEIGHTS_H
#define VR_KINETO_WEIGHTS_H

#include <stdint.h>

#include "parse/json_pull.h"

/* The raw JSON of an event's shape lists (vr_json_raw spans). */
typedef struct {
    vr_json_str dims, types, strides;
    int has_dims, has_types, has_strides;
} vr_kw_shapes;

#define VR_KW_SHAPE_MAX 96 /* the first weight's "dtype[d0,d1,...]", cut: not kept */

typedef struct {
    int64_t bytes;               /* the weight operands' bytes, saturated */
    int64_t buffer_bytes;        /* running statistics (batch_norm, instance_norm) */
    int64_t weight_bytes;        /* the first weight operand's bytes; -1: not counted */
    int tensors;                 /* weight operands counted */
    int uncounted;               /* present but not counted: unknown dtype */
    int unreadable;              /* present but not counted: dims not a list of integers >= 0 */
    int saturated;               /* a product or a sum passed 2^63 - 1 */
    char shape[VR_KW_SHAPE_MAX]; /* "" when not known */
} vr_kw_result;

/* The place of the op named `name` in the table of ops that read
 * weights, or -1. */
int vr_kw_op(const vr_json_str *name);

/* Reads op `op`'s weight operands from its shapes. 1 when it has any
 * (counted or not), 0 when none is present (a layer_norm without affine
 * weights) or the lists cannot be read at all (then r->unreadable is
 * set when a list was not a list). */
int vr_kw_read(int op, const vr_kw_shapes *s, vr_kw_result *r, vr_json_faults *faults);

/* The size in bytes of one element of the dtype the profiler names
 * ("c10::BFloat16": 2, "float": 4), or 0 when it is not known. */
int vr_kw_dtype_size(const char *name, size_t len);

#endif
