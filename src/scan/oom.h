/*-*** oom.h: one out-of-memory error as a log's message tells it ***/
/*
 * The record both tables of wordings fill: PyTorch's (joblog_scan.c) and
 * other libraries' (liboom.c). A plain value: the caller owns it and the
 * strings it points to (the scanner's window, until its sink returns).
 */
#ifndef VR_SCAN_OOM_H
#define VR_SCAN_OOM_H

#include <stddef.h>
#include <stdint.h>

/* The figures a message can give, as bytes. */
typedef enum {
    VR_OOM_REQUESTED = 0,        /* "Tried to allocate X" */
    VR_OOM_CAPACITY,             /* "total capacity" */
    VR_OOM_FREE,                 /* "X free" / "of which X is free" */
    VR_OOM_ALLOCATED,            /* "already allocated" / "is allocated by PyTorch" */
    VR_OOM_RESERVED,             /* "reserved in total by PyTorch" / "cached" */
    VR_OOM_RESERVED_UNALLOCATED, /* "is reserved by PyTorch but unallocated" */
    VR_OOM_ALLOWED,              /* set_per_process_memory_fraction's "allowed" */
    VR_OOM_PRIVATE_POOLS,        /* "allocated in private pools (e.g., CUDA Graphs)" */
    VR_OOM_OTHER_ALLOCATIONS,    /* MPS's "other allocations": the process's Metal memory
                                    outside PyTorch's heaps (given as "this process") */
    VR_OOM_FIGURES
} vr_oom_figure;

#define VR_OOM_MAX_PROCESSES 64
#define VR_OOM_MESSAGE_MAX 8192 /* bytes of a message kept (joined lines) */

typedef struct {
    int64_t pid; /* -1: "this process" */
    int64_t used_bytes;
} vr_oom_process;

typedef struct {
    const char *wording; /* the pattern's name: 'current', 'cached', 'bare', ... */
    int64_t figure[VR_OOM_FIGURES];
    unsigned has;       /* bit (1u << figure): the message gives it */
    int64_t device_idx; /* "GPU N"; -1 when not named */
    int64_t rank;       /* from a "[rank3]:" style prefix; -1 when none */
    int has_ts;
    int64_t ts_ns; /* the line's stamp, or the nearest one before it */
    int ts_zoned;
    uint64_t line, last_line; /* first and last line of the message */
    const char *message;      /* joined, colours and HTML escapes removed */
    size_t message_len;
    const char *user_frame; /* 'train.py:42 in forward', or NULL */
    vr_oom_process process[VR_OOM_MAX_PROCESSES];
    size_t nprocess;
} vr_oom;

#endif
