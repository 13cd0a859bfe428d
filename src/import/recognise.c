/* Formats vramreport recognises but does not read yet: an input of one of
 * them is named for what it is ("a CUDA allocator snapshot (pickle): not
 * read yet") instead of being refused by its first bytes. Each becomes a
 * reader (its import function set) when its issue lands; its sniff stays.
 * Signatures are from the writers' code and real files
 * (../shared/notes/formats.md). */
#include <string.h>

#include "reader.h"

static int has(const char *head, size_t len, const char *marker)
{
    return memmem(head, len, marker, strlen(marker)) != NULL;
}

/* The first byte that is not whitespace (or a UTF-8 byte order mark). */
static size_t skip_space(const char *head, size_t len)
{
    size_t i = len >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < len && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
        i++;
    return i;
}

/* The snapshot's JSON form: the same dict, as memory_viz and users save it. */
static vr_sniff_level sniff_snapshot_json(const char *head, size_t len)
{
    size_t i = skip_space(head, len);
    if (i >= len || head[i] != '{')
        return VR_SNIFF_NO;
    return has(head, len, "\"segments\"") &&
                   (has(head, len, "\"device_traces\"") || has(head, len, "\"total_size\""))
               ? VR_SNIFF_SIGNATURE
               : VR_SNIFF_NO;
}

/* torch.cuda.memory_stats() saved as JSON: flat keys like these. */
static vr_sniff_level sniff_memory_stats(const char *head, size_t len)
{
    size_t i = skip_space(head, len);
    if (i >= len || head[i] != '{')
        return VR_SNIFF_NO;
    return has(head, len, "\"allocated_bytes.all.current\"") ||
                   has(head, len, "\"reserved_bytes.all.peak\"")
               ? VR_SNIFF_SIGNATURE
               : VR_SNIFF_NO;
}

/* The box's title, or (a copy pasted without its header) its rows. */
static vr_sniff_level sniff_memory_summary(const char *head, size_t len)
{
    if (has(head, len, "PyTorch CUDA memory summary"))
        return VR_SNIFF_SIGNATURE;
    return has(head, len, "| Allocated memory ") && has(head, len, "|       from large pool |")
               ? VR_SNIFF_SIGNATURE
               : VR_SNIFF_NO;
}

/* The default table, alone or repeated by `nvidia-smi -l`. */
static vr_sniff_level sniff_nvsmi_table(const char *head, size_t len)
{
    return has(head, len, "| NVIDIA-SMI ") && has(head, len, "Memory-Usage")
               ? VR_SNIFF_SIGNATURE
               : VR_SNIFF_NO;
}

/* --query-gpu=...,memory.used --format=csv: the header names the fields. */
static vr_sniff_level sniff_nvsmi_csv(const char *head, size_t len)
{
    const char *nl = memchr(head, '\n', len);
    size_t first = nl ? (size_t)(nl - head) : len;
    return (has(head, first, "memory.used") || has(head, first, "memory.total") ||
            has(head, first, "used_gpu_memory")) &&
                   has(head, first, ", ")
               ? VR_SNIFF_SIGNATURE
               : VR_SNIFF_NO;
}

/* A job's log with the allocator's error in it. Other text is only a
 * fallback: logs are text, but so is everything else in a run folder. */
static vr_sniff_level sniff_job_log(const char *head, size_t len)
{
    if (has(head, len, "CUDA out of memory") || has(head, len, "OutOfMemoryError") ||
        has(head, len, "HIP out of memory"))
        return VR_SNIFF_SIGNATURE;
    return VR_SNIFF_NO;
}

const vr_reader vr_reader_snapshot_json = {
    "snapshot_json", "a CUDA caching-allocator snapshot (JSON)", sniff_snapshot_json, NULL};
const vr_reader vr_reader_memory_stats = {
    "memory_stats", "torch.cuda.memory_stats() (JSON)", sniff_memory_stats, NULL};
const vr_reader vr_reader_memory_summary = {
    "memory_summary", "torch.cuda.memory_summary() text", sniff_memory_summary, NULL};
const vr_reader vr_reader_nvsmi_table = {
    "nvsmi_table", "an nvidia-smi table log", sniff_nvsmi_table, NULL};
const vr_reader vr_reader_nvsmi_csv = {
    "nvsmi_csv", "an nvidia-smi --query-gpu CSV log", sniff_nvsmi_csv, NULL};
const vr_reader vr_reader_job_log = {
    "job_log", "a job log with a CUDA out-of-memory error", sniff_job_log, NULL};
