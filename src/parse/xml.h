/*-*** xml.h: a stream of XML documents, through expat, safely ***/
/*
 * The format-neutral part of reading XML: a reader gives its element and
 * text handlers, feeds the input in chunks of any size, and maps what it
 * is told; this file creates and resets the parser, bounds it and says
 * where it stopped.
 *
 * Documents one after another (`nvidia-smi -q -x -l N` writes a whole
 * document, declaration and DOCTYPE included, per reading): at the root
 * element's end the parser stops, and the next document (after blank
 * space) gets a reset parser from its first byte.
 *
 * Hostile input: a DOCTYPE's external DTD is never fetched (no external
 * entity handler, parameter entities never parsed) and any entity
 * declaration is refused before it can be used, so entity expansion
 * ("billion laughs") cannot happen; a single token (tag, comment) over 16
 * MiB is refused, so expat's buffer stays bounded. Each failure is one
 * line: "NAME: line L, byte B: what", B the input's byte, L its line
 * (counted across documents), VR_ERR_MALFORMED.
 *
 * Ownership: vr_xml_new copies nothing; `name` and `ud` must outlive the
 * vr_xml. Strings given to the handlers live for the call only.
 */
#ifndef VR_XML_H
#define VR_XML_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct {
    /* atts: name, value, name, value, ..., NULL */
    void (*start)(void *ud, const char *name, const char **atts);
    void (*end)(void *ud, const char *name);
    /* Character data, in as many pieces as expat likes. */
    void (*text)(void *ud, const char *s, size_t len);
    /* Said in an entity declaration's refusal, e.g. "nvidia-smi writes
     * none"; NULL: nothing. */
    const char *no_entities;
} vr_xml_handlers;

typedef struct vr_xml vr_xml;

/* `name` is the input's, for messages. No parser is made until the first
 * document starts (vr_xml_feed). */
vr_xml *vr_xml_new(const char *name, const vr_xml_handlers *h, void *ud);
void vr_xml_free(vr_xml *x);

/* Feeds the input's next `n` bytes. -1 on malformed or refused input
 * (err set), or when a handler called vr_xml_stop (its err is its own). */
int vr_xml_feed(vr_xml *x, const char *chunk, size_t n, vr_error *err);

/* From a handler: stop at once; the feed returns -1. */
void vr_xml_stop(vr_xml *x);

/* From a handler: the input's line the parser is at. */
uint64_t vr_xml_line(const vr_xml *x);

/* Whether the input so far ends inside a document (a cut file). */
int vr_xml_inside_document(const vr_xml *x);

#endif
