/* Inboxes: the messages between processes of one node, in shared memory.
 *
 * An inbox is a ring of bytes that many producers (any thread of any
 * process of the node) fill and one consumer (whoever holds the receiving
 * UCX worker's lock, ucx.c) empties, in the order the producers reserved
 * their records, so the messages of one sender keep their order.
 *
 * A record is a 32-byte header and its payload, rounded up to whole
 * 64-byte lines, so that two producers filling neighbouring records write
 * different lines.  A producer reserves its bytes by moving `tail` with a
 * compare-and-swap (never past `head` + capacity), fills the record, then
 * publishes it by storing its stamp, its position + 1, last.  The consumer
 * reads the record at `head` once its stamp says so, hands it on, then
 * zeroes the first word of each line it covered and moves `head`: the
 * stamps of later records can only land on such lines, so a stale stamp
 * or a payload word that looks like one is never read as a record.  A
 * record that would run past the end of the ring is preceded by a padding
 * record to the end.  The consumer checks each record before it believes
 * its length (ep_inbox_rec_fault).
 *
 * Positions are 64-bit byte counts that never wrap in practice.
 */
#ifndef EP_INBOX_H
#define EP_INBOX_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define EP_INBOX_LINE 64
#define EP_INBOX_HEADER 32
#define EP_INBOX_FOLLOWS_BYTES 8

typedef enum ep_inbox_kind {
    EP_INBOX_PAD = 1, /* no message: the rest of the ring up to its end */
    EP_INBOX_DATA,    /* a message whose payload is the record's */
    EP_INBOX_FOLLOWS  /* a message whose payload comes another way: the record's
                         payload is EP_INBOX_FOLLOWS_BYTES that say how */
} ep_inbox_kind_t;

typedef struct ep_inbox_rec {
    _Atomic uint64_t stamp; /* position + 1 once published */
    int64_t bytes;          /* the message's size; PAD: the record's */
    int32_t tag;
    int32_t source;
    uint16_t slot;           /* the receiving endpoint, as its worker knows it */
    uint16_t kind;           /* ep_inbox_kind_t */
    int32_t cpu;             /* the sender's CPU + 1 when it last waited, 0 unknown (wait.h) */
    _Alignas(8) char data[]; /* the payload */
} ep_inbox_rec_t;

_Static_assert(sizeof(ep_inbox_rec_t) == EP_INBOX_HEADER, "an inbox record's header is 32 bytes");

typedef struct ep_inbox {
    /* A line of its own, read by all and never written after init: next
     * to head or tail, every record would fetch it again. */
    _Alignas(EP_INBOX_LINE) uint64_t cap;          /* bytes of ring, a power of two */
    _Alignas(EP_INBOX_LINE) _Atomic uint64_t tail; /* the producers' line: next position to reserve */
    _Alignas(EP_INBOX_LINE) _Atomic uint64_t head; /* the consumer's line: next position to read */
    _Alignas(EP_INBOX_LINE) char ring[];
} ep_inbox_t;

/* The bytes an inbox of cap ring bytes takes. */
static inline size_t ep_inbox_size(uint64_t cap) { return sizeof(ep_inbox_t) + (size_t)cap; }

/* Makes the inbox at b (ep_inbox_size(cap) bytes) empty. */
static inline void ep_inbox_init(ep_inbox_t *b, uint64_t cap)
{
    memset(b, 0, ep_inbox_size(cap));
    b->cap = cap;
}

/* The ring bytes a record with a payload of n bytes takes. */
static inline uint64_t ep_inbox_span(uint64_t n)
{
    return (EP_INBOX_HEADER + n + EP_INBOX_LINE - 1) & ~(uint64_t)(EP_INBOX_LINE - 1);
}

/* The largest payload a record may carry in an inbox of cap bytes. */
static inline uint64_t ep_inbox_max_payload(uint64_t cap) { return cap / 4 - EP_INBOX_HEADER; }

/* Producer: reserves a record for a payload of n bytes (at most
 * ep_inbox_max_payload) and returns it to fill, then publish; NULL when
 * the inbox has no room now; *pos is its position, for publish.  *seen is
 * a look at head that the producers of a process share (a lower bound of
 * it, 0 at first): head's line is the consumer's, read only when the room
 * seems short. */
static inline ep_inbox_rec_t *ep_inbox_reserve(ep_inbox_t *b, uint64_t n, _Atomic uint64_t *seen, uint64_t *pos)
{
    uint64_t cap = b->cap, span = ep_inbox_span(n), t = atomic_load_explicit(&b->tail, memory_order_relaxed);
    uint64_t off, pad, need, h = atomic_load_explicit(seen, memory_order_acquire);
    for (;;) {
        off = t & (cap - 1);
        pad = off + span > cap ? cap - off : 0;
        need = pad + span;
        if (t + need - h > cap) {
            h = atomic_load_explicit(&b->head, memory_order_acquire);
            atomic_store_explicit(seen, h, memory_order_release);
            if (t + need - h > cap)
                return NULL;
        }
        if (atomic_compare_exchange_weak_explicit(&b->tail, &t, t + need, memory_order_relaxed, memory_order_relaxed))
            break;
    }
    if (pad) {
        ep_inbox_rec_t *p = (ep_inbox_rec_t *)(b->ring + off);
        p->kind = EP_INBOX_PAD;
        p->bytes = (int64_t)pad;
        atomic_store_explicit(&p->stamp, t + 1, memory_order_release);
        t += pad;
    }
    *pos = t;
    return (ep_inbox_rec_t *)(b->ring + (t & (cap - 1)));
}

