/*-*** thread_key.h: a thread of a source, in the order the sweeps read ***/
/*
 * The sweeps that nest a trace's ranges by time (attribute: cpu_ops;
 * locate: Python frames; forward_weights: module calls) read them by
 * (source, pid, tid, time), one thread after another: this is their key
 * and its order.
 */
#ifndef VR_THREAD_KEY_H
#define VR_THREAD_KEY_H

#include <stdint.h>

typedef struct {
    int64_t source, pid, tid;
} vr_thread_key;

static inline int vr_thread_cmp(const vr_thread_key *a, const vr_thread_key *b)
{
    if (a->source != b->source)
        return a->source < b->source ? -1 : 1;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    return 0;
}

#endif
