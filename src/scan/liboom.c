/* Out-of-memory wordings of other libraries (liboom.h). Each is a row of
 * the table below: the words that make a line the error (a marker and, for
 * phrases common outside GPU code, a second one), the words that make it
 * something else (TensorFlow's "not a failure" warning, a host
 * allocator's OOM), and how its figures are read. The texts are the
 * libraries' own (docs/formats/job-log-oom.md names where each comes from). */
#include "scan/liboom.h"

#include <stdint.h>
#include <string.h>

typedef enum {
    R_NONE,
    R_TF_BFC,       /* "trying to allocate 1.2GiB (rounded to 1288490240)" */
    R_TF_SHAPE,     /* "tensor with shape[32,512,512,64] and type float" */
    R_BYTES,        /* "allocate N bytes" / "allocating N bytes" / "(N bytes)" */
    R_CUPY,         /* "allocating N bytes (allocated so far: M bytes, limit set to: L bytes)" */
    R_CUPY_OLD,     /* "to allocate N bytes (total M bytes)" */
    R_CUDAMALLOC,   /* "cudaMalloc N bytes", "size N bytes", "on device N" */
    R_VLLM_STARTUP, /* "(19.77/22.05 GiB) on startup ... (0.9, 19.84 GiB)" */
    R_VLLM_KV,      /* "X GiB KV cache is needed" */
    R_NCCL          /* "host:pid:tid [3] ... NCCL WARN": the CUDA device */
} reader;

static const struct {
    const char *marker, *also, *unless;
    const char *wording, *family;
    int opens;
    reader read;
} wordings[] = {
    /* TensorFlow (tensorflow/core/common_runtime/bfc_allocator.cc,
     * framework/op_kernel.cc, python/framework/errors_impl.py) */
    {"ran out of memory trying to allocate", "Allocator (", "is not a failure", "tf-bfc", "tf", 1,
     R_TF_BFC},
    {"OOM when allocating tensor", NULL, "device:CPU:", "tf-oom", "tf", 0, R_TF_SHAPE},
    {"ResourceExhaustedError", NULL, "device:CPU:", "tf-resource-exhausted", "tf", 0, R_NONE},
    /* JAX / XLA (xla/stream_executor, xla/pjrt): the status code first */
    {"RESOURCE_EXHAUSTED: Out of memory", NULL, NULL, "xla", "xla", 0, R_BYTES},
    {"Resource exhausted: Out of memory", NULL, NULL, "xla", "xla", 0, R_BYTES},
    /* CuPy (cupy/cuda/memory.pyx) */
    {"Out of memory allocating", "(allocated so far:", NULL, "cupy", "cupy", 0, R_CUPY},
    {"out of memory to allocate", "(total ", NULL, "cupy", "cupy", 0, R_CUPY_OLD},
    /* the CUDA driver API's code, as TensorFlow's stream executor and
     * other C++ libraries print it */
    {"CUDA_ERROR_OUT_OF_MEMORY", NULL, NULL, "cuda-driver", "cuda-driver", 0, R_BYTES},
    {"CUBLAS_STATUS_ALLOC_FAILED", NULL, NULL, "cublas-alloc", "cublas", 0, R_NONE},
    {"CUDNN_STATUS_ALLOC_FAILED", NULL, NULL, "cudnn-alloc", "cudnn", 0, R_NONE},
    /* NCCL (src/include/checks.h: CUDACHECK's WARN) */
    {"Cuda failure 'out of memory'", NULL, NULL, "nccl", "nccl", 0, R_NCCL},
    {"Cuda failure 2 'out of memory'", NULL, NULL, "nccl", "nccl", 0, R_NCCL},
    /* a C++ library's own check of cudaMalloc (faiss, bitsandbytes, ...) */
    {"cudaMalloc", "out of memory", NULL, "cudaMalloc", "cudaMalloc", 0, R_CUDAMALLOC},
    /* vLLM's start-up checks (vllm/worker, vllm/v1/core/kv_cache_utils.py) */
    {"No available memory for the cache blocks", NULL, NULL, "vllm-no-kv-memory", "vllm", 0,
     R_NONE},
    {"that can be stored in KV cache", "max seq len", NULL, "vllm-kv-too-small", "vllm", 0,
     R_NONE},
    {"KV cache is needed, which is larger than the available KV cache memory", NULL, NULL,
     "vllm-kv-too-small", "vllm", 0, R_VLLM_KV},
    {"on startup is less than desired GPU memory utilization", NULL, NULL, "vllm-startup-free",
     "vllm", 0, R_VLLM_STARTUP},
};
#define NWORDINGS (sizeof wordings / sizeof *wordings)

static const char *find(const char *s, size_t n, const char *needle)
{
    return memmem(s, n, needle, strlen(needle));
}

