#include "comm/threadcomm.h"

#include "core/attr.h"
#include "comm/comm_create.h"

#include <stdlib.h>

ep_status_t ep_threadcomm_init(MPI_Comm parent, ep_endpoint_t *ep_parent, int nthreads, ep_threadcomm_t **out)
{
    ep_threadcomm_t *tc = calloc(1, sizeof *tc);
    ep_status_t rc;
    *out = NULL;
    if (!tc || !(tc->eps = calloc((size_t)(nthreads ? nthreads : 1), sizeof(MPI_Comm)))) {
        free(tc);
        return EP_ERR_NO_MEM;
    }
    tc->obj.kind = EP_OBJ_THREADCOMM;
    tc->nthreads = nthreads;
    rc = ep_parent ? ep_comm_create_endpoints_ep(ep_parent, nthreads, tc->eps)
                   : ep_comm_create_endpoints_classic(parent, nthreads, tc->eps);
    if (!rc && !(tc->handle = (MPI_Comm)ep_registry_add(EP_HTYPE_COMM, &tc->obj)))
        rc = EP_ERR_ENDPOINTS;
    if (rc) {
        for (int t = 0; t < nthreads; t++) {
            ep_endpoint_t *ep = ep_endpoint_get(tc->eps[t]);
            if (ep)
                ep_endpoint_free(ep);
        }
        free(tc->eps);
        free(tc);
        return rc;
    }
    /* Callbacks see the handle the threads know. */
    for (int t = 0; t < nthreads; t++)
        ep_endpoint_get(tc->eps[t])->user_handle = tc->handle;
    *out = tc;
    return EP_OK;
}

void ep_threadcomm_free(ep_threadcomm_t *tc)
{
    ep_registry_remove((int)tc->handle);
    for (int t = 0; t < tc->nthreads; t++) {
        ep_endpoint_t *ep = ep_endpoint_get(tc->eps[t]);
        if (ep) {
            ep_attr_delete_all(ep_attr_of(ep));
            ep_endpoint_free(ep);
        }
    }
    free(tc->eps);
    free(tc);
}
