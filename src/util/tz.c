#include "util/tz.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#define NS_PER_S INT64_C(1000000000)

/* "+HH", "+HHMM", "+HH:MM" (also with one hour digit) into seconds. */
static int parse_offset(const char *p, int64_t *seconds)
{
    int sign = *p == '-' ? -1 : *p == '+' ? 1 : 0;
    if (!sign)
        return -1;
    p++;
    int hours = 0, minutes = 0, digits = 0;
    while (isdigit((unsigned char)*p) && digits < 2)
        hours = hours * 10 + (*p++ - '0'), digits++;
    if (digits == 0)
        return -1;
    if (*p == ':')
        p++;
    if (*p) {
        if (!isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[1]) || p[2])
            return -1;
        minutes = (p[0] - '0') * 10 + (p[1] - '0');
    }
    if (hours > 14 || minutes > 59)
        return -1;
    *seconds = sign * (int64_t)(hours * 3600 + minutes * 60);
    return 0;
}

int vr_tz_parse(const char *text, int64_t *offset_ns)
{
    static const char *const utc_names[] = {"UTC", "GMT", "Z"};
    for (size_t i = 0; i < sizeof utc_names / sizeof *utc_names; i++) {
        size_t n = strlen(utc_names[i]);
        if (strncasecmp(text, utc_names[i], n) == 0 && (text[n] == '+' || text[n] == '-'))
            text += n;
        else if (strcasecmp(text, utc_names[i]) == 0) {
            *offset_ns = 0;
            return 0;
        }
    }
    int64_t seconds;
    if (parse_offset(text, &seconds) < 0)
        return -1;
    *offset_ns = seconds * NS_PER_S;
    return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int vr_tz_civil_to_ns(int year, int month, int day, int hour, int minute, int second,
                      int64_t frac_ns, int64_t *out)
{
    /* Nanoseconds in 64 bits reach 2262-04-11: later years are refused
     * (a garbled stamp "7505/07/14" would overflow). */
    if (year < 1900 || year > 2261 || month < 1 || month > 12 || day < 1 || day > 31 ||
        hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60 ||
        frac_ns < 0 || frac_ns >= NS_PER_S)
        return -1;
    int64_t days = days_from_civil(year, month, day);
    int64_t s = days * 86400 + hour * 3600 + minute * 60 + second;
    *out = s * NS_PER_S + frac_ns;
    return 0;
}