int vr_liboom_match(const char *t, size_t n)
{
    for (size_t k = 0; k < NWORDINGS; k++) {
        if (!find(t, n, wordings[k].marker) ||
            (wordings[k].also && !find(t, n, wordings[k].also)))
            continue;
        if (wordings[k].unless && find(t, n, wordings[k].unless))
            return -1; /* the same words, no GPU failure */
        return (int)k;
    }
    return -1;
}

const char *vr_liboom_wording(int k)
{
    return wordings[k].wording;
}

const char *vr_liboom_family(int k)
{
    return wordings[k].family;
}

int vr_liboom_opens(int k)
{
    return wordings[k].opens;
}

/*-*** numbers ***/

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* "25,600,000" (commas: thousands, when `commas`) or "1610612736" at p:
 * 1 and the value (*used bytes read). */
static int read_number(const char *p, size_t n, int commas, int64_t *v, size_t *used)
{
    size_t i = 0, digits = 0;
    int64_t x = 0;
    for (; i < n && (is_digit(p[i]) ||
                     (commas && p[i] == ',' && digits && i + 1 < n && is_digit(p[i + 1])));
         i++) {
        if (p[i] == ',')
            continue;
        if (x > (INT64_MAX - 9) / 10)
            return 0;
        x = x * 10 + (p[i] - '0');
        digits++;
    }
    if (!digits)
        return 0;
    *v = x;
    *used = i;
    return 1;
}

static int read_count(const char *p, size_t n, int64_t *v, size_t *used)
{
    return read_number(p, n, 1, v, used);
}

/* Binary units as the libraries print them, with or without a blank
 * before them (TensorFlow's "1.2GiB", XLA's "8.00GiB", "17.79G"). */
static const struct {
    const char *name;
    int shift;
} units[] = {{"bytes", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40},
             {"KB", 10},   {"MB", 20},  {"GB", 30},  {"TB", 40},  {"K", 10},
             {"M", 20},    {"G", 30},   {"T", 40},   {"B", 0}};

/* A decimal "19.77" at p: its integer part, its fraction (frac / scale)
 * and its length; 0 when none. */
typedef struct {
    int64_t ip, frac, scale;
} decimal;

static size_t read_decimal(const char *p, size_t n, decimal *d)
{
    size_t i;
    d->frac = 0;
    d->scale = 1;
    if (!read_count(p, n, &d->ip, &i))
        return 0;
    if (i + 1 < n && p[i] == '.' && is_digit(p[i + 1]))
        for (i++; i < n && is_digit(p[i]); i++)
            if (d->scale < 1000000000) {
                d->frac = d->frac * 10 + (p[i] - '0');
                d->scale *= 10;
            }
    return i;
}

/* The unit at p (a blank before it or not): its shift, -1 when none. */
static int read_unit(const char *p, size_t n)
{
    size_t i = n > 0 && p[0] == ' ';
    for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
        size_t k = strlen(units[u].name);
        if (n - i < k || memcmp(p + i, units[u].name, k) != 0 ||
            (i + k < n &&
             ((p[i + k] >= 'a' && p[i + k] <= 'z') || (p[i + k] >= 'A' && p[i + k] <= 'Z'))))
            continue;
        return units[u].shift;
    }
    return -1;
}

/* The decimal in that unit, in bytes (rounded); 0 when out of range. */
static int scale_decimal(const decimal *d, int shift, int64_t *bytes)
{
    if (shift < 0 || d->ip > (INT64_MAX >> shift) - 1)
        return 0;
    *bytes =
        (d->ip << shift) +
        (int64_t)((((uint64_t)d->frac << shift) + (uint64_t)d->scale / 2) / (uint64_t)d->scale);
    return 1;
}

/* "1.2GiB" / "4.00 GiB" / "12582912 bytes" at p: 1 and bytes. */
static int read_size(const char *p, size_t n, int64_t *bytes)
{
    decimal d;
    size_t i = read_decimal(p, n, &d);
    return i && scale_decimal(&d, read_unit(p + i, n - i), bytes);
}

static void set(vr_oom *o, vr_oom_figure f, int64_t v)
{
    o->figure[f] = v;
    o->has |= 1u << f;
}

/* The size right after `label`, anywhere in the line. */
static int size_after(const char *t, size_t n, const char *label, int64_t *bytes)
{
    const char *p = find(t, n, label);
    if (!p)
        return 0;
    p += strlen(label);
    return read_size(p, (size_t)(t + n - p), bytes);
}

/* "N bytes" right after `label`. */
static int bytes_after(const char *t, size_t n, const char *label, int64_t *bytes)
{
    const char *p = find(t, n, label);
    if (!p)
        return 0;
    p += strlen(label);
    size_t used, rest = (size_t)(t + n - p);
    int64_t v;
    if (!read_count(p, rest, &v, &used) || rest - used < 6 || memcmp(p + used, " bytes", 6) != 0)
        return 0;
    *bytes = v;
    return 1;
}

