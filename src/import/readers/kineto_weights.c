/* The weight operands of a traced op (kineto_weights.h). */
#include "import/readers/kineto_weights.h"

#include <stdio.h>
#include <string.h>

/* Where each op that reads weights takes them, by its ATen schema
 * (aten/src/ATen/native/native_functions.yaml):
 *   linear(input, weight, bias?)                    conv1d/2d/3d, convolution,
 *   _convolution, conv_transpose1d/2d/3d (input, weight, bias?, ...)
 *   embedding(weight, indices, ...)                 embedding_bag(weight, indices, offsets, ...)
 *   layer_norm(input, normalized_shape, weight?, bias?, eps, cudnn_enable)
 *   group_norm(input, num_groups, weight?, bias?, eps, cudnn_enabled)
 *   rms_norm(input, normalized_shape, weight?, eps?)
 *   batch_norm / instance_norm (input, weight?, bias?, running_mean?, running_var?, ...)
 * The calls nested in these (aten::convolution under aten::conv2d) carry
 * the same weights: the analysis counts only the outermost. -1 ends a
 * list. */
#define NONE -1
#define OP(lit) lit, sizeof lit - 1
static const struct {
    const char *name;
    size_t len;
    signed char weight[2], buffer[2];
} weight_ops[] = {
    {OP("aten::linear"), {1, 2}, {NONE, NONE}},
    {OP("aten::conv1d"), {1, 2}, {NONE, NONE}},
    {OP("aten::conv2d"), {1, 2}, {NONE, NONE}},
    {OP("aten::conv3d"), {1, 2}, {NONE, NONE}},
    {OP("aten::convolution"), {1, 2}, {NONE, NONE}},
    {OP("aten::_convolution"), {1, 2}, {NONE, NONE}},
    {OP("aten::conv_transpose1d"), {1, 2}, {NONE, NONE}},
    {OP("aten::conv_transpose2d"), {1, 2}, {NONE, NONE}},
    {OP("aten::conv_transpose3d"), {1, 2}, {NONE, NONE}},
    {OP("aten::embedding"), {0, NONE}, {NONE, NONE}},
    {OP("aten::embedding_bag"), {0, NONE}, {NONE, NONE}},
    {OP("aten::layer_norm"), {2, 3}, {NONE, NONE}},
    {OP("aten::group_norm"), {2, 3}, {NONE, NONE}},
    {OP("aten::rms_norm"), {2, NONE}, {NONE, NONE}},
    {OP("aten::batch_norm"), {1, 2}, {3, 4}},
    {OP("aten::instance_norm"), {1, 2}, {3, 4}},
};
#undef OP
#define N_WEIGHT_OPS (sizeof weight_ops / sizeof weight_ops[0])
#define MAX_PLACE 4 /* the last place any op of the table reads */

/* Element sizes of the dtypes as the profiler names them: caffe2's
 * TypeMeta names, which are the C++ type names as the compiler writes
 * them ("long int", "c10::BFloat16"). */
static const struct {
    const char *name;
    int size;
} dtypes[] = {
    {"float", 4},
    {"double", 8},
    {"c10::Half", 2},
    {"c10::BFloat16", 2},
    {"c10::Float8_e4m3fn", 1},
    {"c10::Float8_e5m2", 1},
    {"c10::Float8_e4m3fnuz", 1},
    {"c10::Float8_e5m2fnuz", 1},
    {"c10::Float8_e8m0fnu", 1},
    {"c10::Float4_e2m1fn_x2", 1},
    {"signed char", 1},
    {"unsigned char", 1},
    {"bool", 1},
    {"short int", 2},
    {"short", 2},
    {"int", 4},
    {"long int", 8},
    {"long", 8},
    {"long long int", 8},
    {"unsigned short", 2},
    {"short unsigned int", 2},
    {"unsigned int", 4},
    {"unsigned long", 8},
    {"long unsigned int", 8},
    {"c10::complex<c10::Half>", 4},
    {"c10::complex<float>", 8},
    {"c10::complex<double>", 16},
    {"c10::qint8", 1},
    {"c10::quint8", 1},
    {"c10::qint32", 4},
    {"c10::quint4x2", 1},
    {"c10::quint2x4", 1},
};

int vr_kw_dtype_size(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strlen(dtypes[i].name) == len && memcmp(dtypes[i].name, name, len) == 0)
            return dtypes[i].size;
    return 0;
}

int vr_kw_op(const vr_json_str *name)
{
    /* Every name of the table starts so: most ops end here. */
    if (name->len < 10 || memcmp(name->s, "aten::", 6) != 0 || name->has_escapes)
        return -1;
    for (size_t i = 0; i < N_WEIGHT_OPS; i++)
        if (weight_ops[i].len == name->len && memcmp(weight_ops[i].name, name->s, name->len) == 0)
            return (int)i;
    return -1;
}

/* 1: a weight, 2: a buffer, 0: neither, at place i of op. */
static int role_at(int op, int i)
{
    for (int k = 0; k < 2; k++) {
        if (weight_ops[op].weight[k] == i)
            return 1;
        if (weight_ops[op].buffer[k] == i)
            return 2;
    }
    return 0;
}

/* Appends to the shape text; cuts it (empties it for good) when full. */
static void shape_put(char *shape, size_t *len, int *cut, const char *text)
{
    size_t n = strlen(text);
    if (*cut || *len + n + 1 > VR_KW_SHAPE_MAX) {
        *cut = 1;
        return;
    }
    memcpy(shape + *len, text, n + 1);
    *len += n;
}

