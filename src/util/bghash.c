#include "util/bghash.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

#define SLOTS 4
#define SLOT_BYTES ((size_t)1 << 20)

/* Slots head - SLOTS .. head - 1 may be full; tail .. head - 1 wait for
 * the thread. The caller alone writes slot head % SLOTS (not yet handed
 * over); the thread alone reads slot tail % SLOTS and the state while
 * tail < head. */
struct vr_bghash {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    pthread_t thread;
    int threaded, stop;
    size_t head, tail;
    unsigned char *slot[SLOTS];
    size_t len[SLOTS];
    vr_blake2b state;
};

static void *hash_slots(void *arg)
{
    vr_bghash *h = arg;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (h->tail == h->head && !h->stop)
            pthread_cond_wait(&h->changed, &h->lock);
        if (h->tail == h->head)
            break;
        size_t i = h->tail % SLOTS;
        pthread_mutex_unlock(&h->lock);
        vr_blake2b_update(&h->state, h->slot[i], h->len[i]);
        pthread_mutex_lock(&h->lock);
        h->tail++;
        pthread_cond_broadcast(&h->changed);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

vr_bghash *vr_bghash_new(void)
{
    vr_bghash *h = vr_xmalloc(sizeof *h);
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->changed, NULL);
    vr_blake2b_init(&h->state);
    return h;
}

/* Hands the slot being filled to the thread (hashes it here without one),
 * then waits for a free slot to fill next. */
static void hand_over(vr_bghash *h)
{
    size_t i = h->head % SLOTS;
    if (!h->threaded && h->len[i] == SLOT_BYTES)
        h->threaded = pthread_create(&h->thread, NULL, hash_slots, h) == 0;
    if (!h->threaded) {
        vr_blake2b_update(&h->state, h->slot[i], h->len[i]);
        h->len[i] = 0;
        return;
    }
    pthread_mutex_lock(&h->lock);
    h->head++;
    pthread_cond_broadcast(&h->changed);
    while (h->head - h->tail == SLOTS)
        pthread_cond_wait(&h->changed, &h->lock);
    pthread_mutex_unlock(&h->lock);
    h->len[h->head % SLOTS] = 0;
}

void vr_bghash_feed(vr_bghash *h, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len > 0) {
        size_t i = h->head % SLOTS;
        if (!h->slot[i])
            h->slot[i] = vr_xmalloc(SLOT_BYTES);
        size_t take = SLOT_BYTES - h->len[i];
        if (take > len)
            take = len;
        memcpy(h->slot[i] + h->len[i], p, take);
        h->len[i] += take;
        p += take;
        len -= take;
        if (h->len[i] == SLOT_BYTES)
            hand_over(h);
    }
}

void vr_bghash_hex(vr_bghash *h, char out[VR_BLAKE2B_HEX])
{
    if (h->len[h->head % SLOTS] > 0)
        hand_over(h);
    pthread_mutex_lock(&h->lock);
    while (h->tail != h->head)
        pthread_cond_wait(&h->changed, &h->lock);
    vr_blake2b_hex(&h->state, out);
    pthread_mutex_unlock(&h->lock);
}

void vr_bghash_free(vr_bghash *h)
{
    if (!h)
        return;
    if (h->threaded) {
        pthread_mutex_lock(&h->lock);
        h->stop = 1;
        pthread_cond_broadcast(&h->changed);
        pthread_mutex_unlock(&h->lock);
        pthread_join(h->thread, NULL);
    }
    for (size_t i = 0; i < SLOTS; i++)
        free(h->slot[i]);
    pthread_cond_destroy(&h->changed);
    pthread_mutex_destroy(&h->lock);
    free(h);
}
