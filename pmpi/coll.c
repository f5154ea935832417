/* Collectives on endpoint communicators: check the arguments once, then
 * run the engine (src/coll.c for reductions and the rest of the hierarchical
 * ones, src/coll_xchg.c for data movement). */
#include "coll.h"
#include "coll_xchg.h"
#include "entry.h"

static int coll_result(ep_endpoint_t *ep, const char *call, ep_status_t st)
{
    return st ? ep_raise_status(ep, call, st, NULL) : MPI_SUCCESS;
}

EP_API int MPI_Barrier(MPI_Comm comm)
{
    ep_endpoint_t *ep;
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Barrier(comm);
    EP_ENTRY_EP("MPI_Barrier", comm, ep);
    return coll_result(ep, "MPI_Barrier", ep_coll_barrier(ep));
}

EP_API int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    static const char call[] = "MPI_Bcast";
    ep_endpoint_t *ep;
    int rc;
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    EP_ENTRY_EP(call, comm, ep);
    if ((rc = ep_check_root(ep, call, root)) || (rc = ep_check_count(ep, call, count)) ||
        (rc = ep_check_type(ep, call, datatype)) || (rc = ep_check_buf(ep, call, buffer, count, datatype)))
        return rc;
    return coll_result(ep, call, ep_coll_bcast(ep, buffer, count, datatype, root));
}

EP_API int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm)
{
    static const char call[] = "MPI_Allreduce";
    ep_endpoint_t *ep;
    int rc;
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    EP_ENTRY_EP(call, comm, ep);
    if ((rc = ep_check_count(ep, call, count)) || (rc = ep_check_type(ep, call, datatype)) ||
        (rc = ep_check_op(ep, call, op)) || (rc = ep_check_buf(ep, call, recvbuf, count, datatype)) ||
        (sendbuf != MPI_IN_PLACE && (rc = ep_check_buf(ep, call, sendbuf, count, datatype))))
        return rc;
    return coll_result(ep, call, ep_coll_allreduce(ep, sendbuf, recvbuf, count, datatype, op));
}

