#include "comm_create.h"

#include "net.h"

#include <stdlib.h>

ep_status_t ep_comm_create_endpoints_classic(MPI_Comm parent, int n, MPI_Comm out[])
{
    int prank, wrank = ep_net_world_rank();
    MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
    ep_new_ep_t *ne = malloc(sizeof *ne * (size_t)(n ? n : 1));
    ep_comm_t *c = NULL;
    ep_status_t rc;

    if (!ne)
        return EP_ERR_ENDPOINTS;
    PMPI_Comm_rank(parent, &prank);
    PMPI_Comm_get_errhandler(parent, &eh);
    for (int i = 0; i < n; i++) {
        ne[i].key = ((uint64_t)(uint32_t)prank << 32) | (uint32_t)i;
        ne[i].parent_gid = (ep_gid_t){0, (uint64_t)(uint32_t)wrank};
    }
    rc = ep_comm_build(parent, n, ne, eh, &c);
    free(ne);
    for (int i = 0; !rc && i < n; i++)
        out[i] = c->local[i].handle;
    return rc;
}

ep_status_t ep_comm_create_endpoints_ep(ep_endpoint_t *parent, int n, MPI_Comm out[])
{
    ep_comm_t *pc = parent->comm;
    ep_sync_t *s = &pc->sync;
    ep_status_t rc = EP_OK;

    atomic_store(&s->val[parent->lidx], n);
    ep_sync_barrier(pc);
    if (parent->lidx == 0) {
        int total = 0;
        for (int j = 0; j < pc->nlocal; j++)
            total += (int)atomic_load(&s->val[j]);
        ep_new_ep_t *ne = malloc(sizeof *ne * (size_t)(total ? total : 1));
        ep_comm_t *c = NULL;
        if (!ne)
            rc = EP_ERR_ENDPOINTS;
        else {
            /* Local parent endpoints are numbered in rank order. */
            for (int j = 0, k = 0; j < pc->nlocal; j++) {
                int prank = pc->local[j].rank;
                for (int i = 0; i < (int)atomic_load(&s->val[j]); i++, k++) {
                    ne[k].key = ((uint64_t)(uint32_t)prank << 32) | (uint32_t)i;
                    ne[k].parent_gid = pc->gids[prank];
                }
            }
            rc = ep_comm_build(pc->pcomm, total, ne, MPI_ERRORS_ARE_FATAL, &c);
            free(ne);
        }
        if (c) /* each new rank inherits its parent endpoint's handler */
            for (int j = 0, k = 0; j < pc->nlocal; j++)
                for (int i = 0; i < (int)atomic_load(&s->val[j]); i++, k++)
                    c->local[k].errhandler = pc->local[j].errhandler;
        atomic_store(&s->status, rc);
        atomic_store(&s->result, c);
    }
    ep_sync_barrier(pc);
    rc = atomic_load(&s->status);
    ep_comm_t *c = atomic_load(&s->result);
    if (!rc && n > 0) {
        int first = 0;
        for (int j = 0; j < parent->lidx; j++)
            first += (int)atomic_load(&s->val[j]);
        for (int i = 0; i < n; i++)
            out[i] = c->local[first + i].handle;
    }
    ep_sync_barrier(pc); /* val[] and result may be reused after this */
    return rc;
}

ep_status_t ep_comm_dup(ep_endpoint_t *ep, MPI_Comm *out)
{
    return ep_comm_create_endpoints_ep(ep, 1, out);
}
