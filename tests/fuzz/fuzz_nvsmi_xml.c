/*-*** fuzz_nvsmi_xml.c: libFuzzer target for the nvidia-smi -q -x reader ***/
/* See fuzz_nvsmi.h. Built by `make fuzz` with every library source; seed
 * corpus: corpus-nvsmi-xml/ (SEEDS.md). */
#define FUZZ_MARKER "<nvidia_smi_log"
#include "fuzz_nvsmi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_nvsmi(data, size, "<nvidia_smi_log/>\n", "nvsmi_xml");
}
