/* Process-shaped communicators: point-to-point straight over MPICH.
 *
 * When every process of an intracommunicator holds exactly one of its
 * endpoints, and rank r lives in process r of the process-level
 * communicator pcomm (comm.h), MPICH's own matching on pcomm is exactly
 * MPI's matching on the endpoint communicator: same ranks, same wildcards,
 * same ordering.  Such a communicator (world mode with one endpoint per
 * process, and whatever is split or duplicated from it that keeps that
 * shape) is "direct": its sends, receives and probes go to PMPI_ calls on
 * pcomm's point-to-point context, which nothing else uses, with the user's
 * own tag.  Nothing passes through the header layer of net.c, so the
 * endpoint layer costs a handle lookup and a request, not a second
 * matching engine.
 *
 * Every process computes the same answer from the same rank map, so a
 * sender and its receiver always take the same path.  Outside world mode
 * (see ep_direct_decide), and for a communicator with its ranks in this
 * process only (no pcomm), an intercommunicator, or one with two endpoints
 * in some process, messages go through the engine.  So do they, unless
 * EPMPI_P2P_PATH=mpich, when all of the communicator's processes share
 * this node and the node inboxes (ucx.c) carry their messages: there the
 * engine beats MPICH's shared memory in latency and message rate (see
 * docs/PERFORMANCE.md).  Each of those processes sees the same
 * node and the same inboxes, so they agree.
 *
 * The operations still run as engine requests in the NET state (request.h),
 * so waiting, the any/some/all calls, error handlers and the progress rule
 * are the ones every other request has; a direct receive takes its status
 * from MPICH (`direct` in ep_request_t).  Two need no request at all: a
 * small standard send (ep_direct_send_now) and a blocking MPI_Recv that
 * may wait inside MPICH (ep_direct_recv_now), one PMPI call each.
 */
#ifndef EP_DIRECT_H
#define EP_DIRECT_H

#include "core/comm.h"
#include "transport/net.h"
#include "transport/transport.h"
#include "core/proc.h"
#include "core/request.h"
#include "base/settings.h"
#include "base/thread.h"

/* Decides whether c is direct (sets c->direct); called once its rank map
 * and pcomm are final.  Only in world mode, where epmpi owns classic
 * MPI_COMM_WORLD's error handler, on which MPICH raises the errors of a
 * completed request: it stays quiet while the engine tests a direct
 * request and raises them on the request's endpoint (ep_pmpi_quiet,
 * transport.h). */
void ep_direct_decide(ep_comm_t *c);

/* ep_send_now (p2p.h) on a direct communicator: a standard send of at
 * most EP_DIRECT_NOW_MAX bytes of a builtin type is one PMPI_Send, which
 * MPICH completes without the receiver at that size (an eager message),
 * and needs no request of either library; 0 for anything else. */
#define EP_DIRECT_NOW_MAX 256
int ep_direct_send_now(ep_endpoint_t *ep, const void *buf, int count, MPI_Datatype type, int dest, int tag);
/* Starts send s (prepared, layout computed, buffered space reserved). */
ep_status_t ep_direct_send(ep_request_t *s);
/* Starts receive r (prepared). */
ep_status_t ep_direct_recv(ep_request_t *r);
/* A blocking receive may wait in MPICH's own PMPI_Recv, its quickest
 * path, when that starves nobody: no header receives are posted in this
 * process (so no receive of the engine here waits for progress), every
 * endpoint on the node has a core of its own (MPICH polls without giving
 * the CPU away), EPMPI_WAIT is not sleep and EPMPI_STATS is off (it
 * counts the time waited in epmpi's loops). */
static inline int ep_direct_may_block(void)
{
    return ep_config.wait != EP_WAIT_SLEEP && !ep_config.stats && ep_proc_cores_enough() && !ep_net_ring_active();
}
/* MPI_Recv's path: 1 when the receive from source on ep is one PMPI_Recv
 * (ep_direct_recv_now), 0 when it goes through the engine. */
static inline int ep_direct_recv_straight(const ep_endpoint_t *ep, int source)
{
    return ep->comm->direct && source != MPI_PROC_NULL && ep_direct_may_block();
}
/* A blocking receive on ep as one PMPI_Recv into *st (not
 * MPI_STATUS_IGNORE), whose ranks and tags are already the endpoint
 * communicator's; returns PMPI_Recv's code, raising nothing.  For
 * MPI_Recv when ep_direct_may_block(). */
int ep_direct_recv_now(ep_endpoint_t *ep, void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Status *st);
/* Makes r (the caller's storage) the request of a blocking receive on ep
 * that ep_direct_recv_now ended with code rc and status st, for the
 * caller to describe its error. */
void ep_direct_recv_failed(ep_request_t *r, ep_endpoint_t *ep, void *buf, int count, MPI_Datatype type, int source,
                           int tag, const MPI_Status *st, int rc);
/* Starts receive r of a message MPI_Improbe took (consumes m). */
ep_status_t ep_direct_mrecv(ep_request_t *r, ep_msg_t *m);
/* MPI_Iprobe / MPI_Improbe on a direct communicator (*msg: a new message
 * entry holding MPICH's message handle). */
ep_status_t ep_direct_probe(ep_endpoint_t *ep, int source, int tag, int take, int *flag, ep_msg_t **msg,
                            MPI_Status *st);
/* Asks MPICH to cancel pending receive r; 1 when it is known cancelled now. */
int ep_direct_cancel(ep_request_t *r);

#endif
