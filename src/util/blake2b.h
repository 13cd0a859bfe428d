/*-*** blake2b.h: BLAKE2b-256 (RFC 7693), streaming, a digest no one can forge ***/
/*
 * XXH64 (hash.h) recognises content imported before at several GB/s, but
 * anyone can make two files of one length with one XXH64. BLAKE2b is a
 * cryptographic hash: equal digests mean equal content, whoever chose the
 * bytes. It is the fastest such hash in portable C (about three times
 * SHA-256), which matters as every byte imported passes through it. Only
 * the unkeyed, 32-byte form is offered. The state is caller-owned.
 */
#ifndef VR_BLAKE2B_H
#define VR_BLAKE2B_H

#include <stddef.h>
#include <stdint.h>

#define VR_BLAKE2B_BYTES 32
#define VR_BLAKE2B_HEX (2 * VR_BLAKE2B_BYTES + 1)

typedef struct {
    uint64_t h[8];
    uint64_t t[2];          /* bytes compressed so far */
    unsigned char buf[128]; /* the block not yet compressed */
    size_t buflen;
} vr_blake2b;

void vr_blake2b_init(vr_blake2b *s);
void vr_blake2b_update(vr_blake2b *s, const void *data, size_t len);
/* The digest of everything given so far; the state is left as it was, so
 * a digest may be taken and the stream go on. */
void vr_blake2b_final(const vr_blake2b *s, unsigned char out[VR_BLAKE2B_BYTES]);
/* The digest as 64 lowercase hex digits plus NUL. */
void vr_blake2b_hex(const vr_blake2b *s, char out[VR_BLAKE2B_HEX]);

#endif
