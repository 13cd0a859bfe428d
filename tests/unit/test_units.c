/*-*** test_units.c: the units of util/units: sizes, durations, counts ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>
#include <string.h>

#include "util/units.h"

#include "harness.h"

/*-*** vr_units ***/

static void test_units(void)
{
    char out[64];
    static const struct {
        int64_t v;
        const char *want;
    } bytes[] = {
        {0, "0 B"},
        {1, "1 B"},
        {1023, "1023 B"},
        {1024, "1.00 KiB"},
        {1536, "1.50 KiB"},
        {15360, "15.0 KiB"},
        {1023 * 1024, "1023 KiB"},
        {1048575, "1.00 MiB"},
        {536870912, "512 MiB"},
        {123456789, "118 MiB"},
        {5433000000LL, "5.06 GiB"},
        {1099511627776LL, "1.00 TiB"},
        {1125899906842624LL, "1.00 PiB"},
        {INT64_MAX, "8.00 EiB"},
        {-5, "-5 B"},
        {-1536, "-1.50 KiB"},
        {-5433000000LL, "-5.06 GiB"},
    };
    for (size_t i = 0; i < sizeof bytes / sizeof *bytes; i++) {
        vr_units_bytes(bytes[i].v, out, sizeof out);
        STR_EQ(out, bytes[i].want, "vr_units_bytes(%lld)", (long long)bytes[i].v);
    }

    static const struct {
        int64_t ns;
        const char *want;
    } durs[] = {
        {0, "0 ns"},
        {850, "850 ns"},
        {999, "999 ns"},
        {1000, "1.00 \xC2\xB5s"},
        {12300, "12.3 \xC2\xB5s"},
        {123000, "123 \xC2\xB5s"},
        {1230000, "1.23 ms"},
        {2450000000LL, "2.45 s"},
        {60000000000LL, "60.0 s"},
        {119000000000LL, "119 s"},
        {120000000000LL, "2.00 min"},
        {210000000000LL, "3.50 min"},
        {7190000000000LL, "120 min"},
        {7200000000000LL, "2.00 h"},
        {172000000000000LL, "47.8 h"},
        {172800000000000LL, "2.00 days"},
        {30215400000000000LL, "350 days"},
        {-850, "-850 ns"},
        {-2450000000LL, "-2.45 s"},
    };
    for (size_t i = 0; i < sizeof durs / sizeof *durs; i++) {
        vr_units_duration(durs[i].ns, out, sizeof out);
        STR_EQ(out, durs[i].want, "vr_units_duration(%lld)", (long long)durs[i].ns);
    }

    /* Points in time keep enough digits to order events a few µs apart. */
    static const struct {
        int64_t ns;
        const char *want;
    } times[] = {
        {0, "0 ns"},
        {850, "850 ns"},
        {300000, "300.0 \xC2\xB5s"},
        {520210, "520.2 \xC2\xB5s"},
        {194213000, "194.21 ms"},
        {55714250000LL, "55.714 s"},
        {-1500000000LL, "-1.500 s"},
    };
    for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
        vr_units_time(times[i].ns, out, sizeof out);
        STR_EQ(out, times[i].want, "vr_units_time(%lld)", (long long)times[i].ns);
    }

    static const struct {
        int64_t v;
        const char *want;
    } counts[] = {
        {0, "0"},
        {7, "7"},
        {999, "999"},
        {1000, "1,000"},
        {12345, "12,345"},
        {123456, "123,456"},
        {1234567, "1,234,567"},
        {-1, "-1"},
        {-999, "-999"},
        {-1000, "-1,000"},
        {-1234567, "-1,234,567"},
        {INT64_MAX, "9,223,372,036,854,775,807"},
        {-INT64_MAX, "-9,223,372,036,854,775,807"},
    };
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        vr_units_count(counts[i].v, out, sizeof out);
        STR_EQ(out, counts[i].want, "vr_units_count(%lld)", (long long)counts[i].v);
    }

    /* Small buffers: always NUL-terminated, never overrun. */
    char small[8];
    memset(small, 'x', sizeof small);
    vr_units_count(1234567890, small, 5);
    OK(memchr(small, '\0', 5) != NULL && small[5] == 'x',
       "vr_units_count truncates into a 5-byte buffer (\"%.5s\")", small);
    memset(small, 'x', sizeof small);
    vr_units_bytes(5433000000LL, small, 4);
    OK(memchr(small, '\0', 4) != NULL && small[4] == 'x',
       "vr_units_bytes truncates into a 4-byte buffer");
    memset(small, 'x', sizeof small);
    vr_units_duration(2450000000LL, small, 3);
    OK(memchr(small, '\0', 3) != NULL && small[3] == 'x',
       "vr_units_duration truncates into a 3-byte buffer");
}

static void test_units_rollover(void)
{
    char out[64];
    vr_units_bytes(1048064, out, sizeof out); /* 1023.5 KiB */
    STR_EQ(out, "1.00 MiB", "vr_units_bytes(1048064) (1023.5 KiB) rolls over to MiB");
    vr_units_duration(999999, out, sizeof out); /* 999.999 us */
    STR_EQ(out, "1.00 ms", "vr_units_duration(999999) rolls over to ms");
    vr_units_duration(999999999, out, sizeof out);
    STR_EQ(out, "1.00 s", "vr_units_duration(999999999) rolls over to s");
}

/* INT64_MIN has no positive counterpart: -v overflows. */
static void test_units_count_min(void)
{
    char out[64];
    vr_units_count(INT64_MIN, out, sizeof out);
    STR_EQ(out, "-9,223,372,036,854,775,808", "vr_units_count(INT64_MIN)");
}

/* Two sizes a sentence compares never read alike unless they are equal:
 * more decimals in the larger's unit, at worst exact bytes. */
static void test_units_apart(void)
{
    static const struct {
        int64_t a, b;
        const char *want_a, *want_b;
    } cases[] = {
        {21303185408LL, 21227687936LL, "19.84 GiB", "19.77 GiB"}, /* oom-57.log */
        {21303185408LL, 21303185408LL, "19.8 GiB", "19.8 GiB"},   /* equal: as they are */
        {536870912, 1073741824, "512 MiB", "1.00 GiB"},          /* apart already */
        {1073741824, 1073741825, "1,073,741,824 B", "1,073,741,825 B"},
        {1000, 1001, "1000 B", "1001 B"},
    };
    char a[32], b[32];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        vr_units_bytes_apart(cases[i].a, cases[i].b, a, b, sizeof a);
        STR_EQ(a, cases[i].want_a, "vr_units_bytes_apart(%lld, %lld): first",
               (long long)cases[i].a, (long long)cases[i].b);
        STR_EQ(b, cases[i].want_b, "vr_units_bytes_apart(%lld, %lld): second",
               (long long)cases[i].a, (long long)cases[i].b);
    }
    vr_units_bytes_apart(1536000, 1536100, a, b, sizeof a);
    OK(strcmp(a, b) != 0, "vr_units_bytes_apart: 100 bytes apart in 1.46 MiB read apart (%s, %s)",
       a, b);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_units);
    RUN(test_units_rollover);
    RUN(test_units_count_min);
    RUN(test_units_apart);
    return harness_summary();
}
