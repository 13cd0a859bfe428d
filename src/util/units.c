#include "util/units.h"

#include <stdio.h>
#include <string.h>

static void three_digits(double v, const char *unit, char *out, size_t n)
{
    double a = v < 0 ? -v : v;
    const char *fmt = a >= 99.95 ? "%.0f %s" : a >= 9.995 ? "%.1f %s" : "%.2f %s";
    snprintf(out, n, fmt, v, unit);
}

/* A value moves to the next unit when its three-digit form would round up
 * to the unit's size ("1024 KiB" reads better as "1.00 MiB"). */
void vr_units_bytes(int64_t bytes, char *out, size_t n)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes, a = v < 0 ? -v : v;
    if (a < 1023.5) {
        snprintf(out, n, "%lld B", (long long)bytes);
        return;
    }
    int u = -1;
    do {
        a /= 1024;
        v /= 1024;
        u++;
    } while (a >= 1023.5 && u < 5);
    three_digits(v, units[u], out, n);
}

void vr_units_bytes_apart(int64_t a, int64_t b, char *out_a, char *out_b, size_t n)
{
    vr_units_bytes(a, out_a, n);
    vr_units_bytes(b, out_b, n);
    if (a == b || strcmp(out_a, out_b) != 0)
        return;
    /* the unit of the larger, as the three-digit form chose it */
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double m = (double)(a > b ? a : b), scale = 1;
    int u = -1;
    while (m >= 1023.5 && u < 5) {
        m /= 1024;
        scale *= 1024;
        u++;
    }
    for (int dec = 2; u >= 0 && dec <= 6; dec++) {
        snprintf(out_a, n, "%.*f %s", dec, (double)a / scale, units[u]);
        snprintf(out_b, n, "%.*f %s", dec, (double)b / scale, units[u]);
        if (strcmp(out_a, out_b) != 0)
            return;
    }
    char ca[32], cb[32];
    vr_units_count(a, ca, sizeof ca);
    vr_units_count(b, cb, sizeof cb);
    snprintf(out_a, n, "%s B", ca);
    snprintf(out_b, n, "%s B", cb);
}

void vr_units_duration(int64_t ns, char *out, size_t n)
{
    double v = (double)ns, a = v < 0 ? -v : v;
    if (a < 999.5)
        snprintf(out, n, "%lld ns", (long long)ns);
    else if (a < 999.5e3)
        three_digits(v / 1e3, "\xC2\xB5s", out, n);
    else if (a < 999.5e6)
        three_digits(v / 1e6, "ms", out, n);
    else if (a < 119.95e9)
        three_digits(v / 1e9, "s", out, n);
    else if (a < 119.95 * 60e9)
        three_digits(v / 60e9, "min", out, n);
    else if (a < 47.995 * 3600e9)
        three_digits(v / 3600e9, "h", out, n);
    else
        three_digits(v / 86400e9, "days", out, n);
}

void vr_units_time(int64_t ns, char *out, size_t n)
{
    double v = (double)ns, a = v < 0 ? -v : v;
    if (a < 1e3)
        snprintf(out, n, "%lld ns", (long long)ns);
    else if (a < 1e6)
        snprintf(out, n, "%.1f \xC2\xB5s", v / 1e3);
    else if (a < 1e9)
        snprintf(out, n, "%.2f ms", v / 1e6);
    else
        snprintf(out, n, "%.3f s", v / 1e9);
}

void vr_units_count(int64_t v, char *out, size_t n)
{
    char digits[32];
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)mag);
    size_t o = 0;
    if (n == 0)
        return;
    if (v < 0 && o + 1 < n)
        out[o++] = '-';
    for (int i = 0; i < len && o + 2 < n; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
}
