/*-*** fuzz_nvsmi_table.c: libFuzzer target for the nvidia-smi table line parser ***/
/*
 * Any bytes, cut into lines, through vr_nvsmi_table_line (boxes, rules,
 * cells, MIG and process rows, cut rows) and its finish; see
 * nvsmi_lines.h. Built by `make fuzz`; seeds in corpus-nvsmi/.
 */
#include "import/readers/nvsmi/nvsmi_table.h"

struct fuzz_parser {
    vr_nvsmi_table table;
};

#include "nvsmi_lines.h"

static void fuzz_init(fuzz_parser *p, vr_monitor *m)
{
    vr_nvsmi_table_init(&p->table, m);
}

static int fuzz_line(fuzz_parser *p, const char *s, size_t len, uint64_t number, int cut,
                     vr_error *err)
{
    (void)number;
    return vr_nvsmi_table_line(&p->table, s, len, cut, err);
}

static int fuzz_finish(fuzz_parser *p, vr_error *err)
{
    return vr_nvsmi_table_finish(&p->table, err);
}

static void fuzz_free(fuzz_parser *p)
{
    vr_nvsmi_table_free(&p->table);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_parser p;
    return fuzz_run(&p, data, size);
}
