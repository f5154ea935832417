/* Persistent collectives (MPI_Bcast_init, ...; MPI-4.0 6.12).
 *
 * The init calls are made in the same order everywhere, but the starts of
 * different requests may come in any order (MPICH's coll/p_order does
 * that), while the non-blocking collectives meet in call order (the n-th
 * call of each endpoint meets the n-th of the others, and MPICH's own
 * operations on the process-level communicator match in the order the
 * processes start them).  So each init makes a private duplicate of the
 * communicator (collectively: the inits keep one order), whose calls are
 * this request's starts alone, which are in order since a request is
 * started again only once complete.  The request keeps the duplicate and
 * a copy of its call's arguments, holding their datatypes and operation
 * for as long as it lives, as MPICH does; each start runs the copy as a
 * non-blocking call on the duplicate, whose request becomes the
 * persistent request's only part, so the usual completion of a request
 * made of parts (request.c) completes it.  Its errors go to the
 * program's communicator: the persistent request is on its endpoint. */
#include "coll.h"

#include "comm_create.h"
#include "request.h"

#include <stdlib.h>

typedef struct persistent {
    ep_endpoint_t *dup;   /* this rank's endpoint of the private duplicate */
    ep_coll_args_t *call; /* ep_coll_args_keep's copy */
} persistent_t;

ep_status_t ep_coll_persistent_init(ep_endpoint_t *ep, const ep_coll_args_t *a, ep_request_t **out)
{
    ep_coll_args_t dup_args;
    MPI_Comm dup = MPI_COMM_NULL;
    ep_comm_dup_private_args(&dup_args, ep, &dup);
    ep_status_t st = ep_coll_run(ep, &dup_args);
    ep_request_t *r = NULL;
    persistent_t *p = NULL;
    *out = NULL;
    if (!st) {
        st = EP_ERR_NO_MEM;
        r = ep_request_new(EP_REQ_COLL, ep, 1);
        p = malloc(sizeof *p);
    }
    if (r && p && (p->call = ep_coll_args_keep(a)) && !(st = ep_request_set_parts(r, 1))) {
        p->dup = ep_endpoint_get(dup);
        r->persistent = 1;
        r->tmp = p;
        *out = r;
        return EP_OK;
    }
    if (p)
        ep_coll_args_drop(p->call);
    free(p);
    if (r)
        ep_request_destroy(r);
    if (dup != MPI_COMM_NULL)
        ep_endpoint_free(ep_endpoint_get(dup));
    return st;
}

void ep_coll_persistent_free(void *kept)
{
    persistent_t *p = kept;
    ep_coll_args_drop(p->call);
    ep_endpoint_free(p->dup);
    free(p);
}

ep_status_t ep_coll_persistent_start(ep_request_t *r)
{
    persistent_t *p = r->tmp;
    ep_request_t *run;
    ep_status_t st = ep_coll_start(p->dup, p->call, &run);
    if (st)
        return st;
    ep_request_drop_handle(run);
    if (r->part[0]) /* the last start's, over */
        ep_request_destroy(r->part[0]);
    r->part[0] = run;
    atomic_store_explicit(&r->state, EP_RS_PENDING, memory_order_release);
    return EP_OK;
}