EP_API int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char call[] = "MPI_Allgather";
    ep_endpoint_t *ep;
    int rc;
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    EP_ENTRY_EP(call, comm, ep);
    if ((rc = ep_check_count(ep, call, recvcount)) || (rc = ep_check_type(ep, call, recvtype)) ||
        (rc = ep_check_buf(ep, call, recvbuf, recvcount, recvtype)))
        return rc;
    if (sendbuf != MPI_IN_PLACE &&
        ((rc = ep_check_count(ep, call, sendcount)) || (rc = ep_check_type(ep, call, sendtype)) ||
         (rc = ep_check_buf(ep, call, sendbuf, sendcount, sendtype))))
        return rc;
    return coll_result(ep, call, ep_coll_allgather(ep, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

/* ---- argument checks shared by the collectives below ------------------------- */

/* A (buffer, count, type) triple. */
static int check_block(ep_endpoint_t *ep, const char *call, const void *buf, int count, MPI_Datatype type)
{
    int rc;
    if ((rc = ep_check_count(ep, call, count)) || (rc = ep_check_type(ep, call, type)) ||
        (rc = ep_check_buf(ep, call, buf, count, type)))
        return rc;
    return MPI_SUCCESS;
}

/* Per-rank counts (and displacements) of the v / w forms. */
static int check_counts(ep_endpoint_t *ep, const char *call, const char *what, const int *counts, const int *displs)
{
    if (!counts || !displs)
        return ep_raise(ep, call, MPI_ERR_ARG, "%s counts or displacements are NULL", what);
    for (int r = 0; r < ep->comm->size; r++)
        if (counts[r] < 0)
            return ep_raise(ep, call, MPI_ERR_COUNT, "%s count %d for rank %d is negative", what, counts[r], r);
    return MPI_SUCCESS;
}

static int check_types(ep_endpoint_t *ep, const char *call, const MPI_Datatype *types, const int *counts)
{
    int rc;
    if (!types)
        return ep_raise(ep, call, MPI_ERR_ARG, "datatype array is NULL");
    for (int r = 0; r < ep->comm->size; r++)
        if (counts[r] > 0 && (rc = ep_check_type(ep, call, types[r])))
            return rc;
    return MPI_SUCCESS;
}

static int check_reduction(ep_endpoint_t *ep, const char *call, int count, MPI_Datatype type, MPI_Op op)
{
    int rc;
    if ((rc = ep_check_count(ep, call, count)) || (rc = ep_check_type(ep, call, type)) ||
        (rc = ep_check_op(ep, call, op)))
        return rc;
    return MPI_SUCCESS;
}

/* ---- rooted ----------------------------------------------------------------------- */

EP_API int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                      MPI_Comm comm)
{
    static const char call[] = "MPI_Reduce";
    ep_endpoint_t *ep;
    int rc;
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    EP_ENTRY_EP(call, comm, ep);
    if ((rc = ep_check_root(ep, call, root)) || (rc = check_reduction(ep, call, count, datatype, op)))
        return rc;
    if (sendbuf == MPI_IN_PLACE && ep->rank != root)
        return ep_raise(ep, call, MPI_ERR_BUFFER, "MPI_IN_PLACE is only allowed at the root");
    return coll_result(ep, call, ep_coll_reduce(ep, sendbuf, recvbuf, count, datatype, op, root));
}

/* The checks of the rooted data-movement calls: every rank's own block
 * (MPI_IN_PLACE allowed only at the root), and at the root the per-rank
 * side (`what`: "receive" for gathers, "send" for scatters). */
static int check_rooted(ep_endpoint_t *ep, const char *call, int root, const void *buf, int count,
                        MPI_Datatype type, int root_count, const int *root_counts, const int *displs,
                        MPI_Datatype root_type, const char *what)
{
    int rc;
    if ((rc = ep_check_root(ep, call, root)))
        return rc;
    int at_root = ep->rank == root;
    if (buf == MPI_IN_PLACE && !at_root)
        return ep_raise(ep, call, MPI_ERR_BUFFER, "MPI_IN_PLACE is only allowed at the root");
    if (buf != MPI_IN_PLACE && (rc = check_block(ep, call, buf, count, type)))
        return rc;
    if (at_root && ((rc = ep_check_type(ep, call, root_type)) ||
                    (root_counts ? (rc = check_counts(ep, call, what, root_counts, displs))
                                 : (rc = ep_check_count(ep, call, root_count)))))
        return rc;
    return MPI_SUCCESS;
}

static int gather_common(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, const int *recvcounts, const int *displs, MPI_Datatype recvtype, int root,
                         MPI_Comm comm)
{
    ep_endpoint_t *ep;
    int rc;
    EP_ENTRY_EP(call, comm, ep);
    if ((rc = check_rooted(ep, call, root, sendbuf, sendcount, sendtype, recvcount, recvcounts, displs, recvtype,
                           "receive")))
        return rc;
    return coll_result(ep, call, ep_coll_gatherv(ep, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvcounts,
                                                 displs, recvtype, root));
}

EP_API int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return gather_common("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype, root,
                         comm);
}

EP_API int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    return gather_common("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, root,
                         comm);
}

static int scatter_common(const char *call, const void *sendbuf, int sendcount, const int *sendcounts,
                          const int *displs, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    ep_endpoint_t *ep;
    int rc;
    EP_ENTRY_EP(call, comm, ep);
    if ((rc = check_rooted(ep, call, root, recvbuf, recvcount, recvtype, sendcount, sendcounts, displs, sendtype,
                           "send")))
        return rc;
    return coll_result(ep, call, ep_coll_scatterv(ep, sendbuf, sendcount, sendcounts, displs, sendtype, recvbuf,
                                                  recvcount, recvtype, root));
}

EP_API int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return scatter_common("MPI_Scatter", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, recvtype,
                          root, comm);
}

EP_API int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return scatter_common("MPI_Scatterv", sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                          root, comm);
}

/* ---- all to all ------------------------------------------------------------------------ */

