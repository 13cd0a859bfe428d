/*-*** test_estimate.c: unit tests of the estimator's library module ***/
/*
 * The pieces tests/estimate.sh cannot reach through the command line: the
 * parameter count a measured byte count implies, the count parser's edges,
 * GPU name matching, rounding of odd sizes under sharding, and the errors
 * the library returns as values. Expected figures are worked by hand in
 * the comments.
 */
#include <stdint.h>
#include <string.h>

#include "estimate/estimate.h"

#include "harness.h"

static const vr_estimate_dtype *dtype(const char *name)
{
    return vr_estimate_dtype_find(name);
}

static void params_from_bytes(void)
{
    /* 7e9 bf16 weights are 14e9 bytes; 14e9 bytes of fp32 are 3.5e9. */
    INT_EQ(vr_estimate_params_from_bytes(INT64_C(14000000000), dtype("bf16")),
           INT64_C(7000000000), "14e9 bytes of bf16 are 7e9 parameters");
    INT_EQ(vr_estimate_params_from_bytes(INT64_C(14000000000), dtype("fp32")),
           INT64_C(3500000000), "14e9 bytes of fp32 are 3.5e9 parameters");
    INT_EQ(vr_estimate_params_from_bytes(1000, dtype("int4")), 2000,
           "1000 bytes of int4 are 2000 parameters");
    INT_EQ(vr_estimate_params_from_bytes(3, dtype("fp16")), 2,
           "3 bytes of fp16: 1.5 parameters, rounded to 2");
    INT_EQ(vr_estimate_params_from_bytes(0, dtype("bf16")), 0, "no bytes, no parameters");
    INT_EQ(vr_estimate_params_from_bytes(100, NULL), 0, "no dtype: 0");
    INT_EQ(vr_estimate_params_from_bytes(INT64_MAX, dtype("int4")), INT64_MAX,
           "an absurd byte count saturates instead of overflowing");
}

static void parse_count(void)
{
    static const struct {
        const char *text;
        int64_t want;
    } good[] = {
        {"7e9", INT64_C(7000000000)},
        {"7B", INT64_C(7000000000)},
        {"7b", INT64_C(7000000000)},
        {"1.5T", INT64_C(1500000000000)},
        {"350M", INT64_C(350000000)},
        {"125k", 125000},
        {"7000000000", INT64_C(7000000000)},
        {"6.7e9", INT64_C(6700000000)},
        {"1", 1},
        {"1e15", INT64_C(1000000000000000)},
    };
    static const char *const bad[] = {"",    "abc", "7x",       "7BB",   "0",    "-5",    "1e16",
                                      "nan", "inf", "0.4",      "1e999", "0x10", "0X1p4", "010",
                                      "+5",  " 5",  "infinity", "NaN",   ".5B",  "7e"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        int64_t v = -1;
        vr_error err = VR_ERROR_INIT;
        INT_EQ(vr_estimate_parse_count(good[i].text, &v, &err), 0, "'%s' parses", good[i].text);
        INT_EQ(v, good[i].want, "'%s' is %lld", good[i].text, (long long)good[i].want);
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int64_t v = -1;
        vr_error err = VR_ERROR_INIT;
        int rc = vr_estimate_parse_count(bad[i], &v, &err);
        OK(rc < 0 && err.code == VR_ERR_USAGE && err.msg[0], "'%s' is refused as a usage error",
           bad[i]);
    }
}

