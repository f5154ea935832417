#include "comm/threadcomm.h"

#include "base/wait.h"
#include "core/attr.h"
#include "comm/comm_create.h"

#include <stdlib.h>

__thread ep_threadcomm_bound_t ep_threadcomm_bound[EP_THREADCOMM_BOUND] EP_TLS;

ep_status_t ep_threadcomm_init(MPI_Comm parent, ep_endpoint_t *ep_parent, int nthreads, ep_threadcomm_t **out)
{
    ep_threadcomm_t *tc = calloc(1, sizeof *tc);
    ep_status_t rc;
    *out = NULL;
    if (!tc || !(tc->eps = calloc((size_t)(nthreads ? nthreads : 1), sizeof(MPI_Comm))) ||
        !(tc->taken = calloc((size_t)(nthreads ? nthreads : 1), 1))) {
        if (tc)
            free(tc->eps);
        free(tc);
        return EP_ERR_NO_MEM;
    }
    tc->obj.kind = EP_OBJ_THREADCOMM;
    tc->nthreads = nthreads;
    rc = ep_parent ? ep_comm_create_endpoints_ep(ep_parent, nthreads, tc->eps)
                   : ep_comm_create_endpoints_classic(parent, 0, nthreads, tc->eps);
    if (!rc && (tc->handle = EP_HANDLE_NEW(MPI_Comm, ep_registry_add(EP_HTYPE_COMM, &tc->obj), MPI_COMM_NULL)) ==
                   MPI_COMM_NULL)
        rc = EP_ERR_ENDPOINTS;
    if (rc) {
        for (int t = 0; t < nthreads; t++) {
            ep_endpoint_t *ep = ep_endpoint_get(tc->eps[t]);
            if (ep)
                ep_endpoint_free(ep);
        }
        free(tc->eps);
        free((void *)tc->taken);
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
    ep_registry_remove(EP_HID(tc->handle));
    for (int t = 0; t < tc->nthreads; t++) {
        ep_endpoint_t *ep = ep_endpoint_get(tc->eps[t]);
        if (ep) {
            ep_attr_delete_all(ep_attr_of(ep));
            ep_endpoint_free(ep);
        }
    }
    free(tc->eps);
    free((void *)tc->taken);
    free(tc);
}

/* All nthreads threads of this process meet (start and finish are
 * collective over them, as in MPICH); waiting yields. */
static void threads_meet(ep_threadcomm_t *tc)
{
    unsigned round = atomic_load(&tc->round);
    if (atomic_fetch_add(&tc->arrived, 1) == tc->nthreads - 1) {
        atomic_store(&tc->arrived, 0);
        atomic_fetch_add(&tc->round, 1);
        return;
    }
    EP_WAIT_UNTIL(atomic_load(&tc->round) != round);
}

static int take(ep_threadcomm_t *tc, int t)
{
    char free_ = 0;
    return atomic_compare_exchange_strong(&tc->taken[t], &free_, 1);
}

ep_status_t ep_threadcomm_start(ep_threadcomm_t *tc)
{
    ep_threadcomm_bound_t *slot = NULL;
    for (int i = 0; i < EP_THREADCOMM_BOUND; i++) {
        if (ep_threadcomm_bound[i].tc == tc) {
            ep_status_explain(EP_ERR_COMM,
                              "this thread started the thread communicator already (it is rank %d there): "
                              "MPIX_Threadcomm_finish comes first",
                              ep_threadcomm_bound[i].ep->rank);
            return EP_ERR_COMM;
        }
        if (!slot && !ep_threadcomm_bound[i].tc)
            slot = &ep_threadcomm_bound[i];
    }
    if (!slot) {
        ep_status_explain(EP_ERR_OTHER, "this thread is inside %d thread communicators already, as many as epmpi keeps",
                          EP_THREADCOMM_BOUND);
        return EP_ERR_OTHER;
    }
    int t = ep_thread_omp_num();
    if (t < 0 || t >= tc->nthreads || !take(tc, t))
        for (t = 0; t < tc->nthreads && !take(tc, t); t++)
            ;
    if (t == tc->nthreads) {
        ep_status_explain(EP_ERR_COMM,
                          "all %d ranks of the thread communicator in this process are taken: more threads started "
                          "it than MPIX_Threadcomm_init was given",
                          tc->nthreads);
        return EP_ERR_COMM;
    }
    slot->ep = ep_endpoint_get(tc->eps[t]);
    slot->t = t;
    slot->tc = tc;
    threads_meet(tc);
    return EP_OK;
}

ep_status_t ep_threadcomm_finish(ep_threadcomm_t *tc)
{
    for (int i = 0; i < EP_THREADCOMM_BOUND; i++) {
        ep_threadcomm_bound_t *b = &ep_threadcomm_bound[i];
        if (b->tc != tc)
            continue;
        ep_attr_delete_all(ep_attr_of(b->ep));
        atomic_store(&tc->taken[b->t], 0);
        b->tc = NULL;
        b->ep = NULL;
        threads_meet(tc);
        return EP_OK;
    }
    ep_status_explain(EP_ERR_COMM, "this thread has not started the thread communicator (MPIX_Threadcomm_start)");
    return EP_ERR_COMM;
}
