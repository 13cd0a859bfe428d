/*-*** pickle.h: a data-only, streaming decoder of Python pickles ***/
/*
 * Reads what pickle.dump writes for plain data (dicts, lists, tuples,
 * strings, bytes, ints, floats, bools, None), protocols 2 to 5, from bytes
 * fed in chunks of any size, in bounded memory. Nothing in a file is ever
 * imported or called: every opcode that would (GLOBAL, STACK_GLOBAL,
 * REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, EXT1/2/4, PERSID,
 * BINPERSID, and any opcode not listed below) stops the decoding with an
 * error naming the opcode and its byte offset.
 *
 * Opcodes read: PROTO, FRAME, STOP, MARK, POP, POP_MARK, DUP, NONE, NEWTRUE,
 * NEWFALSE, BININT, BININT1, BININT2, LONG1, LONG4, BINFLOAT,
 * SHORT_BINUNICODE, BINUNICODE, BINUNICODE8, SHORT_BINBYTES, BINBYTES,
 * BINBYTES8, BYTEARRAY8, EMPTY_DICT, EMPTY_LIST, EMPTY_TUPLE, DICT, LIST,
 * TUPLE, TUPLE1, TUPLE2, TUPLE3, APPEND, APPENDS, SETITEM, SETITEMS,
 * MEMOIZE, BINPUT, LONG_BINPUT, BINGET, LONG_BINGET. An integer wider than
 * 64 bits (LONG1/LONG4) is a value of kind VR_PK_TOO_LARGE, not an error.
 *
 * Streaming. A snapshot is one dict holding a few huge lists (segments,
 * each device's trace entries). The caller names the lists to stream (by
 * their path from the root, asked when each list is created); the
 * elements of a streamed list are not kept in it but handed to
 * on_element, one at a time, complete, in order, and freed after the call.
 * Everything else is built as a tree, and on_done gets the root (the
 * streamed lists in it are empty).
 *
 * A list's place is read from the stack when it is created, the way
 * pickle.dump lays a value out: the items after a MARK that follows a
 * list or dict go into it (a dict's value follows its key); an item with
 * no MARK before it goes into the list just below it (APPEND), or under
 * the key just below it into the dict below that (SETITEM); the items of a
 * MARK with no list or dict below it (a TUPLE, LIST or DICT to come) are
 * indexes in that container, at the MARK's own place. An empty list or
 * dict among a MARK's items is taken as complete (pickle.dump writes []
 * and {} that way), so the one layout read wrong is a list that is the
 * only element of a list, or the only value of a dict, that is itself
 * among a MARK's items: it is read as the outer container's next item
 * (the bytes cannot tell the two apart until later; tests/unit/test_pickle.c
 * pins this). A dict value under a key that is not a string has the step
 * {NULL, 0, SIZE_MAX}; a place the stack does not show at all (not what
 * pickle.dump writes) is the one-step path {NULL, 0, SIZE_MAX}.
 *
 * Sharing. The memo (MEMOIZE/BINPUT, BINGET) shares values, never copies
 * them: a value met twice is one node with two references. Once an element
 * has been handed over and freed, a container inside it can still be
 * referenced later by BINGET (snapshots share a frames list between a
 * block and a trace entry): the caller may tag such a container during
 * on_element (vr_pk_set_tag, e.g. with the id of the stack it stored), and
 * a later BINGET then yields a VR_PK_REF value carrying that tag. A BINGET
 * of a freed container that was not tagged is an error ("refers to a value
 * no longer held"), unless it was empty: then it is a new empty one (torch
 * shares one empty frames list between every block with no stack).
 * Strings stay in the memo (they are small and shared), and so do tuples
 * of scalars, strings and such tuples (immutable values: pickle.dump
 * writes one segment_pool_id tuple that 10,000 segments share once, and a
 * BINGET of it for every later one). Nothing else of a freed element
 * stays alive through the memo; a memo slot costs 4 bytes,
 * in pages allocated as they are first used (pickle.dump memoizes every
 * dict, list and string: a 540 MB snapshot of 5.6 million trace entries
 * sets some 8 million slots, 32 MB; other shapes up to 60,000 a MiB).
 * Past max_memo_in_memory, the oldest pages go to a temporary file and
 * come back when read (src/util/slots.h): memory stays flat whatever the
 * file's size, and the file holds 4 bytes a slot.
 *
 * A container is only filled while it is inside no other value (pickle.dump
 * fills each one before it puts it anywhere): filling one that is already
 * inside another, or putting one inside itself, is refused. That rules
 * out reference cycles, which a refcounted tree could never free.
 * A key set twice in a dict is kept twice; vr_pk_get returns the last
 * value, as Python would.
 *
 * Limits (vr_pk_limits) stop hostile files with an error, in bounded
 * memory: nesting depth, items in one container (a billion-entry declared
 * length is refused before anything is allocated), memo entries, the
 * bytes of values and memo held at once, the memo's pages (one a 4 KiB
 * of input beyond the first thousand), and the size of a value counted
 * with every shared part expanded (a memo bomb: a list holding the same
 * list twice, nested 60 times, is small in memory but 2^60 nodes to walk).
 *
 * Errors are VR_ERR_MALFORMED (a forbidden or unknown opcode, a broken
 * stream, a limit) with "byte N: ..." messages, N the offset of the opcode
 * at fault; an input whose first byte is not PROTO is
 * VR_ERR_NOT_RECOGNISED, a protocol other than 2 to 5
 * VR_ERR_NOT_SUPPORTED; an error a callback returns is passed on as it is.
 * An input that ends before STOP is truncated (vr_pickle_finish says so),
 * not an error.
 *
 * Ownership: vr_pickle_new() returns a decoder freed by vr_pickle_free().
 * Values passed to callbacks belong to the decoder and are valid during
 * the call only.
 */
