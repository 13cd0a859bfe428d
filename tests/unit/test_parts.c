/* Unit tests of how the report's and the importer's parts are put
 * together: the results document's tables of parts (src/render/results/
 * results.c: each part after the parts it needs). */
#include <stdio.h>

#include "render/results/results.h"
#include "harness.h"

static void test_results_parts_in_order(void)
{
    vr_error err = VR_ERROR_INIT;
    int rc = vr_results_parts_check(&err);
    INT_EQ(rc, 0, "each results part runs after the parts it needs%s%s", rc ? ": " : "",
           rc ? err.msg : "");
}

int main(void)
{
    RUN(test_results_parts_in_order);
    return harness_summary();
}
