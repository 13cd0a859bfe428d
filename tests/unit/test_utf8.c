/*-*** test_utf8.c: UTF-8 (util/utf8) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>

#include "util/utf8.h"

#include "harness.h"

/* vr_utf8_encode is vr_utf8_decode's inverse at every length. */
static void test_utf8_encode(void)
{
    static const uint32_t cps[] = {0,      0x41,   0x7f,   0x80,    0x7ff,   0x800,   0xd7ff,
                                   0xe000, 0xfffd, 0xffff, 0x10000, 0x1f525, 0x10ffff};
    int ok = 1;
    for (size_t i = 0; i < sizeof cps / sizeof *cps; i++) {
        char u[4];
        uint32_t back = 0xffffffffu;
        size_t n = vr_utf8_encode(cps[i], u);
        ok &= vr_utf8_decode(u, n, &back) == n && back == cps[i];
    }
    OK(ok, "vr_utf8_encode then vr_utf8_decode gives the code point back");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_utf8_encode);
    return harness_summary();
}
