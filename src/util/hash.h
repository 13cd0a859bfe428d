/*-*** hash.h: XXH64, streaming, for recognising a file imported before ***/
/*
 * Not cryptographic: it tells "this exact content was imported already",
 * which needs speed (several GB/s) and a negligible accidental collision
 * rate, not resistance to a forger (a forged collision is caught by the
 * BLAKE2b-256 digest, blake2b.h). The state is caller-owned.
 */
#ifndef VR_HASH_H
#define VR_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t total_len;
    uint64_t v[4];
    unsigned char mem[32];
    size_t memsize;
    uint64_t seed;
} vr_hash;

void vr_hash_init(vr_hash *h, uint64_t seed);
void vr_hash_update(vr_hash *h, const void *data, size_t len);
uint64_t vr_hash_digest(const vr_hash *h);

/* The digest of one buffer, as init + update + digest give it, without
 * the streaming state (a stack's frame ids: hundreds of thousands of short
 * buffers an import, where the state's copies cost more than the rounds). */
uint64_t vr_hash_once(const void *data, size_t len, uint64_t seed);

/* Writes the digest as 16 lowercase hex digits plus NUL into out[17]. */
void vr_hash_hex(uint64_t digest, char out[17]);

#endif
