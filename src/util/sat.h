/*-*** sat.h: saturating 64-bit arithmetic for figures read from inputs ***/
/*
 * Sizes and times come from untrusted files; a hostile or corrupt one can
 * hold values whose sum overflows. Figures that are added or subtracted use
 * these: they clamp at INT64_MIN/INT64_MAX instead of overflowing.
 */
#ifndef VR_SAT_H
#define VR_SAT_H

#include <stdint.h>

static inline int64_t vr_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static inline int64_t vr_sat_sub(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static inline int64_t vr_sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return r;
}

/* A double (from cJSON) as int64, clamped; NaN becomes 0. */
static inline int64_t vr_sat_from_double(double d)
{
    if (!(d == d))
        return 0;
    if (d >= 9223372036854775807.0)
        return INT64_MAX;
    if (d <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)d;
}

#endif
