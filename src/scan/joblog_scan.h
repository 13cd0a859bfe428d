/*-*** joblog_scan.h: finds out-of-memory errors in a job's text log ***/
/*
 * The scanner behind the job-log reader (joblog.c), kept free of the
 * database so a fuzzer can drive it alone. It is fed the log in pieces of
 * any size and calls its sink for each CUDA/HIP out-of-memory error (with
 * the message's figures, the lines before it and the traceback's last
 * user frame) and for each embedded nvidia-smi table, memory_summary()
 * box or profiler table (key_averages().table(): from the dash rule above
 * its header to its "time total" lines, or to its last row when cut). Lines that hold none of its markers are passed over at memmem
 * speed, never parsed one by one.
 *
 * Memory is bounded: a window of a few MiB (the history a traceback
 * needs, the look-ahead a re-wrapped message or a box needs), whatever the
 * size of the log or of its lines. Everything the sink is given lives
 * until the callback returns.
 */
#ifndef VR_JOBLOG_SCAN_H
#define VR_JOBLOG_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "scan/oom.h"
#include "util/buf.h"
#include "util/error.h"

#define VR_JOBLOG_CONTEXT 30 /* lines kept before an error */

/* A line of the log as it is, its end (CR LF) removed. */
typedef struct {
    uint64_t number;
    const char *text;
    size_t len;
    const char *role; /* 'oom', 'traceback', 'context', 'smi_table', 'memory_summary',
                              'profiler_table' */
    int has_ts;
    int64_t ts_ns;
} vr_log_line;

/* An embedded box as on_block gets it. */
typedef struct {
    const vr_log_line *first; /* its first line; text: the whole box, bounded */
    const vr_log_line *last;  /* its last line */
    const char *above;        /* the line just above it (nvidia-smi's time stamp), */
    size_t above_len;         /*   cleaned; NULL when the window does not hold it */
    int cut;                  /* the box went on past the bound (64 KiB, 400 lines) */
} vr_log_box;

typedef struct {
    /* An error, the lines to keep with it (those before it, then its own), in order. */
    int (*on_oom)(void *ud, const vr_oom *oom, const vr_log_line *lines, size_t nlines,
                  vr_error *err);
    /* An embedded box (its text's lines, without their ends, are the box's). */
    int (*on_block)(void *ud, const vr_log_box *box, vr_error *err);
    /* A line holding a needle that is neither an error nor a box (a
     * memory print, perhaps: memprint.h), cleaned, with its rank (-1:
     * none) and up to VR_JOBLOG_AROUND lines before it, the nearest first
     * (their steps and stamps may be the line's). NULL: not wanted. */
    int (*on_text)(void *ud, const vr_log_line *line, int64_t rank, const vr_log_line *before,
                   size_t nbefore, vr_error *err);
} vr_joblog_sink;

#define VR_JOBLOG_AROUND 3

typedef struct {
    uint64_t lines;   /* lines read */
    uint64_t ooms;    /* errors given to on_oom */
    uint64_t repeats; /* a message repeated in a chained traceback, given once */
    uint64_t blocks;
    uint64_t texts;             /* lines given to on_text */
    uint64_t unreadable;        /* figures whose number could not be read (out of range) */
    uint64_t cut_lines;         /* candidate lines longer than the scanner keeps */
    int seen_zoned, seen_local; /* timestamps with / without their zone */
    int64_t start_ns, end_ns;   /* earliest and latest stamp seen (INT64_MAX/MIN: none) */
} vr_joblog_stats;

typedef struct vr_joblog_scan vr_joblog_scan;

vr_joblog_scan *vr_joblog_scan_new(const vr_joblog_sink *sink, void *ud);
/* Feeds the next bytes of the log; -1 when a callback failed (its error). */
int vr_joblog_scan_feed(vr_joblog_scan *s, const char *data, size_t len, vr_error *err);
/* Zero-copy feeding: room for the next bytes (at least 1), then how many
 * were written there. */
char *vr_joblog_scan_space(vr_joblog_scan *s, size_t *room);
int vr_joblog_scan_wrote(vr_joblog_scan *s, size_t n, vr_error *err);
/* The end of the log: what was held back is scanned. */
int vr_joblog_scan_finish(vr_joblog_scan *s, vr_error *err);
const vr_joblog_stats *vr_joblog_scan_stats(const vr_joblog_scan *s);
void vr_joblog_scan_free(vr_joblog_scan *s);

/* `text` without terminal colour sequences and with HTML's escapes
 * (&gt; &lt; &amp; &quot; &#39;) decoded, appended to `out`. */
void vr_joblog_clean(const char *text, size_t len, vr_buf *out);

/* "14.52 GiB" at `s`: the bytes (exactly, from the decimal text, rounded
 * to the nearest byte) and the length read. 0 when `s` is not a size, -1
 * when it is one out of range. */
int vr_joblog_parse_size(const char *s, size_t len, int64_t *bytes, size_t *used);

/* The length of a line's leading "[rank3]: " style prefix (with the
 * blanks around it); 0 when none. */
size_t vr_joblog_prefix_length(const char *line, size_t len);
/* The same prefix with only the one blank after it (0 when none): what
 * a fixed-width table's lines lose. */
size_t vr_joblog_rank_prefix_length(const char *line, size_t len);

/* Whether `label` holds one of the needles the scanner looks for (a
 * line without any is never given to a sink): memprint's check. */
int vr_joblog_has_needle(const char *label, size_t len);

/* A log line's leading stamp: 1 and *ns (UTC when *zoned), 0 when none. */
int vr_joblog_timestamp(const char *line, size_t len, int64_t *ns, int *zoned);

#endif
