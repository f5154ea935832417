#include "request.h"

#include "coll.h"
#include "datatype.h"
#include "handle.h"
#include "p2p.h"

#include <stdlib.h>
#include <string.h>

void ep_request_init(ep_request_t *r, ep_req_kind_t kind, ep_endpoint_t *ep)
{
    memset(r, 0, sizeof *r);
    r->obj.kind = EP_OBJ_REQUEST;
    r->kind = kind;
    r->ep = ep;
    r->handle = MPI_REQUEST_NULL;
    atomic_init(&r->state, EP_RS_INACTIVE);
}

ep_request_t *ep_request_new(ep_req_kind_t kind, ep_endpoint_t *ep, int with_handle)
{
    ep_request_t *r = malloc(sizeof *r);
    if (!r)
        return NULL;
    ep_request_init(r, kind, ep);
    if (with_handle) {
        r->handle = (MPI_Request)ep_registry_add(EP_HTYPE_REQUEST, &r->obj);
        if (r->handle == 0) {
            free(r);
            return NULL;
        }
    }
    return r;
}

void ep_request_destroy(ep_request_t *r)
{
    if (r->handle != MPI_REQUEST_NULL)
        ep_registry_remove((int)r->handle);
    free(r->tmp);
    if (r->coll_comm)
        ep_comm_unref(r->coll_comm);
    if (r->holds_type)
        ep_type_release(r->type);
    free(r);
}

void ep_request_hold_type(ep_request_t *r)
{
    ep_type_hold(r->type);
    r->holds_type = 1;
}

/* The PMPI part of r finished: finish what the engine owes it. */
static void finish_net(ep_request_t *r)
{
    if (r->kind == EP_REQ_RECV && r->tmp) {
        /* Truncated rendezvous: the payload landed in tmp; keep what fits. */
        ep_dt_unpack(r->tmp, r->lay.bytes, r->buf, r->count, r->type, &r->lay);
    }
    free(r->tmp);
    r->tmp = NULL;
    r->nnet = 0;
    if (r->bsend_bytes) {
        ep_bsend_release(r->bsend_bytes);
        r->bsend_bytes = 0;
    }
    ep_request_set_done(r);
}

int ep_request_poll(ep_request_t *r)
{
    int st = ep_request_state(r);
    if (st == EP_RS_DONE || st == EP_RS_INACTIVE)
        return 1;
    if (r->kind == EP_REQ_COLL)
        return ep_coll_poll(r);
    if (st != EP_RS_NET)
        return 0;
    int flag = 0;
    MPI_Status sts[EP_REQ_MAX_NET];
    if (PMPI_Testall(r->nnet, r->net, &flag, sts) != MPI_SUCCESS) {
        r->status.MPI_ERROR = MPI_ERR_INTERN;
        flag = 1;
    }
    if (!flag)
        return 0;
    finish_net(r);
    return 1;
}