EP_API int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char call[] = "MPI_Allgatherv";
    ep_endpoint_t *ep;
    int rc;
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    EP_ENTRY_EP(call, comm, ep);
    if ((sendbuf != MPI_IN_PLACE && (rc = check_block(ep, call, sendbuf, sendcount, sendtype))) ||
        (rc = ep_check_type(ep, call, recvtype)) || (rc = check_counts(ep, call, "receive", recvcounts, displs)))
        return rc;
    return coll_result(ep, call, ep_coll_allgatherv(ep, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                                    recvtype));
}

EP_API int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char call[] = "MPI_Alltoall";
    ep_endpoint_t *ep;
    int rc;
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    EP_ENTRY_EP(call, comm, ep);
    if ((sendbuf != MPI_IN_PLACE && (rc = check_block(ep, call, sendbuf, sendcount, sendtype))) ||
        (rc = check_block(ep, call, recvbuf, recvcount, recvtype)))
        return rc;
    return coll_result(ep, call, ep_coll_alltoallw(ep, sendbuf, sendcount, NULL, NULL, sendtype, NULL, recvbuf,
                                                   recvcount, NULL, NULL, recvtype, NULL, 0));
}

EP_API int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                         MPI_Comm comm)
{
    static const char call[] = "MPI_Alltoallv";
    ep_endpoint_t *ep;
    int rc;
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    EP_ENTRY_EP(call, comm, ep);
    if ((sendbuf != MPI_IN_PLACE && ((rc = ep_check_type(ep, call, sendtype)) ||
                                     (rc = check_counts(ep, call, "send", sendcounts, sdispls)))) ||
        (rc = ep_check_type(ep, call, recvtype)) || (rc = check_counts(ep, call, "receive", recvcounts, rdispls)))
        return rc;
    return coll_result(ep, call, ep_coll_alltoallw(ep, sendbuf, 0, sendcounts, sdispls, sendtype, NULL, recvbuf, 0,
                                                   recvcounts, rdispls, recvtype, NULL, 0));
}

EP_API int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                         const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                         const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    static const char call[] = "MPI_Alltoallw";
    ep_endpoint_t *ep;
    int rc;
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
    EP_ENTRY_EP(call, comm, ep);
    if ((sendbuf != MPI_IN_PLACE && ((rc = check_counts(ep, call, "send", sendcounts, sdispls)) ||
                                     (rc = check_types(ep, call, sendtypes, sendcounts)))) ||
        (rc = check_counts(ep, call, "receive", recvcounts, rdispls)) ||
        (rc = check_types(ep, call, recvtypes, recvcounts)))
        return rc;
    return coll_result(ep, call, ep_coll_alltoallw(ep, sendbuf, 0, sendcounts, sdispls, MPI_BYTE, sendtypes, recvbuf,
                                                   0, recvcounts, rdispls, MPI_BYTE, recvtypes, 1));
}

/* ---- reductions ---------------------------------------------------------------------- */

EP_API int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                    MPI_Op op, MPI_Comm comm)
{
    static const char call[] = "MPI_Reduce_scatter_block";
    ep_endpoint_t *ep;
    int rc;
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    EP_ENTRY_EP(call, comm, ep);
    if ((rc = check_reduction(ep, call, recvcount, datatype, op)))
        return rc;
    return coll_result(ep, call, ep_coll_reduce_scatter(ep, sendbuf, recvbuf, recvcount, NULL, datatype, op));
}

EP_API int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm)
{
    static const char call[] = "MPI_Reduce_scatter";
    ep_endpoint_t *ep;
    int rc;
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    EP_ENTRY_EP(call, comm, ep);
    if ((rc = check_reduction(ep, call, 0, datatype, op)) ||
        (rc = check_counts(ep, call, "receive", recvcounts, recvcounts)))
        return rc;
    return coll_result(ep, call, ep_coll_reduce_scatter(ep, sendbuf, recvbuf, 0, recvcounts, datatype, op));
}

static int scan_common(const char *call, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, int exclusive)
{
    ep_endpoint_t *ep;
    int rc;
    EP_ENTRY_EP(call, comm, ep);
    if ((rc = check_reduction(ep, call, count, datatype, op)))
        return rc;
    return coll_result(ep, call, ep_coll_scan(ep, sendbuf, recvbuf, count, datatype, op, exclusive));
}

EP_API int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
    return scan_common("MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm, 0);
}

EP_API int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
    return scan_common("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm, 1);
}
