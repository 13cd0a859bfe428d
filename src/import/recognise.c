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

static vr_sniff_level sniff_nvsmi_xml(const char *head, size_t len)
{
    return has(head, len, "<nvidia_smi_log") ? VR_SNIFF_SIGNATURE : VR_SNIFF_NO;
}

static vr_sniff_level sniff_nvsmi_query(const char *head, size_t len)
{
    return has(head, len, "==NVSMI LOG==") ? VR_SNIFF_SIGNATURE : VR_SNIFF_NO;
}

const vr_reader vr_reader_nvsmi_xml = {
    "nvsmi_xml", "an nvidia-smi -q -x log (XML)", sniff_nvsmi_xml, NULL};
const vr_reader vr_reader_nvsmi_query = {
    "nvsmi_query", "an nvidia-smi -q log", sniff_nvsmi_query, NULL};
