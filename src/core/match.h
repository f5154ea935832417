/* Matching queues: MPI's matching rules on (source, tag), nothing else.
 *
 * Each endpoint has two queues, both FIFO: posted receives (patterns, which
 * may hold MPI_ANY_SOURCE / MPI_ANY_TAG) and unexpected messages (concrete
 * source and tag).  An arriving message takes the oldest posted receive it
 * matches; a new receive takes the oldest unexpected message it matches.
 * With messages appended in arrival order, that gives MPI's non-overtaking
 * rule.  The queues are not thread-safe: the owner's lock guards them.
 */
#ifndef EP_MATCH_H
#define EP_MATCH_H

#include <mpi.h>
#include <stddef.h>

typedef struct ep_match_item {
    struct ep_match_item *next;
    int source; /* rank, or MPI_ANY_SOURCE in a posted pattern */
    int tag;    /* tag, or MPI_ANY_TAG in a posted pattern */
} ep_match_item_t;

typedef struct ep_match_queue {
    ep_match_item_t *head;
    ep_match_item_t **tailp; /* &last->next, or &head when empty */
} ep_match_queue_t;

/* Message channels.  Besides the user's messages, an endpoint receives the
 * messages of partitioned communication (partitioned.h), which MPI keeps
 * apart: a partitioned operation matches only partitioned ones, and no
 * wildcard receive or probe ever sees them.  They travel as ordinary
 * messages whose source is the sender's rank moved up by the channel's
 * stride, so every transport carries them unchanged (UCX's tag has room for
 * three channels of EP_CHAN_STRIDE ranks, ucx.c), and MPI_ANY_SOURCE
 * matches the user's channel only.  Partitioned communication needs a
 * communicator of at most EP_CHAN_STRIDE ranks. */
#define EP_CHAN_STRIDE (1 << 18)
typedef enum { EP_CHAN_USER, EP_CHAN_PART_HELLO, EP_CHAN_PART_DATA } ep_chan_t;

/* The source a message from rank on channel chan carries. */
static inline int ep_chan_source(int rank, ep_chan_t chan) { return rank + (int)chan * EP_CHAN_STRIDE; }

/* The rank a message's source names, whatever its channel. */
static inline int ep_chan_rank(int source) { return source % EP_CHAN_STRIDE; }

/* Whether an arriving message's source can be a rank of a communicator of
 * size ranks on one of the channels. */
static inline int ep_chan_source_valid(int source, int size)
{
    return source >= 0 && ep_chan_rank(source) < size && source / EP_CHAN_STRIDE <= EP_CHAN_PART_DATA;
}

static inline int ep_match_fits(int pat_source, int pat_tag, int source, int tag)
{
    return (pat_source == MPI_ANY_SOURCE ? source < EP_CHAN_STRIDE : pat_source == source) &&
           (pat_tag == MPI_ANY_TAG || pat_tag == tag);
}

void ep_mq_init(ep_match_queue_t *q);
static inline int ep_mq_empty(const ep_match_queue_t *q) { return q->head == NULL; }
static inline void ep_mq_append(ep_match_queue_t *q, ep_match_item_t *it)
{
    it->next = NULL;
    *q->tailp = it;
    q->tailp = &it->next;
}

/* Removes and returns the oldest posted pattern that matches (source, tag). */
ep_match_item_t *ep_mq_take_posted(ep_match_queue_t *q, int source, int tag);

/* Returns the oldest message that matches the pattern; removes it if take. */
ep_match_item_t *ep_mq_find_unexpected(ep_match_queue_t *q, int pat_source, int pat_tag, int take);

/* Removes it from q; returns 1 if it was there. */
int ep_mq_remove(ep_match_queue_t *q, ep_match_item_t *it);

/* Removes and returns the oldest item, NULL when empty. */
static inline ep_match_item_t *ep_mq_pop(ep_match_queue_t *q)
{
    ep_match_item_t *it = q->head;
    if (it) {
        if (!(q->head = it->next))
            q->tailp = &q->head;
        it->next = NULL;
    }
    return it;
}

#endif
