/* The transport interface (transport.h): progress over every transport,
 * and the test of requests whose data is in the MPI transport. */
#include "transport/transport.h"
#include "abi/large.h"

#include "diag/diag.h"
#include "transport/net.h"

__thread int ep_pmpi_quiet EP_TLS;

/* MPICH moves its own operations (collectives, RMA, the PMPI parts of
 * messages) only inside PMPI calls.  Over net.c every poll of the ring is
 * one; over UCX a thread waiting for an endpoint message would make none,
 * so a wait loop pokes MPICH once in this many polls, often enough for a
 * collective another process waits for, seldom enough to stay off the way
 * of a message. */
#define EP_MPICH_POKE_EVERY 64

static __thread unsigned pokes EP_TLS;

void ep_transport_progress(void)
{
    if (ep_ucx_on) {
        ep_ucx_progress();
        if (++pokes % EP_MPICH_POKE_EVERY == 0)
            ep_net_poke_mpich();
    }
    ep_net_progress();
}

ep_status_t ep_transport_comm_connect(ep_comm_t *c, MPI_Request *req)
{
    ep_status_t rc;
    *req = MPI_REQUEST_NULL;
    if (c->ucx_setup) { /* an exchange of UCX addresses is over: the next, or the end */
        if ((rc = ep_ucx_comm_finish(c, req)) || *req != MPI_REQUEST_NULL)
            return rc;
    } else if (!c->ucx) {
        if ((rc = ep_ucx_comm_start(c, req)) || *req != MPI_REQUEST_NULL)
            return rc;
    }
    return c->ucx ? EP_OK : ep_net_activate();
}

void ep_transport_comm_open(ep_comm_t *c) { ep_net_comm_ready(c); }

void ep_transport_comm_close(ep_comm_t *c)
{
    ep_net_comm_gone(c);
    ep_ucx_comm_gone(c);
}

void ep_transport_status_mpich(ep_request_t *r, const MPI_Status *st, int rc)
{
    int err = rc;
    if (err != MPI_SUCCESS && PMPI_Error_class(rc, &err) != MPI_SUCCESS)
        err = MPI_ERR_INTERN;
    if (r->kind == EP_REQ_RECV) {
        r->status = *st;
        if (!err)
            ep_stats_msg(r->ep, 1, st->MPI_SOURCE != ep_local_rank(r->ep), ep_mpi_status_bytes(st));
    }
    r->status.MPI_ERROR = err;
}

/* The PMPI part of r finished, with status st and code err: finish what
 * the engine owes it.  A direct receive's status is MPICH's; any other
 * request has its own, and a PMPI failure is an internal error. */
static void finish_mpi(ep_request_t *r, const MPI_Status *st, int err)
{
    MPI_Count got;
    if (r->direct)
        ep_transport_status_mpich(r, st, err);
    else if (err != MPI_SUCCESS)
        r->status.MPI_ERROR = MPI_ERR_INTERN;
    else if (r->kind == EP_REQ_RECV && r->sent_bytes > 0 &&
             (ep_pmpi_get_count_c(st, MPI_BYTE, &got) != MPI_SUCCESS || got == 0)) {
        /* A rendezvous payload (a receive's only PMPI part) came empty: the
         * sender could not send it after its header (net.c). */
        r->failure = EP_ERR_PEER_FAILED;
        ep_mpi_status_set(&r->status, r->status.MPI_SOURCE, r->status.MPI_TAG, ep_status_class(r->failure), 0, 0);
    }
    ep_request_finish_transfer(r);
}

int ep_transport_test_mpi(ep_request_t *r)
{
    int flag = 0;
    MPI_Status sts[EP_REQ_MAX_NET];
    /* Errors come back as codes, raised on the request's endpoint, not on
     * classic MPI_COMM_WORLD. */
    ep_pmpi_quiet = 1;
    int rc = r->direct ? PMPI_Test(&r->net[0], &flag, sts) : PMPI_Testall(r->nnet, r->net, &flag, sts);
    ep_pmpi_quiet = 0;
    if (rc == MPI_SUCCESS && !flag)
        return 0;
    finish_mpi(r, &sts[0], rc);
    return 1;
}

void ep_transport_test_some(ep_request_t *const rs[], int n)
{
    MPI_Request preq[EP_TEST_SOME_MAX];
    ep_request_t *who[EP_TEST_SOME_MAX];
    int idx[EP_TEST_SOME_MAX];
    MPI_Status sts[EP_TEST_SOME_MAX];
    int k = 0, out = 0;
    for (int i = 0; i < n && k < EP_TEST_SOME_MAX; i++)
        if (rs[i]->nnet == 1 && ep_request_state(rs[i]) == EP_RS_NET) { /* UCX's have none */
            who[k] = rs[i];
            preq[k++] = rs[i]->net[0];
        }
    if (k < 2)
        return; /* ep_transport_test does as well */
    ep_pmpi_quiet = 1;
    int rc = PMPI_Testsome(k, preq, &out, idx, sts);
    ep_pmpi_quiet = 0;
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS && PMPI_Error_class(rc, &cls) == MPI_SUCCESS && cls != MPI_ERR_IN_STATUS)
        return; /* nothing known: ep_transport_test tests them one by one */
    for (int j = 0; j < out && out != MPI_UNDEFINED; j++) {
        ep_request_t *r = who[idx[j]];
        r->net[0] = MPI_REQUEST_NULL;
        finish_mpi(r, &sts[j], rc == MPI_SUCCESS ? MPI_SUCCESS : sts[j].MPI_ERROR);
    }
}
