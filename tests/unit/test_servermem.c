/* Unit tests of the inference servers' memory lines (src/scan/servermem.c):
 * every wording reaches the job-log scanner (a needle in its label or the
 * text it requires), the figures of each server's wordings (real lines,
 * as tests/data/kv-cache/PROVENANCE.md lists them), sizes read 1024-based,
 * SGLang's K and V added, counts with thousands' commas, labels at word
 * starts only, and figures that cannot be left out. */
#include <stdint.h>
#include <string.h>

#include "scan/joblog_scan.h"
#include "scan/servermem.h"
#include "harness.h"

#define GIB(x) ((int64_t)((x)*1073741824.0 + 0.5))

static int64_t value_of(const vr_servermem *m, vr_servermem_figure f)
{
    for (size_t k = 0; k < m->n; k++)
        if (m->v[k].figure == f)
            return m->v[k].value;
    return -1;
}

static size_t match(const char *line, vr_servermem *m)
{
    return vr_servermem_match(line, strlen(line), m);
}

static void check_label(void *ud, const char *requires, const char *label)
{
    int *missing = ud;
    int ok = vr_joblog_has_needle(label, strlen(label)) ||
             (requires[0] && vr_joblog_has_needle(requires, strlen(requires)));
    if (!OK(ok, "wording '%s' (requires '%s') holds a scanner needle", label, requires))
        (*missing)++;
    if (!OK(vr_servermem_may_match(label, strlen(label)) ||
                (requires[0] && vr_servermem_may_match(requires, strlen(requires))),
            "wording '%s' (requires '%s') passes the quick refusal", label, requires))
        (*missing)++;
}

static void test_needles(void)
{
    int missing = 0;
    vr_servermem_labels(check_label, &missing);
    INT_EQ(missing, 0, "every server wording reaches the scanner");
}

static void test_vllm(void)
{
    vr_servermem m;
    INT_EQ(match("(VllmWorkerProcess pid=507) INFO 04-12 08:21:19 [worker.py:267] model weights "
                 "take 21.21GiB; non_torch_memory takes 0.20GiB; PyTorch activation peak memory "
                 "takes 0.37GiB; the rest of the memory reserved for KV Cache is 1.57GiB.",
                 &m),
           4, "vLLM 0.8's profiling line: four figures");
    STR_EQ(m.framework, "vllm", "vLLM's");
    INT_EQ(value_of(&m, VR_SM_WEIGHTS), GIB(21.21), "weights 21.21 GiB");
    INT_EQ(value_of(&m, VR_SM_NON_TORCH), GIB(0.20), "non-torch 0.20 GiB");
    INT_EQ(value_of(&m, VR_SM_ACTIVATION_PEAK), GIB(0.37), "activation peak 0.37 GiB");
    INT_EQ(value_of(&m, VR_SM_KV_CACHE), GIB(1.57), "KV cache 1.57 GiB");
    INT_EQ(m.tp_rank, -1, "no TP rank named");
    INT_EQ(match("INFO 12-13 02:10:29 distributed_gpu_executor.py:58] # GPU blocks: 189945, # "
                 "CPU blocks: 21845",
                 &m),
           2, "blocks: two counts");
    INT_EQ(value_of(&m, VR_SM_GPU_BLOCKS), 189945, "GPU blocks");
    INT_EQ(value_of(&m, VR_SM_CPU_BLOCKS), 21845, "CPU blocks");
    INT_EQ(match("GPU KV cache size: 178,880 tokens", &m), 1, "V1's KV cache size");
    INT_EQ(value_of(&m, VR_SM_KV_TOKENS), 178880, "178,880 tokens, the comma a thousands' one");
    INT_EQ(match("(Worker_TP0 pid=34322) INFO 05-06 20:59:59 [gpu_model_runner.py:4879] Model "
                 "loading took 12.66 GiB memory and 31.657031 seconds",
                 &m),
           1, "V1's model loading");
    INT_EQ(value_of(&m, VR_SM_WEIGHTS), GIB(12.66), "weights 12.66 GiB");
    INT_EQ(m.tp_rank, 0, "Worker_TP0: TP rank 0");
    INT_EQ(
        match("INFO 12-13 02:09:14 model_runner.py:1094] Loading model weights took 18.4902 GB",
              &m),
        1, "V0's weights");
    INT_EQ(value_of(&m, VR_SM_WEIGHTS), GIB(18.4902), "18.4902 GB read as GiB (vLLM's / 2**30)");
    INT_EQ(match("Loading weights took 24.84 seconds", &m), 0, "a time is no size");
    INT_EQ(match("Maximum concurrency for 1024 tokens per request: 2967.89x", &m), 0,
           "a ratio is no figure");
}

