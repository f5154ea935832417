/* Collectives on endpoint communicators, hierarchically: the endpoints of a
 * process meet through shared memory (ep_sync), one of them (the actor: the
 * root's endpoint when the root is local, else local index 0) runs the PMPI
 * collective on the process-level communicator, and the result is shared
 * back through memory.  Arguments are checked by the entry points. */
#ifndef EP_COLL_H
#define EP_COLL_H

#include "comm.h"

ep_status_t ep_coll_barrier(ep_endpoint_t *ep);
ep_status_t ep_coll_bcast(ep_endpoint_t *ep, void *buf, int count, MPI_Datatype type, int root);
ep_status_t ep_coll_allreduce(ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                              MPI_Op op);
ep_status_t ep_coll_reduce(ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                           int root);
/* counts NULL: MPI_Reduce_scatter_block with `count` per rank. */
ep_status_t ep_coll_reduce_scatter(ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, const int *counts,
                                   MPI_Datatype type, MPI_Op op);
ep_status_t ep_coll_scan(ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                         int exclusive);
ep_status_t ep_coll_allgather(ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                              int rcount, MPI_Datatype rtype);

#endif
