/* XXH64 as specified in xxHash's doc/xxhash_spec.md (BSD-2). */
#include "util/hash.h"

#include <stdio.h>
#include <string.h>

static const uint64_t P1 = 0x9E3779B185EBCA87ULL;
static const uint64_t P2 = 0xC2B2AE3D27D4EB4FULL;
static const uint64_t P3 = 0x165667B19E3779F9ULL;
static const uint64_t P4 = 0x85EBCA77C2B2AE63ULL;
static const uint64_t P5 = 0x27D4EB2F165667C5ULL;

static uint64_t rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t read64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static uint32_t read32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

static uint64_t round1(uint64_t acc, uint64_t input)
{
    acc += input * P2;
    acc = rotl(acc, 31);
    return acc * P1;
}

static uint64_t merge_round(uint64_t acc, uint64_t val)
{
    acc ^= round1(0, val);
    return acc * P1 + P4;
}

void vr_hash_init(vr_hash *h, uint64_t seed)
{
    memset(h, 0, sizeof *h);
    h->seed = seed;
    h->v[0] = seed + P1 + P2;
    h->v[1] = seed + P2;
    h->v[2] = seed;
    h->v[3] = seed - P1;
}

static const unsigned char *consume_stripes(vr_hash *h, const unsigned char *p,
                                            const unsigned char *end)
{
    uint64_t v0 = h->v[0], v1 = h->v[1], v2 = h->v[2], v3 = h->v[3];
    while (p + 32 <= end) {
        v0 = round1(v0, read64(p));
        v1 = round1(v1, read64(p + 8));
        v2 = round1(v2, read64(p + 16));
        v3 = round1(v3, read64(p + 24));
        p += 32;
    }
    h->v[0] = v0, h->v[1] = v1, h->v[2] = v2, h->v[3] = v3;
    return p;
}

void vr_hash_update(vr_hash *h, const void *data, size_t len)
{
    const unsigned char *p = data, *end = p + len;
    h->total_len += len;
    if (h->memsize + len < 32) {
        memcpy(h->mem + h->memsize, p, len);
        h->memsize += len;
        return;
    }
    if (h->memsize) {
        size_t fill = 32 - h->memsize;
        memcpy(h->mem + h->memsize, p, fill);
        consume_stripes(h, h->mem, h->mem + 32);
        p += fill;
        h->memsize = 0;
    }
    p = consume_stripes(h, p, end);
    h->memsize = (size_t)(end - p);
    memcpy(h->mem, p, h->memsize);
}

/* The last step of a digest: the bytes left over after the stripes, and
 * the avalanche (xxhash_spec.md, steps 5 and 6). */
static uint64_t finish(uint64_t acc, const unsigned char *p, const unsigned char *end)
{
    for (; p + 8 <= end; p += 8) {
        acc ^= round1(0, read64(p));
        acc = rotl(acc, 27) * P1 + P4;
    }
    if (p + 4 <= end) {
        acc ^= (uint64_t)read32(p) * P1;
        acc = rotl(acc, 23) * P2 + P3;
        p += 4;
    }
    for (; p < end; p++) {
        acc ^= (uint64_t)*p * P5;
        acc = rotl(acc, 11) * P1;
    }
    acc ^= acc >> 33;
    acc *= P2;
    acc ^= acc >> 29;
    acc *= P3;
    acc ^= acc >> 32;
    return acc;
}

static uint64_t converge(const uint64_t v[4])
{
    uint64_t acc = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
    for (int i = 0; i < 4; i++)
        acc = merge_round(acc, v[i]);
    return acc;
}

uint64_t vr_hash_digest(const vr_hash *h)
{
    uint64_t acc = h->total_len >= 32 ? converge(h->v) : h->seed + P5;
    return finish(acc + h->total_len, h->mem, h->mem + h->memsize);
}

uint64_t vr_hash_once(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data, *end = p + len;
    uint64_t acc = seed + P5;
    if (len >= 32) {
        uint64_t v0 = seed + P1 + P2, v1 = seed + P2, v2 = seed, v3 = seed - P1;
        for (; p + 32 <= end; p += 32) {
            v0 = round1(v0, read64(p));
            v1 = round1(v1, read64(p + 8));
            v2 = round1(v2, read64(p + 16));
            v3 = round1(v3, read64(p + 24));
        }
        const uint64_t v[4] = {v0, v1, v2, v3};
        acc = converge(v);
    }
    return finish(acc + (uint64_t)len, p, end);
}

void vr_hash_hex(uint64_t digest, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)digest);
}
