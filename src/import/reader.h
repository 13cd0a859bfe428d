/*-*** reader.h: the interface every input format implements ***/
/*
 * A reader turns one input stream into rows of the database. Readers are
 * chosen by content: each one sniffs the first bytes of the (decompressed)
 * input and says how sure it is (a named level); the surest wins, so names
 * and extensions never matter. A new input format is a new reader file
 * plus its entry in the registry (registry.c).
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

#include "db/db.h"
#include "input/input.h"
#include "util/error.h"
#include "util/progress.h"
#include "parse/json_scan.h"
#include "parse/json_pull.h"

/* How sure a reader is that content is its format. Named levels, not
 * scores, so their meaning is fixed: a catch-all (any text) never wins
 * over a format that merely has the right shape, and that never over one
 * whose signature is in the bytes. */
typedef enum {
    VR_SNIFF_NO = 0,   /* not this format */
    VR_SNIFF_FALLBACK, /* a catch-all could take it (any text) */
    VR_SNIFF_SHAPE,    /* the right container shape, no signature seen */
    VR_SNIFF_SIGNATURE /* markers only this format writes */
} vr_sniff_level;

/* What a source's times are, for placing it on one clock (import.sql,
 * set_source_clock). The import applies the zone as the source's offset;
 * readers store times as they read them. */
typedef enum {
    VR_CLOCK_PROFILER = 0, /* profiler times: absolute, or relative to baseTimeNanoseconds */
    VR_CLOCK_WALL_UTC,     /* wall-clock stamps whose zone the text gave, stored as UTC */
    VR_CLOCK_WALL_LOCAL,   /* wall-clock stamps with no zone, stored as if UTC: --tz applies */
    VR_CLOCK_NONE          /* no times at all: unplaced */
} vr_clock_kind;

typedef struct {
    /* given by the driver */
    vr_db *db;
    vr_input *in;
    int64_t source_id;
    const vr_warner *warn;
    vr_progress *progress;  /* may be NULL */
    vr_sniff_level sniffed; /* how sure the registry was of the reader */
    int64_t tz_offset_ns;   /* --tz: local wall clock minus UTC */
    const char *tz_name;    /* --tz as given ("UTC" by default) */

    /* filled by the reader */
    uint64_t events;             /* records read */
    int truncated;               /* the input was cut: what was before is in */
    uint64_t truncated_at;       /* decompressed byte offset of the cut */
    const char *truncated_where; /* e.g. "inside an event" (static string) */
    int64_t base_time_ns;
    int64_t start_ns, end_ns;   /* INT64_MAX / INT64_MIN when no events */
    int64_t rank, world_size;   /* -1 when unknown */
    vr_clock_kind clock;        /* what the times stored are (default: profiler) */
    vr_json_faults json_faults; /* what the JSON readers repaired or refused */
} vr_import_ctx;

/* A line's callback: the line without its end (LF or CRLF); the last
 * line may lack one. A line longer than the reader's max_line bytes is
 * passed cut to max_line with `cut` set, and the rest of it skipped, so
 * memory stays bounded whatever the input. Returns 0 to go on, -1 to stop
 * with its error. Lines are numbered from 1, for messages. */
typedef int (*vr_line_fn)(void *state, const char *line, size_t len, uint64_t number, int cut,
                          vr_error *err);

/* A reader of text a line at a time, which is then only its parsing: the
 * driver (vr_reader_run) gives it `state_size` zeroed bytes, calls init,
 * reads the input in chunks, cuts it into lines (parse/lines.h), feeds
 * each to `line` (drawing progress), marks an input cut short as
 * truncated "in a line", calls finish when every line went well, and
 * free (NULL: nothing to free) in every case. */
typedef struct {
    size_t state_size;
    size_t max_line;
    void (*init)(void *state, vr_import_ctx *ctx);
    vr_line_fn line;
    int (*finish)(void *state, vr_error *err);
    void (*free)(void *state);
} vr_line_reader;

typedef struct {
    const char *name;        /* stored in source.format, e.g. "kineto" */
    const char *description; /* "a PyTorch profiler (Kineto) trace" */
    /* How sure; `head` is the decompressed start of the input (64 KiB or
     * all of a shorter one). */
    vr_sniff_level (*sniff)(const char *head, size_t len);
    /* Reads the whole input (bytes through vr_reader_scan_json or
     * vr_input_read). A reader fails with VR_ERR_MALFORMED when the input
     * is its format but broken, VR_ERR_NOT_RECOGNISED when reading shows
     * it is not its format after all. */
    int (*import)(vr_import_ctx *ctx, vr_error *err);
    /* Or, instead of import, a reader of lines. Neither: the format is
     * recognised, so an input is named for what it is, but not read yet. */
    const vr_line_reader *lines;
} vr_reader;

/* Whether r reads its format (an import or lines), not only knows it. */
int vr_reader_reads(const vr_reader *r);

/* Reads the whole input with r (r reads it: vr_reader_reads). */
int vr_reader_run(const vr_reader *r, vr_import_ctx *ctx, vr_error *err);

/* The registry: every format, read or only recognised, in one list
 * (registry.c), NULL-terminated. It also writes the "expected one of"
 * message. */
extern const vr_reader *const vr_readers[];

/* The surest reader for `head` (on a tie, the earlier in the list), its
 * level in *level; NULL (level VR_SNIFF_NO) when none knows it. */
const vr_reader *vr_reader_pick(const char *head, size_t len, vr_sniff_level *level);

/* Appends "a PyTorch profiler (Kineto) trace, ...": the formats read. */
void vr_reader_expected(vr_buf *out);

/* What content no reader knows looks like, for messages: "text", "an
 * SQLite database", "binary data" ... (static string). */
const char *vr_reader_looks_like(const char *head, size_t len);

/* 1 when `head` is the start of a report vramreport wrote (Markdown,
 * --summary, HTML or JSON): never an input, whatever else it holds. */
#define VR_READER_OWN_REPORT "a vramreport report"
int vr_reader_is_own_report(const char *head, size_t len);

/* Adds `count` to the tally row `kind` of the source (no-op for 0). */
int vr_reader_tally(vr_import_ctx *ctx, const char *kind, uint64_t count, vr_error *err);

/* Feeds the whole input through `scan` in 1 MiB reads, drawing progress.
 * A syntax error fails with "FILE: byte N: expected ..."; a callback that
 * stopped the scan fails with the error it set. An input that ends before
 * the document does (or a cut compressed stream) is not an error: it sets
 * ctx->truncated, truncated_at and truncated_where. */
int vr_reader_scan_json(vr_import_ctx *ctx, vr_json_scan *scan, vr_error *err);

/* Feeds the input to `on_line` a line at a time, cut at max_line (see
 * vr_line_fn), drawing progress; an input cut short is truncated "in a
 * line". The loop a vr_line_reader runs in. */
int vr_reader_scan_lines(vr_import_ctx *ctx, size_t max_line, vr_line_fn on_line, void *state,
                         vr_error *err);

/* Device row for (rank, platform, idx), created on first use; with rank
 * -1 (unknown) the device is this source's own. */
int64_t vr_reader_device(vr_import_ctx *ctx, int64_t rank, const char *platform, int64_t idx,
                         vr_error *err);

#endif
