/*-*** fuzz_nvsmi_csv.c: libFuzzer target for the nvidia-smi CSV line parser ***/
/*
 * Any bytes, cut into lines, through vr_nvsmi_csv_line (headers, rows,
 * units, markers, surplus commas) and its finish; see nvsmi_lines.h. Built
 * by `make fuzz`; seeds in corpus-nvsmi/.
 */
#include "import/readers/nvsmi/nvsmi_csv.h"

struct fuzz_parser {
    vr_nvsmi_csv csv;
};

#include "nvsmi_lines.h"

static void fuzz_init(fuzz_parser *p, vr_monitor *m)
{
    vr_nvsmi_csv_init(&p->csv, m);
}

static int fuzz_line(fuzz_parser *p, const char *s, size_t len, uint64_t number, int cut,
                     vr_error *err)
{
    return vr_nvsmi_csv_line(&p->csv, s, len, number, cut, err);
}

static int fuzz_finish(fuzz_parser *p, vr_error *err)
{
    return vr_nvsmi_csv_finish(&p->csv, err);
}

static void fuzz_free(fuzz_parser *p)
{
    vr_nvsmi_csv_free(&p->csv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_parser p;
    return fuzz_run(&p, data, size);
}
