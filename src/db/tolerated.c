#include "db/tolerated.h"

#include <stdio.h>
#include <string.h>

#include "util/units.h"

static const vr_tolerated_kind kinds[] = {
    {"malformed_event", "%s malformed record(s) skipped (unreadable, or with impossible figures)",
     VR_TOLERATED_DROPPED},
    /* Text logs (nvidia-smi): a row that does not parse, or was cut by a
     * killed job. */
    {"malformed_line", "%s malformed or cut line(s) skipped", VR_TOLERATED_DROPPED},
    /* A capture's sections of a kind vramreport does not read (yet). */
    {"unread_section", "%s section(s) of the capture not read", VR_TOLERATED_DROPPED},
    {"oversized_value", "%s value(s) over 256 MiB skipped", VR_TOLERATED_DROPPED},
    {"trailing_data", "%s byte(s) after the end of the JSON document ignored",
     VR_TOLERATED_DROPPED},
    /* An allocator snapshot's pickle: bytes after its STOP opcode. */
    {"trailing_pickle", "%s byte(s) after the end of the pickle ignored", VR_TOLERATED_DROPPED},
    {"inexact_number", "%s number(s) not read (not whole, or out of range)",
     VR_TOLERATED_DROPPED},
    {"int_overflow", "%s integer(s) beyond 64 bits clamped or not read", VR_TOLERATED_DROPPED},
    /* Pinned host memory in newer allocator snapshots (host_segments,
     * host_traces): counted, not read. */
    {"host_memory", "%s pinned host memory record(s) (host_segments, host_traces) not read",
     VR_TOLERATED_DROPPED},
    {"malformed_stat", "%s allocator statistic(s) not read (cut, not a number, or impossible)",
     VR_TOLERATED_DROPPED},
    {"invalid_utf8", "%s string(s) with invalid UTF-8 repaired", VR_TOLERATED_REPAIRED},
    {"repaired_quote", "%s unescaped quote(s) kept as text", VR_TOLERATED_REPAIRED},
    /* record_shapes' lists of an op that reads weights (op_weight). */
    {"weight_operand_unreadable",
     "%s weight operand(s) of traced ops not read (dims not a list of integers >= 0)",
     VR_TOLERATED_DROPPED},
    {"weight_bytes_saturated", "%s traced op(s) with weight bytes beyond 64 bits, clamped",
     VR_TOLERATED_DROPPED},
    {"unreadable_oom_figure", "%s out-of-memory figure(s) not read (out of range, or impossible)",
     VR_TOLERATED_DROPPED},
    /* A box embedded in a job log past the 64 KiB (400 lines) the scanner
     * hands on: its rows past the bound are not read. */
    {"cut_log_box", "%s box(es) in a log read in part (over 64 KiB)", VR_TOLERATED_DROPPED},
    {"malformed_profiler_row",
     "%s profiler table row(s) not read (cut short, or a figure not a number)",
     VR_TOLERATED_DROPPED},
    {"long_log_line", "%s log line(s) over 64 KiB read in part", VR_TOLERATED_REPAIRED},
    {"control_char", "%s raw control character(s) in strings shown as spaces",
     VR_TOLERATED_REPAIRED},
    /* Said elsewhere: rebuilt totals in the device section, the missing
     * base time in the truncation warning. */
    {"unknown_key", "%s unknown key(s) ignored", VR_TOLERATED_QUIET},
    {"memory_event_without_totals", "%s memory event(s) without allocator totals",
     VR_TOLERATED_QUIET},
    {"repeated_oom", "%s out-of-memory message(s) repeated by a chained traceback, counted once",
     VR_TOLERATED_QUIET},
    /* Said by forward_weights.uncounted. */
    {"weight_operand_unknown_dtype",
     "%s weight operand(s) of traced ops with a dtype of unknown size", VR_TOLERATED_QUIET},
    {"base_time_missing", "baseTimeNanoseconds missing: times are relative", VR_TOLERATED_QUIET},
};

const vr_tolerated_kind *vr_tolerated_find(const char *kind)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].kind, kind) == 0)
            return &kinds[i];
    return NULL;
}

void vr_tolerated_sentence(const char *kind, int64_t count, char *out, size_t size)
{
    char n[32];
    vr_units_count(count, n, sizeof n);
    const vr_tolerated_kind *k = vr_tolerated_find(kind);
    if (!k) {
        snprintf(out, size, "%s: %s", kind, n);
        return;
    }
    /* The format has at most one %s, the count. */
    snprintf(out, size, k->what, n);
}
