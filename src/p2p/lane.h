/* Lanes: the fast path of a message between two threads of one process.
 *
 * A lane is a single-producer, single-consumer ring of message slots from
 * one sending endpoint to one receiving endpoint.  The sender only writes:
 * the slot (envelope and a payload of up to EP_LANE_INLINE bytes), then the
 * slot's sequence number, and its send is complete.  The
 * receiver reads it and matches in its own thread, against queues that stay
 * in its own cache.  Matching in the sender's thread instead makes the
 * sender read the receiver's queue, request and buffer: several cache lines
 * cross between the cores per message, and each crossing stalls the sender.
 *
 * Producer: the thread that made the lane (owner); other threads sending on
 * the same endpoint take the locked path, which drains the lane first, so
 * MPI's order per sender holds.  Consumer: whoever holds the receiving
 * endpoint's lock (p2p.c).  Positions are 32-bit counters that wrap; slot
 * `pos % EP_LANE_SLOTS` holds position pos once its seq equals pos + 1.
 */
#ifndef EP_LANE_H
#define EP_LANE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/copy.h"
#include "base/thread.h"

#define EP_LANE_SLOTS 64 /* power of two */
#define EP_LANE_INLINE EP_COPY_SMALL_MAX

typedef struct ep_lane_slot {
    _Alignas(64) _Atomic uint32_t seq; /* position + 1 once filled */
    int tag;
    int64_t bytes; /* payload size */
    char data[EP_LANE_INLINE];
} ep_lane_slot_t;

typedef struct ep_lane {
    /* the producer's line */
    _Alignas(64) uint32_t tail; /* next position to fill */
    uint32_t head_seen;         /* the consumer's head when last looked at */
    const void *owner;          /* ep_lane_token() of the producing thread */
    /* the consumer's line */
    _Alignas(64) _Atomic uint32_t head; /* next position to read */
    int source;                         /* the sender's rank as the receiver names it */
    struct ep_lane *next_in;            /* next lane into the same receiver */
    ep_lane_slot_t slot[EP_LANE_SLOTS];
} ep_lane_t;

/* Identifies the calling thread: the address of a thread-local byte, two
 * instructions with the initial-exec model (thread.h), where
 * pthread_self is a call into libc at every send. */
extern __thread char ep_lane_me EP_TLS;
static inline const void *ep_lane_token(void) { return &ep_lane_me; }

/* Producer: the slot to fill next, or NULL when the lane is full. */
static inline ep_lane_slot_t *ep_lane_reserve(ep_lane_t *l)
{
    if (l->tail - l->head_seen >= EP_LANE_SLOTS) {
        l->head_seen = atomic_load_explicit(&l->head, memory_order_acquire);
        if (l->tail - l->head_seen >= EP_LANE_SLOTS)
            return NULL;
    }
    return &l->slot[l->tail % EP_LANE_SLOTS];
}

/* Producer: hands the reserved slot, now filled, to the consumer. */
static inline void ep_lane_publish(ep_lane_t *l, ep_lane_slot_t *s)
{
    atomic_store_explicit(&s->seq, ++l->tail, memory_order_release);
}

/* Consumer: the oldest filled slot, or NULL. */
static inline ep_lane_slot_t *ep_lane_peek(ep_lane_t *l)
{
    uint32_t pos = atomic_load_explicit(&l->head, memory_order_relaxed);
    ep_lane_slot_t *s = &l->slot[pos % EP_LANE_SLOTS];
    return atomic_load_explicit(&s->seq, memory_order_acquire) == pos + 1 ? s : NULL;
}

/* Consumer: gives the peeked slot back to the producer. */
static inline void ep_lane_release(ep_lane_t *l)
{
    atomic_store_explicit(&l->head, atomic_load_explicit(&l->head, memory_order_relaxed) + 1, memory_order_release);
}

/* A new, empty lane owned by the calling thread (aligned; free with free()), or NULL. */
ep_lane_t *ep_lane_new(int source);

#endif
