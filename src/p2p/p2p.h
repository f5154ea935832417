/* Point-to-point on endpoints: start, match, complete.
 *
 * Path selection: a destination in this process is reached through its
 * endpoint's queues directly (never through MPI); one in another process
 * through a transport (transport/transport.h).  Every message ends in
 * take_locked (p2p.c) under the
 * receiving endpoint's lock, so matching and completion are one mechanism.
 *
 * Inside a process, a small standard, ready or buffered send goes through
 * the lane from its endpoint to the destination (lane.h) when the calling
 * thread owns it and it has room: the payload travels inline and the send
 * completes at once.  The receiver's lanes are drained, under its lock, by
 * whoever polls one of its receives, probes it, or delivers to it directly
 * (a receive is posted without draining: a lane holds only messages newer
 * than any unexpected one from the same sender).  Any
 * other send is delivered directly by the sender under the receiver's lock
 * (after draining the lanes if its own may hold messages): if it finds a
 * posted receive it copies its buffer straight into it (one copy, by the
 * sender); otherwise a small non-synchronous or buffered message is copied
 * into an eager unexpected entry and the send completes, and a large or
 * synchronous one is queued as a reference to the sender's buffer
 * (LOCAL_RNDV) that the receiver copies once, then completes the send.
 */
#ifndef EP_P2P_H
#define EP_P2P_H

#include "core/request.h"
#include "transport/transport.h"

/* A standard or ready send that can be over before it returns (to
 * MPI_PROC_NULL, small enough for a lane that has room, or to another
 * process over UCX, which copies it out at once): done, and 1; else 0,
 * and nothing happened.  The caller needs no request then. */
int ep_send_now(ep_endpoint_t *ep, const void *buf, int count, MPI_Datatype type, int dest, int tag);
/* Starts a send request prepared with buf/count/type/peer/tag/mode. */
ep_status_t ep_send_start(ep_request_t *s);
/* Starts a receive request prepared with buf/count/type/source_pat/tag_pat. */
ep_status_t ep_recv_start(ep_request_t *r);
/* Starts persistent request r (MPI_Start), a send or a receive; on
 * failure r is inactive again. */
ep_status_t ep_persistent_start(ep_request_t *r);
/* Starts a receive, then a send, prepared as for the two calls above
 * (MPI_Sendrecv: waited, its caller waits for both next).  On failure
 * nothing of them is left posted; a send's own copy (send->tmp) is the
 * caller's to free. */
ep_status_t ep_sendrecv_start(ep_request_t *recv, ep_request_t *send, int waited);
/* MPI_Isendrecv's request, with a handle: a pair (EP_REQ_PAIR) of a
 * receive and a send, its parts part[0] and part[1], made here for the
 * caller to describe.  It owns copy (the data a replace sends, or NULL),
 * which goes with it, also when this fails (EP_ERR_NO_MEM: no memory or
 * handles; *pair NULL). */
ep_status_t ep_pair_new(ep_endpoint_t *ep, void *copy, ep_request_t **pair);
/* The same for MPI_Isendrecv: starts the parts of pair (EP_REQ_PAIR),
 * which completes when both have. */
ep_status_t ep_pair_start(ep_request_t *pair);
/* Starts receive r and waits until it is complete (a blocking receive). */
ep_status_t ep_recv_wait(ep_request_t *r);
/* Starts receive r of a message taken by MPI_Mprobe (consumes m). */
ep_status_t ep_mrecv_start(ep_request_t *r, ep_msg_t *m);

ep_status_t ep_iprobe(ep_endpoint_t *ep, int source, int tag, int *flag, MPI_Status *st);
/* Matched probe: removes the message from the queue into *msg. */
ep_status_t ep_improbe(ep_endpoint_t *ep, int source, int tag, int *flag, ep_msg_t **msg, MPI_Status *st);

/* Cancels a pending receive; 1 if it was cancelled (not yet matched). */
int ep_recv_cancel(ep_request_t *r);

/* ep_p2p_arrive and ep_p2p_arrive_eager_locked, what the transports hand
 * up, are declared in transport/transport.h. */

/* Matches what the lanes into dst hold.  Without block it gives up when
 * another thread holds dst's lock (callers poll). */
void ep_p2p_drain(ep_endpoint_t *dst, int block);

/* Takes chunks of the copy open in r (ep_copy_job_t) until none is left. */
void ep_copy_help(ep_request_t *r);

#endif
