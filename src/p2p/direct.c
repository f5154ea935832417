#include "p2p/direct.h"
#include "abi/large.h"

#include "core/datatype.h"
#include "diag/diag.h"
#include "abi/handle.h"
#include "transport/net.h"
#include "p2p/p2p.h"
#include "base/settings.h"
#include "transport/ucx.h"

#include <stdlib.h>

void ep_direct_decide(ep_comm_t *c)
{
    c->direct = 0;
    if (ep_config.p2p_path == EP_P2P_ENGINE || !ep_config.endpoints || c->inter || c->pcomm == MPI_COMM_NULL ||
        c->nprocs != c->size)
        return;
    for (int r = 0; r < c->size; r++)
        if (c->ranks[r].proc != r)
            return;
    /* Between the processes of one node, the engine with its inboxes is
     * quicker than MPICH's shared memory (bench/README.md). */
    if (ep_config.p2p_path == EP_P2P_AUTO && ep_ucx_node_holds(c))
        return;
    /* Errors of the PMPI calls come back as codes, raised on the endpoint. */
    PMPI_Comm_set_errhandler(c->pcomm, MPI_ERRORS_RETURN);
    c->direct = 1;
}

int ep_direct_send_now(ep_endpoint_t *ep, const void *buf, int count, MPI_Datatype type, int dest, int tag)
{
    int64_t bytes = (int64_t)ep_datatype_builtin_size(type) * count;
    if (bytes < 0 || bytes > EP_DIRECT_NOW_MAX ||
        PMPI_Send(buf, count, type, dest, tag, ep->comm->pcomm) != MPI_SUCCESS)
        return 0;
    ep_stats_msg(ep, 0, dest != ep_local_rank(ep), bytes);
    return 1;
}

ep_status_t ep_direct_send(ep_request_t *s)
{
    MPI_Comm pc = s->ep->comm->pcomm;
    MPI_Request *req = &s->net[0];
    int rc;

    s->direct = 1;
    switch (s->mode) {
    case EP_SEND_BUFFERED: {
        /* The user's buffer is free when the call returns: send a copy,
         * which the progress engine frees with the space it holds. */
        void *copy = malloc(s->lay.bytes ? (size_t)s->lay.bytes : 1);
        if (!copy)
            return EP_ERR_NO_MEM;
        ep_status_t st = ep_dt_pack(s->buf, s->count, s->type, &s->lay, copy);
        if (st) {
            free(copy);
            return st;
        }
        s->tmp = copy;
        rc = ep_pmpi_isend_c(copy, s->lay.bytes, MPI_BYTE, s->peer, s->tag, pc, req);
        break;
    }
    case EP_SEND_SYNC:
        rc = PMPI_Issend(s->buf, s->count, s->type, s->peer, s->tag, pc, req);
        break;
    case EP_SEND_READY:
        rc = PMPI_Irsend(s->buf, s->count, s->type, s->peer, s->tag, pc, req);
        break;
    default:
        rc = PMPI_Isend(s->buf, s->count, s->type, s->peer, s->tag, pc, req);
        break;
    }
    if (rc != MPI_SUCCESS) {
        free(s->tmp);
        s->tmp = NULL;
        return EP_ERR_TRANSPORT;
    }
    s->nnet = 1;
    ep_net_sent(s);
    return EP_OK;
}

/* Receive r's PMPI receive was posted (rc: how that went): r waits for it. */
static ep_status_t recv_posted(ep_request_t *r, int rc)
{
    if (rc != MPI_SUCCESS)
        return EP_ERR_TRANSPORT;
    r->direct = 1;
    r->nnet = 1;
    atomic_store_explicit(&r->state, EP_RS_NET, memory_order_release);
    return EP_OK;
}

ep_status_t ep_direct_recv(ep_request_t *r)
{
    return recv_posted(
        r, PMPI_Irecv(r->buf, r->count, r->type, r->source_pat, r->tag_pat, r->ep->comm->pcomm, &r->net[0]));
}

int ep_direct_recv_now(ep_endpoint_t *ep, void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Status *st)
{
    ep_pmpi_quiet = 1;
    int rc = PMPI_Recv(buf, count, type, source, tag, ep->comm->pcomm, st);
    ep_pmpi_quiet = 0;
    return rc;
}

ep_status_t ep_direct_mrecv(ep_request_t *r, ep_msg_t *m)
{
    int rc = PMPI_Imrecv(r->buf, r->count, r->type, &m->pmsg, &r->net[0]);
    ep_msg_destroy(m);
    return recv_posted(r, rc);
}

ep_status_t ep_direct_probe(ep_endpoint_t *ep, int source, int tag, int take, int *flag, ep_msg_t **msg, MPI_Status *st)
{
    MPI_Comm pc = ep->comm->pcomm;
    /* A probe sets the count, not the cancelled flag (which may share its word). */
    MPI_Status local = {0};
    if (PMPI_Iprobe(source, tag, pc, flag, &local) != MPI_SUCCESS)
        return EP_ERR_TRANSPORT;
    if (!take || !*flag) {
        if (*flag && st != MPI_STATUS_IGNORE)
            *st = local;
        return EP_OK;
    }
    /* There is a message: the entry and its handle first, since one that
     * MPICH hands over cannot be given back.  (Another thread on this
     * endpoint may take it meanwhile: then there is none.) */
    ep_msg_t *m = ep_msg_new();
    if (!m)
        return EP_ERR_NO_MEM;
    m->handle = EP_HANDLE_NEW(MPI_Message, ep_registry_add(EP_HTYPE_REQUEST, &m->obj), MPI_MESSAGE_NULL);
    if (m->handle == MPI_MESSAGE_NULL) {
        m->handle = MPI_MESSAGE_NULL;
        ep_msg_destroy(m);
        return EP_ERR_NO_MEM;
    }
    m->kind = EP_MSG_DIRECT;
    m->ep = ep;
    m->pmsg = MPI_MESSAGE_NULL;
    int rc = PMPI_Improbe(source, tag, pc, flag, &m->pmsg, &local);
    if (rc != MPI_SUCCESS || !*flag) {
        ep_msg_destroy(m);
        *flag = 0;
        return rc == MPI_SUCCESS ? EP_OK : EP_ERR_TRANSPORT;
    }
    m->link.source = local.MPI_SOURCE;
    m->link.tag = local.MPI_TAG;
    if (st != MPI_STATUS_IGNORE)
        *st = local;
    *msg = m;
    return EP_OK;
}

void ep_direct_recv_failed(ep_request_t *r, ep_endpoint_t *ep, void *buf, int count, MPI_Datatype type, int source,
                           int tag, const MPI_Status *st, int rc)
{
    ep_request_init(r, EP_REQ_RECV, ep);
    ep_request_describe_recv(r, buf, count, type, source, tag);
    r->direct = 1;
    if (ep_dt_layout(type, count, &r->lay))
        r->lay.bytes = 0;
    ep_transport_status_mpich(r, st, rc);
}

int ep_direct_cancel(ep_request_t *r)
{
    if (ep_request_state(r) != EP_RS_NET)
        return 0;
    PMPI_Cancel(&r->net[0]);
    int cancelled = 0;
    if (ep_request_poll(r))
        PMPI_Test_cancelled(&r->status, &cancelled);
    return cancelled;
}
