/*-*** fuzz_nvsmi_q.c: libFuzzer target for the nvidia-smi -q text reader ***/
/* See fuzz_nvsmi.h. Built by `make fuzz` with every library source; seed
 * corpus: corpus-nvsmi-q/ (SEEDS.md). */
#define FUZZ_MARKER "==NVSMI LOG=="
#include "fuzz_nvsmi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_nvsmi(data, size, "==============NVSMI LOG==============\n", "nvsmi_query");
}
