/* Partitioned communication (MPI-4.0 chapter 4) on endpoint communicators.
 *
 * A partitioned send is one message whose parts (partitions) threads mark
 * ready one by one (MPI_Pready); the message leaves once every part is
 * ready.  A partitioned receive is one message too; MPI_Parrived reports a
 * partition arrived once the whole message has (which MPI allows: a part
 * may be reported late, never early).
 *
 * Matching.  MPI matches a partitioned send with a partitioned receive once,
 * in the order of their initialisation calls, and never with anything else;
 * the pair then exchanges one message per round (MPI_Start).  Here:
 *   - MPI_Psend_init sends a hello on the hello channel (match.h) with the
 *     user's tag, carrying a pair number that is unique among this process's
 *     partitioned sends; MPI_Precv_init posts the receive of a hello from
 *     its source with its tag.  Hellos keep MPI's order between two ranks,
 *     so the n-th send of a (source, tag) pair meets the n-th receive.
 *   - every round's data go on the data channel, tagged with the pair
 *     number: a receive posts its data receive once its hello came, and no
 *     round of another pair can take it.
 * Both channels are invisible to MPI_ANY_SOURCE, so user receives and
 * probes never see them.
 *
 * A direct communicator (direct.h) leaves the whole operation to MPICH's
 * own partitioned calls on its process-level communicator.
 *
 * Threads: MPI_Pready may be called by any thread, several at once; the
 * one that marks the last partition starts the send.  Completion is tested
 * by one thread at a time (the operation's lock; others see "not yet").
 */
#ifndef EP_PARTITIONED_H
#define EP_PARTITIONED_H

#include "core/request.h"

/* Makes the inactive partitioned request of MPI_Psend_init (send) or
 * MPI_Precv_init on ep: partitions parts of count elements of type each, to
 * or from rank peer (MPI_PROC_NULL allowed), with tag.  Arguments are
 * checked by the caller; info goes to MPICH on a direct communicator.
 * EP_ERR_NO_MEM, or what MPICH or the hello's send reports. */
ep_status_t ep_part_init(ep_endpoint_t *ep, int send, void *buf, int partitions, MPI_Count count, MPI_Datatype type,
                         int peer, int tag, MPI_Info info, ep_request_t **out);

/* MPI_Start of partitioned request r (inactive). */
ep_status_t ep_part_start(ep_request_t *r);

/* The number of partitions of r, and whether it is a send. */
int ep_part_partitions(const ep_request_t *r);

/* MPI_Pready of partition i of active send r (0 <= i < partitions).
 * EP_ERR_PART_TWICE when i was marked ready in this round already. */
ep_status_t ep_part_ready(ep_request_t *r, int i);

/* MPI_Parrived of partition i of receive r: 1 when its data are in the
 * buffer (an inactive request counts as arrived); drives r. */
int ep_part_arrived(ep_request_t *r, int i);

/* ep_request_poll of r: 1 when the round is over (r DONE). */
int ep_part_poll(ep_request_t *r);

#endif
