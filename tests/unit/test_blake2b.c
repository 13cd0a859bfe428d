/*-*** test_blake2b.c: BLAKE2b-256 (util/blake2b) ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdio.h>
#include <string.h>

#include "util/blake2b.h"

#include "harness.h"

/*-*** BLAKE2b-256 ***/

static void blake2b_of(const void *data, size_t len, char hex[VR_BLAKE2B_HEX])
{
    vr_blake2b s;
    vr_blake2b_init(&s);
    vr_blake2b_update(&s, data, len);
    vr_blake2b_hex(&s, hex);
}

/* The digests are Python's hashlib.blake2b(data, digest_size=32). The
 * lengths 128, 129 and 256 are where a block ends or the last is kept. */
static void test_blake2b(void)
{
    unsigned char buf[1000];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 31 + 7);
    static const struct {
        const char *text; /* NULL: the first len bytes of buf */
        size_t len;
        const char *digest;
    } vectors[] = {
        {"", 0, "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"},
        {"abc", 3, "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319"},
        {NULL, 128, "82783c69cecd49386e8825c6b20f3b41a43b4c9e3a21b627d88bf025046e4c72"},
        {NULL, 129, "b71e24c47c2d5cc68a99732abb05b9f80f2ecdd7744e9d111f453bb26f917e69"},
        {NULL, 256, "39041a8098f94c795b569a413ef8f0477df2ee6c974e77c065ca884b008f6b3d"},
        {NULL, 1000, "5d0119acc3b3fb1d1e878b458ef4140eee7d2ecaec6cdbe8a095b6c2da4b06b7"},
    };
    char hex[VR_BLAKE2B_HEX];
    for (size_t i = 0; i < sizeof vectors / sizeof *vectors; i++) {
        blake2b_of(vectors[i].text ? (const void *)vectors[i].text : buf, vectors[i].len, hex);
        STR_EQ(hex, vectors[i].digest, "BLAKE2b-256 of %zu bytes (%s)", vectors[i].len,
               vectors[i].text ? "text" : "pattern");
    }

    int all_same = 1;
    for (size_t piece = 1; piece <= 300; piece++) {
        vr_blake2b s;
        vr_blake2b_init(&s);
        for (size_t off = 0; off < sizeof buf; off += piece)
            vr_blake2b_update(&s, buf + off, sizeof buf - off < piece ? sizeof buf - off : piece);
        vr_blake2b_hex(&s, hex);
        if (strcmp(hex, vectors[5].digest) != 0) {
            all_same = 0;
            printf("# pieces of %zu differ\n", piece);
        }
    }
    OK(all_same, "streaming in pieces of 1..300 bytes matches one update (1000 bytes)");

    vr_blake2b s;
    vr_blake2b_init(&s);
    vr_blake2b_update(&s, buf, 256);
    vr_blake2b_hex(&s, hex);
    vr_blake2b_update(&s, buf + 256, sizeof buf - 256);
    char whole[VR_BLAKE2B_HEX];
    vr_blake2b_hex(&s, whole);
    OK(strcmp(hex, vectors[4].digest) == 0 && strcmp(whole, vectors[5].digest) == 0,
       "a digest taken mid-stream does not disturb the state");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_blake2b);
    return harness_summary();
}