/* The same in the usual case only, with few values live (a caller that
 * takes its other ways elsewhere then saves fewer registers): NULL when
 * the record would need a padding record before it, or a look at head
 * (the room seems short); ep_inbox_reserve then. */
static inline ep_inbox_rec_t *ep_inbox_reserve_usual(ep_inbox_t *b, uint64_t n, _Atomic uint64_t *seen, uint64_t *pos)
{
    uint64_t cap = b->cap, span = ep_inbox_span(n), t = atomic_load_explicit(&b->tail, memory_order_relaxed);
    do {
        if ((t & (cap - 1)) + span > cap || t + span - atomic_load_explicit(seen, memory_order_acquire) > cap)
            return NULL;
    } while (
        !atomic_compare_exchange_weak_explicit(&b->tail, &t, t + span, memory_order_relaxed, memory_order_relaxed));
    *pos = t;
    return (ep_inbox_rec_t *)(b->ring + (t & (cap - 1)));
}

/* Producer: hands the filled record at position pos to the consumer. */
static inline void ep_inbox_publish(ep_inbox_rec_t *r, uint64_t pos)
{
    atomic_store_explicit(&r->stamp, pos + 1, memory_order_release);
}

/* Consumer: gives the record ep_inbox_peek returned back to the producers. */
static inline void ep_inbox_release(ep_inbox_t *b, ep_inbox_rec_t *r)
{
    uint64_t h = atomic_load_explicit(&b->head, memory_order_relaxed);
    uint64_t span = r->kind == EP_INBOX_PAD       ? (uint64_t)r->bytes
                    : r->kind == EP_INBOX_FOLLOWS ? ep_inbox_span(EP_INBOX_FOLLOWS_BYTES)
                                                  : ep_inbox_span((uint64_t)r->bytes);
    for (uint64_t o = 0; o < span; o += EP_INBOX_LINE)
        atomic_store_explicit((_Atomic uint64_t *)((char *)r + o), 0, memory_order_relaxed);
    atomic_store_explicit(&b->head, h + span, memory_order_release);
}

/* Padding r, at the head of b, spans whole lines up to the ring's end at
 * most, as every producer writes it. */
static inline int ep_inbox_pad_fits(const ep_inbox_t *b, const ep_inbox_rec_t *r)
{
    uint64_t off = (uint64_t)((const char *)r - b->ring);
    return r->bytes > 0 && r->bytes % EP_INBOX_LINE == 0 && (uint64_t)r->bytes <= b->cap - off;
}

/* Consumer: the oldest published record, padding skipped, or NULL.
 * Padding that does not fit (ep_inbox_pad_fits) is returned, not
 * skipped, for ep_inbox_rec_fault to name. */
static inline ep_inbox_rec_t *ep_inbox_peek(ep_inbox_t *b)
{
    for (;;) {
        uint64_t h = atomic_load_explicit(&b->head, memory_order_relaxed);
        ep_inbox_rec_t *r = (ep_inbox_rec_t *)(b->ring + (h & (b->cap - 1)));
        if (atomic_load_explicit(&r->stamp, memory_order_acquire) != h + 1)
            return NULL;
        if (r->kind != EP_INBOX_PAD || !ep_inbox_pad_fits(b, r))
            return r;
        ep_inbox_release(b, r);
    }
}

/* Consumer: what is wrong with record r that ep_inbox_peek returned, or
 * NULL when a producer may have written it.  A record is in shared
 * memory that every process of the node can write: one spoilt by a bug
 * or a stray write there must not send head (which advances by the
 * record's length) to a place no record starts, nor name a sender that
 * does not exist.  max_data is the largest payload the producers put in
 * a DATA record (at most ep_inbox_max_payload of b's capacity). */
static inline const char *ep_inbox_rec_fault(const ep_inbox_rec_t *r, uint64_t max_data)
{
    switch (r->kind) {
    case EP_INBOX_PAD:
        return "padding that does not end on a line within the ring";
    case EP_INBOX_DATA:
        if ((uint64_t)r->bytes > max_data) /* a negative size too */
            return "a payload size its record cannot hold";
        break;
    case EP_INBOX_FOLLOWS:
        if (r->bytes < 0)
            return "a negative message size";
        break;
    default:
        return "an unknown kind of record";
    }
    if (r->source < 0 || r->tag < 0)
        return "a negative source or tag";
    return NULL;
}

#endif
