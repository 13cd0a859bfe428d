/*-*** snapshot.h: the allocator snapshot's model, shared by its two front ends ***/
/*
 * Internal to src/import. A CUDA caching-allocator snapshot is one dict
 * (docs/formats/allocator-snapshot.md), saved either pickled
 * (snapshot.c, which also owns the model below) or as JSON
 * (snapshot_json.c). Both front ends hand the model the same vr_pk_value
 * trees (src/parse/pickle.h), so one code path stores segments, blocks,
 * trace entries, frames and stacks, settings and stages whatever the form:
 *
 *   s = vr_snapshot_begin(ctx, err);
 *   vr_snapshot_segment(s, seg)        each element of `segments` (or of a
 *                                      bare list of segments), in order
 *   vr_snapshot_entry(s, i, entry)     each element of device_traces[i]
 *   vr_snapshot_member(s, key, value)  every other member of the root
 *   vr_snapshot_host(s, traces, n)     records of host_segments/host_traces
 *   vr_snapshot_end(s)                 the end state, stages and counts
 *   vr_snapshot_free(s)
 *
 * A value that is not what it should be (not a dict, no total_size, a
 * negative size or address, a block outside its segment, ...) is counted
 * as malformed, not an error, kept out of every figure, and said once on
 * stderr at the end with the first one's byte (vr_snapshot_at). Each call returns 0, or -1 with
 * the error given to vr_snapshot_begin set (a database error). Values are
 * read during the call only; a container may be tagged (vr_pk_set_tag), so
 * a front end that builds its own values allocates each container as
 * vr_pk_container_size() zeroed bytes.
 *
 * The stages (snapshot_stages.c): external_annotations, the START/END
 * marks newer PyTorch records ({"name", "stage", "device", "time_us"}),
 * become one op row (cat 'user_annotation') per pair.
 */
#ifndef VR_SNAPSHOT_H
#define VR_SNAPSHOT_H

#include "parse/pickle.h"
#include "util/ordmap.h"
#include "import/reader.h"

typedef struct vr_snapshot vr_snapshot;

vr_snapshot *vr_snapshot_begin(vr_import_ctx *ctx, vr_error *err);
/* The byte offset of the record the next call reads (for the warning on
 * malformed records: the first one's place). */
void vr_snapshot_at(vr_snapshot *s, uint64_t offset);
int vr_snapshot_segment(vr_snapshot *s, const vr_pk_value *segment);
int vr_snapshot_entry(vr_snapshot *s, int64_t device, const vr_pk_value *value);
int vr_snapshot_member(vr_snapshot *s, const char *key, size_t len, const vr_pk_value *value);
/* Records of pinned host memory (host_segments: traces 0; host_traces:
 * 1) the file holds and the model does not read: counted (source_events
 * host_segment, host_trace_entry; tally host_memory). */
void vr_snapshot_host(vr_snapshot *s, int traces, uint64_t records);
int vr_snapshot_end(vr_snapshot *s);
void vr_snapshot_free(vr_snapshot *s);

/* Stores the START/END pairs of an external_annotations list as stages of
 * ctx's source (pairs matched by device and name, the latest START first);
 * entries without a name, a stage or a time add to *malformed. A START
 * without its END runs to the source's last time, an END without its
 * START (the history is a ring buffer) from its first: such rows wait,
 * from the row id in *first_open (0: none yet), for
 * vr_snapshot_stages_close(), once those times are known. */
int vr_snapshot_stages(vr_import_ctx *ctx, const vr_pk_value *annotations, uint64_t *malformed,
                       int64_t *first_open, vr_error *err);
int vr_snapshot_stages_close(vr_import_ctx *ctx, int64_t first_open, vr_error *err);

/* Keys a snapshot's dicts may hold (snapshot_keys.c): those PyTorch
 * writes, read or not, are known; any other is counted (tally
 * 'unknown_key') and the first few distinct ones are named, as
 * "segment.key", in source_meta 'unknown_keys'. Never fatal. */
