/*-*** tz.h: wall-clock stamps on one clock ***/
/*
 * Logs and nvidia-smi write wall-clock stamps ("2024/03/12 10:15:32.123"),
 * most without a zone. Readers store such a stamp as if it were UTC
 * (vr_tz_civil_to_ns) and say so (VR_CLOCK_WALL_LOCAL in reader.h); the
 * import then places the source with the zone the user gave (--tz,
 * default UTC), as an offset on the source, never by changing its rows. A
 * stamp that names its zone ("...+02:00", "Z") is turned to UTC by the
 * reader itself (VR_CLOCK_WALL_UTC).
 *
 * Zones are fixed offsets: "UTC", "Z", "GMT", "+02:00", "-0530", "+2",
 * optionally after "UTC" or "GMT" ("UTC+01:00"). Named zones
 * ("Europe/Berlin") are refused: their offset changes with the date, and
 * the process's TZ is global state this library does not touch.
 *
 * Nothing is allocated; no global state.
 */
#ifndef VR_TZ_H
#define VR_TZ_H

#include <stdint.h>

/* Parses a zone; *offset_ns is local time minus UTC (+02:00: +7200 s).
 * Returns 0, or -1 when `text` is not a zone this reads. */
int vr_tz_parse(const char *text, int64_t *offset_ns);

/* Nanoseconds since the Unix epoch of a civil date and time read as UTC
 * (proleptic Gregorian). Returns 0 and *out, or -1 when a field is out of
 * range (month 13, second 61, year outside 1900..2261, beyond which int64
 * nanoseconds overflow). */
int vr_tz_civil_to_ns(int year, int month, int day, int hour, int minute, int second,
                      int64_t frac_ns, int64_t *out);

#endif