#ifndef VR_PICKLE_H
#define VR_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/error.h"

typedef enum {
    VR_PK_NONE,
    VR_PK_BOOL,
    VR_PK_INT,
    VR_PK_TOO_LARGE, /* an integer beyond 64 bits; i: its sign (1 or -1) */
    VR_PK_FLOAT,
    VR_PK_STR, /* UTF-8 as written (not validated) */
    VR_PK_BYTES,
    VR_PK_LIST,
    VR_PK_TUPLE,
    VR_PK_DICT,
    VR_PK_REF /* a freed container, by the tag the caller gave it */
} vr_pk_kind;

typedef struct vr_pk_value vr_pk_value;
struct vr_pk_value {
    vr_pk_kind kind;
    int64_t i;           /* BOOL (0/1), INT, REF (the tag) */
    double f;            /* FLOAT */
    const char *s;       /* STR, BYTES: not NUL-terminated */
    size_t len;          /* STR, BYTES: bytes; LIST, TUPLE: items; DICT: pairs */
    vr_pk_value **items; /* LIST, TUPLE: len items; DICT: 2 * len, key then value */
};

/* Lookups. vr_pk_get: the value of string key `key` in a dict, or NULL. */
const vr_pk_value *vr_pk_get(const vr_pk_value *dict, const char *key);
/* 1 and *out when v is an INT (or a BOOL); 0 otherwise (NULL included). */
int vr_pk_int(const vr_pk_value *v, int64_t *out);
/* 1 when v is a STR equal to `lit`. */
int vr_pk_str_eq(const vr_pk_value *v, const char *lit);

/* Tags a container (LIST, TUPLE or DICT) during on_element, so that a
 * BINGET of it after it is freed yields VR_PK_REF with this tag (>= 0; a
 * negative tag, or a value that is not a container, is ignored). */
void vr_pk_set_tag(const vr_pk_value *container, int64_t tag);
/* The tag vr_pk_set_tag gave a container still held (a frames list that
 * a later element shares before the first is freed), or -1. */
int64_t vr_pk_tag(const vr_pk_value *container);

/* Values built outside the decoder (another front end handing the same
 * consumers vr_pk_value trees, src/import/readers/snapshot/snapshot_json.c) may be tagged
 * too: each container (LIST, TUPLE, DICT) must then span this many zeroed
 * bytes, the vr_pk_value first. */
size_t vr_pk_container_size(void);

