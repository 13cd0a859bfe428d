/* The registry: every format vramreport reads or recognises, in one list.
 * The order breaks ties between equally sure readers; the list also
 * writes the "expected one of" message, so it cannot fall out of date. */
#include <string.h>

#include "reader.h"

extern const vr_reader vr_reader_kineto, vr_reader_memtimeline;
extern const vr_reader vr_reader_nvsmi_capture, vr_reader_gpustat;
extern const vr_reader vr_reader_snapshot_pickle, vr_reader_snapshot_json,
    vr_reader_memory_stats /* memstats.c */, vr_reader_memory_summary /* memsummary.c */,
    vr_reader_nvsmi_xml,
    vr_reader_nvsmi_query, vr_reader_nvsmi_table, vr_reader_nvsmi_csv, vr_reader_job_log;

const vr_reader *const vr_readers[] = {
    &vr_reader_kineto,
    &vr_reader_memtimeline,
    &vr_reader_snapshot_pickle,
    &vr_reader_snapshot_json,
    &vr_reader_memory_stats,
    /* A job log is sure only when it holds an out-of-memory error; it then
     * wins the ties with the nvidia-smi tables and memory_summary() boxes
     * logs print beside it (other text is only its fallback). */
    &vr_reader_job_log,
    /* nvidia-smi: a capture holds tables, CSV and -q text, so it comes
     * first and wins their ties. */
    &vr_reader_nvsmi_capture,
    &vr_reader_nvsmi_table,
    &vr_reader_nvsmi_csv,
    &vr_reader_nvsmi_xml,
    &vr_reader_nvsmi_query,
    &vr_reader_gpustat,
    &vr_reader_memory_summary,
    NULL,
};

const vr_reader *vr_reader_pick(const char *head, size_t len, vr_sniff_level *level)
{
    const vr_reader *best = NULL;
    vr_sniff_level best_level = VR_SNIFF_NO;
    for (int i = 0; vr_readers[i]; i++) {
        vr_sniff_level l = vr_readers[i]->sniff(head, len);
        if (l > best_level) {
            best_level = l;
            best = vr_readers[i];
        }
    }
    *level = best_level;
    return best;
}

void vr_reader_expected(vr_buf *out)
{
    const char *sep = "";
    for (int i = 0; vr_readers[i]; i++) {
        if (!vr_readers[i]->import)
            continue;
        vr_buf_printf(out, "%s%s", sep, vr_readers[i]->description);
        sep = ", ";
    }
}

/* Content no reader knows, named by what its bytes are. */
static const struct {
    const char *magic;
    size_t len;
    const char *looks_like;
} magics[] = {
    {"SQLite format 3", 16, "an SQLite database (give a vramreport one to --db)"},
    {"PK\x03\x04", 4, "a zip archive (a torch.save checkpoint?)"},
    {"\x89PNG", 4, "a PNG image"},
    {"\x7F" "ELF", 4, "an executable"},
    {"%PDF", 4, "a PDF document"},
    {"<!DOCTYPE html", 14, "an HTML page"},
    {"<html", 5, "an HTML page"},
};

static int is_text(const char *head, size_t len)
{
    size_t bad = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)head[i];
        bad += c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' &&
                          c != 0x1b);
    }
    return bad * 100 <= len; /* a stray byte in a log is still a log */
}

const char *vr_reader_looks_like(const char *head, size_t len)
{
    for (size_t i = 0; i < sizeof magics / sizeof magics[0]; i++)
        if (len >= magics[i].len && memcmp(head, magics[i].magic, magics[i].len) == 0)
            return magics[i].looks_like;
    if (len == 0)
        return "empty";
    if (len >= 2 && (unsigned char)head[0] == 0x80 && head[1] >= 2 && head[1] <= 5)
        return "a pickle, not an allocator snapshot";
    size_t i = 0;
    while (i < len && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
        i++;
    if (i < len && (head[i] == '{' || head[i] == '['))
        return "JSON, but not a format vramreport reads";
    return is_text(head, len) ? "text, but not a format vramreport reads" : "binary data";
}
