/* The expat side of reading XML (xml.h): one parser, reset for each
 * document of the stream, its handlers wrapped so that every event says
 * where expat is (the token bound) and the root's end stops it. */
#include "parse/xml.h"

#include <expat.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

#define XML_MAX_TOKEN ((uint64_t)16 << 20) /* one tag or comment */

struct vr_xml {
    const char *name;
    vr_xml_handlers h;
    void *ud;
    XML_Parser p;
    uint64_t at; /* input bytes fed before this chunk */
    /* the document being parsed */
    int parsing;        /* a parser has been given this document's bytes */
    uint64_t doc_start; /* its first byte in the input */
    uint64_t line_base; /* lines before it, for messages */
    uint64_t fed;       /* bytes given to the parser */
    uint64_t event_end; /* end of the last token expat reported */
    uint64_t depth;     /* open elements */
    /* how it stopped */
    int doc_done;     /* the root element ended */
    uint64_t doc_end; /* ... at this input byte */
    int failed;       /* a handler stopped it (its error is its own) */
    int refused;      /* an entity declaration */
    uint64_t refused_line, refused_byte;
};

vr_xml *vr_xml_new(const char *name, const vr_xml_handlers *h, void *ud)
{
    vr_xml *x = vr_xmalloc(sizeof *x);
    memset(x, 0, sizeof *x);
    x->name = name;
    x->h = *h;
    x->ud = ud;
    return x;
}

void vr_xml_free(vr_xml *x)
{
    if (!x)
        return;
    if (x->p)
        XML_ParserFree(x->p);
    free(x);
}

void vr_xml_stop(vr_xml *x)
{
    x->failed = 1;
    XML_StopParser(x->p, XML_FALSE);
}

uint64_t vr_xml_line(const vr_xml *x)
{
    return x->line_base + (uint64_t)XML_GetCurrentLineNumber(x->p);
}

int vr_xml_inside_document(const vr_xml *x)
{
    return x->parsing && !x->doc_done;
}

/* Where expat is, for the token-size bound. */
static void note_event(vr_xml *x)
{
    x->event_end =
        (uint64_t)XML_GetCurrentByteIndex(x->p) + (uint64_t)XML_GetCurrentByteCount(x->p);
}

/*-*** handlers ***/

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    vr_xml *x = ud;
    note_event(x);
    x->depth++;
    x->h.start(x->ud, name, atts);
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    vr_xml *x = ud;
    note_event(x);
    x->h.text(x->ud, s, (size_t)len);
}

/* The root's end is the document's: the parser stops there, and the next
 * document (if any) gets a fresh one. */
static void end_document(vr_xml *x)
{
    x->doc_done = 1;
    x->doc_end = x->doc_start + x->event_end;
    x->line_base += (uint64_t)XML_GetCurrentLineNumber(x->p) - 1;
    XML_StopParser(x->p, XML_FALSE);
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    vr_xml *x = ud;
    note_event(x);
    x->depth--;
    x->h.end(x->ud, name);
    if (!x->failed && x->depth == 0)
        end_document(x);
}

/* Comments, the DOCTYPE, processing instructions: only where expat is. */
static void XMLCALL on_other(void *ud, const XML_Char *s, int len)
{
    (void)s;
    (void)len;
    note_event(ud);
}

static void XMLCALL on_entity_decl(void *ud, const XML_Char *name, int is_param,
                                   const XML_Char *value, int value_len, const XML_Char *base,
                                   const XML_Char *system_id, const XML_Char *public_id,
                                   const XML_Char *notation)
{
    (void)name, (void)is_param, (void)value, (void)value_len, (void)base;
    (void)system_id, (void)public_id, (void)notation;
    vr_xml *x = ud;
    x->refused = 1;
    x->refused_line = vr_xml_line(x);
    x->refused_byte = x->doc_start + (uint64_t)XML_GetCurrentByteIndex(x->p);
    XML_StopParser(x->p, XML_FALSE);
}