typedef enum {
    VR_SNAP_ROOT,
    VR_SNAP_SEGMENT,
    VR_SNAP_BLOCK,
    VR_SNAP_HISTORY, /* a legacy block's history item */
    VR_SNAP_ENTRY,   /* a trace entry */
    VR_SNAP_FRAME
} vr_snap_element;

#define VR_SNAP_KEY_NAMES 8
#define VR_SNAP_KEY_NAME_MAX 64

typedef struct {
    uint64_t count;
    size_t nnames;
    int more; /* distinct names past the first few */
    char names[VR_SNAP_KEY_NAMES][VR_SNAP_KEY_NAME_MAX];
} vr_snap_keys;

/* Counts the unknown keys of a dict of kind `e` (anything else: nothing). */
void vr_snap_keys_check(vr_snap_keys *k, vr_snap_element e, const vr_pk_value *dict);
/* 1 when `key` is one PyTorch writes in a dict of kind `e`. */
int vr_snap_keys_known(vr_snap_element e, const char *key, size_t len);
/* Counts one unknown key (NULL: a key that is not text). */
void vr_snap_keys_unknown(vr_snap_keys *k, vr_snap_element e, const char *key, size_t len);
/* The tally and the names, for ctx's source. */
int vr_snap_keys_record(const vr_snap_keys *k, vr_import_ctx *ctx, vr_error *err);

/* Frees of addresses never allocated and in no segment (snapshot_bounds.c,
 * where the rule is argued): the segments the file names, the allocs
 * outside them, the frees outside them so far (suspects, their rows
 * written), and the OOM rows whose sums a removed free would change. */
typedef struct {
    int64_t device;             /* as the file numbers it */
    int64_t device_id;          /* its row */
    int64_t address, delta;     /* delta: the change it made to the running allocated sum */
    int64_t first_row, end_row; /* its rows' ids: [first_row, end_row) */
    uint64_t at;                /* its byte in the file */
    int action;                 /* its index in the reader's actions */
} vr_snap_suspect;

typedef struct {
    vr_ordmap ranges; /* (device, start) -> v[0]: the largest end from that start */
    vr_ordmap allocs; /* (device, address): allocs outside the segments known then */
    int off;          /* not judged (a segment without an address, or past a bound) */
    vr_snap_suspect *sus;
    size_t nsus, sus_cap;
    int64_t (*ooms)[3]; /* device, row id, the next entry id when it was written */
    size_t nooms, ooms_cap;
} vr_snap_bounds;

void vr_snap_bounds_init(vr_snap_bounds *b);
void vr_snap_bounds_free(vr_snap_bounds *b);
/* A segment the file names (the end state, or a segment_* entry). */
void vr_snap_bounds_segment(vr_snap_bounds *b, int64_t device, int64_t start, int64_t size);
/* Nothing is judged (a segment without an address: where blocks may be is
 * not known). */
void vr_snap_bounds_off(vr_snap_bounds *b);
/* 1 when `address` is inside a segment named so far, or nothing is judged. */
int vr_snap_bounds_holds(const vr_snap_bounds *b, int64_t device, int64_t address);
/* An alloc entry; a free entry (a suspect when no segment named so far
 * holds it and no alloc before it gave it). */
void vr_snap_bounds_alloc(vr_snap_bounds *b, int64_t device, int64_t address);
void vr_snap_bounds_free_entry(vr_snap_bounds *b, const vr_snap_suspect *x);
void vr_snap_bounds_oom(vr_snap_bounds *b, int64_t device, int64_t row, int64_t next_id);
/* Once every row is written: the suspect frees no segment holds even now are
 * taken out of ctx's source (rows deleted, later sums and OOMs put back),
 * each told to on_bad first. 0, or -1 with err set. */
int vr_snap_bounds_settle(vr_snap_bounds *b, vr_import_ctx *ctx,
                          void (*on_bad)(void *ud, const vr_snap_suspect *x), void *ud,
                          vr_error *err);

#endif
