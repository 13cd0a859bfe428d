/*-*** tolerated.h: what a reader tolerated, in words ***/
/*
 * Readers count what they tolerated in source_tally (kind, count): faults
 * that were repaired, and data that was skipped. This table is the one
 * place a kind is explained, so stderr at import and the report's notes
 * say the same thing. Kinds are part of the schema's contract
 * (docs/schema.md); an unknown kind is shown by its name.
 */
#ifndef VR_TOLERATED_H
#define VR_TOLERATED_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    VR_TOLERATED_QUIET,    /* changes nothing a reader sees (or said elsewhere) */
    VR_TOLERATED_REPAIRED, /* text repaired: noted in the report */
    VR_TOLERATED_DROPPED   /* something in the file is not in the database:
                              noted, warned on stderr, and the file is not
                              "complete" */
} vr_tolerated_effect;

typedef struct {
    const char *kind; /* source_tally.kind */
    const char *what; /* "%s value(s) over 256 MiB skipped": %s is the count */
    vr_tolerated_effect effect;
} vr_tolerated_kind;

/* The entry for `kind`, or NULL when it is not known. */
const vr_tolerated_kind *vr_tolerated_find(const char *kind);

/* One sentence for `count` of `kind`, e.g. "3 values over 256 MiB were
 * skipped", into out (always NUL-terminated). */
void vr_tolerated_sentence(const char *kind, int64_t count, char *out, size_t size);

#endif
