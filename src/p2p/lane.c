#include "p2p/lane.h"

#include <stdlib.h>
#include <string.h>

__thread char ep_lane_me EP_TLS;

ep_lane_t *ep_lane_new(int source)
{
    ep_lane_t *l = aligned_alloc(_Alignof(ep_lane_t), sizeof(ep_lane_t));
    if (!l)
        return NULL;
    memset(l, 0, sizeof *l);
    l->owner = ep_lane_token();
    l->source = source;
    return l;
}
