/*-*** test_hash.c: vr_hash, the 64-bit hash of util/hash ***/
/* Each function runs in its own child process (see harness.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/hash.h"

#include "fixtures.h"
#include "harness.h"

/*-*** vr_hash ***/

static void test_hash(void)
{
    static const struct {
        const char *text;
        uint64_t digest;
    } vectors[] = {
        {"", 0xef46db3751d8e999ULL},
        {"a", 0xd24ec4f1a98c6e5bULL},
        {"Nobody inspects the spammish repetition", 0xfbcea83c8a378bf1ULL},
    };
    for (size_t i = 0; i < sizeof vectors / sizeof *vectors; i++) {
        uint64_t d = hash_of(vectors[i].text, strlen(vectors[i].text));
        OK(d == vectors[i].digest, "XXH64(\"%s\") = %016llx", vectors[i].text,
           (unsigned long long)vectors[i].digest);
    }

    char hex[17];
    vr_hash_hex(0xef46db3751d8e999ULL, hex);
    STR_EQ(hex, "ef46db3751d8e999", "vr_hash_hex writes 16 lowercase digits");
    vr_hash_hex(0x1ULL, hex);
    STR_EQ(hex, "0000000000000001", "vr_hash_hex pads with zeros");

    unsigned char buf[1000];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 31 + 7);
    uint64_t whole = hash_of(buf, sizeof buf);
    int all_same = 1;
    for (size_t piece = 1; piece <= 64; piece++) {
        vr_hash h;
        vr_hash_init(&h, 0);
        for (size_t off = 0; off < sizeof buf; off += piece)
            vr_hash_update(&h, buf + off, sizeof buf - off < piece ? sizeof buf - off : piece);
        if (vr_hash_digest(&h) != whole) {
            all_same = 0;
            printf("# pieces of %zu differ\n", piece);
        }
    }
    OK(all_same, "streaming in pieces of 1..64 bytes matches one update (1000 bytes)");

    /* Digest can be taken mid-stream without disturbing the state. */
    vr_hash h;
    vr_hash_init(&h, 0);
    vr_hash_update(&h, buf, 500);
    uint64_t half = vr_hash_digest(&h);
    vr_hash_update(&h, buf + 500, 500);
    OK(half == hash_of(buf, 500) && vr_hash_digest(&h) == whole,
       "vr_hash_digest mid-stream does not disturb the state");

    vr_hash_init(&h, 1);
    vr_hash_update(&h, "a", 1);
    OK(vr_hash_digest(&h) != 0xd24ec4f1a98c6e5bULL, "the seed changes the digest");

    /* vr_hash_once: the streaming digest, every length and a few seeds */
    int once_same = 1;
    for (size_t len = 0; len <= 200 && once_same; len++) {
        for (uint64_t seed = 0; seed < 0x57ad; seed += 0x57ac) {
            vr_hash_init(&h, seed);
            vr_hash_update(&h, buf + len, len);
            if (vr_hash_once(buf + len, len, seed) != vr_hash_digest(&h)) {
                once_same = 0;
                printf("# vr_hash_once differs at %zu bytes, seed %llx\n", len,
                       (unsigned long long)seed);
            }
        }
    }
    OK(once_same && vr_hash_once("a", 1, 0) == 0xd24ec4f1a98c6e5bULL,
       "vr_hash_once gives the streaming digest (0 to 200 bytes, two seeds)");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_hash);
    return harness_summary();
}
