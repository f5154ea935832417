#include "core/match.h"

#include <stddef.h>

void ep_mq_init(ep_match_queue_t *q)
{
    q->head = NULL;
    q->tailp = &q->head;
}

static ep_match_item_t *unlink_at(ep_match_queue_t *q, ep_match_item_t **pp)
{
    ep_match_item_t *it = *pp;
    *pp = it->next;
    if (q->tailp == &it->next)
        q->tailp = pp;
    it->next = NULL;
    return it;
}

ep_match_item_t *ep_mq_take_posted(ep_match_queue_t *q, int source, int tag)
{
    for (ep_match_item_t **pp = &q->head; *pp; pp = &(*pp)->next)
        if (ep_match_fits((*pp)->source, (*pp)->tag, source, tag))
            return unlink_at(q, pp);
    return NULL;
}

ep_match_item_t *ep_mq_find_unexpected(ep_match_queue_t *q, int pat_source, int pat_tag, int take)
{
    for (ep_match_item_t **pp = &q->head; *pp; pp = &(*pp)->next)
        if (ep_match_fits(pat_source, pat_tag, (*pp)->source, (*pp)->tag))
            return take ? unlink_at(q, pp) : *pp;
    return NULL;
}

int ep_mq_remove(ep_match_queue_t *q, ep_match_item_t *it)
{
    for (ep_match_item_t **pp = &q->head; *pp; pp = &(*pp)->next)
        if (*pp == it) {
            unlink_at(q, pp);
            return 1;
        }
    return 0;
}
