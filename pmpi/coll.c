/* The collectives endpoint communicators support so far. */
#include "coll.h"
#include "entry.h"

#define EP_COLL_RESOLVE(call, comm, ep)                                       \
    do {                                                                      \
        int rc_ = ep_entry_endpoint(call, comm, &(ep));                      \
        if (rc_)                                                              \
            return rc_;                                                       \
    } while (0)

static int coll_result(ep_endpoint_t *ep, const char *call, ep_status_t st)
{
    if (st == EP_ERR_UNSUPPORTED)
        return ep_raise(ep, call, MPI_ERR_UNSUPPORTED_OPERATION,
                        "non-commutative operation on a communicator whose ranks are not grouped by process is "
                        "not supported yet");
    return st ? ep_raise_status(ep, call, st, NULL) : MPI_SUCCESS;
}

EP_API int MPI_Barrier(MPI_Comm comm)
{
    ep_endpoint_t *ep;
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Barrier(comm);
    EP_COLL_RESOLVE("MPI_Barrier", comm, ep);
    return coll_result(ep, "MPI_Barrier", ep_coll_barrier(ep));
}

EP_API int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    static const char call[] = "MPI_Bcast";
    ep_endpoint_t *ep;
    int rc;
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    EP_COLL_RESOLVE(call, comm, ep);
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
    EP_COLL_RESOLVE(call, comm, ep);
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
    EP_COLL_RESOLVE(call, comm, ep);
    if ((rc = ep_check_count(ep, call, recvcount)) || (rc = ep_check_type(ep, call, recvtype)) ||
        (rc = ep_check_buf(ep, call, recvbuf, recvcount, recvtype)))
        return rc;
    if (sendbuf != MPI_IN_PLACE &&
        ((rc = ep_check_count(ep, call, sendcount)) || (rc = ep_check_type(ep, call, sendtype)) ||
         (rc = ep_check_buf(ep, call, sendbuf, sendcount, sendtype))))
        return rc;
    return coll_result(ep, call, ep_coll_allgather(ep, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}
