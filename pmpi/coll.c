/* Collectives on endpoint communicators, blocking and non-blocking: each
 * pair shares one function that checks the arguments once and describes
 * the call (src/coll/coll.h).  The blocking form passes BLOCKING as the request
 * pointer and the call runs to completion; the non-blocking form passes
 * the caller's, which gets the request. */
#include "coll/coll.h"
#include "entry.h"
#include "coll/topo.h"
#include "core/op.h"

#include <stdlib.h>

#define BLOCKING ENTRY_BLOCKING
#define coll_go entry_coll_go
#define coll_seq_go entry_coll_seq_go

/* Resolves a collective's communicator to its endpoint.  MPI_IN_PLACE has
 * no meaning on intercommunicators. */
#define COLL_ENTRY(call, comm, ep, sendbuf)                                                                    \
    do {                                                                                                       \
        ENTRY_RESOLVE_EP(call, comm, ep);                                                                      \
        if ((ep)->comm->inter && (sendbuf) == MPI_IN_PLACE)                                                    \
            return entry_raise(ep, call, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on intercommunicators"); \
    } while (0)
/* For the collectives MPI defines on intracommunicators only (scans). */
#define COLL_ENTRY_INTRA(call, comm, ep)         \
    do {                                         \
        int rc_;                                 \
        ENTRY_RESOLVE_EP(call, comm, ep);        \
        if ((rc_ = entry_check_intra(ep, call))) \
            return rc_;                          \
    } while (0)

/* ---- argument checks shared by the collectives below ------------------------- */

/* A (buffer, count, type) triple. */
static int check_block(ep_endpoint_t *ep, const char *call, const void *buf, int count, MPI_Datatype type)
{
    int rc;
    if ((rc = entry_check_count(ep, call, count)) || (rc = entry_check_type(ep, call, type)) ||
        (rc = entry_check_buf(ep, call, buf, count, type)))
        return rc;
    return MPI_SUCCESS;
}

/* n per-rank counts (and displacements). */
static int check_counts_n(ep_endpoint_t *ep, const char *call, const char *what, const int *counts, const void *displs,
                          int n)
{
    if (!counts || !displs)
        return entry_raise(ep, call, MPI_ERR_ARG, "%s counts or displacements are NULL", what);
    for (int r = 0; r < n; r++)
        if (counts[r] < 0)
            return entry_raise(ep, call, MPI_ERR_COUNT, "%s count %d for rank %d is negative", what, counts[r], r);
    return MPI_SUCCESS;
}

/* The v / w forms: one count per rank addressed (the remote group of an
 * intercommunicator). */
static int check_counts(ep_endpoint_t *ep, const char *call, const char *what, const int *counts, const int *displs)
{
    return check_counts_n(ep, call, what, counts, displs, ep_remote_size(ep));
}

static int check_types_n(ep_endpoint_t *ep, const char *call, const MPI_Datatype *types, const int *counts, int n)
{
    int rc;
    if (!types)
        return entry_raise(ep, call, MPI_ERR_ARG, "datatype array is NULL");
    for (int r = 0; r < n; r++)
        if (counts[r] > 0 && (rc = entry_check_type(ep, call, types[r])))
            return rc;
    return MPI_SUCCESS;
}

static int check_types(ep_endpoint_t *ep, const char *call, const MPI_Datatype *types, const int *counts)
{
    return check_types_n(ep, call, types, counts, ep_remote_size(ep));
}

/* Inlined into each reduction's entry: out of line (its size with the
 * (operation, type) check) it cost 30 instructions a call more. */
static inline __attribute__((always_inline)) int check_reduction(ep_endpoint_t *ep, const char *call, MPI_Count count,
                                                                 MPI_Datatype type, MPI_Op op)
{
    int rc;
    ep_status_t st;
    if ((rc = entry_check_count(ep, call, count)) || (rc = entry_check_type(ep, call, type)) ||
        (rc = entry_check_op(ep, call, op)))
        return rc;
    return (st = ep_op_check(op, type)) ? entry_raise_status(ep, call, st, NULL) : MPI_SUCCESS;
}

/* ---- barrier, bcast, allreduce, allgather ---------------------------------- */

static int barrier_ep(const char *call, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    ENTRY_RESOLVE_EP(call, comm, ep);
    ep_coll_barrier(&a, ep);
    return coll_go(ep, call, &a, req);
}

static int bcast_ep(const char *call, void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = entry_check_root(ep, call, root)))
        return rc;
    /* Intercommunicators: the buffer matters at MPI_ROOT and in the other group. */
    if ((!ep->comm->inter || root != MPI_PROC_NULL) && (rc = check_block(ep, call, buffer, count, datatype)))
        return rc;
    ep_coll_bcast(&a, ep, buffer, count, datatype, root);
    return coll_go(ep, call, &a, req);
}

