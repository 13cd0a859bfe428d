/*-*** segmap_svg.h: an allocator snapshot's segments as inline SVG ***/
/*
 * The segment map: what the caching allocator holds from the driver at the
 * end of a snapshot, one row per segment, each row a full-width bar cut
 * into the segment's blocks in address order, coloured by state (in use,
 * freed but waiting on a stream, free and cached). Every bar is full width
 * with its size written beside it: on a shared scale a 2 MiB small-pool
 * segment next to a 20 GiB one would be a pixel, and what a reader looks
 * for is how each segment is cut up, not how large it is.
 *
 * Bounded whatever the input:
 *  - rows: the caller streams segments largest first; the first
 *    VR_SEGMAP_MAX_ROWS get a row, every later one is summed into one last
 *    row ("N more segments, X, Y in use") drawn with its states' totals;
 *  - blocks: a block narrower than VR_SEGMAP_MIN_PIECE units is merged with
 *    its tiny neighbours into one piece, drawn as its states' shares side
 *    by side; so a row has at most about 2 * width / VR_SEGMAP_MIN_PIECE
 *    pieces, whatever the number of blocks.
 * Memory: the kept rows' pieces only (a few hundred KB at most).
 *
 * Each row states its exact figures for readers and tests:
 * <g class="vr-segment" data-bytes="SEGMENT" data-allocated="A"
 * data-pending="P" data-free="F" data-other="O" data-pool="large|small|..."
 * data-expandable="0|1">, where A+P+F+O = SEGMENT when the blocks do not
 * exceed it (O: bytes in no block); the last row is
 * <g class="vr-segment-rest" data-segments="N" ...> with the same sums.
 * The root has data-segments (all segments seen) and data-rows.
 *
 * Large- and small-pool segments differ in height (small: a thin bar);
 * expandable segments have a dashed outline. Every string from the caller
 * (title, segment type, pool) is XML escaped, invalid UTF-8 becomes U+FFFD.
 * No script, no external reference; numbers printed without %f.
 *
 * Ownership: vr_segmap_new() returns a map freed with vr_segmap_free();
 * vr_segmap_svg() returns a malloc'ed string the caller frees.
 */
#ifndef VR_SEGMAP_SVG_H
#define VR_SEGMAP_SVG_H

#include <stddef.h>
#include <stdint.h>

#define VR_SEGMAP_MAX_ROWS 24
#define VR_SEGMAP_MIN_PIECE 4 /* viewBox units: narrower blocks are merged */

/* A block's state, as the colour it is drawn in. */
typedef enum {
    VR_SEGMAP_ALLOCATED, /* active_allocated: in use */
    VR_SEGMAP_PENDING,   /* active_pending_free: freed, waiting on a stream */
    VR_SEGMAP_FREE,      /* inactive: free, cached in the segment */
    VR_SEGMAP_OTHER,     /* a state we do not know, or bytes in no block */
    VR_SEGMAP_NSTATES
} vr_segmap_state;

/* The state named by a snapshot's block state text (NULL: other). */
vr_segmap_state vr_segmap_state_of(const char *state);

typedef struct {
    int64_t total_bytes;
    const char *segment_type; /* "large", "small", or NULL */
    const char *pool;         /* segment_pool_id "a,b"; NULL or "0,0": default */
    int expandable;
} vr_segmap_segment;

typedef struct vr_segmap vr_segmap;

vr_segmap *vr_segmap_new(const char *title);
void vr_segmap_free(vr_segmap *map);

/* Starts the next segment (segments largest first); its blocks follow in
 * address order. Strings are copied. */
void vr_segmap_add_segment(vr_segmap *map, const vr_segmap_segment *seg);

/* A block of the segment last added (negative sizes count as 0). */
void vr_segmap_add_block(vr_segmap *map, int64_t bytes, vr_segmap_state state);

/* Renders the SVG (never NULL: allocation failure exits, util/alloc.h). */
char *vr_segmap_svg(const vr_segmap *map);
/* The same without its legend, an HTML list in *legend (legend_html.h;
 * malloc'ed): for the HTML report. */
char *vr_segmap_svg_html(const vr_segmap *map, char **legend);

/*-*** for tests ***/

/* Rows drawn for single segments (at most VR_SEGMAP_MAX_ROWS). */
size_t vr_segmap_rows(const vr_segmap *map);
/* Pieces of row `row` after merging; 0 when there is no such row. */
size_t vr_segmap_pieces(const vr_segmap *map, size_t row);
/* Segments summed into the last row, and their bytes in `state`
 * (VR_SEGMAP_OTHER: also bytes in no block; VR_SEGMAP_NSTATES: the
 * segments' sizes). */
int64_t vr_segmap_rest_segments(const vr_segmap *map);
int64_t vr_segmap_rest_bytes(const vr_segmap *map, vr_segmap_state state);

#endif
