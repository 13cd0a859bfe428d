/*-*** fuzz_memprint.c: libFuzzer target for the memory print matcher ***/
/*
 * The matcher (src/scan/memprint.c) alone, without the job-log reader
 * around it. The first byte chooses what the rest is:
 *   even: a log, each line matched against the built-in rules
 *         (schemas/memprint.patterns) and read for the step, epoch and
 *         device a print lacks;
 *   odd:  a rules text, parsed (a bad rule is an error value, never a
 *         crash), and when it parses, the built-in rules' own test lines
 *         and the text's own lines matched against it.
 * Every print found must be sane: its figures non-negative and at most
 * 1 PiB (statcheck.h: more is refused, -1), a framework and figure named,
 * its unit a NUL-ended string. The log's lines are read as inference
 * servers' memory lines too (src/scan/servermem.c), whose figures must be
 * as sane. Crashes, sanitizer reports and leaks fail.
 *
 * Built by `make fuzz` (clang) with memprint.c and what it needs.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scan/memprint.h"
#include "scan/servermem.h"

#define PIB (1LL << 50)

static void check(const vr_memprint *p)
{
    if (!p->framework || !p->figure || memchr(p->unit, '\0', sizeof p->unit) == NULL)
        abort();
    for (int r = 0; r < VR_MP_ROLES; r++)
        if (p->has[r] && (p->bytes[r] < 0 || p->bytes[r] > PIB))
            abort();
}

static void check_server(const char *line, size_t len)
{
    vr_servermem m;
    size_t n = vr_servermem_match(line, len, &m);
    if (n != m.n || n > VR_SERVERMEM_MAX || (n && !m.framework))
        abort();
    for (size_t k = 0; k < n; k++)
        if (m.v[k].value < 0 || (!m.v[k].is_count && (!m.v[k].unit || m.v[k].value > 2 * PIB)) ||
            m.v[k].figure >= VR_SM_FIGURES)
            abort();
}

static void match_lines(const vr_memprint_rules *r, const uint8_t *data, size_t size)
{
    size_t at = 0;
    while (at < size) {
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
        vr_memprint p;
        memset(&p, 0, sizeof p);
        check_server((const char *)data + at, len);
        int rc = vr_memprint_match(r, (const char *)data + at, len, &p);
        if (rc == 1) {
            check(&p);
            vr_memprint_context(r, (const char *)data + at, len, &p);
            check(&p);
        } else if (rc != 0 && rc != -1) {
            abort();
        }
        at += len + 1;
    }
}

static const char sample[] = "[2024-01-01 00:00:00] MA 1.5 GB         Max_MA 2.25 GB         CA "
                             "3.0 GB         Max_CA 3 GB\n"
                             "step 12 | allocated: 10.5 GiB, reserved: 12 GiB\n"
                             "mem: 3012\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    vr_error err = VR_ERROR_INIT;
    vr_memprint_rules *r;
    if ((data[0] & 1) == 0) {
        r = vr_memprint_rules_builtin(&err);
        if (!r)
            abort(); /* the built-in rules always parse */
        match_lines(r, data + 1, size - 1);
    } else {
        r = vr_memprint_rules_parse((const char *)data + 1, size - 1, "fuzz", &err);
        if (r) {
            match_lines(r, (const uint8_t *)sample, sizeof sample - 1);
            match_lines(r, data + 1, size - 1);
        }
    }
    vr_memprint_rules_free(r);
    return 0;
}