/* Reduce, and Allreduce (all: every rank gets the result; root unused).
 * Beyond INT_MAX elements (the _c forms) the engine runs the reduction in
 * pieces (src/coll/coll_seq.c). */
static int reduce_ep(const char *call, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, int all, int root, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    COLL_ENTRY(call, comm, ep, sendbuf);
    int inter = ep->comm->inter;
    if (!all && (rc = entry_check_root(ep, call, root)))
        return rc;
    if ((rc = check_reduction(ep, call, count, datatype, op)))
        return rc;
    /* Who receives the result, and who contributes (intercommunicators:
     * the root's group receives, the other contributes). */
    int gets = all || (inter ? root == MPI_ROOT : ep->rank == root);
    int gives = all || !inter || root >= 0;
    if (sendbuf == MPI_IN_PLACE && !gets)
        return entry_raise(ep, call, MPI_ERR_BUFFER, "MPI_IN_PLACE is only allowed at the root");
    if ((gets && (rc = entry_check_buf(ep, call, recvbuf, count, datatype))) ||
        (gives && sendbuf != MPI_IN_PLACE && (rc = entry_check_buf(ep, call, sendbuf, count, datatype))))
        return rc;
    if (count > INT_MAX)
        return coll_seq_go(ep, call,
                           ep_coll_seq_reduction(ep, all ? EP_COLL_ALLREDUCE : EP_COLL_REDUCE, sendbuf, recvbuf, count,
                                                 datatype, op, root),
                           req);
    ep_coll_reduce(&a, ep, sendbuf, recvbuf, (int)count, datatype, op, all, root);
    return coll_go(ep, call, &a, req);
}

static int allgather_ep(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    COLL_ENTRY(call, comm, ep, sendbuf);
    if ((rc = check_block(ep, call, recvbuf, recvcount, recvtype)) ||
        (sendbuf != MPI_IN_PLACE && (rc = check_block(ep, call, sendbuf, sendcount, sendtype))))
        return rc;
    ep_coll_allgather(&a, ep, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return coll_go(ep, call, &a, req);
}

/* ---- rooted data movement ------------------------------------------------------ */

/* The checks of the rooted data-movement calls: every rank's own block
 * (MPI_IN_PLACE allowed only at the root), and at the root the per-rank
 * side (`what`: "receive" for gathers, "send" for scatters). */
static int check_rooted(ep_endpoint_t *ep, const char *call, int root, const void *buf, int count, MPI_Datatype type,
                        int root_count, const int *root_counts, const int *displs, MPI_Datatype root_type,
                        const char *what)
{
    int rc;
    if ((rc = entry_check_root(ep, call, root)))
        return rc;
    /* Intercommunicators: MPI_ROOT holds the root's side, the other group
     * its own blocks, MPI_PROC_NULL nothing. */
    int inter = ep->comm->inter;
    int at_root = inter ? root == MPI_ROOT : ep->rank == root;
    if (buf == MPI_IN_PLACE && (inter || !at_root))
        return entry_raise(ep, call, MPI_ERR_BUFFER,
                           "MPI_IN_PLACE is only allowed at the root of an intracommunicator");
    if ((!inter || root >= 0) && buf != MPI_IN_PLACE && (rc = check_block(ep, call, buf, count, type)))
        return rc;
    if (at_root && ((rc = entry_check_type(ep, call, root_type)) ||
                    (root_counts ? (rc = check_counts(ep, call, what, root_counts, displs))
                                 : (rc = entry_check_count(ep, call, root_count)))))
        return rc;
    return MPI_SUCCESS;
}

/* rtypes: a type per rank (counts beyond INT_MAX: entry_large_Gatherv), or NULL. */
static int gather_ep(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, const int *recvcounts, const int *displs, MPI_Datatype recvtype,
                     const MPI_Datatype *rtypes, int root, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = check_rooted(ep, call, root, sendbuf, sendcount, sendtype, recvcount, recvcounts, displs, recvtype,
                           "receive")))
        return rc;
    ep_coll_gatherv(&a, ep, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvcounts, displs, recvtype, root);
    a.rtypes = rtypes;
    return coll_go(ep, call, &a, req);
}

