/* World mode's communicators, made at MPI_Init (world_create.h). */
#include "comm/world_create.h"

#include "base/settings.h"
#include "base/thread.h"
#include "comm/comm_create.h"
#include "core/world.h"

#include <stdlib.h>

ep_status_t ep_world_init(int nep)
{
    ep_status_t rc;
    MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;

    ep_world.comm = calloc((size_t)nep, sizeof(MPI_Comm));
    ep_world.self = calloc((size_t)nep, sizeof(MPI_Comm));
    ep_world.ep = calloc(2 * (size_t)nep, sizeof *ep_world.ep);
    if (!ep_world.comm || !ep_world.self || !ep_world.ep)
        return EP_ERR_NO_MEM;
    if ((rc = ep_comm_create_endpoints_classic(MPI_COMM_WORLD, 1, nep, ep_world.comm)))
        return rc;
    /* EPMPI_THREADS=openmp: endpoint t is the one MPI_COMM_WORLD means in
     * OpenMP thread t, so a region of fewer threads cannot join a
     * collective (diag.h). */
    ep_endpoint_get(ep_world.comm[0])->comm->thread_bound = !ep_config.threads_by_call;
    PMPI_Comm_get_errhandler(MPI_COMM_SELF, &eh);
    for (int t = 0; t < nep; t++) {
        ep_endpoint_t *w = ep_endpoint_get(ep_world.comm[t]);
        ep_new_ep_t ne = {0, w->comm->gids[w->rank]};
        ep_comm_t *c;
        if ((rc = ep_comm_build(MPI_COMM_NULL, 1, 1, &ne, eh, &c)))
            return rc;
        ep_world.self[t] = c->local[0].handle;
        c->local[0].user_handle = MPI_COMM_SELF;
        w->user_handle = MPI_COMM_WORLD;
        ep_world.ep[t] = w;
        ep_world.ep[nep + t] = &c->local[0];
    }
    ep_errhandler_release(eh); /* PMPI_Comm_get_errhandler's reference */
    ep_thread_world(nep, ep_config.threads_by_call);
    ep_world.nep = nep;
    return EP_OK;
}
