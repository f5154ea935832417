/* The higher layers' parts of a communicator (declared in core/comm.h):
 * what each layer keeps on a communicator and its endpoints, made and
 * dropped at the steps of the communicator's life that comm.c runs.  At
 * the top of the engine, the one place besides engine.c and progress.c
 * that knows every layer. */
#include "base/settings.h"
#include "coll/coll.h"
#include "coll/topo.h"
#include "core/comm.h"
#include "diag/diag.h"
#include "p2p/direct.h"
#include "p2p/lane.h"
#include "transport/transport.h"

#include <stdlib.h>

void ep_comm_parts_choose(ep_comm_t *c) { ep_direct_decide(c); }

ep_status_t ep_comm_parts_init(ep_comm_t *c)
{
    if (ep_local_coll_init(c))
        return EP_ERR_NO_MEM;
    for (int i = 0; ep_config.stats && i < c->nlocal; i++)
        if (!(c->local[i].stats = ep_stats_for(c->gids[c->local[i].rank])))
            return EP_ERR_NO_MEM;
    return EP_OK;
}

/* Only communicators over several processes that are not direct are
 * connected: without one, no header receives are posted at all, and
 * MPICH's matching of direct messages need not skip them. */
ep_status_t ep_comm_parts_connect(ep_comm_t *c, MPI_Request *req)
{
    *req = MPI_REQUEST_NULL;
    return c->nprocs > 1 && !c->direct ? ep_transport_comm_connect(c, req) : EP_OK;
}

void ep_comm_parts_open(ep_comm_t *c) { ep_transport_comm_open(c); }

void ep_comm_parts_close(ep_comm_t *c) { ep_transport_comm_close(c); }

void ep_comm_parts_free(ep_comm_t *c)
{
    for (int i = 0; c->local && i < c->nlocal; i++) {
        ep_endpoint_t *ep = &c->local[i];
        /* Messages still in lanes go with them, as unexpected ones do
         * (comm.c). */
        for (ep_lane_t *l = ep->lanes_in, *next; l; l = next) {
            next = l->next_in;
            free(l);
        }
        free((void *)ep->lanes_out);
        ep_topo_free(ep->topo);
    }
    ep_local_coll_free(c->local_coll);
}