/* The number right after `label`. */
static int count_after(const char *t, size_t n, const char *label, int64_t *v)
{
    const char *p = find(t, n, label);
    size_t used;
    if (!p)
        return 0;
    p += strlen(label);
    return read_count(p, (size_t)(t + n - p), v, &used);
}

/* A device index after `label`. */
static int index_after(const char *t, size_t n, const char *label, int64_t *v)
{
    return count_after(t, n, label, v) && *v < 1000000;
}

/* NCCL's prefix "host:pid:tid [cudaDev] file:line NCCL WARN": the device. */
static void nccl_device(const char *t, size_t n, vr_oom *o)
{
    const char *w = find(t, n, "NCCL WARN");
    if (!w)
        return;
    const char *open = w;
    while (open > t && w - open < 80 && *open != '[')
        open--;
    int64_t v;
    size_t used;
    if (*open != '[' || open == t || open[-1] != ' ' ||
        !read_count(open + 1, (size_t)(w - open - 1), &v, &used) || open[1 + used] != ']' ||
        v >= 1000000)
        return;
    o->device_idx = v;
}

/*-*** TensorFlow ***/

/* DataTypeString's names and their sizes (tensorflow/core/framework/types.cc). */
static const struct {
    const char *name;
    int size;
} tf_types[] = {{"float", 4},  {"half", 2},      {"bfloat16", 2},      {"double", 8},
                {"int8", 1},   {"uint8", 1},     {"int16", 2},         {"uint16", 2},
                {"int32", 4},  {"uint32", 4},    {"int64", 8},         {"uint64", 8},
                {"bool", 1},   {"complex64", 8}, {"complex128", 16},   {"qint8", 1},
                {"quint8", 1}, {"qint32", 4},    {"float8_e4m3fn", 1}, {"float8_e5m2", 1}};

static int tf_type_size(const char *t, size_t n)
{
    const char *p = find(t, n, " and type ");
    if (!p)
        return 0;
    p += 10;
    size_t rest = (size_t)(t + n - p), k = 0;
    while (k < rest && p[k] != ' ' && p[k] != ',')
        k++;
    for (size_t i = 0; i < sizeof tf_types / sizeof *tf_types; i++)
        if (strlen(tf_types[i].name) == k && memcmp(tf_types[i].name, p, k) == 0)
            return tf_types[i].size;
    return 0;
}

/* shape[32,512,512,64] (or "of shape [563354,256]") times the type's
 * size: the tensor the op asked for. */
static void tf_shape(const char *t, size_t n, vr_oom *o)
{
    const char *p = find(t, n, "shape[");
    if (!p && (p = find(t, n, "shape [")))
        p++;
    int size = tf_type_size(t, n);
    if (!p || !size)
        return;
    p += 6;
    const char *end = t + n;
    int64_t product = size;
    while (p < end && *p != ']') {
        int64_t dim;
        size_t used;
        if (!read_number(p, (size_t)(end - p), 0, &dim, &used))
            return;
        if (dim != 0 && product > INT64_MAX / dim)
            return; /* no tensor a GPU can hold */
        product *= dim;
        p += used;
        if (p < end && *p == ',')
            p++;
    }
    if (p < end)
        set(o, VR_OOM_REQUESTED, product);
}

static void tf_device(const char *t, size_t n, vr_oom *o)
{
    int64_t v;
    if (index_after(t, n, "device:GPU:", &v) || index_after(t, n, "(GPU_", &v) ||
        index_after(t, n, "by allocator GPU_", &v))
        o->device_idx = v;
}

int vr_liboom_tf_stats(const char *t, size_t n, vr_oom *o)
{
    const char *m = find(t, n, "MaxInUse:");
    if (!m)
        return 0;
    /* the block's lines before MaxInUse: "Limit:" then "InUse:" */
    size_t back = (size_t)(m - t) < 400 ? (size_t)(m - t) : 400;
    const char *from = m - back, *limit = NULL, *inuse = NULL;
    for (const char *p = from; (p = find(p, (size_t)(m - p), "Limit:")); p++)
        limit = p;
    for (const char *p = from; (p = find(p, (size_t)(m - p), "InUse:")); p++)
        inuse = p;
    int found = 0;
    int64_t v;
    size_t used;
    for (int k = 0; k < 2; k++) {
        const char *at = k ? inuse : limit;
        if (!at)
            continue;
        at += k ? 6 : 6;
        while (at < m && *at == ' ')
            at++;
        if (!read_count(at, (size_t)(m - at), &v, &used))
            continue;
        set(o, k ? VR_OOM_ALLOCATED : VR_OOM_ALLOWED, v);
        found = 1;
    }
    return found;
}

