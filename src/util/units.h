/*-*** units.h: numbers as people read them ***/
#ifndef VR_UNITS_H
#define VR_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* 5.06 GiB, 512 MiB, 1.50 KiB, 123 B (binary units, 3 significant digits). */
void vr_units_bytes(int64_t bytes, char *out, size_t n);
/* Two sizes a sentence compares ("19.8 GiB asked, 19.8 GiB free"): as
 * vr_units_bytes when their texts differ or the sizes are equal, else
 * with as many decimals as tell them apart ("19.773 GiB", "19.843
 * GiB"), at worst exact bytes. */
void vr_units_bytes_apart(int64_t a, int64_t b, char *out_a, char *out_b, size_t n);
/* 850 ns, 12.3 µs, 1.23 ms, 2.45 s, 3.50 min, 5.25 h, 350 days. */
void vr_units_duration(int64_t ns, char *out, size_t n);
/* A point in time after the start, precise enough to order events:
 * 55.714 s, 194.21 ms, 300.0 µs, 850 ns. */
void vr_units_time(int64_t ns, char *out, size_t n);
/* 1,234,567 */
void vr_units_count(int64_t v, char *out, size_t n);

#endif
