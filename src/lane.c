#include "lane.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* pthread_self rather than the address of a thread-local variable: in a
 * shared library the latter costs a call to __tls_get_addr per message. */
const void *ep_lane_token(void) { return (const void *)pthread_self(); }

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