static void test_sglang(void)
{
    vr_servermem m;
    INT_EQ(match("[2026-01-31 13:50:39 TP1] KV Cache is allocated. #tokens: 300288, K size: "
                 "8.38 GB, V size: 5.59 GB",
                 &m),
           2, "SGLang's MHA pool: tokens and one KV figure");
    STR_EQ(m.framework, "sglang", "SGLang's");
    INT_EQ(value_of(&m, VR_SM_KV_TOKENS), 300288, "300288 tokens");
    INT_EQ(value_of(&m, VR_SM_KV_CACHE), GIB(8.38) + GIB(5.59), "K and V added");
    INT_EQ(m.tp_rank, 1, "TP1]: TP rank 1");
    INT_EQ(match("[2025-11-04 05:27:13 DP0 TP0 EP0] KV Cache is allocated. #tokens: 524288, KV "
                 "size: 17.16 GB",
                 &m),
           2, "the MLA pool's wording (memory_pool.py's format)");
    INT_EQ(value_of(&m, VR_SM_KV_CACHE), GIB(17.16), "KV size, not V size inside it");
    INT_EQ(m.tp_rank, 0, "TP0 among DP0 and EP0");
    INT_EQ(match("Load weight end. quant=fp8, fmt=e4m3, avail mem=12.25 GB, mem usage=125.65 GB.",
                 &m),
           1, "Load weight end: the weights");
    INT_EQ(value_of(&m, VR_SM_WEIGHTS), GIB(125.65), "mem usage 125.65 GB");
    INT_EQ(match("[2024-12-13 01:44:59 TP0] Load weight end. type=MistralForCausalLM, "
                 "dtype=torch.bfloat16, avail mem=9.69 GB",
                 &m),
           0, "before 2025 it says no usage: no figure");
    INT_EQ(match("mem usage=3.50 GB", &m), 0, "mem usage= without Load weight end is no line");
}

static void test_bad(void)
{
    vr_servermem m;
    OK(!vr_servermem_may_match(
           "rank 0 step 49: memory allocated 18.64 GiB, max reserved 20.29 GiB", 66),
       "a training log's memory line is refused at once");
    INT_EQ(match("model weights take 2000000.00TiB", &m), 0, "a size over 1 PiB: not read");
    OK(m.impossible, "and flagged");
    INT_EQ(match("# GPU blocks: 99999999999999999999", &m), 0, "a count past 10^15: not read");
    OK(m.impossible, "and flagged");
    INT_EQ(match("model weights take GiB", &m), 0, "no number: no figure");
    OK(!m.impossible, "and nothing impossible");
    INT_EQ(match("xmodel weights take 1 GiB", &m), 0, "a label inside a word is none");
    INT_EQ(match("# GPU blocks: 12.5", &m), 0, "a count with decimals is none");
    INT_EQ(match("# GPU blocks: 1,2345", &m), 1, "a comma not before three digits ends it");
    INT_EQ(value_of(&m, VR_SM_GPU_BLOCKS), 1, "so the count is 1");
}

int main(void)
{
    RUN(test_needles);
    RUN(test_vllm);
    RUN(test_sglang);
    RUN(test_bad);
    return harness_summary();
}