/* The elements of one operand: its dims, each counted once where its
 * stride is 0 (a broadcast view reads the same elements again). 0 when
 * the dims are not a list of integers >= 0. `strides` may be NULL. */
static int read_elements(vr_json *dims, vr_json *strides, int64_t *elems, int *saturated,
                         char *shape, size_t *shape_len, int *cut)
{
    if (!vr_json_enter_array(dims)) {
        if (strides)
            vr_json_skip(strides);
        return 0;
    }
    int have_strides = strides && vr_json_enter_array(strides);
    int64_t n = 1;
    int ok = 1, first = 1;
    while (vr_json_next_element(dims)) {
        int64_t d = 0, st = 1;
        int more = have_strides && vr_json_next_element(strides);
        have_strides = more;
        if (more && !vr_json_int64(strides, &st))
            st = 1;
        if (vr_json_peek(dims) != VR_JSON_NUMBER) {
            ok = 0;
            vr_json_skip(dims);
            continue;
        }
        if (!vr_json_int64(dims, &d) || d < 0) { /* read, or skipped when inexact */
            ok = 0;
            continue;
        }
        char text[24];
        snprintf(text, sizeof text, first ? "%lld" : ",%lld", (long long)d);
        shape_put(shape, shape_len, cut, text);
        first = 0;
        int64_t factor = st == 0 && d > 0 ? 1 : d;
        if (__builtin_mul_overflow(n, factor, &n)) {
            n = INT64_MAX;
            *saturated = 1;
        }
    }
    /* A strides list longer than the dims: the rest is not read. */
    while (have_strides && vr_json_next_element(strides))
        vr_json_skip(strides);
    *elems = n;
    return ok && !dims->failed;
}

static void add_sat(int64_t *sum, int64_t v, int *saturated)
{
    if (__builtin_add_overflow(*sum, v, sum)) {
        *sum = INT64_MAX;
        *saturated = 1;
    }
}

/* One present operand at place i: counted into r, or not. */
static void read_operand(vr_kw_result *r, int role, const vr_json_str *type, vr_json *dims,
                         vr_json *strides)
{
    int first = r->tensors == 0 && r->uncounted == 0 && r->unreadable == 0 && role == 1;
    int size = type->has_escapes ? 0 : vr_kw_dtype_size(type->s, type->len);
    char shape[VR_KW_SHAPE_MAX];
    size_t len = 0;
    int cut = 0, saturated = 0;
    int64_t elems = 0;
    if (!size) {
        r->uncounted++;
        vr_json_skip(dims);
        if (strides)
            vr_json_skip(strides);
        return;
    }
    shape[0] = 0;
    char head[VR_KW_SHAPE_MAX];
    snprintf(head, sizeof head, "%.*s[", (int)type->len, type->s);
    shape_put(shape, &len, &cut, head);
    if (!read_elements(dims, strides, &elems, &saturated, shape, &len, &cut)) {
        r->unreadable++;
        return;
    }
    shape_put(shape, &len, &cut, "]");
    int64_t bytes;
    if (__builtin_mul_overflow(elems, (int64_t)size, &bytes)) {
        bytes = INT64_MAX;
        saturated = 1;
    }
    r->saturated |= saturated;
    if (role == 2) {
        add_sat(&r->buffer_bytes, bytes, &r->saturated);
        return;
    }
    r->tensors++;
    add_sat(&r->bytes, bytes, &r->saturated);
    if (first) {
        r->weight_bytes = bytes;
        if (!cut)
            memcpy(r->shape, shape, len + 1);
    }
}

int vr_kw_read(int op, const vr_kw_shapes *s, vr_kw_result *r, vr_json_faults *faults)
{
    memset(r, 0, sizeof *r);
    r->weight_bytes = -1;
    if (op < 0 || (size_t)op >= N_WEIGHT_OPS || !s->has_dims || !s->has_types)
        return 0;
    vr_json dj, tj, sj;
    vr_json_init(&dj, s->dims.s, s->dims.len, faults);
    vr_json_init(&tj, s->types.s, s->types.len, faults);
    vr_json_init(&sj, s->has_strides ? s->strides.s : "", s->has_strides ? s->strides.len : 0,
                 faults);
    if (!vr_json_enter_array(&dj) || !vr_json_enter_array(&tj)) {
        r->unreadable = 1;
        return 1;
    }
    int strides = s->has_strides && vr_json_enter_array(&sj);
    for (int i = 0; i <= MAX_PLACE; i++) {
        int more_s = strides && vr_json_next_element(&sj);
        strides = more_s;
        if (!vr_json_next_element(&dj) || !vr_json_next_element(&tj))
            break;
        int role = role_at(op, i);
        vr_json_str type;
        int is_string = vr_json_peek(&tj) == VR_JSON_STRING;
        if (!role || !is_string || !vr_json_string(&tj, &type) || type.len == 0) {
            /* Not a weight's place, or an absent optional tensor (""). */
            if (role && !is_string)
                r->unreadable++;
            if (!is_string || !role)
                vr_json_skip(&tj);
            vr_json_skip(&dj);
            if (more_s)
                vr_json_skip(&sj);
            continue;
        }
        read_operand(r, role, &type, &dj, more_s ? &sj : NULL);
    }
    return r->tensors + r->uncounted + r->unreadable > 0;
}
