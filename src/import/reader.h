/*-*** reader.h: the interface every input format implements ***/
/*
 * A reader turns one input stream into rows of the database. Readers are
 * chosen by content: each one scores the first bytes of the (decompressed)
 * input and the highest score wins, so names and extensions never matter.
 * A new input format is a new reader file plus its entry in vr_readers[].
 *
 * The import driver (import.c) opens the input, picks the reader, wraps the
 * reader's work in one transaction and records the source row; a reader
 * only reads ctx->in and writes rows for ctx->source_id.
 *
 * Ownership: the context and everything in it belong to the driver.
 */
#ifndef VR_READER_H
#define VR_READER_H

#include <stddef.h>
#include <stdint.h>

#include "../db/db.h"
#include "../input/input.h"
#include "../util/error.h"
#include "../util/progress.h"
#include "jscan.h"
#include "json.h"

typedef struct {
    /* given by the driver */
    vr_db *db;
    vr_input *in;
    int64_t source_id;
    const vr_warner *warn;
    vr_progress *progress;       /* may be NULL */

    /* filled by the reader */
    uint64_t events;             /* records read */
    int truncated;               /* the input was cut: what was before is in */
    uint64_t truncated_at;       /* decompressed byte offset of the cut */
    const char *truncated_where; /* e.g. "inside an event" (static string) */
    int64_t base_time_ns;
    int64_t start_ns, end_ns;    /* INT64_MAX / INT64_MIN when no events */
    int64_t rank, world_size;    /* -1 when unknown */
    vr_json_tally tally;
} vr_import_ctx;

typedef struct {
    const char *name;          /* stored in source.format, e.g. "kineto" */
    const char *description;   /* for --help and error messages */
    /* 0: not this format; higher is surer. `head` is decompressed. */
    int (*sniff)(const char *head, size_t len);
    int (*import)(vr_import_ctx *ctx, vr_error *err);
} vr_reader;

extern const vr_reader vr_reader_kineto;
extern const vr_reader vr_reader_memtimeline;

/* All readers, NULL-terminated. */
extern const vr_reader *const vr_readers[];

/* The best reader for `head`, or NULL. */
const vr_reader *vr_reader_pick(const char *head, size_t len);

/* Adds `count` to the tally row `kind` of the source (no-op for 0). */
int vr_reader_tally(vr_import_ctx *ctx, const char *kind, uint64_t count,
                    vr_error *err);

/* Feeds the whole input through `scan` in 1 MiB reads, drawing progress.
 * A syntax error fails with "FILE: byte N: expected ..."; a callback that
 * stopped the scan fails with the error it set. An input that ends before
 * the document does (or a cut compressed stream) is not an error: it sets
 * ctx->truncated, truncated_at and truncated_where. */
int vr_reader_scan_json(vr_import_ctx *ctx, vr_jscan *scan, vr_error *err);

/* Device row for (rank, platform, idx), created on first use; with rank
 * -1 (unknown) the device is this source's own. */
int64_t vr_reader_device(vr_import_ctx *ctx, int64_t rank, const char *platform,
                         int64_t idx, vr_error *err);

#endif
