/* The transports, behind one interface: how a message of the engine
 * travels to another process, and how a request whose data is in a
 * transport gets tested.
 *
 *   net.c       the MPI transport: headers and payloads as PMPI messages on
 *               the engine's own communicators; always there
 *   ucx.c       UCX workers per endpoint, and the node inboxes (inbox.h)
 *               between processes of one node; when UCX starts
 *   ucx_none.c  the UCX interface of a build without UCX
 *
 * A direct communicator's operations (p2p/direct.h) are PMPI requests
 * that MPICH matches itself: to this interface they are MPI transport
 * requests whose status is MPICH's (`direct` in ep_request_t).
 *
 * A request waits in NET (core/request.h) while its data is in a
 * transport; ep_transport_test is how it is tested, whichever transport
 * holds it.  Threads of one process meet in the lanes (p2p/lane.h), which
 * are the point-to-point layer's.
 *
 * What arrives goes up to point-to-point matching through the two calls
 * declared at the end, which p2p.c defines: a transport hands messages up,
 * it does not include the layer above it. */
#ifndef EP_TRANSPORT_H
#define EP_TRANSPORT_H

#include "base/thread.h"
#include "core/comm.h"
#include "core/request.h"
#include "transport/ucx.h"

#include <stdint.h>

/* Moves every transport once: the calling thread's UCX worker (and now
 * and then MPICH itself, which moves its own operations only inside PMPI
 * calls), and the MPI transport's header ring.  Part of ep_progress. */
void ep_transport_progress(void);

/* A communicator c over several processes, not direct, is connected in
 * the transports: over UCX when it runs and every process could give c's
 * ranks an address there, else over the MPI transport's header ring.
 * Collective over c's processes, in steps: when *req is not
 * MPI_REQUEST_NULL, call again once it is over; c is connected when a call
 * leaves none. */
ep_status_t ep_transport_comm_connect(ep_comm_t *c, MPI_Request *req);
/* c (connected, or of one process or direct) takes messages from now on:
 * its context is known to the MPI transport, which delivers the headers
 * that came for it early. */
void ep_transport_comm_open(ep_comm_t *c);
/* c takes no more messages and leaves the transports (any step). */
void ep_transport_comm_close(ep_comm_t *c);

/* Takes what arrived for ep at a transport queue of its own (its UCX
 * worker); a receive waiting on ep calls it. */
static inline void ep_transport_poll_ep(ep_endpoint_t *ep)
{
    if (ep->comm->ucx)
        ep_ucx_poll_ep(ep);
}

/* The MPI transport's part of r (r->net[]): 1 when it is over and r DONE. */
int ep_transport_test_mpi(ep_request_t *r);

/* Tests r, NET: 1 when its transport part is over and r is DONE (its
 * failure, if any, recorded), 0 while it runs. */
static inline int ep_transport_test(ep_request_t *r)
{
    if (!r->ucx_req)
        return ep_transport_test_mpi(r);
    int st = ep_ucx_test(r);
    if (st < 0)
        return 0;
    if (st) {
        r->failure = (ep_status_t)st;
        r->status.MPI_ERROR = ep_status_class(r->failure);
    }
    ep_request_finish_transfer(r);
    return 1;
}

/* Takes a completed PMPI receive's status (st, code rc) as r's, for a
 * request on a direct communicator, whose ranks and tags are MPICH's. */
void ep_transport_status_mpich(ep_request_t *r, const MPI_Status *st, int rc);

/* Tests the requests of rs[] (at most EP_TEST_SOME_MAX) that wait in NET
 * for a single PMPI request, all in one PMPI_Testsome: one entry into
 * MPICH, its lock and its progress, where ep_transport_test would take
 * one per request.  Completes those that are done; leaves the rest. */
#define EP_TEST_SOME_MAX 64
void ep_transport_test_some(ep_request_t *const rs[], int n);

/* Set while the calling thread tests PMPI requests whose errors the
 * engine raises itself, on their endpoint: MPICH raises the errors of a
 * completed request on classic MPI_COMM_WORLD's handler, which world mode
 * owns (engine.c) and which stays quiet meanwhile. */
extern __thread int ep_pmpi_quiet EP_TLS;

/* ---- up: defined by the point-to-point layer (p2p.c) ------------------ */

/* A message for dst: completes the oldest matching posted receive or
 * queues it.  m may live on the caller's stack; it is copied when queued.
 * Returns 1 when m completed a posted receive, 0 when it was queued. */
int ep_p2p_arrive(ep_endpoint_t *dst, const ep_msg_t *m);
/* The same for a small message whose payload is at hand (bytes at data,
 * copied before the call returns), without a message record when the
 * oldest posted receive takes it; dst->lock held, so that a run of
 * messages to one endpoint takes it once. */
void ep_p2p_arrive_eager_locked(ep_endpoint_t *dst, int source, int tag, const void *data, int64_t bytes);

#endif
