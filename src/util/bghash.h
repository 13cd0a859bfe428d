/*-*** bghash.h: BLAKE2b-256 of a stream, computed on a thread of its own ***/
/*
 * Every byte an import reads passes through the content digest (input.h),
 * and BLAKE2b costs more than a tenth of an import's processor time. Here
 * the bytes fed are copied into a few 1 MiB slots that a thread hashes,
 * so the digest runs beside the reader instead of on its path. A stream
 * under one slot never starts the thread; where no thread can be made,
 * the slots are hashed in line. Memory: at most 4 MiB a hasher.
 */
#ifndef VR_BGHASH_H
#define VR_BGHASH_H

#include <stddef.h>

#include "util/blake2b.h"

typedef struct vr_bghash vr_bghash;

vr_bghash *vr_bghash_new(void);
void vr_bghash_feed(vr_bghash *h, const void *data, size_t len);
/* The digest of everything fed so far (waits for the thread to catch up);
 * feeding may go on after. */
void vr_bghash_hex(vr_bghash *h, char out[VR_BLAKE2B_HEX]);
void vr_bghash_free(vr_bghash *h);

#endif