static int scatter_ep(const char *call, const void *sendbuf, int sendcount, const int *sendcounts, const int *displs,
                      MPI_Datatype sendtype, const MPI_Datatype *stypes, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = check_rooted(ep, call, root, recvbuf, recvcount, recvtype, sendcount, sendcounts, displs, sendtype,
                           "send")))
        return rc;
    ep_coll_scatterv(&a, ep, sendbuf, sendcount, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
    a.stypes = stypes;
    return coll_go(ep, call, &a, req);
}

/* ---- all to all ---------------------------------------------------------------- */

static int allgatherv_ep(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int *recvcounts, const int *displs, MPI_Datatype recvtype, const MPI_Datatype *rtypes,
                         MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    COLL_ENTRY(call, comm, ep, sendbuf);
    if ((sendbuf != MPI_IN_PLACE && (rc = check_block(ep, call, sendbuf, sendcount, sendtype))) ||
        (rc = entry_check_type(ep, call, recvtype)) || (rc = check_counts(ep, call, "receive", recvcounts, displs)))
        return rc;
    ep_coll_allgatherv(&a, ep, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype);
    a.rtypes = rtypes;
    return coll_go(ep, call, &a, req);
}

static int alltoall_ep(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    COLL_ENTRY(call, comm, ep, sendbuf);
    if ((sendbuf != MPI_IN_PLACE && (rc = check_block(ep, call, sendbuf, sendcount, sendtype))) ||
        (rc = check_block(ep, call, recvbuf, recvcount, recvtype)))
        return rc;
    ep_coll_alltoallw(&a, ep, sendbuf, sendcount, NULL, NULL, sendtype, NULL, recvbuf, recvcount, NULL, NULL, recvtype,
                      NULL, 0);
    return coll_go(ep, call, &a, req);
}

static int alltoallv_ep(const char *call, const void *sendbuf, const int *sendcounts, const int *sdispls,
                        MPI_Datatype sendtype, void *recvbuf, const int *recvcounts, const int *rdispls,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    COLL_ENTRY(call, comm, ep, sendbuf);
    if ((sendbuf != MPI_IN_PLACE &&
         ((rc = entry_check_type(ep, call, sendtype)) || (rc = check_counts(ep, call, "send", sendcounts, sdispls)))) ||
        (rc = entry_check_type(ep, call, recvtype)) || (rc = check_counts(ep, call, "receive", recvcounts, rdispls)))
        return rc;
    ep_coll_alltoallw(&a, ep, sendbuf, 0, sendcounts, sdispls, sendtype, NULL, recvbuf, 0, recvcounts, rdispls,
                      recvtype, NULL, 0);
    return coll_go(ep, call, &a, req);
}