/*-*** the figures ***/

static void read_bytes(const char *t, size_t n, vr_oom *o)
{
    static const char *const labels[] = {"allocate ", "allocating ", "alloc ", "("};
    int64_t v;
    /* the exact count first ("failed to allocate 159.69M (167444480 bytes)"),
     * then a rounded size ("allocate 8.00GiB") */
    for (int exact = 1; exact >= 0; exact--)
        for (size_t k = 0; k < sizeof labels / sizeof *labels; k++)
            for (const char *p = t; (p = find(p, (size_t)(t + n - p), labels[k])); p++)
                if (exact ? bytes_after(p, (size_t)(t + n - p), labels[k], &v)
                          : k < 2 && size_after(p, (size_t)(t + n - p), labels[k], &v)) {
                    set(o, VR_OOM_REQUESTED, v);
                    return;
                }
}

/* vLLM's "Free memory on device cuda:1 (19.77/22.05 GiB) on startup is
 * less than desired GPU memory utilization (0.9, 19.84 GiB)": free and
 * capacity (one unit after both), what the utilization asks for. */
static void vllm_startup(const char *t, size_t n, vr_oom *o)
{
    const char *open = find(t, n, "on startup"), *end = t + n;
    while (open > t && *open != '(')
        open--;
    decimal f, c;
    size_t i = *open == '(' ? read_decimal(open + 1, (size_t)(end - open - 1), &f) : 0;
    const char *slash = open + 1 + i, *cap = slash + 1;
    size_t j = i && slash < end && *slash == '/' ? read_decimal(cap, (size_t)(end - cap), &c) : 0;
    int shift = j ? read_unit(cap + j, (size_t)(end - cap - j)) : -1;
    int64_t v, w;
    if (shift >= 0 && scale_decimal(&f, shift, &v) && scale_decimal(&c, shift, &w)) {
        set(o, VR_OOM_FREE, v);
        set(o, VR_OOM_CAPACITY, w);
    }
    const char *q = find(t, n, "utilization (");
    const char *comma = q ? memchr(q, ',', (size_t)(end - q)) : NULL;
    if (comma && comma + 2 < end && read_size(comma + 2, (size_t)(end - comma - 2), &v))
        set(o, VR_OOM_REQUESTED, v);
    if (index_after(t, n, "device cuda:", &v))
        o->device_idx = v;
}

void vr_liboom_figures(int k, const char *t, size_t n, vr_oom *o)
{
    int64_t v;
    switch (wordings[k].read) {
    case R_NONE:
        break;
    case R_TF_BFC:
        /* the rounded request is the allocator's own, in bytes */
        if (count_after(t, n, "(rounded to ", &v) || size_after(t, n, "trying to allocate ", &v))
            set(o, VR_OOM_REQUESTED, v);
        tf_device(t, n, o);
        break;
    case R_TF_SHAPE:
        tf_shape(t, n, o);
        tf_device(t, n, o);
        break;
    case R_BYTES:
        read_bytes(t, n, o);
        break;
    case R_CUPY:
        if (bytes_after(t, n, "allocating ", &v))
            set(o, VR_OOM_REQUESTED, v);
        if (bytes_after(t, n, "(allocated so far: ", &v)) /* what the pool took from CUDA */
            set(o, VR_OOM_RESERVED, v);
        if (bytes_after(t, n, "limit set to: ", &v))
            set(o, VR_OOM_ALLOWED, v);
        break;
    case R_CUPY_OLD:
        if (bytes_after(t, n, "to allocate ", &v))
            set(o, VR_OOM_REQUESTED, v);
        if (bytes_after(t, n, "(total ", &v))
            set(o, VR_OOM_RESERVED, v);
        break;
    case R_CUDAMALLOC:
        if (bytes_after(t, n, "cudaMalloc ", &v) || bytes_after(t, n, "size ", &v))
            set(o, VR_OOM_REQUESTED, v);
        if (index_after(t, n, "on device ", &v) || index_after(t, n, " dev ", &v))
            o->device_idx = v;
        break;
    case R_VLLM_STARTUP:
        vllm_startup(t, n, o);
        break;
    case R_NCCL:
        nccl_device(t, n, o);
        break;
    case R_VLLM_KV: {
        const char *p = find(t, n, " KV cache is needed");
        const char *s = p;
        while (s > t && s[-1] != ' ' && s[-1] != '(')
            s--;
        if (p && s > t && s - 1 > t) {
            const char *num = s - 1;
            while (num > t && num[-1] != ' ' && num[-1] != '(')
                num--;
            if (read_size(num, (size_t)(p - num), &v))
                set(o, VR_OOM_REQUESTED, v);
        }
        break;
    }
    }
}
