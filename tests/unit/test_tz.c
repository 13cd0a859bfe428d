/*-*** test_tz.c: time zones (util/tz) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>

#include "util/tz.h"

#include "harness.h"

/* A value that rounds up to 1024 of a unit is shown in the next unit, as
 * 1048575 bytes is "1.00 MiB" (not "1024 KiB"): three significant digits. */
/* --tz zones, and civil dates against values from Python's
 * datetime(..., tzinfo=timezone.utc).timestamp(). */
static void test_tz(void)
{
    static const struct {
        const char *text;
        int ok;
        int64_t seconds;
    } zones[] = {
        {"UTC", 1, 0},          {"z", 1, 0},
        {"GMT", 1, 0},          {"+02:00", 1, 7200},
        {"-0530", 1, -19800},   {"+2", 1, 7200},
        {"UTC+01:00", 1, 3600}, {"GMT-3", 1, -10800},
        {"+14:00", 1, 50400},   {"Europe/Berlin", 0, 0},
        {"+15", 0, 0},          {"+02:60", 0, 0},
        {"02:00", 0, 0},        {"", 0, 0},
        {"+02:0", 0, 0},        {"+", 0, 0},
        {"UTC+", 0, 0},
    };
    for (size_t i = 0; i < sizeof zones / sizeof *zones; i++) {
        int64_t off = -1;
        int rc = vr_tz_parse(zones[i].text, &off);
        OK(rc == (zones[i].ok ? 0 : -1), "zone %s parsed as expected", zones[i].text);
        if (zones[i].ok)
            INT_EQ(off, zones[i].seconds * INT64_C(1000000000), "offset of %s", zones[i].text);
    }
    int64_t ns = 0;
    OK(vr_tz_civil_to_ns(1970, 1, 1, 0, 0, 0, 0, &ns) == 0 && ns == 0, "civil date");
    /* 2024-03-12 10:15:32.123 UTC = 1710238532.123 */
    OK(vr_tz_civil_to_ns(2024, 3, 12, 10, 15, 32, 123000000, &ns) == 0 &&
           ns == INT64_C(1710238532123000000),
       "civil date");
    /* 2000-02-29 (a leap day of a century year) 23:59:59 = 951868799 */
    OK(vr_tz_civil_to_ns(2000, 2, 29, 23, 59, 59, 0, &ns) == 0 &&
           ns == INT64_C(951868799000000000),
       "civil date");
    OK(vr_tz_civil_to_ns(2024, 13, 1, 0, 0, 0, 0, &ns) == -1, "civil date");
    OK(vr_tz_civil_to_ns(2024, 1, 1, 24, 0, 0, 0, &ns) == -1, "civil date");
    OK(vr_tz_civil_to_ns(1800, 1, 1, 0, 0, 0, 0, &ns) == -1, "civil date");
    OK(vr_tz_civil_to_ns(7505, 7, 14, 8, 12, 53, 0, &ns) == -1, "a year past 64-bit ns refused");
    OK(vr_tz_civil_to_ns(2261, 12, 31, 23, 59, 59, 0, &ns) == 0, "2261 still fits");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_tz);
    return harness_summary();
}
