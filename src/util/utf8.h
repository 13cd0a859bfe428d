/*-*** utf8.h: characters of text that came from an input ***/
/*
 * One decoder for every stage: the importer repairs strings with it, the
 * renderers decide with it what a reader may see raw. Text from an input
 * may be anything: not UTF-8, full of terminal or bidi controls.
 */
#ifndef VR_UTF8_H
#define VR_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length (1 to 4) of the well-formed UTF-8 character at `s` (`len` > 0
 * bytes), its code point in *cp; 0 when `s` does not start with one
 * (overlong forms, surrogates and code points past U+10FFFF included). */
size_t vr_utf8_decode(const char *s, size_t len, uint32_t *cp);

/* Writes the code point `cp` (at most U+10FFFF, not a surrogate) as 1 to
 * 4 bytes of UTF-8 into `out`; returns the count. */
size_t vr_utf8_encode(uint32_t cp, char out[4]);

/* Characters never shown raw: C0 controls, DEL, C1 controls (ESC and CSI
 * drive terminals) and the bidirectional controls that reorder the text
 * around them (U+061C, U+200E-F, U+202A-E, U+2066-9). */
int vr_utf8_is_control(uint32_t cp);

#define VR_UTF8_VISIBLE_SIZE 8
/* What the text at `s` (`len` > 0 bytes) starts with, as a reader is to
 * see it: a control character (but tab, LF and CR, which are whitespace)
 * as the text "\u001b", a byte that is not UTF-8 as "\xFF", into `vis`;
 * anything else leaves `vis` "". Returns the bytes consumed (1 or more). */
size_t vr_utf8_visible(const char *s, size_t len, char vis[VR_UTF8_VISIBLE_SIZE]);

#endif
