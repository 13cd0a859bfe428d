/* The SVG charts' one escaper for text taken from the inputs (svg_text.h). */
#include "render/svg/svg_text.h"

#include <stdint.h>
#include <string.h>

#include "util/utf8.h"

static const struct {
    unsigned char c;
    const char *entity;
} xml_entities[] = {
    {'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}, {'\'', "&#39;"},
};

static const char *xml_entity(unsigned char c)
{
    for (size_t i = 0; i < sizeof xml_entities / sizeof *xml_entities; i++)
        if (xml_entities[i].c == c)
            return xml_entities[i].entity;
    return NULL;
}

void vr_svg_text(vr_buf *b, const char *s, size_t max_cp)
{
    size_t left = strlen(s);
    for (size_t cp = 0; left; cp++) {
        if (cp == max_cp) {
            vr_buf_puts(b, "\xe2\x80\xa6");
            return;
        }
        uint32_t c = 0;
        size_t n = vr_utf8_decode(s, left, &c);
        const char *ent = xml_entity((unsigned char)*s);
        if (ent)
            vr_buf_puts(b, ent);
        else if (n == 0 || (vr_utf8_is_control(c) && c != '\t' && c != '\n'))
            vr_buf_puts(b, "\xef\xbf\xbd");
        else
            vr_buf_append(b, s, n);
        s += n ? n : 1;
        left -= n ? n : 1;
    }
}
