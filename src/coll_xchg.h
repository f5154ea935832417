/* The data-movement collectives (gather, scatter, all-to-all and their v / w
 * forms, allgatherv) as one mechanism: an exchange in which every endpoint
 * names, for each peer rank, the block it sends to it and the block it
 * receives from it.
 *
 * The local endpoints publish their ep_xchg_t; local index 0 packs all
 * blocks bound for each process into one byte buffer, ordered
 *
 *     for each destination process q:
 *       for each local source endpoint i (lidx order):
 *         for each rank r living in q (q's lidx order): block i -> r
 *
 * and runs one PMPI_Ialltoallv on the process-level communicator (or none
 * when the communicator lives in one process: the receive layout is then
 * the send layout).  Every endpoint then unpacks the blocks addressed to it,
 * in rank order, straight into its receive buffer.  Any rank map works:
 * ranks of one process need not be contiguous. */
#ifndef EP_COLL_XCHG_H
#define EP_COLL_XCHG_H

#include "comm.h"

typedef struct ep_block {
    const void *buf;
    int count; /* 0: nothing */
    MPI_Datatype type;
} ep_block_t;

typedef struct ep_xchg ep_xchg_t;
struct ep_xchg {
    void (*send_block)(const ep_xchg_t *x, int peer, ep_block_t *b); /* what this endpoint sends to peer */
    void (*recv_block)(const ep_xchg_t *x, int peer, ep_block_t *b); /* what it receives from peer */
    int me, root;
    const void *sbuf;
    int scount;
    const int *scounts, *sdispls;
    MPI_Datatype stype;
    const MPI_Datatype *stypes;
    MPI_Aint sext;
    void *rbuf;
    int rcount;
    const int *rcounts, *rdispls;
    MPI_Datatype rtype;
    const MPI_Datatype *rtypes;
    MPI_Aint rext;
};

/* Runs the exchange described by x (called once by every local endpoint). */
ep_status_t ep_coll_exchange(ep_endpoint_t *ep, const ep_xchg_t *x);

/* Takes part in an exchange without sending or receiving anything: what a
 * rank does after a local failure, so that the others do not hang. */
ep_status_t ep_coll_exchange_nothing(ep_endpoint_t *ep);

ep_status_t ep_coll_gatherv(ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype, int root);
ep_status_t ep_coll_scatterv(ep_endpoint_t *ep, const void *sbuf, int scount, const int *scounts, const int *displs,
                             MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root);
ep_status_t ep_coll_allgatherv(ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                               const int *rcounts, const int *displs, MPI_Datatype rtype);
/* All-to-all: counts/displs/types NULL mean the uniform form; displs in
 * elements unless byte_displs (MPI_Alltoallw). */
ep_status_t ep_coll_alltoallw(ep_endpoint_t *ep, const void *sbuf, int scount, const int *scounts,
                              const int *sdispls, MPI_Datatype stype, const MPI_Datatype *stypes, void *rbuf,
                              int rcount, const int *rcounts, const int *rdispls, MPI_Datatype rtype,
                              const MPI_Datatype *rtypes, int byte_displs);

#endif
