/*-*** kinds.h: a finding's kind and an error's form in words ***/
/*
 * A finding's kind is a slug the JSON keeps and --fail-on takes
 * ("other-process"); the Markdown says it in words. Each advice gets
 * "kind_words" (the cause its finding names, for the advice table's For
 * column), each finding "secondary_words": its secondary causes in words,
 * less those its detail already names ("fragmentation is a secondary
 * cause"), so that no sentence repeats it; each OOM group "kind_words"
 * (the Cause column), each OOM event "wording_words": the form of its
 * message ("PyTorch's message before 2.1"), not the scanner's name for it.
 *
 * Ownership: decorates the document's findings and advice in place.
 */
#ifndef VR_VIEW_KINDS_H
#define VR_VIEW_KINDS_H

#include <cjson/cJSON.h>

/* A kind in words: db/kind_words.h's vr_kind_words. */

/* Whether a finding of kind is about an out-of-memory error. */
int vr_view_kind_is_oom(const char *kind);

void vr_view_kinds(cJSON *doc);

#endif
