/*-*** svg_text.h: text from the inputs, made safe inside SVG ***/
/*
 * The charts (chart_svg.c, category_svg.c, segmap_svg.c) write names that
 * come from untrusted files (device names, op names, paths) into SVG text
 * and attributes. This is the one escaper they share; the caller owns the
 * buffer (allocation failure exits, as everywhere: util/alloc.h).
 */
#ifndef VR_SVG_TEXT_H
#define VR_SVG_TEXT_H

#include <stddef.h>

#include "util/buf.h"

/* Appends `s`, XML-escaped, valid in both text and attribute values.
 * Bytes XML cannot carry (controls, broken UTF-8) become U+FFFD, so a bad
 * name can never make the document ill-formed; so do the other controls a
 * report never shows raw (DEL, C1, bidi overrides: see results.h), which
 * XML would carry but which garble the text. Tab and newline stay. At most
 * `max_cp` characters are kept ((size_t)-1: all); a cut ends in "…". */
void vr_svg_text(vr_buf *b, const char *s, size_t max_cp);

#endif