static int alltoallw_ep(const char *call, const void *sendbuf, const int *sendcounts, const int *sdispls,
                        const MPI_Datatype *sendtypes, void *recvbuf, const int *recvcounts, const int *rdispls,
                        const MPI_Datatype *recvtypes, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    COLL_ENTRY(call, comm, ep, sendbuf);
    if ((sendbuf != MPI_IN_PLACE && ((rc = check_counts(ep, call, "send", sendcounts, sdispls)) ||
                                     (rc = check_types(ep, call, sendtypes, sendcounts)))) ||
        (rc = check_counts(ep, call, "receive", recvcounts, rdispls)) ||
        (rc = check_types(ep, call, recvtypes, recvcounts)))
        return rc;
    ep_coll_alltoallw(&a, ep, sendbuf, 0, sendcounts, sdispls, MPI_BYTE, sendtypes, recvbuf, 0, recvcounts, rdispls,
                      MPI_BYTE, recvtypes, 1);
    return coll_go(ep, call, &a, req);
}

/* ---- reduce-scatter and scans ----------------------------------------------------- */

static int large_reduce_scatter(ep_endpoint_t *ep, const char *call, const void *sendbuf, void *recvbuf,
                                MPI_Count total, MPI_Count mine_off, MPI_Count mine, MPI_Datatype t, MPI_Op op,
                                MPI_Request *req);

/* counts NULL: the _block form with `count` per rank.  The counts describe
 * the caller's own group (on an intercommunicator, how the other group's
 * reduced vector is scattered here). */
static int reduce_scatter_ep(const char *call, const void *sendbuf, void *recvbuf, int count, const int *counts,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    COLL_ENTRY(call, comm, ep, sendbuf);
    if ((rc = check_reduction(ep, call, count, datatype, op)) ||
        (counts && (rc = check_counts_n(ep, call, "receive", counts, counts, ep_local_size(ep)))))
        return rc;
    /* A whole vector beyond INT_MAX goes in pieces (below). */
    MPI_Count total = 0, mine_off = 0;
    for (int r = 0; r < ep_local_size(ep); r++) {
        if (r == ep_local_rank(ep))
            mine_off = total;
        total += counts ? counts[r] : count;
    }
    if (total > INT_MAX)
        return large_reduce_scatter(ep, call, sendbuf, recvbuf, total, mine_off,
                                    counts ? counts[ep_local_rank(ep)] : count, datatype, op, req);
    ep_coll_reduce_scatter(&a, ep, sendbuf, recvbuf, count, counts, datatype, op);
    return coll_go(ep, call, &a, req);
}

static int scan_ep(const char *call, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, int exclusive, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    COLL_ENTRY_INTRA(call, comm, ep);
    if ((rc = check_reduction(ep, call, count, datatype, op)))
        return rc;
    if (count > INT_MAX) /* in pieces, as reduce_ep */
        return coll_seq_go(ep, call,
                           ep_coll_seq_reduction(ep, exclusive ? EP_COLL_EXSCAN : EP_COLL_SCAN, sendbuf, recvbuf, count,
                                                 datatype, op, 0),
                           req);
    ep_coll_scan(&a, ep, sendbuf, recvbuf, (int)count, datatype, op, exclusive);
    return coll_go(ep, call, &a, req);
}

/* ---- neighbourhood collectives ----------------------------------------------
 * On the communicator's topology (src/coll/topo.h), through the same exchange as
 * the all-to-alls. */

