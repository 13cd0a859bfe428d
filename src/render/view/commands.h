/*-*** commands.h: the commands, options and settings the report's texts name ***/
/*
 * What a user may copy out of a sentence is code: in the Markdown a code
 * span, in the HTML <code>. The templates write their own backticks; the
 * sentences made in C and SQL (the verdict, the findings, the advice's
 * titles and evidence) stay plain text in the JSON, and the Markdown
 * escaper (render/out/markdown.c) and the HTML banner mark as code what
 * this names in them: an option ("--capacity", "--format=csv": two dashes
 * and a lowercase letter, not inside a word), or a setting or call of the
 * table in commands.c ("profile_memory=True", "torch.cuda.memory_stats()").
 * What is matched holds no character Markdown or HTML would read as
 * markup, so marking it is safe whatever text it is found in.
 *
 * vr_command_at: the length of the command that starts at s[i] (of the
 * `len` bytes at s), 0 when none does.
 *
 * vr_code_span: `text` as one Markdown code span, to copy as it is: a
 * fence one backtick longer than any run in it, padded where it starts
 * or ends with a backtick (or starts and ends with a space); controls as
 * visible escapes, line breaks and tabs as spaces. The caller frees it.
 *
 * vr_longest_backticks: the longest run of backticks in s (a code span's
 * or a fenced block's fence must be longer).
 */
#ifndef VR_VIEW_COMMANDS_H
#define VR_VIEW_COMMANDS_H

#include <stddef.h>

size_t vr_command_at(const char *s, size_t len, size_t i);

char *vr_code_span(const char *text);

size_t vr_longest_backticks(const char *s);

#endif
