/*-*** proftable.h: profiler tables, key_averages().table(), read from text ***/
/*
 * The table torch.autograd.profiler_util._build_table prints
 * (github.com/pytorch/pytorch, torch/autograd/profiler_util.py):
 *
 *   ----------------  ------------  ------------  ...   <- rule
 *               Name    Self CPU %      Self CPU  ...   <- header
 *   ----------------  ------------  ------------  ...   <- rule: the layout
 *        aten::empty         0.50%      10.000us  ...   <- one row per op
 *   ----------------  ------------  ------------  ...
 *   Self CPU time total: 1.234ms
 *   Self CUDA time total: 2.000ms
 *
 * Every cell is padded to its column's width (the rule's dash run) and
 * followed by two blanks; all but "Source Location" are right-aligned.
 * Cells are therefore cut by the rule's columns, never split on blanks
 * (op names hold blanks). Memory cells are _format_memory's: "512 b",
 * "1.50 Kb", "-2.25 Mb", "3.00 Gb" (1024 factors, two decimals); a figure
 * is stored as printed times its factor, rounded to the nearest byte
 * (half away from zero), so above 1 Kb it is approximate: the print
 * keeps 2 decimals, i.e. +-0.005 of the unit.
 *
 * Devices: PyTorch names the device columns after use_device ("CUDA",
 * "XPU", ...; newer releases may say "Device"); all map to the cuda_*
 * figures. The parser is database-free (the job-log scanner and fuzzers
 * use it); its callbacks write. Ownership: the caller's state; strings
 * given to callbacks live during the call only.
 */
#ifndef VR_PROFTABLE_H
#define VR_PROFTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define VR_PROFTABLE_MAX_COLUMNS 32

/* The memory figures of a row, in the JSON's order. */
typedef enum {
    VR_PROF_SELF_CUDA_MEM = 0,
    VR_PROF_CUDA_MEM,
    VR_PROF_SELF_CPU_MEM,
    VR_PROF_CPU_MEM,
    VR_PROF_MEMS
} vr_prof_mem;

typedef struct {
    const char *name; /* as printed, blanks around it removed */
    size_t name_len;
    int has_calls;
    int64_t calls;
    int has_mem[VR_PROF_MEMS]; /* the table has the column and the cell read */
    int64_t mem[VR_PROF_MEMS];
    /* The row's "Source Location" cell (group_by_stack_n): the first frame
     * of the op's stack, as printed; NULL when the table has none. The
     * stack's further frames, on the lines under the row, are not read. */
    const char *source;
    size_t source_len;
} vr_proftable_op;

typedef struct {
    /* The header is read: its names, tab-joined, in order. */
    int (*on_begin)(void *ud, const char *columns, size_t len, size_t ncolumns, vr_error *err);
    int (*on_op)(void *ud, const vr_proftable_op *op, vr_error *err);
    /* The end: rows given, whether the table was cut (no closing rule). */
    int (*on_end)(void *ud, uint64_t rows, int truncated, vr_error *err);
    /* The length of a line's leading log prefix to drop; NULL: none. */
    size_t (*prefix)(const char *line, size_t len);
} vr_proftable_sink;

typedef struct {
    uint64_t tables, rows;
    uint64_t skipped;       /* rows not read (cut short, a figure unreadable) */
    uint64_t rows_in_table; /* the caller's: rows of the current table written */
} vr_proftable_stats;

/* Reads one table: `text` holds its lines (ends '\n'), from the rule
 * above the header; `cut`: the text stops short of the table's end.
 * Text that is no table gives nothing. -1 only when a callback failed. */
int vr_proftable_read(const char *text, size_t len, int cut, const vr_proftable_sink *sink,
                      void *ud, vr_proftable_stats *st, vr_error *err);

/* For the scanner. A rule: dash runs two blanks apart (at least two),
 * ending the line (trailing blanks aside); 1 and *at (where it starts). */
int vr_proftable_is_rule(const char *line, size_t len, size_t *at);
/* A line that can be a row under `rule`: blank where the rule is, long
 * enough to hold the first cell, or blank altogether. */
int vr_proftable_fits(const char *rule, size_t rule_len, const char *line, size_t len);
/* "Self CPU time total: ..." and the device's. */
int vr_proftable_is_total(const char *line, size_t len);
/* Whether a header line names the calls column (the scanner's marker). */
int vr_proftable_is_header(const char *line, size_t len);

/* "-512.00 Kb" as bytes; 0 when it is not a memory cell. Exposed for tests. */
int vr_proftable_memory(const char *s, size_t len, int64_t *bytes);

#endif