/* The communicator must carry a topology; MPI_IN_PLACE means nothing here. */
static int nbr_entry(const char *call, MPI_Comm comm, const void *sendbuf, ep_endpoint_t **ep)
{
    int rc;
    if ((rc = entry_endpoint(call, comm, ep)))
        return rc;
    if (!(*ep)->topo)
        return entry_raise(*ep, call, MPI_ERR_TOPOLOGY, "the communicator has no topology");
    if (sendbuf == MPI_IN_PLACE)
        return entry_raise(*ep, call, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in neighbourhood collectives");
    return MPI_SUCCESS;
}

/* v forms: n counts and displacements (NULL allowed when n is 0). */
static int check_nbr_counts(ep_endpoint_t *ep, const char *call, const char *what, const int *counts,
                            const void *displs, int n)
{
    return n ? check_counts_n(ep, call, what, counts, displs, n) : MPI_SUCCESS;
}

/* recvcounts NULL: Neighbor_allgather, recvcount from each in-neighbour. */
static int nbr_allgather_ep(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, const int *recvcounts, const int *displs, MPI_Datatype recvtype,
                            const MPI_Datatype *rtypes, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    if ((rc = nbr_entry(call, comm, sendbuf, &ep)) || (rc = check_block(ep, call, sendbuf, sendcount, sendtype)) ||
        (!recvcounts && (rc = check_block(ep, call, recvbuf, recvcount, recvtype))) ||
        (recvcounts && ((rc = entry_check_type(ep, call, recvtype)) ||
                        (rc = check_nbr_counts(ep, call, "receive", recvcounts, displs, ep->topo->indegree)))))
        return rc;
    ep_coll_neighbor(&a, ep, 1, sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, recvcounts, displs,
                     recvtype);
    a.rtypes = rtypes;
    return coll_go(ep, call, &a, req);
}

/* sendcounts NULL: Neighbor_alltoall, the uniform counts. */
static int nbr_alltoall_ep(const char *call, const void *sendbuf, int sendcount, const int *sendcounts,
                           const int *sdispls, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           const int *recvcounts, const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    if ((rc = nbr_entry(call, comm, sendbuf, &ep)))
        return rc;
    if (!sendcounts ? (rc = check_block(ep, call, sendbuf, sendcount, sendtype)) ||
                          (rc = check_block(ep, call, recvbuf, recvcount, recvtype))
                    : (rc = entry_check_type(ep, call, sendtype)) || (rc = entry_check_type(ep, call, recvtype)) ||
                          (rc = check_nbr_counts(ep, call, "send", sendcounts, sdispls, ep->topo->outdegree)) ||
                          (rc = check_nbr_counts(ep, call, "receive", recvcounts, rdispls, ep->topo->indegree)))
        return rc;
    ep_coll_neighbor(&a, ep, 0, sendbuf, sendcount, sendcounts, sdispls, sendtype, recvbuf, recvcount, recvcounts,
                     rdispls, recvtype);
    return coll_go(ep, call, &a, req);
}

static int nbr_alltoallw_ep(const char *call, const void *sendbuf, const int *sendcounts, const MPI_Aint *sdispls,
                            const MPI_Datatype *sendtypes, void *recvbuf, const int *recvcounts,
                            const MPI_Aint *rdispls, const MPI_Datatype *recvtypes, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    if ((rc = nbr_entry(call, comm, sendbuf, &ep)))
        return rc;
    int out = ep->topo->outdegree, in = ep->topo->indegree;
    if ((out && ((rc = check_counts_n(ep, call, "send", sendcounts, sdispls, out)) ||
                 (rc = check_types_n(ep, call, sendtypes, sendcounts, out)))) ||
        (in && ((rc = check_counts_n(ep, call, "receive", recvcounts, rdispls, in)) ||
                (rc = check_types_n(ep, call, recvtypes, recvcounts, in)))))
        return rc;
    ep_coll_neighbor_w(&a, ep, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes);
    return coll_go(ep, call, &a, req);
}

/* ---- counts beyond INT_MAX: the array _c forms ------------------------------
 * entries.gen.c runs the int form when every count and displacement of a _c
 * call fits in an int, and one of these otherwise.  Each block becomes one
 * element of a type made for it (entry_large_blocks), and the int form's body
 * runs with a type per rank.  Another rank of the same call may take the
 * int form: what must match between two ranks is the bytes of each block,
 * and those are the same either way. */

/* One side of a call: n blocks, block i counts[i] elements of types[i]
 * at displs[i] bytes (typed: the w forms), or of type at displs[i] extents
 * of type. */
static int large_side(ep_endpoint_t *ep, const char *call, const char *what, int n, const MPI_Count *counts,
                      const MPI_Aint *displs, MPI_Datatype type, const MPI_Datatype *types, int typed,
                      entry_large_blocks_t *w)
{
    MPI_Aint unit = 1;
    int rc;
    if (n > 0 && typed && !types)
        return entry_raise(ep, call, MPI_ERR_ARG, "datatype array is NULL");
    if (n > 0 && !typed) {
        if ((rc = entry_check_type(ep, call, type)))
            return rc;
        unit = ep_coll_extent(type);
    }
    return entry_large_blocks(ep, call, what, n, counts, displs, unit, type, typed ? types : NULL, w);
}

/* Both sides of an all-to-all: ns send blocks, nr receive blocks. */
static int large_sides(ep_endpoint_t *ep, const char *call, int ns, const MPI_Count *scounts, const MPI_Aint *sdispls,
                       MPI_Datatype stype, const MPI_Datatype *stypes, int nr, const MPI_Count *rcounts,
                       const MPI_Aint *rdispls, MPI_Datatype rtype, const MPI_Datatype *rtypes, int typed,
                       entry_large_blocks_t *ws, entry_large_blocks_t *wr)
{
    int rc = large_side(ep, call, "send", ns, scounts, sdispls, stype, stypes, typed, ws);
    return rc ? rc : large_side(ep, call, "receive", nr, rcounts, rdispls, rtype, rtypes, typed, wr);
}

int entry_large_Gatherv(const char *call, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                        int root, MPI_Comm comm, MPI_Request *request)
{
    ep_endpoint_t *ep;
    entry_large_blocks_t w = {0};
    MPI_Datatype st = MPI_DATATYPE_NULL;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    int n = entry_peers(ep, ENTRY_PEERS_AT_ROOT, root, sendbuf);
    if (!(rc = entry_large_type(call, comm, sendbuf, sendcount, sendtype, &st)) &&
        !(rc = large_side(ep, call, "receive", n, recvcounts, displs, recvtype, NULL, 0, &w)))
        rc = gather_ep(call, sendbuf, ENTRY_LARGE_COUNT(sendcount, st), ENTRY_LARGE_TYPE(sendtype, st), recvbuf, 0,
                       w.counts, w.displs, recvtype, n ? w.types : NULL, root, comm, request);
    entry_large_blocks_free(&w);
    entry_large_type_free(&st);
    return rc;
}

int entry_large_Scatterv(const char *call, const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm, MPI_Request *request)
{
    ep_endpoint_t *ep;
    entry_large_blocks_t w = {0};
    MPI_Datatype rt = MPI_DATATYPE_NULL;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    int n = entry_peers(ep, ENTRY_PEERS_AT_ROOT, root, sendbuf);
    if (!(rc = entry_large_type(call, comm, recvbuf, recvcount, recvtype, &rt)) &&
        !(rc = large_side(ep, call, "send", n, sendcounts, displs, sendtype, NULL, 0, &w)))
        rc = scatter_ep(call, sendbuf, 0, w.counts, w.displs, sendtype, n ? w.types : NULL, recvbuf,
                        ENTRY_LARGE_COUNT(recvcount, rt), ENTRY_LARGE_TYPE(recvtype, rt), root, comm, request);
    entry_large_blocks_free(&w);
    entry_large_type_free(&rt);
    return rc;
}

int entry_large_Allgatherv(const char *call, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Request *request)
{
    ep_endpoint_t *ep;
    entry_large_blocks_t w = {0};
    MPI_Datatype st = MPI_DATATYPE_NULL;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    int n = entry_peers(ep, ENTRY_PEERS, 0, sendbuf);
    if (!(rc = entry_large_type(call, comm, sendbuf, sendcount, sendtype, &st)) &&
        !(rc = large_side(ep, call, "receive", n, recvcounts, displs, recvtype, NULL, 0, &w)))
        rc = allgatherv_ep(call, sendbuf, ENTRY_LARGE_COUNT(sendcount, st), ENTRY_LARGE_TYPE(sendtype, st), recvbuf,
                           w.counts, w.displs, recvtype, w.types, comm, request);
    entry_large_blocks_free(&w);
    entry_large_type_free(&st);
    return rc;
}

/* The all-to-alls become Alltoallw with a type per rank. */
static int large_alltoall(const char *call, const void *sendbuf, const MPI_Count *sendcounts, const MPI_Aint *sdispls,
                          MPI_Datatype sendtype, const MPI_Datatype *sendtypes, void *recvbuf,
                          const MPI_Count *recvcounts, const MPI_Aint *rdispls, MPI_Datatype recvtype,
                          const MPI_Datatype *recvtypes, int typed, MPI_Comm comm, MPI_Request *request)
{
    ep_endpoint_t *ep;
    entry_large_blocks_t ws = {0}, wr = {0};
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    int ns = entry_peers(ep, ENTRY_PEERS_SEND, 0, sendbuf), nr = entry_peers(ep, ENTRY_PEERS, 0, sendbuf);
    if (!(rc = large_sides(ep, call, ns, sendcounts, sdispls, sendtype, sendtypes, nr, recvcounts, rdispls, recvtype,
                           recvtypes, typed, &ws, &wr)))
        rc = alltoallw_ep(call, sendbuf, ws.counts, ws.displs, ws.types, recvbuf, wr.counts, wr.displs, wr.types, comm,
                          request);
    entry_large_blocks_free(&ws);
    entry_large_blocks_free(&wr);
    return rc;
}

int entry_large_Alltoallv(const char *call, const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                          MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return large_alltoall(call, sendbuf, sendcounts, sdispls, sendtype, NULL, recvbuf, recvcounts, rdispls, recvtype,
                          NULL, 0, comm, request);
}

int entry_large_Alltoallw(const char *call, const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                          const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    return large_alltoall(call, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf, recvcounts,
                          rdispls, MPI_DATATYPE_NULL, recvtypes, 1, comm, request);
}

int entry_large_Neighbor_allgatherv(const char *call, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    ep_endpoint_t *ep;
    entry_large_blocks_t w = {0};
    MPI_Datatype st = MPI_DATATYPE_NULL;
    int rc;
    if ((rc = nbr_entry(call, comm, sendbuf, &ep)))
        return rc;
    if (!(rc = entry_large_type(call, comm, sendbuf, sendcount, sendtype, &st)) &&
        !(rc = large_side(ep, call, "receive", ep->topo->indegree, recvcounts, displs, recvtype, NULL, 0, &w)))
        rc = nbr_allgather_ep(call, sendbuf, ENTRY_LARGE_COUNT(sendcount, st), ENTRY_LARGE_TYPE(sendtype, st), recvbuf,
                              0, w.counts, w.displs, recvtype, w.types, comm, request);
    entry_large_blocks_free(&w);
    entry_large_type_free(&st);
    return rc;
}

/* The neighbourhood all-to-alls become Neighbor_alltoallw. */
static int large_nbr_alltoall(const char *call, const void *sendbuf, const MPI_Count *sendcounts,
                              const MPI_Aint *sdispls, MPI_Datatype sendtype, const MPI_Datatype *sendtypes,
                              void *recvbuf, const MPI_Count *recvcounts, const MPI_Aint *rdispls,
                              MPI_Datatype recvtype, const MPI_Datatype *recvtypes, int typed, MPI_Comm comm,
                              MPI_Request *request)
{
    ep_endpoint_t *ep;
    entry_large_blocks_t ws = {0}, wr = {0};
    int rc;
    if ((rc = nbr_entry(call, comm, sendbuf, &ep)))
        return rc;
    if (!(rc = large_sides(ep, call, ep->topo->outdegree, sendcounts, sdispls, sendtype, sendtypes, ep->topo->indegree,
                           recvcounts, rdispls, recvtype, recvtypes, typed, &ws, &wr)))
        rc = nbr_alltoallw_ep(call, sendbuf, ws.counts, ws.bdispls, ws.types, recvbuf, wr.counts, wr.bdispls, wr.types,
                              comm, request);
    entry_large_blocks_free(&ws);
    entry_large_blocks_free(&wr);
    return rc;
}

int entry_large_Neighbor_alltoallv(const char *call, const void *sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Request *request)
{
    return large_nbr_alltoall(call, sendbuf, sendcounts, sdispls, sendtype, NULL, recvbuf, recvcounts, rdispls,
                              recvtype, NULL, 0, comm, request);
}

int entry_large_Neighbor_alltoallw(const char *call, const void *sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    return large_nbr_alltoall(call, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf, recvcounts,
                              rdispls, MPI_DATATYPE_NULL, recvtypes, 1, comm, request);
}

/* ---- counts beyond INT_MAX: the reductions ----------------------------------
 * The other calls make a type of a count's elements; MPICH 4.0.2's
 * predefined operations refuse derived types, so a reduction cannot: the
 * engine runs it in pieces of at most INT_MAX elements (src/coll/coll_seq.c). */

int entry_large_Reduce(const char *call, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    return reduce_ep(call, sendbuf, recvbuf, count, datatype, op, 0, root, comm, request);
}

int entry_large_Allreduce(const char *call, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_ep(call, sendbuf, recvbuf, count, datatype, op, 1, 0, comm, request);
}

int entry_large_Scan(const char *call, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return scan_ep(call, sendbuf, recvbuf, count, datatype, op, comm, 0, request);
}

int entry_large_Exscan(const char *call, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return scan_ep(call, sendbuf, recvbuf, count, datatype, op, comm, 1, request);
}

/* Reduce-scatter beyond INT_MAX elements in all: the whole vector is
 * reduced in pieces, and each rank keeps its block (src/coll/coll_seq.c). */
static int large_reduce_scatter(ep_endpoint_t *ep, const char *call, const void *sendbuf, void *recvbuf,
                                MPI_Count total, MPI_Count mine_off, MPI_Count mine, MPI_Datatype t, MPI_Op op,
                                MPI_Request *req)
{
    int rc;
    if ((rc = check_reduction(ep, call, 0, t, op)))
        return rc;
    return coll_seq_go(ep, call, ep_coll_seq_reduce_scatter(ep, sendbuf, recvbuf, total, mine_off, mine, t, op), req);
}

int entry_large_Reduce_scatter_block(const char *call, const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ep_endpoint_t *ep;
    COLL_ENTRY(call, comm, ep, sendbuf);
    if (recvcount < 0)
        return entry_raise(ep, call, MPI_ERR_COUNT, "count %lld is negative", (long long)recvcount);
    return large_reduce_scatter(ep, call, sendbuf, recvbuf, recvcount * ep_local_size(ep),
                                recvcount * ep_local_rank(ep), recvcount, datatype, op, request);
}

int entry_large_Reduce_scatter(const char *call, const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ep_endpoint_t *ep;
    MPI_Count total = 0, mine_off = 0;
    COLL_ENTRY(call, comm, ep, sendbuf);
    if (!recvcounts)
        return entry_raise(ep, call, MPI_ERR_ARG, "receive counts are NULL");
    for (int r = 0; r < ep_local_size(ep); r++) {
        if (recvcounts[r] < 0)
            return entry_raise(ep, call, MPI_ERR_COUNT, "receive count %lld for rank %d is negative",
                               (long long)recvcounts[r], r);
        if (r == ep_local_rank(ep))
            mine_off = total;
        total += recvcounts[r];
    }
    return large_reduce_scatter(ep, call, sendbuf, recvbuf, total, mine_off, recvcounts[ep_local_rank(ep)], datatype,
                                op, request);
}

/* The entry points whose dispatch is data (maint/dispatch.txt). */
#include "coll.entry.gen.inc"
