/* The MPI transport: endpoint messages between processes as PMPI messages.
 *
 * Every message between processes starts with a header sent to the
 * destination process on the transport communicator `tcomm` (proc.h's
 * duplicate of MPI_COMM_WORLD, tag 0).  The header carries the endpoint envelope, so the
 * full tag range, any number of endpoints and every wildcard are handled by
 * the engine's own matching, not by MPI tags:
 *
 *   ctx | source rank | destination lidx | tag | flags | bytes | data tag
 *
 * Eager messages (bytes <= EPMPI_EAGER_LIMIT, not synchronous) carry their
 * packed payload right after the header.  Rendezvous messages send the
 * payload as a separate PMPI message on `tcomm` with a per-process unique
 * data tag (never a header's); the receiver posts a PMPI receive straight into the user buffer
 * once the header has matched (MPICH then does its own zero-copy
 * rendezvous).  Synchronous sends use PMPI_Issend for the payload, which
 * completes only after that receive is posted, i.e. after matching.
 *
 * Ordering: headers from one process to another travel on one communicator
 * and tag, so MPI delivers them in send order; the receiver pre-posts a ring
 * of header receives and handles completions strictly in posting order, one
 * thread at a time (the progress lock).  Hence messages from one endpoint to
 * another arrive in the order they were sent, whatever their sizes.
 */
#ifndef EP_NET_H
#define EP_NET_H

#include "core/comm.h"
#include "core/datatype.h"
#include "core/request.h"

#include <stdatomic.h>
#include <stdint.h>

typedef struct ep_wire_hdr {
    uint64_t ctx;  /* communicator context id */
    int32_t src;   /* sender's rank in the communicator */
    int32_t dst;   /* destination endpoint's local index */
    int32_t tag;   /* user tag */
    int32_t flags; /* EP_WIRE_* */
    int64_t bytes; /* payload size */
    int32_t dtag;  /* rendezvous: tag of the payload on tcomm */
    int32_t pad;
} ep_wire_hdr_t;

#define EP_WIRE_RNDV 0x1

/* Takes the transport communicator (after ep_proc_init; local). */
ep_status_t ep_net_init(void);
void ep_net_finalize(void);
/* 1 once header receives are posted (ep_net_activate). */
extern _Atomic int ep_net_ring_on;
static inline int ep_net_ring_active(void) { return atomic_load_explicit(&ep_net_ring_on, memory_order_relaxed); }

/* Starts receiving headers (idempotent; local).  EP_ERR_NO_MEM when the
 * ring's buffers cannot be had (a later call tries again). */
ep_status_t ep_net_activate(void);

/* Sends s (buf, count, type, mode) to local endpoint dst_lidx of process
 * dst_world in communicator ctx, as rank src.  s moves to NET. */
ep_status_t ep_net_send(ep_request_t *s, int dst_world, uint64_t ctx, int src, int dst_lidx, const ep_dt_layout_t *lay);

/* The PMPI part of send s (net[], tmp) is posted, by ep_net_send or by
 * direct.c: s now waits for it (NET), except a buffered send, which is
 * complete at once (its data is a copy) and leaves that part to the
 * progress engine. */
void ep_net_sent(ep_request_t *s);

/* Posts the PMPI receive of a matched rendezvous message m into r. */
void ep_net_recv_rndv(ep_request_t *r, const ep_msg_t *m);

/* Polls the header ring, if it is on and no other thread does. */
void ep_net_progress(void);
/* A PMPI call that finds nothing, for MPICH to move its own operations
 * (transport.c). */
void ep_net_poke_mpich(void);

/* Registers c's context id and delivers headers that arrived before it. */
void ep_net_comm_ready(ep_comm_t *c);
/* Forgets c's context id. */
void ep_net_comm_gone(ep_comm_t *c);

#endif