static void gpu_names(void)
{
    static const struct {
        const char *text, *want;
    } names[] = {
        {"H100-80GB", "H100-80GB"},
        {"h100", "H100-80GB"},
        {"NVIDIA H100 80GB HBM3", "H100-80GB"},
        {"NVIDIA H100 PCIe", "H100-PCIe"},
        {"H100 NVL", "H100-NVL"},
        {"h200", "H200-141GB"},
        {"A100-40GB", "A100-40GB"},
        {"a100-pcie-40gb", "A100-40GB"},
        {"NVIDIA A100-SXM4-80GB", "A100-80GB"},
        {"4090", "RTX-4090"},
        {"rtx 4090", "RTX-4090"},
        {"GeForce RTX 3090", "RTX-3090"},
        {"MI300X", "MI300X"},
        {"AMD Instinct MI300X", "MI300X"},
        {"Tesla T4", "T4"},
        {"L4", "L4"},
        {"l40s", "L40S"},
        {"V100-32GB", "V100-32GB"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        vr_error err = VR_ERROR_INIT;
        const vr_estimate_gpu *g = vr_estimate_gpu_find(names[i].text, &err);
        STR_EQ(g ? g->name : err.msg, names[i].want, "'%s' is %s", names[i].text, names[i].want);
    }
    static const char *const refused[] = {"A100", "V100", "h", "H1000", "", "---", "80GB"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        vr_error err = VR_ERROR_INIT;
        OK(!vr_estimate_gpu_find(refused[i], &err) && err.code == VR_ERR_USAGE,
           "'%s' is refused (%s)", refused[i], err.msg);
    }
    vr_error err = VR_ERROR_INIT;
    vr_estimate_gpu_find("A100", &err);
    OK(strstr(err.msg, "A100-40GB") && strstr(err.msg, "A100-80GB"),
       "the ambiguous 'A100' names both: %s", err.msg);
    const vr_estimate_gpu *h100 = vr_estimate_gpu_find("h100", &err);
    INT_EQ(h100 ? h100->capacity : 0, INT64_C(80) << 30, "H100-80GB holds 80 GiB");
}

static vr_estimate_input base(int64_t params, const char *dt, const char *opt)
{
    vr_estimate_input in;
    vr_estimate_input_init(&in);
    in.params = params;
    in.dtype = dtype(dt);
    in.optimizer = vr_estimate_optimizer_find(opt);
    return in;
}

static void odd_sizes(void)
{
    /* 3 int4 parameters are 1.5 bytes: 2. Over 2 GPUs with ZeRO-3, 7 bytes
     * of bf16 weights (3.5 params: impossible) do not arise, but 3 params
     * of bf16 are 6 bytes, gradients 6, master 12, moments 24: over 4
     * GPUs, ceil(6/4) = 2, ceil(12/4) = 3, ceil(24/4) = 6. */
    vr_estimate e;
    vr_error err = VR_ERROR_INIT;
    vr_estimate_input in = base(3, "int4", "none");
    INT_EQ(vr_estimate_compute(&in, &e, &err), 0, "3 int4 parameters: computed");
    INT_EQ(e.whole.weights, 2, "1.5 bytes round up to 2");
    in = base(3, "bf16", "adamw");
    in.gpus = 4;
    in.zero = 3;
    INT_EQ(vr_estimate_compute(&in, &e, &err), 0, "3 parameters over 4 GPUs: computed");
    INT_EQ(e.per_gpu.weights, 2, "6 bytes over 4 GPUs: 2 each (rounded up)");
    INT_EQ(e.per_gpu.master_weights, 3, "12 bytes over 4 GPUs: 3 each");
    INT_EQ(e.per_gpu.optimizer_state, 6, "24 bytes over 4 GPUs: 6 each");
    in = base(1000, "int8", "adamw");
    INT_EQ(vr_estimate_compute(&in, &e, &err), 0, "int8 training: computed");
    INT_EQ(e.gradient_bits, 16, "int8 weights keep 16-bit gradients");
    INT_EQ(e.whole.total, 1000 * (1 + 2 + 4 + 8), "int8 adamw: 1 + 2 + 4 + 8 bytes/param");
}

static void errors_as_values(void)
{
    vr_estimate e;
    vr_error err = VR_ERROR_INIT;
    vr_estimate_input in = base(1000, "bf16", "adamw");
    in.zero = 5;
    OK(vr_estimate_compute(&in, &e, &err) < 0 && err.code == VR_ERR_USAGE, "ZeRO-5: %s", err.msg);
    in = base(1000, "bf16", "adamw");
    in.seq = 128;
    OK(vr_estimate_compute(&in, &e, &err) < 0 && err.code == VR_ERR_USAGE, "a partial shape: %s",
       err.msg);
    in = base(0, "bf16", "adamw");
    OK(vr_estimate_compute(&in, &e, &err) < 0, "no parameters: %s", err.msg);
    in = base(1000, "bf16", "adamw");
    in.optimizer = NULL;
    OK(vr_estimate_compute(&in, &e, &err) < 0, "no optimizer: %s", err.msg);
    in = base(1000, "bf16", "adamw");
    in.seq = in.hidden = in.layers = in.heads = INT64_C(1) << 40;
    OK(vr_estimate_compute(&in, &e, &err) < 0 && err.code == VR_ERR_USAGE,
       "a shape that overflows: %s", err.msg);
}

/* Names as nvidia-smi, gpustat, Kineto's deviceProperties and ROCm print
 * them, to the table's entry and its datasheet figures; look-alikes that
 * are other cards match nothing. */
static void reported_names(void)
{
    static const struct {
        const char *text, *want, *memory;
        int64_t gbs; /* GB/s */
    } names[] = {
        {"NVIDIA A100-SXM4-80GB", "A100-80GB", "HBM2e", 2039},
        {"NVIDIA A100 80GB PCIe", "A100-80GB-PCIe", "HBM2e", 1935},
        {"NVIDIA A100-PCIE-40GB", "A100-40GB", "HBM2", 1555},
        {"NVIDIA A100-SXM4-40GB", "A100-40GB", "HBM2", 1555},
        {"Tesla V100-SXM2-16GB", "V100-16GB", "HBM2", 900},
        {"Tesla V100-PCIE-32GB", "V100-32GB", "HBM2", 900},
        {"NVIDIA H100 80GB HBM3", "H100-80GB", "HBM3", 3350},
        {"NVIDIA H100 PCIe", "H100-PCIe", "HBM2e", 2000},
        {"NVIDIA H100 NVL", "H100-NVL", "HBM3", 3900},
        {"NVIDIA H200", "H200-141GB", "HBM3e", 4800},
        {"NVIDIA GeForce RTX 4090", "RTX-4090", "GDDR6X", 1008},
        {"NVIDIA GeForce RTX 3090", "RTX-3090", "GDDR6X", 936},
        {"NVIDIA RTX A6000", "RTX-A6000", "GDDR6", 768},
        {"NVIDIA L40S", "L40S", "GDDR6", 864},
        {"NVIDIA L4", "L4", "GDDR6", 300},
        {"Tesla T4", "T4", "GDDR6", 320},
        {"NVIDIA A10", "A10", "GDDR6", 600},
        {"NVIDIA A10G", "A10G", "GDDR6", 600},
        {"AMD Instinct MI300X", "MI300X", "HBM3", 5300},
        {"AMD Instinct MI250X/MI250", "MI250X", "HBM2e", 3277},
        {"nvidia a100-sxm4-80gb", "A100-80GB", "HBM2e", 2039},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const vr_estimate_gpu *g = vr_estimate_gpu_match(names[i].text);
        STR_EQ(g ? g->name : "(none)", names[i].want, "'%s' is %s", names[i].text, names[i].want);
        STR_EQ(g ? g->memory_type : "(none)", names[i].memory, "'%s' has %s", names[i].text,
               names[i].memory);
        INT_EQ(g ? g->bandwidth : 0, names[i].gbs * INT64_C(1000000000), "'%s': %lld GB/s",
               names[i].text, (long long)names[i].gbs);
    }
    static const char *const others[] = {"NVIDIA L40",
                                         "NVIDIA GeForce RTX 3090 Ti",
                                         "Tesla V100S-PCIE-32GB",
                                         "NVIDIA GH200 480GB",
                                         "NVIDIA GeForce RTX 2080 ...",
                                         "NVIDIA RTX 6000 Ada Generation",
                                         "NVIDIA H100",
                                         "",
                                         "A100"};
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        OK(vr_estimate_gpu_match(others[i]) == NULL, "'%s' is none of the table's", others[i]);
    OK(vr_estimate_gpu_match(NULL) == NULL, "no name, no GPU");
    char longname[400];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    OK(vr_estimate_gpu_match(longname) == NULL, "a 399-character name: none, no overrun");
}

int main(void)
{
    RUN(params_from_bytes);
    RUN(parse_count);
    RUN(gpu_names);
    RUN(reported_names);
    RUN(odd_sizes);
    RUN(errors_as_values);
    return harness_summary();
}
