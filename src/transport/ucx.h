/* Endpoint messages between processes over UCX's tag API.
 *
 * The alternative to net.c's header ring (EPMPI_TRANSPORT): each process
 * runs a few UCX workers (ucx_workers in ep_config, by default one per
 * world endpoint up to the CPUs it may use), each with its own lock and
 * progress, so endpoints on different workers share nothing on the way of
 * a message.  Worker addresses are exchanged over MPI_COMM_WORLD at
 * MPI_Init; connections (UCX endpoints) are made on first use.
 *
 * Addressing: every local endpoint of a communicator over several
 * processes gets a receive slot on its worker when the communicator is
 * built, and the processes exchange (worker, slot) of every rank over the
 * communicator's process-level communicator (ep_ucx_comm_start, _finish);
 * a duplicate's ranks take their parent's slots plus one delta that all
 * processes agree on instead, and keep no table of their own.  A
 * message's 64-bit UCX tag is then
 *
 *   0 | slot (15 bits) | source (20) | user tag (28)
 *
 * which names the receiving endpoint and communicator, the sender's rank
 * (on its channel, match.h) and the full MPI_TAG_UB of MPICH (2^28-1).  (A top bit of 1 marks the
 * data behind a node inbox's envelope, below.)  A communicator of more than
 * 2^18 ranks (EP_CHAN_STRIDE), or one for which a worker has no free slot, uses net.c.
 *
 * Matching stays epmpi's (p2p.c), so that wildcards cover the lanes of
 * this process and the messages of other processes alike.  The one
 * exception is a blocking receive from one rank of another process when
 * nothing else waits on its endpoint: UCX matches it itself (see "receives
 * posted in UCX" in ucx.c).  Whoever polls a worker takes every message that
 * arrived there (ucp_tag_probe_nb with removal, in arrival order, so
 * messages from one sender keep their order) and delivers it to its
 * endpoint: a posted receive it matches receives it at once with
 * ucp_tag_msg_recv_nbx, straight into the user's buffer (UCX's
 * rendezvous then moves large data without a copy); otherwise it waits in
 * the unexpected queue as UCX's message handle, its data still in UCX,
 * until a receive matches it.  A synchronous send (ucp_tag_send_sync_nbx)
 * completes when its message is received that way, that is once matched.
 *
 * Between two processes of one node, messages skip UCX's matching: the
 * receiving worker's inbox in shared memory (inbox.h) carries each one,
 * whole when small, else as an envelope whose data follow over UCX under
 * a tag of their own, received once the envelope is matched ("node
 * inboxes" in ucx.c; EPMPI_SHM).
 *
 * Lock order: a worker's lock, then an endpoint's matching lock (delivery
 * runs under the worker's lock); receiving a matched message takes the
 * worker's lock with no endpoint lock held. */
#ifndef EP_UCX_H
#define EP_UCX_H

#include "core/comm.h"
#include "core/datatype.h"
#include "core/request.h"

#include <stddef.h>

/* 1 once UCX carries endpoint messages (ep_ucx_init). */
extern int ep_ucx_on;

/* At MPI_Init, after ep_net_init (collective over MPI_COMM_WORLD): starts
 * UCX when EPMPI_TRANSPORT asks for it (auto: when built with UCX and the
 * job has several processes).  Under auto a UCX that does not start
 * leaves the MPI path, with EP_OK; under ucx it is an error, described in
 * err. */
ep_status_t ep_ucx_init(char *err, size_t errlen);
/* MPI_Finalize: the progress helper stops first (before net.c's
 * communicators go, which its progress would use), then, once no endpoint
 * message is in flight, the rest. */
void ep_ucx_stop_helper(void);
void ep_ucx_finalize(void);
/* One line for EPMPI_VERBOSE: the transport, its workers and the UCX
 * transports a connection uses. */
void ep_ucx_describe(char *buf, size_t len);

/* c, over several processes and not direct, is built: gives its local
 * endpoints receive slots and learns every rank's over c->pcomm
 * (collective over c's processes).  Sets c->ucx when every process could;
 * otherwise c keeps the MPI path.  In steps, so that the non-blocking
 * constructors need not wait: start takes the slots and starts an
 * exchange (*req, or MPI_REQUEST_NULL when UCX is off); finish, once *req
 * is over, decides, or starts the next exchange (*req) and is called
 * again when that is over. */
ep_status_t ep_ucx_comm_start(ep_comm_t *c, MPI_Request *req);
ep_status_t ep_ucx_comm_finish(ep_comm_t *c, MPI_Request *req);
/* c goes (or its construction failed): its slots are free again. */
void ep_ucx_comm_gone(ep_comm_t *c);

/* Sends s (prepared as for ep_net_send) to rank position idx of s's
 * communicator.  s becomes DONE, or NET with a UCX request. */
ep_status_t ep_ucx_send(ep_request_t *s, int idx, const ep_dt_layout_t *lay);
/* A small standard send from ep to rank position idx that UCX can finish
 * at once (its data copied out): 1 when it did, 0 when nothing was sent
 * (the caller then makes a request and uses ep_ucx_send). */
int ep_ucx_send_now(ep_endpoint_t *ep, int idx, const void *buf, size_t bytes, int tag);
/* Receives the matched message m (EP_MSG_UCX) into r (consumes m's UCX
 * handle); r becomes DONE, or NET with a UCX request. */
void ep_ucx_recv(ep_request_t *r, ep_msg_t *m);
/* 1 when the messages of rank position idx of c (a communicator over
 * UCX) come to this process through a node inbox (and so never match a
 * receive posted in UCX). */
int ep_ucx_via_inbox(const ep_comm_t *c, int idx);
/* 1 when every other process of c is on this node and its messages come
 * through the node inboxes (the same answer in each of them; 0 for a
 * communicator of one process): direct.c then keeps c in the engine. */
int ep_ucx_node_holds(const ep_comm_t *c);
/* Receives posted in UCX itself (see ucx.c): p2p.c holds ep's worker
 * (hold returns what give needs) while it checks ep's queues; then post
 * hands r to UCX, 1 when it did (r stays PENDING until UCX completes
 * it), 0 when epmpi's matching must take it. */
int ep_ucx_recv_post_hold(ep_endpoint_t *ep);
void ep_ucx_recv_post_give(ep_endpoint_t *ep, int took);
int ep_ucx_recv_post(ep_request_t *r);
/* Cancels r, posted in UCX: 1 when it was cancelled (r is DONE), 0 when
 * a message matched it first. */
int ep_ucx_recv_cancel(ep_request_t *r);
/* r is NET with a UCX request: -1 while it runs, else its outcome (EP_OK
 * or an error), its UCX request released. */
int ep_ucx_test(ep_request_t *r);
/* Takes what arrived at ep's worker (ep_progress does so for the
 * calling thread's worker). */
void ep_ucx_poll_ep(ep_endpoint_t *ep);
/* The progress of the transport: the calling thread's worker, and now and
 * then every worker. */
void ep_ucx_progress(void);
/* Drops a message that nobody will receive (its communicator goes). */
void ep_ucx_msg_discard(ep_msg_t *m);

#endif