/*-*** documents ***/

/* A parser for the document starting at input byte `at`. expat's own
 * allocation failing is an error value, as every library's. */
static int start_parser(vr_xml *x, uint64_t at, vr_error *err)
{
    if (x->p)
        XML_ParserReset(x->p, NULL);
    else
        x->p = XML_ParserCreate(NULL);
    if (!x->p)
        return vr_fail(err, "%s: out of memory creating an XML parser", x->name);
    XML_SetUserData(x->p, x);
    XML_SetElementHandler(x->p, on_start, on_end);
    XML_SetCharacterDataHandler(x->p, on_text);
    XML_SetDefaultHandlerExpand(x->p, on_other);
    XML_SetEntityDeclHandler(x->p, on_entity_decl);
    XML_SetParamEntityParsing(x->p, XML_PARAM_ENTITY_PARSING_NEVER);
    x->parsing = 1;
    x->doc_start = at;
    x->fed = x->event_end = 0;
    x->depth = 0;
    x->doc_done = 0;
    return 0;
}

static int fail_here(const vr_xml *x, vr_error *err, const char *what, uint64_t line,
                     uint64_t byte)
{
    return vr_fail_code(err, VR_ERR_MALFORMED, "%s: line %" PRIu64 ", byte %" PRIu64 ": %s",
                        x->name, line, byte, what);
}

/* Why XML_Parse stopped, when it was not the end of a document. */
static int parse_failure(const vr_xml *x, vr_error *err)
{
    if (x->failed)
        return -1;
    char what[160];
    if (x->refused) {
        snprintf(what, sizeof what,
                 "an entity declaration, refused (%s%sentities are never "
                 "expanded)",
                 x->h.no_entities ? x->h.no_entities : "", x->h.no_entities ? "; " : "");
        return fail_here(x, err, what, x->refused_line, x->refused_byte);
    }
    if (XML_GetErrorCode(x->p) == XML_ERROR_NO_MEMORY) /* not the file's fault */
        return vr_fail(err, "%s: the XML parser ran out of memory", x->name);
    snprintf(what, sizeof what, "not well-formed XML: %s (column %lu)",
             XML_ErrorString(XML_GetErrorCode(x->p)),
             (unsigned long)XML_GetCurrentColumnNumber(x->p) + 1);
    return fail_here(x, err, what, vr_xml_line(x),
                     x->doc_start + (uint64_t)XML_GetCurrentByteIndex(x->p));
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* One chunk at input byte `at`, a parser started at each document's
 * first byte. */
static int feed_at(vr_xml *x, const char *chunk, size_t n, uint64_t at, vr_error *err)
{
    size_t pos = 0;
    while (pos < n) {
        if (!x->parsing) {
            while (pos < n && is_blank(chunk[pos]))
                x->line_base += chunk[pos++] == '\n';
            if (pos == n)
                return 0;
            if (start_parser(x, at + pos, err) < 0)
                return -1;
        }
        if (XML_Parse(x->p, chunk + pos, (int)(n - pos), XML_FALSE) == XML_STATUS_OK) {
            x->fed += n - pos;
            if (x->fed - x->event_end > XML_MAX_TOKEN)
                return fail_here(x, err, "a single tag or comment over 16 MiB", vr_xml_line(x),
                                 x->doc_start + x->event_end);
            return 0;
        }
        if (!x->doc_done)
            return parse_failure(x, err);
        x->parsing = 0;
        if (x->doc_end <= at + pos || x->doc_end > at + n)
            return fail_here(x, err, "the document's end is not where expat said", 0, x->doc_end);
        pos = (size_t)(x->doc_end - at);
    }
    return 0;
}

int vr_xml_feed(vr_xml *x, const char *chunk, size_t n, vr_error *err)
{
    int rc = feed_at(x, chunk, n, x->at, err);
    x->at += n;
    return rc;
}