/* A field left 0 takes its default. */
typedef struct {
    size_t max_depth;   /* containers open inside one another (default 256, at most 4096) */
    size_t max_items;   /* items in one container (default 1 << 26) */
    size_t max_memo;    /* memo entries (default 1 << 30) */
    size_t max_bytes;   /* bytes of values and memo held at once (default 256 MiB) */
    uint64_t max_nodes; /* nodes in one value, a shared one counted at each place it
                                * is (default 1 << 28; a 1.2 MB real snapshot decoded whole
                                * is 2.1 million) */
    size_t max_memo_in_memory; /* bytes of the memo kept in memory, the rest in a temporary
                                * file (default 8 MiB; counted in max_bytes) */
} vr_pk_limits;

/* A list's place from the root: keys (for dict members) and indexes (for
 * list or tuple elements), outermost first. */
typedef struct {
    const char *key; /* NULL for an index */
    size_t key_len;
    size_t index;
} vr_pk_step;

typedef struct {
    const vr_pk_step *steps;
    size_t depth; /* 0: the root itself */
} vr_pk_path;

/* A path as text for messages and tests: "segments", "device_traces.0",
 * "$" for the root, "?" for an index not known yet. */
void vr_pk_path_text(const vr_pk_path *p, vr_buf *b);

typedef struct {
    /* 1: stream the list at `path`. Called once per list, when it is
     * created. NULL: stream nothing. */
    int (*stream)(void *ud, const vr_pk_path *path);
    /* Each element of a streamed list, complete. Return 0 to go on, -1 to
     * stop (with err set). */
    int (*on_element)(void *ud, const vr_pk_path *list, size_t index, const vr_pk_value *elem,
                      vr_error *err);
    /* The root value at STOP. May be NULL. */
    int (*on_done)(void *ud, const vr_pk_value *root, vr_error *err);
    void *ud;
    /* The root's shape, once, as soon as the bytes show it, before the
     * rest is read (so a reader can refuse a pickle that is not its kind
     * without decoding it). pickle.dump makes the root first: `root` is
     * the first value on the stack (a dict or a list made empty, or a
     * string or number: then the root is not a container, e.g. an object
     * that GLOBAL and REDUCE would build), NULL when a MARK comes before
     * any value (a tuple); for a dict, `key` is its first key, complete,
     * before its value is read (NULL otherwise). Not called when the
     * decoding fails or ends first (an empty dict: on_done then). Return
     * 0 to go on, -1 to stop with err set. May be NULL. */
    int (*on_root)(void *ud, const vr_pk_value *root, const vr_pk_value *key, vr_error *err);
} vr_pk_handlers;

typedef struct vr_pickle vr_pickle;

/* limits NULL: the defaults. */
vr_pickle *vr_pickle_new(const vr_pk_limits *limits, const vr_pk_handlers *h);
void vr_pickle_free(vr_pickle *p);

/* By default stream is asked about every list. With a depth set (before
 * the first feed): the deepest path it may say 1 to. A list deeper than
 * that, or whose place cannot be read from the stack, is then not
 * streamed and stream is not asked: its place is not walked to the root
 * (a snapshot's frames lists, one per trace entry, are 4 steps deep). */
void vr_pickle_stream_depth(vr_pickle *p, size_t depth);

/* Feeds the next bytes. Returns 0, or -1 with err set (the decoder must
 * not be fed again). Bytes after STOP are counted, not read. */
int vr_pickle_feed(vr_pickle *p, const void *data, size_t len, vr_error *err);

/* At the end of the input: 0 when STOP was read, 1 when the input ended
 * before it (truncated: the elements handed over so far are all there is),
 * -1 with err set when nothing was a pickle (empty, or no PROTO). */
int vr_pickle_finish(vr_pickle *p, vr_error *err);

uint64_t vr_pickle_offset(const vr_pickle *p); /* bytes fed */
/* The byte of the opcode being run: during on_element, the one that hands
 * the element over (its APPEND or APPENDS), during on_done, STOP. */
uint64_t vr_pickle_op_offset(const vr_pickle *p);
size_t vr_pickle_held(const vr_pickle *p);       /* bytes held now (what max_bytes limits) */
size_t vr_pickle_peak(const vr_pickle *p);       /* the most bytes held at once */
uint64_t vr_pickle_trailing(const vr_pickle *p); /* bytes after STOP */
int vr_pickle_protocol(const vr_pickle *p);      /* from PROTO, 0 if none */

#endif
