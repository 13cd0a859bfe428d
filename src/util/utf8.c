#include "util/utf8.h"

#include <string.h>

size_t vr_utf8_decode(const char *s, size_t len, uint32_t *cp)
{
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000}; /* else overlong */
    const unsigned char *u = (const unsigned char *)s;
    unsigned c = u[0];
    size_t n = c < 0x80                 ? 1
               : c >= 0xc2 && c <= 0xdf ? 2
               : (c & 0xf0) == 0xe0     ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4
                                        : 0;
    if (n == 0 || n > len)
        return 0;
    uint32_t v = n == 1 ? c : c & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((u[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (u[i] & 0x3fu);
    }
    if (v < least[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

size_t vr_utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    size_t n = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    static const unsigned char lead[] = {0, 0, 0xc0, 0xe0, 0xf0};
    for (size_t i = n - 1; i > 0; i--, cp >>= 6)
        out[i] = (char)(0x80 | (cp & 0x3f));
    out[0] = (char)(lead[n] | cp);
    return n;
}

int vr_utf8_is_control(uint32_t cp)
{
    static const struct {
        uint32_t lo, hi;
    } controls[] = {
        {0x00, 0x1f},     {0x7f, 0x9f},     /* C0; DEL and C1 */
        {0x061c, 0x061c}, {0x200e, 0x200f}, /* ALM; LRM, RLM */
        {0x202a, 0x202e}, {0x2066, 0x2069}, /* embeddings, overrides; isolates */
    };
    for (size_t i = 0; i < sizeof controls / sizeof *controls; i++)
        if (cp >= controls[i].lo && cp <= controls[i].hi)
            return 1;
    return 0;
}

/* `prefix` and `digits` hex digits of v (lower case for code points, as
 * JSON writes them; upper case for bytes). */
static void put_hex(char *out, const char *prefix, uint32_t v, int digits, const char *hex)
{
    size_t p = strlen(prefix);
    memcpy(out, prefix, p);
    for (int i = 0; i < digits; i++)
        out[p + (size_t)i] = hex[(v >> (4 * (digits - 1 - i))) & 0xf];
    out[p + (size_t)digits] = '\0';
}

size_t vr_utf8_visible(const char *s, size_t len, char vis[VR_UTF8_VISIBLE_SIZE])
{
    uint32_t cp = 0;
    size_t n = vr_utf8_decode(s, len, &cp);
    vis[0] = '\0';
    if (n == 0)
        put_hex(vis, "\\x", (unsigned char)s[0], 2, "0123456789ABCDEF");
    else if (vr_utf8_is_control(cp) && cp != '\t' && cp != '\n' && cp != '\r')
        put_hex(vis, "\\u", cp, 4, "0123456789abcdef");
    return n ? n : 1;
}
