/*-*** memprint.h: memory print lines, "allocated: 12.34 GB, reserved: ..." ***/
/*
 * Lines with the allocator's figures (docs/formats/memory-print.md): DeepSpeed's
 * see_memory_usage and throughput timer, Megatron's memory report,
 * ORTModule's memory observer, mmcv/mmengine and detectron2 loggers (the
 * peak), accelerate/PEFT examples, and hand-written prints in English or
 * Chinese. The shapes are data (schemas/memprint.patterns: labels mapped
 * to roles, the unit of a bare number, current or peak, the framework);
 * the matcher walks that table. Units are read 1024-based ("GB" is GiB:
 * what every one of these prints means).
 *
 * Database-free (the job-log reader writes; tests drive it alone).
 * Ownership: a vr_memprint_rules is the caller's (vr_memprint_rules_free);
 * the strings a match points to are the rules'.
 */
#ifndef VR_MEMPRINT_H
#define VR_MEMPRINT_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef enum {
    VR_MP_ALLOCATED = 0,
    VR_MP_RESERVED,
    VR_MP_MAX_ALLOCATED,
    VR_MP_MAX_RESERVED,
    VR_MP_ROLES
} vr_memprint_role;

/* The role's name in the rules file and in the database's columns. */
extern const char *const vr_memprint_role_names[VR_MP_ROLES];

/* The reading of "GB"/"MB" the figures are stored at. */
#define VR_MEMPRINT_READING "1024-based"

typedef struct {
    const char *framework; /* the rule's: 'deepspeed', 'megatron', 'generic', ... */
    const char *figure;    /* 'current' or 'peak' */
    int has[VR_MP_ROLES];
    int64_t bytes[VR_MP_ROLES];
    char unit[8]; /* the unit printed (or the rule's default) of the first figure */
    int has_step, has_epoch;
    int64_t step, epoch;
    int64_t device_idx; /* -1: not said */
    int impossible;     /* the role of a figure over 1 PiB, or -1 */
} vr_memprint;

typedef struct vr_memprint_rules vr_memprint_rules;

/* The rules of a patterns text (schemas/memprint.patterns' syntax);
 * `name` names it in errors (with the line). NULL on a bad rule. */
vr_memprint_rules *vr_memprint_rules_parse(const char *text, size_t len, const char *name,
                                           vr_error *err);
/* The built-in rules, from the embedded schemas/memprint.patterns. */
vr_memprint_rules *vr_memprint_rules_builtin(vr_error *err);
void vr_memprint_rules_free(vr_memprint_rules *r);

/* Reads a log line (cleaned, rank prefix and all): 1 and *out when it is
 * a memory print, else 0. Steps, epochs and the device from the line.
 * -1 when it is a print with a figure no allocator gives (over 1 PiB:
 * statcheck.h; out->impossible names it): not to be read. */
int vr_memprint_match(const vr_memprint_rules *r, const char *line, size_t len, vr_memprint *out);
/* The step, epoch (and device) a print lacks, from a line around it. */
void vr_memprint_context(const vr_memprint_rules *r, const char *line, size_t len,
                         vr_memprint *p);

/* A size as these prints write it, "12.34 GB" or "1.57GiB", at s (n
 * bytes): 1 and its bytes (units read 1024-based, rounded to the nearest
 * byte) and the unit as printed (a static string); 0 when it is no size
 * (a bare number, "3x"); -1 when it is one no allocator gives (over 1
 * PiB: statcheck.h). The server lines' reader (servermem.h) reads its
 * sizes so too. */
int vr_memprint_size(const char *s, size_t n, int64_t *bytes, const char **unit);

/* Every label (or `requires` text) of each print rule, for a check
 * that the scanner's needles cover them: calls fn(ud, label, len). */
void vr_memprint_labels(const vr_memprint_rules *r,
                        void (*fn)(void *ud, const char *rule_requires, const char *label),
                        void *ud);

#endif
