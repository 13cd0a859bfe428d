/*-*** input.h: any input file as a stream of decompressed bytes ***/
/*
 * vr_input opens a path (or "-" for standard input), recognises gzip and
 * zstd by their magic bytes (never by name) and hands out the decompressed
 * bytes in caller-sized reads, so no file is ever held whole in memory.
 * Several gzip members or zstd frames back to back are read one after the
 * other, and zstd's skippable frames (pzstd writes them) are passed over,
 * as gzip -dc and zstd -dc do. Text that starts with a UTF-16 byte order
 * mark (LE or BE: PowerShell's `>` writes it) is handed out as UTF-8,
 * without the mark, so every reader sees UTF-8; offsets and sizes then
 * count the UTF-8 bytes.
 *
 * A compressed stream that stops before its end (a job killed while
 * writing) is not an error here: reads return what could be decoded, then 0,
 * and vr_input_truncated() says so. Hard read errors and corrupt compressed
 * data fail with a message naming the file and the offset.
 *
 * The raw (still compressed) bytes are hashed as they are read; the digest
 * identifies the content for "imported already" checks.
 *
 * Ownership: vr_input_open() returns an input the caller closes with
 * vr_input_close(). Buffers passed to vr_input_read() belong to the caller.
 */
#ifndef VR_INPUT_H
#define VR_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef enum { VR_COMPRESSION_NONE, VR_COMPRESSION_GZIP, VR_COMPRESSION_ZSTD } vr_compression;

typedef struct vr_input vr_input;

vr_input *vr_input_open(const char *path, vr_error *err);
void vr_input_close(vr_input *in);

/* Reads up to `cap` decompressed bytes into `dst`. Returns the count, 0 at
 * the end (or where a truncated stream stops), -1 on error (err set). */
ptrdiff_t vr_input_read(vr_input *in, void *dst, size_t cap, vr_error *err);

/* Fills `dst` with up to `cap` bytes of the decompressed start of the input
 * without consuming them; the next reads return them again. Returns the
 * count (which may be short at the end of input) or -1. */
ptrdiff_t vr_input_peek(vr_input *in, void *dst, size_t cap, vr_error *err);

const char *vr_input_path(const vr_input *in); /* "-" shows as "<stdin>" */
vr_compression vr_input_compression(const vr_input *in);
const char *vr_compression_name(vr_compression c); /* "plain", "gzip", "zstd" */
uint64_t vr_input_raw_offset(const vr_input *in);  /* compressed bytes read */
uint64_t vr_input_offset(const vr_input *in);      /* decompressed bytes returned */
int64_t vr_input_raw_size(const vr_input *in);     /* file size, -1 if unknown */
int vr_input_truncated(const vr_input *in);        /* compressed stream cut */

/* Digest of the raw bytes read so far (all of them once reads returned 0). */
uint64_t vr_input_digest(const vr_input *in);

/* Digest of the decompressed bytes read so far: the same content as plain,
 * gzip or zstd has one data digest (for a plain input it is the raw one). */
uint64_t vr_input_data_digest(const vr_input *in);

/* BLAKE2b-256 (util/blake2b.h) of the decompressed bytes read so far, as
 * 64 hex digits: unlike the XXH64 digests, no two contents share it, even
 * when someone made them to. */
void vr_input_content_digest(vr_input *in, char out[65]);

/* For regular files: hashes the whole raw file without disturbing the
 * stream, so a duplicate can be refused before any work. Returns 0 and sets
 * *digest, 1 when the input is not a regular file, -1 on error. */
int vr_input_prehash(vr_input *in, uint64_t *digest, vr_error *err);

#endif
