/* Unit tests of the memory print matcher (src/scan/memprint.c) and its
 * rules (schemas/memprint.patterns): every label reaches the scanner (it
 * holds a needle), labels stand at word starts and give way to longer
 * ones, units are read 1024-based and rounded, steps are whole numbers,
 * a bad rules file is refused with its line. */
#include <stdint.h>
#include <string.h>

#include "scan/joblog_scan.h"
#include "scan/memprint.h"
#include "harness.h"

static vr_memprint_rules *rules;

static int match(const char *line, vr_memprint *p)
{
    return vr_memprint_match(rules, line, strlen(line), p);
}

typedef struct {
    int missing;
} needle_check;

static void check_label(void *ud, const char *requires, const char *label)
{
    needle_check *c = ud;
    int ok = vr_joblog_has_needle(label, strlen(label)) ||
             (requires[0] && vr_joblog_has_needle(requires, strlen(requires)));
    if (!OK(ok, "label '%s' (requires '%s') holds a scanner needle", label, requires))
        c->missing++;
}

static void test_needles(void)
{
    needle_check c = {0};
    vr_memprint_labels(rules, check_label, &c);
    INT_EQ(c.missing, 0, "every print rule reaches the scanner");
}

static void test_labels(void)
{
    vr_memprint p;
    OK(match("[Rank 0] (after 10 iterations) memory (MB) | allocated: 10.5 | max allocated: "
             "20 | reserved: 30 | max reserved: 40",
             &p),
       "Megatron's report is a print");
    STR_EQ(p.framework, "megatron", "by Megatron");
    INT_EQ(p.bytes[VR_MP_ALLOCATED], 11010048, "allocated 10.5 MB, 1024-based");
    INT_EQ(p.bytes[VR_MP_MAX_ALLOCATED], 20LL << 20, "'max allocated:' is not 'allocated:'");
    INT_EQ(p.bytes[VR_MP_MAX_RESERVED], 40LL << 20, "max reserved");
    INT_EQ(p.step, 10, "the step from '(after 10 iterations)'");
    OK(match("MA 1.5 GB  Max_MA 2 GB  CA 3 GB  Max_CA 4 GB", &p), "see_memory_usage");
    INT_EQ(p.bytes[VR_MP_ALLOCATED], 3LL << 29, "'MA' is not the end of 'Max_MA'");
    INT_EQ(p.bytes[VR_MP_RESERVED], 3LL << 30, "'CA' is not the end of 'Max_CA'");
    OK(match("最大已分配: 2.00 GB, 已分配: 1.00 GB", &p), "Chinese labels");
    INT_EQ(p.bytes[VR_MP_ALLOCATED], 1LL << 30, "已分配 is not the end of 最大已分配");
    INT_EQ(p.bytes[VR_MP_MAX_ALLOCATED], 2LL << 30, "最大已分配 is the max");
}

static void test_units(void)
{
    vr_memprint p;
    OK(match("mem_alloc=0.005MB", &p), "mem_alloc=");
    INT_EQ(p.bytes[VR_MP_ALLOCATED], 5243, "0.005 MB rounds to the nearest byte");
    STR_EQ(p.unit, "MB", "the unit as printed");
    OK(!match("allocated: 12.34", &p), "a bare number where the unit must be printed: no print");
    OK(!match("allocated: 3 apples", &p), "a number with no unit: no print");
    OK(!match("reserved: 14.00 GB", &p), "reserved alone is no sample");
    OK(match("torch.cuda.max_memory_allocated() = 123456789", &p), "torch's call as printed");
    INT_EQ(p.bytes[VR_MP_MAX_ALLOCATED], 123456789, "in bytes");
    OK(!p.has[VR_MP_ALLOCATED],
       "'memory_allocated()' is not the end of 'max_memory_allocated()'");
    /* Over 1 PiB is no allocator's figure: a print, refused (-1). */
    INT_EQ(match("allocated: 99999999999999999 GB", &p), -1, "17 digits of GB: refused");
    INT_EQ(p.impossible, VR_MP_ALLOCATED, "the allocated figure named");
    INT_EQ(match("allocated: 12345678901234567890123 B", &p), -1, "23 digits: refused");
    INT_EQ(match("allocated: 1025 TB", &p), -1, "1025 TB, under 2^62 bytes: refused");
    INT_EQ(match("allocated: 1024.001 TB", &p), -1, "a fraction past 1 PiB: refused");
    INT_EQ(match("allocated: 1 GB, reserved: 2000 TB", &p), -1, "any figure of the print");
    INT_EQ(p.impossible, VR_MP_RESERVED, "the reserved figure named");
    INT_EQ(match("allocated: 1024 TB", &p), 1, "1 PiB itself is read");
    INT_EQ(p.bytes[VR_MP_ALLOCATED], 1LL << 50, "as 2^50 bytes");
    INT_EQ(match("allocated: 100000000000000 B", &p), 1, "15 digits of bytes (91 TiB) are read");
}

static void test_steps(void)
{
    vr_memprint p;
    OK(match("{'epoch': 0.09, 'memory_allocated (GB)': 3.82}", &p), "a metrics dict");
    OK(!p.has_epoch, "a fractional epoch is no epoch");
    OK(match("Epoch(train)  [3][ 50/1000]  lr: 1e-4  time: 0.5  data_time: 0.1  memory: 3456",
             &p),
       "mmengine");
    INT_EQ(p.epoch, 3, "the epoch");
    INT_EQ(p.step, 50, "the iteration in the epoch");
    STR_EQ(p.figure, "peak", "mmengine's memory is the peak");
    OK(match("cuda:3 allocated: 1 GB", &p), "a device");
    INT_EQ(p.device_idx, 3, "cuda:3");
    vr_memprint q;
    OK(match("allocated: 1 GB", &q), "a print without a step");
    vr_memprint_context(rules, "global_step=77 loss=1", 21, &q);
    INT_EQ(q.step, 77, "the step from the line around it");
}

static void test_bad_rules(void)
{
    vr_error err = VR_ERROR_INIT;
    const char *bad =
        "# ok\nprint x current GB allocated \"a:\"\nprint y sometimes GB allocated \"b\"\n";
    OK(!vr_memprint_rules_parse(bad, strlen(bad), "bad.patterns", &err), "a bad figure");
    OK(strstr(err.msg, "bad.patterns: line 3") != NULL, "names the file and line: %s", err.msg);
    vr_error err2 = VR_ERROR_INIT;
    const char *unclosed = "print x current GB allocated \"a:\n";
    OK(!vr_memprint_rules_parse(unclosed, strlen(unclosed), "u", &err2), "an open quote");
    vr_error err3 = VR_ERROR_INIT;
    const char *role = "print x current GB used \"a:\"\n";
    OK(!vr_memprint_rules_parse(role, strlen(role), "r", &err3), "an unknown role");
    OK(strstr(err3.msg, "no role") != NULL, "says so: %s", err3.msg);
}

int main(void)
{
    vr_error err = VR_ERROR_INIT;
    rules = vr_memprint_rules_builtin(&err);
    if (!OK(rules != NULL, "the built-in rules parse: %s", rules ? "" : err.msg))
        return harness_summary();
    RUN(test_needles);
    RUN(test_labels);
    RUN(test_units);
    RUN(test_steps);
    RUN(test_bad_rules);
    vr_memprint_rules_free(rules);
    return harness_summary();
}
