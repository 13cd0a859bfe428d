/*-*** kind_words.h: a finding's kind in words ***/
/*
 * A finding's kind is a slug the JSON keeps and --fail-on takes
 * ("other-process"); sentences say it in words ("another process held
 * the memory"): the analysis in its headlines (analyze/diagnose.c), the
 * view in the advice's For column and the secondary causes
 * (render/view/kinds.c). One table for both, on the floor both stand on,
 * as db/category.h holds the categories' names.
 */
#ifndef VR_DB_KIND_WORDS_H
#define VR_DB_KIND_WORDS_H

/* The words for kind; kind itself when the table lacks it (NULL: NULL). */
const char *vr_kind_words(const char *kind);

#endif
